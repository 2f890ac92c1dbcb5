"""What the LLM judges (``vllm``, ``openai``) share: prompting, submission order, reading labels.

Pairs are de-duplicated, ordered so that prompts sharing a passage are submitted together
(prefix caching), sent to a :class:`~conflictscore_local.generate._base.Generator` in
calls of ``chunk_size`` prompts (progress is reported per answered prompt) and read back:

1. from the log-probabilities of the first non-blank answer token: the tokens that start
   SUPPORT / CONTRADICT / IRRELEVANT, renormalised over the three labels, provided they
   hold at least ``min_label_mass`` of that token's probability (else the model meant to
   say something else, and renormalising would turn noise into a label);
2. else from the reply text, only when the whole reply is one label word;
3. else unscored (``label=None``) with the reason in ``note``: never a guess.

The spec says how labels are read (``top_logprobs``: 0 = from the text only). When a server
stops taking logprobs during a run, the spec changes with it, and every judgment of the
``judge`` call in which it happened is read the text-only way from its reply (the reply text
does not depend on whether logprobs were asked for): each call returns judgments of one
spec, the one ``spec()`` names after it, which the engine keys them under.

Why calls of ``chunk_size`` prompts and not one call: every prompt of a call is rendered
and held until the call returns (for vLLM a Python list of token ids, about 150 kB for a
4096-token passage), and an engine step can hold hundreds of thousands of pairs. Within a
call vLLM batches continuously; only at the end of a call do the last requests run in a
partly filled batch, about one scheduler step lost per call (an estimate, not measured
here: no GPU), small next to the hundreds of steps of a default 8192-prompt call.
"""

from __future__ import annotations

import logging
import math
from typing import Any, Mapping, Sequence

from ..core.types import Judgment, Label, Pair
from ..generate._base import Generation, Prompt
from ..jobs import redact
from ._base import JudgeBase, ProgressFn
from .distinct import distinct
from .labels import REPLY_TEXT, check_thresholds, decide, label_distribution, parse_label_text, rule_text
from .prompts import PROMPT_VERSION, judge_messages, judge_text, passage_order

log = logging.getLogger(__name__)


def check_judge_args(cfg: Any, *, name: str) -> None:
    """The checks both LLM judges' arguments need beyond their ranges (``ValueError``)."""
    if cfg.thresholds is not None:
        check_thresholds(cfg.thresholds, source=f"judge {name}: thresholds")


