"""``bench run``: ConflictBench items scored by the one scoring runner (:func:`~..pipeline.scoring.run_scoring`),
with the gold step as its ``finish`` hook: the run's summary with its ``bench`` and ``evaluation`` sections.

The summary is ``score``'s schema (:class:`~..core.types.Summary`) plus those two sections; a page is the
command's (a :class:`~..jobs.Page` handed in, called with a :class:`BenchRun`). :data:`MERGE` is what
``conflictscore merge`` needs of a bench run: how its shards selected their items and its evaluation.
"""

from __future__ import annotations

import datetime
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from ..core.errors import ConfigError, InputError
from ..core.types import Item, ItemResult, Summary
from ..formats.table import TablePaths
from ..jobs import Input, Job, Output, Page, page_output, write_json_atomic
from ..pipeline.config import RunConfig
from ..pipeline.engine import Clock
from ..pipeline.merge import BenchMerge
from ..pipeline.reading import Notes, ScoringInput
from ..pipeline.scoring import Scored, refuse_stdout_rows, run_scoring
from ..pipeline.shards import Shard
from ..util.jsonl import file_sha256
from ..util.paths import portable
from .gold import evaluate, load_bench_items, select_bench_items, with_gold_labels


@dataclass(frozen=True)
class BenchRun:
    """What a ``bench run`` made, for its page: the summary as written, the results and the items scored."""

    summary: dict[str, Any]
    results: list[ItemResult]
    items: list[Item]


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
    page: Page[BenchRun] | None = None,
    progress: bool = False,
    shard: Shard | None = None,
    config_file: str | os.PathLike[str] | None = None,
    output_flag: str = "-o",
    summary_flag: str = "--summary",
    clock: Clock = time.perf_counter,
    tables: TablePaths | None = None,
    resume: bool = False,
) -> dict[str, Any]:
    """Score a ConflictBench file with the engine: the per-item results into ``output_path``
    (JSONL, ``score``'s output format, row by row), the summary (``score``'s, plus the ``bench`` and
    ``evaluation`` sections: detection metrics against the gold) into ``summary_path``; returns the summary.

    The same job as ``score``: every destination (the per-item output, the summary, ``page``,
    the cache) checked against the input and each other before any work. ``output_path`` may be
    ``None`` (no per-item file: the transitional ``bench run -o RESULTS.json``). Claims are given,
    so nothing is decomposed; judgments go through the judgment cache, so an interrupted run
    resumes by rerunning it. Paths in the results are written repository-relative
    (:func:`~conflictscore_local.util.paths.portable`). ``given_labels`` scores the gold labels instead
    of judging (a check of the aggregation: detection F1 must be 1.0). ``page`` (``--report``: the
    command's writer of the HTML report) is called with the :class:`BenchRun` once the files are
    written. ``shard`` scores only that shard of the selected items (after split, source filter and limit); it needs
    both files, which ``conflictscore merge`` combines. ``config_file``: the file ``config`` was read from
    (``--config``), which no destination may be. ``output_flag`` and ``summary_flag``: the flags
    the command line named the two files by, which messages name. ``tables``: CSV files of the
    per-item metrics and of the claim × document judgments (``--csv``, ``--csv-pairs``). ``resume`` keeps
    the rows of an interrupted run into the same output (``OUTPUT.partial``) whose input, selection, settings and
    backends are the same, and scores the rest (refused, naming what differs, otherwise).
    """
    if resume and output_path is None:
        raise ConfigError(
            "--resume needs the per-item output to resume from: write -o OUT.jsonl --summary "
            "SUMMARY.json (an -o ending in .csv or .json writes no per-item rows)"
        )
    refuse_stdout_rows(output_path, resume=resume, shard=shard)
    if shard is not None and (output_path is None or summary_path is None):
        raise ConfigError(
            f"--shard {shard} needs the per-item output (-o) and the summary (--summary): "
            "`conflictscore merge` combines the shards' per-item results with their summaries"
        )
    if limit is not None and limit < 1:
        raise ConfigError(f"--limit must be a positive integer, got {limit}")
    job = Job(
        [Input(input_path, "the input file"), Input(config_file, "the --config file")],
        [
            Output(
                None if str(output_path) == "-" else output_path,
                f"output ({output_flag})",
                f"OUTPUT ({output_flag})",
                kind="rows",
            ),
            Output(summary_path, summary_flag, f"the summary ({summary_flag})"),
            page_output(page),
        ],
    )
    selected: list[Item] = []

    def read(notes: Notes) -> ScoringInput:
        everything = load_bench_items(input_path)  # every id of the file: what a resume's dropped rows are told by
        items = select_bench_items(everything, split=split, limit=limit, source_filter=source_filter)
        selected[:] = shard.select(items) if shard is not None else items
        if not selected:
            why = f" / --shard {shard} (use fewer shards)" if shard is not None and items else ""
            raise InputError(f"no item left after --split / --source / --limit{why}", path=str(input_path))
        scored = with_gold_labels(selected) if given_labels else list(selected)
        return ScoringInput(
            input_path, scored, [it.id for it in items], shard=shard, file_ids=[it.id for it in everything]
        )

    def sections(inp: ScoringInput, results: list[ItemResult]) -> dict[str, Any]:
        return bench_sections(
            selected,
            results,
            input_path=input_path,
            split=split,
            limit=limit,
            source_filter=source_filter,
            given_labels=given_labels,
        )

    def finish(run: Scored) -> dict[str, Any]:
        out = written(run.summary)
        if summary_path is not None:
            write_json_atomic(summary_path, out, what=summary_flag)
        if page is not None:
            page.write(BenchRun(out, run.results, selected))
        return out

    return run_scoring(
        job,
        read,
        finish,
        config=config,
        rows=output_path,
        resume=resume,
        progress=progress,
        clock=clock,
        tables=tables,
        sections=sections,
    )


