"""What the generators do to text: chat rendering (Qwen3-style thinking switched off), a
reasoning model's ``<think>`` block stripped, stop strings. (Credentials are redacted at the
one redaction point, :mod:`..jobs.redaction`.)"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..core.errors import ConfigError

if TYPE_CHECKING:
    from ._base import Prompt

_THINK = re.compile(r"^\s*<think>.*?</think>\s*", re.DOTALL)


def template_kwargs(enable_thinking: bool | None, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Keyword arguments for a chat template: ``enable_thinking`` (unless None) plus ``extra``."""
    out: dict[str, Any] = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
    out.update(extra or {})
    return out


def render_prompt(tokenizer: Any, prompt: "Prompt", kwargs: Mapping[str, Any]) -> tuple[str, bool]:
    """The text to feed the model, and whether it is a rendered chat (which carries its own
    special tokens, so no others are added when tokenizing it).

    A raw string is used as it is; a chat conversation goes through the tokenizer's chat
    template with the generation prompt opened. Templates that do not know a keyword (a
    non-Qwen3 template and ``enable_thinking``) ignore it.
    """
    if isinstance(prompt, str):
        return prompt, False
    if getattr(tokenizer, "chat_template", None) is None:
        raise ConfigError("a chat prompt needs a model with a chat template; this tokenizer has none")
    text = tokenizer.apply_chat_template(
        [dict(m) for m in prompt], tokenize=False, add_generation_prompt=True, **kwargs
    )
    return text, True


def strip_thinking(text: str) -> str:
    """``text`` without a leading ``<think>…</think>`` block (a reasoning model's scratchpad)."""
    return _THINK.sub("", text, count=1)


def cut_at_stop(text: str, stop: Sequence[str] | None) -> tuple[str, bool]:
    """``text`` up to the earliest stop string, and whether one was found."""
    cut = min((i for s in stop or () if s and (i := text.find(s)) >= 0), default=-1)
    return (text[:cut], True) if cut >= 0 else (text, False)
