"""The source-file reader: JSONL lines split as JSON Lines defines them, shared with the engine's
item reader; JSON arrays read in one pass with the line each record starts on."""

from __future__ import annotations

import json
import pathlib
from pathlib import Path

import pytest

from conflictscore_local.bench import build_bench
from conflictscore_local.bench.records import iter_records
from conflictscore_local.core.errors import InputError
from conflictscore_local.formats.inputs import read_items
from conflictscore_local.util.jsonl import iter_jsonl

# characters str.splitlines() breaks at that JSON allows unescaped inside a string
_LINE_BREAKS_IN_STRINGS = "\u2028\u2029\x85"


def test_jsonl_strings_may_hold_unicode_line_separators(tmp_path: Path):
    claim = f"Sea level rose{_LINE_BREAKS_IN_STRINGS} by 20 cm."
    rec = {
        "claim": claim,
        "claim_id": "1",
        "claim_label": "SUPPORTS",
        "evidences": [{"evidence_label": "SUPPORTS", "evidence": "It rose\u2028 20 cm."}],
    }
    path = tmp_path / "cf.jsonl"
    path.write_text(
        json.dumps(rec, ensure_ascii=False) + "\n\n" + json.dumps(rec | {"claim_id": "2"}) + "\n", encoding="utf-8"
    )
    items = build_bench(tmp_path, only=["climate_fever"], sources={"climate_fever": path})
    assert [it["claims"] for it in items] == [[claim], [claim]]
    assert items[0]["documents"][0]["text"] == "It rose\u2028 20 cm."
    assert [(r.line, r.obj["claim_id"]) for r in iter_records(path)] == [(1, "1"), (3, "2")]


def test_bench_and_engine_share_one_jsonl_reader(tmp_path: Path):
    """The same file gives the same lines, values and errors to ``score`` and to ``bench build``."""
    rows = [
        {"id": "a", "response": f"x{_LINE_BREAKS_IN_STRINGS}y", "documents": []},
        {"id": "b", "response": "z", "documents": []},
    ]
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\r\n" for r in rows))
    assert list(iter_jsonl(path)) == [(1, rows[0]), (2, rows[1])]
    assert [r.obj for r in iter_records(path)] == rows
    assert [it.response for it in read_items(path)] == [r["response"] for r in rows]

    path.write_bytes(json.dumps(rows[0]).encode() + b"\n\n" + b'{"id": "b", "response": "caf\xe9"}\n')
    for read in (read_items, lambda p: list(iter_records(p))):
        with pytest.raises(InputError) as e:
            read(path)
        assert (e.value.path, e.value.line) == (str(path), 3)
        assert e.value.reason.startswith("not UTF-8 text: invalid continuation byte")
    path.write_text(json.dumps(rows[0]) + '\n{"id": "b",\n', encoding="utf-8")
    for read in (read_items, lambda p: list(iter_records(p))):
        with pytest.raises(InputError, match=r"items\.jsonl:2: invalid JSON: Expecting property name"):
            read(path)
    for read in (read_items, lambda p: list(iter_records(p))):
        with pytest.raises(InputError, match="nope.jsonl: cannot open: No such file"):
            read(tmp_path / "nope.jsonl")


def _array_file(path: Path, n: int) -> list[int]:
    """A JSON array of ``n`` records laid out over a varying number of lines; the line each starts on."""
    parts, starts, line = ["\n["], [], 2
    for i in range(n):
        rec = json.dumps({"k": i, "text": "a\\nb " * i, "nested": [[i] * (i % 3)]}, indent=i % 3 or None)
        sep = "\n" * (i % 2) + " "
        parts.append(sep)
        line += sep.count("\n")
        starts.append(line)
        parts.append(rec + ",")
        line += rec.count("\n")
    parts[-1] = parts[-1].rstrip(",") + "\n]\n"
    path.write_text("".join(parts), encoding="utf-8")
    return starts


def test_json_array_records_report_the_line_they_start_on(tmp_path: Path):
    path = tmp_path / "arr.json"
    starts = _array_file(path, 12)
    records = list(iter_records(path))
    assert [r.obj["k"] for r in records] == list(range(12))
    assert [r.line for r in records] == starts
    assert records[5].error("text", "bad").field == "[5].text"

    path.write_text('[\n {"k": 0},\n\n {"k": 1,\n  "x": "a\\nb"}, {"k": 2}\n]', encoding="utf-8")
    assert [(r.line, r.obj["k"]) for r in iter_records(path)] == [(2, 0), (4, 1), (5, 2)]

    path.write_text('[\n {"k": 0},\n {"k": 1}\n\n {"k": 2}]', encoding="utf-8")
    with pytest.raises(InputError, match=r"arr\.json:5: invalid JSON: expected ',' or '\]' after a record"):
        list(iter_records(path))


class _CountingText(str):
    """A str that adds up how many characters its ``count`` calls scan."""

    scanned = 0

    def count(self, sub: str, start: int | None = None, end: int | None = None) -> int:  # type: ignore[override]
        s, e, _ = slice(start, end).indices(len(self))
        _CountingText.scanned += max(e - s, 0)
        return super().count(sub, start, end)


def test_json_array_is_scanned_for_line_numbers_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Line numbers are counted from the previous record, not from the start of the file:
    counting from the start made reading a JSON array quadratic in its size."""
    path = tmp_path / "arr.json"
    starts = _array_file(path, 300)
    read_text = pathlib.Path.read_text
    monkeypatch.setattr(pathlib.Path, "read_text", lambda self, *a, **k: _CountingText(read_text(self, *a, **k)))
    _CountingText.scanned = 0
    assert [r.line for r in iter_records(path)] == starts
    assert 0 < _CountingText.scanned <= path.stat().st_size
