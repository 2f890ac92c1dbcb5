"""Label mapping, the decision rule and reading LLM answers, on hand-computed cases."""

from __future__ import annotations

import math

import pytest

from conflictscore_local.core.errors import ConfigError
from conflictscore_local.judge.labels import (
    canonical_label,
    check_thresholds,
    decide,
    label_distribution,
    map_id2label,
    parse_label_text,
    token_label,
)


@pytest.mark.parametrize(
    "name, label",
    [
        ("entailment", "SUPPORT"),
        ("ENTAILMENT", "SUPPORT"),
        ("Supports", "SUPPORT"),
        ("supported", "SUPPORT"),
        ("contradiction", "CONTRADICT"),
        ("REFUTES", "CONTRADICT"),
        ("refuted", "CONTRADICT"),
        ("neutral", "IRRELEVANT"),
        ("not_entailment", "IRRELEVANT"),
        ("not entailment", "IRRELEVANT"),
        ("NOT ENOUGH INFO", "IRRELEVANT"),
        ("not-enough-info", "IRRELEVANT"),
        ("unsupported", "IRRELEVANT"),
        ("LABEL_0", None),
        ("yes", None),
    ],
)
def test_canonical_label(name: str, label: str | None) -> None:
    assert canonical_label(name) == label


def test_three_way_mapping_is_by_name_not_position() -> None:
    mnli = map_id2label({0: "entailment", 1: "neutral", 2: "contradiction"}, source="m")
    assert mnli == {0: "SUPPORT", 1: "IRRELEVANT", 2: "CONTRADICT"}
    roberta_mnli = map_id2label({"0": "CONTRADICTION", "1": "NEUTRAL", "2": "ENTAILMENT"}, source="m")
    assert roberta_mnli == {0: "CONTRADICT", 1: "IRRELEVANT", 2: "SUPPORT"}


def test_two_way_mapping_and_negative_label() -> None:
    assert map_id2label({0: "entailment", 1: "not_entailment"}, source="m") == {0: "SUPPORT", 1: "IRRELEVANT"}
    assert map_id2label({0: "not_entailment", 1: "entailment"}, negative_label="CONTRADICT", source="m") == {
        0: "CONTRADICT",
        1: "SUPPORT",
    }
    assert map_id2label({0: "refutes", 1: "supports"}, source="m") == {0: "CONTRADICT", 1: "SUPPORT"}


