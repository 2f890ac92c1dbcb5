"""The run summary (``--summary``), one schema for every command: built, merged over shards, read and checked here.

:class:`~.types.Summary` is what ``score`` writes; a ``bench run`` writes the same plus a ``bench``
section (its input, split, source filter, limit) and an ``evaluation`` section (pair metrics,
detection per group, unscored and pruning counts against the gold). Each field declares how it
reduces over shards (``Summary.reductions()``), so :func:`build_summary` serves one engine and
:func:`reduce_summaries` (``conflictscore merge``) the same way: the ``rows`` fields are recomputed
from the rows, ``sum`` fields added leaf by leaf, ``first`` fields taken from the first shard, ``cat``
fields concatenated. A rate (pairs judged per second) is derived from the reduced counters, never
summed.

:func:`read_summary` reads a summary written by this release or an earlier one: a ``bench run``
results file of the earlier schema (``engine_pairs``, ``conflictscore.{macro,micro}``, ``detection``
at the top, no ``ci95``) is checked as it was and renamed into this one (:func:`upgrade`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from typing import Any, Callable, Mapping, Sequence

from ..core.errors import InputError
from ..core.metrics import summarize_metrics
from ..core.sampling import sampling_summary
from ..core.types import ItemResult, Summary

EVALUATION_KEYS: tuple[str, ...] = ("pairs", "detection", "unscored", "pruning")
"""The sections of a ``bench run`` evaluation (at the top of an earlier results file)."""

STAGE_REDUCTIONS: dict[str, str] = {"labels": "rows", "shard": "rows", "input": "first"}
"""``stages`` entries that do not ``sum``: label counts come from the rows, the shard record is the merge's
own, the input counts are the same in every shard (each read the whole file)."""

RATE = "judge_passage_pairs_per_s"
"""The one derived rate of ``timing``: pairs judged (``stages.engine.passage_pairs_judged``) per judge second."""


def build_summary(
    results: Sequence[ItemResult],
    *,
    config: Mapping[str, Any],
    timing: Mapping[str, float],
    stages: Mapping[str, Any],
    versions: Mapping[str, str],
    warnings: Sequence[str] = (),
    salience: Mapping[str, Any] | None = None,
    bench: Mapping[str, Any] | None = None,
    evaluation: Mapping[str, Any] | None = None,
) -> Summary:
    """The summary of ``results``: the ``rows`` fields computed from them (metrics, bootstrap intervals with
    ``config.run.engine``'s seed and resamples, pair and label counts, the sampling record), the rate derived
    from ``timing`` and ``stages``, the rest as given."""
    run = config.get("run") or {}
    engine = run.get("engine") or {}
    seed = int(engine.get("seed", 0))
    m = dict(summarize_metrics(results, seed=seed, n_resamples=int(engine.get("bootstrap", 1000))))
    labels = m.pop("labels")
    t = {k: v for k, v in timing.items() if k != RATE}
    counts = stages.get("engine") or {}
    if t.get("judge_s") and counts.get("passage_pairs_judged"):
        t[RATE] = round(counts["passage_pairs_judged"] / t["judge_s"], 2)
    sampling = sampling_summary(results, run.get("sample") or {}, seed=seed, ci95=m["ci95"],  # type: ignore[arg-type]
                                counts=counts, salience=salience)
    return Summary(
        n_items=m["n_items"], n_claims=m["n_claims"], macro=m["macro"], micro=m["micro"],  # type: ignore[arg-type]
        ci95=m["ci95"], pairs=m["pairs"], timing=t, config=dict(config), versions=dict(versions),  # type: ignore[arg-type]
        stages={**{k: v for k, v in stages.items() if k != "labels"}, "labels": labels},
        warnings=tuple(warnings), sampling=sampling, bench=bench, evaluation=evaluation,
    )


def reduce_summaries(
    parts: Sequence[Mapping[str, Any]],
    results: Sequence[ItemResult],
    *,
    warnings: Callable[[int, str], str] = lambda i, w: w,
) -> Summary:
    """One summary of the shards ``parts`` (as :func:`read_summary` gives them, in shard order) whose rows,
    together, are ``results``: every field reduced as it declares. ``warnings(i, w)`` names shard ``i``'s
    warning ``w`` (``shard 2/4: ...``). The ``evaluation`` is the caller's to recompute (it needs the gold)."""
    first = parts[0]
    reduced: dict[str, Any] = {}
    for name, kind in Summary.reductions().items():
        values = [p.get(name) for p in parts]
        if kind == "sum":
            reduced[name] = _sum(values) or {}
        elif kind == "first":
            reduced[name] = first.get(name)
        elif kind == "cat":
            reduced[name] = [warnings(i, w) for i, v in enumerate(values) for w in v or ()]
        elif kind in ("min", "max"):
            present = [v for v in values if v is not None]
            reduced[name] = (min if kind == "min" else max)(present) if present else None
    stages = {k: v for k, v in (reduced["stages"] or {}).items() if STAGE_REDUCTIONS.get(k, "sum") == "sum"}
    stages.update({k: (first.get("stages") or {})[k] for k, how in STAGE_REDUCTIONS.items()
                   if how == "first" and k in (first.get("stages") or {})})
    return dataclasses.replace(
        build_summary(results, config=reduced["config"] or {}, timing=reduced["timing"], stages=stages,
                      versions=reduced["versions"] or {}, warnings=reduced["warnings"],
                      salience=(first.get("sampling") or {}).get("salience"), bench=reduced["bench"]),
        started=reduced["started"], finished=reduced["finished"])


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
        raise InputError("neither a score summary (n_items, macro, micro, ci95, pairs) nor a bench run results "
                         "file (bench, evaluation)", path=where)
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
        "n_items": bench.pop("n_items"), "n_claims": bench.pop("n_claims"),
        "macro": dict(data["conflictscore"]["macro"]), "micro": dict(data["conflictscore"]["micro"]),
    }
    if data.get("engine_pairs") is not None:
        out["pairs"] = dict(data["engine_pairs"])
    out.update(timing=dict(data.get("timing") or {}), config=dict(data.get("config") or {}),
               versions=dict(data.get("versions") or {}), stages=stages, warnings=list(data.get("warnings") or ()),
               bench=bench, evaluation={k: data[k] for k in EVALUATION_KEYS if k in data})
    return out


def _check_type(value: Any, kind: type, where: str, name: str) -> None:
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"expected a whole number, got {type(value).__name__}", path=where, field=name)
    if kind is dict and not isinstance(value, dict):
        raise InputError(f"expected an object, got {type(value).__name__}", path=where, field=name)


__all__ = ["EVALUATION_KEYS", "Summary", "build_summary", "check_summary", "is_bench_summary", "read_summary",
           "reduce_summaries", "shard_record", "upgrade"]
