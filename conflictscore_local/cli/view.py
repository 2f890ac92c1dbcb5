"""``conflictscore view DIR``: an index page of every run found under a folder (or served on 127.0.0.1),
with links to each run's report and a "compare these two" action (:mod:`~conflictscore_local.report.view`)."""

from __future__ import annotations

import argparse
from typing import Any

from .flags import add_number, add_output_args
from .text import emit

VIEW_EPILOG = """\
what it lists: every run under DIR (the -o JSONL of `score` or `bench run`, its --summary, or both;
a summary and a scored file go together when their names share a stem: x.scored.jsonl with
x.summary.json; x.report.html or x.html is linked): when it started and finished (as its summary
records; else its files' time, marked), input, judge, items, macro CS-C, CS-R and support rate with
their 95% intervals; every column sorts and filters. Tick two runs: the page shows the `conflictscore
compare` command that makes their comparison page (with --items when both read the same input file
found under DIR); under --serve it opens that page (made on request, nothing written).

examples:
  conflictscore view out/                         writes out/conflictscore-view.html
  conflictscore view runs/ -o runs.html           the page elsewhere (its links still reach the runs)
  conflictscore view runs/ --serve --port 8765    browse on http://127.0.0.1:8765/ (Ctrl-C stops it)
"""


def add_parser(sub: Any) -> None:
    from ..backends.arguments import Range

    p = sub.add_parser(
        "view",
        description="List every scored run under DIR on one self-contained page (or serve it on "
        '127.0.0.1), with links to each run\'s report and a "compare these two" action.',
        epilog=VIEW_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dir", metavar="DIR", help="the folder to look in (and its subfolders)")
    p.add_argument("-o", "--output", metavar="INDEX.html", help="the page (default DIR/conflictscore-view.html)")
    p.add_argument(
        "--serve",
        action="store_true",
        help="serve the page on 127.0.0.1 instead of writing it; choosing two runs then opens their comparison page",
    )
    add_number(
        p,
        "--port",
        int,
        Range(0, 65535),
        default=8765,
        metavar="N",
        help="the port of --serve (default 8765; 0: any free one)",
    )
    add_output_args(p, json_help="the runs found as JSON")
    p.set_defaults(func=cmd_view)


def cmd_view(args: argparse.Namespace) -> int:
    import logging
    import os

    from ..core.errors import ConfigError
    from ..report.view import find_runs, serve, write_view
    from .flags import output_kind

    if args.serve and args.output:
        raise ConfigError("--serve and -o: the served page is made on every load; give one of them")
    output_kind(args.output, (".html",))
    found = find_runs(args.dir)
    runs = [r.record() for r in found]
    if args.serve:
        server = serve(args.dir, port=args.port, found=found)
        logging.getLogger("conflictscore_local.cli.view").info(
            f"serving {len(runs)} runs of {args.dir} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)"
        )
        try:
            server.serve_forever()
        finally:
            server.server_close()
        return 0
    out = args.output or os.path.join(args.dir, "conflictscore-view.html")
    write_view(args.dir, out, found=found)
    emit(args, {"output": out, "runs": runs}, lambda: f"{len(runs)} runs listed in {out}")
    return 0
