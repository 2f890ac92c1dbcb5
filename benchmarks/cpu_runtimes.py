"""Which CPU path runs the default judge's forward fastest at identical labels (``runtime=auto``).

The ``nli`` judge's PyTorch runtime (``judge/runtime.py``: transformers' default attention,
SDPA for BERT, float32) against the paths that could replace it on a CPU: the eager attention
implementation, oneDNN through ``torch.utils.mkldnn.to_mkldnn`` (linear layers as
``MkldnnLinear``), and ``torch.compile`` (inductor, ``dynamic=True``; its compile time reported
apart). Every variant runs the same encoded pairs (RAMDocs claims against their own documents,
split by the engine's chunker and encoded by ``encode_pairs``) in the judge's own
length-sorted token batches (``run_batched``); labels and probabilities are compared with the
default path's. Variants alternate over ``--repeats`` rounds; medians reported. ONNX Runtime
is measured by ``benchmarks/onnx_throughput.py``.

    .venv/bin/python benchmarks/cpu_runtimes.py --out benchmarks/results/cpu_runtimes [--questions 12]
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))

from pruner_cost import candidate_groups  # noqa: E402
from throughput import ramdocs_questions  # noqa: E402
from throughput_peers import base_parser, rag_job, uptime  # noqa: E402

from conflictscore_local import Engine  # noqa: E402
from conflictscore_local.environment import versions  # noqa: E402
from conflictscore_local.judge.nli import encode_pairs  # noqa: E402
from conflictscore_local.judge.runtime import run_batched  # noqa: E402

MODEL = "models/default-judge"
BATCH, TOKENS = 64, 2048  # the TorchRuntime's CPU defaults
MIN_GAIN = 1.05
"""What a path must gain over the judge's runtime, at identical labels, to become ``runtime=auto``
on this CPU: run-to-run noise on this machine is a few percent."""


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
        run_batched(feats[:2 * BATCH], forward_of(model), max_pairs=BATCH, max_tokens=TOKENS)
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
    return {"pairs": len(feats), "tokens": tokens, "max_length": max_length, "repeats": args.repeats,
            "torch_threads": torch.get_num_threads(), "variants": results, "choice": choice(results, len(feats))}


def choice(results: dict[str, Any], pairs: int) -> dict[str, Any]:
    """The path ``runtime=auto`` should take here: the fastest at identical labels, if it gains at
    least :data:`MIN_GAIN` over the judge's runtime (the first variant), else the judge's runtime."""
    default = next(iter(results))
    same = [n for n, r in results.items() if r["labels_equal"] == pairs]
    best = max(same, key=lambda n: results[n]["vs_default"])
    chosen = best if results[best]["vs_default"] >= MIN_GAIN else default
    return {"fastest_at_identical_labels": best, "gain": results[best]["vs_default"], "min_gain": MIN_GAIN,
            "chosen": chosen}


def write_md(data: dict[str, Any], path: Path) -> None:
    m = data["measured"]
    lines = [
        "# CPU paths for the default judge's forward",
        "",
        f"Command: `{data['command']}`  ",
        f"Date: {data['date']}. Machine: {data['machine']}; CPU flags: {data['cpu_flags']}; torch threads "
        f"{m['torch_threads']}.  ",
        f"uptime before: `{data['uptime_before']}`  ",
        f"uptime after: `{data['uptime_after']}`",
        "",
        f"{m['pairs']} RAMDocs claim × passage inputs ({m['tokens']} tokens, max_length {m['max_length']}), the "
        f"judge's length-sorted batches (≤ {BATCH} pairs, ≤ {TOKENS} padded tokens); {m['repeats']} rounds, "
        "variants alternating; labels compared with the judge's own runtime (first row).",
        "",
        "| path | what | median s | pairs/s | × the judge's runtime | labels equal | max prob. difference | "
        "load + warm-up s |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, r in m["variants"].items():
        lines.append(f"| {name} | {r['note']} | {r['median_s']} | {r['pairs_per_s']} | {r['vs_default']} | "
                     f"{r['labels_equal']}/{m['pairs']} | {r['max_abs_prob_diff']} | {r['setup_s']} |")
    c = choice(m["variants"], m["pairs"])
    lines += ["", f"Fastest at identical labels: {c['fastest_at_identical_labels']} at {c['gain']}× the judge's runtime; "
              f"a change of default needs ≥ {c['min_gain']}× (run-to-run noise is a few percent), and load + warm-up "
              f"(compilation) counts against it in a cold run. `runtime=auto` on this CPU: **{c['chosen']}**."]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def cpu_flags() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return "unknown"
    flags = next((line.split(":", 1)[1].split() for line in text.splitlines() if line.startswith("flags")), [])
    wanted = ("avx2", "avx512f", "avx512_bf16", "avx512_vnni", "amx_bf16", "amx_int8")
    return " ".join(f for f in wanted if f in flags) or "none of avx2/avx512/amx"


def main() -> None:
    ap = base_parser(__doc__, "cpu_runtimes")
    ap.add_argument("--questions", type=int, default=12, help="RAMDocs questions (default 12)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    ap.add_argument("--no-compile", dest="compile", action="store_false", help="leave torch.compile out")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    ap.add_argument("--render", action="store_true", help="only write OUT.md again from OUT.json")
    args = ap.parse_args()
    out = Path(args.out)
    if args.render:
        write_md(json.loads(out.with_suffix(".json").read_text(encoding="utf-8")), out.with_suffix(".md"))
        return
    import torch

    torch.set_num_threads(args.threads)
    before = uptime()
    measured = measure(args)
    data = {
        "command": "python benchmarks/cpu_runtimes.py " + " ".join(sys.argv[1:]),
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs ({platform.platform()})",
        "cpu_flags": cpu_flags(),
        "uptime_before": before, "uptime_after": uptime(), "versions": versions(),
        "measured": measured,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    write_md(data, out.with_suffix(".md"))
    print(out.with_suffix(".md").read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
