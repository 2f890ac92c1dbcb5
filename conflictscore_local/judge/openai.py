"""``openai``: the LLM judge prompt against an OpenAI-compatible server (``vllm serve`` …).

Labels come from the first answer token's ``top_logprobs`` when the server returns them,
else from the reply text, accepted only when it is exactly one label word. Whether it
returns them is asked once, with a one-token probe, before the spec keys the cache: a
server that refuses or ignores them (``transformers serve``) is read text-only from the
start (``top_logprobs`` 0 in the spec, ``resolved["logprobs"]`` says why). A pair the
server never answers properly (HTTP error after retries, timeout, malformed JSON,
unparseable text) is unscored, with the reason in its note and counted in ``stats()``.

The spec keys the model on what the server reports about it (``GET /models``: ``id``,
``root``, ``parent``, ``owned_by``, ``max_model_len``), not only on the name it is served
under, which is an alias: another checkpoint served as ``judge`` at the same URL must not
read this one's cached labels. A server that reports nothing leaves the name (and a
warning); ``model_fingerprint`` pins the identity instead (e.g. the weights' sha256).

A sequence-classification checkpoint behind ``vllm serve``'s ``/classify`` is a runtime of the
``nli`` judge (``--judge nli --judge-arg runtime=serve``, see :mod:`.classify`); ``mode=classify``
here is its old spelling, kept for one release with a warning.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping

from ..backends import registry
from ..backends.arguments import flat, ranged
from ..core.chunk import word_count
from ..core.types import LABELS, Claim, Label, Pair, Passage
from ..generate.openai import OpenAIConfig, OpenAIGenerator, RequestFailed
from .classify import ClassifyMode, check_mode_args
from .labels import token_label
from .llm import LLMJudge, check_judge_args
from .nli.runtimes.engine import SERVE_RUNTIME_ARGS

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OpenAIJudgeConfig:
    """The ``openai`` generator's arguments (``generator``, given flat beside the rest) plus the judge's own.

    ``top_logprobs``: alternatives asked for at each answer token (0: text only).
    ``max_tokens``: room for the one-word reply (the text path needs the whole word).
    ``min_label_mass``: the least probability the label tokens must hold at the answer token.
    ``thresholds``: calibrated SUPPORT / CONTRADICT thresholds (see ``labels.decide``).
    ``passage_words``: the most words a passage may have (no tokenizer here: words stand in).
    ``chunk_size``: prompts handed to the request pool at once (bounds what is held in memory).
    ``model_fingerprint``: what identifies the served weights (e.g. their sha256, or a
    release tag you control); when given it keys the cache instead of the name, URL and
    ``GET /models`` fields, so the same weights keep their labels behind another URL or name.

    ``mode=classify`` (deprecated: ``--judge nli --judge-arg runtime=serve``): the server runs a
    sequence-classification checkpoint (``vllm serve MODEL --runner pooling``) and pairs go to its ``/classify``
    endpoint (at the root of
    ``base_url``'s server), ``batch_size`` inputs per request; ``checkpoint`` is a local copy of
    that checkpoint (directory or cached hub id; default: ``model``) whose tokenizer encodes
    the pairs and whose labels and calibration apply. ``revision``, ``max_length``,
    ``negative_label``, ``id2label``, ``calibration``, ``claim_room`` (and ``thresholds``) mean
    what they mean for the ``nli`` judge; the generation arguments (``top_logprobs``,
    ``max_tokens``, ``min_label_mass``, ``passage_words``, ``endpoint``) do not apply.
    """

    generator: OpenAIConfig = flat(default_factory=OpenAIConfig)
    top_logprobs: int = ranged(10, 0, 20)
    max_tokens: int = ranged(8, 1, 1_000_000)
    min_label_mass: float = ranged(0.5, 0.0, 1.0)
    thresholds: dict | None = None
    passage_words: int = ranged(1500, 8, 10_000_000)
    chunk_size: int = ranged(8192, 1, 10_000_000)
    model_fingerprint: str | None = None
    mode: Literal["generate", "classify"] = "generate"
    checkpoint: str | None = None
    revision: str | None = None
    batch_size: int = ranged(32, 1, 1_000_000)
    max_length: int | None = ranged(None, 16, 1_000_000)
    negative_label: Literal["IRRELEVANT", "CONTRADICT"] | None = None
    id2label: dict | None = None
    calibration: bool = True
    claim_room: int | None = ranged(None, 0, 1_000_000)

    def __post_init__(self) -> None:
        check_judge_args(self, name="openai")
        if self.model_fingerprint is not None and not self.model_fingerprint.strip():
            raise ValueError("model_fingerprint must not be empty")
        check_mode_args(
            self,
            name="openai",
            generate_only=("top_logprobs", "max_tokens", "min_label_mass", "passage_words", "endpoint"),
            classify_only=(
                "checkpoint",
                "revision",
                "batch_size",
                "max_length",
                "negative_label",
                "id2label",
                "calibration",
                "claim_room",
            ),
        )
        if self.mode == "classify" and self.checkpoint is None and self.generator.model is None:
            raise ValueError("mode=classify needs checkpoint=DIR (a local copy of the served classifier) or model=NAME")


class OpenAIJudge(ClassifyMode, LLMJudge):
    """SUPPORT / CONTRADICT / IRRELEVANT from a model behind an OpenAI-compatible API, or
    (``mode=classify``) from a sequence classifier behind ``vllm serve``'s ``/classify``."""

    name = "openai"
    Config = OpenAIJudgeConfig

    def __init__(self, config: OpenAIJudgeConfig | None = None):
        super().__init__(config)
        self._warned = False  # about a model the server does not describe
        self._probed = False  # whether the server was asked if it returns logprobs

    # -- mode=classify (deprecated): the nli judge with runtime=serve ------------------------
    def classifier_model(self) -> str:
        return self.config.checkpoint or self.config.generator.model

    def nli_arguments(self) -> dict[str, Any]:
        gen, defaults = self.config.generator, OpenAIConfig()
        runtime_args = {
            k: getattr(gen, k)
            for k in SERVE_RUNTIME_ARGS
            if k != "batch_size" and getattr(gen, k) != getattr(defaults, k)
        }
        runtime_args["base_url"] = gen.base_url
        if self.config.batch_size != OpenAIJudgeConfig.batch_size:
            runtime_args["batch_size"] = self.config.batch_size
        return {"runtime": "serve", "runtime_args": runtime_args}

    def generator(self) -> OpenAIGenerator:
        if self._generator is None:
            self._generator = registry.build("generator", "openai", self.config.generator)
        return self._generator

    def chat(self) -> bool:
        return self.config.generator.endpoint == "chat"

    def model_identity(self) -> Mapping[str, Any]:
        """The pinned ``model_fingerprint``, else the served name, the server and what the
        server reports about the model; plus anything sent with every request that may change
        answers (how requests are paced and retried does not)."""
        cfg = self.config.generator
        sent = {
            "enable_thinking": cfg.enable_thinking,
            "chat_template_kwargs": cfg.chat_template_kwargs,
            "extra_body": cfg.extra_body,
        }
        if self.config.model_fingerprint is not None:
            return {"fingerprint": self.config.model_fingerprint, **sent}
        gen = self.generator()
        served = gen.served_model()
        if served is None and not self._warned:
            self._warned = True
            log.warning(
                f"judge openai: {gen.resolved['served_model']}; cached labels are keyed on the served name "
                f"{gen.model_name()!r} alone, which another model could be served under: pass "
                "--judge-arg model_fingerprint=... to pin what is served"
            )
        return {"name": gen.model_name(), "base_url": cfg.base_url, "served": served, **sent}

    def top_logprobs(self) -> int:
        """0 once the server has refused or ignored logprobs (labels are then read from the text).

        Unless the identity is pinned (``model_fingerprint``: the spec is then built without
        asking the server anything), the first call asks the server first (:meth:`probe_logprobs`),
        so the spec that keys the cache is the one the labels will be read under, run after run.
        """
        cfg = self.config
        if cfg.top_logprobs and cfg.mode == "generate" and cfg.model_fingerprint is None and not self._probed:
            self._probed = True
            self.probe_logprobs()
        return 0 if self.generator().logprobs_refused else cfg.top_logprobs

    def probe_logprobs(self) -> None:
        """One judge prompt of one token with logprobs asked, before any pair: a server that
        refuses them (HTTP 400) or answers without them (``transformers serve`` ignores the
        field) makes the judge read labels from the text from the start, with a logged warning.
        What the probe found goes into ``resolved["logprobs"]`` (and so into the summary)."""
        gen = self.generator()
        if gen.logprobs_refused is None:
            pair = Pair(Claim("probe", 0, "The sky is blue."), Passage("probe", "probe", 0, "The sky is blue."))
            (g,) = gen.generate([self.prompt(pair)], max_tokens=1, temperature=0.0, logprobs=self.config.top_logprobs)
            if gen.logprobs_refused is None:
                self.resolved["logprobs"] = (
                    "returned"
                    if g.top_logprobs
                    else (
                        "undecided: the probe got " + (f"no answer: {g.error}" if g.text is None else "an empty answer")
                    )
                )
                if g.top_logprobs and (gen.served_model() or {}).get("owned_by") == "vllm":
                    self.probe_label_tokens()
                return
        self.resolved["logprobs"] = f"refused: {gen.logprobs_refused}"
        log.warning(
            f"judge openai: {gen.logprobs_refused}; labels are read from the reply text (top_logprobs "
            f"{self.config.top_logprobs} -> 0 in the spec; --judge-arg top_logprobs=0 says so and skips the probe)"
        )

    def probe_label_tokens(self) -> None:
        """How the served tokenizer spells the label words, asked of vLLM's ``/tokenize`` (at the
        server root; asked of a server whose ``GET /models`` says ``owned_by: vllm``): a tokenizer that starts a label
        with one letter (SmolLM2: ``S UP PORT``) has that letter read as the label at the answer token, as the ``vllm``
        judge reads it, and the
        spec says so (``label_short_tokens``). A server without the endpoint leaves the usual rule
        (label prefixes of two letters or more); ``resolved["label_tokens"]`` says which."""
        gen = self.generator()
        root = gen.config.base_url.rstrip("/").removesuffix("/v1")
        endpoint = registry.build("generator", "openai", dataclasses.replace(gen.config, base_url=root, max_retries=0))
        pieces: dict[Label, list[str]] = {}
        for label in LABELS:
            try:
                reply = endpoint.request(
                    "/tokenize",
                    {
                        "model": gen.model_name(),
                        "prompt": label,
                        "add_special_tokens": False,
                        "return_token_strs": True,
                    },
                )
                strs = [str(t).replace("\u0120", " ").replace("\u2581", " ") for t in reply["token_strs"]]
            except (RequestFailed, KeyError, TypeError) as e:
                self.resolved["label_tokens"] = f"unknown: the server has no /tokenize ({e})"
                return
            pieces[label] = strs
        self.resolved["label_tokens"] = pieces
        for label, strs in pieces.items():
            first = strs[0].strip().upper() if strs else ""
            if first and token_label(first) is None and label.startswith(first):
                self._short_tokens[first] = label

    def spec(self) -> Mapping[str, Any]:
        out = dict(super().spec())
        if self.config.mode == "generate" and self._short_tokens:
            out["label_short_tokens"] = dict(self._short_tokens)
        return out

    def secrets(self) -> tuple[str, ...]:
        return self.generator().secrets()

    def passage_budget(self) -> tuple[Callable[[str], int], int]:
        """Whitespace words stand in for the server's tokens (classify mode: the ``nli`` judge's
        budget, counted with the checkpoint's tokenizer)."""
        if self.config.mode == "classify":
            return self.nli_judge().passage_budget()
        return word_count, self.config.passage_words
