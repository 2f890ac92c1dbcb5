"""Input validation and JSON Lines reading name the file, the line and the field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.errors import InputError
from conflictscore_local.formats.inputs import item_to_json, parse_item, read_items

GOOD = {
    "id": "q1",
    "question": "Where was Curie born?",
    "response": "Curie was born in Warsaw.",
    "documents": [
        {"id": "d1", "text": "Marie Curie was born in Warsaw.", "url": "http://x"},
        {"id": "d2", "text": "x"},
    ],
    "claims": ["Curie was born in Warsaw."],
    "labels": [["support", "IRRELEVANT"]],
    "gold": 1,
}


def write(tmp_path: Path, *rows: object) -> Path:
    p = tmp_path / "items.jsonl"
    p.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return p


def test_good_item_round_trips_and_keeps_metadata(tmp_path: Path):
    (item,) = read_items(write(tmp_path, GOOD))
    assert item.labels == (("SUPPORT", "IRRELEVANT"),)
    assert item.documents[0].meta == {"url": "http://x"}
    assert item.meta == {"gold": 1}
    back = item_to_json(item)
    assert parse_item(back) == item


def bad(**changes: object) -> dict:
    d = json.loads(json.dumps(GOOD))
    for k, v in changes.items():
        if v is ...:
            del d[k]
        else:
            d[k] = v
    return d


@pytest.mark.parametrize(
    "row, field, fragment",
    [
        (bad(documents=[5]), "documents[0]", "expected a string or an object with 'text', got int"),
        (bad(id=3), "id", "expected a string, got int"),
        (bad(id=""), "id", "must not be empty"),
        (bad(documents=...), "documents", "missing"),
        (bad(documents={"id": "d"}), "documents", "expected an array, got object"),
        (bad(documents=[{"id": "d1"}]), "documents[0].text", "missing"),
        (bad(documents=[{"id": "d1", "text": 5}]), "documents[0].text", "expected a string, got int"),
        (
            bad(documents=[{"id": "d1", "text": "a"}, {"id": "d1", "text": "b"}]),
            "documents[1].id",
            "duplicate document id",
        ),
        (bad(question=["x"]), "question", "expected a string"),
        (bad(response=..., claims=...), "response", "missing"),
        (bad(claims="one claim"), "claims", "expected an array of strings"),
        (bad(claims=["ok", 7]), "claims[1]", "expected a string"),
        (bad(claims=..., labels=[["SUPPORT", "SUPPORT"]]), "labels", "without 'claims'"),
        (bad(labels=[["SUPPORT", "SUPPORT"], ["SUPPORT", "SUPPORT"]]), "labels", "2 rows but there are 1 claims"),
        (bad(labels=[["SUPPORT"]]), "labels[0]", "1 labels but there are 2 documents"),
        (
            bad(labels=[["SUPPORT", "MAYBE"]]),
            "labels[0][1]",
            "unknown label 'MAYBE'; allowed: SUPPORT, CONTRADICT, IRRELEVANT",
        ),
        ([1, 2], None, "expected a JSON object, got array"),
    ],
)
def test_bad_input_names_file_line_and_field(tmp_path: Path, row: object, field: str | None, fragment: str):
    p = write(tmp_path, GOOD | {"id": "ok"}, row)
    with pytest.raises(InputError) as e:
        read_items(p)
    assert e.value.path == str(p) and e.value.line == 2 and e.value.field == field
    assert fragment in str(e.value)
    assert str(e.value).startswith(f"{p}:2: ")


def test_invalid_json_and_duplicate_ids(tmp_path: Path):
    with pytest.raises(InputError, match=r":3: invalid JSON"):
        read_items(write(tmp_path, GOOD, "", '{"id": "x",'))
    with pytest.raises(InputError, match=r":2: field 'id': duplicate id 'q1' \(first on line 1\)"):
        read_items(write(tmp_path, GOOD, GOOD))
    with pytest.raises(InputError, match="cannot open"):
        read_items(tmp_path / "nope.jsonl")


@pytest.mark.parametrize(
    "line, field, fragment",
    [
        (
            '{"id": "a", "response": "r", "documents": [], "n": ' + "9" * 5000 + "}",
            None,
            "invalid JSON: Exceeds the limit (4300 digits) for integer string conversion",
        ),
        ("[" * 100_000 + "]" * 100_000, None, "invalid JSON: arrays or objects nested too deeply"),
        (
            '{"id": "a", "response": "r", "documents": [], "claims": ["ok", "x\\ud800y"]}',
            "claims[1]",
            "lone surrogate \\ud800 at character 1",
        ),
        (
            '{"id": "a", "response": "r", "documents": [{"id": "\\udfff", "text": "t"}]}',
            "documents[0].id",
            "lone surrogate \\udfff at character 0",
        ),
        ('{"id": "a", "response": "\\ud83d", "documents": []}', "response", "lone surrogate \\ud83d"),
    ],
)
def test_unreadable_json_is_an_input_error(tmp_path: Path, line: str, field: str | None, fragment: str):
    p = write(tmp_path, GOOD, line)
    with pytest.raises(InputError) as e:
        read_items(p)
    assert (e.value.path, e.value.line, e.value.field) == (str(p), 2, field)
    assert fragment in str(e.value)


def test_a_surrogate_pair_is_text_and_reading_counts_lines(tmp_path: Path):
    from conflictscore_local.util.jsonl import InputStats, file_sha256

    p = write(tmp_path, GOOD | {"response": "smile \U0001f600"}, "", "  ", GOOD | {"id": "q2"})
    assert "\\ud83d\\ude00" in p.read_text()  # json.dumps wrote the emoji as an escaped surrogate pair
    stats = InputStats()
    a, _ = read_items(p, stats=stats)
    assert a.response == "smile \U0001f600"
    assert (stats.lines, stats.blank_lines, stats.sha256) == (4, 2, file_sha256(p))
