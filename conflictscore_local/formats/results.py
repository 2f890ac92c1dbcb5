"""Scored output read back: ``score``'s OUTPUT lines as :class:`ItemResult` objects (a run's summary is
read and checked by :mod:`.summary`).

The format itself is :mod:`..core.types`' (``to_json`` / ``from_json``); here every line is validated
as input is (its type and each field's, an :class:`InputError` naming file, line and field), and
each item's metrics are recomputed from its verdicts with the metric table, never trusted from
the file. ``merge``, ``report`` and ``--resume`` read scored rows through here.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping

from ..core.errors import InputError
from ..core.metrics import item_metrics, macro, micro
from ..core.types import LABELS, PROVENANCES, ItemResult
from ..util.jsonl import iter_jsonl, json_type_name
from .table import Results


def result_from_json(d: Mapping[str, Any], *, path: str | None = None, line: int | None = None) -> ItemResult:
    """An :class:`ItemResult` from one output line, checked field by field (``path`` and
    ``line`` locate an error); the metrics are recomputed from the verdicts."""
    check_result_row(d, path=path, line=line)
    return ItemResult.from_json(d, item_metrics)


def read_results(path: str | os.PathLike[str]) -> Results:
    """Read a scored OUTPUT file back into :class:`ItemResult` objects (every line checked), as a
    :class:`~conflictscore_local.formats.table.Results` list (``to_records()``, ``to_pandas()``)."""
    p = str(path)
    return Results(result_from_json(row, path=p, line=n) for n, row in iter_jsonl(p))


def check_result_row(d: Any, *, path: str | None = None, line: int | None = None) -> None:
    """:class:`InputError` naming the first field of ``d`` that a scored result cannot have."""

    def bad(field: str | None, why: str) -> InputError:
        return InputError(f"not a scored result line: {why}", path=path, line=line, field=field)

    if not isinstance(d, Mapping):
        raise bad(None, f"a JSON {json_type_name(d)}, not an object")
    if not isinstance(d.get("id"), str):
        raise bad("id", f"expected a string, got {_kind(d.get('id'))}")
    claims = d.get("claims")
    if not isinstance(claims, list):
        raise bad("claims", f"expected a list of claim verdicts, got {_kind(claims)}")
    for i, c in enumerate(claims):
        at = f"claims[{i}]"
        if not isinstance(c, Mapping):
            raise bad(at, f"expected an object, got {_kind(c)}")
        if not isinstance(c.get("text"), str):
            raise bad(f"{at}.text", f"expected a string, got {_kind(c.get('text'))}")
        for key in ("support", "contradict", "irrelevant", "unscored"):
            ids = c.get(key, [] if key == "unscored" else None)
            if not (isinstance(ids, list) and all(isinstance(x, str) for x in ids)):
                raise bad(f"{at}.{key}", f"expected a list of document ids, got {_kind(ids)}")
        if "conflicted" in c and not isinstance(c["conflicted"], bool):
            raise bad(f"{at}.conflicted", f"expected true or false, got {_kind(c['conflicted'])}")
        if c.get("ratio") is not None and not (_finite(c["ratio"]) and 0 <= c["ratio"] <= 1):
            raise bad(f"{at}.ratio", f"expected null or a number from 0 to 1, got {_kind(c['ratio'])}")
        if c.get("span") is not None and not _pair_of_ints(c["span"]):
            raise bad(f"{at}.span", f"expected [start, end], got {_kind(c['span'])}")
        if "index" in c and not (_int(c["index"]) and c["index"] >= 0):
            raise bad(f"{at}.index", f"expected the claim's index (a whole number >= 0), got {_kind(c['index'])}")
        if c.get("min_side_weight") is not None and not (_finite(c["min_side_weight"]) and c["min_side_weight"] >= 0):
            raise bad(f"{at}.min_side_weight", f"expected a number >= 0, got {_kind(c['min_side_weight'])}")
        judgments = c.get("judgments")
        if not isinstance(judgments, list):
            raise bad(f"{at}.judgments", f"expected a list, got {_kind(judgments)}")
        for j, dj in enumerate(judgments):
            _check_judgment(dj, f"{at}.judgments[{j}]", bad)
    total = d.get("claims_total")
    if total is not None and not (_int(total) and total >= len(claims)):
        raise bad("claims_total", f"expected a whole number >= the {len(claims)} claims scored, got {_kind(total)}")


def _check_judgment(dj: Any, at: str, bad: Any) -> None:
    if not isinstance(dj, Mapping):
        raise bad(at, f"expected an object, got {_kind(dj)}")
    if not isinstance(dj.get("doc_id"), str):
        raise bad(f"{at}.doc_id", f"expected a string, got {_kind(dj.get('doc_id'))}")
    if dj.get("label") is not None and dj["label"] not in LABELS:
        raise bad(f"{at}.label", f"{dj['label']!r}; allowed: {', '.join(LABELS)} or null")
    if dj.get("source") not in PROVENANCES:
        raise bad(f"{at}.source", f"{dj.get('source')!r}; allowed: {', '.join(PROVENANCES)}")
    probs = dj.get("probs")
    if probs is not None and not (
        isinstance(probs, Mapping) and all(isinstance(k, str) and _finite(v) for k, v in probs.items())
    ):
        raise bad(f"{at}.probs", f"expected null or an object of finite numbers, got {_kind(probs)}")
    for key, ok in (
        ("passage", lambda v: v is None or _int(v)),
        ("n_passages", _int),
        ("similarity", lambda v: v is None or _finite(v)),
        ("note", lambda v: v is None or isinstance(v, str)),
        ("both", lambda v: isinstance(v, bool)),
        ("passage_span", lambda v: v is None or _pair_of_ints(v)),
        ("weight", lambda v: v is None or (_finite(v) and 0 <= v <= 1)),
        ("decided_by", lambda v: v is None or isinstance(v, str)),
        ("rule", lambda v: v is None or isinstance(v, str)),
    ):
        if key in dj and not ok(dj[key]):
            raise bad(f"{at}.{key}", f"not a valid value: {_kind(dj[key])}")


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _pair_of_ints(v: Any) -> bool:
    return isinstance(v, list) and len(v) == 2 and all(_int(x) for x in v)


def _kind(v: Any) -> str:
    from ..core.errors import shown

    return f"a JSON {json_type_name(v)} {shown(v, 40, as_json=True)}" if v is not None else "nothing"


def check_summary_of(
    summary: Mapping[str, Any],
    results: list[ItemResult] | tuple[ItemResult, ...],
    *,
    summary_path: str,
    scored_path: str,
) -> None:
    """:class:`InputError` unless ``summary`` (read by :func:`~.summary.read_summary`, so in this
    release's schema) describes ``results``: the same number of items and claims and the same macro
    and micro metrics (recomputed from the rows' verdicts). A summary of another run would lend it
    its configuration and figures."""
    n_claims = sum(len(r.verdicts) for r in results)
    for what, recorded, have in (
        ("items", summary.get("n_items"), len(results)),
        ("claims", summary.get("n_claims"), n_claims),
    ):
        if recorded is not None and recorded != have:
            raise InputError(
                f"describes {recorded} {what} but {scored_path} holds {have}: not the summary of that run",
                path=summary_path,
            )
    found = {"macro": macro([r.metrics for r in results]), "micro": micro(list(results))}
    for kind, values in found.items():
        recorded = summary.get(kind)
        if not isinstance(recorded, Mapping):
            continue
        for key, given in values.items():
            was = recorded.get(key)
            if key not in recorded or (was is None and given is None):
                continue
            if was is None or given is None or not _finite(was) or not math.isclose(was, given, abs_tol=1e-9):
                raise InputError(
                    f"{kind} {key} is {was} but the rows of {scored_path} give {given}: not the summary of that run",
                    path=summary_path,
                    field=f"{kind}.{key}",
                )
