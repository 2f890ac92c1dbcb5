"""Classify mode: a sequence-classification checkpoint (an NLI cross-encoder) served by vLLM.

``--judge vllm --judge-arg mode=classify`` runs it in this process (``vllm.LLM(runner=
"pooling")`` and ``LLM.classify``); ``--judge openai --judge-arg mode=classify`` sends it to
``vllm serve``'s ``/classify`` endpoint. Everything else is the ``nli`` judge's: the same
(passage, claim) inputs encoded with the checkpoint's own tokenizer pair template and
truncation (so the token ids vLLM receives are exactly those the ``nli`` judge feeds
transformers), the same ``config.id2label`` mapping by name, the same calibrated thresholds
from ``conflictscore.json``; only the forward pass runs elsewhere (a runtime, see
:mod:`.runtime`), and the judge spec names that runtime.

Formats (vLLM 0.11 – 0.33; ``runner="pooling"`` replaced ``task="classify"`` in 0.10.2):

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

from ..backends import registry
from ..backends.arguments import argument_defaults, argument_values
from ..core.errors import ConfigError
from ..generate.openai import OpenAIGenerator, RequestFailed
from ..generate.vllm import VLLMGenerator, import_vllm
from ..core.types import Judgment, Pair
from ._base import ProgressFn
from .runtime import Classifier, DoneFn, Features, Row, pair_boundary

MODES: tuple[str, ...] = ("generate", "classify")
NLI_ARGS: tuple[str, ...] = (
    "revision", "max_length", "negative_label", "id2label", "thresholds", "calibration", "claim_room",
)


def check_mode_args(cfg: Any, *, name: str, generate_only: Sequence[str], classify_only: Sequence[str]) -> None:
    """``ValueError`` when an argument of the other mode is set (differs from its default)."""
    defaults, values = argument_defaults(type(cfg)), argument_values(cfg)
    wrong = classify_only if cfg.mode == "generate" else generate_only
    bad = [k for k in wrong if values[k] != defaults[k]]
    if bad:
        other = "classify" if cfg.mode == "generate" else "generate"
        raise ValueError(f"{', '.join(bad)} only appl{'ies' if len(bad) == 1 else 'y'} with mode={other} "
                         f"(judge {name} is in mode={cfg.mode})")


class ClassifyMode:
    """What the ``vllm`` and ``openai`` judges do in classify mode: delegate to an ``nli`` judge
    over the same checkpoint whose forward pass is the given runtime. Listed before the LLM
    judge base, so ``judge``/``spec``/``describe``/``stats`` fall through to it in other modes."""

    name: str
    config: Any
    resolved: dict[str, Any]

    def classifier_model(self) -> str:
        """The local checkpoint (directory or cached hub id) whose tokenizer and labels are used."""
        raise NotImplementedError

    def classify_runtime(self, classifier: Classifier) -> Any:
        """The runtime that runs the forward pass of ``classifier`` (the ``nli`` judge's checkpoint)."""
        raise NotImplementedError

    def nli_judge(self) -> Any:
        """The ``nli`` judge that encodes pairs and reads labels for this mode (built once, through
        the registry, with :meth:`classify_runtime` as its forward pass)."""
        if getattr(self, "_nli", None) is None:
            values = argument_values(self.config)
            args = {k: values[k] for k in NLI_ARGS if values.get(k) is not None}
            nli = registry.build("judge", "nli", {"model": self.classifier_model(), **args})
            nli.use_runtime(self.classify_runtime)
            self._nli = nli
        return self._nli

    def classify_spec(self) -> Mapping[str, Any]:
        return {**self.nli_judge().spec(), "backend": self.name, "mode": "classify"}

    def classify_judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None) -> list[Judgment]:
        return self.nli_judge().judge(pairs, on_progress)

    def classify_describe(self, out: dict[str, Any]) -> dict[str, Any]:
        out["resolved"] = {**out.get("resolved", {}), **self.nli_judge().resolved}
        return out

    def classify_stats(self, out: dict[str, Any]) -> dict[str, Any]:
        return {**out, **self.nli_judge().stats()}

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]:
        if self.config.mode == "classify":
            return self.classify_judge(pairs, on_progress)
        return super().judge(pairs, on_progress)  # type: ignore[misc]

    def spec(self) -> Mapping[str, Any]:
        return self.classify_spec() if self.config.mode == "classify" else super().spec()  # type: ignore[misc]

    def describe(self) -> dict[str, Any]:
        out = super().describe()  # type: ignore[misc]
        return self.classify_describe(out) if self.config.mode == "classify" else out

    def stats(self) -> dict[str, Any]:
        out = super().stats()  # type: ignore[misc]
        return self.classify_stats(out) if self.config.mode == "classify" else out


