"""``conflictscore score``: score a JSONL file of items (the per-item output, the summary, the page)."""

from __future__ import annotations

import argparse
from typing import Any

from .flags import (
    LIMIT,
    add_gate_arg,
    add_number,
    add_output_args,
    add_pipeline_args,
    add_seed_arg,
    add_shard_arg,
    add_table_args,
    config_from_args,
    rows_to_stdout,
    score_output,
    show_progress,
)
from .text import emit, format_report, gate_failures

SCORE_EPILOG = """\
input format (JSONL, one item a line, or one JSON array of items; RAGAS rows (user_input, response,
retrieved_contexts), classic RAGAS rows (question, answer, contexts) and DeepEval rows (input, actual_output,
retrieval_context) are read too):
  {"id": "q1", "question": "...", "response": "...",      id optional: item-N (its position)
   "documents": [{"id": "d1", "text": "..."}, ...],       or plain strings: ids d0, d1, ...
   "claims": ["..."],                      optional: skips decomposition
   "labels": [["SUPPORT", "CONTRADICT", ...], ...]}   optional: labels[i][j] = claim i vs document j; skips judging

examples:
  conflictscore score examples/items.jsonl -o scored.jsonl --summary summary.json
  conflictscore score items.jsonl -o out.jsonl --judge nli --judge-arg model=./my-judge --pruner none
  conflictscore score items.jsonl -o out.jsonl --judge-arg model=deberta-v3-large-nli
      (a name from `conflictscore models list`)
  conflictscore score items.jsonl -o out.jsonl --config run.toml --set chunk.max_tokens=256 --resume
  conflictscore score items.jsonl -o out.jsonl --config previous_summary.json   (replay a run)
  conflictscore score items.jsonl -o out.jsonl --summary summary.json --report report.html   (HTML report)
  conflictscore score items.jsonl -o out.jsonl --summary summary.json --seed 7   (another bootstrap seed)
  conflictscore score items.jsonl --shard 2/4 -o out.2.jsonl --summary out.2.json   (one of four shards; see merge)
  conflictscore score ragas.jsonl -o out.csv          (RAGAS or DeepEval rows; one CSV row per item, no JSONL)
  conflictscore score items.json -o out.json          (a JSON array in, the rows as one JSON array out)
  conflictscore score items.jsonl -o report.html      (only the HTML report)
  conflictscore score items.jsonl -o out.jsonl --csv items.csv --csv-pairs pairs.csv   (tables beside the JSONL)
  conflictscore score items.jsonl -o - --summary summary.json | jq .metrics   (the rows on stdout; no --resume, --shard)
  conflictscore score items.jsonl -o out.jsonl --fail-if "cs_c>0.3" --fail-if "micro.cs_c>0.25"   (CI gate: exit 4)

exit status: 0 done; 2 bad input or configuration (the message names file, line and field), an OUTPUT that
  would overwrite the input or is being written by another run, a --resume that would mix results;
  3 finished and written, but more judgments unscored than engine.max_unscored_share allows, or more
  sentences the seq2seq / llm decomposer could not split than engine.max_fallback_share;
  4 finished and written, and a --fail-if condition held (one line each on stderr; 3 goes first);
  1 a write that failed (a full disk: the rows so far stay in OUTPUT.partial, rerun with --resume);
  130 interrupted (rerun with --resume); 141 stdout closed by its reader (| head).
"""


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "score",
        description="Decompose each response into claims, judge every claim against every document, "
        "and report CS-C (share of conflicted claims), CS-R (contradiction ratio of conflicted claims), "
        "cs_r_evidenced and the pooled support rate.",
        epilog=SCORE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="INPUT", help="items, JSONL (or one JSON array)")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="the results, in the format its extension names: .jsonl the per-item rows (written atomically, "
        "resumable), .json the same rows as one JSON array, .csv one row per item, .html the report; - "
        "streams the rows to stdout, and nothing else is printed there",
    )
    p.add_argument("--summary", metavar="SUMMARY.json", help="dataset metrics, pair counts, timing, config, versions")
    p.add_argument(
        "--resume", action="store_true", help="keep the finished items of an interrupted run; score the rest"
    )
    p.add_argument(
        "--report",
        metavar="REPORT.html",
        help="also write a self-contained HTML report (see `conflictscore report --help`)",
    )
    add_number(
        p, "--limit", int, LIMIT, metavar="N", help="only the first N items (of the shard, with --shard): a trial run"
    )
    add_output_args(p, json_help="the summary as JSON")
    add_table_args(p)
    add_gate_arg(p)
    add_shard_arg(p)
    add_seed_arg(p)
    add_pipeline_args(p)
    p.set_defaults(func=cmd_score)


def cmd_score(args: argparse.Namespace) -> int:
    from ..core.gate import check_run
    from ..formats.run_info import judge_text
    from ..pipeline.checks import EXIT_UNSCORED, too_many_fallbacks, too_many_unscored
    from ..pipeline.scoring import score_file
    from .report import score_page

    tables, output = score_output(args)
    cfg = config_from_args(args)
    streamed = rows_to_stdout(args, output, tables)
    page = (
        score_page(args.report, scored=None if streamed else output, items=args.input, summary_path=args.summary)
        if args.report
        else None
    )
    summary = score_file(
        args.input,
        output,
        config=cfg,
        summary_path=args.summary,
        resume=args.resume,
        progress=show_progress(args),
        page=page,
        shard=args.shard,
        config_file=args.config,
        limit=args.limit,
        tables=tables,
    )
    judge = judge_text(summary.config)
    if not tables.to_stdout and not streamed:
        emit(
            args,
            summary.to_json(),
            lambda: "\n".join(
                [
                    format_report(summary),
                    *([judge] if judge else []),
                    *([f"report {args.report}"] if args.report else []),
                ]
            ),
        )
    if too_many_unscored(summary, cfg) or too_many_fallbacks(summary, cfg):
        return EXIT_UNSCORED
    return gate_failures(args, check_run(args.fail_if, summary.to_json()))
