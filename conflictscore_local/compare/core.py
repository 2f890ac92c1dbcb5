"""Two scored runs, item by item and claim by claim: what changed from A to B and whether it is noise.

Items are matched by id (those in one run only are counted and listed). For every metric of
the table, over the items where both runs define it: the mean of each, the paired difference
B − A (the mean of the per-item differences), its percentile bootstrap 95% interval (the item
pairs resampled, :func:`~conflictscore_local.core.metrics.bootstrap_columns`, the summary's one
resampling implementation), an exact two-sided sign test and a paired permutation test
(every item's difference flipped in sign at random: exact up to :data:`EXACT_PERMUTATION_MAX`
items with a difference, else ``permutations`` seeded draws).

Claims are matched within a matched item by their text (the k-th claim of a text in A with the
k-th of the same text in B): two judges on the same claims match every claim, two prompting
strategies rarely do, so their comparison rests on the item level. A matched claim that
changed state is listed with its documents: newly conflicted, no longer conflicted, support
gained or lost, contradiction gained or lost, and each document whose label changed. The
conflicted status of matched claims also gets an exact McNemar test (the sign test on the
claims that changed). Pure Python but for the bootstrap and large permutation tests (numpy).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..backends.arguments import check_ranges, ranged
from ..core.metrics import METRICS, bootstrap_columns, shown_keys
from ..core.types import ClaimVerdict, ItemResult

EXACT_PERMUTATION_MAX = 16
"""Up to this many non-zero differences the permutation test enumerates every sign pattern (2^16)."""
FORMAT = 1
CHANGES: tuple[str, ...] = (
    "newly_conflicted",
    "no_longer_conflicted",
    "support_gained",
    "support_lost",
    "contradiction_gained",
    "contradiction_lost",
    "labels_changed",
)
"""The ways a matched claim can change from A to B (``labels_changed``: a document's label, whatever else)."""


@dataclass(frozen=True)
class ComparisonSettings:
    """How the uncertainty is drawn: bootstrap resamples (0: no interval), permutations and one seed."""

    seed: int = ranged(0, 0, 2**63 - 1)
    bootstrap: int = ranged(1000, 0, 1_000_000, what="bootstrap (0: no interval)")
    permutations: int = ranged(10000, 1, 10_000_000)
    alpha: float = ranged(0.05, 0.0, 1.0, low_open=True, high_open=True)

    def __post_init__(self) -> None:
        check_ranges(self, where="compare")


def sign_test(differences: Sequence[float]) -> float:
    """Exact two-sided sign test of "B − A is as often positive as negative" (zeros left out); 1.0 with none."""
    pos = sum(1 for d in differences if d > 0)
    neg = sum(1 for d in differences if d < 0)
    m = pos + neg
    if m == 0:
        return 1.0
    tail = sum(math.comb(m, i) for i in range(min(pos, neg) + 1))
    return min(1.0, 2 * tail / 2**m)


def permutation_test(differences: Sequence[float], *, permutations: int = 10000, seed: int = 0) -> float:
    """Two-sided paired permutation test of "the mean difference is 0": each difference's sign
    flipped at random; p = the share of sign patterns whose |sum| is at least the observed one.
    Exact (every pattern) up to :data:`EXACT_PERMUTATION_MAX` non-zero differences, else
    ``(1 + hits) / (1 + permutations)`` over seeded random patterns. 1.0 with no difference."""
    import numpy as np

    d = np.asarray([x for x in differences if x != 0], dtype=np.float64)
    m = len(d)
    if m == 0:
        return 1.0
    observed = abs(float(d.sum()))
    tol = 1e-9 * max(1.0, observed)
    if m <= EXACT_PERMUTATION_MAX:
        patterns = ((np.arange(2**m)[:, None] >> np.arange(m)) & 1) * 2 - 1
        return float(np.mean(np.abs(patterns @ d) >= observed - tol))
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, permutations, 4096):
        rows = min(4096, permutations - start)
        signs = rng.integers(0, 2, size=(rows, m)) * 2 - 1
        hits += int(np.sum(np.abs(signs @ d) >= observed - tol))
    return (1 + hits) / (1 + permutations)


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def paired_metrics(
    a: Mapping[str, ItemResult], b: Mapping[str, ItemResult], ids: Sequence[str], settings: ComparisonSettings
) -> dict[str, dict[str, Any]]:
    """Per metric: items paired, each run's mean over them, B − A with its interval and p-values."""
    in_b = set(shown_keys([r.metrics for r in b.values()]))
    keys = [k for k in shown_keys([r.metrics for r in a.values()]) if k in in_b]
    diffs: dict[str, list[float]] = {}
    out: dict[str, dict[str, Any]] = {}
    for k in keys:
        pairs = [
            (x, y) for i in ids if (x := a[i].metrics.get(k)) is not None and (y := b[i].metrics.get(k)) is not None
        ]
        d = [y - x for x, y in pairs]
        diffs[k] = d
        metric = METRICS[k]
        out[k] = {
            "label": metric.label,
            "higher_is_better": metric.higher_is_better,
            "n": len(pairs),
            "a": _mean([x for x, _ in pairs]),
            "b": _mean([y for _, y in pairs]),
            "diff": _mean(d),
            "b_higher": sum(1 for x in d if x > 0),
            "a_higher": sum(1 for x in d if x < 0),
            "ties": sum(1 for x in d if x == 0),
            "p_sign": sign_test(d),
            "p_permutation": permutation_test(d, permutations=settings.permutations, seed=settings.seed),
        }
    cis = bootstrap_columns(diffs, n_resamples=settings.bootstrap, seed=settings.seed)
    for k in keys:
        ci = cis[k]
        out[k]["ci95"] = list(ci) if ci is not None else None
        out[k]["verdict"] = verdict(out[k], settings.alpha)
    return out


