"""The ``nli`` judge's engine runtimes: its cross-encoder's forward pass in vLLM.

``--judge nli --judge-arg runtime=vllm`` runs it in this process (``vllm.LLM(runner=
"pooling")`` and ``LLM.classify``); ``runtime=serve`` sends it to ``vllm serve``'s
``/classify`` endpoint. Everything else is the ``nli`` judge's: the same (passage, claim)
inputs encoded with the checkpoint's own tokenizer pair template and truncation (so the token
ids vLLM receives are exactly those the ``torch`` runtime feeds transformers), the same
``config.id2label`` mapping by name, the same calibrated thresholds from ``conflictscore.json``;
only the forward pass runs elsewhere, and the judge spec names that runtime. Where it runs is
configured with the judge's ``runtime_args`` (:data:`VLLM_RUNTIME_ARGS`, :data:`SERVE_RUNTIME_ARGS`).

Formats (vLLM 0.11 – 0.33; ``runner="pooling"`` replaced ``task="classify"`` in 0.10.2; run
against vLLM 0.32.0 by ``tests/vllm``):

- in-process: ``LLM.classify([{"prompt_token_ids": ids}, ...], pooling_params=[...])`` returns
  ``ClassificationRequestOutput``s whose ``outputs.probs`` are the softmaxed class
  probabilities. Segment ids (BERT-style cross-encoders, the default judge) travel as
  ``PoolingParams(extra_kwargs={"compressed_token_type_ids": k})``, ``k`` the index of the
  first segment-1 token: how vLLM's own cross-encoder scoring passes them
  (``vllm/entrypoints/pooling/score``, ``compress_token_type_ids``).
- served: ``POST /classify`` (at the server root, not under ``/v1``) with
  ``{"model": NAME, "input": [[ids...], ...]}``; the reply is ``{"id", "object": "list",
  "created", "model", "data": [{"index", "label", "probs", "num_classes"}], "usage"}``
  (``vllm/entrypoints/pooling/classify/protocol.py``: ``ClassificationCompletionRequest``,
  ``ClassificationResponse``). The endpoint takes no segment ids, so a checkpoint whose
  inputs need them is refused rather than judged with the claim's segment id wrong.
"""

from __future__ import annotations

import dataclasses
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Mapping, Sequence

from ....backends import registry
from ....backends.packed import plain_folder
from ....core.errors import ConfigError
from ....generate.openai import OpenAIGenerator, RequestFailed
from ....generate.vllm import VLLMGenerator, import_vllm, keyed_engine_args, shutdown_engine
from .base import Classifier, DoneFn, Features, Row, RuntimeBase, pair_boundary

VLLM_RUNTIME_ARGS: tuple[str, ...] = (
    "tensor_parallel_size",
    "max_model_len",
    "gpu_memory_utilization",
    "seed",
    "engine_args",
    "chunk_size",
)
"""``runtime_args`` of ``runtime=vllm``: the ``vllm`` generator's engine arguments (``engine_args``
go to ``vllm.LLM`` as they are) and ``chunk_size``, inputs per ``LLM.classify`` call (default
8192). The model is the judge's checkpoint and the dtype its ``dtype`` (``auto``: float32 on a
CPU, bf16 on a GPU that has it, as the ``torch`` runtime)."""


SERVE_RUNTIME_ARGS: tuple[str, ...] = (
    "base_url",
    "model",
    "api_key_env",
    "max_concurrency",
    "timeout_s",
    "max_retries",
    "backoff_s",
    "max_backoff_s",
    "batch_size",
)
"""``runtime_args`` of ``runtime=serve``: where the server is (``base_url``, the OpenAI one, ending
in ``/v1``), the name it serves the classifier under (``model``; default: the one it lists), the
``openai`` generator's pacing, and ``batch_size``, inputs per ``/classify`` request (default 32).
The judge's ``model`` is a local copy of the served checkpoint (its tokenizer, labels, calibration)."""


_DEFAULT_CHUNK = 8192
_DEFAULT_REQUEST_BATCH = 32


def _split(runtime: str, args: Mapping[str, Any], model: str) -> tuple[Any, int]:
    """The generator config ``runtime_args`` make (checked), and the per-call input count."""
    args = dict(args)
    if runtime == "vllm":
        chunk = args.pop("chunk_size", _DEFAULT_CHUNK)
        cfg = registry.config_for("generator", "vllm", {"model": model, **args}, where="runtime_args")
    else:
        chunk = args.pop("batch_size", _DEFAULT_REQUEST_BATCH)
        cfg = registry.config_for("generator", "openai", args, where="runtime_args")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        key = "chunk_size" if runtime == "vllm" else "batch_size"
        raise ConfigError(f"judge nli: runtime_args {key} must be a whole number >= 1, got {chunk!r}")
    return cfg, chunk


