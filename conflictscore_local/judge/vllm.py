"""``vllm``: an LLM judge (Qwen3-32B class) run in-process by vLLM.

One generated token per pair, read from its log-probabilities (see :mod:`.llm`); prompts
that share a passage are submitted together so vLLM's prefix cache prefills each passage
once. Engine arguments (tensor parallelism, context length, GPU memory share, anything
else through ``engine_args``) are passed through to ``vllm.LLM``.

A sequence-classification checkpoint (an NLI cross-encoder) runs through vLLM as a runtime of
the ``nli`` judge (``--judge nli --judge-arg runtime=vllm``, see :mod:`.classify`);
``mode=classify`` here is its old spelling, kept for one release with a warning.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from ..backends import registry
from ..backends.arguments import flat, ranged
from ..backends.checkpoints import model_fingerprint, token_counter, tokenizer_fingerprint
from ..core.errors import ConfigError
from ..core.types import LABELS
from ..generate.vllm import VLLMConfig, VLLMGenerator, keyed_engine_args
from .classify import ClassifyMode, check_mode_args
from .labels import token_label
from .llm import LLMJudge, check_judge_args
from .prompts import judge_messages, judge_text


@dataclass(frozen=True)
class VLLMJudgeConfig:
    """The ``vllm`` generator's arguments (``generator``, given flat beside the rest) plus the judge's own.

    ``top_logprobs``: alternatives read at the answer token (vLLM allows 20 by default).
    ``max_tokens``: tokens generated per pair (the first non-blank one is read).
    ``min_label_mass``: the least probability the label tokens must hold at that position.
    ``thresholds``: calibrated SUPPORT / CONTRADICT thresholds (see ``labels.decide``).
    ``chat=false``: plain-text prompt for base models. ``passage_tokens``: the most tokens
    a passage may have (documents are split to fit, and always to fit ``max_model_len``).
    ``claim_room``: tokens kept free for the claim (None: 128; in classify mode the ``nli``
    judge's default). ``chunk_size``: prompts per engine call (bounds the rendered prompts
    held at once; see :mod:`.llm`).

    ``mode=classify`` (deprecated: ``--judge nli --judge-arg runtime=vllm``): ``model`` is a
    sequence-classification checkpoint run by ``LLM.classify``; ``max_length``, ``negative_label``, ``id2label``,
    ``calibration`` (and ``thresholds``, ``claim_room``) mean what they mean for the ``nli`` judge, and the
    generation arguments (``top_logprobs``, ``max_tokens``, ``chat``, ``min_label_mass``,
    ``passage_tokens``, ``tokenizer``, ``enable_thinking``, ``chat_template_kwargs``) do not apply.
    """

    generator: VLLMConfig = flat()
    top_logprobs: int = ranged(20, 1, 100)
    max_tokens: int = ranged(1, 1, 1_000_000)
    chat: bool = True
    min_label_mass: float = ranged(0.5, 0.0, 1.0)
    thresholds: dict | None = None
    passage_tokens: int = ranged(4096, 8, 10_000_000)
    claim_room: int | None = ranged(None, 0, 1_000_000)
    chunk_size: int = ranged(8192, 1, 10_000_000)
    mode: Literal["generate", "classify"] = "generate"
    max_length: int | None = ranged(None, 16, 1_000_000)
    negative_label: Literal["IRRELEVANT", "CONTRADICT"] | None = None
    id2label: dict | None = None
    calibration: bool = True

    def __post_init__(self) -> None:
        check_judge_args(self, name="vllm")
        check_mode_args(
            self,
            name="vllm",
            generate_only=(
                "top_logprobs",
                "max_tokens",
                "chat",
                "min_label_mass",
                "passage_tokens",
                "tokenizer",
                "enable_thinking",
                "chat_template_kwargs",
            ),
            classify_only=("max_length", "negative_label", "id2label", "calibration"),
        )


class VLLMJudge(ClassifyMode, LLMJudge):
    """SUPPORT / CONTRADICT / IRRELEVANT from an in-process vLLM model's first-token logprobs,
    or (``mode=classify``) from a sequence classifier's class probabilities."""

    name = "vllm"
    Config = VLLMJudgeConfig

    def __init__(self, config: VLLMJudgeConfig | None = None):
        super().__init__(config)
        self._identity: dict[str, Any] | None = None
        self._labels_checked = False

    # -- mode=classify (deprecated): the nli judge with runtime=vllm -------------------------
    def classifier_model(self) -> str:
        return self.config.generator.model

    def nli_arguments(self) -> dict[str, Any]:
        gen = self.config.generator
        runtime_args = {
            k: getattr(gen, k)
            for k in ("tensor_parallel_size", "max_model_len", "gpu_memory_utilization", "seed", "engine_args")
            if getattr(gen, k) != getattr(_GEN_DEFAULTS, k)
        }
        if self.config.chunk_size != VLLMJudgeConfig.chunk_size:
            runtime_args["chunk_size"] = self.config.chunk_size
        out: dict[str, Any] = {"runtime": "vllm", "dtype": gen.dtype, "runtime_args": runtime_args or None}
        if gen.revision is not None:
            out["revision"] = gen.revision
        return {k: v for k, v in out.items() if v is not None}

    def generator_engines(self) -> tuple[str, Any] | None:
        """The ``vllm`` generator's config: a distributing judge (``ray``) runs it on its own engine
        replicas. None in classify mode: that judge runs on the workers, each holding its own ``vllm.LLM``."""
        if self.config.mode != "generate":
            return None
        return "vllm", self.config.generator

    def generator(self) -> VLLMGenerator:
        """The ``vllm`` generator (built from ``config.generator`` unless one was handed in with
        :meth:`use_generator`), its tokenizer checked to spell the labels readably once."""
        if self._generator is None:
            self._generator = registry.build("generator", "vllm", self.config.generator)
        if not self._labels_checked:
            self._labels_checked = True
            self.check_label_tokens()
        return self._generator

    def chat(self) -> bool:
        return self.config.chat

    def model_identity(self) -> Mapping[str, Any]:
        """The weights and config, everything that turns a pair into the tokens the model sees
        (the tokenizer's files, the chat template in force and the variables it is rendered
        with), and the engine arguments that change how the model computes (quantization,
        KV-cache dtype, ...: every ``engine_args`` key outside ``ENGINE_ARGS_NOT_KEYED``)."""
        if self._identity is None:
            cfg = self.config.generator
            gen = self.generator()
            template = gen.tokenizer().chat_template
            self._identity = {
                **model_fingerprint(gen.model_path()),
                "tokenizer": tokenizer_fingerprint(gen.tokenizer_path()),
                "chat_template_sha256": None
                if template is None
                else hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest(),
                "chat_template_kwargs": cfg.chat_template_kwargs,
                "enable_thinking": cfg.enable_thinking,
                "dtype": cfg.dtype,
                "engine_args": keyed_engine_args(cfg.engine_args),
            }
            self.resolved["model_fingerprint"] = self._identity
        return self._identity

    def check_label_tokens(self) -> dict[str, list[str]]:
        """How the tokenizer spells each label word; its first token must announce the label.

        Single-token words are read exactly; a word split into several tokens is read from its
        first token. That token names the label when it is a prefix of at least
        ``MIN_LABEL_PREFIX`` letters (``SUP``, ``CON``, ``IR``), or, for a tokenizer that starts
        a label with one letter (SmolLM2 spells SUPPORT ``S UP PORT``), when it is a prefix of
        that label (so of no other: the three words start with different letters): its mass is
        then read as that label's (:meth:`read`). Why not score each label's whole
        continuation (``prompt_logprobs``): vLLM skips the prefix cache for requests that ask
        for prompt log-probabilities, so every pair would prefill its document three times
        (``docs/serving.md``).
        """
        tok = self.generator().tokenizer()
        pieces: dict[str, list[str]] = {}
        short: dict[str, str] = {}
        for label in LABELS:
            ids = tok(label, add_special_tokens=False)["input_ids"]
            pieces[label] = [tok.decode([i]) for i in ids]
            first = pieces[label][0].strip().upper() if ids else ""
            if token_label(first) == label:
                continue
            if first and label.startswith(first) and token_label(first) is None:
                short[first] = label  # read as the label's token (LLMJudge.read)
                continue
            raise ConfigError(
                f"judge vllm: the tokenizer spells {label} as {pieces[label]}; its first token does "
                "not identify the label, so the answer cannot be read from first-token log-probabilities"
            )
        self._short_tokens = short
        self.resolved["label_tokens"] = pieces
        self.resolved["label_single_tokens"] = all(len(v) == 1 for v in pieces.values())
        if short:
            self.resolved["label_short_tokens"] = dict(short)
        return pieces

    def passage_budget(self) -> tuple[Callable[[str], int], int]:
        """Count with the model's tokenizer; passages fit ``max_model_len`` next to prompt and claim
        (classify mode: the ``nli`` judge's budget)."""
        if self.config.mode == "classify":
            return self.nli_judge().passage_budget()
        gen = self.generator()
        count = token_counter(gen.tokenizer())
        window = self.config.generator.max_model_len or _context_length(gen.model_path() / "config.json")
        budget = self.config.passage_tokens
        if window is not None:
            empty = judge_messages("", "") if self.chat() else judge_text("", "")
            encoded = gen.encode(empty)
            overhead = len(encoded["prompt_token_ids"]) if isinstance(encoded, dict) else count(encoded)
            room = 128 if self.config.claim_room is None else self.config.claim_room
            budget = min(budget, window - overhead - room - self.config.max_tokens)
            if budget < 8:
                raise ConfigError(f"judge vllm: max_model_len {window} leaves no room for passages")
        self.resolved["passage_tokens"] = budget
        return count, budget


_GEN_DEFAULTS = VLLMConfig(model="")


def _context_length(config_json: Path) -> int | None:
    """``max_position_embeddings`` of a checkpoint (or of its text model), when declared."""
    try:
        cfg = json.loads(config_json.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    for c in (cfg, cfg.get("text_config") or {}):
        if isinstance(c.get("max_position_embeddings"), int):
            return c["max_position_embeddings"]
    return None
