"""The input format: one JSON object per item, validated into an :class:`Item` (and written back).

Four shapes are read, each line on its own (:data:`SHAPES`): this project's (``id``,
``question``, ``response``, ``documents``), RAGAS' (``user_input``, ``response``,
``retrieved_contexts``), classic RAGAS rows (``question``, ``answer``, ``contexts``, with
``ground_truth``) and DeepEval's (``input``, ``actual_output``, ``retrieval_context``); a file is
JSON Lines or one JSON array of such objects (what ``json.dump`` writes). Documents may be objects
or plain strings; a string, or an object without ``id``, gets the id ``d0``, ``d1``, … (its
position); an item without ``id`` gets ``item-N``, N its 1-based position among the items, from a
file and from the Python API alike. What was read and what was made is counted in
:class:`InputShapes` (the summary's ``stages.input``).

Errors name the file, the 1-based line and the field as the line spelled it
(``retrieved_contexts[2]``); a missing field that another key resembles names the key the line has
and the field to rename it to; unknown top-level fields are kept in ``Item.meta`` (benchmark gold
fields travel that way), unknown document fields in ``Document.meta``, and one that looks like a
misspelled or synonymous field (``weight`` for ``reliability``) is warned about once per file, with
its line and the field to rename it to.
"""

from __future__ import annotations

import difflib
import logging
import math
import os
from collections import Counter
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..core.errors import InputError
from ..core.types import Document, Item, Label, normalize_label
from ..util.jsonl import InputStats, iter_records, json_type_name

log = logging.getLogger(__name__)

ITEM_FIELDS = ("id", "question", "response", "documents", "claims", "labels")
DOCUMENT_FIELDS = ("id", "text", "reliability")
NATIVE = "conflictscore"


@dataclass(frozen=True)
class Shape:
    """One input shape: which of its keys carry the question, the response and the documents
    (``ids``: a key holding the documents' ids, RAGAS' ``retrieved_context_ids``), the keys that
    tell a line is of this shape (any of ``marks``, and every one of ``needs``), its other known keys
    (kept in ``Item.meta`` quietly) and how a note names it (``title``)."""

    name: str
    question: str
    response: str
    documents: str
    marks: tuple[str, ...]
    ids: str | None = None
    others: tuple[str, ...] = ()
    needs: tuple[str, ...] = ()
    title: str = ""

    @property
    def fields(self) -> tuple[str, ...]:
        own = (self.question, self.response, self.documents) + ((self.ids,) if self.ids else ())
        return ("id",) + own + ("claims", "labels") + self.others


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in (
        Shape(NATIVE, "question", "response", "documents", ("documents",)),
        Shape(
            "ragas",
            "user_input",
            "response",
            "retrieved_contexts",
            ("user_input", "retrieved_contexts"),
            ids="retrieved_context_ids",
            others=("reference", "reference_contexts", "multi_responses", "rubrics", "reference_context_ids"),
            title="RAGAS samples (user_input, response, retrieved_contexts)",
        ),
        Shape(
            "deepeval",
            "input",
            "actual_output",
            "retrieval_context",
            ("actual_output", "retrieval_context"),
            others=(
                "expected_output",
                "context",
                "tools_called",
                "expected_tools",
                "name",
                "additional_metadata",
                "comments",
            ),
            title="DeepEval test cases (input, actual_output, retrieval_context)",
        ),
        # RAGAS before 0.2 (and the datasets written for it): a line with both answer and contexts; one with only
        # one of them is this project's shape, whose error names the field to rename
        Shape(
            "ragas-classic",
            "question",
            "answer",
            "contexts",
            ("contexts",),
            needs=("answer",),
            others=("ground_truth", "ground_truths", "reference"),
            title="classic RAGAS rows (question, answer, contexts)",
        ),
    )
}
"""The shapes an input line may have, by name (the summary records which were read)."""

SYNONYMS: dict[str, str] = {
    # item level: what other tools call the fields
    "answer": "response",
    "output": "response",
    "generation": "response",
    "prediction": "response",
    "query": "question",
    "prompt": "question",
    "docs": "documents",
    "contexts": "documents",
    "passages": "documents",
    "evidence": "documents",
    "sources": "documents",
    # document level
    "weight": "reliability",
    "trust": "reliability",
    "credibility": "reliability",
    "confidence": "reliability",
    "reliable": "reliability",
    "content": "text",
    "body": "text",
    "passage": "text",
    "page_content": "text",
    "doc_id": "id",
    "document_id": "id",
}
"""Keys that mean a field under another name: "did you mean" names the field."""


def suggestion(key: str, fields: Iterable[str]) -> str | None:
    """The field ``key`` probably means (a synonym, or the closest spelling), or None."""
    fields = list(fields)
    if SYNONYMS.get(key.lower()) in fields:
        return SYNONYMS[key.lower()]
    close = difflib.get_close_matches(key.lower(), fields, n=1, cutoff=0.75)
    return close[0] if close else None


