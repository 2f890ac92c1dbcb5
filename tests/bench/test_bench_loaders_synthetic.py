"""Format-only loaders on small files in the original shapes; missing sources and bad lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.bench import build_bench
from conflictscore_local.core.errors import ConfigError, InputError

S, C, IR = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_ambigdocs_original_format(tmp_path: Path):
    rec = {
        "qid": "q7",
        "ambiguous_entity": "Jeff Green",
        "question": "What is the profession of Jeff Green?",
        "documents": [
            {
                "title": "Jeff Green (basketball)",
                "text": "Jeff Green is an American basketball player.",
                "pid": "11",
                "answer": "Basketball player",
            },
            {
                "title": "Jeff Green (writer)",
                "text": "Jeff Green is a British writer.",
                "pid": "12",
                "answer": "Writer",
            },
            {
                "title": "Jeff Green (basketball)",
                "text": "Green played for the Celtics.",
                "pid": "13",
                "answer": "Basketball player",
            },
        ],
    }
    path = tmp_path / "test.json"
    path.write_text(json.dumps([rec], indent=2), encoding="utf-8")
    items = {it["id"]: it for it in build_bench(tmp_path, only=["ambigdocs"], sources={"ambigdocs": path})}
    no_ent, ent = items["ambigdocs:q7:no_entity"], items["ambigdocs:q7:entity"]
    assert no_ent["claims"] == [
        "The profession of Jeff Green is Basketball player.",
        "The profession of Jeff Green is Writer.",
    ]
    assert no_ent["gold_labels"] == [[S, C, S], [C, S, C]]
    assert no_ent["gold_conflicted"] == [True, True] and no_ent["conflict_type"] == "ambiguity"
    assert ent["claims"] == [
        "The profession of Jeff Green (basketball) is Basketball player.",
        "The profession of Jeff Green (writer) is Writer.",
    ]
    assert ent["gold_labels"] == [[S, IR, S], [IR, S, IR]]
    assert ent["gold_conflicted"] == [False, False] and ent["conflict_type"] == "none"
    assert ent["ambiguous_entity"] == "Jeff Green" and ent["documents"][0]["title"] == "Jeff Green (basketball)"
    assert ent["split"] == no_ent["split"]


def test_conflictingqa_rows_grouped_by_query(tmp_path: Path):
    base = {"category": "health", "search_query": "Is aspartame linked to cancer?", "url": "https://x", "title": "t"}
    rows = [
        {
            **base,
            "search_type": "yes_statement",
            "text_raw": "raw",
            "text_window": "Aspartame causes cancer.",
            "stance": "yes",
        },
        {**base, "search_type": "no_statement", "text_raw": "No link found.", "text_window": "", "stance": "No"},
        {**base, "search_type": "yes_statement", "text_raw": "r", "text_window": "Studies suggest a link."},
        {
            **base,
            "search_query": "Is coffee healthy?",
            "search_type": "yes_statement",
            "text_raw": "",
            "text_window": "Coffee is healthy.",
            "stance": "yes",
        },
    ]
    path = _jsonl(tmp_path / "conflictingqa.jsonl", rows)
    items = build_bench(tmp_path, only=["conflictingqa"], sources={"conflictingqa": path})
    assert [it["question"] for it in items] == ["Is aspartame linked to cancer?", "Is coffee healthy?"]
    a = items[0]
    assert a["claims"] == ["The answer to 'Is aspartame linked to cancer?' is yes."]
    assert a["gold_labels"] == [[S, C, S]]
    assert [d["text"] for d in a["documents"]] == [
        "Aspartame causes cancer.",
        "No link found.",
        "Studies suggest a link.",
    ]
    assert a["conflict_type"] == "opinion" and items[1]["conflict_type"] == "none"


def test_contraqa_pan_both_shapes(tmp_path: Path):
    rows = [
        {
            "id": "p1",
            "question": "Who won Super Bowl 50?",
            "answers": ["Denver Broncos"],
            "real_passages": ["The Denver Broncos defeated the Carolina Panthers."],
            "fake_passages": [{"text": "The Carolina Panthers won Super Bowl 50."}],
        },
        {
            "question": "When was the Eiffel Tower built?",
            "answer": "1889",
            "passages": [
                {"id": "77:::Eiffel_Tower", "contents": "Built in 1889."},
                {"id": "77:::Eiffel_Tower-FAKE", "contents": "Built in 1925."},
                {"id": "78:::Paris", "contents": "Paris is in France."},
            ],
        },
    ]
    path = _jsonl(tmp_path / "contraqa.jsonl", rows)
    items = build_bench(tmp_path, only=["contraqa_pan"], sources={"contraqa_pan": path})
    assert [it["id"] for it in items] == ["contraqa_pan:p1", "contraqa_pan:1"]
    assert items[0]["claims"] == ["Denver Broncos won Super Bowl 50."]
    assert items[0]["gold_labels"] == [[S, C]] and items[0]["conflict_type"] == "misinformation"
    assert items[1]["claims"] == ["The Eiffel Tower was built in 1889."]
    assert items[1]["gold_labels"] == [[S, C, S]]
    assert [d["misinformation"] for d in items[1]["documents"]] == [False, True, False]


def test_macnoise_full_format_jsonl_and_levels_option(tmp_path: Path):
    rec = {
        "question": "who wrote hamlet",
        "answers": ["William Shakespeare", "Shakespeare"],
        "ctxs": [
            {
                "id": "1",
                "title": "Hamlet",
                "text": "Hamlet is a tragedy by Shakespeare.",
                "text_pert": "Hamlet is a tragedy by Christopher Marlowe.",
            },
            {"id": "2", "title": "Denmark", "text": "Denmark is a country.", "text_pert": "x"},
            {
                "id": "3",
                "title": "Globe",
                "text": "The Globe staged Hamlet.",
                "text_pert": "Marlowe wrote Hamlet in 1599.",
            },
        ],
        "pert_lbls": [1, 0, 1],
        "pert_lbls_50": [0, 0, 1],
    }
    path = _jsonl(tmp_path / "full.jsonl", [rec])
    items = build_bench(tmp_path, only=["macnoise"], sources={"macnoise": path})
    by = {it["variant"]: it for it in items}
    assert set(by) == {"full:pert_lbls", "full:pert_lbls_50"}
    assert by["full:pert_lbls"]["gold_labels"] == [[C, IR, C]] and by["full:pert_lbls"]["conflict_type"] == "none"
    assert by["full:pert_lbls_50"]["gold_labels"] == [[S, IR, C]]
    assert by["full:pert_lbls_50"]["conflict_type"] == "counterfactual"
    assert by["full:pert_lbls_50"]["documents"][2]["text"] == "Marlowe wrote Hamlet in 1599."
    only50 = build_bench(
        tmp_path, only=["macnoise"], sources={"macnoise": path}, options={"macnoise": {"levels": "pert_lbls_50"}}
    )
    assert [it["variant"] for it in only50] == ["full:pert_lbls_50"]


def test_macnoise_answer_must_occur_as_whole_words(tmp_path: Path):
    """An unperturbed passage SUPPORTs only when an answer occurs in it as whole words,
    up to case, spacing, punctuation and thousands separators."""
    texts = [
        "ABC renewed the show for a fourth season.",
        "It stars Kim and Aytes as the FOUR lead characters.",
        "Its population is 1,000 people.",
        "Its population is 10,000 people.",
        "Seen on Jay-Z's  tour.",
    ]
    rec = {
        "question": "how many seasons are there",
        "answers": ["four", "1000", "jay z"],
        "ctxs": [{"id": str(j), "title": "t", "text": t, "text_pert": "p"} for j, t in enumerate(texts)],
        "pert_lbls": [0] * len(texts),
    }
    path = _jsonl(tmp_path / "m.jsonl", [rec])
    [it] = build_bench(tmp_path, only=["macnoise"], sources={"macnoise": path})
    assert it["gold_labels"] == [[IR, S, S, IR, S]]


def test_en555_python_repr_fields(tmp_path: Path):
    rec = {
        "claim_id": 5,
        "claim": " Masks should be worn. ",
        "evidences": ["Masks help.", "Masks do not help."],
        "labels": ["Supports", "Refutes"],
        "paragraph_id": [0, 1],
        "dataset_name": "healthver",
        "wh_question": "What is the recommendation on masks?",
        "wh_answers": "[{'answer': 'wear them', 'evidenceNumbers': ['0']}]",
        "yes_no_questions": "[{'question': 'Do masks help?', 'yesAnswers': ['0'], 'noAnswers': ['1']}]",
    }
    d = tmp_path / "raw"
    d.mkdir()
    (d / "x_conflcits_y.json").write_text(json.dumps([rec]), encoding="utf-8")
    (d / "unrelated.json").write_text("[]", encoding="utf-8")
    [it] = build_bench(tmp_path, only=["contraqa_en555"], sources={"contraqa_en555": d})
    assert it["claims"] == ["Masks should be worn."]
    assert it["wh_answers"] == [{"answer": "wear them", "evidenceNumbers": ["0"]}]
    assert it["yes_no_questions"][0]["noAnswers"] == ["1"]
    assert it["gold_labels"] == [[S, C]] and it["conflict_type"] == "opinion"


def test_missing_source_file_names_source_and_path(tmp_path: Path):
    with pytest.raises(InputError) as e:
        build_bench(tmp_path)
    assert "source 'ramdocs'" in str(e.value) and str(tmp_path / "ramdocs/RAMDocs_test.jsonl") in str(e.value)
    with pytest.raises(ConfigError, match="source 'ambigdocs' has no file in the shared data"):
        build_bench(tmp_path, only=["ambigdocs"])
    with pytest.raises(ConfigError, match="unknown source 'nope'; allowed: ramdocs, contraqa_en555"):
        build_bench(tmp_path, only=["nope"])
    with pytest.raises(ConfigError, match="not selected by --source"):
        build_bench(tmp_path, only=["macnoise"], sources={"ramdocs": tmp_path / "x"})
    with pytest.raises(ConfigError, match="source 'climate_fever': unknown argument 'max'; allowed: max_entropy"):
        build_bench(tmp_path, only=["climate_fever"], options={"climate_fever": {"max": 1}})


def test_bad_line_in_jsonl_names_file_line_field(tmp_path: Path):
    good = {
        "question": "Who wrote X?",
        "gold_answers": ["A"],
        "disambig_entity": ["X"],
        "wrong_answers": [],
        "documents": [{"text": "A wrote X.", "type": "correct", "answer": "A"}],
    }
    bad = json.loads(json.dumps(good))
    bad["documents"][0]["type"] = "rumour"
    path = _jsonl(tmp_path / "r.jsonl", [good, good, bad])
    with pytest.raises(InputError) as e:
        build_bench(tmp_path, only=["ramdocs"], sources={"ramdocs": path})
    assert e.value.path == str(path) and e.value.line == 3 and e.value.field == "documents[0].type"
    assert "allowed: correct, misinfo, noise" in str(e.value)
    path.write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"r\.jsonl:2: invalid JSON"):
        build_bench(tmp_path, only=["ramdocs"], sources={"ramdocs": path})


def test_bad_record_in_json_array_names_its_line(tmp_path: Path):
    ok = {"claim_id": 1, "claim": "c", "evidences": ["e"], "labels": ["Supports"]}
    bad = {"claim_id": 2, "claim": "d", "evidences": ["e", "f"], "labels": ["Supports", "Maybe"]}
    d = tmp_path / "raw"
    d.mkdir()
    path = d / "support.json"
    path.write_text(json.dumps([ok, bad], indent=2), encoding="utf-8")
    with pytest.raises(InputError) as e:
        build_bench(tmp_path, only=["contraqa_en555"], sources={"contraqa_en555": d})
    starts = [n for n, line in enumerate(path.read_text().splitlines(), 1) if line == "  {"]
    assert e.value.line == starts[1] == 12
    assert e.value.field == "[1].labels[1]" and "allowed: Supports, Refutes, Neutral" in str(e.value)


def test_climate_fever_bad_label(tmp_path: Path):
    rec = {
        "claim_id": "9",
        "claim": "c",
        "claim_label": "SUPPORTS",
        "evidences": [
            {
                "evidence_id": "a",
                "evidence_label": "SUPPORT",
                "article": "a",
                "evidence": "e",
                "entropy": 0.0,
                "votes": [],
            }
        ],
    }
    path = _jsonl(tmp_path / "cf.jsonl", [rec])
    with pytest.raises(InputError, match=r"cf\.jsonl:1: field 'evidences\[0\]\.evidence_label': 'SUPPORT'; allowed"):
        build_bench(tmp_path, only=["climate_fever"], sources={"climate_fever": path})
