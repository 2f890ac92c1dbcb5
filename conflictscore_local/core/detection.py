"""Pair-level and claim-level (conflict detection) metrics of a ConflictBench run.

Pure Python and exact, so every figure can be checked by hand.

Pair level: each claim × document pair, gold label against the predicted document label.
Unscored predictions (label None) are counted apart and left out of the confusion
matrix and the per-label scores. Two accuracies are reported beside ``coverage`` (scored /
all pairs): ``accuracy`` over scored pairs and ``accuracy_all`` counting every unscored
pair as wrong, so a run that scored 1 of 10 pairs cannot read as accurate. Macro-F1
follows the usual convention (scikit-learn's ``f1_score(average="macro")`` with
``zero_division=0``): it averages over every label that occurs in gold *or* in the
predictions, a label's F1 counting 0 where it is undefined. Per-label F1 is still None
where it is undefined, so the table shows why.

Claim level (conflict detection): a claim is predicted conflicted when some document is
labelled SUPPORT and another CONTRADICT; gold from ``gold_conflicted``. For any group of
claims (all, one conflict type, one source) TP, FP, FN and TN count the claims of that
group: precision = TP/(TP+FP), recall = TP/(TP+FN), each None when its denominator is 0; F1
is their harmonic mean, 0.0 when nothing was found (recall 0, precision 0 or undefined)
and None only when the group has no gold positive. A claim's conflict type
is its item's ``conflict_type``, so a group of type T holds the conflicted claims of
type T and the non-conflicted claims of the same items; the ``none`` group holds the
controls, where only false positives are possible: its ``false_positive_rate`` =
FP/(FP+TN) is the figure to read there, and its false positives also count against the
overall precision.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .types import LABELS


def _div(a: float, b: float) -> float | None:
    return a / b if b else None


def prf(tp: int, fp: int, fn: int) -> dict[str, float | None]:
    """Precision, recall and F1 from counts (see the module docstring for the undefined cases)."""
    p, r = _div(tp, tp + fp), _div(tp, tp + fn)
    if r is None:
        f1 = None
    elif p is None or p + r == 0:
        f1 = 0.0
    else:
        f1 = 2 * p * r / (p + r)
    return {"precision": p, "recall": r, "f1": f1}


def pair_metrics(pairs: Iterable[tuple[str, str | None]]) -> dict[str, Any]:
    """Accuracy, per-label P/R/F1, macro-F1 and the confusion matrix of (gold, predicted) pairs."""
    confusion: dict[str, Counter[str]] = {g: Counter() for g in LABELS}
    unscored: Counter[str] = Counter()
    for gold, pred in pairs:
        if gold not in confusion:
            raise ValueError(f"gold label {gold!r}; allowed: {', '.join(LABELS)}")
        if pred is None:
            unscored[gold] += 1
        else:
            confusion[gold][pred] += 1
    scored = sum(sum(c.values()) for c in confusion.values())
    per_label: dict[str, dict[str, Any]] = {}
    for lab in LABELS:
        tp = confusion[lab][lab]
        fp = sum(confusion[g][lab] for g in LABELS if g != lab)
        fn = sum(confusion[lab].values()) - tp
        per_label[lab] = {**prf(tp, fp, fn), "support": sum(confusion[lab].values())}
    n_pairs = scored + sum(unscored.values())
    correct = sum(confusion[g][g] for g in LABELS)
    return {
        "n_pairs": n_pairs,
        "n_scored": scored,
        "unscored": sum(unscored.values()),
        "unscored_by_gold": {g: unscored[g] for g in LABELS},
        "coverage": _div(scored, n_pairs),
        "accuracy": _div(correct, scored),
        "accuracy_all": _div(correct, n_pairs),
        "per_label": per_label,
        "macro_f1": _macro_f1(per_label, confusion),
        "confusion": {g: {p: confusion[g][p] for p in LABELS} for g in LABELS},
    }


def _macro_f1(per_label: Mapping[str, Mapping[str, Any]], confusion: Mapping[str, Counter[str]]) -> float | None:
    """Macro-F1 over the labels present in gold or predictions (scikit-learn's convention,
    ``zero_division=0``): a label predicted but never gold, or gold but never predicted,
    counts with F1 0. None when there is no scored pair."""
    present = [lab for lab in LABELS if per_label[lab]["support"] or any(confusion[g][lab] for g in LABELS)]
    return sum(per_label[lab]["f1"] or 0.0 for lab in present) / len(present) if present else None


def detection_counts(claims: Iterable[tuple[bool, bool]]) -> dict[str, int]:
    """TP / FP / FN / TN of (gold conflicted, predicted conflicted) claims."""
    c = Counter({"tp": 0, "fp": 0, "fn": 0, "tn": 0})
    for gold, pred in claims:
        c["tp" if gold and pred else "fn" if gold else "fp" if pred else "tn"] += 1
    return dict(c)


@dataclass(frozen=True)
class DetectionMetric:
    """One conflict-detection metric of a group of claims: ``key`` (its field in every group of
    ``evaluation.detection``), ``label`` (the report's column), ``short`` (the terminal table's column),
    ``help``, ``higher_is_better`` and its function of the group's TP / FP / FN / TN counts (None where
    undefined)."""

    key: str
    label: str
    short: str
    help: str
    higher_is_better: bool
    compute: Callable[[Mapping[str, int]], float | None]


DETECTION_METRICS: dict[str, DetectionMetric] = {
    "precision": DetectionMetric(
        "precision",
        "precision",
        "P",
        "TP / (TP + FP): the conflicts found that are real",
        True,
        lambda c: prf(c["tp"], c["fp"], c["fn"])["precision"],
    ),
    "recall": DetectionMetric(
        "recall",
        "recall",
        "R",
        "TP / (TP + FN): the real conflicts found",
        True,
        lambda c: prf(c["tp"], c["fp"], c["fn"])["recall"],
    ),
    "f1": DetectionMetric(
        "f1",
        "F1",
        "F1",
        "the harmonic mean of precision and recall (0.0 when nothing was found)",
        True,
        lambda c: prf(c["tp"], c["fp"], c["fn"])["f1"],
    ),
    "false_positive_rate": DetectionMetric(
        "false_positive_rate",
        "false-positive rate",
        "FPR",
        "FP / (FP + TN): the claims without a conflict flagged as conflicted",
        False,
        lambda c: _div(c["fp"], c["fp"] + c["tn"]),
    ),
}
"""The detection metric table (the registry's ``detection_metric`` namespace): every group of a bench
evaluation, the report's detection table and ``bench run``'s text read it, so an entry here is all a new
detection metric needs."""


def detection_metrics(claims: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """Every :data:`DETECTION_METRICS` entry and the counts of (gold, predicted) claims."""
    c = detection_counts(claims)
    return {
        **{key: m.compute(c) for key, m in DETECTION_METRICS.items()},
        "n_claims": len(claims),
        "n_gold_conflicted": c["tp"] + c["fn"],
        **c,
    }


def all_conflicted_f1(detection: Mapping[str, Any]) -> float | None:
    """Detection F1 of the trivial rule "every claim is conflicted" on a :func:`detection_metrics`
    result: recall 1, precision = the gold share (None without claims or gold conflicts)."""
    n, pos = detection.get("n_claims"), detection.get("n_gold_conflicted")
    if not n or not pos:
        return None
    p = pos / n
    return 2 * p / (1 + p)


def grouped_detection(rows: Iterable[Mapping[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Detection metrics overall and per value of each key (``conflict_type``, ``source``...).

    ``rows`` hold ``gold`` and ``pred`` (booleans) plus the grouping keys.
    """
    rows = list(rows)
    out: dict[str, Any] = {"overall": detection_metrics([(r["gold"], r["pred"]) for r in rows])}
    for key in keys:
        groups: dict[str, list[tuple[bool, bool]]] = {}
        for r in rows:
            if r.get(key) is not None:
                groups.setdefault(str(r[key]), []).append((r["gold"], r["pred"]))
        out[f"by_{key}"] = {g: detection_metrics(v) for g, v in sorted(groups.items())}
    return out
