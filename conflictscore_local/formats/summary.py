"""The run summary (``--summary``), one schema for every command: built, merged over shards, read and checked here.

:class:`~..core.types.Summary` is what ``score`` writes; a ``bench run`` writes the same plus a ``bench``
section (its input, split, source filter, limit) and an ``evaluation`` section (pair metrics,
detection per group, unscored and pruning counts against the gold). Each field declares how it
reduces over shards (``Summary.reductions()``), so :func:`build_summary` serves one engine and
:func:`reduce_summaries` (``conflictscore merge``) the same way: the ``rows`` fields are recomputed
from the rows, ``sum`` fields added leaf by leaf, ``first`` fields taken from the first shard, ``cat``
fields concatenated, ``min`` / ``max`` fields the least / greatest (when the run started and finished).
A rate (pairs judged per second) is derived from the reduced counters, never summed.

:func:`read_summary` reads a summary written by this release or an earlier one: a ``bench run``
results file of the earlier schema (``engine_pairs``, ``conflictscore.{macro,micro}``, ``detection``
at the top, no ``ci95``) is checked as it was and renamed into this one (:func:`upgrade`).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import os
from typing import Any, Callable, Mapping, Sequence

from ..core.errors import ConfigError, InputError
from ..core.metrics import summarize_metrics
from ..core.sampling import sampling_summary
from ..core.types import REDUCTIONS, InputRecord, ItemResult, Stages, Summary

log = logging.getLogger(__name__)

EVALUATION_KEYS: tuple[str, ...] = ("pairs", "detection", "unscored", "pruning")
"""The sections of a ``bench run`` evaluation (at the top of an earlier results file)."""

RATE = "judge_passage_pairs_per_s"
"""The one derived rate of ``timing``: pairs judged (``stages.engine.passage_pairs_judged``) per judge second."""


def reductions(cls: type) -> dict[str, str]:
    """Field name → how it reduces over shards, for the summary or a section class; ``ConfigError`` naming
    the field and the allowed kinds (:data:`~..core.types.REDUCTIONS`) where one declares another or none."""
    out = {}
    for f in dataclasses.fields(cls):
        kind = f.metadata.get("reduce")
        if kind not in REDUCTIONS:
            raise ConfigError(f"{cls.__name__}.{f.name}: unknown reduction {kind!r}; allowed: {', '.join(REDUCTIONS)}")
        out[f.name] = kind
    return out


reductions(Summary), reductions(Stages)  # a kind not declared right fails here, when the package is imported


def now_utc() -> str:
    """The time now, UTC, ISO 8601 to the second (a summary's ``started`` / ``finished``)."""
    import datetime

    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


Check = Callable[[Summary], "str | None"]
"""A check of a built summary: the warning it deserves (a loud one: too many unscored judgments), or None."""


def build_summary(
    results: Sequence[ItemResult],
    *,
    config: Mapping[str, Any],
    timing: Mapping[str, float],
    stages: Mapping[str, Any],
    versions: Mapping[str, str],
    warnings: Sequence[str] = (),
    salience: Mapping[str, Any] | None = None,
    input: InputRecord | None = None,
    shard: Mapping[str, Any] | None = None,
    resumed_items: int | None = None,
    total_s: "float | Callable[[], float] | None" = None,
    bench: Mapping[str, Any] | None = None,
    evaluation: Mapping[str, Any] | None = None,
    started: str | None = None,
    finished: "str | Callable[[], str] | None" = None,
    checks: Sequence[Check] = (),
) -> Summary:
    """The summary of ``results``, whole: the one builder of every summary (a run's, through the API or a
    command, and a merge's), which takes everything a summary holds, so nothing is added after it.

    The ``rows`` fields are computed from ``results`` (metrics, bootstrap intervals with ``config.run.engine``'s
    seed and resamples, pair and label counts, the sampling record); the rate is derived from ``timing`` and
    ``stages``; ``stages`` (the backends' and the engine's counters, the document rule decided) is completed
    with the label counts, ``input`` (what reading saw), ``shard`` (the ``--shard`` record) and
    ``resumed_items``; ``total_s`` is the run's wall time (a function: read once the rest is computed, so the
    bootstrap counts); ``started`` / ``finished`` when the run began and ended (UTC, ISO 8601; ``finished`` a
    function too, read with ``total_s``). ``checks`` look at the built summary: the warning each gives is
    logged and added to ``warnings``."""
    run = config.get("run") or {}
    engine = run.get("engine") or {}
    seed = int(engine.get("seed", 0))
    m = dict(summarize_metrics(results, seed=seed, n_resamples=int(engine.get("bootstrap", 1000))))
    labels = m.pop("labels")
    t = {k: v for k, v in timing.items() if k != RATE}
    counts = stages.get("engine") or {}
    if t.get("judge_s") and counts.get("passage_pairs_judged"):
        t[RATE] = round(counts["passage_pairs_judged"] / t["judge_s"], 2)
    sampling = sampling_summary(
        results, run.get("sample") or {}, seed=seed, ci95=m["ci95"], counts=counts, salience=salience
    )
    given = Stages.from_json(stages)
    section = dataclasses.replace(
        given,
        labels=labels,
        input=input if input is not None else given.input,
        shard=shard,
        resumed_items=resumed_items,
    )
    if total_s is not None:
        t["total_s"] = round(total_s() if callable(total_s) else total_s, 4)
    ended = finished() if callable(finished) else finished

    def summary(notes: Sequence[str]) -> Summary:
        return Summary(
            n_items=m["n_items"],
            n_claims=m["n_claims"],
            macro=m["macro"],
            micro=m["micro"],
            ci95=m["ci95"],
            pairs=m["pairs"],
            timing=t,
            config=dict(config),
            versions=dict(versions),
            stages=section,
            warnings=tuple(notes),
            sampling=sampling,
            bench=bench,
            evaluation=evaluation,
            started=started,
            finished=ended,
        )

    built = summary(warnings)
    loud = [w for w in (check(built) for check in checks) if w is not None]
    for w in loud:
        log.warning(w)
    return summary([*warnings, *loud]) if loud else built


def reduce_summaries(
    parts: Sequence[Mapping[str, Any]],
    results: Sequence[ItemResult],
    *,
    warnings: Callable[[int, str], str] = lambda i, w: w,
    shard: Mapping[str, Any] | None = None,
    bench: Mapping[str, Any] | None = None,
    evaluation: Mapping[str, Any] | None = None,
) -> Summary:
    """One summary of the shards ``parts`` (as :func:`read_summary` gives them, in shard order) whose rows,
    together, are ``results``: every field reduced as it declares (a section field by field, as its class
    declares), by :data:`REDUCERS`; ``warnings(i, w)`` names shard ``i``'s warning ``w`` (``shard 2/4: ...``).
    What is recomputed from the rows is the builder's; ``shard`` (the merge's own record), ``bench`` (else
    the first shard's) and ``evaluation`` (it needs the gold) are the caller's."""
    named = [{**p, "warnings": [warnings(i, w) for w in p.get("warnings") or ()]} for i, p in enumerate(parts)]
    reduced = reduce_fields(Summary, named)
    stages: Stages = reduced["stages"]
    return build_summary(
        results,
        config=reduced["config"] or {},
        timing=reduced["timing"] or {},
        stages=stages,
        versions=reduced["versions"] or {},
        warnings=reduced["warnings"] or (),
        salience=(parts[0].get("sampling") or {}).get("salience"),
        input=stages.input,
        shard=shard,
        resumed_items=stages.resumed_items,
        bench=bench if bench is not None else reduced["bench"],
        evaluation=evaluation,
        started=reduced["started"],
        finished=reduced["finished"],
    )


def reduce_fields(cls: type, parts: Sequence[Any]) -> dict[str, Any]:
    """Each field of ``cls`` (a summary or a section class) over ``parts`` (instances of ``cls``, or their
    JSON), reduced as it declares by :data:`REDUCERS` (:func:`reductions`: ``ConfigError`` naming the allowed
    kinds for any other); a ``rows`` field is None (the builder recomputes it)."""
    out: dict[str, Any] = {}
    for name, kind in reductions(cls).items():
        values = [getattr(p, name) if isinstance(p, cls) else p.get(name) for p in parts]
        out[name] = REDUCERS[kind](values)
    return out


def _stages(values: Sequence[Any]) -> Stages:
    """The ``stages`` section over the shards, entry by entry as :class:`~..core.types.Stages` declares."""
    reduced = reduce_fields(Stages, [Stages.from_json(v or {}) for v in values])
    return Stages(**{k: v for k, v in reduced.items() if v is not None})


REDUCERS: dict[str, Callable[[Sequence[Any]], Any]] = {
    "rows": lambda values: None,
    "sum": lambda values: _sum(values),
    "first": lambda values: values[0] if values else None,
    "cat": lambda values: [w for v in values for w in v or ()],
    "min": lambda values: min((v for v in values if v is not None), default=None),
    "max": lambda values: max((v for v in values if v is not None), default=None),
    "section": _stages,
}
"""How each kind of :data:`~..core.types.REDUCTIONS` combines the shards' values of a field (the one
section, ``stages``, by its class's own declarations)."""


def write_summary(path: str | os.PathLike[str], summary: Summary, *, what: str = "--summary") -> None:
    """Write ``summary`` as JSON at ``path``, atomically: the one writer of a summary (the API's and every
    command's), so the same run gives the same bytes."""
    from ..jobs import write_json_atomic

    write_json_atomic(path, summary.to_json(), what=what)


def _sum(values: Sequence[Any]) -> Any:
    """Numbers summed (seconds rounded to 4 places), mappings merged key by key, anything
    else kept when every shard has the same, else listed per shard."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        total = math.fsum(present)
        return int(total) if all(isinstance(v, int) for v in present) else round(total, 4)
    if all(isinstance(v, Mapping) for v in present):
        keys = list(dict.fromkeys(k for v in present for k in v))
        return {k: _sum([v.get(k) for v in present]) for k in keys}
    return present[0] if all(v == present[0] for v in present) else list(values)


# -- reading -----------------------------------------------------------------------------


def is_bench_summary(summary: Mapping[str, Any]) -> bool:
    """True for the summary of a ``bench run`` (this schema or the earlier results file), False for ``score``'s."""
    return isinstance(summary.get("bench"), Mapping)


def shard_record(summary: Mapping[str, Any]) -> Any:
    """The ``--shard`` record of a summary (``stages.shard``), None when the run was not sharded."""
    return (summary.get("stages") or {}).get("shard")


def read_summary(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The summary JSON at ``path``, checked (:func:`check_summary`) and in this release's schema (:func:`upgrade`)."""
    p = str(path)
    try:
        with open(p, encoding="utf-8") as fh:
            data = json.load(fh)
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"not JSON: {e}", path=p) from None
    return check_summary(data, p)


def check_summary(data: Any, where: str) -> dict[str, Any]:
    """``data`` in this release's schema, or :class:`InputError` naming ``where`` and the first field that a
    summary cannot have (each field's type; a ``bench run`` results file of the earlier schema is checked as
    that schema, then renamed)."""
    if not isinstance(data, dict):
        raise InputError(f"expected a JSON object, got {type(data).__name__}", path=where)
    if _earlier_bench(data):
        need = {"conflictscore": ("macro", "micro"), "bench": ("n_items", "n_claims"), "pairs": ("confusion",)}
        optional: tuple[str, ...] = ("detection", "engine_pairs", "timing", "config", "versions", "stages")
    elif "macro" in data and "micro" in data:
        need = {"": ("n_items", "n_claims", "macro", "micro")}
        optional = ("ci95", "pairs", "timing", "config", "versions", "stages", "sampling", "bench", "evaluation")
    else:
        raise InputError(
            "neither a score summary (n_items, macro, micro, ci95, pairs) nor a bench run results "
            "file (bench, evaluation)",
            path=where,
        )
    for section, keys in need.items():
        body = data.get(section) if section else data
        for k in keys:
            name = f"{section}.{k}" if section else k
            if not isinstance(body, dict) or k not in body:
                raise InputError("missing", path=where, field=name)
            _check_type(body[k], int if k in ("n_items", "n_claims") else dict, where, name)
    for k in optional:
        if data.get(k) is not None:
            _check_type(data[k], dict, where, k)
    for k in ("started", "finished"):
        if data.get(k) is not None and not isinstance(data[k], str):
            raise InputError(f"expected a date and time (ISO 8601), got {type(data[k]).__name__}", path=where, field=k)
    return upgrade(data)


def _earlier_bench(data: Mapping[str, Any]) -> bool:
    return "bench" in data and "detection" in data and "evaluation" not in data


def upgrade(data: Mapping[str, Any]) -> dict[str, Any]:
    """A summary in this release's schema: an earlier ``bench run`` results file renamed (``engine_pairs`` →
    ``pairs``, ``conflictscore.{macro,micro}`` → ``macro`` / ``micro``, ``bench.n_items`` / ``n_claims`` to the
    top, ``bench.shard`` → ``stages.shard``, the pair metrics and detection into ``evaluation``; it recorded
    no ``ci95``); anything else as it is."""
    if not _earlier_bench(data):
        return dict(data)
    bench = dict(data["bench"])
    stages = dict(data.get("stages") or {})
    if "shard" in bench:
        stages["shard"] = bench.pop("shard")
    out: dict[str, Any] = {
        "n_items": bench.pop("n_items"),
        "n_claims": bench.pop("n_claims"),
        "macro": dict(data["conflictscore"]["macro"]),
        "micro": dict(data["conflictscore"]["micro"]),
    }
    if data.get("engine_pairs") is not None:
        out["pairs"] = dict(data["engine_pairs"])
    out.update(
        timing=dict(data.get("timing") or {}),
        config=dict(data.get("config") or {}),
        versions=dict(data.get("versions") or {}),
        stages=stages,
        warnings=list(data.get("warnings") or ()),
        bench=bench,
        evaluation={k: data[k] for k in EVALUATION_KEYS if k in data},
    )
    return out


def _check_type(value: Any, kind: type, where: str, name: str) -> None:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"expected a whole number, got {type(value).__name__}", path=where, field=name)
    if kind is dict and not isinstance(value, dict):
        raise InputError(f"expected an object, got {type(value).__name__}", path=where, field=name)


__all__ = [
    "EVALUATION_KEYS",
    "REDUCERS",
    "Summary",
    "build_summary",
    "check_summary",
    "is_bench_summary",
    "now_utc",
    "read_summary",
    "reduce_fields",
    "reduce_summaries",
    "reductions",
    "shard_record",
    "upgrade",
    "write_summary",
]
