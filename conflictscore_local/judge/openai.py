"""``openai``: the LLM judge prompt against an OpenAI-compatible server (``vllm serve`` …).

Labels come from the first answer token's ``top_logprobs`` when the server returns them,
else from the reply text, accepted only when it is exactly one label word. A pair the
server never answers properly (HTTP error after retries, timeout, malformed JSON,
unparseable text) is unscored, with the reason in its note and counted in ``stats()``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

from ..chunk import word_count
from ..generate.openai import OpenAIConfig, OpenAIGenerator
from .labels import check_thresholds
from .llm import LLMJudge


@dataclass(frozen=True)
class OpenAIJudgeConfig(OpenAIConfig):
    """The ``openai`` generator's arguments plus the judge's own.

    ``top_logprobs``: alternatives asked for at each answer token (0: text only).
    ``max_tokens``: room for the one-word reply (the text path needs the whole word).
    ``min_label_mass``: the least probability the label tokens must hold at the answer token.
    ``thresholds``: calibrated SUPPORT / CONTRADICT thresholds (see ``labels.decide``).
    ``passage_words``: the most words a passage may have (no tokenizer here: words stand in).
    """

    top_logprobs: int = 10
    max_tokens: int = 8
    min_label_mass: float = 0.5
    thresholds: dict | None = None
    passage_words: int = 1500

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0 <= self.top_logprobs <= 20:
            raise ValueError(f"top_logprobs must be between 0 and 20, got {self.top_logprobs}")
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be at least 1, got {self.max_tokens}")
        if self.passage_words < 8:
            raise ValueError(f"passage_words must be at least 8, got {self.passage_words}")
        if not 0.0 <= self.min_label_mass <= 1.0:
            raise ValueError(f"min_label_mass must be between 0 and 1, got {self.min_label_mass}")
        if self.thresholds is not None:
            check_thresholds(self.thresholds, source="judge openai: thresholds")


class OpenAIJudge(LLMJudge):
    """SUPPORT / CONTRADICT / IRRELEVANT from a model behind an OpenAI-compatible API."""

    name = "openai"
    Config = OpenAIJudgeConfig

    def generator(self) -> OpenAIGenerator:
        if self._generator is None:
            names = {f.name for f in fields(OpenAIConfig)}
            args = {k: v for k, v in vars(self.config).items() if k in names}
            self._generator = OpenAIGenerator(OpenAIConfig(**args))
        return self._generator

    def chat(self) -> bool:
        return self.config.endpoint == "chat"

    def model_identity(self) -> Mapping[str, Any]:
        """The served model's name and anything sent with every request that may change answers."""
        cfg = self.config
        return {
            "name": self.generator().model_name(),
            "enable_thinking": cfg.enable_thinking,
            "chat_template_kwargs": cfg.chat_template_kwargs,
            "extra_body": cfg.extra_body,
        }

    def passage_budget(self) -> tuple[Callable[[str], int], int]:
        """Whitespace words stand in for the server's tokens."""
        return word_count, self.config.passage_words
