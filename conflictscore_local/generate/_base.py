"""The ``Generator`` role: text generation by an LLM (vLLM in-process, an OpenAI-compatible
server, or transformers), shared by the LLM decomposer, the LLM judges and the experiments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Protocol, Sequence, runtime_checkable

from ..backend import Role

Message = Mapping[str, str]
"""A chat message: ``{"role": "system" | "user" | "assistant", "content": str}``."""

Prompt = str | Sequence[Message]
"""A raw completion prompt, or a chat conversation the backend renders with its template."""


@dataclass(frozen=True)
class Generation:
    """One completion. ``text is None`` means the backend got no usable answer (``error`` says why).

    ``top_logprobs``: for each generated token, the top alternatives as ``{token: logprob}``,
    when logprobs were requested and the backend offers them.
    """

    text: str | None
    top_logprobs: tuple[Mapping[str, float], ...] | None = None
    error: str | None = None
    finish_reason: str | None = None


@runtime_checkable
class Generator(Role, Protocol):
    """Generate one completion per prompt, batched or concurrent as the backend allows.

    Returns results in input order. Chat prompts are rendered with the model's chat
    template; ``enable_thinking=False`` is passed for Qwen3-style templates by default.
    ``on_progress(n)`` is called as requests finish.
    """

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        logprobs: int | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Generation]: ...
