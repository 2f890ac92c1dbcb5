"""The shapes users bring: RAGAS and DeepEval rows, plain-string documents, items without ids,
"did you mean" for a misspelled field, read by `score` and by Engine.score_all."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.cli import main
from conflictscore_local.core.errors import InputError
from conflictscore_local.core.types import Document
from conflictscore_local.formats.inputs import InputShapes, parse_item, read_items

from ..pipeline.test_engine import RuleJudge

RAGAS = {
    "user_input": "Where was Curie born?",
    "response": "Curie was born in Warsaw.",
    "retrieved_contexts": ["yes: curie was born in warsaw", "no: curie was born in warsaw"],
    "reference": "Warsaw",
}
DEEPEVAL = {
    "input": "Where was Curie born?",
    "actual_output": "Curie was born in Warsaw.",
    "retrieval_context": ["yes: curie was born in warsaw", "the weather"],
    "expected_output": "Warsaw",
}
PLAIN = {
    "id": "p",
    "response": "Curie was born in Warsaw.",
    "documents": ["yes: curie was born in warsaw", {"text": "no: curie was born in warsaw", "reliability": 0.5}],
}


def write(path: Path, *rows: Any) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def test_a_ragas_row_is_an_item_with_documents_d0_d1_and_its_reference_kept() -> None:
    shapes = InputShapes()
    item = parse_item(RAGAS, path="f.jsonl", line=4, shapes=shapes)
    assert (item.id, item.question, item.response) == ("item-4", "Where was Curie born?", "Curie was born in Warsaw.")
    assert item.documents == (
        Document("d0", "yes: curie was born in warsaw"),
        Document("d1", "no: curie was born in warsaw"),
    )
    assert item.meta == {"reference": "Warsaw"}
    assert shapes.record() == {"shape": "ragas", "ids_made": 1, "document_ids_made": 2}


def test_ragas_context_ids_name_the_documents() -> None:
    item = parse_item({**RAGAS, "retrieved_context_ids": ["wiki", "blog"]}, line=1)
    assert [d.id for d in item.documents] == ["wiki", "blog"]
    with pytest.raises(InputError) as e:
        parse_item({**RAGAS, "retrieved_context_ids": ["wiki"]}, path="f.jsonl", line=2)
    assert str(e.value) == (
        "f.jsonl:2: field 'retrieved_context_ids': expected an array of 2 ids (one per entry of "
        "retrieved_contexts), got 1"
    )


def test_a_deepeval_row_and_a_mixed_file_are_recorded_as_such(tmp_path: Path) -> None:
    shapes = InputShapes()
    items = read_items(write(tmp_path / "in.jsonl", DEEPEVAL, PLAIN, RAGAS), shapes=shapes)
    assert [it.id for it in items] == ["item-1", "p", "item-3"]
    assert items[0].question == "Where was Curie born?" and items[0].meta == {"expected_output": "Warsaw"}
    assert [(d.id, d.reliability) for d in items[1].documents] == [("d0", None), ("d1", 0.5)]
    assert shapes.record() == {
        "shape": "mixed",
        "shapes": {"conflictscore": 1, "ragas": 1, "deepeval": 1},
        "ids_made": 2,
        "document_ids_made": 6,
    }


def test_errors_name_the_field_as_the_line_spells_it(tmp_path: Path) -> None:
    with pytest.raises(InputError) as e:
        read_items(write(tmp_path / "in.jsonl", {**RAGAS, "retrieved_contexts": ["ok", 7]}))
    assert (
        str(e.value) == f"{tmp_path / 'in.jsonl'}:1: field 'retrieved_contexts[1]': expected a string or an object "
        "with 'text', got int"
    )
    with pytest.raises(InputError) as e:
        read_items(
            write(tmp_path / "in.jsonl", {**PLAIN, "id": "item-2"}, {k: v for k, v in PLAIN.items() if k != "id"})
        )
    assert str(e.value) == f"{tmp_path / 'in.jsonl'}:2: field 'id': duplicate id 'item-2' (first on line 1)"


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (
            {"id": "q", "respones": "x", "documents": []},
            "field 'response': missing (give a response to decompose, or claims); the line has 'respones': "
            "rename it to 'response'",
        ),
        (
            {"id": "q", "answer": "x", "documents": []},
            "field 'response': missing (give a response to decompose, or claims); the line has 'answer': "
            "rename it to 'response'",
        ),
        (
            {"id": "q", "response": "x", "contexts": ["a"]},
            'field \'documents\': missing (a list of document texts, or of {"id", "text"} objects); the line has '
            "'contexts': rename it to 'documents'",
        ),
        (
            {"user_input": "q", "respnse": "x", "retrieved_contexts": ["a"]},
            "field 'response': missing (give a response to decompose, or claims); the line has 'respnse': "
            "rename it to 'response'",
        ),
        (
            {"id": "q", "response": "x", "documents": [{"id": "a", "content": "t"}]},
            "field 'documents[0].text': missing; the document has 'content': rename it to 'text'",
        ),
    ],
)
def test_a_missing_field_that_another_key_resembles_says_did_you_mean(row: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_item(row, path="f.jsonl", line=3)
    assert str(e.value) == f"f.jsonl:3: {message}"


def test_a_misspelled_optional_field_and_document_key_are_warned_about_once_each(tmp_path: Path) -> None:
    seen: list[str] = []
    row = {"id": "a", "questoin": "q?", "response": "x", "documents": [{"id": "d", "text": "t", "weight": 0.9}]}
    p = write(
        tmp_path / "in.jsonl", row, {**row, "id": "b"}, {**row, "id": "c", "documents": [{"text": "t", "title": "T"}]}
    )
    items = read_items(p, shapes=InputShapes(warn=seen.append))
    assert seen == [
        f"{p}:1: documents[0].weight is not a document field (kept as metadata, not read): rename it to "
        "'reliability' to have it read (warned once per file)",
        f"{p}:1: unknown field 'questoin' (kept as metadata, not read): rename it to 'question' to have it read "
        "(warned once per file)",
    ]
    assert items[0].documents[0].meta == {"weight": 0.9} and items[0].documents[0].reliability is None
    assert items[0].meta == {"questoin": "q?"} and items[2].documents[0].meta == {"title": "T"}


def test_benchmark_gold_fields_are_not_warned_about(tmp_path: Path) -> None:
    seen: list[str] = []
    row = {
        "id": "a",
        "claims": ["c"],
        "documents": [{"id": "d0", "text": "t", "title": "T", "pid": "7"}],
        "gold_labels": [["SUPPORT"]],
        "gold_conflicted": [False],
        "source": "ramdocs",
        "conflict_type": "none",
    }
    read_items(write(tmp_path / "in.jsonl", row), shapes=InputShapes(warn=seen.append))
    assert seen == []


def test_engine_score_all_takes_plain_dicts_of_every_shape() -> None:
    with Engine(RunConfig().updated({"cache": {"enabled": False}}), judge=RuleJudge(), pruner="none") as engine:
        results, report = engine.score_all(
            [{**RAGAS, "claims": ["Curie was born in Warsaw."]}, {**DEEPEVAL, "claims": ["Curie was born in Warsaw."]}]
        )
    assert [r.item_id for r in results] == ["item-1", "item-2"]
    v = results[0].verdicts[0]
    assert (v.support, v.contradict, v.conflicted) == (("d0",), ("d1",), True)
    assert results[1].verdicts[0].support == ("d0",) and not results[1].verdicts[0].conflicted
    assert report.stages["input"] == {
        "lines": None,
        "blank_lines": None,
        "items": 2,
        "empty_responses": 0,
        "no_documents": 0,
        "file": None,
        "shape": "mixed",
        "shapes": {"ragas": 1, "deepeval": 1},
        "ids_made": 2,
        "document_ids_made": 4,
    }
    assert results.to_records()[0]["cs_c"] == 1.0
    with pytest.raises(InputError) as e:
        Engine().score_all(
            [{"id": "x", "response": "r", "documents": []}, {"id": "x", "response": "r", "documents": []}]
        )
    assert str(e.value) == "item 2: field 'id': duplicate id 'x' (first: item 1)"


def test_score_reads_a_ragas_file_and_the_summary_says_so(
    tmp_path: Path, register_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    register_backend("judge", "rule", RuleJudge)
    p = write(tmp_path / "ragas.jsonl", RAGAS, {**RAGAS, "retrieved_contexts": ["yes: curie was born in warsaw"]})
    code = main(
        [
            "score",
            str(p),
            "-o",
            str(tmp_path / "o.jsonl"),
            "--summary",
            str(tmp_path / "s.json"),
            "--judge",
            "rule",
            "--pruner",
            "none",
            "--no-cache",
            "-q",
        ]
    )
    assert code == 0
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["stages"]["input"]["shape"] == "ragas" and s["stages"]["input"]["ids_made"] == 2
    assert s["stages"]["input"]["document_ids_made"] == 3 and s["stages"]["input"]["file"] == "ragas.jsonl"
    rows = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == ["item-1", "item-2"]
    assert rows[0]["claims"][0]["support"] == ["d0"] and rows[0]["claims"][0]["contradict"] == ["d1"]


def test_the_warning_reaches_the_summary(
    tmp_path: Path, register_backend: Any, caplog: pytest.LogCaptureFixture
) -> None:
    register_backend("judge", "rule", RuleJudge)
    p = write(tmp_path / "in.jsonl", {**PLAIN, "claims": ["c"], "documents": [{"text": "t", "weight": 1}]})
    with caplog.at_level(logging.WARNING, logger="conflictscore_local"):
        assert (
            main(
                [
                    "score",
                    str(p),
                    "-o",
                    str(tmp_path / "o.jsonl"),
                    "--summary",
                    str(tmp_path / "s.json"),
                    "--judge",
                    "rule",
                    "--pruner",
                    "none",
                    "--no-cache",
                    "-q",
                ]
            )
            == 0
        )
    s = json.loads((tmp_path / "s.json").read_text())
    assert s["warnings"] == [
        f"{p}:1: documents[0].weight is not a document field (kept as metadata, not read): "
        "rename it to 'reliability' to have it read (warned once per file)"
    ]
