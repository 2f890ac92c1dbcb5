"""Which CPU path runs the default judge's forward fastest at identical labels (``runtime=auto``).

The ``nli`` judge's PyTorch runtime (``judge/nli/runtimes/torch.py``: transformers' default attention,
SDPA for BERT, float32) against the paths that could replace it on a CPU: the eager attention
implementation, oneDNN through ``torch.utils.mkldnn.to_mkldnn`` (linear layers as
``MkldnnLinear``), and ``torch.compile`` (inductor, ``dynamic=True``; its compile time reported
apart). Every variant runs the same encoded pairs (RAMDocs claims against their own documents,
split by the engine's chunker and encoded by ``encode_pairs``) in the judge's own
length-sorted token batches (``run_batched``); labels and probabilities are compared with the
default path's. Variants alternate over ``--repeats`` rounds; medians reported. ONNX Runtime
is measured by ``benchmarks/speed/onnx_throughput.py``.

    .venv/bin/python -m benchmarks.speed.cpu_runtimes --out benchmarks/results/speed/cpu_runtimes [--questions 12]
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks._lib.workloads import base_parser, candidate_groups, rag_job, ramdocs_questions
from conflictscore_local import Engine
from conflictscore_local.judge.nli import encode_pairs
from conflictscore_local.judge.nli.runtimes.base import run_batched

MODEL = "models/default-judge"
BATCH, TOKENS = 64, 2048  # the TorchRuntime's CPU defaults
MIN_GAIN = 1.05
"""What a path must gain over the judge's runtime, at identical labels, to become ``runtime=auto``
on this CPU: run-to-run noise on this machine is a few percent."""
MAX_BREAK_EVEN_S = 60.0
"""Nor may its extra load and warm-up (a compilation) take more than this many seconds of judging
to pay back: the default must not make short runs slower (the bundled example judges for seconds)."""


def variants(with_compile: bool) -> dict[str, tuple[Callable[[], Any], str]]:
    import torch
    import torch.utils.mkldnn
    from transformers import AutoModelForSequenceClassification

    def load(attn: str | None = None) -> Any:
        kw = {"attn_implementation": attn} if attn else {}
        return AutoModelForSequenceClassification.from_pretrained(MODEL, dtype=torch.float32, **kw).eval()

    out = {
        "torch (the judge's runtime)": (lambda: load(), "transformers default attention (sdpa), float32"),
        "torch, eager attention": (lambda: load("eager"), "attn_implementation='eager'"),
        "oneDNN (to_mkldnn)": (lambda: torch.utils.mkldnn.to_mkldnn(load("eager")), "Linear -> MkldnnLinear"),
    }
    if with_compile:
        out["torch.compile"] = (lambda: torch.compile(load(), dynamic=True), "inductor, dynamic=True")
    return out


def measure(args: Any) -> dict[str, Any]:
    import torch
    from transformers import AutoTokenizer

    questions = ramdocs_questions(Path(args.data_dir) if args.data_dir else None)
    engine = Engine(pruner="none")
    pairs = [p for g in candidate_groups(engine, rag_job(questions, args.questions)) for p in g]
    tok = AutoTokenizer.from_pretrained(MODEL)
    max_length = engine.backend("judge").max_length()
    feats, _ = encode_pairs(tok, [p.passage.text for p in pairs], [p.claim.text for p in pairs], max_length)
    tokens = sum(len(f["input_ids"]) for f in feats)

    models: dict[str, Any] = {}
    notes: dict[str, str] = {}
    setup_s: dict[str, float] = {}
    for name, (make, note) in variants(args.compile).items():
        t0 = time.perf_counter()
        models[name] = make()
        setup_s[name] = time.perf_counter() - t0
        notes[name] = note

    def forward_of(model: Any) -> Callable[[list[Any]], list[list[float]]]:
        def forward(batch: list[Any]) -> list[list[float]]:
            padded = tok.pad(batch, return_tensors="pt")
            with torch.inference_mode():
                return torch.softmax(model(**padded).logits.float(), dim=-1).tolist()

        return forward

    for name, model in models.items():  # warm-up (and compilation) on the first batches
        t0 = time.perf_counter()
        run_batched(feats[: 2 * BATCH], forward_of(model), max_pairs=BATCH, max_tokens=TOKENS)
        setup_s[name] += time.perf_counter() - t0
    times: dict[str, list[float]] = {n: [] for n in models}
    rows: dict[str, Any] = {}
    names = list(models)
    for r in range(args.repeats):
        for name in names if r % 2 == 0 else reversed(names):
            t0 = time.perf_counter()
            rows[name] = run_batched(feats, forward_of(models[name]), max_pairs=BATCH, max_tokens=TOKENS)
            times[name].append(time.perf_counter() - t0)
    ref_name = names[0]
    ref = rows[ref_name]
    argmax = lambda row: max(range(len(row)), key=row.__getitem__)  # noqa: E731
    results = {}
    for name in names:
        med = statistics.median(times[name])
        results[name] = {
            "note": notes[name],
            "seconds": [round(t, 3) for t in times[name]],
            "median_s": round(med, 3),
            "pairs_per_s": round(len(feats) / med, 2),
            "vs_default": round(statistics.median(times[ref_name]) / med, 3),
            "labels_equal": sum(argmax(a) == argmax(b) for a, b in zip(rows[name], ref)),
            "max_abs_prob_diff": float(f"{max(abs(x - y) for a, b in zip(rows[name], ref) for x, y in zip(a, b)):.3g}"),
            "setup_s": round(setup_s[name], 2),
        }
    return {
        "pairs": len(feats),
        "tokens": tokens,
        "max_length": max_length,
        "repeats": args.repeats,
        "torch_threads": torch.get_num_threads(),
        "variants": results,
        "choice": choice(results, len(feats)),
    }


def choice(results: dict[str, Any], pairs: int) -> dict[str, Any]:
    """The path ``runtime=auto`` should take here: the fastest at identical labels, if it gains at
    least :data:`MIN_GAIN` over the judge's runtime (the first variant) and its extra load and
    warm-up pay back within :data:`MAX_BREAK_EVEN_S` seconds of judging; else the judge's runtime."""
    default = next(iter(results))
    same = [n for n, r in results.items() if r["labels_equal"] == pairs]
    best = max(same, key=lambda n: results[n]["vs_default"])
    gain = results[best]["vs_default"]
    extra = results[best]["setup_s"] - results[default]["setup_s"]
    # seconds of judging (at the judge runtime's speed) after which the faster path has made up its extra setup
    break_even = round(max(extra, 0.0) / (1 - 1 / gain), 1) if gain > 1 else None
    pays = break_even is not None and break_even <= MAX_BREAK_EVEN_S
    return {
        "fastest_at_identical_labels": best,
        "gain": gain,
        "min_gain": MIN_GAIN,
        "break_even_judge_s": break_even,
        "max_break_even_s": MAX_BREAK_EVEN_S,
        "chosen": best if gain >= MIN_GAIN and pays else default,
    }


