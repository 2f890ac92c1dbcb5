"""The rule that turns probabilities into a label, written out (``thresholds S>=0.45 C>=0.30`` / ``argmax``), and
which part of it gave a label: hand-computed on the issue's example and on every branch of the rule."""

from __future__ import annotations

import pytest

from conflictscore_local.core.labels import ARGMAX, decided, rule_text, rule_thresholds
from conflictscore_local.judge.labels import decide

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"
SHIPPED = {S: 0.45, C: 0.30}


def probs(s: float, c: float, i: float) -> dict[str, float]:
    return {S: s, C: c, I: i}


def test_the_rule_is_written_out_and_read_back() -> None:
    assert rule_text(SHIPPED) == "thresholds S>=0.45 C>=0.30"
    assert rule_text({S: 0.4523, C: 0.3}) == "thresholds S>=0.4523 C>=0.30"
    assert rule_text(None) == ARGMAX == "argmax"
    assert rule_thresholds("thresholds S>=0.4523 C>=0.30") == {S: 0.4523, C: 0.30}
    assert rule_thresholds("argmax") is None and rule_thresholds("reply text") is None


@pytest.mark.parametrize(
    ("p", "label", "why"),
    [
        # the example: "Water boils at 100 °C at sea level" against a sentence saying exactly that
        (probs(0.381, 0.337, 0.282), C, "C>=0.30"),  # S 0.381 < 0.45, C 0.337 >= 0.30: C is the only candidate
        (probs(0.80, 0.10, 0.10), S, "S>=0.45"),
        (probs(0.40, 0.20, 0.40), I, "neither threshold"),  # 0.40 < 0.45 and 0.20 < 0.30
        (probs(0.50, 0.45, 0.05), S, "S>=0.45 and C>=0.30, S higher"),
        (probs(0.46, 0.50, 0.04), C, "S>=0.45 and C>=0.30, C higher"),
        (probs(0.45, 0.30, 0.25), S, "S>=0.45 and C>=0.30, S higher"),  # a threshold reached exactly counts
    ],
)
def test_which_threshold_decided_matches_the_label_the_judge_gives(p: dict[str, float], label: str, why: str) -> None:
    assert decide(p, SHIPPED) == label
    assert decided(p, rule_text(SHIPPED)) == why


def test_argmax_names_the_most_probable_label() -> None:
    assert decide(probs(0.381, 0.337, 0.282)) == S  # without the thresholds the same pair would be SUPPORT
    assert decided(probs(0.381, 0.337, 0.282), "argmax") == "S highest"
    assert decided(probs(0.1, 0.2, 0.7), "argmax") == "I highest"
    assert decided(None, "argmax") is None and decided(probs(0.1, 0.2, 0.7), "reply text") is None
