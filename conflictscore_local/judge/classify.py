"""The deprecated ``mode=classify`` spellings of the ``vllm`` and ``openai`` judges (:class:`ClassifyMode`).

``--judge vllm --judge-arg mode=classify`` and ``--judge openai --judge-arg mode=classify`` still work
for this release: they warn and build the ``nli`` judge with ``runtime=vllm`` / ``runtime=serve``
(:mod:`.nli.runtimes.engine`, where the engine runtimes live now), whose spec (and so cache key) they
share. The names that moved from here to that module are still answered, with a
``DeprecationWarning``, until 0.3.0.
"""

from __future__ import annotations

import importlib
import logging
import warnings
from typing import Any, ClassVar, Mapping, Sequence

from ..backends import registry
from ..backends.arguments import argument_defaults, argument_values
from ..core.types import Judgment, Pair
from ._base import ProgressFn

log = logging.getLogger(__name__)

NLI_ARGS: tuple[str, ...] = (
    "revision",
    "max_length",
    "negative_label",
    "id2label",
    "thresholds",
    "calibration",
    "claim_room",
)


def check_mode_args(cfg: Any, *, name: str, generate_only: Sequence[str], classify_only: Sequence[str]) -> None:
    """``ValueError`` when an argument of the other mode is set (differs from its default)."""
    defaults, values = argument_defaults(type(cfg)), argument_values(cfg)
    wrong = classify_only if cfg.mode == "generate" else generate_only
    bad = [k for k in wrong if values[k] != defaults[k]]
    if bad:
        other = "classify" if cfg.mode == "generate" else "generate"
        raise ValueError(
            f"{', '.join(bad)} only appl{'ies' if len(bad) == 1 else 'y'} with mode={other} "
            f"(judge {name} is in mode={cfg.mode})"
        )


class ClassifyMode:
    """The deprecated ``mode=classify`` of the ``vllm`` and ``openai`` judges: a warning, then an
    ``nli`` judge over the same checkpoint with ``runtime=vllm`` / ``runtime=serve`` does the work
    (same labels, same spec, same cache entries as the new spelling). Listed before the LLM
    judge base, so ``judge``/``spec``/``describe``/``stats`` fall through to it in other modes."""

    name: ClassVar[str]  # as Backend declares it
    config: Any
    resolved: dict[str, Any]

    def classifier_model(self) -> str:
        """The local checkpoint (directory or cached hub id) whose tokenizer and labels are used."""
        raise NotImplementedError

    def nli_arguments(self) -> dict[str, Any]:
        """The ``nli`` judge arguments the old spelling stands for: ``runtime``, ``runtime_args``, ``dtype``."""
        raise NotImplementedError

    def nli_judge(self) -> Any:
        """The ``nli`` judge this mode stands for (built once, through the registry); warns once."""
        if getattr(self, "_nli", None) is None:
            values = argument_values(self.config)
            args = {k: values[k] for k in NLI_ARGS if values.get(k) is not None}
            args.update(self.nli_arguments())
            shown = " ".join(f"--judge-arg {k}={v}" for k, v in args.items() if k in ("runtime",))
            log.warning(
                f"judge {self.name}: mode=classify is deprecated and goes in the next release; it runs "
                f"--judge nli --judge-arg model={self.classifier_model()} {shown} (same labels, same cache); "
                "see docs/serving.md"
            )
            self.resolved["deprecated"] = f"mode=classify: --judge nli {shown}"
            self._nli = registry.build("judge", "nli", {"model": self.classifier_model(), **args})
        return self._nli

    def classify_spec(self) -> Mapping[str, Any]:
        return self.nli_judge().spec()

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
        return super().judge(pairs, on_progress)  # type: ignore[misc]  # the LLM judge base follows in the MRO

    def spec(self) -> Mapping[str, Any]:
        return self.classify_spec() if self.config.mode == "classify" else super().spec()  # type: ignore[misc]  # the LLM judge base follows in the MRO

    def describe(self) -> dict[str, Any]:
        out = super().describe()  # type: ignore[misc]  # the LLM judge base follows in the MRO
        return self.classify_describe(out) if self.config.mode == "classify" else out

    def stats(self) -> dict[str, Any]:
        out = super().stats()  # type: ignore[misc]  # the LLM judge base follows in the MRO
        return self.classify_stats(out) if self.config.mode == "classify" else out


_MOVED = {
    name: "conflictscore_local.judge.nli.runtimes.engine"
    for name in (
        "VLLM_RUNTIME_ARGS",
        "SERVE_RUNTIME_ARGS",
        "VLLMClassifyRuntime",
        "ServeClassifyRuntime",
        "check_engine_labels",
    )
}
"""Names of 0.1's ``judge/classify.py`` that moved with the engine runtimes, answered until 0.3.0."""


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        warnings.warn(
            f"{__name__}.{name} is deprecated and will be removed in 0.3.0: import it from {_MOVED[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
