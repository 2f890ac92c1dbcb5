"""``openai``: the LLM judge prompt against an OpenAI-compatible server (``vllm serve`` …).

Labels come from the first answer token's ``top_logprobs`` when the server returns them,
else from the reply text, accepted only when it is exactly one label word. A pair the
server never answers properly (HTTP error after retries, timeout, malformed JSON,
unparseable text) is unscored, with the reason in its note and counted in ``stats()``.

``mode=classify`` sends a sequence-classification checkpoint's inputs (the ``nli`` judge's
encoding) to ``vllm serve``'s ``/classify`` endpoint instead (see :mod:`.classify`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Literal, Mapping, Sequence

from ..chunk import word_count
from ..generate.openai import OpenAIConfig, OpenAIGenerator
from ..types import Judgment, Pair
from ._base import ProgressFn
from .classify import ClassifyMode, ServeClassifyRuntime, check_mode_args
from .llm import LLMJudge, check_judge_args


@dataclass(frozen=True)
class OpenAIJudgeConfig(OpenAIConfig):
    """The ``openai`` generator's arguments plus the judge's own.

    ``top_logprobs``: alternatives asked for at each answer token (0: text only).
    ``max_tokens``: room for the one-word reply (the text path needs the whole word).
    ``min_label_mass``: the least probability the label tokens must hold at the answer token.
    ``thresholds``: calibrated SUPPORT / CONTRADICT thresholds (see ``labels.decide``).
    ``passage_words``: the most words a passage may have (no tokenizer here: words stand in).
    ``chunk_size``: prompts handed to the request pool at once (bounds what is held in memory).

    ``mode=classify``: the server runs a sequence-classification checkpoint (``vllm serve
    MODEL --runner pooling``) and pairs go to its ``/classify`` endpoint (at the root of
    ``base_url``'s server), ``batch_size`` inputs per request; ``checkpoint`` is a local copy of
    that checkpoint (directory or cached hub id; default: ``model``) whose tokenizer encodes
    the pairs and whose labels and calibration apply. ``revision``, ``max_length``,
    ``negative_label``, ``id2label``, ``calibration``, ``claim_room`` (and ``thresholds``) mean
    what they mean for the ``nli`` judge; the generation arguments (``top_logprobs``,
    ``max_tokens``, ``min_label_mass``, ``passage_words``, ``endpoint``) do not apply.
    """

    top_logprobs: int = 10
    max_tokens: int = 8
    min_label_mass: float = 0.5
    thresholds: dict | None = None
    passage_words: int = 1500
    chunk_size: int = 8192
    mode: Literal["generate", "classify"] = "generate"
    checkpoint: str | None = None
    revision: str | None = None
    batch_size: int = 32
    max_length: int | None = None
    negative_label: Literal["IRRELEVANT", "CONTRADICT"] | None = None
    id2label: dict | None = None
    calibration: bool = True
    claim_room: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_judge_args(self, name="openai", top_logprobs=(0, 20))
        if self.passage_words < 8:
            raise ValueError(f"passage_words must be at least 8, got {self.passage_words}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")
        check_mode_args(
            self, name="openai",
            generate_only=("top_logprobs", "max_tokens", "min_label_mass", "passage_words", "endpoint"),
            classify_only=("checkpoint", "revision", "batch_size", "max_length", "negative_label", "id2label",
                           "calibration", "claim_room"),
        )
        if self.mode == "classify" and self.checkpoint is None and self.model is None:
            raise ValueError("mode=classify needs checkpoint=DIR (a local copy of the served classifier) or model=NAME")


class OpenAIJudge(ClassifyMode, LLMJudge):
    """SUPPORT / CONTRADICT / IRRELEVANT from a model behind an OpenAI-compatible API, or
    (``mode=classify``) from a sequence classifier behind ``vllm serve``'s ``/classify``."""

    name = "openai"
    Config = OpenAIJudgeConfig

    # -- classify mode: the nli judge with vllm serve's /classify as its forward pass --------
    def classifier_model(self) -> str:
        return self.config.checkpoint or self.config.model

    def classify_runtime(self, nli: Any) -> ServeClassifyRuntime:
        return ServeClassifyRuntime(nli, self.generator(), self.config.batch_size)

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]:
        if self.config.mode == "classify":
            return self.classify_judge(pairs, on_progress)
        return super().judge(pairs, on_progress)

    def spec(self) -> Mapping[str, Any]:
        return self.classify_spec() if self.config.mode == "classify" else super().spec()

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        return self.classify_describe(out) if self.config.mode == "classify" else out

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        return self.classify_stats(out) if self.config.mode == "classify" else out

    def generator(self) -> OpenAIGenerator:
        if self._generator is None:
            names = {f.name for f in fields(OpenAIConfig)}
            args = {k: v for k, v in vars(self.config).items() if k in names}
            self._generator = OpenAIGenerator(OpenAIConfig(**args))
        return self._generator

    def chat(self) -> bool:
        return self.config.endpoint == "chat"

    def model_identity(self) -> Mapping[str, Any]:
        """The served model's name, the server, and anything sent with every request that may
        change answers (how requests are paced and retried does not)."""
        cfg = self.config
        return {
            "name": self.generator().model_name(),
            "base_url": cfg.base_url,
            "enable_thinking": cfg.enable_thinking,
            "chat_template_kwargs": cfg.chat_template_kwargs,
            "extra_body": cfg.extra_body,
        }

    def passage_budget(self) -> tuple[Callable[[str], int], int]:
        """Whitespace words stand in for the server's tokens (classify mode: the ``nli`` judge's
        budget, counted with the checkpoint's tokenizer)."""
        if self.config.mode == "classify":
            return self.classifier().passage_budget()
        return word_count, self.config.passage_words
