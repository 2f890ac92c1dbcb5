"""Fixtures of the experiment tests: a rule judge whose labels are known, and a scripted
OpenAI-compatible stub that answers multiple-choice prompts by option text."""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Callable, Mapping, Sequence

import pytest

from conflictscore_local.core.types import Judgment, Pair
from conflictscore_local.judge._base import JudgeBase

NOT = "Not: "


class RuleJudge(JudgeBase):
    """SUPPORT when the passage states the claim, CONTRADICT when it is ``Not: <claim>``, else IRRELEVANT."""

    name = "rule"
    role = "judge"

    @dataclasses.dataclass(frozen=True)
    class Config:
        version: int = 1

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            text, claim = p.passage.text.rstrip("."), p.claim.text.rstrip(".")
            label = "SUPPORT" if text == claim else "CONTRADICT" if text == NOT + claim else "IRRELEVANT"
            out.append(Judgment(p, label, {label: 1.0}))  # type: ignore[arg-type]
        self.count("pairs", len(pairs))
        return out

    def spec(self) -> dict[str, Any]:
        return {"backend": "rule", "version": self.config.version}

    def passage_budget(self) -> None:
        return None


@pytest.fixture
def rule_judge(register_backend: Callable[..., type]) -> type:
    return register_backend("judge", "rule", RuleJudge)


_OPTION = re.compile(r"^([A-Z])\. (.*)$", re.M)


def prompt_facts(messages: Sequence[Mapping[str, str]]) -> tuple[str, str, int]:
    """``(question, condition, pass)`` of a multiple-choice chat prompt, read from its text."""
    first = messages[0]["content"]
    question = re.search(r"^Question: (.*)$", first, re.M)[1]  # type: ignore[index]
    condition = (
        "prompt-control"
        if "weigh the conflicting evidence" in first
        else "rag"
        if "Documents:" in first
        else "closed-book"
    )
    return question, condition, 2 if len(messages) > 1 else 1


def letter_of(messages: Sequence[Mapping[str, str]], option_text: str) -> str:
    """The letter the prompt shows for ``option_text``."""
    return next(m[1] for m in _OPTION.finditer(messages[0]["content"]) if m[2] == option_text)
