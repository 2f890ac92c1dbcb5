"""Claim sampling: score at most K claims of each item (``--claims-per-item K``).

The claim × document matrix is quadratic; the paper names "sampling salient claims" as its
lightweight variant. A rule picks which K claims of an item are judged, the others are left
out of the item's verdicts (the output records how many the item had and each scored
claim's index), and the summary says how many claims were scored of how many
(:func:`sampling_summary`). Rules (``sample.selection``):

- ``first``: the first K, in response order;
- ``longest``: the K longest (most characters; ties: the earlier);
- ``salient``: the K most checkable, by the scorer handed in (the engine's is
  :class:`~conflictscore_local.util.nlp.Salience`: numbers and dates, named entities, the question's
  words, :func:`salience_score`; ties: the earlier);
- ``random``: K drawn uniformly, seeded by ``engine.seed`` and the item id, so an item gets
  the same claims in every run, shard and batch.

Scored claims stay in response order. Measured against the full matrix in
``benchmarks/results/pipeline/claim_sampling.md`` (``benchmarks/pipeline/claim_sampling.py``).
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping, Sequence

from .aggregate import topic_words
from .types import Claim, ItemResult

Selection = Callable[..., "list[int]"]
"""A claim selection: ``(claims, k, *, seed, question, salience)`` → the indices of the ``k`` claims to score."""

FEATURE_CAP = 2
"""Numbers (and names) counted per claim at most: the third date adds nothing to checkability."""
QUESTION_WEIGHT = 2.0
"""Weight of the share of the question's words a claim repeats (0–1) against the counts (0–2 each)."""


def salience_score(n_numbers: int, n_names: int, question_overlap: float) -> float:
    """min(numbers, 2) + min(names, 2) + 2 × the share of the question's words in the claim."""
    return min(n_numbers, FEATURE_CAP) + min(n_names, FEATURE_CAP) + QUESTION_WEIGHT * question_overlap


def question_overlap(claim: str, question: str | None) -> float:
    """The share of the question's content words (:func:`~.aggregate.topic_words`) the claim holds."""
    q = topic_words(question or "")
    return len(q & topic_words(claim)) / len(q) if q else 0.0


def select_claims(
    claims: Sequence[Claim],
    k: int,
    rule: str,
    *,
    seed: int = 0,
    question: str | None = None,
    salience: Callable[[Sequence[str], str | None], list[float]] | None = None,
) -> list[Claim]:
    """The claims of one item to score: all of them when ``k`` is 0 or they are at most ``k``,
    else ``k`` of them by ``rule`` (see the module docstring), in response order."""
    if rule not in SELECTIONS:
        raise ValueError(f"claim selection {rule!r}; allowed: {', '.join(SELECTIONS)}")
    if k <= 0 or len(claims) <= k:
        return list(claims)
    keep = SELECTIONS[rule](claims, k, seed=seed, question=question, salience=salience)
    return [claims[i] for i in sorted(keep)]


def _first(claims: Sequence[Claim], k: int, **_: Any) -> list[int]:
    return list(range(k))


def _random(claims: Sequence[Claim], k: int, *, seed: int = 0, **_: Any) -> list[int]:
    return random.Random(f"{seed}:{claims[0].item_id}").sample(range(len(claims)), k)


def _top(key: Sequence[float], k: int) -> list[int]:
    return sorted(range(len(key)), key=lambda i: (-key[i], i))[:k]


def _longest(claims: Sequence[Claim], k: int, **_: Any) -> list[int]:
    return _top([float(len(c.text)) for c in claims], k)


def _salient(
    claims: Sequence[Claim],
    k: int,
    *,
    question: str | None = None,
    salience: Callable[[Sequence[str], str | None], list[float]] | None = None,
    **_: Any,
) -> list[int]:
    if salience is None:
        raise ValueError(
            "claim selection 'salient' needs its scorer: salience=conflictscore_local.util.nlp."
            "Salience().scores (spaCy's entities), or any function (claims, question) → scores"
        )
    return _top(salience([c.text for c in claims], question), k)


SELECTIONS: dict[str, Selection] = {"first": _first, "longest": _longest, "salient": _salient, "random": _random}
"""The claim selections of ``--claim-selection``, by name: the registry's ``claim_selection`` namespace."""


INTERVAL_NOTE = (
    "ci95: bootstrap over items of the per-item values computed on the scored claims. For selection=random "
    "it covers the claim sampling as well (each item's value is an unbiased estimate, resampled whole); "
    "first, longest and salient choose deterministically, so the interval says nothing of how far their "
    "choice is from the full matrix (measured: benchmarks/results/pipeline/claim_sampling.md)."
)


def sampling_summary(
    results: Sequence[ItemResult],
    sample: Mapping[str, Any],
    *,
    seed: int,
    ci95: Mapping[str, Any],
    counts: Mapping[str, int] | None = None,
    salience: Mapping[str, Any] | None = None,
) -> dict[str, Any] | None:
    """The summary's ``sampling`` record, or None when ``sample`` (the ``[sample]`` settings)
    scores every claim: the rule, claims scored of how many, the judge pairs the left-out claims
    did not form (from the engine's ``counts``: this run's work) and the estimator's interval."""
    k = int(sample.get("claims_per_item") or 0)
    if not k:
        return None
    total = sum(r.claims_total if r.claims_total is not None else len(r.verdicts) for r in results)
    out: dict[str, Any] = {
        "claims_per_item": k,
        "selection": str(sample.get("selection", "first")),
        "seed": seed,
        "claims": total,
        "claims_scored": sum(len(r.verdicts) for r in results),
        "items_sampled": sum(1 for r in results if r.claims_total is not None and r.claims_total > len(r.verdicts)),
    }
    if counts is not None:
        skipped, formed = counts.get("passage_pairs_skipped_by_sampling", 0), counts.get("passage_pairs", 0)
        out["passage_pairs_skipped"] = skipped
        out["passage_pairs_saved_share"] = round(skipped / (skipped + formed), 6) if skipped + formed else 0.0
    if salience:
        out["salience"] = dict(salience)
    out["ci95"] = {key: (list(v) if v is not None else None) for key, v in ci95.items()}
    out["interval"] = INTERVAL_NOTE
    return out


__all__ = ["SELECTIONS", "question_overlap", "salience_score", "sampling_summary", "select_claims"]