@dataclass
class InputShapes:
    """What reading items saw of their shapes: lines per shape, ids made for items and for
    documents, and the keys already warned about (each once); :meth:`record` is the summary's part."""

    shapes: Counter = dc_field(default_factory=Counter)
    ids_made: int = 0
    document_ids_made: int = 0
    warned: set = dc_field(default_factory=set)
    warn: Callable[[str], None] | None = None

    def note(self, key: Any, message: str) -> None:
        """``message``, once per ``key``."""
        if key in self.warned:
            return
        self.warned.add(key)
        (self.warn or log.warning)(message)

    def record(self) -> dict[str, Any]:
        """``shape`` (one name, or ``mixed`` with ``shapes`` per name) and the ids made, when any."""
        names = [k for k in SHAPES if self.shapes[k]]
        out: dict[str, Any] = {"shape": names[0] if len(names) == 1 else ("mixed" if names else NATIVE)}
        if len(names) > 1:
            out["shapes"] = {k: self.shapes[k] for k in names}
        if self.ids_made:
            out["ids_made"] = self.ids_made
        if self.document_ids_made:
            out["document_ids_made"] = self.document_ids_made
        return out

    def described(self) -> str | None:
        """What a note says was read, when it is another tool's shape (``classic RAGAS rows (...)``), else None."""
        names = [k for k in SHAPES if self.shapes[k]]
        if names == [NATIVE] or not names:
            return None
        return " and ".join(
            f"{self.shapes[k]} {SHAPES[k].title or k}" if len(names) > 1 else (SHAPES[k].title or k) for k in names
        )


def rename_hint(have: str, wanted: str, *, holder: str = "line") -> str:
    """The hint of a key that looks like a field: which key the line has and the field to rename it to."""
    return f"the {holder} has '{have}': rename it to '{wanted}'"


def shape_of(obj: Mapping[str, Any]) -> Shape:
    """The shape of one decoded line: this project's when it has ``documents``, else the first
    whose marks it has, else this project's (whose errors then say what is missing)."""
    if "documents" in obj:
        return SHAPES[NATIVE]
    for s in SHAPES.values():
        if any(k in obj for k in s.marks) and all(k in obj for k in s.needs):
            return s
    return SHAPES[NATIVE]


_WEIGHT_NAMES = ("reliability", "reliabilities", "weight", "weights")
"""Names that mean source weights where none are read, at an item's top level: refused, since kept
as metadata they would be ignored while the metrics read as weighted (a document's ``weight`` is
warned about: did you mean 'reliability'?)."""
_WHERE_WEIGHTS_GO = (
    "a source's weight is its document's reliability: documents[j].reliability, a number from 0 "
    "to 1 (the weighted metrics read it; see docs/metrics.md)"
)


