"""``conflictscore bench build`` and ``conflictscore bench run``: argument parsing only."""

from __future__ import annotations

import argparse
from typing import Any

from ..core.errors import ConfigError
from ..pipeline.config import parse_assignment

BUILD_EPILOG = """\
sources (default files under --data-dir; --source NAME=PATH reads one from PATH):
{sources}

examples:
  conflictscore bench build -o conflictbench.jsonl
  conflictscore bench build --source ramdocs contraqa_en555 -o subset.jsonl
  conflictscore bench build --source ambigdocs=ambigdocs/test.json -o ambig.jsonl
  conflictscore bench build --source-opt climate_fever.max_entropy=0.7 -o agreed.jsonl
"""

RUN_EPILOG = """\
examples:
  conflictscore bench run conflictbench.jsonl --split test --given-labels -o sanity.jsonl --json
  conflictscore bench run conflictbench.jsonl --split test --judge nli --judge-arg model=models/default-judge \\
      -o pred.jsonl --summary summary.json
  conflictscore bench run conflictbench.jsonl --split dev --source ramdocs --pruner none --limit 50 \\
      -o pred.jsonl --summary summary.json
  conflictscore bench run conflictbench.jsonl --split test -o pred.jsonl --summary summary.json --report r.html
  conflictscore bench run conflictbench.jsonl --split test -o pred.jsonl --summary summary.json --resume  (after Ctrl-C)
  conflictscore bench run conflictbench.jsonl --split test --shard 1/2 -o p.1.jsonl --summary r.1.json  (see merge)
  conflictscore bench run --source ramdocs wice conflictbench.jsonl -o pred.csv --csv-pairs pairs.csv  (tables)

outputs: -o the per-item results (JSONL, the format of `score -o`; - for stdout), --summary the summary
(detection metrics, counts, timing, config; --json prints it on stdout), --report the HTML page;
--csv / --csv-pairs one CSV row per item / per claim x document (an -o ending in .csv: that table only).
Until the next release the old spelling still works, with a warning: `-o SUMMARY.json --predictions
P.jsonl` is read as `-o P.jsonl --summary SUMMARY.json`, and an -o ending in .json with neither
--summary nor --predictions as the summary (no per-item file).

An interrupted run keeps its finished rows in OUTPUT.partial: rerun the same command with --resume
(refused, naming what differs, when the input, the selection, a setting or a backend changed).

exit status: 0 done; 2 bad input or configuration (file, line and field named), a destination refused,
  a --resume that would mix results; 1 a write that failed (the rows so far stay in OUTPUT.partial: rerun
  with --resume), or a bug (a traceback); 130 interrupted (rerun with --resume); 141 stdout closed by its
  reader (| head).
"""


def add_parser(sub: Any) -> None:
    """Add ``bench`` with its ``build`` and ``run`` subcommands."""
    from ..bench.sources import BENCH_SOURCES
    from .flags import (
        LIMIT,
        add_deprecated,
        add_number,
        add_output_args,
        add_per_item_alias,
        add_pipeline_args,
        add_seed_arg,
        add_shard_arg,
        add_table_args,
    )

    p = sub.add_parser(
        "bench",
        description="Build ConflictBench from public conflict data sets and measure how well a "
        "pipeline finds conflicted claims (and only those).",
    )
    bsub = p.add_subparsers(dest="bench_command", metavar="SUBCOMMAND")
    p.set_defaults(func=lambda args: _help(p))

    listing = "\n".join(
        f"  {s.name:16}{s.default_path or '(no file here: give --source)':46}{s.description}"
        for s in BENCH_SOURCES.values()
    )
    b = bsub.add_parser(
        "build",
        help="build ConflictBench items (JSONL) from the source files",
        epilog=BUILD_EPILOG.format(sources=listing),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    b.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="ConflictBench items, JSONL (written atomically; - writes them to stdout)",
    )
    b.add_argument(
        "--data-dir",
        metavar="DIR",
        help="folder of the public data (default $CONFLICTSCORE_DATA, "
        "else <checkout>/../shared/data when run from a source checkout; an installed package needs one)",
    )
    b.add_argument(
        "--source",
        metavar="NAME[=PATH]",
        nargs="+",
        action="extend",
        default=[],
        help="build only the sources NAMEd (default: every source with a file here); NAME=PATH reads "
        "NAME from PATH (the original's format) and adds it; repeatable",
    )
    add_deprecated(b, "--only", "--source NAME", "source", metavar="NAME", nargs="+")
    b.add_argument(
        "--source-opt",
        metavar="NAME.KEY=VALUE",
        action="append",
        default=[],
        help="a source option, e.g. climate_fever.max_entropy=0.7, macnoise.levels=pert_lbls_50",
    )
    b.add_argument(
        "--summary", metavar="SUMMARY.json", help="also write the summary: the counts by source, type and split"
    )
    add_deprecated(b, "--stats", "--summary", "summary", metavar="STATS.json")
    add_output_args(b, json_help="the counts by source, type and split as JSON")
    b.set_defaults(func=cmd_build)

    r = bsub.add_parser(
        "run",
        help="score ConflictBench items and report pair and conflict-detection metrics",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    r.add_argument("input", metavar="INPUT", nargs="?", help="ConflictBench items (from bench build)")
    r.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="per-item results, JSONL (the format of `score -o`; written row by row, in place at the end; - "
        "streams them to stdout); .csv one row per item instead, .html the report instead",
    )
    r.add_argument(
        "--summary",
        metavar="SUMMARY.json",
        help="the summary: detection and pair metrics, counts, timing, config, versions",
    )
    r.add_argument(
        "--resume",
        action="store_true",
        help="keep the finished items of an interrupted run (OUTPUT.partial); score the rest",
    )
    r.add_argument("--split", choices=("train", "dev", "test"), help="only items of this split")
    add_number(r, "--limit", int, LIMIT, metavar="N", help="only the first N items (after --split/--source)")
    r.add_argument("--source", metavar="NAME", nargs="+", action="extend", help="only items of these sources")
    add_deprecated(r, "--source-filter", "--source", "source", metavar="NAME", nargs="+")
    r.add_argument(
        "--given-labels",
        action="store_true",
        help="score the gold labels instead of judging (sanity check: detection F1 must be 1.0)",
    )
    add_per_item_alias(r, "--predictions", "predictions", metavar="OUT.jsonl")
    r.add_argument(
        "--report",
        metavar="REPORT.html",
        help="also write the HTML report: gold beside the predictions, "
        "detection per conflict type, the confusion matrix (see `conflictscore report --help`)",
    )
    add_output_args(r, json_help="the summary (score's, with the bench and evaluation sections)")
    add_table_args(r)
    add_shard_arg(r)
    add_seed_arg(r)
    add_pipeline_args(r)
    r.set_defaults(func=cmd_run)


