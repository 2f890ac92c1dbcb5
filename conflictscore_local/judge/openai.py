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
    """

    top_logprobs: int = 10
    max_tokens: int = 8
    min_label_mass: float = 0.5
    thresholds: dict | None = None
    passage_words: int = 1500
    chunk_size: int = 8192

    def __post_init__(self) -> None:
        super().__post_init__()
        check_judge_args(self, name="openai", top_logprobs=(0, 20))
        if self.passage_words < 8:
            raise ValueError(f"passage_words must be at least 8, got {self.passage_words}")


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
        """Whitespace words stand in for the server's tokens."""
        return word_count, self.config.passage_words