def _reliability(v: Any, field: str, err: Callable[[str, str], InputError]) -> float | None:
    """A document's optional ``reliability``: a number from 0 to 1 (null: not given)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not 0 <= v <= 1:
        shown_v = json_type_name(v) if isinstance(v, (bool, str, list, dict)) else repr(v)
        raise err(field, f"expected a number from 0 to 1 (how far the source is trusted), got {shown_v}")
    return float(v)


def parse_item(
    obj: Any,
    *,
    path: str | None = None,
    line: int | None = None,
    made_id: str | None = None,
    shapes: InputShapes | None = None,
) -> Item:
    """Validate one decoded JSON object (of any shape of :data:`SHAPES`) and turn it into an :class:`Item`.

    An item without ``id`` gets ``made_id`` (``item-N``, its position: :func:`iter_items` and
    :func:`as_items` give it), else ``item-LINE``; without either it is refused. ``shapes`` counts the
    shape read and the ids made, and warns (once per key) about keys that look like a misspelled field.
    Unknown top-level fields are kept in ``Item.meta`` (benchmark gold fields travel that way); unknown
    document fields in ``Document.meta``.
    """
    seen = shapes if shapes is not None else InputShapes()

    def err(field: str | None, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=field)

    def want_str(v: Any, field: str, *, empty_ok: bool = True) -> str:
        if not isinstance(v, str):
            raise err(field, f"expected a string, got {json_type_name(v)}")
        if not empty_ok and not v.strip():
            raise err(field, "must not be empty")
        return v

    def mean(keys: Iterable[str], wanted: str, *, among: Mapping[str, Any]) -> str:
        """``; the line has 'key': rename it to 'wanted'`` for a key of ``among`` resembling it, or ''."""
        for k in keys:
            if wanted not in among and isinstance(k, str) and suggestion(k, [wanted]) == wanted:
                return "; " + rename_hint(k, wanted)
        return ""

    if not isinstance(obj, dict):
        raise err(None, f"expected a JSON object, got {json_type_name(obj)}")
    shape = shape_of(obj)
    _one_shape_per_role(obj, err)
    unknown = [k for k in obj if k not in shape.fields]
    if "id" in obj:
        item_id = want_str(obj["id"], "id", empty_ok=False)
    else:
        made = made_id if made_id is not None else (f"item-{line}" if line is not None else None)
        if made is None:
            raise err("id", "missing (every item needs a unique string id)" + mean(unknown, "id", among=obj))
        item_id = made
        seen.ids_made += 1
    question = obj.get(shape.question)
    if question is not None:
        want_str(question, shape.question)
    if shape.response not in obj and "claims" not in obj:
        raise err(
            shape.response,
            "missing (give a response to decompose, or claims)" + mean(unknown, shape.response, among=obj),
        )
    response = obj.get(shape.response, "")
    if response is None:
        response = ""
    want_str(response, shape.response)
    if shape.documents not in obj:
        hint = mean(unknown, shape.documents, among=obj)
        raise err(
            shape.documents,
            ('missing (a list of document texts, or of {"id", "text"} objects)' + hint)
            if shape.name == NATIVE
            else "missing (a list of document texts)" + hint,
        )
    docs = _documents(obj, shape, item_id, err, want_str, seen, line)

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

    optional = [
        f for f in ("id", shape.question, "claims", "labels") + ((shape.ids,) if shape.ids else ()) if f not in obj
    ]
    for k in unknown:
        meant = suggestion(k, optional) if isinstance(k, str) and len(k) > 2 else None
        if meant is not None:
            seen.note(
                ("item", k),
                f"{_at(path, line)}: unknown field '{k}' (kept as metadata, not read): rename it "
                f"to '{meant}' to have it read (warned once per file)",
            )
    for k in _WEIGHT_NAMES:
        if k in obj:
            raise err(k, f"not an item field: {_WHERE_WEIGHTS_GO}")
    seen.shapes[shape.name] += 1
    read = {"id", shape.question, shape.response, shape.documents, shape.ids, "claims", "labels"}
    meta = {k: v for k, v in obj.items() if k not in read}
    return Item(item_id, response, tuple(docs), question, claims, labels, meta)


def _one_shape_per_role(obj: Mapping[str, Any], err: Callable[[str | None, str], InputError]) -> None:
    """Refuse a line that gives the response or the documents under two shapes' keys (``documents`` beside
    ``retrieved_contexts``, ``response`` beside ``actual_output``): read as one shape, the other would be
    dropped into metadata without a word."""
    for role in ("response", "documents"):
        keys: dict[str, str] = {}
        for s in SHAPES.values():
            if getattr(s, role) in obj:
                keys.setdefault(getattr(s, role), s.name)
        if len(keys) > 1:
            (a, sa), (b, sb) = list(keys.items())[:2]
            raise err(
                b,
                f"beside '{a}': both give the {role} ('{a}' of the {sa} shape, '{b}' of the {sb} "
                "shape), and one would be dropped; keep one of them",
            )


def _at(path: str | None, line: int | None) -> str:
    return ":".join(str(x) for x in (path, line) if x is not None) or "input"


def _documents(
    obj: Mapping[str, Any],
    shape: Shape,
    item_id: str,
    err: Callable[[str | None, str], InputError],
    want_str: Callable[..., str],
    seen: InputShapes,
    line: int | None,
) -> list[Document]:
    """The documents of one line: strings (ids ``d0``, ``d1``, …, or RAGAS' ``retrieved_context_ids``)
    or objects with ``text`` (and ``id``, made the same way when missing, and ``reliability``)."""
    key = shape.documents
    raw = obj[key]
    if not isinstance(raw, list):
        raise err(key, f"expected an array, got {json_type_name(raw)}")
    given_ids = obj.get(shape.ids) if shape.ids else None
    if given_ids is not None:
        if not isinstance(given_ids, list) or len(given_ids) != len(raw):
            raise err(
                shape.ids,
                f"expected an array of {len(raw)} ids (one per entry of {key}), got "
                + (f"{len(given_ids)}" if isinstance(given_ids, list) else json_type_name(given_ids)),
            )
        for j, x in enumerate(given_ids):
            want_str(x, f"{shape.ids}[{j}]", empty_ok=False)
    docs: list[Document] = []
    seen_docs: set[str] = set()
    for j, d in enumerate(raw):
        f = f"{key}[{j}]"
        if isinstance(d, str):
            d = {"text": d}
            if given_ids is not None:
                d["id"] = given_ids[j]
        elif not isinstance(d, dict):
            raise err(f, f"expected a string or an object with 'text', got {json_type_name(d)}")
        if "text" not in d:
            hint = next(
                (
                    "; " + rename_hint(k, "text", holder="document")
                    for k in d
                    if isinstance(k, str) and suggestion(k, ["text"]) == "text"
                ),
                "",
            )
            raise err(f"{f}.text", "missing" + hint)
        if "id" in d:
            did = want_str(d["id"], f"{f}.id", empty_ok=False)
        else:
            did = f"d{j}"
            seen.document_ids_made += 1
        if did in seen_docs:
            raise err(f"{f}.id", f"duplicate document id {did!r} in item {item_id!r}")
        seen_docs.add(did)
        text = want_str(d["text"], f"{f}.text")
        for k in _WEIGHT_NAMES[1::2]:  # reliabilities, weights: plural, never a document's
            if k in d:
                raise err(f"{f}.{k}", f"not a document field: {_WHERE_WEIGHTS_GO}")
        reliability = _reliability(d.get("reliability"), f"{f}.reliability", err)
        extra = {k: v for k, v in d.items() if k not in DOCUMENT_FIELDS}
        for k in extra:
            meant = suggestion(k, [x for x in DOCUMENT_FIELDS if x not in d]) if len(k) > 2 else None
            if meant is not None:
                seen.note(
                    ("document", k),
                    f"{_at(err(None, '').path, line)}: {f}.{k} is not a document field (kept "
                    f"as metadata, not read): rename it to '{meant}' to have it read (warned once per file)",
                )
        docs.append(Document(did, text, extra, reliability))
    return docs


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
            raise err(
                f"{field}[{i}]", f"has {len(row)} labels but there are {n_docs} documents (need claims × documents)"
            )
        out_row = []
        for j, lab in enumerate(row):
            try:
                out_row.append(normalize_label(lab))
            except ValueError as e:
                raise err(f"{field}[{i}][{j}]", str(e)) from None
        rows.append(tuple(out_row))
    return tuple(rows)


def iter_items(
    path: str | os.PathLike[str], stats: InputStats | None = None, shapes: InputShapes | None = None
) -> Iterator[Item]:
    """Yield the items of a JSONL file (or of a file holding one JSON array of items), validating as
    it goes (duplicate ids included).

    Blank lines are skipped (and counted in ``stats``); ``shapes`` counts the shapes read and
    the ids made (``item-N``, N the item's position). Errors carry the file, the 1-based line (an
    array's item: the line it starts on) and the field.
    """
    p = str(path)
    seen: dict[str, int] = {}
    shapes = shapes if shapes is not None else InputShapes()
    for k, (n, obj) in enumerate(iter_records(p, stats), 1):
        item = parse_item(obj, path=p, line=n, made_id=f"item-{k}", shapes=shapes)
        if item.id in seen:
            raise InputError(f"duplicate id {item.id!r} (first on line {seen[item.id]})", path=p, line=n, field="id")
        seen[item.id] = n
        yield item


def read_items(
    path: str | os.PathLike[str], stats: InputStats | None = None, shapes: InputShapes | None = None
) -> list[Item]:
    """All items of a JSONL (or JSON array) file, validated before any model is loaded; ``stats`` gets the
    file's sha256 and line counts from the same single read, ``shapes`` the shapes read."""
    return list(iter_items(path, stats, shapes))


def as_items(items: Iterable[Item | Mapping[str, Any]], shapes: InputShapes | None = None) -> list[Item]:
    """Items as the Python API takes them: :class:`Item` objects, or objects of any input shape
    (validated as a line is, named ``item N`` in errors, 1-based; an object without ``id`` gets
    ``item-N``); duplicate ids refused."""
    out: list[Item] = []
    seen: dict[str, int] = {}
    shapes = shapes if shapes is not None else InputShapes()
    for n, x in enumerate(items, 1):
        item = x if isinstance(x, Item) else parse_item(x, path=f"item {n}", made_id=f"item-{n}", shapes=shapes)
        if item.id in seen:
            raise InputError(f"duplicate id {item.id!r} (first: item {seen[item.id]})", path=f"item {n}", field="id")
        seen[item.id] = n
        out.append(item)
    return out


def item_to_json(item: Item) -> dict[str, Any]:
    """The input-format JSON object of an item (inverse of :func:`parse_item`)."""
    out: dict[str, Any] = {"id": item.id}
    if item.question is not None:
        out["question"] = item.question
    out["response"] = item.response
    out["documents"] = [
        {
            "id": d.id,
            "text": d.text,
            **({"reliability": d.reliability} if d.reliability is not None else {}),
            **dict(d.meta),
        }
        for d in item.documents
    ]
    if item.claims is not None:
        out["claims"] = list(item.claims)
    if item.labels is not None:
        out["labels"] = [list(r) for r in item.labels]
    out.update(item.meta)
    return out
