"""Eval metrics and calibration: the judge's decision rule and the engine's aggregation, on hand-made cases."""

from __future__ import annotations

import numpy as np
import pytest

from conflictscore_local.core.types import LABELS
from conflictscore_local.train import LABEL2ID, EvalSet, calibrate, evaluate
from conflictscore_local.train.evaluate import MIN_CONFLICTS, objective

S, C, I = (LABEL2ID[x] for x in LABELS)


def test_a_long_document_takes_its_most_confident_side_like_the_engine() -> None:
    ev = EvalSet(name="x")
    # unit 0: passages S 0.6 and C 0.7 → CONTRADICT (the more probable side)
    ev.add("c", ["p0", "p1"], C, -1)
    # unit 1: S 0.9 and C 0.5 → SUPPORT; unit 2: both passages IRRELEVANT → IRRELEVANT
    ev.add("c", ["p0", "p1"], S, -1)
    ev.add("c", ["p0", "p1"], I, -1)
    probs = np.array(
        [[0.6, 0.1, 0.3], [0.2, 0.7, 0.1], [0.9, 0.05, 0.05], [0.3, 0.5, 0.2], [0.1, 0.1, 0.8], [0.2, 0.2, 0.6]]
    )
    m = evaluate(probs, ev)
    assert m["macro_f1"] == 1.0 and m["pairs"]["accuracy"] == 1.0
    # a SUPPORT threshold of 0.95 leaves unit 1 with only its CONTRADICT passage
    m = evaluate(probs, ev, {"SUPPORT": 0.95, "CONTRADICT": 0.4})
    assert m["pairs"]["confusion"]["SUPPORT"] == {"SUPPORT": 0, "CONTRADICT": 1, "IRRELEVANT": 0}


def _hand_made() -> tuple[np.ndarray, EvalSet]:
    """Five claims × two one-passage documents. Argmax never says CONTRADICT; the
    contradicting documents have p(C) 0.40 and 0.38, the others at most 0.30; one
    irrelevant document has p(S) 0.15 and the weakest supporting one p(S) 0.60."""
    ev = EvalSet(name="hand")
    rows = [
        ([0.80, 0.10, 0.10], S, 0),
        ([0.10, 0.40, 0.50], C, 0),  # A: conflicted
        ([0.70, 0.20, 0.10], S, 1),
        ([0.20, 0.38, 0.42], C, 1),  # B: conflicted
        ([0.90, 0.05, 0.05], S, 2),
        ([0.10, 0.30, 0.60], I, 2),  # C
        ([0.60, 0.10, 0.30], S, 3),
        ([0.05, 0.25, 0.70], I, 3),  # D
        ([0.90, 0.05, 0.05], S, 4),
        ([0.15, 0.05, 0.80], I, 4),  # E
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
    assert m["macro_f1"] == pytest.approx((1.0 + 0.0 + 0.75) / 3)
    assert m["pairs"]["confusion"]["CONTRADICT"] == {"SUPPORT": 0, "CONTRADICT": 0, "IRRELEVANT": 2}


def test_calibration_finds_the_thresholds_that_get_every_pair_right() -> None:
    probs, ev = _hand_made()
    cal = calibrate([probs], [ev])
    # two gold conflicts are fewer than MIN_CONFLICTS: the objective is pair macro-F1
    assert MIN_CONFLICTS > 2 and cal.objective == "mean of (hand: pair macro-F1)"
    assert cal.argmax_score == pytest.approx(1.75 / 3) and cal.score == 1.0
    # the first grid point (step 0.05) with every pair right: p(S) threshold above 0.15
    # (E's irrelevant document), p(C) threshold in (0.30, 0.38]
    assert cal.thresholds == {"SUPPORT": 0.2, "CONTRADICT": 0.35}
    m = evaluate(probs, ev, cal.thresholds)
    assert m["detection"]["f1"] == 1.0 and m["macro_f1"] == 1.0


def test_objective_is_detection_f1_only_with_enough_gold_conflicts() -> None:
    few = {"macro_f1": 0.5, "detection": {"f1": 0.9, "n_gold_conflicted": MIN_CONFLICTS - 1}}
    many = {"macro_f1": 0.5, "detection": {"f1": 0.9, "n_gold_conflicted": MIN_CONFLICTS}}
    assert objective(few) == 0.5 and objective(many) == 0.9 and objective({"macro_f1": 0.4}) == 0.4


def test_calibration_on_several_sets_averages_and_keeps_argmax_when_nothing_beats_it() -> None:
    ev = EvalSet(name="a")
    probs = np.array([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05], [0.05, 0.05, 0.9]])
    for label in (S, C, I):
        ev.add("c", ["p"], label, -1)
    other = EvalSet(name="b")
    other.add("c", ["p"], S, -1)
    cal = calibrate([probs, np.array([[0.9, 0.05, 0.05]])], [ev, other])
    assert cal.objective == "mean of (a: pair macro-F1, b: pair macro-F1)"
    assert cal.thresholds is None and cal.score == cal.argmax_score == 1.0


