"""The comparison page: two scored runs side by side (``conflictscore compare --report``).

Built like the run report (:mod:`.render`): one Jinja2 template, the report's stylesheet and
Content-Security-Policy, inline script, data in the page (the item index as JSON, the side by
side claims as gzip + base64). The metrics table and the claim counts are plain HTML.
"""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from .._version import __version__
from ..compare.core import CHANGES, match_claims
from ..core.errors import InputError
from ..core.metrics import METRICS
from ..core.types import ClaimVerdict, Item, ItemResult
from ..jobs import write_text_atomic
from .data import VALUE_DIGITS, ItemsReader
from .render import PAGE_SIZE, _environment, _static, pack_details
from .runs import report_beside

CHANGE_LABELS: dict[str, str] = {
    "newly_conflicted": "newly conflicted",
    "no_longer_conflicted": "no longer conflicted",
    "support_gained": "support gained",
    "support_lost": "support lost",
    "contradiction_gained": "contradiction gained",
    "contradiction_lost": "contradiction lost",
    "labels_changed": "a document's label changed",
}


def _round(v: float | None) -> float | None:
    return None if v is None else round(float(v), VALUE_DIGITS)


def _claim(v: ClaimVerdict) -> dict[str, Any]:
    out: dict[str, Any] = {"x": v.claim.text, "k": int(v.conflicted), "s": list(v.support), "c": list(v.contradict)}
    if v.ratio is not None:
        out["r"] = _round(v.ratio)
    return out


def _rows(ra: ItemResult | None, rb: ItemResult | None) -> list[dict[str, Any]]:
    """One row per claim: matched claims side by side (A's order), then A's and B's unmatched ones."""
    from ..compare.core import claim_changes

    if ra is None or rb is None:
        only = ra or rb
        side = "a" if ra is not None else "b"
        return [{side: _claim(v)} for v in only.verdicts]  # type: ignore[union-attr]  # the caller passes at least one side
    pairs, _, _ = match_claims(ra, rb)
    used_a = {id(va) for va, _ in pairs}
    used_b = {id(vb) for _, vb in pairs}
    rows: list[dict[str, Any]] = []
    for va, vb in pairs:
        kinds, docs = claim_changes(va, vb)
        row: dict[str, Any] = {"a": _claim(va), "b": _claim(vb)}
        if kinds:
            row["ch"] = kinds
        if docs:
            row["dl"] = [[d["doc_id"], d["a"], d["b"]] for d in docs]
        rows.append(row)
    rows += [{"a": _claim(v)} for v in ra.verdicts if id(v) not in used_a]
    rows += [{"b": _claim(v)} for v in rb.verdicts if id(v) not in used_b]
    return rows