def _vllm_dtype(classifier: Classifier) -> tuple[str, str]:
    """The dtype vLLM runs the classifier in: the judge's ``dtype`` resolved as the ``torch``
    runtime resolves it (``auto``: float32 on every CPU, bf16 on a GPU that has it)."""
    from ....util.devices import resolve_dtype, torch_device

    dtype, why = resolve_dtype(classifier.dtype, torch_device(classifier.device))
    return str(dtype).removeprefix("torch."), why


class _EngineRuntime(RuntimeBase):
    """What both engine runtimes declare: ``auto`` never picks them (``runtime_args`` say where they run), and
    their ``runtime_args`` are checked as the generator they are built on checks its arguments."""

    auto = "never"

    @classmethod
    def check_args(cls, args: Mapping[str, Any]) -> None:
        super().check_args(args)
        _split(cls.name, args, "x")  # the generator's own checks (types, ranges)


class VLLMClassifyRuntime(_EngineRuntime):
    """``vllm.LLM(runner="pooling").classify`` in this process, ``chunk_size`` inputs per call, built
    from the judge's ``runtime_args`` (:data:`VLLM_RUNTIME_ARGS`; loads nothing yet).

    ``keyed_args``: the engine arguments that change outputs (quantization, ``hf_overrides``, ...),
    keyed in the spec as the ``vllm`` judge keys them.
    """

    name = "vllm"
    runtime_args = VLLM_RUNTIME_ARGS

    def __init__(self, classifier: Classifier):
        # vLLM reads the folder itself: a packed checkpoint goes as its plain copy (same weights, float32)
        cfg, chunk = _split(self.name, classifier.runtime_args, str(plain_folder(classifier.path)))
        dtype, why = _vllm_dtype(classifier)
        cfg = dataclasses.replace(cfg, dtype=dtype, revision=None)  # the path is resolved; dtype is the judge's
        classifier.record(dtype=dtype, dtype_reason=why)
        self.classifier, self.chunk_size = classifier, chunk
        self.generator: VLLMGenerator = registry.build("generator", "vllm", cfg)
        self.keyed_args = dict(keyed_engine_args(cfg.engine_args) or {})
        self._llm: Any = None

    def spec(self) -> dict[str, Any]:
        """Name, dtype and the keyed engine arguments; ``ConfigError`` first when ``max_model_len``
        is shorter than the judge's ``max_length`` (a pair that fits the judge would not fit vLLM)."""
        window = self.generator.config.max_model_len
        need = self.classifier.max_length
        if window is not None and need is not None and window < need:
            raise ConfigError(
                f"judge nli: runtime=vllm: max_model_len {window} is shorter than the judge's max_length {need} "
                f"(inputs of up to {need} tokens); raise runtime_args max_model_len to {need} or more, "
                "or lower max_length"
            )
        return {"runtime": self.name, "dtype": self.generator.config.dtype, "engine_args": self.keyed_args}

    def engine_kwargs(self) -> dict[str, Any]:
        """The generator's engine arguments with the pooling runner. Prefix caching is left to
        vLLM: a bidirectional encoder's inputs cannot share a cached prefix."""
        kw = self.generator.engine_kwargs()
        kw.pop("enable_prefix_caching", None)
        return {**kw, "runner": "pooling"}

    def llm(self) -> Any:
        if self._llm is None:
            kw = self.engine_kwargs()
            self._llm = self.generator.start_engine(kw, what="judge nli: runtime=vllm")
            vllm = import_vllm()
            self.classifier.record(engine_args=kw, vllm=getattr(vllm, "__version__", "unknown"))
            check_engine_labels(self._llm, self.classifier)
        return self._llm

    def close(self) -> None:
        """Stop the engine's processes, if one was started."""
        if self._llm is not None:
            shutdown_engine(self._llm)
            self._llm = None

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        vllm = import_vllm()
        llm = self.llm()
        plain = vllm.PoolingParams()
        rows: list[Row] = []
        for start in range(0, len(feats), self.chunk_size):
            chunk = feats[start : start + self.chunk_size]
            params = []
            for f in chunk:
                boundary = pair_boundary(f)
                params.append(
                    plain
                    if boundary is None
                    else vllm.PoolingParams(extra_kwargs={"compressed_token_type_ids": boundary})
                )
            outs = llm.classify(
                [{"prompt_token_ids": list(f["input_ids"])} for f in chunk], pooling_params=params, use_tqdm=False
            )
            if len(outs) != len(chunk):
                raise RuntimeError(f"vLLM returned {len(outs)} classifications for {len(chunk)} inputs")
            rows.extend([float(p) for p in o.outputs.probs] for o in outs)
            self.classifier.count("engine_calls")
            if on_done is not None:
                on_done(range(start, start + len(chunk)))
        return rows


