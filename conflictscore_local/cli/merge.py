"""``conflictscore merge``: argument parsing only (``--shard I/N`` itself is in :mod:`.flags`)."""

from __future__ import annotations

import argparse
import logging
import re
from typing import Any, Sequence

from .flags import add_output_args
from .text import emit, format_bench, format_report

log = logging.getLogger(__name__)

MERGE_EPILOG = """\
examples:
  # four processes (or machines), one input, one configuration:
  conflictscore score items.jsonl --shard 1/4 -o out.1.jsonl --summary out.1.json   (... 2/4, 3/4, 4/4)
  conflictscore merge items.jsonl --outputs out.*.jsonl --summaries out.*.json -o out.jsonl --summary summary.json

  conflictscore bench run bench.jsonl --split test --shard 1/2 -o p.1.jsonl --summary r.1.json   (... 2/2)
  conflictscore merge bench.jsonl --outputs p.1.jsonl p.2.jsonl --summaries r.1.json r.2.json \\
      -o predictions.jsonl --summary results.json

OUTPUT lists every shard's rows in the input's order: what one unsharded run writes (an nli judge's
probabilities may differ in the 6th decimal: each shard batched other pairs together). The summary
(or bench results) is recomputed from them exactly as one run computes it (same metrics, same
bootstrap intervals for the same engine.seed); timing and counters are the shards' sums.
Refused, naming what is wrong (exit 2): shards of another split, input or configuration, a shard
missing or given twice, an output holding items of several shards or fewer rows than its summary.
"""


def _say_shard_warnings(warnings: Sequence[str]) -> None:
    """What the shards warned about, on stderr again (once per message, naming the shards that
    said it), so that `merge -q` in a pipeline still shows it; the merged summary lists them all."""
    said: dict[str, list[str]] = {}
    for w in warnings:
        shard, sep, message = w.partition(": ")
        if sep and re.fullmatch(r"shard \d+/\d+", shard):
            said.setdefault(message, []).append(shard.removeprefix("shard "))
    for message, shards in said.items():
        log.warning(f"shard {', '.join(shards)}: {message}")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "merge",
        description="Combine the outputs and summaries of `score --shard I/N` (or `bench run --shard I/N`) "
        "runs into the output and summary one run over the whole input would have written.",
        epilog=MERGE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="the input every shard read (score items, or the ConflictBench file)")
    p.add_argument(
        "--outputs",
        nargs="+",
        required=True,
        metavar="SHARD.jsonl",
        help="each shard's per-item output (-o of score or bench run), any order",
    )
    p.add_argument(
        "--summaries",
        nargs="+",
        required=True,
        metavar="SHARD.json",
        help="each shard's --summary (of score or bench run), any order",
    )
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="merged per-item output, JSONL (atomic; - streams the rows to stdout)",
    )
    p.add_argument(
        "--summary", metavar="SUMMARY.json", help="merged summary (of score, or of bench run with its evaluation)"
    )
    p.add_argument("--report", metavar="REPORT.html", help="also write the HTML report of the merged run")
    add_output_args(p, json_help="the merged summary as JSON")
    p.set_defaults(func=cmd_merge)


def cmd_merge(args: argparse.Namespace) -> int:
    from ..bench.run import MERGE
    from ..core.errors import ConfigError
    from ..pipeline.merge import merge_shards
    from .flags import output_kind, rows_to_stdout
    from .report import merge_page

    output_kind(args.output, (".jsonl",), stdout=True)
    streamed = rows_to_stdout(args, args.output)
    if streamed and args.report:
        raise ConfigError("--report reads the merged OUTPUT, which -o - sends to stdout; write -o OUT.jsonl")
    page = merge_page(args.report, scored=args.output, items=args.input) if args.report else None
    merged = merge_shards(
        args.input, args.outputs, args.summaries, args.output, summary_path=args.summary, page=page, bench=MERGE
    )
    _say_shard_warnings(merged.merged.warnings)
    if streamed:
        return 0
    text = format_bench(merged.summary) if merged.kind == "bench" else format_report(merged.merged)
    emit(args, merged.summary, lambda: text + (f"\nreport {args.report}" if args.report else ""))
    return 0