def bench_sections(
    items: Sequence[Item],
    results: Sequence[ItemResult],
    *,
    input_path: str | os.PathLike[str],
    split: str | None,
    limit: int | None,
    source_filter: Sequence[str] | None,
    given_labels: bool,
) -> dict[str, Any]:
    """What a ConflictBench run adds to the summary (``bench run``'s, and ``merge``'s for bench shards), for
    the summary's builder: the ``bench`` section (input, split, filter, limit) and the ``evaluation`` of
    ``results`` against the gold of ``items``."""
    bench: dict[str, Any] = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "input": str(Path(input_path).resolve()),
        "input_sha256": file_sha256(input_path),
        "split": split,
        "limit": limit,
        "source_filter": list(source_filter) if source_filter else None,
        "given_labels": given_labels,
    }
    return {"bench": bench, "evaluation": evaluate(items, results)}


def written(summary: Summary) -> dict[str, Any]:
    """A bench summary as written: its JSON with no machine paths in it (summaries get committed and compared
    across machines)."""
    return portable(summary.to_json())


def _selected(input_path: str, bench: Mapping[str, Any]) -> list[Item]:
    return load_bench_items(
        input_path, split=bench.get("split"), limit=bench.get("limit"), source_filter=bench.get("source_filter")
    )


def _merged(
    items: Sequence[Item], results: Sequence[ItemResult], input_path: str, bench: Mapping[str, Any]
) -> dict[str, Any]:
    return bench_sections(
        items,
        results,
        input_path=input_path,
        split=bench.get("split"),
        limit=bench.get("limit"),
        source_filter=bench.get("source_filter"),
        given_labels=bool(bench.get("given_labels")),
    )


MERGE = BenchMerge(items=_selected, sections=_merged, written=written)
"""How ``conflictscore merge`` treats ``bench run`` shards: their items as they selected them, the summary
rebuilt with its evaluation against the gold."""
