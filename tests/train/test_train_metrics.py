"""The training-side decision rule, document aggregation and threshold calibration."""

from __future__ import annotations

import random

import numpy as np
import pytest

from conflictscore_local.aggregate import document_judgment
from conflictscore_local.judge import labels as judge_labels
from conflictscore_local.train import ID2LABEL, LABEL2ID, EvalSet, calibrate, decide, document_labels, evaluate
from conflictscore_local.types import LABELS, Claim, Judgment, Pair, Passage

S, C, I = (LABEL2ID[x] for x in LABELS)


def _probs(rng: random.Random, n: int) -> np.ndarray:
    raw = np.array([[rng.random() for _ in LABELS] for _ in range(n)])
    return raw / raw.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("thresholds", [None, {"SUPPORT": 0.3, "CONTRADICT": 0.2}, {"SUPPORT": 0.6, "CONTRADICT": 0.6}])
def test_decide_is_the_nli_judges_rule(thresholds: dict | None) -> None:
    probs = _probs(random.Random(1), 500)
    ours = decide(probs, thresholds)
    theirs = [judge_labels.decide(dict(zip(LABELS, row)), thresholds) for row in probs.tolist()]
    assert [ID2LABEL[int(x)] for x in ours] == theirs
    assert len(set(theirs)) == 3


def test_decide_breaks_a_support_contradict_tie_like_the_judge() -> None:
    probs = np.array([[0.4, 0.4, 0.2]])
    th = {"SUPPORT": 0.3, "CONTRADICT": 0.3}
    assert ID2LABEL[int(decide(probs, th)[0])] == judge_labels.decide(dict(zip(LABELS, probs[0])), th) == "SUPPORT"


def test_document_labels_match_the_engines_aggregation() -> None:
    rng = random.Random(7)
    sizes = [rng.randint(1, 4) for _ in range(300)]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
    probs = _probs(rng, offsets[-1])
    th = {"SUPPORT": 0.35, "CONTRADICT": 0.3}
    passage_labels = decide(probs, th)
    ours = document_labels(probs, passage_labels, offsets)
    claim = Claim("q", 0, "c")
    for u in range(len(sizes)):
        js = [
            Judgment(Pair(claim, Passage("q", "d", k, "p")), ID2LABEL[int(passage_labels[r])],
                     dict(zip(LABELS, probs[r].tolist())))
            for k, r in enumerate(range(offsets[u], offsets[u + 1]))
        ]
        assert ID2LABEL[int(ours[u])] == document_judgment("d", js).label, u
    assert set(ours.tolist()) == {S, C, I}


def _hand_made() -> tuple[np.ndarray, EvalSet]:
    """Five claims × two one-passage documents. Argmax never says CONTRADICT; the
    contradicting documents have p(C) 0.40 and 0.38, the others at most 0.30; one
    irrelevant document has p(S) 0.15 and the weakest supporting one p(S) 0.60."""
    ev = EvalSet()
    rows = [
        ([0.80, 0.10, 0.10], S, 0), ([0.10, 0.40, 0.50], C, 0),  # A: conflicted
        ([0.70, 0.20, 0.10], S, 1), ([0.20, 0.38, 0.42], C, 1),  # B: conflicted
        ([0.90, 0.05, 0.05], S, 2), ([0.10, 0.30, 0.60], I, 2),  # C
        ([0.60, 0.10, 0.30], S, 3), ([0.05, 0.25, 0.70], I, 3),  # D
        ([0.90, 0.05, 0.05], S, 4), ([0.15, 0.05, 0.80], I, 4),  # E
    ]
    for _, label, group in rows:
        ev.add(f"claim {group}", ["passage"], label, group)
    ev.conflicted = [True, True, False, False, False]
    return np.array([r[0] for r in rows]), ev


def test_evaluate_hand_made_case_with_argmax() -> None:
    probs, ev = _hand_made()
    m = evaluate(probs, ev)
    assert m["detection"]["tp"] == 0 and m["detection"]["fn"] == 2 and m["detection"]["recall"] == 0.0
    # SUPPORT 5/5; CONTRADICT never predicted (F1 0); IRRELEVANT P 3/5, R 1 → F1 0.75
    assert m["macro_f1_gold"] == pytest.approx((1.0 + 0.0 + 0.75) / 3)
    assert m["pairs"]["confusion"]["CONTRADICT"] == {"SUPPORT": 0, "CONTRADICT": 0, "IRRELEVANT": 2}


def test_calibration_finds_thresholds_that_detect_the_conflicts() -> None:
    probs, ev = _hand_made()
    cal = calibrate(probs, ev)
    assert cal.objective == "detection_f1"
    assert cal.argmax_score == 0.0 and cal.score == 1.0
    # the first grid point with detection F1 1 and every pair right: p(S) threshold above
    # 0.15 (E's irrelevant document), p(C) threshold in (0.30, 0.38]
    assert cal.thresholds == {"SUPPORT": 0.175, "CONTRADICT": 0.325}
    m = evaluate(probs, ev, cal.thresholds)
    assert m["detection"]["f1"] == 1.0 and m["macro_f1_gold"] == 1.0
    judged = [judge_labels.decide(dict(zip(LABELS, row)), cal.thresholds) for row in probs.tolist()]
    assert judged == [ID2LABEL[x] for x in ev.labels]


def test_calibration_on_pairs_optimises_macro_f1_and_keeps_argmax_when_nothing_beats_it() -> None:
    ev = EvalSet()
    probs = np.array([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]])
    for label in (S, C, I):
        ev.add("c", ["p"], label, -1)
    cal = calibrate(probs, ev)
    assert cal.objective == "pair_macro_f1"
    assert cal.thresholds is None and cal.score == cal.argmax_score == 1.0
