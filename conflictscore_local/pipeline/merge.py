"""``conflictscore merge``: the outputs of ``--shard I/N`` runs → the output and summary of one run.

Every check comes before anything is written, and each refusal names what is wrong: a
summary of an unsharded or already merged run, shards of different splits (another N),
of another input file (its sha256) or another configuration (the settings that differ),
a shard given twice or missing, an output that holds items of several shards or another
number of rows than its summary says, items of the input that no output holds.

The merged OUTPUT lists the shards' rows as they wrote them, in the input's order: what one
unsharded run writes, except that a batched classifier's probabilities may differ in the last
digits (each shard batched other pairs together; labels do not change; a deterministic judge
gives the same bytes). The summary is reduced as each of its fields declares
(:func:`~..formats.summary.reduce_summaries`, the builder a run uses): macro, micro, the bootstrap
intervals with the run's seed and resamples, pair and label counts recomputed from the rows, so
it holds the same numbers; timing and backend counters are the shards' sums, ``config``,
``versions`` and the input counts the first shard's, the warnings every shard's (prefixed with
the shard). ``bench run`` shards need the caller's :class:`BenchMerge` (the command passes
``bench.run.MERGE``): the items as the shards selected them, and the summary's evaluation against
the gold. The merge writes no page: a :class:`~..jobs.Page` handed in is called with the :class:`Merged`.
"""

from __future__ import annotations

import json
import logging
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from ..core.diff import ABSENT, leaf_differences
from ..core.errors import ConfigError, InputError, shown
from ..core.types import Item, ItemResult, Summary
from ..formats.inputs import read_items
from ..formats.results import result_from_json
from ..formats.summary import check_summary, is_bench_summary, reduce_summaries
from ..jobs import Input, Job, Output, Page, page_output, write_json_atomic, write_jsonl_atomic
from ..jobs.resumable import STDOUT, ResumableJsonlWriter
from ..util.jsonl import file_sha256, iter_jsonl
from .shards import Shard, shard_of

log = logging.getLogger(__name__)

IGNORED_SETTINGS: tuple[str, ...] = ("cache",)
"""``config.run`` sections that may differ between shards: where the judgment cache lives
(or whether one is used) changes no row."""


@dataclass(frozen=True)
class BenchMerge:
    """What merging ``bench run`` shards needs from the bench, handed in by the command: ``items(input,
    bench)``, the items the shards scored (as the recorded ``bench`` section selected them);
    ``sections(items, results, input, bench)``, the summary's ``bench`` and ``evaluation`` sections (for its
    builder); ``written(summary)``, the summary's JSON as written."""

    items: Callable[[str, Mapping[str, Any]], list[Item]]
    sections: Callable[[Sequence[Item], Sequence[ItemResult], str, Mapping[str, Any]], dict[str, Any]]
    written: Callable[[Summary], dict[str, Any]]


@dataclass
class ShardRun:
    """One shard as its summary and its output describe it."""

    summary_path: str
    data: dict[str, Any]
    kind: str  # "score" or "bench"
    shard: Shard
    record: dict[str, Any]
    output_path: str | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    results: list[ItemResult] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"shard {self.shard} ({self.summary_path})"