def markdown(data: dict[str, Any]) -> str:
    m, meta = data["measured"], data["meta"]
    lines = [
        "# CPU paths for the default judge's forward",
        "",
        *header(meta, f"; CPU flags: {meta['cpu_flags']}; torch threads {m['torch_threads']}"),
        f"{m['pairs']} RAMDocs claim × passage inputs ({m['tokens']} tokens, max_length {m['max_length']}), the "
        f"judge's length-sorted batches (≤ {BATCH} pairs, ≤ {TOKENS} padded tokens); {m['repeats']} rounds, "
        "variants alternating; labels compared with the judge's own runtime (first row).",
        "",
        "| path | what | median s | pairs/s | × the judge's runtime | labels equal | max prob. difference | "
        "load + warm-up s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in m["variants"].items():
        lines.append(
            f"| {name} | {r['note']} | {r['median_s']} | {r['pairs_per_s']} | {r['vs_default']} | "
            f"{r['labels_equal']}/{m['pairs']} | {r['max_abs_prob_diff']} | {r['setup_s']} |"
        )
    c = m["choice"]
    lines += [
        "",
        f"Fastest at identical labels: {c['fastest_at_identical_labels']} at {c['gain']}× the judge's runtime, "
        f"its extra load + warm-up paid back after {c['break_even_judge_s']} s of judging. A change of default "
        f"needs ≥ {c['min_gain']}× (run-to-run noise is a few percent) and a pay-back within "
        f"{c['max_break_even_s']:g} s (short runs must not get slower). `runtime=auto` on this CPU: "
        f"**{c['chosen']}**.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = base_parser(__doc__, "cpu_runtimes")
    ap.add_argument("--questions", type=int, default=12, help="RAMDocs questions (default 12)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--no-compile", dest="compile", action="store_false", help="leave torch.compile out")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    t0, load = time.perf_counter(), os.getloadavg()
    measured = measure(args)
    meta = run_meta(__file__, argv, t0, load)
    print(write_recorded(Path(args.out), {"measured": measured, "meta": meta}, markdown))


if __name__ == "__main__":
    main()
