"""What the opt-in reduced-precision CPU paths of the default judge cost in labels, and what they buy.

``dtype=auto`` is float32 on every CPU (the same labels on every machine kind); ``dtype=bfloat16``
and ``runtime=compile`` are opt-in. This runs the engine (``--pruner none``, no cache, the shipped
default judge) over the same items once per variant — float32 on the torch runtime as the
reference, bfloat16 at two batch sizes, ``torch.compile`` at float32 and bfloat16 — after one
warm-up run each (so model loading and compilation are not timed), variants alternating over
``--repeats`` rounds, and compares every claim × document judgment with the reference: labels,
probabilities, the claims whose *conflicted* changes, macro CS-C. bfloat16 is measured only
where the CPU multiplies it natively (AVX512-BF16 or AMX); elsewhere it is emulated and slow.

    .venv/bin/python -m benchmarks.speed.cpu_bf16 --out benchmarks/results/speed/cpu_bf16 [--rag 40 --long 12]
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks._lib.workloads import base_parser, data_dir, long_job, rag_job, ramdocs_questions
from conflictscore_local import Engine, RunConfig

MODEL = "models/default-judge"


def variants(native_bf16: bool, with_compile: bool) -> dict[str, dict[str, Any]]:
    """Variant key → the judge's arguments; the first is the reference (``dtype=auto`` on a CPU)."""
    base = {"name": "nli", "model": MODEL, "device": "cpu"}
    out = {"fp32-torch-b64": {**base, "dtype": "float32", "runtime": "torch", "batch_size": 64}}
    if with_compile:
        out["fp32-compile-b64"] = {**base, "dtype": "float32", "runtime": "compile", "batch_size": 64}
    if native_bf16:
        out["bf16-torch-b64"] = {**base, "dtype": "bfloat16", "runtime": "torch", "batch_size": 64}
        out["bf16-torch-b8"] = {**base, "dtype": "bfloat16", "runtime": "torch", "batch_size": 8}
        if with_compile:
            out["bf16-compile-b64"] = {**base, "dtype": "bfloat16", "runtime": "compile", "batch_size": 64}
    return out


def label(judge: dict[str, Any]) -> str:
    return f"{judge['dtype']}, runtime={judge['runtime']}, batch {judge['batch_size']}"


def judgments(results: Any) -> list[tuple[str, dict[str, float] | None]]:
    return [(j.label, dict(j.probs) if j.probs else None) for r in results for v in r.verdicts for j in v.judgments]


def compare(ref: Any, got: Any) -> dict[str, Any]:
    a, b = judgments(ref), judgments(got)
    shifts = sorted(abs(pa[k] - pb[k]) for (_, pa), (_, pb) in zip(a, b) if pa and pb for k in pa)
    conflicted = [
        (va.conflicted, vb.conflicted) for ra, rb in zip(ref, got) for va, vb in zip(ra.verdicts, rb.verdicts)
    ]

    def q(p: float) -> float:
        return float(f"{shifts[min(len(shifts) - 1, int(p * len(shifts)))]:.3g}") if shifts else 0.0

    return {
        "judgments": len(a),
        "labels_differ": sum(x[0] != y[0] for x, y in zip(a, b)),
        "claims": len(conflicted),
        "conflicted_differs": sum(x != y for x, y in conflicted),
        "prob_shift_median": q(0.5),
        "prob_shift_p99": q(0.99),
        "prob_shift_max": q(1.0),
    }


def macro_cs_c(results: Any) -> float:
    vals = [r.metrics.cs_c for r in results if r.metrics.cs_c is not None]
    return round(sum(vals) / len(vals), 4) if vals else 0.0


