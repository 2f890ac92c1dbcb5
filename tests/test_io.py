"""Input validation names file, line and field; output is atomic and resumable."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from conflictscore_local.errors import ConfigError, InputError
from conflictscore_local.io import ResumableJsonlWriter, item_to_json, parse_item, read_items

GOOD = {
    "id": "q1",
    "question": "Where was Curie born?",
    "response": "Curie was born in Warsaw.",
    "documents": [{"id": "d1", "text": "Marie Curie was born in Warsaw.", "url": "http://x"}, {"id": "d2", "text": "x"}],
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
        (bad(id=...), "id", "missing"),
        (bad(id=3), "id", "expected a string, got int"),
        (bad(id=""), "id", "must not be empty"),
        (bad(documents=...), "documents", "missing"),
        (bad(documents={"id": "d"}), "documents", "expected an array, got object"),
        (bad(documents=[{"id": "d1"}]), "documents[0].text", "missing"),
        (bad(documents=[{"id": "d1", "text": 5}]), "documents[0].text", "expected a string, got int"),
        (bad(documents=[{"id": "d1", "text": "a"}, {"id": "d1", "text": "b"}]), "documents[1].id", "duplicate document id"),
        (bad(question=["x"]), "question", "expected a string"),
        (bad(response=..., claims=...), "response", "missing"),
        (bad(claims="one claim"), "claims", "expected an array of strings"),
        (bad(claims=["ok", 7]), "claims[1]", "expected a string"),
        (bad(claims=..., labels=[["SUPPORT", "SUPPORT"]]), "labels", "without 'claims'"),
        (bad(labels=[["SUPPORT", "SUPPORT"], ["SUPPORT", "SUPPORT"]]), "labels", "2 rows but there are 1 claims"),
        (bad(labels=[["SUPPORT"]]), "labels[0]", "1 labels but there are 2 documents"),
        (bad(labels=[["SUPPORT", "MAYBE"]]), "labels[0][1]", "unknown label 'MAYBE'; allowed: SUPPORT, CONTRADICT, IRRELEVANT"),
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


def test_writer_is_atomic_under_a_crash(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(out) as w:
            w.write({"id": "a"})
            raise RuntimeError("crash")
    assert not out.exists()
    assert (tmp_path / "out.jsonl.partial").read_text() == '{"id": "a"}\n'


def test_resume_keeps_finished_rows_and_drops_a_cut_line(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    (tmp_path / "out.jsonl.partial").write_text('{"id": "a"}\n{"id": "b"}\n{"id": "c", "tr')
    with ResumableJsonlWriter(out, resume=True, keep=lambda r: r["id"] != "b") as w:
        assert w.done == [{"id": "a"}] and w.dropped == 1
        w.write({"id": "z"})
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "z"]
    assert not (tmp_path / "out.jsonl.partial").exists()


def test_resume_refuses_another_configuration(tmp_path: Path):
    out = tmp_path / "out.jsonl"
    with pytest.raises(RuntimeError):
        with ResumableJsonlWriter(out, fingerprint={"judge": "a"}) as w:
            w.write({"id": "a"})
            raise RuntimeError
    with pytest.raises(ConfigError, match="another configuration"):
        ResumableJsonlWriter(out, resume=True, fingerprint={"judge": "b"})
    with ResumableJsonlWriter(out, resume=True, fingerprint={"judge": "a"}) as w:
        assert w.done == [{"id": "a"}]


def test_atomic_writes_get_the_umask_permissions_of_a_plain_open(tmp_path: Path):
    from conflictscore_local.io import write_json_atomic, write_text_atomic

    old = os.umask(0o022)
    try:
        write_json_atomic(tmp_path / "s.json", {"a": 1})
        write_text_atomic(tmp_path / "r.html", "<p>é</p>")
    finally:
        os.umask(old)
    assert (tmp_path / "s.json").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == 0o644
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == "<p>é</p>"
    assert json.loads((tmp_path / "s.json").read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
