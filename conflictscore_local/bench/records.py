"""Reading source files record by record, with errors that name file, line and field."""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any, Iterator

from ..core.errors import InputError
from ..util.jsonl import iter_jsonl

_TYPE_NAMES = {str: "a string", list: "an array", dict: "an object", int: "an integer", float: "a number"}


class Record:
    """One decoded record of a source file; field lookups fail with file, line and field."""

    def __init__(self, obj: Any, path: str, line: int, where: str = ""):
        self.path, self.line, self.where = path, line, where
        if not isinstance(obj, dict):
            raise self.error(None, f"expected a JSON object, got {type(obj).__name__}")
        self.obj: dict[str, Any] = obj

    def error(self, field: str | None, message: str) -> InputError:
        name = f"{self.where}{field}" if field else (self.where.rstrip(".") or None)
        return InputError(message, path=self.path, line=self.line, field=name)

    def get(self, field: str, kind: type | tuple[type, ...], *, default: Any = ..., nonempty: bool = False) -> Any:
        """``obj[field]`` checked against ``kind``; missing → ``default`` or an error."""
        if field not in self.obj or self.obj[field] is None:
            if default is not ...:
                return default
            raise self.error(field, "missing")
        v = self.obj[field]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(v, kinds) or isinstance(v, bool) and bool not in kinds:
            want = " or ".join(_TYPE_NAMES.get(k, k.__name__) for k in kinds)
            raise self.error(field, f"expected {want}, got {type(v).__name__}")
        if nonempty and not v:
            raise self.error(field, "must not be empty")
        return v

    def text(self, field: str, *, default: Any = ...) -> str:
        """A non-empty string field."""
        v = self.get(field, str, default=default)
        if v is default:
            return v
        if not v.strip():
            raise self.error(field, "must not be empty")
        return v

    def str_list(self, field: str) -> list[str]:
        """A non-empty list of non-empty strings."""
        out = self.get(field, list, nonempty=True)
        for k, v in enumerate(out):
            if not isinstance(v, str) or not v.strip():
                raise self.error(f"{field}[{k}]", f"expected a non-empty string, got {v!r}")
        return out

    def literal_list(self, field: str) -> list[Any]:
        """A list that some exports store as its Python repr (``"[{'answer': ...}]"``)."""
        v = self.get(field, (list, str), default=[])
        if isinstance(v, str):
            if not v.strip():
                return []
            try:
                v = ast.literal_eval(v)
            except (ValueError, SyntaxError):
                raise self.error(field, "a string that is neither a list nor a Python-repr list") from None
            if not isinstance(v, list):
                raise self.error(field, f"expected a list, got {type(v).__name__}")
        return v

    def sub(self, obj: Any, where: str) -> Record:
        """A nested object (``documents[3]``) reported at this record's line."""
        return Record(obj, self.path, self.line, f"{self.where}{where}.")


def iter_records(path: str | Path) -> Iterator[Record]:
    """Records of a JSONL file or of a JSON array file, each with the line it starts on."""
    p = str(path)
    if not _is_json_array(p):
        for n, obj in iter_jsonl(p):
            yield Record(obj, p, n)
        return
    try:
        text = Path(p).read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text: {e.reason} (byte {e.start + 1})", path=p) from None
    yield from _array_records(text, p)


def _is_json_array(path: str) -> bool:
    """Whether the file's first non-blank character is ``[``; False when it cannot be opened
    (:func:`iter_jsonl` then reports why)."""
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(4096):
                head = chunk.lstrip(b" \t\r\n")
                if head:
                    return head[:1] == b"["
    except OSError:
        pass
    return False


def _array_records(text: str, path: str) -> Iterator[Record]:
    """The elements of a JSON array, each decoded alone; line numbers are counted
    incrementally, so the whole file is scanned once."""
    decoder = json.JSONDecoder()
    pos = _skip_space(text, 0) + 1
    line, counted = 1, 0

    def line_at(p: int) -> int:
        nonlocal line, counted
        line += text.count("\n", counted, p)
        counted = p
        return line

    i = 0
    while True:
        pos = _skip_space(text, pos)
        if text[pos : pos + 1] == "]":
            return
        start = line_at(pos)
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            raise InputError(f"invalid JSON: {e.msg} (record {i})", path=path, line=e.lineno) from None
        yield Record(obj, path, start, f"[{i}].")
        i += 1
        pos = _skip_space(text, end)
        if text[pos : pos + 1] == ",":
            pos += 1
        elif text[pos : pos + 1] != "]":
            raise InputError("invalid JSON: expected ',' or ']' after a record", path=path, line=line_at(pos))


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos
