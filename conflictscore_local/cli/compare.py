"""``conflictscore compare``: argument parsing only; the work is in :mod:`..compare.files` and :mod:`..compare.core`."""

from __future__ import annotations

import argparse
from typing import Any

from ..backends.arguments import field_range
from .flags import add_gate_arg, add_number, add_output_args, add_table_args, output_kind, table_paths
from .text import emit, format_comparison, gate_failures

EPILOG = """\
what it reports, for run B against run A (items matched by id; items in one run only are counted):
  per metric (CS-C, CS-R, cs_r_evidenced, support rate, and the weighted ones when documents carry
  reliability): each run's mean over the items both define it on, the paired difference B - A, its
  95% bootstrap interval (item pairs resampled), and two p-values: an exact sign test and a paired
  permutation test (signs of the differences flipped at random);
  per claim (claims matched by text within an item): newly conflicted, no longer conflicted, support
  or contradiction gained or lost, each with its documents; an exact McNemar test of the conflicted
  status. Two judges on the same claims match every claim; two prompting strategies rarely share a
  claim's wording, so compare them at the item level.

examples:
  conflictscore compare standard.jsonl balanced.jsonl                 (print the comparison, write nothing)
  conflictscore compare standard.jsonl balanced.jsonl -o compare.json --report compare.html
  conflictscore compare judge-a.jsonl judge-b.jsonl --summary-a a.json --summary-b b.json -o compare.json
      (the summaries add where the two runs' configurations differ)
  conflictscore compare pred-v1.jsonl pred-v2.jsonl --label-a v1 --label-b v2 --json   (print, write nothing)
  conflictscore compare a.jsonl b.jsonl -o compare.csv        (one row per item: A, B and B - A of every metric)
  conflictscore compare main.jsonl pr.jsonl --json --fail-if "cs_c.diff>0.05"   (CI: exit 4 when B's CS-C is
      higher than A's by more than 0.05 beyond noise: the paired interval's lower bound above 0.05)

exit status: 0 written; 2 a bad input line (file, line and field named), a flag out of range, or a
  destination refused before anything is read (an input, the other output, a file another run is
  writing), or a --fail-if that does not parse; 4 done, and a --fail-if condition held (one line each on
  stderr); 1 a write the machine refused (the file there is as it was).
"""


def add_parser(sub: Any) -> None:
    from ..compare.core import ComparisonSettings

    p = sub.add_parser(
        "compare",
        description="Compare run B against run A (two `-o` outputs of `score` or `bench run`): did the "
        "strategy, model or judge of B change the metrics beyond noise, and which claims changed state?",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("a", metavar="A.jsonl", help="the baseline run's scored output")
    p.add_argument("b", metavar="B.jsonl", help="the run compared against it")
    p.add_argument(
        "-o",
        "--output",
        metavar="COMPARE.json",
        help="the comparison, JSON (written whole: OUTPUT.partial, "
        "then renamed; - for stdout; a name ending in .csv: one row per item instead, in .html: the "
        "comparison page instead)",
    )
    p.add_argument(
        "--report",
        metavar="COMPARE.html",
        help="also write a self-contained HTML page: metrics, then the items side by side, filterable by what changed",
    )
    p.add_argument("--summary-a", metavar="SUMMARY.json", help="A's summary (`--summary` of `score` or `bench run`)")
    p.add_argument("--summary-b", metavar="SUMMARY.json", help="B's summary")
    p.add_argument("--label-a", default="A", metavar="NAME", help="A's name in the output (default A)")
    p.add_argument("--label-b", default="B", metavar="NAME", help="B's name in the output (default B)")
    add_number(
        p,
        "--seed",
        int,
        field_range(ComparisonSettings, "seed"),
        default=0,
        metavar="N",
        help="seed of the bootstrap and the permutations (default 0)",
    )
    add_number(
        p,
        "--bootstrap",
        int,
        field_range(ComparisonSettings, "bootstrap"),
        default=1000,
        metavar="N",
        help="bootstrap resamples (default 1000; 0: no interval)",
    )
    add_number(
        p,
        "--permutations",
        int,
        field_range(ComparisonSettings, "permutations"),
        default=10000,
        metavar="N",
        help="random sign patterns when there are more than 16 differing items (default 10000)",
    )
    p.add_argument(
        "--items",
        metavar="INPUT.jsonl",
        help="the runs' input: the page then shows each item's response and document texts beside the claims",
    )
    add_output_args(p, json_help="the comparison as JSON (without -o: it is printed and nothing is written)")
    add_table_args(p, pairs=False)
    add_gate_arg(p, compare=True)
    p.set_defaults(func=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    from ..compare.core import ComparisonSettings
    from ..compare.files import compare_files
    from ..core.errors import ConfigError
    from ..core.gate import check_comparison
    from .report import compare_page

    output_kind(
        args.output,
        (".json", ".csv", ".html"),
        stdout=True,
        says={".json": "the comparison", ".csv": "one row per item", ".html": "the comparison page"},
    )
    tables, output = table_paths(args, args.output)
    if output == "-":  # the comparison JSON on stdout
        output, args.json = None, True
    if output is None and args.report is None and tables.items is None and args.quiet and not args.json:
        raise ConfigError(
            "nothing to write or print: -q with no -o COMPARE.json (- for stdout), --json, "
            "--report COMPARE.html or --csv ITEMS.csv"
        )
    settings = ComparisonSettings(seed=args.seed, bootstrap=args.bootstrap, permutations=args.permutations)
    done = compare_files(
        args.a,
        args.b,
        output,
        summary_a=args.summary_a,
        summary_b=args.summary_b,
        labels=(args.label_a, args.label_b),
        page=compare_page(args.report, items=args.items) if args.report else None,
        settings=settings,
        csv_path=tables.items,
        items=args.items,
    )
    result = done.result
    if not tables.to_stdout:
        emit(
            args,
            result,
            lambda: (
                format_comparison(result)
                + "".join(
                    f"\n{what} {path}"
                    for what, path in (("comparison", output), ("table", tables.items), ("report", args.report))
                    if path
                )
            ),
        )
    return gate_failures(args, check_comparison(args.fail_if, result))
