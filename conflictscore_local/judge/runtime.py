"""Where a sequence classifier's forward pass runs: the runtimes behind the ``nli`` judge.

The ``nli`` judge turns (passage, claim) pairs into token ids with the checkpoint's own
tokenizer (truncating the passage to fit), and class probabilities back into labels
through ``config.id2label`` and the calibrated thresholds. Between the two sits a runtime:
token ids in, one row of class probabilities (in class-index order) per input out.

- ``torch``: transformers + PyTorch in this process (CPU or GPU);
- ``native``: the same forward of a BERT checkpoint in PyTorch without transformers, which starts
  sooner (:mod:`.native`);
- ``compile``: the same under ``torch.compile`` (:class:`CompiledTorchRuntime`; for long runs);
- ``onnx``: the checkpoint exported to ONNX once and run by ONNX Runtime on the CPU
  (:mod:`.onnx_runtime`; the ``onnx`` extra);
- ``openvino``: that ONNX export compiled by OpenVINO for the CPU, float32 or native bfloat16
  (:mod:`.openvino_runtime`; the ``openvino`` extra);
- ``vllm``: ``vllm.LLM(runner="pooling").classify`` in this process (:mod:`.classify`);
- ``serve``: ``vllm serve``'s ``/classify`` endpoint (:mod:`.classify`).

A runtime is handed a :class:`Classifier`, what it may use of the judge (the checkpoint, its
tokenizer, its labels, the batch limits, a counter), never the judge itself; the ``nli``
judge's factory (:func:`conflictscore_local.judge.nli.local_runtime`) picks the local one.
A runtime's ``spec()`` names it (and its precision) in the judge spec, so a label in the
judgment cache says which runtime produced it. An input a runtime could not classify (a
server that never answered) comes back as the reason, a string: the judgment is unscored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from ..util.devices import resolve_dtype, torch_device
from ..core.errors import BackendUnavailable, ConfigError

Features = Mapping[str, list[int]]
"""One encoded input: ``input_ids`` (+ ``token_type_ids``, ``attention_mask``)."""
Row = Sequence[float] | str
"""Class probabilities in class-index order, or why there are none."""
DoneFn = Callable[[Sequence[int]], None]
"""Called with the indices of the inputs a runtime has just finished."""

RUNTIME_ENV = "CONFLICTSCORE_NLI_RUNTIME"
LOCAL_RUNTIMES: tuple[str, ...] = ("torch", "compile", "onnx", "native", "openvino")


def _no_count(key: str, n: int = 1) -> None:
    pass


def _no_record(**found: Any) -> None:
    pass


@dataclass(frozen=True)
class Classifier:
    """What a runtime may use of the ``nli`` judge, handed over by the judge.

    ``path`` / ``revision``: the checkpoint; ``labels``: class index → label (the model's class
    count is checked against it); ``tokenizer()``: its tokenizer, loaded on first call;
    ``config``: its ``config.json``; ``device``, ``dtype``, ``batch_size``, ``max_batch_tokens``:
    the judge's arguments; ``int8`` and ``export_dir`` (None: the default) for the ONNX runtime;
    ``count(key, n)`` adds to the judge's counters and ``record(**found)`` to what it resolved
    (both go into the summary). ``runtime_args``: the judge's arguments of the ``vllm`` and
    ``serve`` runtimes; ``max_length``: the longest input the judge sends.
    """

    path: Path
    labels: Mapping[int, str]
    tokenizer: Callable[[], Any]
    revision: str | None = None
    config: Mapping[str, Any] = field(default_factory=dict)
    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 64
    max_batch_tokens: int | None = None
    int8: bool = False
    export_dir: Path | None = None
    count: Callable[..., None] = _no_count
    record: Callable[..., None] = _no_record
    runtime_args: Mapping[str, Any] = field(default_factory=dict)
    max_length: int | None = None


class ClassifierRuntime(Protocol):
    """Runs the classifier: encoded inputs in, class probabilities out (input order kept)."""

    name: str

    def spec(self) -> dict[str, Any]:
        """What this runtime changes about the labels (its name, precision): part of the judge spec."""
        ...

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]: ...


def resolve_runtime(runtime: str, device: str, dtype: str = "auto") -> str:
    """The local runtime ``auto`` stands for without measuring: ``$CONFLICTSCORE_NLI_RUNTIME`` when
    set, else PyTorch. The ``nli`` judge measures instead on a CPU at float32 (its ``runtime_name``,
    :mod:`.calibrate`: the fastest runtime at PyTorch's labels on a probe set, stored per machine).
    ``device`` and ``dtype`` are kept for the callers' sake."""
    if runtime != "auto":
        return runtime
    env = os.environ.get(RUNTIME_ENV)
    if env:
        if env not in LOCAL_RUNTIMES:
            raise ConfigError(f"${RUNTIME_ENV}={env!r} is not allowed; allowed: {', '.join(LOCAL_RUNTIMES)}")
        return env
    return "torch"


def token_batches(order: Sequence[int], lengths: Sequence[int], max_pairs: int, max_tokens: int) -> Iterator[list[int]]:
    """Consecutive batches of ``order`` (sorted longest first, ``lengths`` aligned with it) of at
    most ``max_pairs`` items and ``max_tokens`` padded tokens; one item always makes a batch."""
    start = 0
    while start < len(order):
        n = max(1, min(max_pairs, max_tokens // max(lengths[start], 1), len(order) - start))
        yield list(order[start:start + n])
        start += n


def run_batched(
    feats: Sequence[Features],
    forward: Callable[[list[Features]], Sequence[Sequence[float]]],
    *,
    max_pairs: int,
    max_tokens: int,
    on_done: DoneFn | None = None,
) -> list[Row]:
    """``forward`` over length-sorted batches of at most ``max_pairs`` inputs and ``max_tokens``
    padded tokens (what keeps a CPU fast: short inputs go in large batches, long ones in small)."""
    order = sorted(range(len(feats)), key=lambda i: -len(feats[i]["input_ids"]))
    lengths = [len(feats[i]["input_ids"]) for i in order]
    rows: list[Row] = [()] * len(feats)
    try:
        for idx in token_batches(order, lengths, max_pairs, max_tokens):
            for i, row in zip(idx, forward([feats[i] for i in idx])):
                rows[i] = row
            if on_done is not None:
                on_done(idx)
    except KeyboardInterrupt as stop:
        stop.rows = rows  # type: ignore[attr-defined]  # the batches finished before Ctrl-C (() for the rest)
        raise
    return rows


class TorchRuntime:
    """transformers ``AutoModelForSequenceClassification`` on PyTorch, in this process."""

    name = "torch"

    def __init__(self, classifier: Classifier):
        self.classifier = classifier
        self._model: Any = None

    def resolved_dtype(self) -> tuple[Any, str]:
        """The dtype the model runs in and why: ``auto`` is float32 on every CPU (bf16 opt-in)
        and bf16 on GPUs that have it (:func:`~conflictscore_local.devices.resolve_dtype`)."""
        c = self.classifier
        return resolve_dtype(c.dtype, torch_device(c.device))

    def spec(self) -> dict[str, Any]:
        dtype, why = self.resolved_dtype()
        name = str(dtype).removeprefix("torch.")
        self.classifier.record(dtype=name, dtype_reason=why)
        return {"runtime": self.name, "dtype": name}

    def model(self) -> Any:
        """The classifier on its device, loaded once; its class count checked against the labels."""
        if self._model is None:
            from transformers import AutoModelForSequenceClassification

            c = self.classifier
            path = c.path
            device = torch_device(c.device)
            dtype, why = self.resolved_dtype()
            try:
                model = AutoModelForSequenceClassification.from_pretrained(
                    str(path), revision=c.revision, dtype=dtype
                )
            except Exception as e:
                raise BackendUnavailable(
                    f"judge nli: cannot load the model in {path} as a sequence classifier: {type(e).__name__}: {e}"
                ) from e
            check_num_labels(model.config.num_labels, c.labels, path)
            self._model = model.to(device).eval()
            c.record(device=str(device), dtype=str(dtype).removeprefix("torch."), dtype_reason=why,
                     architecture=type(model).__name__)
        return self._model

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        import torch

        model = self.model()
        tok = self.classifier.tokenizer()
        device = next(model.parameters()).device

        def forward(batch: list[Features]) -> list[list[float]]:
            padded = {k: v.to(device) for k, v in tok.pad(batch, return_tensors="pt").items()}
            with torch.inference_mode():
                logits = model(**padded).logits
            self.classifier.count("batches")
            return torch.softmax(logits.float(), dim=-1).cpu().tolist()

        c = self.classifier
        budget = c.max_batch_tokens or (2048 if device.type == "cpu" else 65536)
        return run_batched(feats, forward, max_pairs=c.batch_size, max_tokens=budget, on_done=on_done)


class CompiledTorchRuntime(TorchRuntime):
    """:class:`TorchRuntime` with the model under ``torch.compile`` (inductor, dynamic shapes):
    for long runs. On this project's 2-core AVX2 CPU it kept every label and ran the forward
    1.125x faster, but loading and compiling took 20.33 s against 6.13 s, paid back after 127.8 s
    of judging (``benchmarks/results/cpu_runtimes.md``), which is why ``auto`` does not choose it.
    Needs a C compiler on the machine (inductor writes C++)."""

    name = "compile"

    def model(self) -> Any:
        """The compiled model, compiled here on a batch of two short pairs and on one pair
        (dynamic shapes still specialise a batch of one: both graphs are made at load), so a
        platform where compiling fails says so before any pair is judged."""
        if self._model is None:
            import torch

            eager = super().model()
            self._model = None  # until compiled: a failure leaves nothing half-made
            tok = self.classifier.tokenizer()
            device = next(eager.parameters()).device
            compiled = _compile_step(lambda: torch.compile(eager, dynamic=True), at_load=True)
            for claims, passages in ((["one two three four", "five six seven"], ["eight nine ten", "eleven twelve"]),
                                     (["one two three"], ["four five six"])):
                warm = tok(claims, passages, padding=True, return_tensors="pt")
                with torch.inference_mode():
                    _compile_step(lambda: compiled(**{k: v.to(device) for k, v in warm.items()}), at_load=True)
            self._model = compiled
            self.classifier.record(compiled="torch.compile(dynamic=True)")
        return self._model

    def classify(self, feats: Sequence[Features], on_done: DoneFn | None = None) -> list[Row]:
        """As :meth:`TorchRuntime.classify`; a shape that makes torch compile again and fails
        there is :class:`BackendUnavailable` too, never a raw inductor traceback."""
        return _compile_step(lambda: super(CompiledTorchRuntime, self).classify(feats, on_done))


def _compile_step(step: Callable[[], Any], *, at_load: bool = False) -> Any:
    """``step()``, with torch.compile's own failures (dynamo's and inductor's errors, a missing C
    compiler; ``at_load``, while compiling on the warm-up pairs: any runtime, OS or import error)
    turned into :class:`BackendUnavailable` naming their cause and the way out. Other errors of a
    run (out of memory) pass unchanged."""
    try:
        return step()
    except (BackendUnavailable, ConfigError):
        raise
    except Exception as e:
        module = type(e).__module__
        if not (module.startswith(("torch._dynamo", "torch._inductor"))
                or (at_load and isinstance(e, (RuntimeError, OSError, ImportError)))):
            raise
        cause = getattr(e, "inner_exception", None) or e
        text = str(cause).strip().splitlines()
        raise BackendUnavailable(f"judge nli: runtime=compile: torch.compile failed: {type(cause).__name__}: "
                                 f"{text[0] if text else ''}; use runtime=torch") from e


def check_num_labels(num_labels: int, labels: Mapping[int, str], path: Any) -> None:
    """``ConfigError`` when the model's output classes are not the mapped labels."""
    if num_labels != len(labels):
        raise ConfigError(f"judge nli: {path} has {num_labels} output classes but {len(labels)} labels are mapped")


def pair_boundary(feats: Features) -> int | None:
    """Where the second segment (the claim) starts in an input whose ``token_type_ids`` mark it,
    or None when the input has no segment ids or only segment 0 (the model ignores them).

    vLLM receives segment ids in this compressed form (the index of the first type-1 token),
    the way its own cross-encoder scoring passes them; ``ConfigError`` when the types are not
    0…0 1…1, which that form cannot express.
    """
    types = feats.get("token_type_ids")
    if not types or not any(types):
        return None
    start = types.index(1)
    if any(t != 1 for t in types[start:]) or any(types[:start]):
        raise ConfigError(f"token_type_ids {list(types)} are not one run of 0s then one run of 1s")
    return start
