"""``bench run``: score ConflictBench items through the normal engine and measure detection."""

from __future__ import annotations

import datetime
import os
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..config import RunConfig
from ..engine import Engine
from ..errors import ConfigError, InputError
from ..jsonl import file_sha256
from ..paths import portable
from ..shards.split import Shard, shard_record
from ..types import Item, ItemResult, Report
from ..writing import write_json_atomic, write_jsonl_atomic
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
) -> dict[str, Any]:
    """Score a ConflictBench file with the engine and write the results JSON atomically.

    Claims are given, so nothing is decomposed; judgments go through the judgment cache,
    so an interrupted run resumes by rerunning it. Paths in the results are written
    repository-relative (:func:`~conflictscore_local.paths.portable`). ``given_labels`` scores the gold labels
    instead of judging (a check of the aggregation: detection F1 must be 1.0).
    ``report_path`` also writes the HTML report, gold labels beside the predictions.
    ``shard`` scores only that shard of the selected items (after split, source filter and
    limit); it needs ``predictions_path``, which ``conflictscore merge`` combines.
    """
    t0 = time.perf_counter()
    if shard is not None and predictions_path is None:
        raise ConfigError(f"--shard {shard} needs --predictions: `conflictscore merge` combines the shards' "
                          "per-item results with their results JSON")
    items = load_bench_items(input_path, split=split, limit=limit, source_filter=source_filter)
    selected = len(items)
    if shard is not None:
        items = shard.select(items)
    if not items:
        why = f" / --shard {shard} (use fewer shards)" if shard is not None and selected else ""
        raise InputError(f"no item left after --split / --source-filter / --limit{why}", path=str(input_path))
    scored = with_gold_labels(items) if given_labels else items
    with Engine(config if config is not None else RunConfig(), progress=progress) as engine:
        results = list(engine.score(scored))
        report = engine.summarize(results, timing={"total_s": round(time.perf_counter() - t0, 4)})
    record = None
    if shard is not None:
        record = shard_record(shard, input_sha256=file_sha256(input_path), input_items=selected, items=len(items))
    out = bench_results(items, results, report, input_path=input_path, split=split, limit=limit,
                        source_filter=source_filter, given_labels=given_labels, shard=record)
    write_json_atomic(output_path, out)
    if predictions_path is not None:
        write_jsonl_atomic(predictions_path, (r.to_json() for r in results))
    if report_path is not None:
        from ..report import ReportInputs, write_report

        paths = {"items": str(input_path), "summary": str(output_path)}
        if predictions_path is not None:
            paths["scored"] = str(predictions_path)
        names = {k: Path(v).name for k, v in paths.items()}
        write_report(report_path, ReportInputs(results, {it.id: it for it in items}, out, names, paths),
                     title=f"ConflictBench report: {Path(input_path).name}")
    return out


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