class LLMJudge(JudgeBase):
    """Base of the LLM judges; subclasses provide the generator, its identity and the budget."""

    role = "judge"

    def __init__(self, config: Any = None):
        super().__init__(config)
        self._generator: Any = None
        self._prompts_done = 0  # prompts answered by earlier judge calls
        self._short_tokens: dict[str, str] = {}  # one-letter label starts of this tokenizer ("S": SUPPORT)

    def generator(self) -> Any:
        """The :class:`Generator` that answers the prompts (built once)."""
        raise NotImplementedError

    def use_generator(self, generator: Any) -> None:
        """Answer the prompts with ``generator`` instead of building the one the config names (the
        ``ray`` judge hands the ``vllm`` judge one whose engines are Ray's)."""
        self._generator = generator

    def chat(self) -> bool:
        """Whether prompts are chat conversations (else plain text)."""
        raise NotImplementedError

    def model_identity(self) -> Mapping[str, Any]:
        """What identifies the model in the judge spec."""
        raise NotImplementedError

    def prompt(self, pair: Pair) -> Prompt:
        """The judge prompt of one pair."""
        build = judge_messages if self.chat() else judge_text
        return build(pair.claim.text, pair.passage.text)

    def thresholds(self) -> dict[Label, float] | None:
        if self.config.thresholds is None:
            return None
        return check_thresholds(self.config.thresholds, source=f"judge {self.name}: thresholds")

    def top_logprobs(self) -> int:
        """Log-probability alternatives asked for now (0: labels are read from the text only)."""
        return self.config.top_logprobs

    def secrets(self) -> tuple[str, ...]:
        """Values no note may contain (an API key); notes are redacted with them."""
        return ()

    def spec(self) -> Mapping[str, Any]:
        """Model, prompt version, how the answer is read, thresholds: what changes labels."""
        return {
            "backend": self.name,
            "model": dict(self.model_identity()),
            "prompt_version": PROMPT_VERSION,
            "chat": self.chat(),
            "top_logprobs": self.top_logprobs(),
            "max_tokens": self.config.max_tokens,
            "min_label_mass": self.config.min_label_mass,
            "thresholds": self.thresholds(),
        }

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]:
        """Label every pair (input order kept); identical (passage, claim) texts are asked once."""
        if not pairs:
            return []
        gen = self.generator()
        thresholds = self.thresholds()
        uniq = distinct(pairs, passage_order(pairs))
        answered = 0

        def progress(n: int) -> None:
            nonlocal answered
            answered += n
            if on_progress is not None:
                on_progress(n)

        size = self.config.chunk_size
        asked = self.top_logprobs()
        replies: list[Generation] = []  # text only, for a re-read if the protocol changes mid-call
        read: list[Judgment] = []
        for start in range(0, len(uniq.first), size):
            batch = uniq.first[start : start + size]
            answered = 0
            outs = gen.generate(
                [self.prompt(pairs[i]) for i in batch],
                max_tokens=self.config.max_tokens,
                temperature=0.0,
                logprobs=asked or None,
                on_progress=progress,
            )
            if len(outs) != len(batch):
                raise RuntimeError(f"generator returned {len(outs)} answers for {len(batch)} prompts")
            if self.top_logprobs() != asked:
                self._protocol_changed(asked, self._prompts_done + start)
                asked = self.top_logprobs()
                read = [self.read(pairs[i], g, thresholds, text_only=True) for i, g in zip(uniq.first, replies)]
            read.extend(self.read(pairs[i], g, thresholds, text_only=not asked) for i, g in zip(batch, outs))
            replies.extend(Generation(g.text, None, g.error, g.finish_reason) for g in outs)
            rest = sum(uniq.weight[start : start + len(batch)]) - answered  # the duplicates, now read
            if on_progress is not None and rest > 0:
                on_progress(rest)
        self.count("pairs", len(pairs))
        self._prompts_done += len(uniq.first)
        for j in read:
            self.count("unscored" if j.label is None else "from_text" if j.probs is None else "from_logprobs")
        return uniq.spread(pairs, read)

    def _protocol_changed(self, before: int, prompts_done: int) -> None:
        """Record (in ``resolved``, so in the summary) and warn that labels are read another way now."""
        why = self.generator().logprobs_refused or "the generator stopped asking for them"
        msg = (
            f"judge {self.name}: logprobs refused by the server after {prompts_done} prompts ({why}); "
            f"labels are read from the reply text from then on (top_logprobs {before} -> "
            f"{self.top_logprobs()}, the spec and cache key change with it)"
        )
        self.resolved.setdefault("protocol_changes", []).append(
            {"after_prompts": prompts_done, "top_logprobs": [before, self.top_logprobs()], "reason": why}
        )
        log.warning(msg)

    def read(
        self, pair: Pair, g: Generation, thresholds: Mapping[Label, float] | None, *, text_only: bool = False
    ) -> Judgment:
        """The judgment in one generation: logprobs first (unless ``text_only``), then strict
        text, else unscored. Notes are redacted (:func:`~..jobs.redact`)."""
        if g.text is None:
            return Judgment(pair, None, None, "judge", self._note(f"no answer: {g.error}"))
        why = ""
        if g.top_logprobs and not text_only:
            steps = g.top_logprobs
            if self._short_tokens:  # "S" starts SUPPORT in this tokenizer: its mass is SUPPORT's
                steps = tuple(merge_label_starts(step, self._short_tokens) for step in steps)
            step = answer_step(steps)
            dist = label_distribution(step) if step is not None else None
            if dist is not None and dist[1] >= self.config.min_label_mass:
                return Judgment(pair, decide(dist[0], thresholds), dist[0], "judge", rule=rule_text(thresholds))
            mass = dist[1] if dist is not None else 0.0
            self.count("low_label_mass")
            why = (
                f"label tokens hold {mass:.1%} of the answer token's probability "
                f"(min_label_mass {self.config.min_label_mass:g}); "
            )
        label = parse_label_text(g.text)
        if label is not None:
            return Judgment(pair, label, None, "judge", rule=REPLY_TEXT)
        return Judgment(pair, None, None, "judge", self._note(f"{why}unparseable reply {g.text[:80]!r}"))

    def _note(self, text: str) -> str:
        return redact(text, self.secrets())

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self._generator is not None and self._generator.resolved:
            out["generator"] = dict(self._generator.resolved)
        return out

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        if self._generator is not None and self._generator.stats():
            out["generator"] = self._generator.stats()
        return out


def merge_label_starts(step: Mapping[str, float], short: Mapping[str, str]) -> dict[str, float]:
    """One position's alternatives with each one-letter label start of the tokenizer (``"S"``)
    merged into its label word (``"SUPPORT"``), probabilities added; the rest unchanged."""
    out: dict[str, float] = {}
    for token, logprob in step.items():
        key = short.get(token.strip().upper(), token)
        if key in out and logprob is not None and out[key] is not None:
            out[key] = math.log(math.exp(out[key]) + math.exp(logprob))
        else:
            out[key] = logprob
    return out


def answer_step(steps: Sequence[Mapping[str, float]]) -> Mapping[str, float] | None:
    """The alternatives at the first generated position whose likeliest token is not blank."""
    for step in steps:
        if step and max(step.items(), key=lambda kv: kv[1])[0].strip():
            return step
    return None
