"""The shapes a new user already has: classic RAGAS rows (question / answer / contexts / ground_truth),
a JSON array file (what ``json.dump`` writes), hints that name the key the line has and the field to
rename it to, and one id for an item without one whichever way it came in (``item-N``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.cli import main
from conflictscore_local.core.errors import InputError
from conflictscore_local.core.types import Document
from conflictscore_local.formats.inputs import InputShapes, parse_item, read_items
from conflictscore_local.integrations._common import item_from

from ..pipeline.test_engine import RuleJudge

CLASSIC = {
    "question": "Where was Curie born?",
    "answer": "Curie was born in Warsaw.",
    "contexts": ["yes: curie was born in warsaw", "no: curie was born in warsaw"],
    "ground_truth": "Warsaw",
}


def test_a_classic_ragas_row_is_read_with_its_ground_truth_kept() -> None:
    shapes = InputShapes()
    item = parse_item(CLASSIC, path="f.jsonl", line=2, made_id="item-2", shapes=shapes)
    assert (item.id, item.question, item.response) == ("item-2", "Where was Curie born?", "Curie was born in Warsaw.")
    assert item.documents == (
        Document("d0", "yes: curie was born in warsaw"),
        Document("d1", "no: curie was born in warsaw"),
    )
    assert item.meta == {"ground_truth": "Warsaw"}
    assert shapes.record() == {"shape": "ragas-classic", "ids_made": 1, "document_ids_made": 2}
    assert shapes.described() == "classic RAGAS rows (question, answer, contexts)"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        # answer without contexts: this project's shape, whose hint goes from the key the line has to the field
        (
            {"id": "q", "answer": "x", "documents": ["a"]},
            "field 'response': missing (give a response to decompose, or claims); the line has 'answer': rename it to "
            "'response'",
        ),
        (
            {"id": "q", "response": "x", "contexts": ["a"]},
            'field \'documents\': missing (a list of document texts, or of {"id", "text"} objects); the line has '
            "'contexts': rename it to 'documents'",
        ),
        (
            {"id": "q", "response": "x", "documents": [{"body": "t"}]},
            "field 'documents[0].text': missing; the document has 'body': rename it to 'text'",
        ),
    ],
)
def test_every_hint_names_the_key_the_line_has_and_the_field_to_rename_it_to(row: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_item(row, path="f.jsonl", line=3)
    assert str(e.value) == f"f.jsonl:3: {message}"


def test_a_json_array_file_is_read_and_its_errors_name_the_line_a_record_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([CLASSIC, {**CLASSIC, "id": "mine"}, CLASSIC], indent=2), encoding="utf-8")
    items = read_items(path)
    assert [it.id for it in items] == ["item-1", "mine", "item-3"]  # the position, as the API gives it
    bad = tmp_path / "bad.json"
    bad.write_text(
        '[\n  {"question": "q", "answer": "a", "contexts": ["c"]},\n  {"question": "q", "answer": 7, '
        '"contexts": ["c"]}\n]\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError) as e:
        read_items(bad)
    assert str(e.value) == f"{bad}:3: field 'answer': expected a string, got int"
    broken = tmp_path / "broken.json"
    broken.write_text('[\n  {"question": "q"},\n  {"question": }\n]\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_items(broken)
    assert str(e.value).startswith(
        f"{broken}:3: invalid JSON in the array: Expecting value (column 16); the file "
        "must be JSON Lines (one whole JSON object per line) or one JSON array of objects"
    )
    # JSON Lines whose first line happens to be an array stays JSON Lines, with its usual error
    lines = tmp_path / "lines.jsonl"
    lines.write_text('["not", "an item"]\n{"id": "b", "response": "r", "documents": []}\n', encoding="utf-8")
    with pytest.raises(InputError) as e:
        read_items(lines)
    assert str(e.value) == f"{lines}:1: expected a JSON object, got array"


def test_the_same_item_gets_the_same_id_from_a_file_an_array_and_the_api(tmp_path: Path) -> None:
    rows = [{**CLASSIC, "claims": ["Curie was born in Warsaw."]}, {**CLASSIC, "claims": ["Curie was born in Paris."]}]
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    array = tmp_path / "rows.json"
    array.write_text(json.dumps(rows), encoding="utf-8")
    with Engine(RunConfig().updated({"cache": {"enabled": False}}), judge=RuleJudge(), pruner="none") as engine:
        results, _ = engine.score_all(rows)
    api = [(r.item_id, [d.doc_id for v in r.verdicts for d in v.judgments]) for r in results]
    assert api == [("item-1", ["d0", "d1"]), ("item-2", ["d0", "d1"])]
    for path in (jsonl, array):
        assert [(it.id, [d.id for d in it.documents]) for it in read_items(path)] == [(i, d) for i, d in api]
    # a harness row's plain-string documents: the same d0, d1 (not 1, 2)
    assert [d.id for d in item_from("h", "r", ["a", "b"]).documents] == ["d0", "d1"]


def test_score_reads_an_array_of_classic_rows_and_says_which_shape_it_read(
    tmp_path: Path, register_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    register_backend("judge", "rule", RuleJudge)
    src = tmp_path / "ragas.json"
    src.write_text(json.dumps([CLASSIC, {**CLASSIC, "contexts": ["yes: curie was born in warsaw"]}]), encoding="utf-8")
    out, summary = tmp_path / "o.jsonl", tmp_path / "s.json"
    assert (
        main(
            [
                "score",
                str(src),
                "-o",
                str(out),
                "--summary",
                str(summary),
                "--judge",
                "rule",
                "--pruner",
                "none",
                "--no-cache",
                "--claims-per-item",
                "1",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert f"{src}: 2 items read from one JSON array, as classic RAGAS rows (question, answer, contexts)" in err
    s = json.loads(summary.read_text())
    assert {k: s["stages"]["input"][k] for k in ("format", "shape", "ids_made", "items", "file")} == {
        "format": "json",
        "shape": "ragas-classic",
        "ids_made": 2,
        "items": 2,
        "file": "ragas.json",
    }
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["item-1", "item-2"]
    assert rows[0]["claims"][0]["support"] == ["d0"] and rows[0]["claims"][0]["contradict"] == ["d1"]
