"""Eval metrics and threshold calibration, computed with the judge's and the engine's own code.

Passage probabilities become labels by :func:`conflictscore_local.judge.labels.decide` (the
``nli`` judge's rule, thresholds included), a claim × document unit takes the label
:func:`conflictscore_local.core.aggregate.document_judgment` gives its passages, and a claim is
conflicted as :func:`conflictscore_local.core.aggregate.claim_verdict` says: a checkpoint is
scored during training exactly as a run will judge it. Metrics are the benchmark's
(:mod:`conflictscore_local.core.detection`): pair macro-F1 with scikit-learn's convention and
claim-level conflict detection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..core.aggregate import claim_verdict, document_judgment
from ..core.detection import detection_metrics, pair_metrics
from ..core.types import CONTRADICT, LABELS, SUPPORT, Claim, Judgment, Label, Pair, Passage
from ..judge.labels import decide
from .data import ID2LABEL, EvalSet

if TYPE_CHECKING:
    import numpy as np


class _Judged:
    """An eval set's units as the engine's objects, built once and relabelled per threshold pair."""

    def __init__(self, ev: EvalSet, probs: np.ndarray):
        self.ev = ev
        self.probs = [dict(zip(LABELS, row)) for row in probs.tolist()]
        self.pairs = []
        claims: dict[str, Claim] = {}
        for u in range(len(ev)):
            for r in range(ev.offsets[u], ev.offsets[u + 1]):
                claim = claims.setdefault(ev.claims[r], Claim("eval", len(claims), ev.claims[r]))
                self.pairs.append(Pair(claim, Passage("eval", f"u{u}", r - ev.offsets[u], ev.passages[r])))

    def unit_labels(
        self, thresholds: Mapping[Label, float] | None, rule: str = "max"
    ) -> tuple[list[str | None], list[bool]]:
        """Document label of every unit and predicted conflict of every claim group."""
        ev = self.ev
        judged = [Judgment(p, decide(pr, thresholds), pr, "judge") for p, pr in zip(self.pairs, self.probs)]
        docs = [
            document_judgment(f"u{u}", judged[ev.offsets[u] : ev.offsets[u + 1]], rule=rule) for u in range(len(ev))
        ]
        by_group: dict[int, list] = {}
        for u, g in enumerate(ev.groups):
            if g >= 0:
                by_group.setdefault(g, []).append(docs[u])
        conflicted = [
            claim_verdict(Claim("eval", g, ""), by_group.get(g, [])).conflicted for g in range(len(ev.conflicted))
        ]
        return [d.label for d in docs], conflicted


def evaluate_judged(
    judged: _Judged, thresholds: Mapping[Label, float] | None = None, rule: str = "max"
) -> dict[str, Any]:
    ev = judged.ev
    labels, conflicted = judged.unit_labels(thresholds, rule)
    pm = pair_metrics((ID2LABEL[g], p) for g, p in zip(ev.labels, labels))
    out: dict[str, Any] = {"macro_f1": pm["macro_f1"] or 0.0, "pairs": pm}
    if any(ev.conflicted):
        out["detection"] = detection_metrics(list(zip(ev.conflicted, conflicted)))
    return out


def evaluate(
    probs: np.ndarray, ev: EvalSet, thresholds: Mapping[Label, float] | None = None, rule: str = "max"
) -> dict[str, Any]:
    """Unit-level pair metrics (``macro_f1``: the benchmark's pair macro-F1) and, when the
    set has gold-conflicted claims, conflict detection; ``rule``: the document rule
    (:func:`conflictscore_local.core.aggregate.document_judgment`)."""
    return evaluate_judged(_Judged(ev, probs), thresholds, rule)


MIN_CONFLICTS = 20


def objective(metrics: Mapping[str, Any]) -> float:
    """What calibration maximises on one eval set: conflict detection F1 (the metric
    ConflictScore reports) where the set has at least :data:`MIN_CONFLICTS` gold-conflicted
    claims, else pair macro-F1 (a handful of conflicts is too few to fit thresholds to)."""
    det = metrics.get("detection")
    return (det["f1"] or 0.0) if det and det["n_gold_conflicted"] >= MIN_CONFLICTS else metrics["macro_f1"]


@dataclass(frozen=True)
class Calibration:
    """Thresholds fitted on the eval sets; ``thresholds`` None when argmax scored as well.
    ``max_fpr``: the bound on each named set's control false-positive rate the fit held to,
    ``met``: whether the chosen thresholds (or argmax) hold it (False: nothing on the grid did)."""

    thresholds: dict[Label, float] | None
    objective: str
    score: float
    argmax_score: float
    grid: tuple[float, ...]
    max_fpr: dict[str, float] | None = None
    met: bool = True


GRID: tuple[float, ...] = tuple(round(0.05 + 0.05 * i, 2) for i in range(19))


def calibrate(
    probs: Sequence[np.ndarray],
    sets: Sequence[EvalSet],
    grid: Sequence[float] = GRID,
    rule: str = "max",
    max_fpr: Mapping[str, float] | None = None,
) -> Calibration:
    """Fit SUPPORT and CONTRADICT thresholds under the judge's rule by grid search.

    Objective: the mean over eval sets of :func:`objective`, ties broken by the mean pair
    macro-F1. Thresholds are kept only when they beat plain argmax. ``max_fpr`` (set name →
    bound): only thresholds whose false-positive rate on that set's control claims (claims with
    no gold conflict) stays within the bound compete; a judge that should not cry conflict more
    often than its predecessor is fitted with its predecessor's rate here.
    """
    judged = [_Judged(ev, p) for ev, p in zip(sets, probs)]
    bounds = dict(max_fpr or {})
    unknown = sorted(set(bounds) - {ev.name for ev in sets})
    if unknown:
        raise ValueError(
            f"max_fpr names {', '.join(unknown)}, not an eval set; sets: {', '.join(ev.name for ev in sets)}"
        )

    for ev in sets:
        if ev.name in bounds and all(ev.conflicted):  # no claims, or every one a gold conflict
            raise ValueError(
                f"max_fpr: {ev.name} has no control claims (claims without a gold conflict): "
                "no false-positive rate to bound"
            )

    def fpr(j: _Judged, th: Mapping[Label, float] | None) -> float:
        # measured on the claims themselves: a set of control claims only has no detection metrics
        _, conflicted = j.unit_labels(th, rule)
        return detection_metrics(list(zip(j.ev.conflicted, conflicted)))["false_positive_rate"]

    def score(th: Mapping[Label, float] | None) -> tuple[bool, float, float]:
        ms = [evaluate_judged(j, th, rule) for j in judged]
        held = all(fpr(j, th) <= bounds[j.ev.name] + 1e-12 for j in judged if j.ev.name in bounds)
        return held, sum(objective(m) for m in ms) / len(ms), sum(m["macro_f1"] for m in ms) / len(ms)

    base = score(None)
    best, best_th = base, None
    for ts in grid:
        for tc in grid:
            th = {SUPPORT: float(ts), CONTRADICT: float(tc)}
            s = score(th)
            if s > best:
                best, best_th = s, th
    names = ", ".join(
        f"{ev.name}: {'detection F1' if sum(ev.conflicted) >= MIN_CONFLICTS else 'pair macro-F1'}" for ev in sets
    )
    return Calibration(best_th, f"mean of ({names})", best[1], base[1], tuple(grid), bounds or None, best[0])
