"""Judging each distinct (passage text, claim text) once.

A claim repeated across items, or a document shared by several items, makes pairs whose
texts are identical: the judges ask the model once per distinct pair and hand its
judgment to every pair it stands for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from ..core.types import Judgment, Pair


@dataclass(frozen=True)
class Distinct:
    """``first[u]``: the index in ``pairs`` of distinct pair ``u``; ``owner[i]``: the distinct
    pair that ``pairs[i]`` is; ``weight[u]``: how many pairs ``u`` stands for."""

    first: list[int]
    owner: list[int]
    weight: list[int]

    def spread(self, pairs: Sequence[Pair], judged: Sequence[Judgment]) -> list[Judgment]:
        """One judgment per pair (input order): its distinct pair's, addressed to it."""
        return [j if (j := judged[u]).pair is p else replace(j, pair=p) for p, u in zip(pairs, self.owner)]


def distinct(pairs: Sequence[Pair], order: Iterable[int] | None = None) -> Distinct:
    """The distinct (passage text, claim text) pairs of ``pairs``, numbered in ``order``
    (indices into ``pairs``; default: input order)."""
    slot: dict[tuple[str, str], int] = {}
    first: list[int] = []
    for i in range(len(pairs)) if order is None else order:
        key = (pairs[i].passage.text, pairs[i].claim.text)
        if key not in slot:
            slot[key] = len(first)
            first.append(i)
    owner = [slot[(p.passage.text, p.claim.text)] for p in pairs]
    weight = [0] * len(first)
    for u in owner:
        weight[u] += 1
    return Distinct(first, owner, weight)
