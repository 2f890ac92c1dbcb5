"""JSON Lines reading: every way a line can be bad is an :class:`InputError` naming the file and the line."""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from typing import Any, Iterator

from ..core.errors import InputError


def json_type_name(v: Any) -> str:
    """How JSON names the type of a decoded value (``object``, ``array``, ``string``, ...), for error messages."""
    return {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(v), type(v).__name__
    )


@dataclass
class InputStats:
    """What reading a JSONL file saw: its sha256 (of every byte read), lines and blank lines, and its
    ``format``: ``jsonl``, or ``json`` for a file holding one JSON array (:func:`iter_records`)."""

    sha256: str = ""
    lines: int = 0
    blank_lines: int = 0
    format: str = "jsonl"


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def iter_jsonl(
    path: str | os.PathLike[str], stats: InputStats | None = None, *, hint: str | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for every non-blank line of a JSONL file, ``line`` 1-based.

    Lines end at ``\\n`` only, as JSON Lines defines them: U+2028, U+0085 and the other
    characters ``str.splitlines`` breaks at may stand unescaped inside JSON strings. An
    unreadable file, a line that is not UTF-8, not JSON, nested too deeply, holding an
    integer too long to convert or a lone UTF-16 surrogate (``"\\ud800"``, which is no
    text and cannot be written back) is an :class:`InputError` naming the file and the
    line. ``stats``, when given, is filled in as the file is read (one pass, so a pipe
    works too). ``hint``: what a line that is not JSON adds (:data:`JSONL_HINT` by default).
    """
    p = str(path)
    try:
        fh = open(p, "rb")
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    h = hashlib.sha256()
    with fh:
        try:
            for n, raw in enumerate(fh, 1):
                h.update(raw)
                if stats is not None:
                    stats.lines = n
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(f"not UTF-8 text: {e.reason} (byte {e.start + 1})", path=p, line=n) from None
                if not text.strip():
                    if stats is not None:
                        stats.blank_lines += 1
                    continue
                obj = _loads(text, path=p, line=n, hint=JSONL_HINT if hint is None else hint)
                if "\\u" in text and _SURROGATE_ESCAPE.search(text):
                    _check_surrogates(obj, path=p, line=n)
                yield n, obj
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", path=p) from None
    if stats is not None:
        stats.sha256 = h.hexdigest()


def read_text(path: str | os.PathLike[str]) -> str:
    """A whole UTF-8 text file (a CSV, a TSV, a line-aligned corpus); bytes that are not UTF-8
    are an :class:`InputError` naming the file and the line, an unreadable file one naming the file."""
    p = str(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read()
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw.count(b"\n", 0, e.start) + 1
        start = raw.rfind(b"\n", 0, e.start) + 1
        raise InputError(
            f"not UTF-8 text: {e.reason} (byte {e.start - start + 1} of the line)", path=p, line=line
        ) from None


JSONL_HINT = "; the file must be JSON Lines: one whole JSON object per line (not pretty-printed, not an array)"
"""Said with every line that is not JSON: the usual cause is a pretty-printed or array-shaped .json file."""
RECORDS_HINT = (
    "; the file must be JSON Lines (one whole JSON object per line) or one JSON array of objects "
    "(what json.dump writes), not pretty-printed objects"
)
"""Said with every line of an items file that is not JSON (:func:`iter_records`, which reads arrays too)."""


def iter_records(path: str | os.PathLike[str], stats: InputStats | None = None) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for every record of a JSON Lines file, or of a file that holds one
    JSON array (its first character other than white space is ``[``: ``json.dump`` of a list), ``line``
    the 1-based line the record starts on. An array is read whole (its sha256 and lines still counted
    in ``stats``, whose ``format`` becomes ``json``); a file that is not one array after all (JSON Lines
    whose first line is an array) is read as JSON Lines, whose errors then say what is wrong."""
    p = str(path)
    try:
        with open(p, "rb") as fh:
            head = b""
            while not head and (block := fh.read(1 << 16)):
                head = block.removeprefix(b"\xef\xbb\xbf").lstrip()
    except OSError as e:
        raise InputError(f"cannot open: {e.strerror}", path=p) from None
    if head.startswith(b"["):
        found = _array(p, stats)
        if found is not None:
            yield from found
            return
    yield from iter_jsonl(p, stats, hint=RECORDS_HINT)


def _array(path: str, stats: InputStats | None) -> list[tuple[int, Any]] | None:
    """The records of a file holding one JSON array with the line each starts on; None when the file is
    more than one array (JSON Lines whose first line is an array); an :class:`InputError` for a bad one."""
    with open(path, "rb") as fh:
        raw = fh.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputError(
            f"not UTF-8 text: {e.reason} (byte {e.start + 1})", path=path, line=raw.count(b"\n", 0, e.start) + 1
        ) from None
    decoder = json.JSONDecoder()
    space = re.compile(r"[ \t\r\n]*")

    def skip(i: int) -> int:
        return space.match(text, i).end()  # type: ignore[union-attr]

    counted = [0, 1]  # lines are counted once, forward: (position, line there)

    def line_of(i: int) -> int:
        if i < counted[0]:
            return text.count("\n", 0, i) + 1
        counted[1] += text.count("\n", counted[0], i)
        counted[0] = i
        return counted[1]

    first_line_end = text.find("\n", skip(0))
    out: list[tuple[int, Any]] = []
    i = skip(skip(0) + 1)
    closed = text.startswith("]", i)
    i += closed
    while not closed:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError as e:
            raise InputError(
                f"invalid JSON in the array: {e.msg} (column {e.colno}){RECORDS_HINT}", path=path, line=e.lineno
            ) from None
        except RecursionError:
            raise InputError("invalid JSON: arrays or objects nested too deeply", path=path, line=line_of(i)) from None
        except ValueError as e:  # an integer beyond Python's int-string conversion limit
            raise InputError(f"invalid JSON: {e}".split("; use sys.")[0], path=path, line=line_of(i)) from None
        if "\\u" in text[i:end] and _SURROGATE_ESCAPE.search(text, i, end):
            _check_surrogates(obj, path=path, line=line_of(i))
        out.append((line_of(i), obj))
        i = skip(end)
        if text.startswith(",", i):
            i = skip(i + 1)
        elif text.startswith("]", i):
            closed = True
            i += 1
        else:
            raise InputError(
                f"invalid JSON in the array: expected ',' or ']' after the record that starts on line "
                f"{out[-1][0]}{RECORDS_HINT}",
                path=path,
                line=line_of(i),
            )
    if skip(i) != len(text):
        if 0 <= first_line_end < skip(i):
            return None  # one array on the first line and more lines after it: JSON Lines
        raise InputError(
            f"invalid JSON: more after the array's closing ']' (column {i - text.rfind(chr(10), 0, i)}){RECORDS_HINT}",
            path=path,
            line=line_of(skip(i)),
        )
    if stats is not None:
        stats.sha256 = hashlib.sha256(raw).hexdigest()
        stats.lines = raw.count(b"\n") + (not raw.endswith(b"\n") and bool(raw))
        stats.format = "json"
    return out


def _loads(text: str, *, path: str | None, line: int | None, hint: str = JSONL_HINT) -> Any:
    """``json.loads`` with every way it can fail on bad input turned into an :class:`InputError`."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"invalid JSON: {e.msg} (column {e.colno}){hint}", path=path, line=line) from None
    except RecursionError:
        raise InputError("invalid JSON: arrays or objects nested too deeply", path=path, line=line) from None
    except ValueError as e:  # an integer beyond Python's int-string conversion limit
        raise InputError(f"invalid JSON: {e}".split("; use sys.")[0], path=path, line=line) from None


def _check_surrogates(obj: Any, *, path: str | None, line: int | None) -> None:
    """:class:`InputError` naming the field of the first string (or key) with a lone surrogate."""
    stack: list[tuple[str, Any]] = [("", obj)]
    while stack:
        where, v = stack.pop()
        if isinstance(v, dict):
            subs = [(f"{where}.{k}" if where else str(k), k, x) for k, x in v.items()]
            for sub, k, _ in subs:
                _check_text(k, sub, path, line)
            stack.extend((sub, x) for sub, _, x in reversed(subs))
        elif isinstance(v, list):
            stack.extend((f"{where}[{i}]", x) for i, x in reversed(list(enumerate(v))))
        elif isinstance(v, str):
            _check_text(v, where, path, line)


def _check_text(s: str, where: str, path: str | None, line: int | None) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InputError(
            f"lone surrogate \\u{ord(s[e.start]):04x} at character {e.start}: half of a UTF-16 pair, not text "
            "(fix the program that wrote this file, or remove the character)",
            path=path,
            line=line,
            field=where or None,
        ) from None


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file's bytes (inputs are fingerprinted by content, not by name)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