@dataclass(frozen=True)
class Merged:
    """What :func:`merge_shards` produced: the summary as written (``score``'s, or ``bench run``'s with its
    evaluation), the same as a :class:`Summary` (``merged``), the rows' results and what deserves a look."""

    kind: str
    summary: dict[str, Any]
    merged: Summary
    results: list[ItemResult]
    warnings: tuple[str, ...] = ()

    @property
    def report(self) -> Summary:
        """The old name of :attr:`merged`, until 0.3.0."""
        warnings.warn(
            "Merged.report is deprecated and will be removed in 0.3.0: use Merged.merged",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.merged


def merge_shards(
    input_path: str | os.PathLike[str],
    outputs: Sequence[str | os.PathLike[str]],
    summaries: Sequence[str | os.PathLike[str]],
    output_path: str | os.PathLike[str],
    *,
    summary_path: str | os.PathLike[str] | None = None,
    page: Page[Merged] | None = None,
    bench: BenchMerge | None = None,
) -> Merged:
    """Check the shards against each other and the input, then write the merged OUTPUT (and summary;
    ``page``, ``--report``, is called with the result): see the module docstring. ``input_path`` is the file
    every shard read (for ``bench run``, the ConflictBench file); its sha256 must be the one the shards
    recorded. Every destination is checked first: none may be the input, a shard's output or
    summary, or another destination. What deserves a look (other library versions, shards' own
    warnings) is logged as a warning and listed in ``Merged.warnings``."""
    job = Job(
        [
            Input(input_path, "the input file"),
            *(Input(p, "a shard output (--outputs)") for p in outputs),
            *(Input(p, "a shard summary (--summaries)") for p in summaries),
        ],
        [
            Output(None if str(output_path) == STDOUT else output_path, "-o", "OUTPUT (-o)"),
            Output(summary_path, "--summary"),
            page_output(page),
        ],
    )
    with job:
        merged = _merge(input_path, outputs, summaries, output_path, summary_path, bench)
        if page is not None:
            page.write(merged)
    return merged


def _merge(
    input_path: str | os.PathLike[str],
    outputs: Sequence[str | os.PathLike[str]],
    summaries: Sequence[str | os.PathLike[str]],
    output_path: str | os.PathLike[str],
    summary_path: str | os.PathLike[str] | None,
    bench: BenchMerge | None,
) -> Merged:
    notes: list[str] = []

    def note(message: str) -> None:
        notes.append(message)
        log.warning(message)

    if not summaries:
        raise ConfigError("merge: no shard summaries given (--summaries)")
    runs = [_read_summary(str(p)) for p in summaries]
    first = _check_together(runs, str(input_path), note)
    if first.kind == "bench" and bench is None:
        raise ConfigError(
            "merge: these are shards of `bench run`; merging them needs the bench's evaluation "
            "(conflictscore merge passes it)"
        )
    runs = sorted(runs, key=lambda r: r.shard.index)
    _attach_outputs(runs, [str(p) for p in outputs])
    items = (
        bench.items(str(input_path), first.data["bench"])
        if first.kind == "bench" and bench is not None
        else read_items(input_path)
    )
    by_id: dict[str, tuple[dict[str, Any], ItemResult]] = {}
    for run in runs:
        for row, res in zip(run.rows, run.results):
            by_id[res.item_id] = (row, res)
    missing = [it.id for it in items if it.id not in by_id]
    if missing:
        where = sorted({shard_of(i, first.shard.count) for i in missing})
        raise InputError(
            f"{len(missing)} item(s) of the input are in no shard output: {_ids(missing)} (of shard(s) "
            f"{', '.join(f'{i}/{first.shard.count}' for i in where)}); was that run interrupted? "
            "Finish it with --resume, then merge",
            path=str(input_path),
        )
    extra = sorted(set(by_id) - {it.id for it in items})
    if extra:
        raise InputError(
            f"the shard outputs hold {len(extra)} item(s) that are not in the input: {_ids(extra)}",
            path=str(input_path),
        )
    rows = [by_id[it.id][0] for it in items]
    results = [by_id[it.id][1] for it in items]
    record = merged_record(runs, len(items))
    sections = (
        bench.sections(items, results, str(input_path), first.data["bench"])
        if first.kind == "bench" and bench is not None
        else {}
    )
    reduced = reduce_summaries(
        [r.data for r in runs], results, warnings=lambda i, w: f"shard {runs[i].shard}: {w}", shard=record, **sections
    )
    summary = bench.written(reduced) if first.kind == "bench" and bench is not None else reduced.to_json()
    if str(output_path) == STDOUT:  # -o -: the merged rows on stdout, in the input's order
        with ResumableJsonlWriter(STDOUT, verbatim=True) as out:
            for row in rows:
                out.write(row)
    else:
        write_jsonl_atomic(output_path, rows, what="-o", verbatim=True)
    if summary_path is not None:
        write_json_atomic(summary_path, summary, what="--summary")
    return Merged(first.kind, summary, Summary.from_json(summary), results, tuple(notes))


def _read_summary(path: str) -> ShardRun:
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", path=path) from None
    except ValueError as e:
        raise InputError(f"not a summary JSON: {e}", path=path) from None
    if not isinstance(raw, dict) or not isinstance(raw.get("config"), dict):
        raise InputError("not the summary of a `score` run nor the results of a `bench run` (no config)", path=path)
    data = check_summary(raw, path)  # an earlier bench run's results file, in this schema
    kind = "bench" if is_bench_summary(data) else "score"
    record = (data.get("stages") or {}).get("shard")
    if not record:
        raise InputError(
            "not the summary of a sharded run (no stages.shard): run each shard with --shard I/N and merge those",
            path=path,
        )
    if record.get("merged"):
        raise InputError(
            f"already the merge of {record.get('count')} shards; merge the shards' own summaries", path=path
        )
    shard = Shard.from_json(record, where=f"{path}: stages.shard")
    if not isinstance(record.get("input_sha256"), str):
        raise InputError("stages.shard records no input_sha256", path=path)
    return ShardRun(path, data, kind, shard, dict(record))


def _check_together(runs: list[ShardRun], input_path: str, note: Callable[[str], None]) -> ShardRun:
    """The shards form one split of one input under one configuration, each given once: the
    first of them (lowest index), or :class:`ConfigError` naming what differs."""
    kinds = {r.kind for r in runs}
    if len(kinds) > 1:
        raise ConfigError(
            "merge: summaries of `score` runs and results of `bench run` mixed: "
            + ", ".join(f"{r.summary_path} ({r.kind})" for r in runs)
        )
    counts = {r.shard.count for r in runs}
    if len(counts) > 1:
        raise ConfigError(
            "merge: the summaries come from different splits: "
            + ", ".join(f"{r.summary_path} is shard {r.shard}" for r in runs)
        )
    count = counts.pop()
    seen: dict[int, ShardRun] = {}
    for r in runs:
        if r.shard.index in seen:
            raise ConfigError(
                f"merge: shard {r.shard} given twice: {seen[r.shard.index].summary_path} and {r.summary_path}"
            )
        seen[r.shard.index] = r
    absent = [i for i in range(1, count + 1) if i not in seen]
    if absent:
        raise ConfigError(
            f"merge: shard(s) {', '.join(f'{i}/{count}' for i in absent)} missing: "
            f"{len(runs)} of {count} summaries given"
        )
    first = seen[1]
    sha = file_sha256(input_path)
    for r in runs:
        if r.record["input_sha256"] != sha:
            raise ConfigError(
                f"merge: {r.name} was run on another input than {input_path} (sha256 "
                f"{str(r.record['input_sha256'])[:12]}… recorded, {sha[:12]}… now)"
            )
    want = run_identity(first)
    # a shard that never loaded a stage's model (no item of it needed one: an empty shard, or
    # given labels only) records no fingerprint for it; the others must agree with each other
    models: dict[str, tuple[Any, ShardRun]] = {}
    for r in runs:
        ident = run_identity(r)
        for stage, fp in ident.pop("models").items():
            seen_fp, seen_run = models.setdefault(stage, (fp, r))
            if seen_fp != fp:
                _refuse(r, seen_run, differences({stage: seen_fp}, {stage: fp}), "models.")
        if r is not first:
            _refuse(r, first, differences({k: v for k, v in want.items() if k != "models"}, ident))
        if r.data.get("versions") != first.data.get("versions"):
            vd = differences(first.data.get("versions") or {}, r.data.get("versions") or {})
            note(f"{r.name} ran with other library versions than {first.name}: {'; '.join(vd[:4])}")
    return first


def _refuse(run: ShardRun, other: ShardRun, diffs: list[str], prefix: str = "") -> None:
    if diffs:
        shown = "; ".join(prefix + d for d in diffs[:6]) + (f"; and {len(diffs) - 6} more" if len(diffs) > 6 else "")
        raise ConfigError(f"merge: {run.name} was run with another configuration than {other.name}: {shown}")


def run_identity(run: ShardRun) -> dict[str, Any]:
    """What must be equal across shards for their rows to be one run's: the run configuration
    (less :data:`IGNORED_SETTINGS`), each backend's model fingerprint, and for ``bench run``
    the item selection (split, source filter, limit, gold labels)."""
    cfg = run.data.get("config") or {}
    ident: dict[str, Any] = {
        "run": {k: v for k, v in (cfg.get("run") or {}).items() if k not in IGNORED_SETTINGS},
        "models": {stage: fp for stage, b in (cfg.get("backends") or {}).items() if (fp := _fingerprints(b))},
    }
    if run.kind == "bench":
        b = run.data["bench"]
        ident["bench"] = {k: b.get(k) for k in ("split", "limit", "source_filter", "given_labels")}
    return ident


def _fingerprints(described: Any) -> list[Any]:
    """The model fingerprints a backend's description holds, its wrapped judge's included
    (the ``ray`` judge describes the judge it distributes under ``judge``)."""
    out = []
    while isinstance(described, dict):
        fp = (described.get("resolved") or {}).get("model_fingerprint")
        if fp is not None:
            out.append(fp)
        described = described.get("judge")
    return out


def differences(a: Any, b: Any) -> list[str]:
    """``path: A vs B`` for every leaf where two JSON-like values differ."""

    def quoted(v: Any) -> str:
        return "absent" if v is ABSENT else shown(v, as_json=True)

    return [f"{where or 'value'}: {quoted(x)} vs {quoted(y)}" for where, x, y in leaf_differences(a, b)]


def _attach_outputs(runs: list[ShardRun], outputs: list[str]) -> None:
    """Read each output and give it to the shard its rows belong to (an output holds the items
    of one shard: their ids say which); an output without rows goes to a shard that scored none."""
    if len(outputs) != len(runs):
        raise ConfigError(
            f"merge: {len(outputs)} outputs for {len(runs)} summaries; give each shard's output "
            "(-o of score or bench run) and its summary (--summary)"
        )
    count = runs[0].shard.count
    by_index = {r.shard.index: r for r in runs}
    empty: list[tuple[str, list[dict[str, Any]]]] = []
    for path in outputs:
        rows, results = _read_output(path)
        shards = sorted({shard_of(r.item_id, count) for r in results})
        if len(shards) > 1:
            parts = [
                f"{s}/{count} ({_ids([r.item_id for r in results if shard_of(r.item_id, count) == s], 2)})"
                for s in shards
            ]
            raise InputError(
                f"holds items of several shards: {', '.join(parts)}; not the output of one --shard run of {count}",
                path=path,
            )
        if not shards:
            empty.append((path, rows))
            continue
        run = by_index[shards[0]]
        if run.output_path is not None:
            raise ConfigError(f"merge: {run.output_path} and {path} both hold the items of shard {run.shard}")
        run.output_path, run.rows, run.results = path, rows, results
    for path, rows in empty:
        free = next((r for r in runs if r.output_path is None and not r.record.get("items")), None)
        if free is None:
            raise InputError("holds no rows, but every shard without an output scored items", path=path)
        free.output_path = path
    for r in runs:
        if r.output_path is None:
            raise ConfigError(f"merge: no output holds the items of {r.name}")
        if len(r.rows) != r.record.get("items"):
            raise InputError(
                f"has {len(r.rows)} rows but {r.name} says it scored {r.record.get('items')} items; "
                "was the output replaced or the run interrupted?",
                path=r.output_path,
            )


def _read_output(path: str) -> tuple[list[dict[str, Any]], list[ItemResult]]:
    rows: list[dict[str, Any]] = []
    results: list[ItemResult] = []
    seen: set[str] = set()
    for n, row in iter_jsonl(path):
        res = result_from_json(row, path=path, line=n)
        if res.item_id in seen:
            raise InputError(f"item {res.item_id!r} twice", path=path, line=n, field="id")
        seen.add(res.item_id)
        rows.append(row)
        results.append(res)
    return rows, results


def merged_record(runs: Sequence[ShardRun], n_items: int) -> dict[str, Any]:
    """The merged summary's shard record: how many shards, the input, every shard's items."""
    first = runs[0].record
    return {
        "count": runs[0].shard.count,
        "merged": True,
        "input_sha256": first["input_sha256"],
        "input_items": n_items,
        "items": n_items,
        "shard_items": [r.record.get("items") for r in runs],
    }


def _ids(ids: Sequence[str], shown: int = 5) -> str:
    head = ", ".join(repr(i) for i in ids[:shown])
    return head + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


__all__ = ["BenchMerge", "Merged", "ShardRun", "differences", "merge_shards", "merged_record", "run_identity"]
