"""The ``Generator`` role: text generation by an LLM (vLLM in-process, an OpenAI-compatible
server, or transformers), shared by the LLM decomposer, the LLM judges and the experiments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Mapping, Protocol, Sequence, runtime_checkable

from ..backends.backend import Backend, Role

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


PACING_ARGS = frozenset(
    {
        "api_key_env",
        "max_concurrency",
        "timeout_s",
        "max_retries",
        "backoff_s",
        "max_backoff_s",
        "batch_size",
        "tensor_parallel_size",
        "gpu_memory_utilization",
        "enable_prefix_caching",
        "device",
    }
)
"""Generator arguments that change how fast answers come, never what they say."""


def generation_spec(generator: Any) -> dict[str, Any]:
    """What decides a generator's answers, for the spec of whatever it answers for (the ``llm``
    decomposer): its name and every argument but :data:`PACING_ARGS`, with a local model (``vllm``,
    ``transformers``) named by its weights' and tokenizer's fingerprints, not its path."""
    from ..backends.arguments import config_dict

    out: dict[str, Any] = {"backend": generator.name}
    out.update((k, v) for k, v in config_dict(generator.config).items() if k not in PACING_ARGS)
    if isinstance(out.get("model"), str) and out["backend"] in ("vllm", "transformers"):
        from ..backends.checkpoints import model_fingerprint, resolve_model, tokenizer_fingerprint

        path = resolve_model(out["model"], out.get("revision"), what="llm decomposer")
        out.update(model=model_fingerprint(path), tokenizer=tokenizer_fingerprint(path))
    return out


@runtime_checkable
class Generator(Role, Protocol):
    """Generate one completion per prompt, batched or concurrent as the backend allows.

    Returns results in input order. Chat prompts are rendered with the model's chat
    template; ``enable_thinking=False`` is passed for Qwen3-style templates by default.
    ``on_progress(n)`` is called as requests finish. ``logprobs_refused``: why the backend stopped
    asking for log-probabilities (a server that refuses them), None while it asks (default, in
    :class:`GeneratorBase`).
    """

    logprobs_refused: str | None

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


class GeneratorBase(Backend):
    """The base class of generators: every optional member of :class:`Generator`, with its default."""

    role: ClassVar[str] = "generator"
    OPTIONAL: ClassVar[tuple[str, ...]] = ("logprobs_refused",)

    logprobs_refused: str | None = None
    """Why log-probabilities are no longer asked for; default None (asked whenever requested)."""
