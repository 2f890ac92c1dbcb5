"""``conflictscore report``: argument parsing only."""

from __future__ import annotations

import argparse
from typing import Any

from ..cli_flags import add_output_args
from ..cli_text import emit

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
    from .render import report_from_files

    size = report_from_files(args.scored, args.output, items=args.items, summary=args.summary, title=args.title)
    emit(args, {"output": args.output, "bytes": size}, lambda: f"wrote {args.output} ({size / 1e6:.2f} MB)")
    return 0


VIEW_EPILOG = """\
what it lists: every run under DIR (the -o JSONL of `score` or `bench run`, its --summary, or both;
a summary and a scored file go together when their names share a stem: x.scored.jsonl with
x.summary.json; x.report.html or x.html is linked): date, input, judge, items, macro CS-C and CS-R
with their 95% intervals. Tick two runs: the page shows the `conflictscore compare` command that
makes their comparison page; under --serve it opens that page (made on request, nothing written).

examples:
  conflictscore view out/                         writes out/conflictscore-view.html
  conflictscore view runs/ -o runs.html           the page elsewhere (its links still reach the runs)
  conflictscore view runs/ --serve --port 8765    browse on http://127.0.0.1:8765/ (Ctrl-C stops it)
"""


def add_view_parser(sub: Any) -> None:
    from ..arguments import Range
    from ..cli_flags import add_number

    p = sub.add_parser("view", help="an index page of every run under a folder, and a way to compare two",
                       description="List every scored run under DIR on one self-contained page (or serve it on "
                       "127.0.0.1), with links to each run's report and a \"compare these two\" action.",
                       epilog=VIEW_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", metavar="DIR", help="the folder to look in (and its subfolders)")
    p.add_argument("-o", "--output", metavar="INDEX.html", help="the page (default DIR/conflictscore-view.html)")
    p.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead of writing it; "
                   "choosing two runs then opens their comparison page")
    add_number(p, "--port", int, Range(0, 65535), default=8765, metavar="N",
               help="the port of --serve (default 8765; 0: any free one)")
    add_output_args(p, json_help="the runs found as JSON")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    import os
    import sys

    from ..errors import ConfigError
    from .view import find_runs, serve, write_view

    if args.serve and args.output:
        raise ConfigError("--serve and -o: the served page is made on every load; give one of them")
    runs = [r.record() for r in find_runs(args.dir)]
    if args.serve:
        server = serve(args.dir, port=args.port)
        print(f"serving {len(runs)} runs of {args.dir} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)",
              file=sys.stderr, flush=True)
        try:
            server.serve_forever()
        finally:
            server.server_close()
        return 0
    out = args.output or os.path.join(args.dir, "conflictscore-view.html")
    write_view(args.dir, out)
    emit(args, {"output": out, "runs": runs}, lambda: f"{len(runs)} runs listed in {out}")
    return 0
