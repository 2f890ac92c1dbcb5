"""The default judge's forward pass against the machine's matmul peak, per dtype and batch shape.

Real pairs (RAMDocs questions against their own documents, split and encoded as the ``nli``
judge does) go through one runtime of the judge at a time, timed after a warm-up pass over
the same inputs (model loading and compilation are not timed), best of ``--repeats``:

- ``fp32`` on ``runtime=torch`` (the reference labels: ``dtype=auto``), ``runtime=native``, and with
  transformers' plain attention instead of ``scaled_dot_product_attention`` (``eager-attention``);
- ``bf16`` on ``runtime=torch`` at token budgets of 2,048 (the default), 8,192 and 16,384 padded
  tokens a batch (larger matrices keep AMX tiles fuller), with plain attention, on ``runtime=native``
  (its linear layers' weights prepacked for oneDNN where the CPU has native bf16), and under
  ``torch.compile`` (inductor; ``runtime=compile``, and ``mode="max-autotune-no-cudagraphs"``,
  which tries inductor's AMX GEMM micro-kernels);
- ``int8``: ``torch.ao`` dynamic quantization of every linear layer (int8 weights, activations
  quantized per batch; fbgemm's VNNI kernels), and ONNX Runtime's int8 export (``runtime=onnx``,
  ``int8=true``) where the ``onnx`` extra is installed;
- ``openvino``: that ONNX export compiled by OpenVINO (``runtime=openvino``) at fp32 and, where the CPU
  has it, bf16, where the ``openvino`` extra is installed.

Each row: seconds, the judge's matmul GFLOP on the real tokens (:mod:`conflictscore_local.util.flops`)
per second, that over the dtype's measured peak (``tokens x hidden @ hidden x inner`` at the judge's
own sizes, :func:`workloads.matmul_peak`, for 512, 2,048 and 8,192 tokens), and the labels (the judge's
calibrated rule) that differ from fp32's. ``torch.profiler`` tables of the fp32 and bf16 defaults say where
the time goes: matmuls against the rest; and each part of those forwards timed alone (:func:`parts_alone`)
says what share of the peak the forward could reach were the other parts free (:func:`bound`).

    .venv/bin/python -m benchmarks.speed.forward_peak --out benchmarks/results/speed/forward_peak [--rag 40]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any, Callable

from benchmarks._lib.recording import header, run_meta, uptime, write_recorded
from benchmarks._lib.workloads import (
    base_parser,
    candidate_groups,
    data_dir,
    matmul_peak,
    rag_job,
    ramdocs_questions,
    token_counts,
)
from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.judge.labels import decide
from conflictscore_local.util.flops import sequence_flops

MODEL = "models/default-judge"
PEAK_TOKENS = (512, 2048, 8192)
PROFILED = ("fp32-torch", "bf16-torch-2k")
"""The variants whose time is broken down by operator (the defaults of each dtype: 2,048 tokens a batch)."""


def variants(native_bf16: bool, have_onnx: bool, have_openvino: bool = False) -> dict[str, dict[str, Any]]:
    """Variant key → (the judge's arguments, the dtype whose peak it is held to); fp32-torch first."""
    base = {"model": MODEL, "device": "cpu", "batch_size": 256}
    out: dict[str, dict[str, Any]] = {
        "fp32-torch": {
            "args": {**base, "dtype": "float32", "runtime": "torch", "max_batch_tokens": 2048},
            "peak": "float32",
        },
        "fp32-native": {
            "args": {**base, "dtype": "float32", "runtime": "native", "max_batch_tokens": 2048},
            "peak": "float32",
        },
        "fp32-torch-8k": {
            "args": {**base, "dtype": "float32", "runtime": "torch", "max_batch_tokens": 8192},
            "peak": "float32",
        },
        "fp32-torch-2k-eager-attention": {
            "args": {**base, "dtype": "float32", "runtime": "torch", "max_batch_tokens": 2048},
            "peak": "float32",
            "attention": "eager",
        },
    }
    if have_openvino:
        out["fp32-openvino-2k"] = {
            "args": {**base, "dtype": "float32", "runtime": "openvino", "max_batch_tokens": 2048},
            "peak": "float32",
        }
    if native_bf16:
        for budget in (2048, 8192, 16384):
            out[f"bf16-torch-{budget // 1024}k"] = {
                "args": {**base, "dtype": "bfloat16", "runtime": "torch", "max_batch_tokens": budget},
                "peak": "bfloat16",
            }
        out["bf16-torch-8k-eager-attention"] = {
            "args": {**base, "dtype": "bfloat16", "runtime": "torch", "max_batch_tokens": 8192},
            "peak": "bfloat16",
            "attention": "eager",
        }
        out["bf16-native-8k"] = {
            "args": {**base, "dtype": "bfloat16", "runtime": "native", "max_batch_tokens": 8192},
            "peak": "bfloat16",
        }
        out["bf16-native-2k"] = {
            "args": {**base, "dtype": "bfloat16", "runtime": "native", "max_batch_tokens": 2048},
            "peak": "bfloat16",
        }
        if have_openvino:
            out["bf16-openvino-2k"] = {
                "args": {**base, "dtype": "bfloat16", "runtime": "openvino", "max_batch_tokens": 2048},
                "peak": "bfloat16",
            }
        out["bf16-compile-8k"] = {
            "args": {**base, "dtype": "bfloat16", "runtime": "compile", "max_batch_tokens": 8192},
            "peak": "bfloat16",
        }
        out["bf16-max-autotune-2k"] = {
            "args": {**base, "dtype": "bfloat16", "runtime": "torch", "max_batch_tokens": 2048},
            "peak": "bfloat16",
            "compile_mode": "max-autotune-no-cudagraphs",
        }
    out["int8-dynamic-8k"] = {
        "args": {**base, "dtype": "float32", "runtime": "torch", "max_batch_tokens": 8192},
        "peak": "int8",
        "quantize": True,
    }
    if have_onnx:
        out["int8-onnx-8k"] = {
            "args": {**base, "dtype": "float32", "runtime": "onnx", "int8": True, "max_batch_tokens": 8192},
            "peak": "int8",
        }
    return out


def quantize_dynamic(judge: Any) -> None:
    """Replace the torch runtime's model with ``torch.ao``'s dynamically quantized int8 copy."""
    import torch

    rt = judge.runtime()
    model = rt.model()
    rt._model = torch.ao.quantization.quantize_dynamic(model, {torch.nn.Linear}, dtype=torch.qint8)


def eager_attention(judge: Any) -> None:
    """The torch runtime's model with transformers' plain attention (matmul, softmax, matmul) instead of
    ``scaled_dot_product_attention``."""
    rt = judge.runtime()
    rt.model().set_attn_implementation("eager")


def compile_with(judge: Any, mode: str) -> None:
    """The torch runtime's model under ``torch.compile(mode=mode, dynamic=True)``: ``max-autotune``
    lets inductor benchmark its own C++ GEMM template (AMX micro-kernels where the CPU has them)
    against oneDNN's for each matrix shape, at first use."""
    import torch

    rt = judge.runtime()
    rt._model = torch.compile(rt.model(), mode=mode, dynamic=True)


def batch_shapes(lengths: list[int], batch_size: int, max_tokens: int) -> list[tuple[int, int]]:
    """(inputs, padded length) of each batch the runtimes run: length-sorted, as ``run_batched`` cuts them."""
    from conflictscore_local.judge.nli.runtimes.base import token_batches

    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    ordered = [lengths[i] for i in order]
    return [(len(idx), max(lengths[i] for i in idx)) for idx in token_batches(order, ordered, batch_size, max_tokens)]


def parts_alone(cfg: Any, shapes: list[tuple[int, int]], dtype_name: str, repeats: int) -> dict[str, float]:
    """Seconds of each part of the forward timed alone, on random tensors of the real batches' shapes and
    the judge's sizes (a weight set per layer, as the model has): ``linear`` (the six matmuls a layer,
    ``F.linear``), ``linear_prepacked`` (the same through oneDNN with weights reordered once, what
    inductor's freezing does; bf16 only), ``attention`` (``scaled_dot_product_attention`` with the
    padding mask where a batch is padded) and ``elementwise`` (GELU, the two residual adds and layer
    norms, the heads' transpose copy). Best of ``repeats``."""
    import torch
    import torch.nn.functional as F

    dtype = getattr(torch, dtype_name)
    layers, hidden = int(cfg["num_hidden_layers"]), int(cfg["hidden_size"])
    inner, heads = int(cfg.get("intermediate_size") or 4 * hidden), int(cfg["num_attention_heads"])
    gen = torch.Generator().manual_seed(0)

    def rand(*shape: int) -> Any:
        return (torch.randn(*shape, generator=gen) * 0.05).to(dtype)

    weights = [
        [(rand(n, k), rand(n)) for n, k in [(hidden, hidden)] * 4 + [(inner, hidden), (hidden, inner)]]
        for _ in range(layers)
    ]
    packed = None
    if dtype == torch.bfloat16 and hasattr(torch.ops.mkldnn, "_reorder_linear_weight"):
        packed = [[(torch.ops.mkldnn._reorder_linear_weight(w, 2048), b) for w, b in layer] for layer in weights]
    inputs = [(rand(b * n, hidden), rand(b * n, inner)) for b, n in shapes]
    ln = (torch.ones(hidden, dtype=dtype), torch.zeros(hidden, dtype=dtype))
    attn = []
    for b, n in shapes:
        q, k, v = (rand(b, heads, n, hidden // heads) for _ in range(3))
        mask = torch.ones(b, n, dtype=torch.bool)
        mask[1:, n - max(1, n // 20) :] = False  # a few padded positions, as a length-sorted batch has
        attn.append((q, k, v, mask[:, None, None, :].expand(b, 1, n, n) if b > 1 else None))

    def linear(ws: Any, prepacked: bool) -> None:
        for x, h in inputs:
            for layer in ws:
                for j, (w, b) in enumerate(layer):
                    src = h if j == 5 else x
                    if prepacked:
                        torch.ops.mkldnn._linear_pointwise(src, w, b, "none", [], "")
                    else:
                        F.linear(src, w, b)

    def attention() -> None:
        for q, k, v, mask in attn:
            for _ in range(layers):
                F.scaled_dot_product_attention(q, k, v, attn_mask=mask)

    def elementwise() -> None:
        for (x, h), (q, *_rest) in zip(inputs, attn):
            for _ in range(layers):
                F.gelu(h)
                q.transpose(1, 2).contiguous()
                F.layer_norm(x + x, (hidden,), *ln, 1e-12)
                F.layer_norm(x + x, (hidden,), *ln, 1e-12)

    parts: dict[str, Callable[[], None]] = {
        "linear": lambda: linear(weights, False),
        "attention": attention,
        "elementwise": elementwise,
    }
    if packed is not None:
        parts["linear_prepacked"] = lambda: linear(packed, True)
    out = {}
    with torch.inference_mode():
        for name, fn in parts.items():
            fn()
            out[name] = round(timed(fn, repeats)[0], 3)
    return out


def bound(gflop: float, parts: dict[str, float], peak: float, forward_s: float) -> dict[str, Any]:
    """What the parts timed alone allow: the forward's share of ``peak`` were everything but the linear
    layers free (``linear_only``), and were only the attention kernel added (``with_attention``), with
    the faster of the two linear kernels; beside it the parts' sum against the measured forward."""
    lin = min(v for k, v in parts.items() if k.startswith("linear"))
    total = lin + parts["attention"] + parts["elementwise"]
    return {
        "linear_only": round(gflop / lin / peak, 3),
        "with_attention": round(gflop / (lin + parts["attention"]) / peak, 3),
        "all_parts": round(gflop / total / peak, 3),
        "parts_s": round(total, 3),
        "forward_s": forward_s,
        "parts_over_forward": round(total / forward_s, 3),
    }


def timed(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def profile_table(fn: Callable[[], Any], top: int = 10) -> list[dict[str, Any]]:
    """Self CPU time by operator over one call of ``fn``: the ``top`` heaviest and their share."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        fn()
    events = [e for e in prof.key_averages() if e.self_cpu_time_total > 0]
    total = sum(e.self_cpu_time_total for e in events)
    events.sort(key=lambda e: -e.self_cpu_time_total)
    return [
        {
            "op": e.key,
            "self_ms": round(e.self_cpu_time_total / 1e3, 1),
            "share": round(e.self_cpu_time_total / total, 3),
            "calls": e.count,
        }
        for e in events[:top]
    ]


def measure(args: Any) -> dict[str, Any]:
    import torch

    from conflictscore_local.util.devices import native_cpu_bf16
    from conflictscore_local.util.extras import requires

    data = data_dir(args.data_dir)
    items = rag_job(ramdocs_questions(data), args.rag)
    engine = Engine(RunConfig.from_mapping({"cache": {"enabled": False}}), pruner="none")
    pairs = [p for group in candidate_groups(engine, items) for p in group]
    native, why = native_cpu_bf16()
    try:
        requires("onnxruntime", "the int8 ONNX variant")
        have_onnx = True
    except Exception:
        have_onnx = False
    try:
        requires("openvino", "the OpenVINO variants")
        have_openvino = have_onnx  # it compiles the ONNX runtime's export
    except Exception:
        have_openvino = False
    cfg: Any = None
    gflop = 0.0
    ref_rows: list[Any] = []
    rows: dict[str, Any] = {}
    ref_labels: list[str] | None = None
    profiles: dict[str, list[dict[str, Any]]] = {}
    feats: list[Any] = []
    for key, v in variants(native, have_onnx, have_openvino).items():
        judge = registry.build("judge", "nli", v["args"])
        if not feats:
            feats, _ = judge.encode([p.passage.text for p in pairs], [p.claim.text for p in pairs])
            cfg = judge.classifier().config
            gflop = sum(sequence_flops(cfg, len(f["input_ids"])) for f in feats) / 1e9
        if v.get("quantize"):
            quantize_dynamic(judge)
        if v.get("attention"):
            eager_attention(judge)
        if v.get("compile_mode"):
            compile_with(judge, v["compile_mode"])
        rt = judge.runtime()
        labels_of = judge.labels()
        thresholds = judge.thresholds()
        t0 = time.perf_counter()
        rt.classify(feats)  # warm-up: loading, compiling, first allocations
        warm = time.perf_counter() - t0
        secs, out = timed(lambda: rt.classify(feats), args.repeats)
        labels = [decide({labels_of[k]: p for k, p in enumerate(row)}, thresholds) for row in out]
        if ref_labels is None:
            ref_labels, ref_rows = labels, out
        shift = max(abs(a - b) for r, q in zip(out, ref_rows) for a, b in zip(r, q))
        rows[key] = {
            "judge": {k: v["args"][k] for k in ("runtime", "dtype", "max_batch_tokens")}
            | ({"quantize": "torch.ao dynamic int8"} if v.get("quantize") else {})
            | ({"int8": True} if v["args"].get("int8") else {})
            | ({"attention": v["attention"]} if v.get("attention") else {})
            | ({"compile_mode": v["compile_mode"]} if v.get("compile_mode") else {}),
            "peak_dtype": v["peak"],
            "seconds": round(secs, 3),
            "load_and_warm_s": round(warm, 1),
            "gflops": round(gflop / secs, 1),
            "labels_differ": sum(a != b for a, b in zip(labels, ref_labels)),
            "max_prob_shift": float(f"{shift:.3g}"),
        }
        print(
            f"{key}: {secs:.2f} s, {gflop / secs:.0f} GFLOP/s, labels differ "
            f"{rows[key]['labels_differ']}/{len(labels)}",
            file=sys.stderr,
            flush=True,
        )
        if key in PROFILED:
            profiles[key] = profile_table(lambda: rt.classify(feats))
    hidden, inner = int(cfg["hidden_size"]), int(cfg.get("intermediate_size") or 4 * cfg["hidden_size"])
    dtypes = sorted({v["peak_dtype"] for v in rows.values()})
    peaks = {d: {str(n): matmul_peak(d, n, hidden, inner) for n in PEAK_TOKENS} for d in dtypes}
    for r in rows.values():
        best = max(peaks[r["peak_dtype"]].values())
        r["share_of_peak"] = round(r["gflops"] / best, 3)
    lengths = [len(f["input_ids"]) for f in feats]
    linear = {k: linear_layers(p, cfg, lengths, peaks[rows[k]["peak_dtype"]]) for k, p in profiles.items()}
    parts, bounds = {}, {}
    for k in profiles:
        r = rows[k]
        shapes = batch_shapes(lengths, 256, r["judge"]["max_batch_tokens"])
        parts[k] = parts_alone(cfg, shapes, r["peak_dtype"], args.repeats)
        bounds[k] = bound(gflop, parts[k], max(peaks[r["peak_dtype"]].values()), r["seconds"])
        print(f"{k}: parts alone {parts[k]}, bound {bounds[k]}", file=sys.stderr, flush=True)
    return {
        "native_bf16": native,
        "native_bf16_reason": why,
        "torch_threads": torch.get_num_threads(),
        "inputs": len(feats),
        "tokens": {
            "total": sum(lengths),
            "min": min(lengths),
            "max": max(lengths),
            "mean": round(sum(lengths) / len(lengths), 1),
        },
        "matmul_shape": f"N x {hidden} @ {hidden} x {inner}",
        "peak_gflops": peaks,
        "variants": rows,
        "profiles": profiles,
        "linear_layers": linear,
        "parts_alone": parts,
        "bounds": bounds,
        "op_shares": {k: op_shares(p) for k, p in profiles.items()},
    }


def op_shares(profile: list[dict[str, Any]]) -> dict[str, float]:
    """The profiled time's shares: the linear layers (``aten::addmm``), attention (the fused kernel,
    or the plain matmul / softmax path) and everything else."""
    linear = sum(p["share"] for p in profile if p["op"] == "aten::addmm")
    attention = sum(
        p["share"]
        for p in profile
        if "scaled_dot_product" in p["op"] or p["op"] in ("aten::bmm", "aten::_softmax", "aten::baddbmm")
    )
    return {"linear": round(linear, 3), "attention": round(attention, 3), "other": round(1 - linear - attention, 3)}


def linear_layers(
    profile: list[dict[str, Any]], cfg: Any, lengths: list[int], peak: dict[str, float]
) -> dict[str, Any]:
    """The profiled run's linear layers alone: their FLOPs on the padded tokens of its batches (the
    default budget, 2,048 tokens) over ``aten::addmm``'s self time, against the dtype's best peak."""
    from conflictscore_local.util.flops import flops_per_token

    padded = token_counts(lengths, cfg, in_order=False, batch_size=256, max_tokens=2048)["padded_tokens"]
    addmm = next((p for p in profile if p["op"] == "aten::addmm"), None)
    if addmm is None:
        return {}
    gflop = flops_per_token(cfg) * padded / 1e9
    rate = gflop / (addmm["self_ms"] / 1e3)
    return {
        "padded_tokens": padded,
        "gflop": round(gflop, 1),
        "addmm_s": round(addmm["self_ms"] / 1e3, 3),
        "gflops": round(rate, 1),
        "share_of_peak": round(rate / max(peak.values()), 3),
    }


def markdown(data: dict[str, Any]) -> str:
    meta = data["meta"]
    lines = [
        "# The judge's forward against the matmul peak, per dtype",
        "",
        *header(meta, extra=f"; CPU flags: {meta['cpu_flags']}; torch threads {data['torch_threads']}"),
        f"{data['inputs']} real inputs (RAMDocs questions against their own documents, split and encoded as the "
        f"judge does): {data['tokens']['total']} tokens, {data['tokens']['min']}–{data['tokens']['max']} a sequence "
        f"(mean {data['tokens']['mean']}). Native bf16: {data['native_bf16']} ({data['native_bf16_reason']}). "
        f"`uptime` before: `{data['uptime_before']}`.",
        "",
        f"Measured matmul peak ({data['matmul_shape']}, GFLOP/s; GOP/s for int8):",
        "",
        "| dtype | " + " | ".join(f"N={n}" for n in PEAK_TOKENS) + " |",
        "|---|" + "---|" * len(PEAK_TOKENS),
    ]
    for d, by_n in data["peak_gflops"].items():
        lines.append(f"| {d} | " + " | ".join(str(by_n[str(n)]) for n in PEAK_TOKENS) + " |")
    lines += [
        "",
        "Every variant with `scaled_dot_product_attention` (transformers' default) but the `eager-attention` "
        "ones; labels by the judge's calibrated rule, against `fp32-torch`'s.",
        "",
        "| variant | runtime | dtype | token budget | seconds | GFLOP/s | share of its dtype's best peak | "
        "labels ≠ fp32 | max prob. shift | load + warm-up s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, r in data["variants"].items():
        j = r["judge"]
        dtype = (
            "int8 (" + ("torch.ao dynamic" if j.get("quantize") else "ONNX Runtime") + ")"
            if r["peak_dtype"] == "int8"
            else j["dtype"]
        )
        lines.append(
            f"| {key} | {j['runtime']} | {dtype} | {j['max_batch_tokens']} | {r['seconds']} | {r['gflops']} | "
            f"**{r['share_of_peak']}** | {r['labels_differ']} / {data['inputs']} | {r['max_prob_shift']} | "
            f"{r['load_and_warm_s']} |"
        )
    for key, profile in data["profiles"].items():
        lines += [
            "",
            f"Where the time of `{key}` goes (torch.profiler, self CPU time):",
            "",
            "| operator | self ms | share | calls |",
            "|---|---|---|---|",
        ]
        lines += [f"| `{p['op']}` | {p['self_ms']} | {p['share']} | {p['calls']} |" for p in profile]
        lin = data["linear_layers"].get(key) or {}
        if lin:
            lines += [
                "",
                f"The linear layers alone (`aten::addmm`, under the profiler): {lin['gflop']} GFLOP on "
                f"{lin['padded_tokens']} padded tokens in {lin['addmm_s']} s = {lin['gflops']} GFLOP/s, "
                f"**{lin['share_of_peak']}** of the best {data['variants'][key]['peak_dtype']} peak; the attention "
                "kernel and the element-wise operators (GELU, layer norm, residual adds, copies) take the rest of "
                "the time for a few percent of the FLOPs.",
            ]
    if data.get("parts_alone"):
        lines += [
            "",
            "## What the parts allow",
            "",
            "Each part of the forward timed alone on random tensors of the real batches' shapes (the judge's sizes, "
            "a weight set per layer), seconds; then the share of the dtype's best peak the forward would reach "
            "were everything but the linear layers free, were only the attention kernel added, and with every "
            "part at its time alone (the faster linear kernel counted):",
            "",
            "| variant | linear (`F.linear`) | linear (oneDNN, prepacked) | attention (SDPA) | element-wise | "
            "parts ÷ forward | share: linear only | + attention | all parts | the forward |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for key, parts in data["parts_alone"].items():
            b = data["bounds"][key]
            lines.append(
                f"| {key} | {parts['linear']} | {parts.get('linear_prepacked', '-')} | {parts['attention']} | "
                f"{parts['elementwise']} | {b['parts_over_forward']} | {b['linear_only']} | "
                f"**{b['with_attention']}** | {b['all_parts']} | {data['variants'][key]['share_of_peak']} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = base_parser(__doc__, "forward_peak")
    parser.add_argument("--rag", type=int, default=40, metavar="N", help="RAMDocs questions (default 40)")
    parser.add_argument(
        "--repeats", type=int, default=2, metavar="N", help="timed passes per variant, best kept (default 2)"
    )
    args = parser.parse_args()
    started, load = time.perf_counter(), os.getloadavg()
    before = uptime()
    data = measure(args)
    data["uptime_before"] = before
    data["meta"] = run_meta(__file__, None, started, load)
    print(write_recorded(Path(args.out), data, markdown))


if __name__ == "__main__":
    main()