def test_calibration_under_a_false_positive_bound_keeps_control_claims_clean() -> None:
    probs, ev = _hand_made()
    # F: a control claim (no gold conflict) whose irrelevant document looks more contradicting (p(C) 0.45)
    # than either true contradiction (0.40, 0.38): any CONTRADICT threshold that finds A and B flags F too
    ev.add("claim 5", ["passage"], S, 5)
    ev.add("claim 5", ["passage"], I, 5)
    ev.conflicted = [*ev.conflicted, False]
    probs = np.vstack([probs, [[0.90, 0.05, 0.05], [0.05, 0.45, 0.50]]])
    free = calibrate([probs], [ev])
    assert free.thresholds is not None and free.thresholds["CONTRADICT"] <= 0.38 and free.met
    assert evaluate(probs, ev, free.thresholds)["detection"]["false_positive_rate"] == 0.25  # F among 4 controls
    held = calibrate([probs], [ev], max_fpr={"hand": 0.0})
    assert held.met and held.max_fpr == {"hand": 0.0} and held.score < free.score
    assert evaluate(probs, ev, held.thresholds)["detection"]["false_positive_rate"] == 0.0
    with pytest.raises(ValueError, match="max_fpr names nope, not an eval set; sets: hand"):
        calibrate([probs], [ev], max_fpr={"nope": 0.1})


def test_a_false_positive_bound_holds_on_a_set_of_control_claims_only() -> None:
    # two control claims (no gold conflict), one with a document that looks contradicting (p(C) 0.45):
    # the set has no gold conflict, yet its false-positive rate is measurable and must be bounded
    ev = EvalSet(name="controls")
    ev.add("claim 0", ["passage"], S, 0)
    ev.add("claim 0", ["passage"], I, 0)
    ev.add("claim 1", ["passage"], S, 1)
    ev.conflicted = [False, False]
    probs = np.array([[0.90, 0.05, 0.05], [0.05, 0.45, 0.50], [0.90, 0.05, 0.05]])
    other = EvalSet(name="pairs")  # plain pairs favour a low CONTRADICT threshold
    other.add("c", ["p"], C, -1)
    other_probs = np.array([[0.30, 0.33, 0.37]])  # argmax: IRRELEVANT; CONTRADICT at <= 0.33
    free = calibrate([probs, other_probs], [ev, other])
    assert free.thresholds is not None and free.thresholds["CONTRADICT"] <= 0.33
    flagged = [evaluate(probs, ev, th) for th in (free.thresholds,)]
    assert flagged[0]["pairs"]["confusion"]["IRRELEVANT"]["CONTRADICT"] == 1  # claim 0 cried conflict
    held = calibrate([probs, other_probs], [ev, other], max_fpr={"controls": 0.0})
    assert held.met
    assert held.thresholds is None or held.thresholds["CONTRADICT"] > 0.45
    with pytest.raises(ValueError, match="max_fpr: pairs has no control claims"):
        calibrate([probs, other_probs], [ev, other], max_fpr={"pairs": 0.0})