class VLLMClassifyRuntime:
    """``vllm.LLM(runner="pooling").classify`` in this process, ``chunk_size`` inputs per call.

    ``keyed_args``: the engine arguments that change outputs (quantization, ``hf_overrides``, ...),
    keyed in the spec as the ``vllm`` judge keys them in generate mode.
    """

    name = "vllm"

    def __init__(self, classifier: Classifier, generator: VLLMGenerator, chunk_size: int,
                 keyed_args: Mapping[str, Any] | None = None):
        self.classifier, self.generator, self.chunk_size = classifier, generator, chunk_size
        self.keyed_args = dict(keyed_args or {})
        self._llm: Any = None

    def spec(self) -> dict[str, Any]:
        return {"runtime": self.name, "dtype": self.generator.config.dtype, "engine_args": self.keyed_args}

    def engine_kwargs(self) -> dict[str, Any]:
        """The generator's engine arguments with the pooling runner. Prefix caching is left to
        vLLM: a bidirectional encoder's inputs cannot share a cached prefix."""
        kw = self.generator.engine_kwargs()
        kw.pop("enable_prefix_caching", None)
        return {**kw, "runner": "pooling"}

    def llm(self) -> Any:
        if self._llm is None:
            vllm = import_vllm()
            kw = self.engine_kwargs()
            self._llm = vllm.LLM(**kw)
            self.classifier.record(engine_args=kw, vllm=getattr(vllm, "__version__", "unknown"))
        return self._llm

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        vllm = import_vllm()
        llm = self.llm()
        plain = vllm.PoolingParams()
        rows: list[Row] = []
        for start in range(0, len(feats), self.chunk_size):
            chunk = feats[start:start + self.chunk_size]
            params = []
            for f in chunk:
                boundary = pair_boundary(f)
                params.append(plain if boundary is None else
                              vllm.PoolingParams(extra_kwargs={"compressed_token_type_ids": boundary}))
            outs = llm.classify([{"prompt_token_ids": list(f["input_ids"])} for f in chunk],
                                pooling_params=params, use_tqdm=False)
            if len(outs) != len(chunk):
                raise RuntimeError(f"vLLM returned {len(outs)} classifications for {len(chunk)} inputs")
            rows.extend(list(o.outputs.probs) for o in outs)
            self.classifier.count("engine_calls")
            if on_done is not None:
                on_done(range(start, start + len(chunk)))
        return rows


class ServeClassifyRuntime:
    """``vllm serve``'s ``/classify``: ``batch_size`` inputs per request, ``max_concurrency`` in flight."""

    name = "vllm-serve"

    def __init__(self, classifier: Classifier, api: OpenAIGenerator, batch_size: int):
        self.classifier, self.api, self.batch_size = classifier, api, batch_size
        cfg = api.config
        self.root = cfg.base_url.rstrip("/").removesuffix("/v1")
        self.endpoint = registry.build("generator", "openai", dataclasses.replace(cfg, base_url=self.root))
        self._checked = False

    def spec(self) -> dict[str, Any]:
        self.check_segments()
        return {"runtime": self.name, "dtype": None, "served_model": self.api.model_name(),
                "classify_url": self.root + "/classify"}

    def check_segments(self) -> None:
        """``ConfigError`` when the checkpoint's inputs carry segment ids its model reads: the
        endpoint cannot take them, and the claim would be read as part of the passage."""
        if self._checked:
            return
        config = self.classifier.config
        one = self.classifier.tokenizer()("passage", "claim")
        if (config.get("type_vocab_size") or 0) > 1 and pair_boundary(dict(one)) is not None:
            raise ConfigError(
                f"judge openai: mode=classify cannot serve {self.classifier.path}: its inputs carry segment ids "
                f"(token_type_ids, type_vocab_size {config['type_vocab_size']}) and vLLM's /classify endpoint takes "
                "none, so the claim would be read as segment 0; use the vllm judge with mode=classify (in-process "
                "vLLM passes them), the nli judge, or a checkpoint without segment ids (DeBERTa-v3, RoBERTa)"
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
            probs = [[float(p) for p in d["probs"]] for d in data]
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
                pool.submit(self._request, [list(f["input_ids"]) for f in feats[s:s + self.batch_size]]): s
                for s in starts
            }
            try:
                for fut in as_completed(futures):
                    s = futures[fut]
                    got = fut.result()
                    rows[s:s + len(got)] = got
                    self.classifier.count("requests")
                    if on_done is not None:
                        on_done(range(s, s + len(got)))
            except BaseException:
                pool.shutdown(cancel_futures=True)
                raise
        return rows
