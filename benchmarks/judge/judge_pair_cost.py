"""What one claim x passage pair costs each judge on this CPU: the same pairs, each judge in turn.

Pairs: the first ``--pairs`` rows of an eval file written by ``train-judge prepare`` (ConflictBench dev
by default: real claims against real document passages, split for each judge's window as it
splits them). Each judge (``--judge TAG=MODEL``, repeatable) runs through the ``nli`` backend as a
run uses it (length sorting, dynamic padding, its token budget), once to warm up and then
``--repeats`` times, round-robin over the judges so a change of machine load hits them alike;
the median is reported, as pairs per second and milliseconds per pair, for each ``--dtype``.

    python -m benchmarks.judge.judge_pair_cost --judge v3=models/default-judge \\
        --judge v4-mpnet6=<state>/judge-v4/mpnet6-lora --data benchmarks/work/judge-data-v3 \\
        --pairs 256 --repeats 3 --dtype float32 bfloat16 --threads 2

writes ``benchmarks/results/judge/judge_pair_cost.{json,md}`` (``--out`` changes the stem).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local.backends import registry
from conflictscore_local.core.types import Claim, Pair, Passage

ROOT = Path(__file__).resolve().parents[2]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--judge", action="append", required=True, metavar="TAG=MODEL", help="a judge to time (repeatable)")
    p.add_argument("--data", default="benchmarks/work/judge-data-v3", help="the folder `train-judge prepare` wrote")
    p.add_argument("--set", default="bench_dev", help="the eval file whose rows are judged (default bench_dev)")
    p.add_argument("--pairs", type=int, default=256)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dtype", nargs="+", default=["float32"], choices=("float32", "bfloat16"))
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: the cores available)")
    p.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "judge" / "judge_pair_cost"))
    return p.parse_args(argv)


def _pairs(judge: Any, path: Path, n: int) -> tuple[list[Pair], int]:
    """The first ``n`` rows of the eval file as the judge splits them; and their tokens in all."""
    from transformers import AutoTokenizer

    from conflictscore_local.train.data import read_eval_set
    from conflictscore_local.train.loop import make_chunker

    tok = AutoTokenizer.from_pretrained(judge.checkpoint())
    ev, _ = read_eval_set(str(path), make_chunker(tok, judge.max_length()))
    claims: dict[str, Claim] = {}
    pairs = []
    for r, (claim, text) in enumerate(zip(ev.claims[:n], ev.passages[:n])):
        c = claims.setdefault(claim, Claim("cost", len(claims), claim))
        pairs.append(Pair(c, Passage("cost", f"r{r}", 0, text)))
    tokens = sum(
        len(tok(p.passage.text, p.claim.text, truncation=True, max_length=judge.max_length())["input_ids"])
        for p in pairs
    )
    return pairs, tokens


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch

    started, load = time.perf_counter(), os.getloadavg()
    threads = args.threads or len(os.sched_getaffinity(0))
    torch.set_num_threads(threads)
    judges: dict[tuple[str, str], Any] = {}
    work: dict[tuple[str, str], tuple[list[Pair], int]] = {}
    for spec in args.judge:
        tag, _, model = spec.partition("=")
        for dtype in args.dtype:
            j = registry.build("judge", "nli", {"model": model, "dtype": dtype, "device": "cpu"})
            judges[(tag, dtype)] = j
            work[(tag, dtype)] = _pairs(j, Path(args.data) / f"{args.set}.jsonl", args.pairs)
            j.judge(work[(tag, dtype)][0][:8])  # load and warm up
    times: dict[tuple[str, str], list[float]] = {k: [] for k in judges}
    for _ in range(args.repeats):
        for key, j in judges.items():
            t = time.perf_counter()
            j.judge(work[key][0])
            times[key].append(time.perf_counter() - t)
    rows = []
    for (tag, dtype), ts in times.items():
        pairs, tokens = work[(tag, dtype)]
        med = statistics.median(ts)
        rows.append(
            {
                "judge": tag,
                "model": judges[(tag, dtype)].describe().get("model"),
                "dtype": dtype,
                "pairs": len(pairs),
                "mean_tokens": round(tokens / len(pairs), 1),
                "pairs_per_s": round(len(pairs) / med, 2),
                "ms_per_pair": round(1000 * med / len(pairs), 2),
                "seconds": [round(t, 3) for t in ts],
            }
        )
    base = {r["dtype"]: r["ms_per_pair"] for r in rows if r["judge"] == rows[0]["judge"]}
    for r in rows:
        r["x_first"] = round(r["ms_per_pair"] / base[r["dtype"]], 2)
    result = {"meta": {**run_meta(__file__, argv, started, load), "threads": threads}, "set": args.set, "rows": rows}

    def markdown(res: dict[str, Any]) -> str:
        lines = ["# What a pair costs each judge on this CPU", ""] + header(res["meta"], f", {threads} torch threads")
        lines += [
            f"Pairs: the first {args.pairs} rows of `{args.set}` (claim x document passage), each judge's own "
            f"splitting and window; median of {args.repeats} repeats after a warm-up.",
            "",
            "| judge | dtype | mean tokens | pairs/s | ms per pair | x the first |",
            "|---|---|---:|---:|---:|---:|",
        ]
        lines += [
            f"| {r['judge']} | {r['dtype']} | {r['mean_tokens']} | {r['pairs_per_s']} | {r['ms_per_pair']} | "
            f"{r['x_first']} |"
            for r in res["rows"]
        ]
        return "\n".join(lines) + "\n"

    print(write_recorded(Path(args.out), result, markdown))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