def measure(args: Any) -> dict[str, Any]:
    from conflictscore_local.util.devices import native_cpu_bf16

    data = data_dir(args.data_dir)
    items = rag_job(ramdocs_questions(data), args.rag) + long_job(data, args.long)
    native, why = native_cpu_bf16()
    engines: dict[str, Engine] = {}
    setup: dict[str, float] = {}
    judges = variants(native, args.compile)
    for name, judge in judges.items():
        t0 = time.perf_counter()
        engines[name] = Engine(RunConfig.from_mapping({"cache": {"enabled": False}}), judge=judge, pruner="none")
        engines[name].score_all(items[:2])  # load (and compile) before timing
        setup[name] = round(time.perf_counter() - t0, 2)
    names = list(engines)
    times: dict[str, list[float]] = {n: [] for n in names}
    results: dict[str, Any] = {}
    for r in range(args.repeats):
        for name in names if r % 2 == 0 else reversed(names):
            t0 = time.perf_counter()
            results[name] = engines[name].score_all(items)[0]
            times[name].append(time.perf_counter() - t0)
    ref = names[0]
    out = {}
    for name in names:
        med = statistics.median(times[name])
        resolved = engines[name].backend("judge").describe().get("resolved", {})
        out[name] = {
            "what": label(judges[name]),
            "seconds": [round(t, 2) for t in times[name]],
            "median_s": round(med, 2),
            "speedup": round(statistics.median(times[ref]) / med, 3),
            "setup_s": setup[name],
            "macro_cs_c": macro_cs_c(results[name]),
            "dtype_reason": resolved.get("dtype_reason"),
            **compare(results[ref], results[name]),
        }
    n_pairs = out[ref]["judgments"]
    return {
        "items": len(items),
        "rag_questions": args.rag,
        "long_claims": args.long,
        "judgments": n_pairs,
        "repeats": args.repeats,
        "native_bf16": native,
        "native_bf16_reason": why,
        "variants": out,
    }


def markdown(data: dict[str, Any]) -> str:
    m, meta = data["measured"], data["meta"]
    lines = [
        "# Reduced precision on the CPU: speed and label agreement against float32",
        "",
        *header(meta, f"; CPU flags: {meta['cpu_flags']}; torch threads {meta['threads']}"),
        f"{m['items']} items ({m['rag_questions']} RAMDocs questions against their own documents, {m['long_claims']} "
        f"SciFact claims against long abstracts), {m['judgments']} claim × document judgments, `--pruner none`, "
        f"no cache, the shipped default judge; each variant warmed up once, then {m['repeats']} rounds alternating. "
        f"Native bf16 on this CPU: {m['native_bf16']} ({m['native_bf16_reason']}).",
        "",
        "| variant | median s | × float32 | labels ≠ float32 | claims whose *conflicted* differs | macro CS-C | "
        "prob. shift median / p99 / max | load + warm-up s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in m["variants"].items():
        lines.append(
            f"| {r['what']}{' (auto)' if name == 'fp32-torch-b64' else ''} | {r['median_s']} | {r['speedup']} | "
            f"{r['labels_differ']} / {r['judgments']} | "
            f"{r['conflicted_differs']} / {r['claims']} | {r['macro_cs_c']} | {r['prob_shift_median']} / "
            f"{r['prob_shift_p99']} / {r['prob_shift_max']} | {r['setup_s']} |"
        )
    if not m["native_bf16"]:
        lines += [
            "",
            "This CPU has no native bf16, so the bfloat16 variants were not run (emulated bf16 is "
            'several times slower than float32: `throughput_peers.md`, "The limit").',
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = base_parser(__doc__, "cpu_bf16")
    ap.add_argument("--rag", type=int, default=40, help="RAMDocs questions (default 40)")
    ap.add_argument("--long", type=int, default=12, help="SciFact claims with long abstracts (default 12)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--no-compile", dest="compile", action="store_false", help="leave runtime=compile out")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    t0, load = time.perf_counter(), os.getloadavg()
    measured = measure(args)
    meta = run_meta(__file__, argv, t0, load, threads=args.threads)
    print(write_recorded(Path(args.out), {"measured": measured, "meta": meta}, markdown))


if __name__ == "__main__":
    main()
