"""Where the ``nli`` judge's forward pass runs: :data:`RUNTIMES`, the one table of runtime names.

The ``nli`` judge turns (passage, claim) pairs into token ids with the checkpoint's own
tokenizer (truncating the passage to fit), and class probabilities back into labels
through ``config.id2label`` and the calibrated thresholds. Between the two sits a runtime:
token ids in, one row of class probabilities (in class-index order) per input out.

- ``torch``: transformers + PyTorch in this process (CPU or GPU; :mod:`.torch`);
- ``compile``: the same under ``torch.compile`` (:mod:`.torch`; for long runs);
- ``onnx``: the checkpoint exported to ONNX once and run by ONNX Runtime on the CPU
  (:mod:`.onnx`; the ``onnx`` extra);
- ``native``: the same forward of a BERT checkpoint in PyTorch without transformers, which starts
  sooner (:mod:`.native`);
- ``openvino``: that ONNX export compiled by OpenVINO for the CPU, float32 or native bfloat16
  (:mod:`.openvino`; the ``openvino`` extra);
- ``vllm``: ``vllm.LLM(runner="pooling").classify`` in this process (:mod:`.engine`);
- ``serve``: ``vllm serve``'s ``/classify`` endpoint (:mod:`.engine`).

:data:`RUNTIMES` is the registry's ``runtime`` namespace (handed to it here, so the registry names no
room above its own): a plugin adds a runtime with an entry point ``runtime.NAME = module:Class``, and
the judge's ``runtime`` argument accepts every name the namespace holds. What a runtime class
declares beside the Protocol (whether ``auto`` may choose it, the ``runtime_args`` it takes, ``int8``,
its own tokenizer) is :class:`~.base.RuntimeBase`'s; a class that does not subclass it gets its
defaults. A new runtime is its module here, its line in :data:`RUNTIMES` and its test (and an extra
in ``pyproject.toml`` and ``util/extras.py`` where it needs a library).
"""

from __future__ import annotations

import os
from typing import Any, Callable

from ....backends.registry import REGISTRY
from ....core.errors import ConfigError
from .base import RUNTIME_ENV, Classifier, ClassifierRuntime, RuntimeBase, check_arg_names

RUNTIMES: dict[str, Any] = REGISTRY.provide(
    "runtime",
    {
        "torch": f"{__name__}.torch:TorchRuntime",
        "compile": f"{__name__}.torch:CompiledTorchRuntime",
        "onnx": f"{__name__}.onnx:OnnxRuntime",
        "native": f"{__name__}.native:NativeRuntime",
        "openvino": f"{__name__}.openvino:OpenVinoRuntime",
        "vllm": f"{__name__}.engine:VLLMClassifyRuntime",
        "serve": f"{__name__}.engine:ServeClassifyRuntime",
    },
)
"""Runtime name → the class that runs the forward pass (its lazy ``"module:Class"`` until first used),
built with the judge's :class:`~.base.Classifier`: the registry's ``runtime`` namespace, installed
plugins' runtimes included."""

AUTO = "auto"
"""The ``runtime`` that lets the judge choose (see :func:`resolve_runtime` and the judge's ``runtime_name``)."""

RuntimeFactory = Callable[[Classifier], ClassifierRuntime]


def names() -> list[str]:
    """Every name the ``runtime`` argument accepts: ``auto``, then the registered runtimes."""
    return [AUTO, *REGISTRY["runtime"].names()]


def runtime_class(name: str) -> Any:
    """The class (or factory) registered as ``name``; ``ConfigError`` naming the allowed names."""
    if name not in REGISTRY["runtime"].names():
        raise ConfigError(f"judge nli: argument 'runtime': {name!r} is not allowed; allowed: {', '.join(names())}")
    return REGISTRY["runtime"].get(name)


def declared(target: Any, what: str) -> Any:
    """What a runtime class declares (:class:`~.base.RuntimeBase`'s attribute ``what``), or the base's default."""
    return getattr(target, what, getattr(RuntimeBase, what))


def check_runtime(runtime: str, runtime_args: Any, int8: bool) -> None:
    """``ValueError`` naming the allowed values when the ``nli`` judge's ``runtime``, ``runtime_args`` or
    ``int8`` do not go together (its config calls it when made, before any model or server is touched)."""
    if runtime not in names():
        raise ValueError(f"argument 'runtime': {runtime!r} is not allowed; allowed: {', '.join(names())}")
    target = None if runtime == AUTO else REGISTRY["runtime"].get(runtime)
    if int8 and target is not None and not declared(target, "takes_int8"):
        raise ValueError(
            f"int8=true needs runtime={' or runtime='.join(_having('takes_int8'))} (dynamic int8 "
            f"quantization of the ONNX export); runtime is {runtime}"
        )
    if target is None or not declared(target, "runtime_args"):
        if runtime_args:
            raise ValueError(
                f"runtime_args apply to runtime={' or runtime='.join(_having('runtime_args'))}; runtime is {runtime}"
            )
        return
    check = getattr(target, "check_args", None)
    if check is not None:
        check(dict(runtime_args or {}))
    else:
        check_arg_names(runtime, declared(target, "runtime_args"), runtime_args or {})


def _having(what: str, value: Any = None) -> list[str]:
    """The registered runtimes that declare ``what`` (equal to ``value``; None: any true value), in
    table order; a plugin's runtime that cannot load here declares nothing."""
    out = []
    for name in REGISTRY["runtime"].names():
        try:
            found = declared(REGISTRY["runtime"].get(name), what)
        except Exception:
            continue
        if (found == value) if value is not None else found:
            out.append(name)
    return out


def resolve_runtime(runtime: str, device: str = "auto", dtype: str = "auto") -> str:
    """The runtime ``auto`` stands for without measuring: ``$CONFLICTSCORE_NLI_RUNTIME`` when set (a
    runtime that runs here, not an engine's), else PyTorch. The ``nli`` judge measures instead on a CPU
    at float32 (its ``runtime_name``, :mod:`..calibrate`: the fastest runtime at PyTorch's labels on a
    probe set, stored per machine). ``device`` and ``dtype`` are kept for the callers' sake."""
    if runtime != AUTO:
        return runtime
    env = os.environ.get(RUNTIME_ENV)
    if env:
        local = [n for n in REGISTRY["runtime"].names() if n not in _having("auto", "never")]
        if env not in local:
            raise ConfigError(f"${RUNTIME_ENV}={env!r} is not allowed; allowed: {', '.join(local)}")
        return env
    return "torch"


def local_runtime(classifier: Classifier, runtime: str = AUTO) -> ClassifierRuntime:
    """The runtime that the ``nli`` judge's ``runtime`` argument names (``auto`` resolved by
    :func:`resolve_runtime`), built for ``classifier`` (loads nothing)."""
    name = resolve_runtime(runtime, classifier.device, classifier.dtype)
    target = runtime_class(name)
    if classifier.int8 and not declared(target, "takes_int8"):
        raise ConfigError(
            f"judge nli: int8=true needs runtime={' or runtime='.join(_having('takes_int8'))} "
            f"(dynamic int8 quantization); runtime is {name}"
        )
    return target(classifier)


__all__ = [
    "AUTO",
    "RUNTIMES",
    "RuntimeFactory",
    "check_runtime",
    "declared",
    "local_runtime",
    "names",
    "resolve_runtime",
    "runtime_class",
]
