"""The input format: one JSON object per item, validated into an :class:`Item` (and written back).

Errors name the file, the 1-based line and the field (``documents[2].text``); unknown
top-level fields are kept in ``Item.meta`` (benchmark gold fields travel that way), unknown
document fields in ``Document.meta``.
"""

from __future__ import annotations

import math
import os
from typing import Any, Callable, Iterator

from .errors import InputError
from .jsonl import InputStats, iter_jsonl, json_type_name
from .types import Document, Item, Label, normalize_label

ITEM_FIELDS = ("id", "question", "response", "documents", "claims", "labels")
DOCUMENT_FIELDS = ("id", "text", "reliability")
_WEIGHT_NAMES = ("reliability", "reliabilities", "weight", "weights")
"""Names that mean source weights where none are read (an item's top level; ``weight`` on a document):
refused, since kept as metadata they would be ignored while the metrics read as weighted."""
_WHERE_WEIGHTS_GO = ("a source's weight is its document's reliability: documents[j].reliability, a number from 0 "
                     "to 1 (the weighted metrics read it; see docs/metrics.md)")


def _reliability(v: Any, field: str, err: Callable[[str, str], InputError]) -> float | None:
    """A document's optional ``reliability``: a number from 0 to 1 (null: not given)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 1:
        shown_v = json_type_name(v) if isinstance(v, (bool, str, list, dict)) else repr(v)
        raise err(field, f"expected a number from 0 to 1 (how far the source is trusted), got {shown_v}")
    return float(v)


def parse_item(obj: Any, *, path: str | None = None, line: int | None = None) -> Item:
    """Validate one decoded JSON object and turn it into an :class:`Item`.

    Unknown top-level fields are kept in ``Item.meta`` (benchmark gold fields travel that
    way); unknown document fields in ``Document.meta``.
    """

    def err(field: str | None, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=field)

    def want_str(v: Any, field: str, *, empty_ok: bool = True) -> str:
        if not isinstance(v, str):
            raise err(field, f"expected a string, got {json_type_name(v)}")
        if not empty_ok and not v.strip():
            raise err(field, "must not be empty")
        return v

    if not isinstance(obj, dict):
        raise err(None, f"expected a JSON object, got {json_type_name(obj)}")
    if "id" not in obj:
        raise err("id", "missing (every item needs a unique string id)")
    item_id = want_str(obj["id"], "id", empty_ok=False)
    question = obj.get("question")
    if question is not None:
        want_str(question, "question")
    if "response" not in obj and "claims" not in obj:
        raise err("response", "missing (give a response to decompose, or claims)")
    response = obj.get("response", "")
    if response is None:
        response = ""
    want_str(response, "response")
    if "documents" not in obj:
        raise err("documents", "missing (a list of {\"id\", \"text\"} objects)")
    docs_raw = obj["documents"]
    if not isinstance(docs_raw, list):
        raise err("documents", f"expected an array, got {json_type_name(docs_raw)}")
    docs: list[Document] = []
    seen_docs: set[str] = set()
    for j, d in enumerate(docs_raw):
        f = f"documents[{j}]"
        if not isinstance(d, dict):
            raise err(f, f"expected an object with 'id' and 'text', got {json_type_name(d)}")
        for k in ("id", "text"):
            if k not in d:
                raise err(f"{f}.{k}", "missing")
        did = want_str(d["id"], f"{f}.id", empty_ok=False)
        if did in seen_docs:
            raise err(f"{f}.id", f"duplicate document id {did!r} in item {item_id!r}")
        seen_docs.add(did)
        text = want_str(d["text"], f"{f}.text")
        for k in _WEIGHT_NAMES[1:]:
            if k in d:
                raise err(f"{f}.{k}", f"not a document field: {_WHERE_WEIGHTS_GO}")
        reliability = _reliability(d.get("reliability"), f"{f}.reliability", err)
        docs.append(Document(did, text, {k: v for k, v in d.items() if k not in DOCUMENT_FIELDS}, reliability))

    claims: tuple[str, ...] | None = None
    if obj.get("claims") is not None:
        cr = obj["claims"]
        if not isinstance(cr, list):
            raise err("claims", f"expected an array of strings, got {json_type_name(cr)}")
        claims = tuple(want_str(c, f"claims[{i}]", empty_ok=False) for i, c in enumerate(cr))

    labels = None
    if obj.get("labels") is not None:
        lr = obj["labels"]
        if claims is None:
            raise err("labels", "given without 'claims' (labels[i][j] is claims[i] against documents[j])")
        labels = parse_label_matrix(lr, len(claims), len(docs), "labels", err)

    for k in _WEIGHT_NAMES:
        if k in obj:
            raise err(k, f"not an item field: {_WHERE_WEIGHTS_GO}")
    meta = {k: v for k, v in obj.items() if k not in ITEM_FIELDS}
    return Item(item_id, response, tuple(docs), question, claims, labels, meta)


def parse_label_matrix(
    raw: Any, n_claims: int, n_docs: int, field: str, err: Callable[[str, str], InputError]
) -> tuple[tuple[Label, ...], ...]:
    """Validate a claims × documents label matrix (``labels`` or a benchmark's ``gold_labels``).

    ``err(field, message)`` builds the error, so it names the caller's file and line.
    """
    if not isinstance(raw, list):
        raise err(field, f"expected an array of arrays, got {json_type_name(raw)}")
    if len(raw) != n_claims:
        raise err(field, f"has {len(raw)} rows but there are {n_claims} claims (need claims × documents)")
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, list):
            raise err(f"{field}[{i}]", f"expected an array, got {json_type_name(row)}")
        if len(row) != n_docs:
            raise err(f"{field}[{i}]", f"has {len(row)} labels but there are {n_docs} documents (need claims × documents)")
        out_row = []
        for j, lab in enumerate(row):
            try:
                out_row.append(normalize_label(lab))
            except ValueError as e:
                raise err(f"{field}[{i}][{j}]", str(e)) from None
        rows.append(tuple(out_row))
    return tuple(rows)


def iter_items(path: str | os.PathLike[str], stats: InputStats | None = None) -> Iterator[Item]:
    """Yield the items of a JSONL file, validating as it goes (duplicate ids included).

    Blank lines are skipped (and counted in ``stats``). Errors carry the file, the 1-based
    line and the field.
    """
    p = str(path)
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(p, stats):
        item = parse_item(obj, path=p, line=n)
        if item.id in seen:
            raise InputError(f"duplicate id {item.id!r} (first on line {seen[item.id]})", path=p, line=n, field="id")
        seen[item.id] = n
        yield item


def read_items(path: str | os.PathLike[str], stats: InputStats | None = None) -> list[Item]:
    """All items of a JSONL file, validated before any model is loaded; ``stats`` gets the
    file's sha256 and line counts from the same single read."""
    return list(iter_items(path, stats))


def item_to_json(item: Item) -> dict[str, Any]:
    """The input-format JSON object of an item (inverse of :func:`parse_item`)."""
    out: dict[str, Any] = {"id": item.id}
    if item.question is not None:
        out["question"] = item.question
    out["response"] = item.response
    out["documents"] = [{"id": d.id, "text": d.text, **({"reliability": d.reliability} if d.reliability is not None
                                                         else {}), **dict(d.meta)} for d in item.documents]
    if item.claims is not None:
        out["claims"] = list(item.claims)
    if item.labels is not None:
        out["labels"] = [list(r) for r in item.labels]
    out.update(item.meta)
    return out
