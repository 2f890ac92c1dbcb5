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
from ..table import TablePaths
from .gold import evaluate, load_bench_items, with_gold_labels


def run_bench(
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str] | None,
    *,
    summary_path: str | os.PathLike[str] | None = None,
    config: RunConfig | None = None,
    split: str | None = None,
    limit: int | None = None,
    source_filter: Sequence[str] | None = None,
    given_labels: bool = False,
    report_path: str | os.PathLike[str] | None = None,
    progress: bool = False,
    shard: Shard | None = None,
    config_file: str | os.PathLike[str] | None = None,
    output_flag: str = "-o",
    summary_flag: str = "--summary",
    clock: Clock = time.perf_counter,
    tables: TablePaths | None = None,
) -> dict[str, Any]:
    """Score a ConflictBench file with the engine: the per-item results into ``output_path``
    (JSONL, ``score``'s output format, row by row), the results JSON (detection metrics, counts,
    timing, config) into ``summary_path``; returns the results.

    The same job as ``score``: every destination (the per-item output, the results, ``report_path``,
    the cache) checked against the input and each other before any work. ``output_path`` may be
    ``None`` (no per-item file: the transitional ``bench run -o RESULTS.json``). Claims are given,
    so nothing is decomposed; judgments go through the judgment cache, so an interrupted run
    resumes by rerunning it. Paths in the results are written repository-relative
    (:func:`~conflictscore_local.paths.portable`). ``given_labels`` scores the gold labels instead
    of judging (a check of the aggregation: detection F1 must be 1.0). ``report_path`` also writes
    the HTML report, gold labels beside the predictions. ``shard`` scores only that shard of the
    selected items (after split, source filter and limit); it needs both files, which
    ``conflictscore merge`` combines. ``config_file``: the file ``config`` was read from
    (``--config``), which no destination may be. ``output_flag`` and ``summary_flag``: the flags
    the command line named the two files by, which messages name. ``tables``: CSV files of the
    per-item metrics and of the claim × document judgments (``--csv``, ``--csv-pairs``).
    """
    if shard is not None and (output_path is None or summary_path is None):
        raise ConfigError(f"--shard {shard} needs the per-item output (-o) and the results JSON (--summary): "
                          "`conflictscore merge` combines the shards' per-item results with their results JSON")
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive integer, got {limit}")
    job = Job([Input(input_path, "the input file"), Input(config_file, "the --config file")], [
        Output(output_path, f"output ({output_flag})", f"OUTPUT ({output_flag})", kind="rows"),
        Output(summary_path, summary_flag, f"the results ({summary_flag})"),
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
        if summary_path is not None:
            write_json_atomic(summary_path, out, what=summary_flag)
        if report_path is not None:
            from ..report import ReportInputs, write_report

            paths = {"items": str(input_path)}
            if summary_path is not None:
                paths["summary"] = str(summary_path)
            if output_path is not None:
                paths["scored"] = str(output_path)
            names = {k: Path(v).name for k, v in paths.items()}
            write_report(report_path, ReportInputs(run.results, {it.id: it for it in selected}, out, names, paths),
                         title=f"ConflictBench report: {Path(input_path).name}")
        return out

    return run_scoring(job, read, finish, config=config, rows=output_path, progress=progress, clock=clock,
                       tables=tables)


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
