"""Training and eval files: pairs and ConflictBench items, passages of long documents, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.chunk import Chunker
from conflictscore_local.core.errors import InputError
from conflictscore_local.core.types import Document
from conflictscore_local.train.data import (
    LABEL2ID,
    evidence_passage,
    expand_item,
    iter_records,
    parse_record,
    read_eval_set,
    read_training_data,
)

from .conftest import write_jsonl

CHUNKER = Chunker(max_tokens=12, overlap=0)  # whitespace words: hand-countable passages
LONG_DOC = (
    "The tower stands in the old town square today. "  # 9 words
    "It was built by local masons over many years. "  # 9 words
    "Work on the tower was finished in 1889 after delays."  # 10 words
)


def bench_item(**over: object) -> dict:
    item = {
        "id": "q1",
        "claims": ["The tower was finished in 1889.", "The tower is in Rome."],
        "documents": [
            {"id": "short", "text": "The tower was completed in 1889."},
            {"id": "long", "text": LONG_DOC, "answer": "1889"},
            {"id": "noise", "text": LONG_DOC.replace("1889", "spring")},
        ],
        "gold_labels": [["SUPPORT", "SUPPORT", "IRRELEVANT"], ["IRRELEVANT", "CONTRADICT", "IRRELEVANT"]],
        "gold_conflicted": [False, False],
        "split": "train",
    }
    item.update(over)
    return item


def test_pairs_and_items_are_detected_per_line(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            {"claim": "c", "passage": "p", "label": "support"},
            bench_item(),
        ],
    )
    kinds = [type(rec).__name__ for _, rec in iter_records(str(f))]
    assert kinds == ["Example", "BenchRecord"]
    ex, records = read_training_data([str(f)], CHUNKER)
    assert records[0]["pairs_given"] == 1 and records[0]["bench_items"] == 1
    assert ex[0].label == LABEL2ID["SUPPORT"]


def test_long_documents_give_only_their_evidence_passage() -> None:
    rec = parse_record(bench_item(), path="f", line=1)
    assert [p.text for p in CHUNKER.passages("q1", rec.item.documents[1])] == [
        "The tower stands in the old town square today.",
        "It was built by local masons over many years.",
        "Work on the tower was finished in 1889 after delays.",
    ]
    examples, skipped = expand_item(rec, CHUNKER)
    got = [(e.claim[:12], e.passage[:12], e.label) for e in examples]
    s, c, i = LABEL2ID["SUPPORT"], LABEL2ID["CONTRADICT"], LABEL2ID["IRRELEVANT"]
    assert got == [
        # claim 0: the short doc whole; the long SUPPORT doc → its passage with the answer
        # "1889"; the noise doc (no answer) → the passage sharing most words ("tower", "finished")
        ("The tower wa", "The tower wa", s),
        ("The tower wa", "Work on the ", s),
        ("The tower wa", "Work on the ", i),
        # claim 1: the long CONTRADICT doc → the answer passage again; noise → "tower" ties, the first wins
        ("The tower is", "The tower wa", i),
        ("The tower is", "Work on the ", c),
        ("The tower is", "The tower st", i),
    ]
    assert skipped == 8  # two passages of each long document, for each claim


def test_evidence_passage_falls_back_to_word_overlap() -> None:
    doc = Document("d", "", {})
    passages = ["Bridges cross rivers.", "The tower square hosts markets.", "Masons built the tower square."]
    assert evidence_passage("The tower square was built by masons.", doc, passages) == 2
    with_answer = Document("d", "", {"answer": "markets"})
    assert evidence_passage("The tower square was built by masons.", with_answer, passages) == 1


def test_eval_set_keeps_every_passage_and_the_claim_groups(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "dev.jsonl",
        [bench_item(gold_conflicted=[False, True]), {"claim": "x", "passage": "y", "label": "IRRELEVANT"}],
    )
    ev, rec = read_eval_set(str(f), CHUNKER)
    assert len(ev) == 7 and ev.offsets == [0, 1, 4, 7, 8, 11, 14, 15]
    assert ev.groups == [0, 0, 0, 1, 1, 1, -1]
    assert ev.conflicted == [False, True]
    assert rec["units"] == 7 and rec["passages"] == 15 and rec["claims_with_conflict_gold"] == 2


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"claim": "c", "passage": "p"}, "label", "missing"),
        ({"claim": "c", "passage": "p", "label": "maybe"}, "label", "allowed: SUPPORT, CONTRADICT, IRRELEVANT"),
        ({"claim": "", "passage": "p", "label": "SUPPORT"}, "claim", "non-empty string"),
        ({"claim": "c", "passage": 3, "label": "SUPPORT"}, "passage", "non-empty string"),
        (bench_item(gold_labels=[["SUPPORT"] * 3]), "gold_labels", "has 1 rows but there are 2 claims"),
        (
            bench_item(gold_labels=[["SUPPORT"] * 3, ["SUPPORT"] * 2]),
            "gold_labels[1]",
            "has 2 labels but there are 3 documents",
        ),
        (bench_item(gold_labels=[["SUPPORT"] * 3, ["SUPPORT", "x", "SUPPORT"]]), "gold_labels[1][1]", "unknown label"),
        (bench_item(gold_conflicted=[True]), "gold_conflicted", "expected 2 booleans"),
        (
            bench_item(documents=[{"id": "a"}, {"id": "b", "text": ""}, {"id": "c", "text": ""}]),
            "documents[0].text",
            "missing",
        ),
        (bench_item(split="test"), "split", "leaks the benchmark"),
    ],
)
def test_bad_training_lines_name_file_line_and_field(tmp_path: Path, row: dict, field: str, message: str) -> None:
    f = write_jsonl(tmp_path / "bad.jsonl", [{"claim": "fine", "passage": "fine", "label": "SUPPORT"}, row])
    with pytest.raises(InputError) as e:
        read_training_data([str(f)], CHUNKER)
    assert (e.value.path, e.value.line, e.value.field) == (str(f), 2, field)
    assert message in str(e.value) and f"{f}:2" in str(e.value)


def test_eval_splits_can_be_allowed_explicitly(tmp_path: Path) -> None:
    f = write_jsonl(tmp_path / "dev.jsonl", [bench_item(split="dev")])
    examples, _ = read_training_data([str(f)], CHUNKER, allow_eval_splits=True)
    assert len(examples) == 6


def test_invalid_json_and_empty_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"claim": "c", "passage": "p", "label": "SUPPORT"}\n\n{"claim": \n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:3: invalid JSON"):
        read_training_data([str(bad)], CHUNKER)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(InputError, match="no training pairs"):
        read_training_data([str(empty)], CHUNKER)
    with pytest.raises(InputError, match="cannot open"):
        read_training_data([str(tmp_path / "missing.jsonl")], CHUNKER)


def test_cli_reports_a_bad_training_file_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tiny_base: Path
) -> None:
    train = tmp_path / "train.jsonl"
    train.write_text(
        json.dumps({"claim": "c", "passage": "p", "label": "SUPPORT"})
        + "\n"
        + json.dumps({"claim": "c", "passage": "p", "label": "entails?"})
        + "\n",
        encoding="utf-8",
    )
    code = main(
        [
            "train-judge",
            "fit",
            "--base",
            str(tiny_base),
            "--train",
            str(train),
            "--eval",
            str(train),
            "-o",
            str(tmp_path / "out"),
            "-q",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert f"{train}:2: field 'label': unknown label 'entails?'" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--epochs", "0"], "argument --epochs: must be an integer in [1, 100000], got 0"),
        (["--max-length", "64"], "argument --max-length: must be an integer in [128, 1000000], got 64"),
        (["--device", "tpu"], "allowed: auto, cpu, mps, cuda, cuda:N"),
        (["--base", "/nonexistent/model"], "--base: model '/nonexistent/model' is neither a directory"),
    ],
)
def test_cli_rejects_bad_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tiny_base: Path, flags: list[str], message: str
) -> None:
    f = write_jsonl(tmp_path / "t.jsonl", [{"claim": "c", "passage": "p", "label": "SUPPORT"}])
    args = [
        "train-judge",
        "fit",
        "--base",
        str(tiny_base),
        "--train",
        str(f),
        "--eval",
        str(f),
        "-o",
        str(tmp_path / "o"),
        "-q",
    ]
    try:
        code = main(args + flags)
    except SystemExit as e:  # argparse refuses a value out of its flag's range
        code = e.code
    assert code == 2
    assert message in capsys.readouterr().err
