"""What checkpointing costs: the engine judging a step in calls of about ``engine.checkpoint_s``
seconds (the judgments cached and finished items written after each) against one judge call
and one cache write for the whole step, as the engine did before.

A seeded sample of ConflictBench items (RAMDocs: given claims, real documents) is scored by
the bundled default judge (``nli``, CPU) with ``--pruner none`` and a fresh judgment cache
per run, in these variants, interleaved over ``--rounds`` rounds (best time kept, so the
other jobs on the shared machine disturb each variant alike):

- ``one call``: the pre-change inner loop: every pair of the step in one ``judge.judge``
  call, then one ``cache.put_many`` (nothing persisted until the step ends);
- ``engine, checkpoint_s=S``: ``Engine.score`` with ``engine.checkpoint_s`` = S.

It prints and records, per variant, the CPU time of the process (the measure: wall time on
the shared machine moves with other jobs), its ratio to ``one call``, the wall time, the
number of judge calls and the longest time between two checkpoints (what a kill can lose).

    .venv/bin/python -m benchmarks.pipeline.checkpoint_overhead --out benchmarks/results/pipeline/checkpoint_overhead
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local import Engine, RunConfig
from conflictscore_local.bench import build_bench
from conflictscore_local.core.types import Pair
from conflictscore_local.formats.cache import JudgmentCache
from conflictscore_local.formats.inputs import parse_item


def sample(n: int, seed: int) -> list[Any]:
    items = [parse_item(o) for o in build_bench(None, only=["ramdocs"])]
    random.Random(seed).shuffle(items)
    return items[:n]


def timed_judge(engine: Engine) -> list[float]:
    """Wrap the engine's judge so every call's end time is recorded."""
    judge = engine.backend("judge")
    ends: list[float] = []
    real = judge.judge

    def judge_and_note(pairs: Any, on_progress: Any = None) -> Any:
        out = real(pairs, on_progress=on_progress)
        ends.append(time.perf_counter())
        return out

    judge.judge = judge_and_note
    return ends


def run_engine(items: list[Any], checkpoint_s: float, cache: Path) -> dict[str, Any]:
    cfg = RunConfig().updated(
        {
            "pruner": {"name": "none"},
            "judge": {"device": "cpu"},
            "engine": {"checkpoint_s": checkpoint_s},
            "cache": {"path": str(cache)},
        }
    )
    with Engine(cfg) as engine:
        engine.backend("judge")._load()  # model, tokenizer and cache open outside the timing, as in `one call`
        engine.chunker()
        engine.cache()
        ends = timed_judge(engine)
        t0, c0 = time.perf_counter(), time.process_time()
        n = len(list(engine.score(items)))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    gaps = [b - a for a, b in zip([t0, *ends], ends)]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "items": n,
        "judge_calls": len(ends),
        "longest_between_checkpoints_s": max(gaps),
    }


def run_one_call(items: list[Any], cache: Path) -> dict[str, Any]:
    cfg = RunConfig().updated({"pruner": {"name": "none"}, "judge": {"device": "cpu"}, "cache": {"path": str(cache)}})
    with Engine(cfg) as engine:
        judge = engine.backend("judge")
        judge._load()
        chunker = engine.chunker()
        with JudgmentCache(cache, judge.spec()) as store:
            t0, c0 = time.perf_counter(), time.process_time()
            pairs = [
                Pair(c, p)
                for it in items
                for p in chunker.split(it.id, [d for d in it.documents if d.text.strip()])
                for c in [engine_claim(it, i) for i in range(len(it.claims))]
            ]
            store.put_many(judge.judge(pairs))
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"wall_s": wall, "cpu_s": cpu, "pairs": len(pairs), "judge_calls": 1, "longest_between_checkpoints_s": wall}


def engine_claim(it: Any, i: int) -> Any:
    from conflictscore_local.core.types import Claim

    return Claim(it.id, i, it.claims[i])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--checkpoints", type=float, nargs="+", default=[86400.0, 60.0, 5.0, 1.0])
    ap.add_argument("--out", default="benchmarks/results/pipeline/checkpoint_overhead", help="PATH without extension")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    items = sample(args.items, args.seed)
    names = ["one call"] + [f"engine, checkpoint_s={s:g}" for s in args.checkpoints]
    best: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for k, name in enumerate(names):
                cache = Path(tmp) / f"r{r}-{k}.sqlite"
                res = run_one_call(items, cache) if k == 0 else run_engine(items, args.checkpoints[k - 1], cache)
                print(f"round {r}: {name}: {res}", flush=True)
                if name not in best or res["cpu_s"] < best[name]["cpu_s"]:
                    best[name] = res
    base = best["one call"]["cpu_s"]
    pairs = best["one call"]["pairs"]
    rows = [
        {
            "variant": n,
            **{k: (round(v, 2) if isinstance(v, float) else v) for k, v in best[n].items()},
            "cpu_ratio_to_one_call": round(best[n]["cpu_s"] / base, 3),
            "pairs_per_cpu_s": round(pairs / best[n]["cpu_s"], 1),
        }
        for n in names
    ]
    record = {
        "meta": run_meta(__file__, argv, started, load),
        "sample": f"{args.items} RAMDocs items of ConflictBench (seed {args.seed}), {pairs} claim × passage pairs",
        "judge": "nli, the bundled default judge, CPU",
        "rounds": args.rounds,
        "results": rows,
    }
    print(write_recorded(Path(args.out), record, markdown))


def markdown(record: dict[str, Any]) -> str:
    table = "\n".join(
        f"| {r['variant']} | {r['cpu_s']} | {r['cpu_ratio_to_one_call']} | {r['pairs_per_cpu_s']} | {r['wall_s']} | "
        f"{r['judge_calls']} | {r['longest_between_checkpoints_s']} |"
        for r in record["results"]
    )
    return (
        "# Checkpointing overhead\n\n"
        + "\n".join(header(record["meta"]))
        + f"\nSample: {record['sample']}. Judge: {record['judge']}; `--pruner none`; a fresh cache per run; the round "
        f"with the least CPU time of {record['rounds']} interleaved rounds. CPU time (all threads of the process) is "
        "the measure: on this shared machine wall time moves with other jobs' load by more than the effect "
        "measured.\n\n"
        "| variant | CPU s | CPU ratio to one call | pairs / CPU s | wall s | judge calls | "
        "longest between checkpoints, s |\n"
        f"|---|---|---|---|---|---|---|\n{table}\n\n"
        "`one call` is the engine before checkpointing: nothing reached the cache or OUTPUT until the whole step "
        "(1024 items by default) was judged. The engine variants cache the judgments and write finished items "
        "after every call.\n"
    )


if __name__ == "__main__":
    main()
