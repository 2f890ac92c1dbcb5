"""A classifier's class names → the project's three labels (``entailment`` → SUPPORT, ...), by name, never
by position: what the judges and the model manifests both read. Pure: no I/O, no model."""

from __future__ import annotations

import re

from .types import CONTRADICT, IRRELEVANT, SUPPORT, Label

_ALIASES: dict[str, Label] = {
    **dict.fromkeys(
        ("entailment", "entails", "entail", "entailed", "support", "supports", "supported", "supporting"), SUPPORT
    ),
    **dict.fromkeys(
        ("contradiction", "contradicts", "contradict", "contradicted", "contradictory",
         "refute", "refutes", "refuted", "refuting"), CONTRADICT
    ),
    **dict.fromkeys(
        ("neutral", "not_entailment", "non_entailment", "not_entailed", "no_entailment", "not_enough_info",
         "not_enough_information", "nei", "irrelevant", "unrelated", "unsupported", "not_supported"), IRRELEVANT
    ),
}


def canonical_label(name: str) -> Label | None:
    """The project label a classifier's class name stands for, or None when unknown."""
    key = re.sub(r"[\s\-]+", "_", str(name).strip().lower())
    return _ALIASES.get(key)