def check_engine_labels(llm: Any, classifier: Classifier) -> None:
    """``ConfigError`` when the engine's model has another class count than the mapped labels
    (vLLM's model config says, where it can be read)."""
    try:
        hf = llm.llm_engine.model_config.hf_config
    except AttributeError:
        return
    n = getattr(hf, "num_labels", None)
    if isinstance(n, int) and n != len(classifier.labels):
        raise ConfigError(
            f"judge nli: {classifier.path} has {n} output classes but {len(classifier.labels)} labels are mapped"
        )


class ServeClassifyRuntime(_EngineRuntime):
    """``vllm serve``'s ``/classify``: ``batch_size`` inputs per request, ``max_concurrency`` in flight,
    built from the judge's ``runtime_args`` (:data:`SERVE_RUNTIME_ARGS`; connects nowhere yet)."""

    name = "serve"
    runtime_args = SERVE_RUNTIME_ARGS

    def __init__(self, classifier: Classifier):
        cfg, batch_size = _split(self.name, classifier.runtime_args, str(classifier.path))
        self.classifier, self.batch_size = classifier, batch_size
        self.api: OpenAIGenerator = registry.build("generator", "openai", cfg)
        cfg = self.api.config
        self.root = cfg.base_url.rstrip("/").removesuffix("/v1")
        self.endpoint = registry.build("generator", "openai", dataclasses.replace(cfg, base_url=self.root))
        self._checked = False

    def spec(self) -> dict[str, Any]:
        self.check_segments()
        return {
            "runtime": self.name,
            "dtype": None,
            "served_model": self.api.model_name(),
            "classify_url": self.root + "/classify",
        }

    def check_segments(self) -> None:
        """``ConfigError`` when the checkpoint's inputs carry segment ids its model reads: the
        endpoint cannot take them, and the claim would be read as part of the passage."""
        if self._checked:
            return
        config = self.classifier.config
        one = self.classifier.tokenizer()("passage", "claim")
        if (config.get("type_vocab_size") or 0) > 1 and pair_boundary(dict(one)) is not None:
            raise ConfigError(
                f"judge nli: runtime=serve cannot serve {self.classifier.path}: its inputs carry segment ids "
                f"(token_type_ids, type_vocab_size {config['type_vocab_size']}) and vLLM's /classify endpoint takes "
                "none, so the claim would be read as segment 0; use runtime=vllm (in-process vLLM passes them), "
                "runtime=torch, or a checkpoint without segment ids (DeBERTa-v3, RoBERTa)"
            )
        self._checked = True

    def _request(self, inputs: list[list[int]]) -> list[Row]:
        body = {"model": self.api.model_name(), "input": inputs}
        try:
            reply = self.endpoint.request("/classify", body)
        except RequestFailed as e:
            return [f"no answer from {self.root}/classify: {e}"] * len(inputs)
        try:
            data = sorted(reply["data"], key=lambda d: d["index"])
            probs: list[Sequence[float] | str] = [[float(p) for p in d["probs"]] for d in data]
        except (KeyError, TypeError, ValueError) as e:
            return [f"malformed /classify reply (missing or bad {e}): {str(reply)[:200]}"] * len(inputs)
        if len(probs) != len(inputs) or [d["index"] for d in data] != list(range(len(inputs))):
            return [f"/classify answered {len(probs)} of {len(inputs)} inputs"] * len(inputs)
        return probs

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        self.check_segments()
        starts = list(range(0, len(feats), self.batch_size))
        rows: list[Row] = [()] * len(feats)
        workers = min(self.api.config.max_concurrency, len(starts)) or 1
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="classify") as pool:
            futures = {
                pool.submit(self._request, [list(f["input_ids"]) for f in feats[s : s + self.batch_size]]): s
                for s in starts
            }
            try:
                for fut in as_completed(futures):
                    s = futures[fut]
                    got = fut.result()
                    rows[s : s + len(got)] = got
                    self.classifier.count("requests")
                    if on_done is not None:
                        on_done(range(s, s + len(got)))
            except BaseException:
                pool.shutdown(cancel_futures=True)
                raise
        return rows
