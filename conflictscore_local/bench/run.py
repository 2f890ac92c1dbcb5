"""``bench run``: ConflictBench items scored by the one scoring runner (:func:`~..scoring.run_scoring`),
with the gold step as its ``finish`` hook: detection metrics, the results JSON, the report."""

from __future__ import annotations

import datetime
import os
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..config import RunConfig
from ..engine import Clock
from ..errors import ConfigError, InputError
from ..jobs import Input, Job, Output, write_json_atomic
from ..jsonl import file_sha256
from ..paths import portable
from ..scoring import Notes, Scored, ScoringInput, run_scoring
from ..shards.split import Shard, shard_record
from ..types import Item, ItemResult, Report
from .gold import evaluate, load_bench_items, with_gold_labels


def run_bench(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    config: RunConfig | None = None,
    split: str | None = None,
    limit: int | None = None,
    source_filter: Sequence[str] | None = None,
    given_labels: bool = False,
    predictions_path: str | os.PathLike[str] | None = None,
    report_path: str | os.PathLike[str] | None = None,
    progress: bool = False,
    shard: Shard | None = None,
    config_file: str | os.PathLike[str] | None = None,
    clock: Clock = time.perf_counter,
) -> dict[str, Any]:
    """Score a ConflictBench file with the engine and write the results JSON atomically.

    The same job as ``score``: every destination (the results, ``predictions_path``,
    ``report_path``, the cache) checked against the input and each other before any work, the
    predictions written row by row as OUTPUT is. Claims are given, so nothing is decomposed;
    judgments go through the judgment cache, so an interrupted run resumes by rerunning it.
    Paths in the results are written repository-relative (:func:`~conflictscore_local.paths.portable`).
    ``given_labels`` scores the gold labels instead of judging (a check of the aggregation:
    detection F1 must be 1.0). ``report_path`` also writes the HTML report, gold labels beside
    the predictions. ``shard`` scores only that shard of the selected items (after split,
    source filter and limit); it needs ``predictions_path``, which ``conflictscore merge`` combines.
    ``config_file``: the file ``config`` was read from (``--config``), which no destination may be.
    """
    if shard is not None and predictions_path is None:
        raise ConfigError(f"--shard {shard} needs --predictions: `conflictscore merge` combines the shards' "
                          "per-item results with their results JSON")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive integer, got {limit}")
    job = Job([Input(input_path, "the input file"), Input(config_file, "the --config file")], [
        Output(output_path, "-o", "the results (-o)"),
        Output(predictions_path, "--predictions", kind="rows"),
        Output(report_path, "--report"),
    ])
    selected: list[Item] = []

    def read(notes: Notes) -> ScoringInput:
        items = load_bench_items(input_path, split=split, limit=limit, source_filter=source_filter)
        selected[:] = shard.select(items) if shard is not None else items
        if not selected:
            why = f" / --shard {shard} (use fewer shards)" if shard is not None and items else ""
            raise InputError(f"no item left after --split / --source / --limit{why}", path=str(input_path))
        scored = with_gold_labels(selected) if given_labels else list(selected)
        return ScoringInput(input_path, scored, [it.id for it in items], shard=shard)

    def finish(run: Scored) -> dict[str, Any]:
        record = None
        if shard is not None:
            record = shard_record(shard, input_sha256=file_sha256(input_path), input_items=len(run.input.all_ids),
                                  items=len(selected))
        out = bench_results(selected, run.results, run.report, input_path=input_path, split=split, limit=limit,
                            source_filter=source_filter, given_labels=given_labels, shard=record)
        write_json_atomic(output_path, out, what="-o")
        if report_path is not None:
            from ..report import ReportInputs, write_report

            paths = {"items": str(input_path), "summary": str(output_path)}
            if predictions_path is not None:
                paths["scored"] = str(predictions_path)
            names = {k: Path(v).name for k, v in paths.items()}
            write_report(report_path, ReportInputs(run.results, {it.id: it for it in selected}, out, names, paths),
                         title=f"ConflictBench report: {Path(input_path).name}")
        return out

    return run_scoring(job, read, finish, config=config, rows=predictions_path, progress=progress, clock=clock)


def bench_results(
    items: Sequence[Item],
    results: Sequence[ItemResult],
    report: Report,
    *,
    input_path: str | os.PathLike[str],
    split: str | None,
    limit: int | None,
    source_filter: Sequence[str] | None,
    given_labels: bool,
    shard: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results JSON of scored ConflictBench items (``bench run``'s, and ``merge``'s for
    bench shards), with no machine paths in it."""
    bench: dict[str, Any] = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "input": str(Path(input_path).resolve()),
        "input_sha256": file_sha256(input_path),
        "split": split,
        "limit": limit,
        "source_filter": list(source_filter) if source_filter else None,
        "given_labels": given_labels,
        "n_items": len(items),
        "n_claims": report.n_claims,
    }
    if shard is not None:
        bench["shard"] = dict(shard)
    out = {
        "bench": bench,
        **evaluate(items, results),
        "engine_pairs": dict(report.pairs),
        "conflictscore": {"macro": dict(report.macro), "micro": dict(report.micro)},
        "timing": dict(report.timing),
        "config": dict(report.config),
        "versions": dict(report.versions),
        "stages": dict(report.stages),
    }
    return portable(out)  # results get committed and compared across machines: no machine paths
