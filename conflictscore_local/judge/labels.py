"""From what a model says to the project's three labels.

- a classifier's ``config.id2label`` names → SUPPORT / CONTRADICT / IRRELEVANT, by name,
  never by position; a checkpoint whose names cannot be mapped is refused;
- class probabilities (+ optional calibrated thresholds) → one label;
- an LLM's first-token log-probabilities → a distribution over the three labels;
- an LLM's reply text → a label only when the whole reply is one label word.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from ..core.errors import ConfigError
from ..core.labels import ARGMAX, REPLY_TEXT, canonical_label, decided, rule_text  # noqa: F401 (re-exported)
from ..core.types import CONTRADICT, IRRELEVANT, LABELS, SUPPORT, Label

DECISION_LABELS: tuple[Label, Label] = (SUPPORT, CONTRADICT)
_PUNCT = "*_`'\"“”‘’.,:;!?()[]{}<>"


def map_id2label(id2label: Mapping[Any, str], *, negative_label: Label | None = None, source: str) -> dict[int, Label]:
    """Class index → project label for a 3-way or 2-way classifier.

    3-way: the names must cover SUPPORT, CONTRADICT and IRRELEVANT once each. 2-way: one
    class must mean SUPPORT; the other keeps its own meaning, or ``negative_label`` when
    given. Anything else is refused with an error naming the checkpoint's labels.
    """
    try:
        table = {int(k): str(v) for k, v in id2label.items()}
    except (TypeError, ValueError):
        raise ConfigError(f"{source}: id2label keys must be class indices, got {dict(id2label)!r}") from None
    names = ", ".join(f"{k}={v!r}" for k, v in sorted(table.items()))
    hint = (
        f"{source}: cannot map the labels {{{names}}} onto SUPPORT / CONTRADICT / IRRELEVANT; "
        'pass the mapping yourself, e.g. --judge-arg \'id2label={"0": "SUPPORT", "1": "IRRELEVANT"}\''
    )
    if sorted(table) != list(range(len(table))) or len(table) not in (2, 3):
        raise ConfigError(f"{hint} (a judge needs 2 or 3 classes numbered from 0)")
    mapped = {k: canonical_label(v) for k, v in table.items()}
    if len(table) == 3:
        if negative_label is not None:
            raise ConfigError(f"{source}: negative_label applies to 2-way models only; this one has 3 classes")
        if sorted(m or "" for m in mapped.values()) != sorted(LABELS):
            raise ConfigError(hint)
        return mapped  # type: ignore[return-value]  # checked: the values are the labels
    positive = [k for k, m in mapped.items() if m == SUPPORT]
    if len(positive) != 1 or any(m is None for m in mapped.values()):
        raise ConfigError(f"{hint} (a 2-way model needs one supporting class and one other known class)")
    neg = 1 - positive[0]
    return {positive[0]: SUPPORT, neg: negative_label or mapped[neg]}  # type: ignore[dict-item]  # checked: no None in mapped


def check_thresholds(thresholds: Mapping[str, Any], *, source: str) -> dict[Label, float]:
    """``{"SUPPORT": t, "CONTRADICT": t}`` with both labels present and 0 ≤ t ≤ 1."""
    if not isinstance(thresholds, Mapping):
        raise ConfigError(f'{source}: thresholds must be an object like {{"SUPPORT": 0.5, "CONTRADICT": 0.5}}')
    out: dict[Label, float] = {}
    for k, v in thresholds.items():
        label = str(k).strip().upper()
        if label not in DECISION_LABELS:
            raise ConfigError(f"{source}: threshold for {k!r} is not allowed; allowed: SUPPORT, CONTRADICT")
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0.0 <= v <= 1.0:
            raise ConfigError(f"{source}: threshold {k!r} must be a number between 0 and 1, got {v!r}")
        out[label] = float(v)
    missing = [lab for lab in DECISION_LABELS if lab not in out]
    if missing:
        raise ConfigError(f"{source}: thresholds need both SUPPORT and CONTRADICT; missing {', '.join(missing)}")
    return out


def decide(probs: Mapping[str, float], thresholds: Mapping[Label, float] | None = None) -> Label:
    """One label from class probabilities.

    Without thresholds: the most probable label. With calibrated thresholds: the labels L in
    {SUPPORT, CONTRADICT} with p(L) ≥ threshold[L] are candidates; none → IRRELEVANT, else
    the candidate with the higher probability.
    """
    if thresholds is None:
        return max(LABELS, key=lambda lab: probs.get(lab, 0.0))
    candidates = [lab for lab in DECISION_LABELS if probs.get(lab, 0.0) >= thresholds[lab]]
    if not candidates:
        return IRRELEVANT
    return max(candidates, key=lambda lab: probs.get(lab, 0.0))


MIN_LABEL_PREFIX = 2
"""Letters a token must share with a label word to stand for it: one letter does not ("I
cannot tell", "Sure", "Certainly" start like IRRELEVANT, SUPPORT, CONTRADICT)."""


def token_label(token: str) -> Label | None:
    """The label a generated token starts: a prefix of one label word ("SUP", " Sup", "CON",
    "IR" …, case ignored) of at least ``MIN_LABEL_PREFIX`` letters, else None.

    Both LLM judges read answers with this rule; the ``vllm`` judge also checks at start-up
    that its tokenizer's first token of each label word passes it.
    """
    t = token.strip().upper()
    if len(t) < MIN_LABEL_PREFIX:
        return None
    return next((lab for lab in LABELS if lab.startswith(t)), None)


def label_distribution(top_logprobs: Mapping[str, float]) -> tuple[dict[str, float], float] | None:
    """The three labels' probabilities from one step's top log-probabilities.

    Tokens that start a label word add up per label; the result is renormalised over the
    three labels. Also returns the probability mass the label tokens held before
    renormalising (low mass: the model wanted to say something else). None when no token
    among the top alternatives starts a label word.
    """
    mass: dict[str, float] = dict.fromkeys(LABELS, 0.0)
    for token, logprob in top_logprobs.items():
        lab = token_label(token)
        if lab is not None and logprob is not None and math.isfinite(logprob):
            mass[lab] += math.exp(logprob)
    total = sum(mass.values())
    if total <= 0.0:
        return None
    return {lab: round(p / total, 6) for lab, p in mass.items()}, total


def parse_label_text(text: str) -> Label | None:
    """The label when the whole reply is exactly one label word (case and punctuation
    around it ignored: "Support.", "**CONTRADICT**"); None otherwise, never a guess."""
    word = text.strip().strip(_PUNCT + " \t\r\n").upper()
    return word if word in LABELS else None