@pytest.mark.parametrize(
    "id2label, why",
    [
        ({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, "'LABEL_0'"),
        ({0: "entailment", 1: "neutral", 2: "neutral"}, "1='neutral'"),
        ({0: "entailment", 1: "neutral", 2: "contradiction", 3: "other"}, "2 or 3 classes"),
        ({0: "not_entailment", 1: "neutral"}, "one supporting class"),
        ({0: "entailment", 2: "neutral", 3: "contradiction"}, "numbered from 0"),
    ],
)
def test_unmappable_checkpoints_are_refused_naming_their_labels(id2label: dict, why: str) -> None:
    with pytest.raises(ConfigError) as e:
        map_id2label(id2label, source="checkpoint X")
    assert "checkpoint X" in str(e.value) and why in str(e.value) and "id2label=" in str(e.value)


def test_negative_label_only_for_two_way_models() -> None:
    with pytest.raises(ConfigError, match="2-way models only"):
        map_id2label({0: "entailment", 1: "neutral", 2: "contradiction"}, negative_label="CONTRADICT", source="m")


def test_decide_argmax_and_thresholds() -> None:
    p = {"SUPPORT": 0.30, "CONTRADICT": 0.25, "IRRELEVANT": 0.45}
    assert decide(p) == "IRRELEVANT"
    # both sides clear their thresholds: the more probable wins, even though IRRELEVANT is the argmax
    assert decide(p, {"SUPPORT": 0.2, "CONTRADICT": 0.2}) == "SUPPORT"
    # only CONTRADICT clears its (lower) threshold
    assert decide(p, {"SUPPORT": 0.35, "CONTRADICT": 0.2}) == "CONTRADICT"
    assert decide(p, {"SUPPORT": 0.5, "CONTRADICT": 0.5}) == "IRRELEVANT"
    assert (
        decide({"SUPPORT": 0.9, "CONTRADICT": 0.05, "IRRELEVANT": 0.05}, {"SUPPORT": 0.95, "CONTRADICT": 0.5})
        == "IRRELEVANT"
    )


def test_check_thresholds() -> None:
    assert check_thresholds({"support": 0.4, "CONTRADICT": 1}, source="s") == {"SUPPORT": 0.4, "CONTRADICT": 1.0}
    with pytest.raises(ConfigError, match="missing CONTRADICT"):
        check_thresholds({"SUPPORT": 0.4}, source="s")
    with pytest.raises(ConfigError, match="allowed: SUPPORT, CONTRADICT"):
        check_thresholds({"SUPPORT": 0.4, "CONTRADICT": 0.4, "IRRELEVANT": 0.1}, source="s")
    with pytest.raises(ConfigError, match="between 0 and 1"):
        check_thresholds({"SUPPORT": 1.5, "CONTRADICT": 0.4}, source="s")


@pytest.mark.parametrize(
    "token, label",
    [
        ("SUP", "SUPPORT"),
        (" Support", "SUPPORT"),
        ("Su", "SUPPORT"),
        ("S", None),  # one letter names no label: "I cannot…", "Sure", "Certainly" start like the labels
        ("I", None),
        (" I", None),
        ("C", None),
        ("CON", "CONTRADICT"),
        ("contr", "CONTRADICT"),
        ("IR", "IRRELEVANT"),
        (" irrelevant", "IRRELEVANT"),
        ("SUPPORTS", None),
        ("The", None),
        ("**", None),
        (" ", None),
        ("", None),
        ("Sure", None),
    ],
)
def test_token_label(token: str, label: str | None) -> None:
    assert token_label(token) == label


def test_label_distribution_sums_prefix_tokens_and_renormalises() -> None:
    lp = {"SUP": math.log(0.5), " SUP": math.log(0.1), "CON": math.log(0.2), "IR": math.log(0.1), "**": math.log(0.1)}
    probs, mass = label_distribution(lp)  # type: ignore[misc]
    assert mass == pytest.approx(0.9)
    assert probs == {
        "SUPPORT": pytest.approx(0.6 / 0.9, abs=1e-6),
        "CONTRADICT": pytest.approx(0.2 / 0.9, abs=1e-6),
        "IRRELEVANT": pytest.approx(0.1 / 0.9, abs=1e-6),
    }
    assert label_distribution({"The": -0.1, "**": -3.0}) is None
    # "I" of "I cannot tell" holds 90% but is no label token: only "IR" counts
    probs, mass = label_distribution({"I": math.log(0.9), "IR": math.log(0.05)})  # type: ignore[misc]
    assert probs == {"SUPPORT": 0.0, "CONTRADICT": 0.0, "IRRELEVANT": 1.0} and mass == pytest.approx(0.05)
    assert label_distribution({"IR": -float("inf"), "The": -0.1}) is None


@pytest.mark.parametrize(
    "text, label",
    [
        ("SUPPORT", "SUPPORT"),
        (" contradict\n", "CONTRADICT"),
        ("Irrelevant.", "IRRELEVANT"),
        ("**SUPPORT**", "SUPPORT"),
        ('"CONTRADICT"', "CONTRADICT"),
        ("SUPPORT because the document says so", None),
        ("SUPPORTED", None),
        ("Support or contradict", None),
        ("", None),
        ("I think SUPPORT", None),
    ],
)
def test_parse_label_text_is_strict(text: str, label: str | None) -> None:
    assert parse_label_text(text) == label
