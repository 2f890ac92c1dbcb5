"""The judge's sanity checklist (``benchmarks/judge/sanity/pairs.jsonl``) and its runner
``benchmarks/judge/judge_sanity.py``: the file loads and every line is valid, a bad line is refused
naming the file, the line, the field and the allowed values, the summary is exact on a
hand-computed case, and the runner scores the whole checklist with the shipped default judge
with counts that add up. Nothing here asserts the judge's quality: that is the benchmark's
figure (benchmarks/results/judge/judge_sanity_<tag>.md)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.core.errors import InputError


@pytest.fixture(scope="module")
def S() -> Any:
    from benchmarks.judge import judge_sanity

    return judge_sanity


@pytest.fixture(scope="module")
def pairs(S: Any) -> list[Any]:
    return S.load_pairs()


def test_the_checklist_loads_and_every_category_is_balanced(S: Any, pairs: list[Any]) -> None:
    assert len(pairs) >= 150
    assert len({p.id for p in pairs}) == len(pairs)
    by_cat: dict[str, Counter[str]] = {c: Counter() for c in S.CATEGORIES}
    for p in pairs:
        assert p.category in S.CATEGORIES and p.label in S.LABELS, p
        assert p.id.startswith(p.category + "-"), p
        assert p.passage.strip() == p.passage and p.claim.strip() == p.claim and p.passage[-1] in ".?!", p
        by_cat[p.category][p.label] += 1
    for cat, labels in by_cat.items():
        n = sum(labels.values())
        assert n >= 12, (cat, n)
        assert len(labels) >= 2, (cat, labels)
        assert max(labels.values()) / n < 0.85, (cat, labels)  # no constant answer reaches the 0.85 target
    for p in pairs:
        if p.category == "partial":  # each partial pair's note says which rule gives its label
            assert p.note and p.label in p.note, p


def test_issue_46s_examples_are_in_the_checklist(pairs: list[Any]) -> None:
    triples = {(p.passage, p.claim, p.label) for p in pairs if p.category == "identity"}
    assert ("Grass is green.", "Grass is purple.", "CONTRADICT") in triples
    assert ("Snow is white.", "Snow is black.", "CONTRADICT") in triples
    assert ("Water boils at 100 °C at sea level.", "Water boils at 100 °C at sea level.", "SUPPORT") in triples


def test_every_line_of_the_file_is_one_object_with_the_declared_fields(S: Any) -> None:
    lines = S.PAIRS.read_text(encoding="utf-8").splitlines()
    assert all(lines) and len(lines) == len(S.load_pairs())
    for line in lines:
        row = json.loads(line)
        assert set(S.FIELDS) <= set(row) <= set(S.FIELDS) | set(S.OPTIONAL_FIELDS), row


GOOD = {"id": "x-01", "category": "numbers", "passage": "P.", "claim": "C.", "label": "SUPPORT"}


@pytest.mark.parametrize(
    "line, message",
    [
        ("{not json", r"line 2: not JSON"),
        ('["a list"]', r"line 2: expected a JSON object with the fields id, category, passage, claim, label"),
        (
            json.dumps({**GOOD, "id": "x-02", "label": "NEUTRAL"}),
            r"line 2: field 'label' is 'NEUTRAL'; allowed: SUPPORT, CONTRADICT, IRRELEVANT",
        ),
        (
            json.dumps({**GOOD, "id": "x-02", "category": "entities"}),
            r"line 2: field 'category' is 'entities'; allowed: antonym_property, numbers, .*, identity",
        ),
        (
            json.dumps({**GOOD, "id": "x-02", "claim": " "}),
            r"line 2: field 'claim' must be a non-empty string, got ' '",
        ),
        (
            json.dumps({k: v for k, v in GOOD.items() if k != "passage"}),
            r"line 2: field 'passage' must be a non-empty string, got None",
        ),
        (json.dumps({**GOOD, "id": "x-02", "why": "?"}), r"line 2: unknown field 'why'; allowed: id, .*, note"),
        (json.dumps(GOOD), r"line 2: field 'id' 'x-01' repeats line 1"),
    ],
)
def test_a_bad_line_is_refused_with_its_file_line_field_and_allowed_values(
    S: Any, tmp_path: Path, line: str, message: str
) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(GOOD) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{path}, {message}"):
        S.load_pairs(path)


def test_the_runner_refuses_a_bad_file_in_one_line_with_exit_2(
    S: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps({**GOOD, "label": "yes"}) + "\n", encoding="utf-8")
    assert S.main(["--pairs", str(path), "--out-dir", str(tmp_path / "out"), "--no-leak-check"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"judge_sanity: error: {path}, line 1: field 'label' is 'yes'; allowed: SUPPORT, CONTRADICT, IRRELEVANT\n"
    )
    assert not (tmp_path / "out").exists()


def _pair(S: Any, i: int, category: str, label: str) -> Any:
    return S.SanityPair(f"{category}-{i:02d}", category, f"Passage {i}.", f"Claim {i}.", label, None, i)


def test_the_summary_on_a_hand_computed_case(S: Any) -> None:
    pairs = [
        _pair(S, 1, "numbers", "SUPPORT"),
        _pair(S, 2, "numbers", "CONTRADICT"),
        _pair(S, 3, "negation_claim", "CONTRADICT"),
        _pair(S, 4, "negation_premise", "IRRELEVANT"),
        _pair(S, 5, "identity", "SUPPORT"),
    ]
    results = [
        {"label": "SUPPORT", "probs": {"SUPPORT": 0.7, "CONTRADICT": 0.2, "IRRELEVANT": 0.1}, "note": None},
        # arg-max IRRELEVANT, but CONTRADICT passes its 0.3 threshold: the rule decided
        {"label": "CONTRADICT", "probs": {"SUPPORT": 0.1, "CONTRADICT": 0.35, "IRRELEVANT": 0.55}, "note": None},
        {"label": "SUPPORT", "probs": {"SUPPORT": 0.6, "CONTRADICT": 0.3, "IRRELEVANT": 0.1}, "note": None},
        {"label": None, "probs": None, "note": "unparseable"},
        {"label": "SUPPORT", "probs": None, "note": None},
    ]
    s = S.summarize(pairs, results, {"SUPPORT": 0.45, "CONTRADICT": 0.3})
    assert {k: s["overall"][k] for k in ("n", "correct", "errors", "accuracy", "scored", "unscored")} == {
        "n": 5,
        "correct": 3,
        "errors": 2,
        "accuracy": 0.6,
        "scored": 4,
        "unscored": 1,
    }
    assert {c: (v["n"], v["errors"], v["accuracy"]) for c, v in s["categories"].items()} == {
        "numbers": (2, 0, 1.0),
        "negation_claim": (1, 1, 0.0),
        "negation_premise": (1, 1, None),  # nothing scored
        "identity": (1, 0, 1.0),
    }
    assert s["confusion"] == {
        "SUPPORT": {"SUPPORT": 2},
        "CONTRADICT": {"CONTRADICT": 1, "SUPPORT": 1},
        "IRRELEVANT": {"unscored": 1},
    }
    assert {k: v["accuracy"] for k, v in s["by_gold_label"].items()} == {
        "SUPPORT": 1.0,
        "CONTRADICT": 0.5,
        "IRRELEVANT": None,
    }
    assert s["groups"]["negation"] == {
        "categories": ["negation_claim", "negation_premise"],
        "n": 2,
        "errors": 2,
        "error_rate": 1.0,
    }
    assert s["groups"]["numbers"]["n"] == 2 and s["groups"]["numbers"]["error_rate"] == 0.0
    assert [(e["id"], e["gold"], e["predicted"]) for e in s["errors"]] == [
        ("negation_claim-03", "CONTRADICT", "SUPPORT"),
        ("negation_premise-04", "IRRELEVANT", "unscored"),
    ]
    assert s["errors"][0]["argmax"] == "SUPPORT"
    assert s["errors"][0]["rule"] == S.RULE_SAME == "thresholds (the same label as arg-max)"
    assert s["errors"][1]["judge_note"] == "unparseable" and "argmax" not in s["errors"][1]
    assert s["targets"]["accuracy"] == {"target": "≥ 0.95", "value": 0.6, "met": False}
    assert s["targets"]["number_error_rate"] == {"target": "≤ 0.2", "value": 0.0, "met": True}
    assert s["targets"]["min_category_accuracy"]["value"] == 0.0
    # "thresholds": the calibrated rule gave another label than arg-max would (pair 2's probabilities)
    wrong = S.summarize([_pair(S, 2, "numbers", "IRRELEVANT")], [results[1]], {"SUPPORT": 0.45, "CONTRADICT": 0.3})
    assert wrong["errors"][0]["argmax"] == "IRRELEVANT" and wrong["errors"][0]["rule"] == S.RULE_CHANGED


def test_nothing_scored_is_no_score(S: Any) -> None:
    s = S.summarize([_pair(S, 1, "numbers", "SUPPORT")], [{"label": None, "probs": None, "note": "timeout"}])
    assert s["overall"]["accuracy"] is None and s["overall"]["unscored"] == 1 and s["overall"]["errors"] == 1
    assert s["categories"]["numbers"]["accuracy"] is None and s["groups"]["numbers"]["error_rate"] is None
    assert all(t["value"] is None and t["met"] is None for t in s["targets"].values())


def test_the_runner_scores_the_whole_checklist_with_the_default_judge(
    S: Any, pairs: list[Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert S.main(["--tag", "t", "--out-dir", str(tmp_path), "--no-leak-check"]) == 0
    record = json.loads((tmp_path / "judge_sanity_t.json").read_text(encoding="utf-8"))
    md = (tmp_path / "judge_sanity_t.md").read_text(encoding="utf-8")
    s = record["summary"]
    n = len(pairs)
    o = s["overall"]
    assert o["n"] == n == o["correct"] + o["errors"] and o["scored"] + o["unscored"] == n
    assert list(s["categories"]) == list(S.CATEGORIES)
    assert sum(c["n"] for c in s["categories"].values()) == n
    assert sum(c["errors"] for c in s["categories"].values()) == o["errors"] == len(s["errors"])
    assert o["accuracy"] == round((n - len(s["errors"])) / n, 4)
    for cat, c in s["categories"].items():
        assert c["n"] == sum(p.category == cat for p in pairs)
        assert c["errors"] == sum(e["category"] == cat for e in s["errors"])
        assert sum(b["n"] for b in c["by_gold_label"].values()) == c["n"]
    assert sum(sum(row.values()) for row in s["confusion"].values()) == n
    assert sum(s["confusion"][g].get(g, 0) for g in s["confusion"]) == o["correct"]
    assert {g: sum(row.values()) for g, row in s["confusion"].items()} == dict(Counter(p.label for p in pairs))
    for name, cats in S.GROUPS.items():
        g = s["groups"][name]
        assert g["n"] == sum(s["categories"][c]["n"] for c in cats)
        assert g["errors"] == sum(s["categories"][c]["errors"] for c in cats)
    by_id = {p.id: p for p in pairs}
    for e in s["errors"]:
        p = by_id[e["id"]]
        assert (e["passage"], e["claim"], e["gold"]) == (p.passage, p.claim, p.label) and e["predicted"] != e["gold"]
        assert set(e["probs"]) == set(S.LABELS) and e["argmax"] in S.LABELS
        if record["decision"].startswith("calibrated"):
            assert e["rule"] == (S.RULE_SAME if e["argmax"] == e["predicted"] else S.RULE_CHANGED)
        else:  # an arg-max judge: its label is the arg-max, no rule to name
            assert "rule" not in e and e["argmax"] == e["predicted"]
    assert record["judge"]["model"] == "models/default-judge"
    assert record["decision"] == "arg-max"  # the shipped judge's rule (conflictscore.json's decision_rule)
    command = record["meta"]["command"]
    assert (
        command.startswith("python -m benchmarks.judge.judge_sanity --tag t --out-dir ")
        and command.endswith(" --no-leak-check")
        and str(tmp_path) not in command
    )  # the machine's path is not kept
    assert (
        record["meta"]["commit"]
        and record["meta"]["cpu_flags"]
        and record["leak_check"] == {"checked": False, "why": "--no-leak-check"}
    )
    for cat in S.CATEGORIES:
        assert f"| {cat} | {s['categories'][cat]['n']} | {s['categories'][cat]['errors']} |" in md
    assert md.count("\n- **") == len(s["errors"])  # every error listed
    assert "negation_claim + negation_premise" in md and "numbers + dates + units" in md
    assert "| **all** |" in capsys.readouterr().out  # the tables are printed


def test_the_leak_check_finds_a_pair_text_in_a_training_set(S: Any, pairs: list[Any], tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "nli_extra" / "cad").mkdir(parents=True)
    (data / "nli_extra" / "cad" / "train.jsonl").write_text(
        json.dumps({"premise": "Grass is green.", "hypothesis": "It rained."}) + "\n", encoding="utf-8"
    )
    (data / "nli_extra" / "anli").mkdir()  # evaluation-only: never indexed
    (data / "nli_extra" / "anli" / "dev.jsonl").write_text(json.dumps({"premise": "Snow is white."}) + "\n")
    (data / "nli_general" / "lingnli").mkdir(parents=True)
    (data / "nli_general" / "lingnli" / "train.jsonl").write_text(
        json.dumps({"premise": "Yesterday. The new library building is tall and narrow, squeezed between two shops."})
        + "\n",
        encoding="utf-8",
    )
    leak = S.leak_check(pairs, data)
    # "Grass is green." is identity-01's and -04's passage and -04's and -07's claim; the library sentence
    # is antonym_property-02's passage; "Snow is white." is only in an evaluation-only set
    assert leak["checked"] and leak["pairs_sharing_text"] == 4
    assert sorted((h["id"], h["text"]) for h in leak["texts"]) == [
        ("antonym_property-02", "The new library building is tall and narrow, squeezed between two shops."),
        ("identity-01", "Grass is green."),
        ("identity-04", "Grass is green."),
        ("identity-04", "Grass is green."),
        ("identity-07", "Grass is green."),
    ]
