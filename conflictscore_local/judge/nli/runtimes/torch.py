"""``runtime=torch``: transformers' ``AutoModelForSequenceClassification`` on PyTorch in this process
(CPU or GPU), the reference every other runtime is measured against; ``runtime=compile``: the same under
``torch.compile``."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ....core.errors import BackendUnavailable, ConfigError
from ....util.devices import resolve_dtype, torch_device
from .base import Classifier, DoneFn, Features, Row, RuntimeBase, check_num_labels, run_batched


class TorchRuntime(RuntimeBase):
    """transformers ``AutoModelForSequenceClassification`` on PyTorch, in this process."""

    name = "torch"
    auto = "candidate"  # the reference: runtime=auto's calibration measures the others against it

    def __init__(self, classifier: Classifier):
        self.classifier = classifier
        self._model: Any = None

    def resolved_dtype(self) -> tuple[Any, str]:
        """The dtype the model runs in and why: ``auto`` is float32 on every CPU (bf16 opt-in)
        and bf16 on GPUs that have it (:func:`~conflictscore_local.util.devices.resolve_dtype`)."""
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

            from ....backends.packed import from_pretrained

            c = self.classifier
            path = c.path
            device = torch_device(c.device)
            dtype, why = self.resolved_dtype()
            try:
                model = from_pretrained(AutoModelForSequenceClassification, path, revision=c.revision, dtype=dtype)
            except Exception as e:
                raise BackendUnavailable(
                    f"judge nli: cannot load the model in {path} as a sequence classifier: {type(e).__name__}: {e}"
                ) from e
            check_num_labels(model.config.num_labels, c.labels, path)
            self._model = model.to(device).eval()
            c.record(
                device=str(device),
                dtype=str(dtype).removeprefix("torch."),
                dtype_reason=why,
                architecture=type(model).__name__,
            )
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
    of judging (``benchmarks/results/speed/cpu_runtimes.md``), which is why ``auto`` does not choose it.
    Needs a C compiler on the machine (inductor writes C++)."""

    name = "compile"
    auto = "opt-in"

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
            for claims, passages in (
                (["one two three four", "five six seven"], ["eight nine ten", "eleven twelve"]),
                (["one two three"], ["four five six"]),
            ):
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
        if not (
            module.startswith(("torch._dynamo", "torch._inductor"))
            or (at_load and isinstance(e, (RuntimeError, OSError, ImportError)))
        ):
            raise
        cause = getattr(e, "inner_exception", None) or e
        text = str(cause).strip().splitlines()
        raise BackendUnavailable(
            f"judge nli: runtime=compile: torch.compile failed: {type(cause).__name__}: "
            f"{text[0] if text else ''}; use runtime=torch"
        ) from e
