"""Reading items with errors that name file, line and field; atomic and resumable writing."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Iterator, Mapping

from .aggregate import item_metrics
from .errors import InputError
from .types import Claim, ClaimVerdict, DocJudgment, Document, Item, ItemResult, Label, normalize_label

ITEM_FIELDS = ("id", "question", "response", "documents", "claims", "labels")


def _type_name(v: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), type(v).__name__
    )


def parse_item(obj: Any, *, path: str | None = None, line: int | None = None) -> Item:
    """Validate one decoded JSON object and turn it into an :class:`Item`.

    Unknown top-level fields are kept in ``Item.meta`` (benchmark gold fields travel that
    way); unknown document fields in ``Document.meta``.
    """

    def err(field: str | None, msg: str) -> InputError:
        return InputError(msg, path=path, line=line, field=field)

    def want_str(v: Any, field: str, *, empty_ok: bool = True) -> str:
        if not isinstance(v, str):
            raise err(field, f"expected a string, got {_type_name(v)}")
        if not empty_ok and not v.strip():
            raise err(field, "must not be empty")
        return v

    if not isinstance(obj, dict):
        raise err(None, f"expected a JSON object, got {_type_name(obj)}")
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
        raise err("documents", f"expected an array, got {_type_name(docs_raw)}")
    docs: list[Document] = []
    seen_docs: set[str] = set()
    for j, d in enumerate(docs_raw):
        f = f"documents[{j}]"
        if not isinstance(d, dict):
            raise err(f, f"expected an object with 'id' and 'text', got {_type_name(d)}")
        for k in ("id", "text"):
            if k not in d:
                raise err(f"{f}.{k}", "missing")
        did = want_str(d["id"], f"{f}.id", empty_ok=False)
        if did in seen_docs:
            raise err(f"{f}.id", f"duplicate document id {did!r} in item {item_id!r}")
        seen_docs.add(did)
        text = want_str(d["text"], f"{f}.text")
        docs.append(Document(did, text, {k: v for k, v in d.items() if k not in ("id", "text")}))

    claims: tuple[str, ...] | None = None
    if obj.get("claims") is not None:
        cr = obj["claims"]
        if not isinstance(cr, list):
            raise err("claims", f"expected an array of strings, got {_type_name(cr)}")
        claims = tuple(want_str(c, f"claims[{i}]", empty_ok=False) for i, c in enumerate(cr))

    labels = None
    if obj.get("labels") is not None:
        lr = obj["labels"]
        if claims is None:
            raise err("labels", "given without 'claims' (labels[i][j] is claims[i] against documents[j])")
        labels = parse_label_matrix(lr, len(claims), len(docs), "labels", err)

    meta = {k: v for k, v in obj.items() if k not in ITEM_FIELDS}
    return Item(item_id, response, tuple(docs), question, claims, labels, meta)


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for every non-blank line of a JSONL file, ``line`` 1-based.

    Lines end at ``\\n`` only, as JSON Lines defines them: U+2028, U+0085 and the other
    characters ``str.splitlines`` breaks at may stand unescaped inside JSON strings. An
    unreadable file, a line that is not UTF-8 or not JSON is an :class:`InputError`
    naming the file and the line.
    """
    p = str(path)
    try:
        fh = open(p, "rb")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    with fh:
        for n, raw in enumerate(fh, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise InputError(f"not UTF-8 text: {e.reason} (byte {e.start + 1})", path=p, line=n) from None
            if not text.strip():
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as e:
                raise InputError(f"invalid JSON: {e.msg} (column {e.colno})", path=p, line=n) from None
            yield n, obj


def parse_label_matrix(
    raw: Any, n_claims: int, n_docs: int, field: str, err: Callable[[str, str], InputError]
) -> tuple[tuple[Label, ...], ...]:
    """Validate a claims × documents label matrix (``labels`` or a benchmark's ``gold_labels``).

    ``err(field, message)`` builds the error, so it names the caller's file and line.
    """
    if not isinstance(raw, list):
        raise err(field, f"expected an array of arrays, got {_type_name(raw)}")
    if len(raw) != n_claims:
        raise err(field, f"has {len(raw)} rows but there are {n_claims} claims (need claims × documents)")
    rows = []
    for i, row in enumerate(raw):
        if not isinstance(row, list):
            raise err(f"{field}[{i}]", f"expected an array, got {_type_name(row)}")
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


def iter_items(path: str | os.PathLike[str]) -> Iterator[Item]:
    """Yield the items of a JSONL file, validating as it goes (duplicate ids included).

    Blank lines are skipped. Errors carry the file, the 1-based line and the field.
    """
    p = str(path)
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(p):
        item = parse_item(obj, path=p, line=n)
        if item.id in seen:
            raise InputError(f"duplicate id {item.id!r} (first on line {seen[item.id]})", path=p, line=n, field="id")
        seen[item.id] = n
        yield item


def read_items(path: str | os.PathLike[str]) -> list[Item]:
    """All items of a JSONL file, validated before any model is loaded."""
    return list(iter_items(path))


def item_to_json(item: Item) -> dict[str, Any]:
    """The input-format JSON object of an item (inverse of :func:`parse_item`)."""
    out: dict[str, Any] = {"id": item.id}
    if item.question is not None:
        out["question"] = item.question
    out["response"] = item.response
    out["documents"] = [{"id": d.id, "text": d.text, **dict(d.meta)} for d in item.documents]
    if item.claims is not None:
        out["claims"] = list(item.claims)
    if item.labels is not None:
        out["labels"] = [list(r) for r in item.labels]
    out.update(item.meta)
    return out


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (inputs are fingerprinted by content, not by name)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def write_json_atomic(path: str | os.PathLike[str], obj: Any) -> None:
    """Write JSON to a temporary file beside ``path`` and rename it into place."""
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n")


def write_text_atomic(path: str | os.PathLike[str], text: str) -> None:
    """Write UTF-8 text to a temporary file beside ``path`` and rename it into place.

    The file gets the permissions a plain ``open`` would give (0666 less the umask), not
    the owner-only mode of the temporary file: summaries and reports are meant to be shared.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl_atomic(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write JSONL through a temporary file and an atomic rename."""
    with ResumableJsonlWriter(path, resume=False) as w:
        for r in rows:
            w.write(r)


class ResumableJsonlWriter:
    """JSONL output that is never half-written and can resume an interrupted run.

    Rows go to ``PATH.partial`` (flushed per row); ``close()`` renames it to ``PATH``. After a
    crash the partial file holds every finished row; with ``resume=True`` those rows (minus
    a truncated last line) are read back as :attr:`done` and kept (``resumed`` says whether
    there was a partial file; a finished ``PATH`` is never resumed from). ``fingerprint`` (the
    run's config) is stored beside the partial file, and resuming a run made with another
    config is refused rather than silently mixing results; ``keep`` filters recovered rows.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        resume: bool = False,
        fingerprint: Mapping[str, Any] | None = None,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
    ):
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.meta_path = self.path.with_name(self.path.name + ".partial.meta.json")
        self.done: list[dict[str, Any]] = []
        self.dropped = 0
        self.resumed = False
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if resume:
            rows = self._recover(fingerprint)
            self.done = [r for r in rows if keep is None or keep(r)]
            self.dropped = len(rows) - len(self.done)
        self._fh: IO[str] = open(self.partial, "w", encoding="utf-8")
        for row in self.done:
            self._write_line(row)
        self._fh.flush()
        if fingerprint is not None:
            write_json_atomic(self.meta_path, dict(fingerprint))
        self.closed = False

    def _recover(self, fingerprint: Mapping[str, Any] | None) -> list[dict[str, Any]]:
        if not self.partial.exists():
            return []
        self.resumed = True
        src = self.partial
        if fingerprint is not None and self.meta_path.exists():
            old = json.loads(self.meta_path.read_text(encoding="utf-8"))
            if old != json.loads(json.dumps(dict(fingerprint))):
                from .errors import ConfigError

                raise ConfigError(
                    f"--resume: {self.partial} was written with another configuration; "
                    "rerun with the same configuration, or without --resume to start over"
                )
        rows: list[dict[str, Any]] = []
        with open(src, encoding="utf-8") as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.endswith("\n"):
                    break  # the line a crash cut off
                try:
                    row = json.loads(raw)
                except json.JSONDecodeError:
                    break
                if not isinstance(row, dict):
                    raise InputError(f"--resume: not a scored result (a JSON {_type_name(row)})", path=str(src), line=n)
                rows.append(row)
        return rows

    def _write_line(self, row: Mapping[str, Any]) -> None:
        self._fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    def write(self, row: Mapping[str, Any]) -> None:
        self._write_line(row)
        self._fh.flush()

    def close(self) -> None:
        """Finish: fsync and rename the partial file onto the output path."""
        if self.closed:
            return
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self.partial, self.path)
        self.meta_path.unlink(missing_ok=True)
        self.closed = True

    def abort(self) -> None:
        """Stop without finishing: the partial file stays for ``--resume``."""
        if not self.closed:
            self._fh.close()
            self.closed = True

    def __enter__(self) -> "ResumableJsonlWriter":
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


def doc_judgment_from_json(d: Mapping[str, Any]) -> DocJudgment:
    """A :class:`DocJudgment` from its output JSON (inverse of ``DocJudgment.to_json``)."""
    return DocJudgment(
        doc_id=d["doc_id"],
        label=d["label"],
        probs=d.get("probs"),
        source=d["source"],
        passage=d.get("passage"),
        n_passages=d.get("n_passages", 1),
        similarity=d.get("similarity"),
        note=d.get("note"),
        both=d.get("both", False),
        passage_span=tuple(d["passage_span"]) if d.get("passage_span") else None,  # type: ignore[arg-type]
    )


def claim_verdict_from_json(item_id: str, index: int, d: Mapping[str, Any]) -> ClaimVerdict:
    """A :class:`ClaimVerdict` from its output JSON (inverse of ``ClaimVerdict.to_json``)."""
    span = d.get("span")
    return ClaimVerdict(
        claim=Claim(item_id, index, d["text"], tuple(span) if span else None),  # type: ignore[arg-type]
        support=tuple(d["support"]),
        contradict=tuple(d["contradict"]),
        irrelevant=tuple(d["irrelevant"]),
        unscored=tuple(d.get("unscored", ())),
        judgments=tuple(doc_judgment_from_json(j) for j in d["judgments"]),
    )


def result_from_json(d: Mapping[str, Any]) -> ItemResult:
    """An :class:`ItemResult` from one output line; the metrics are recomputed from the
    verdicts (``aggregate.item_metrics``), not trusted from the file."""
    verdicts = tuple(claim_verdict_from_json(d["id"], i, c) for i, c in enumerate(d["claims"]))
    return ItemResult(d["id"], verdicts, item_metrics(verdicts))


def read_results(path: str | os.PathLike[str]) -> list[ItemResult]:
    """Read a scored OUTPUT file back into :class:`ItemResult` objects."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            if raw.strip():
                try:
                    out.append(result_from_json(json.loads(raw)))
                except (json.JSONDecodeError, KeyError, TypeError, AttributeError, ValueError) as e:
                    raise InputError(f"not a scored result line: {e}", path=str(path), line=n) from None
    return out