def _help(p: argparse.ArgumentParser) -> int:
    p.print_help()
    return 2


def _pairs(values: list[str], flag: str, sep: str) -> list[tuple[str, str]]:
    out = []
    for v in values:
        k, s, rest = v.partition(sep)
        if not s or not k or not rest:
            raise ConfigError(f"{flag} expects NAME{sep}{'PATH' if sep == '=' else 'KEY=VALUE'}, got {v!r}")
        out.append((k, rest))
    return out


def cmd_build(args: argparse.Namespace) -> int:
    from ..bench.build import write_bench
    from .text import emit, format_bench_stats

    sources = dict(_pairs([s for s in args.source if "=" in s], "--source", "="))
    named = [s for s in args.source if "=" not in s]  # NAME selects; NAME=PATH reads it from PATH (selected too)
    only = list(dict.fromkeys(named + list(sources))) if named else None
    options: dict[str, dict[str, Any]] = {}
    for name, assignment in _pairs(args.source_opt, "--source-opt", "."):
        k, v = parse_assignment(assignment, flag="--source-opt")
        options.setdefault(name, {})[k] = v
    from .flags import output_kind, rows_to_stdout

    output_kind(args.output, (".jsonl",), stdout=True)
    streamed = rows_to_stdout(args, args.output)
    stats = write_bench(
        args.output, data_dir=args.data_dir, only=only, sources=sources, options=options, stats_path=args.summary
    )
    if not streamed:
        emit(args, stats, lambda: format_bench_stats(stats))
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from ..bench.run import run_bench
    from .flags import (
        SCORE_OUTPUTS,
        PerItemOutputs,
        config_from_args,
        input_after_nargs,
        output_kind,
        per_item_outputs,
        rows_to_stdout,
        show_progress,
        table_paths,
    )
    from .report import bench_page
    from .text import emit, format_bench

    input_after_nargs(args, "input", "source", "INPUT")
    output_kind(
        args.output,
        (".jsonl", ".json", ".csv", ".html"),
        stdout=True,
        says={**SCORE_OUTPUTS, ".json": "the results JSON (as before this release; deprecated)"},
    )
    tables, per_item = table_paths(args, args.output)
    # -o x.csv: that table, and no per-item JSONL
    out = (
        per_item_outputs(args, "--predictions", "predictions")
        if per_item is not None
        else PerItemOutputs(None, args.summary)
    )
    streamed = rows_to_stdout(args, out.output, tables)
    cfg = config_from_args(args)
    page = (
        bench_page(args.report, items=args.input, output=None if streamed else out.output, summary=out.summary)
        if args.report
        else None
    )
    res = run_bench(
        args.input,
        out.output,
        summary_path=out.summary,
        tables=tables,
        config=cfg,
        split=args.split,
        limit=args.limit,
        source_filter=args.source,
        given_labels=args.given_labels,
        page=page,
        progress=show_progress(args),
        shard=args.shard,
        config_file=args.config,
        output_flag=out.output_flag,
        summary_flag=out.summary_flag,
        resume=args.resume,
    )
    if not tables.to_stdout and not streamed:
        emit(args, res, lambda: format_bench(res))
    return 0
