"""A comparison as a table: one row per item, A, B and B − A of every metric, and its claim changes
(``compare --csv``, and the columns of the comparison page's "download CSV")."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.types import ItemResult
from .core import CHANGES


def comparison_columns(result: Mapping[str, Any]) -> list[str]:
    """The columns of a comparison's item rows: id, which runs have it, claim counts, A, B and
    B − A of every compared metric, then the count of each kind of claim change."""
    metrics = [f"{side}_{k}" for k in result["metrics"] for side in ("a", "b", "diff")]
    return ["id", "side", "claims_a", "claims_b", "claims_matched", *metrics, *CHANGES]


def comparison_records(
    result: Mapping[str, Any], a: Sequence[ItemResult], b: Sequence[ItemResult]
) -> list[dict[str, Any]]:
    """One record per item of a comparison (``side``: both, a or b), keyed by :func:`comparison_columns`."""
    keys = list(result["metrics"])
    out = []
    for row in result["per_item"]:
        rec: dict[str, Any] = {
            "id": row["id"],
            "side": "both",
            "claims_a": row["claims_a"],
            "claims_b": row["claims_b"],
            "claims_matched": row["claims_matched"],
        }
        for k in keys:
            x, y = row["a"].get(k), row["b"].get(k)
            rec.update({f"a_{k}": x, f"b_{k}": y, f"diff_{k}": y - x if x is not None and y is not None else None})
        rec.update({c: row["changes"].get(c, 0) for c in CHANGES})
        out.append(rec)
    for side, ids, runs in (("a", result["items"]["only_a_ids"], a), ("b", result["items"]["only_b_ids"], b)):
        by_id = {r.item_id: r for r in runs}
        for i in ids:
            r = by_id[i]
            rec = {
                "id": i,
                "side": side,
                "claims_a": len(r.verdicts) if side == "a" else 0,
                "claims_b": len(r.verdicts) if side == "b" else 0,
                "claims_matched": 0,
            }
            for k in keys:
                rec.update(
                    {
                        f"a_{k}": r.metrics.get(k) if side == "a" else None,
                        f"b_{k}": r.metrics.get(k) if side == "b" else None,
                        f"diff_{k}": None,
                    }
                )
            rec.update({c: 0 for c in CHANGES})
            out.append(rec)
    return out


__all__ = ["comparison_columns", "comparison_records"]
