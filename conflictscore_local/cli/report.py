"""``conflictscore report``: argument parsing only."""

from __future__ import annotations

import argparse
from typing import Any

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
        help="write a self-contained HTML report of a scored file",
        description="Write one HTML page for a scored file (the `-o` output of `score` or `bench run`).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("scored", metavar="SCORED.jsonl", help="per-item results (`-o`) of `score` or `bench run`")
    p.add_argument("-o", "--output", required=True, metavar="REPORT.html", help="the page to write (atomically)")
    p.add_argument("--items", metavar="INPUT.jsonl",
                   help="the run's input: responses and document texts (passages are cut from them); "
                   "ConflictBench items add gold labels. Without it the page shows claims and labels only")
    p.add_argument("--summary", metavar="SUMMARY.json",
                   help="the run's summary (`--summary` of `score`, or of `bench run`: its results); without it the "
                   "numbers are computed from SCORED and the run configuration is not shown")
    p.add_argument("--title", metavar="TEXT", help="page title (default: from the file name)")
    add_output_args(p, json_help="the page's path and size as JSON")
    p.set_defaults(func=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    from ..report.render import report_from_files

    size = report_from_files(args.scored, args.output, items=args.items, summary=args.summary, title=args.title)
    emit(args, {"output": args.output, "bytes": size}, lambda: f"wrote {args.output} ({size / 1e6:.2f} MB)")
    return 0
