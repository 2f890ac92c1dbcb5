"""ConflictBench's gold: items read with their gold fields checked, and scored results measured
against them (pair metrics, detection per group, unscored and pruning counts).

Below ``bench run``; the ``report`` command hands :func:`read_items_checked` and :func:`gold_evaluation`
to the HTML report, which shows the same figures for a scored file (and imports no bench).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any, Iterable, Sequence

from ..core.detection import grouped_detection, pair_metrics
from ..core.errors import InputError
from ..core.types import CONTRADICT, IRRELEVANT, LABELS, SUPPORT, Item, ItemResult
from ..formats.inputs import parse_label_matrix, read_items
from .items import CONFLICT_TYPES
from .split import SPLITS

DETECTION_GROUPS: tuple[str, ...] = ("conflict_type", "source", "variant", "split")


def _item_lines(path: str | os.PathLike[str]) -> list[int]:
    """The line number of each item, in the order ``read_items`` returns them (blank lines skipped)."""
    with open(path, encoding="utf-8") as fh:
        return [n for n, raw in enumerate(fh, 1) if raw.strip()]


def _check_gold(item: Item, path: str, line: int) -> Item:
    """The item with its gold fields validated and its gold labels in canonical spelling."""

    def err(field: str, msg: str) -> InputError:
        return InputError(f"item {item.id!r}: {msg}", path=path, line=line, field=field)

    m = item.meta
    if item.labels is not None:
        raise err(
            "labels",
            "a ConflictBench item must not carry 'labels' (they would skip judging); "
            "use --given-labels to score the gold labels",
        )
    if item.claims is None:
        raise err("claims", "missing (ConflictBench items give their claims)")
    if "gold_labels" not in m:
        raise err("gold_labels", "missing (claims × documents gold labels)")
    gold = parse_label_matrix(m["gold_labels"], len(item.claims), len(item.documents), "gold_labels", err)
    conf = m.get("gold_conflicted")
    derived = [SUPPORT in row and CONTRADICT in row for row in gold]
    if conf != derived:
        raise err("gold_conflicted", f"{conf!r} disagrees with gold_labels, which give {derived!r}")
    if m.get("conflict_type") not in CONFLICT_TYPES:
        raise err("conflict_type", f"{m.get('conflict_type')!r}; allowed: {', '.join(CONFLICT_TYPES)}")
    if m.get("split") not in SPLITS:
        raise err("split", f"{m.get('split')!r}; allowed: {', '.join(SPLITS)}")
    if not isinstance(m.get("source"), str):
        raise err("source", "missing (the name of the source data set)")
    return dataclasses.replace(item, meta={**m, "gold_labels": [list(row) for row in gold]})


def load_bench_items(
    path: str | os.PathLike[str],
    *,
    split: str | None = None,
    limit: int | None = None,
    source_filter: Sequence[str] | None = None,
) -> list[Item]:
    """Read and validate ConflictBench items; keep ``split`` and ``source_filter``, then the first ``limit``."""
    p = str(path)
    items = [_check_gold(it, p, line) for it, line in zip(read_items(p), _item_lines(p))]
    return select_bench_items(items, split=split, limit=limit, source_filter=source_filter)


def select_bench_items(
    items: Sequence[Item],
    *,
    split: str | None = None,
    limit: int | None = None,
    source_filter: Sequence[str] | None = None,
) -> list[Item]:
    """The items of ``split`` and ``source_filter`` (each when given), then the first ``limit``."""
    items = list(items)
    if split is not None:
        items = [it for it in items if it.meta["split"] == split]
    if source_filter:
        items = [it for it in items if it.meta["source"] in source_filter]
    if limit is not None:
        items = items[:limit]
    return items


def read_items_checked(path: str | os.PathLike[str]) -> list[Item]:
    """A run's input items; ConflictBench items (with ``gold_labels``) get their gold checked."""
    items = read_items(path)
    if any("gold_labels" in it.meta for it in items):
        items = load_bench_items(path)
    return items


def gold_evaluation(items: Sequence[Item], results: Sequence[ItemResult]) -> dict[str, Any] | None:
    """:func:`evaluate` of scored items when every one carries gold labels, else None."""
    if not items or not all("gold_labels" in it.meta for it in items):
        return None
    return evaluate(items, results)


def with_gold_labels(items: Iterable[Item]) -> list[Item]:
    """The items with their gold labels given as ``labels``: scoring them checks the aggregation."""
    return [dataclasses.replace(it, labels=tuple(tuple(row) for row in it.meta["gold_labels"])) for it in items]


def evaluate(items: Sequence[Item], results: Sequence[ItemResult]) -> dict[str, Any]:
    """Pair metrics, grouped detection metrics, unscored and pruning counts of scored items."""
    pairs: list[tuple[str, str | None]] = []
    rows: list[dict[str, Any]] = []
    pruned: dict[str, int] = {"pairs": 0, **{lab: 0 for lab in LABELS}}
    claims_unscored = 0
    for it, res in zip(items, results):
        if res.item_id != it.id:
            raise ValueError(f"result {res.item_id!r} does not belong to item {it.id!r}")
        doc_index = {d.id: j for j, d in enumerate(it.documents)}
        m = it.meta
        for v in res.verdicts:
            i = v.claim.index  # its row of the gold (a sampled run scores only some claims)
            gold_row = m["gold_labels"][i]
            for dj in v.judgments:
                gold = gold_row[doc_index[dj.doc_id]]
                pairs.append((gold, dj.label))
                if dj.source == "pruned":
                    pruned["pairs"] += 1
                    pruned[gold] += 1
            claims_unscored += bool(v.unscored)
            rows.append(
                {
                    "gold": bool(m["gold_conflicted"][i]),
                    "pred": v.conflicted,
                    "conflict_type": m["conflict_type"],
                    "source": m["source"],
                    "split": m["split"],
                    "variant": f"{m['source']}/{m['variant'].split(':')[-1]}" if m.get("variant") else None,
                }
            )
    pm = pair_metrics(pairs)
    return {
        "pairs": pm,
        "detection": grouped_detection(rows, DETECTION_GROUPS),
        "unscored": {"pairs": pm["unscored"], "claims_with_unscored_documents": claims_unscored},
        "pruning": {
            "pairs_pruned": pruned["pairs"],
            "gold_support_pruned": pruned[SUPPORT],
            "gold_contradict_pruned": pruned[CONTRADICT],
            "gold_irrelevant_pruned": pruned[IRRELEVANT],
        },
    }