def verdict(entry: Mapping[str, Any], alpha: float = 0.05) -> str:
    """``"B higher"`` or ``"B lower"`` when the permutation test's p is below ``alpha`` and the
    bootstrap interval leaves out 0; else ``"no detectable difference"``; ``"not compared"``
    when no item defines the metric in both runs."""
    if not entry["n"] or entry["diff"] is None:
        return "not compared"
    ci = entry.get("ci95")
    if entry["p_permutation"] >= alpha or (ci is not None and ci[0] <= 0 <= ci[1]) or entry["diff"] == 0:
        return "no detectable difference"
    return "B higher" if entry["diff"] > 0 else "B lower"


def describe_difference(key: str, entry: Mapping[str, Any]) -> str:
    """One line for a person: B − A with its interval and p-values, and the verdict."""
    if entry["n"] == 0 or entry["diff"] is None:
        return f"{entry['label']}: no item defines it in both runs"
    ci = entry.get("ci95")
    shown_ci = f" [{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else ""
    better = ""
    if entry["verdict"] in ("B higher", "B lower") and entry["higher_is_better"] is not None:
        good = (entry["verdict"] == "B higher") == entry["higher_is_better"]
        better = " (B better)" if good else " (B worse)"
    return (
        f"{entry['label']}: A {entry['a']:.3f}, B {entry['b']:.3f}, B − A {entry['diff']:+.3f}{shown_ci} over "
        f"{entry['n']} items (B higher on {entry['b_higher']}, lower on {entry['a_higher']}); p = "
        f"{entry['p_permutation']:.3g} (permutation), {entry['p_sign']:.3g} (sign): {entry['verdict']}{better}"
    )


def _state(v: ClaimVerdict) -> dict[str, Any]:
    return {
        "index": v.claim.index,
        "support": list(v.support),
        "contradict": list(v.contradict),
        "conflicted": v.conflicted,
        "ratio": v.ratio,
    }


def claim_changes(va: ClaimVerdict, vb: ClaimVerdict) -> tuple[list[str], list[dict[str, Any]]]:
    """How one claim changed from A to B (names from :data:`CHANGES`) and the documents whose label changed."""
    changes = []
    if va.conflicted != vb.conflicted:
        changes.append("newly_conflicted" if vb.conflicted else "no_longer_conflicted")
    if bool(va.support) != bool(vb.support):
        changes.append("support_gained" if vb.support else "support_lost")
    if bool(va.contradict) != bool(vb.contradict):
        changes.append("contradiction_gained" if vb.contradict else "contradiction_lost")
    la = {j.doc_id: j.label for j in va.judgments}
    lb = {j.doc_id: j.label for j in vb.judgments}
    docs = [
        {"doc_id": d, "a": la.get(d), "b": lb.get(d)}
        for d in list(la) + [d for d in lb if d not in la]
        if la.get(d) != lb.get(d)
    ]
    if docs:
        changes.append("labels_changed")
    return changes, docs


