"""``conflictscore report``, and the pages other commands write (``--report``): the runners return what
they made and these functions write the page, inside the runner's job (:class:`~..jobs.Page`).

The report reads rows and one summary; for a bare scored file of ConflictBench items the bench checks
the gold and computes the evaluation, handed in here (the report imports no bench)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Mapping

from .flags import add_output_args
from .text import emit

EPILOG = """\
what it writes: one HTML file that needs nothing else (no network, no external files):
  the summary (CS-C, CS-R, cs_r_evidenced, support rate; macro with 95% CI and micro; pair counts),
  plots, and every item: its response with the claims marked (conflicted claims stand out) and
  the claim × document grid; a click on a cell shows the deciding passage and the probabilities.
  Items sort by CS-C, filter to conflicted or unscored ones, and search by id.

examples:
  conflictscore report scored.jsonl --items items.jsonl --summary summary.json -o report.html
  conflictscore score items.jsonl -o scored.jsonl --summary summary.json --report report.html   (same, in one go)
  conflictscore bench run conflictbench.jsonl --split test -o pred.jsonl --summary results.json
  conflictscore report pred.jsonl --items conflictbench.jsonl --summary results.json -o bench.html
      (ConflictBench items add gold labels: detection P/R/F1 per conflict type, the confusion matrix,
       missed and false conflicts per item)
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "report",
        description="Write one HTML page for a scored file (the `-o` output of `score` or `bench run`).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scored", metavar="SCORED.jsonl", help="per-item results (`-o`) of `score` or `bench run`")
    p.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the page to write (atomically)")
    p.add_argument(
        "--items",
        metavar="INPUT.jsonl",
        help="the run's input: responses and document texts (passages are cut from them); "
        "ConflictBench items add gold labels. Without it the page shows claims and labels only",
    )
    p.add_argument(
        "--summary",
        metavar="SUMMARY.json",
        help="the run's summary (`--summary` of `score`, or of `bench run`: its results); without it the "
        "numbers are computed from SCORED and the run configuration is not shown",
    )
    p.add_argument("--title", metavar="TEXT", help="page title (default: from the file name)")
    add_output_args(p, json_help="the page's path and size as JSON")
    p.set_defaults(func=cmd_report)


def write_page(
    scored: str | os.PathLike[str],
    output: str | os.PathLike[str],
    *,
    items: str | os.PathLike[str] | None = None,
    summary: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    title: str | None = None,
) -> int:
    """The report of a scored file: ConflictBench items get their gold checked and, where the summary holds
    no evaluation, evaluated by the bench; returns the page's size in bytes."""
    from ..bench.gold import gold_evaluation, read_items_checked
    from ..report.render import report_from_files

    return report_from_files(
        scored, output, items=items, summary=summary, title=title, read=read_items_checked, evaluate=gold_evaluation
    )


def score_page(path: str, *, scored: str | None, items: str, summary_path: str | None) -> Any:
    """The page of a ``score`` run, called with the :class:`~..pipeline.scoring.Scored` run: from its
    OUTPUT, input and summary (the file once written, else the summary made); with no JSONL OUTPUT
    (``-o x.csv``) from the results in memory."""
    from ..jobs import Page

    def write(run: Any) -> None:
        if scored is None:
            from ..report import ReportInputs, write_report

            write_report(
                path,
                ReportInputs(
                    run.results,
                    {it.id: it for it in run.input.items},
                    run.summary.to_json(),
                    {"items": os.path.basename(str(items))},
                    {"items": str(items)},
                ),
            )
            return
        written = summary_path is not None and os.path.isfile(summary_path)  # not a device or a pipe
        write_page(scored, path, items=items, summary=summary_path if written else run.summary.to_json())

    return Page(path, write)


def merge_page(path: str, *, scored: str, items: str) -> Any:
    """The page of a ``merge``: the merged OUTPUT, the input every shard read and the merged summary."""
    from ..jobs import Page

    return Page(path, lambda merged: write_page(scored, path, items=items, summary=merged.summary))


def bench_page(path: str, *, items: str, output: str | None, summary: str | None) -> Any:
    """The page of a ``bench run``: what it scored, gold labels beside the predictions, from memory."""
    from ..jobs import Page
    from ..report import ReportInputs, write_report

    paths = {"items": str(items)}
    if summary is not None:
        paths["summary"] = str(summary)
    if output is not None:
        paths["scored"] = str(output)
    names = {k: Path(v).name for k, v in paths.items()}

    def write(run: Any) -> None:
        write_report(
            path,
            ReportInputs(run.results, {it.id: it for it in run.items}, run.summary, names, paths),
            title=f"ConflictBench report: {Path(items).name}",
        )

    return Page(path, write)


def compare_page(path: str, *, items: str | None = None) -> Any:
    """The comparison page of ``compare``: the comparison and both runs' results (``items``: the runs'
    input, whose responses and documents the page then shows)."""
    from ..bench.gold import read_items_checked
    from ..jobs import Page
    from ..report.compare import write_compare_report

    return Page(
        path,
        lambda done: write_compare_report(
            path,
            done.result,
            done.a.results,
            done.b.results,
            items=items,
            read=read_items_checked,
            scored={"a": done.a.path, "b": done.b.path},
        ),
    )


def cmd_report(args: argparse.Namespace) -> int:
    from .flags import output_kind

    output_kind(args.output, (".html",))
    size = write_page(args.scored, args.output, items=args.items, summary=args.summary, title=args.title)
    emit(args, {"output": args.output, "bytes": size}, lambda: f"wrote {args.output} ({size / 1e6:.2f} MB)")
    return 0
