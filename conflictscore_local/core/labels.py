"""A classifier's class names → the project's three labels (``entailment`` → SUPPORT, ...), by name, never
by position: what the judges and the model manifests both read. Pure: no I/O, no model."""

from __future__ import annotations

import re
from typing import Any, Mapping

from .types import CONTRADICT, IRRELEVANT, SUPPORT, Label

_ALIASES: dict[str, Label] = {
    **dict.fromkeys(
        ("entailment", "entails", "entail", "entailed", "support", "supports", "supported", "supporting"), SUPPORT
    ),
    **dict.fromkeys(
        (
            "contradiction",
            "contradicts",
            "contradict",
            "contradicted",
            "contradictory",
            "refute",
            "refutes",
            "refuted",
            "refuting",
        ),
        CONTRADICT,
    ),
    **dict.fromkeys(
        (
            "neutral",
            "not_entailment",
            "non_entailment",
            "not_entailed",
            "no_entailment",
            "not_enough_info",
            "not_enough_information",
            "nei",
            "irrelevant",
            "unrelated",
            "unsupported",
            "not_supported",
        ),
        IRRELEVANT,
    ),
}


def canonical_label(name: str) -> Label | None:
    """The project label a classifier's class name stands for, or None when unknown."""
    key = re.sub(r"[\s\-]+", "_", str(name).strip().lower())
    return _ALIASES.get(key)


# -- the decision rule: probabilities → a label, and which part of the rule gave it --------------------

ARGMAX = "argmax"
"""The rule of a judge without thresholds: the most probable of the three labels."""
REPLY_TEXT = "reply text"
"""The rule of an LLM reply read from its text (no probabilities): the reply is the label word."""
_CODES = {SUPPORT: "S", CONTRADICT: "C", IRRELEVANT: "I"}
_RULE = re.compile(r"thresholds S>=(?P<s>[0-9.]+) C>=(?P<c>[0-9.]+)")


def _shown(t: float) -> str:
    return f"{t:.2f}" if round(t, 2) == t else repr(float(t))


def rule_text(thresholds: Mapping[Any, float] | None) -> str:
    """The rule a judge turns probabilities into a label by: ``thresholds S>=0.45 C>=0.30`` (SUPPORT and
    CONTRADICT are candidates when their probability reaches their threshold; none → IRRELEVANT, else the
    more probable candidate) or ``argmax`` (the most probable label)."""
    if thresholds is None:
        return ARGMAX
    return f"thresholds S>={_shown(thresholds[SUPPORT])} C>={_shown(thresholds[CONTRADICT])}"


def rule_thresholds(rule: str | None) -> dict[str, float] | None:
    """The thresholds a :func:`rule_text` names (None for ``argmax`` and any other rule)."""
    m = _RULE.fullmatch(rule or "")
    return {SUPPORT: float(m.group("s")), CONTRADICT: float(m.group("c"))} if m else None


def decided(probs: Mapping[str, float] | None, rule: str | None) -> str | None:
    """Which part of ``rule`` gave the label of ``probs``: ``S>=0.45`` or ``C>=0.30`` (one threshold reached),
    ``S>=0.45 and C>=0.30, C higher`` (both: the more probable wins), ``neither threshold`` (IRRELEVANT),
    ``C highest`` (argmax); None without probabilities or a rule of probabilities."""
    if probs is None or rule is None:
        return None
    if rule == ARGMAX:
        best = max((SUPPORT, CONTRADICT, IRRELEVANT), key=lambda lab: probs.get(lab, 0.0))
        return f"{_CODES[best]} highest"
    t = rule_thresholds(rule)
    if t is None:
        return None
    reached = [lab for lab in (SUPPORT, CONTRADICT) if probs.get(lab, 0.0) >= t[lab]]
    if not reached:
        return "neither threshold"
    said = " and ".join(f"{_CODES[lab]}>={_shown(t[lab])}" for lab in reached)
    if len(reached) == 1:
        return said
    higher = max(reached, key=lambda lab: probs.get(lab, 0.0))
    return f"{said}, {_CODES[higher]} higher"