def match_claims(ra: ItemResult, rb: ItemResult) -> tuple[list[tuple[ClaimVerdict, ClaimVerdict]], int, int]:
    """Claims of one item matched by text (k-th occurrence with k-th); counts of A's and B's unmatched."""
    by_text: dict[str, list[ClaimVerdict]] = defaultdict(list)
    for v in rb.verdicts:
        by_text[v.claim.text].append(v)
    seen: Counter[str] = Counter()
    pairs = []
    for v in ra.verdicts:
        k = seen[v.claim.text]
        seen[v.claim.text] += 1
        if k < len(by_text[v.claim.text]):
            pairs.append((v, by_text[v.claim.text][k]))
    return pairs, len(ra.verdicts) - len(pairs), len(rb.verdicts) - len(pairs)


def compare_results(
    a: Sequence[ItemResult], b: Sequence[ItemResult], settings: ComparisonSettings | None = None
) -> dict[str, Any]:
    """The comparison of run B against run A (see the module docstring), as JSON-ready data."""
    settings = settings or ComparisonSettings()
    by_a = {r.item_id: r for r in a}
    by_b = {r.item_id: r for r in b}
    ids = [r.item_id for r in a if r.item_id in by_b]
    only_a = [i for i in by_a if i not in by_b]
    only_b = [i for i in by_b if i not in by_a]
    changed: list[dict[str, Any]] = []
    per_item: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    table: Counter[tuple[bool, bool]] = Counter()
    matched = unmatched_a = unmatched_b = 0
    for i in ids:
        ra, rb = by_a[i], by_b[i]
        pairs, ua, ub = match_claims(ra, rb)
        matched, unmatched_a, unmatched_b = matched + len(pairs), unmatched_a + ua, unmatched_b + ub
        item_counts: Counter[str] = Counter()
        for va, vb in pairs:
            table[(va.conflicted, vb.conflicted)] += 1
            kinds, docs = claim_changes(va, vb)
            if kinds:
                item_counts.update(kinds)
                changed.append(
                    {
                        "item_id": i,
                        "text": va.claim.text,
                        "changes": kinds,
                        "a": _state(va),
                        "b": _state(vb),
                        "documents": docs,
                    }
                )
        counts.update(item_counts)
        per_item.append(
            {
                "id": i,
                "a": dict(ra.metrics.values),
                "b": dict(rb.metrics.values),
                "claims_a": len(ra.verdicts),
                "claims_b": len(rb.verdicts),
                "claims_matched": len(pairs),
                "changes": {k: item_counts[k] for k in CHANGES if item_counts[k]},
            }
        )
    newly, gone = table[(False, True)], table[(True, False)]
    return {
        "format": FORMAT,
        "items": {
            "a": len(by_a),
            "b": len(by_b),
            "matched": len(ids),
            "only_a": len(only_a),
            "only_b": len(only_b),
            "only_a_ids": only_a,
            "only_b_ids": only_b,
        },
        "metrics": paired_metrics(by_a, by_b, ids, settings),
        "claims": {
            "a": sum(len(by_a[i].verdicts) for i in ids),
            "b": sum(len(by_b[i].verdicts) for i in ids),
            "matched": matched,
            "only_a": unmatched_a,
            "only_b": unmatched_b,
            "changes": {k: counts[k] for k in CHANGES},
            "conflicted": {
                "both": table[(True, True)],
                "a_only": gone,
                "b_only": newly,
                "neither": table[(False, False)],
                "p_mcnemar": sign_test([1.0] * newly + [-1.0] * gone),
            },
        },
        "changed_claims": changed,
        "per_item": per_item,
        "settings": {
            "seed": settings.seed,
            "bootstrap": settings.bootstrap,
            "permutations": settings.permutations,
            "alpha": settings.alpha,
        },
    }


__all__ = [
    "CHANGES",
    "ComparisonSettings",
    "claim_changes",
    "compare_results",
    "describe_difference",
    "match_claims",
    "paired_metrics",
    "permutation_test",
    "sign_test",
    "verdict",
]