def compare_records(
    result: Mapping[str, Any],
    a: Sequence[ItemResult],
    b: Sequence[ItemResult],
    items: Mapping[str, Item] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The page's item index (what the table sorts and filters on) and one side-by-side record per
    item (with its response and document texts when ``items`` has it)."""
    by_a = {r.item_id: r for r in a}
    by_b = {r.item_id: r for r in b}
    codes = {k: METRICS[k].code for k in result["metrics"]}
    index: list[dict[str, Any]] = []
    details: list[dict[str, Any]] = []
    for row in result["per_item"]:
        i = row["id"]
        if i not in by_a or i not in by_b:
            raise InputError(f"item {i!r} of the comparison is not in both runs: the comparison is not of these files")
        entry: dict[str, Any] = {
            "id": i,
            "side": "both",
            "na": row["claims_a"],
            "nb": row["claims_b"],
            "nm": row["claims_matched"],
            "ch": row["changes"],
        }
        for k, code in codes.items():
            x, y = row["a"].get(k), row["b"].get(k)
            entry[f"a{code}"], entry[f"b{code}"] = _round(x), _round(y)
            entry[f"d{code}"] = _round(y - x) if x is not None and y is not None else None
        index.append(entry)
        details.append(_texts({"rows": _rows(by_a[i], by_b[i])}, items, i))
    for side, ids, runs in (("a", result["items"]["only_a_ids"], by_a), ("b", result["items"]["only_b_ids"], by_b)):
        for i in ids:
            r = runs[i]
            entry = {
                "id": i,
                "side": side,
                "na": len(r.verdicts) if side == "a" else 0,
                "nb": len(r.verdicts) if side == "b" else 0,
                "nm": 0,
                "ch": {},
            }
            for k, code in codes.items():
                v = _round(r.metrics.get(k))
                entry[f"a{code}"], entry[f"b{code}"] = (v, None) if side == "a" else (None, v)
                entry[f"d{code}"] = None
            index.append(entry)
            details.append(_texts({"rows": _rows(r if side == "a" else None, r if side == "b" else None)}, items, i))
    return index, details


def _texts(detail: dict[str, Any], items: Mapping[str, Item] | None, item_id: str) -> dict[str, Any]:
    """An item's response (``r``) and documents (``dt``: [id, text] pairs) added to its record, when known."""
    it = items.get(item_id) if items is not None else None
    if it is not None:
        detail["r"] = it.response
        detail["dt"] = [[d.id, d.text] for d in it.documents]
    return detail


def compare_csv_meta(result: Mapping[str, Any]) -> dict[str, Any]:
    """The "download CSV" button's file name and columns (:mod:`conflictscore_local.compare.table`'s
    names, each with the index key it reads; a claim change reads ``ch[change]``)."""
    from ..compare.table import comparison_columns

    fixed = {"id": "id", "side": "side", "claims_a": "na", "claims_b": "nb", "claims_matched": "nm"}
    codes = {
        f"{side}_{k}": f"{'d' if side == 'diff' else side}{METRICS[k].code}"
        for k in result["metrics"]
        for side in ("a", "b", "diff")
    }
    columns = [[c, fixed.get(c) or codes.get(c) or ["ch", c]] for c in comparison_columns(result)]
    name = f"compare.{result['a']['label']}.{result['b']['label']}.csv".replace("/", "_")
    return {"items": name, "columns": columns}


def render_compare(
    result: Mapping[str, Any],
    a: Sequence[ItemResult],
    b: Sequence[ItemResult],
    *,
    title: str | None = None,
    items: Mapping[str, Item] | None = None,
    reports: Mapping[str, str] | None = None,
) -> str:
    """The comparison page as one self-contained HTML string (``items``: the runs' input by id,
    whose responses and documents it shows; ``reports``: ``"a"`` / ``"b"`` → the link to that run's
    own report, relative to the page)."""
    from markupsafe import Markup

    env = _environment()
    index, details = compare_records(result, a, b, items)
    metrics = [
        {"key": k, "code": METRICS[k].code, "column": METRICS[k].column, **m} for k, m in result["metrics"].items()
    ]
    changes = [{"key": k, "label": CHANGE_LABELS[k], "n": result["claims"]["changes"][k]} for k in CHANGES]
    la, lb = result["a"]["label"], result["b"]["label"]
    return env.get_template("compare.html.j2").render(
        title=title or f"ConflictScore comparison: {lb} against {la}",
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        version=__version__,
        result=result,
        metrics=metrics,
        changes=changes,
        config_json=json.dumps(result.get("config_differences", []), indent=2, ensure_ascii=False),
        index=index,
        reports=dict(reports or {}),
        details_packed=pack_details(details),
        meta={
            "page_size": PAGE_SIZE,
            "labels": [la, lb],
            "metrics": [
                {"key": m["key"], "code": m["code"], "column": m["column"], "hb": m["higher_is_better"]}
                for m in metrics
            ],
            "changes": CHANGE_LABELS,
            "csv": compare_csv_meta(result),
        },
        css=Markup(_static("report.css") + "\n" + _static("compare.css")),
        js=Markup(_static("common.js") + "\n" + _static("compare.js")),
    )


def write_compare_report(
    path: str | os.PathLike[str],
    result: Mapping[str, Any],
    a: Sequence[ItemResult],
    b: Sequence[ItemResult],
    *,
    title: str | None = None,
    items: str | os.PathLike[str] | None = None,
    read: "ItemsReader | None" = None,
    scored: Mapping[str, str | os.PathLike[str]] | None = None,
) -> int:
    """Render the comparison page and write it atomically to ``path``; returns its size in bytes.
    ``items``: the runs' input file (responses and documents shown), read by ``read`` (default
    ``read_items``; the command hands in the bench's, which checks gold). ``scored``: ``"a"`` / ``"b"``
    → each run's scored file; the report beside it (:func:`~.runs.report_beside`) is linked, relatively."""
    by_id = None
    if items is not None:
        from ..formats.inputs import read_items

        by_id = {it.id: it for it in (read or read_items)(items)}
    page = render_compare(result, a, b, title=title, items=by_id, reports=reports_beside(path, scored or {}))
    return write_text_atomic(path, page, what="report")


def reports_beside(page: str | os.PathLike[str], scored: Mapping[str, str | os.PathLike[str]]) -> dict[str, str]:
    """Each run's report (the HTML page of the same stem beside its scored file) as a link relative to ``page``."""
    from urllib.parse import quote

    here = os.path.dirname(os.path.realpath(page))
    out = {}
    for side, path in scored.items():
        found = report_beside(path, besides=page)
        if found is not None:
            out[side] = quote(Path(os.path.relpath(os.path.realpath(found), here)).as_posix())
    return out


__all__ = ["compare_records", "render_compare", "reports_beside", "write_compare_report"]
