"""The ConflictBench item: the ``score`` input format plus gold fields."""

from __future__ import annotations

from typing import Any, Sequence

from ..core.types import CONTRADICT, LABELS, SUPPORT
from .split import split_for

CONFLICT_TYPES: tuple[str, ...] = ("ambiguity", "misinformation", "counterfactual", "contradiction", "opinion", "none")


def make_item(
    *,
    source: str,
    id: str,
    question: str | None,
    claims: Sequence[str],
    documents: Sequence[dict[str, Any]],
    gold_labels: Sequence[Sequence[str]],
    conflict_type: str,
    split_key: str,
    variant: str | None = None,
    **meta: Any,
) -> dict[str, Any]:
    """One JSON-ready ConflictBench item.

    ``gold_conflicted[i]`` is derived from ``gold_labels[i]`` (some document supports claim
    i and another contradicts it), so scoring the gold labels always gives detection F1 = 1.
    ``conflict_type`` names the cause of the item's gold conflicts; it becomes ``none`` when
    no claim is conflicted. ``split`` is ``split_for(split_key)``.
    """
    if conflict_type not in CONFLICT_TYPES or conflict_type == "none":
        raise ValueError(f"conflict_type {conflict_type!r}; allowed: {', '.join(CONFLICT_TYPES[:-1])}")
    if len(gold_labels) != len(claims) or any(len(r) != len(documents) for r in gold_labels):
        raise ValueError(f"{id}: gold_labels must be claims × documents ({len(claims)} × {len(documents)})")
    for row in gold_labels:
        for lab in row:
            if lab not in LABELS:
                raise ValueError(f"{id}: gold label {lab!r}; allowed: {', '.join(LABELS)}")
    conflicted = [SUPPORT in row and CONTRADICT in row for row in gold_labels]
    item: dict[str, Any] = {"id": id}
    if question:
        item["question"] = question
    item.update(
        response=" ".join(claims),
        documents=list(documents),
        claims=list(claims),
        gold_labels=[list(r) for r in gold_labels],
        gold_conflicted=conflicted,
        conflict_type=conflict_type if any(conflicted) else "none",
        source=source,
        split=split_for(split_key),
        split_key=split_key,
    )
    if variant is not None:
        item["variant"] = variant
    item.update(meta)
    return item
