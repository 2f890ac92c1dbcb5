"""The nli_extra loaders, each on a small file in its set's original shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.errors import InputError
from conflictscore_local.train import nli_extra as X
from conflictscore_local.train.sources import LabelledPair


@pytest.fixture(autouse=True)
def _fresh_skips() -> None:
    X.skipped.clear()


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_scone_reads_the_edited_columns_and_one_scoped_the_plain_ones(tmp_path: Path) -> None:
    d = tmp_path / "scone_nli" / "train"
    d.mkdir(parents=True)
    header = (
        ",sentence1,sentence2,gold_label,sentence1_lex,sentence2_lex,group_index,sentence1_edited,"
        "sentence2_edited,gold_label_edited\n"
    )
    for name in X.SCONE_FILES:
        if name == "one_scoped":
            (d / f"{name}.csv").write_text(
                header + "0,A man is not wearing a hat.,A man is not wearing a sunhat.,"
                "entailment,hat,sunhat,0,x,y,neutral\n",
                encoding="utf-8",
            )
        else:
            (d / f"{name}.csv").write_text(
                header + '0,p,h,entailment,a,b,3,"The cat, not the dog, sleeps.",The dog does not sleep.,neutral\n',
                encoding="utf-8",
            )
    pairs = list(X.load_scone(tmp_path, "train"))
    assert len(pairs) == 6
    assert pairs[2] == LabelledPair("A man is not wearing a sunhat.", "A man is not wearing a hat.", "SUPPORT", "scone")
    assert pairs[0] == LabelledPair("The dog does not sleep.", "The cat, not the dog, sleeps.", "IRRELEVANT", "scone")
    assert pairs[0].group == "no_negation:3"


def test_hossain_is_cp1252_with_crlf_and_rte_not_entailment_is_skipped(tmp_path: Path) -> None:
    d = tmp_path / "data/new_benchmarks/clean_data"
    d.mkdir(parents=True)
    (d / "MNLI.txt").write_bytes(
        "index\tText\tHypothesis\tgold_label\r\n0\tThe caf\xe9 is not open.\tIt is closed.\tentailment\r\n".encode(
            "latin-1"
        ).replace(b"\xe9", "é".encode("cp1252"))
    )
    (d / "RTE.txt").write_bytes(
        b"index\tText\tHypothesis\tgold_label\r\n0\tA\tB\tnot_entailment\r\n1\tC is D.\tC is not D.\tentailment\r\n"
    )
    pairs = list(X.load_hossain(tmp_path, ("MNLI", "RTE")))
    assert pairs == [
        LabelledPair("It is closed.", "The café is not open.", "SUPPORT", "negnli_hossain"),
        LabelledPair("C is not D.", "C is D.", "SUPPORT", "negnli_hossain"),
    ]
    assert X.skipped == {"negnli_hossain": 1}


def test_med_keeps_entailment_and_skips_its_not_entailed_neutral(tmp_path: Path) -> None:
    path = tmp_path / "MED.tsv"
    path.write_text(
        "index\tpromptID\tpairID\tgenre\tsentence1\tsentence2\tgold_label\n"
        "1\t1\t1\tg\tNo dog barked loudly.\tNo dog barked loudly at night.\tentailment\n"
        "2\t2\t2\tg\tSome dog barked.\tSome dog barked loudly.\tneutral\n",
        encoding="utf-8",
    )
    assert list(X.load_med(path)) == [
        LabelledPair("No dog barked loudly at night.", "No dog barked loudly.", "SUPPORT", "med")
    ]
    assert X.skipped == {"med": 1}


def test_vitaminc_is_detokenised_and_grouped_by_page(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "test.jsonl",
        [
            {
                "unique_id": "a_1",
                "case_id": "a",
                "label": "REFUTES",
                "claim": "Westlife sold under 23.5 million .",
                "evidence": "Westlife -LRB- the band -RRB- sold 23 million .",
                "page": "Westlife",
            },
            {
                "unique_id": "a_2",
                "case_id": "a",
                "label": "NOT ENOUGH INFO",
                "claim": "Westlife sold more .",
                "evidence": "They toured .",
                "page": "Westlife",
            },
        ],
    )
    pairs = list(X.load_vitaminc(path, "vitaminc_real"))
    assert pairs[0] == LabelledPair(
        "Westlife sold under 23.5 million.", "Westlife (the band) sold 23 million.", "CONTRADICT", "vitaminc_real"
    )
    assert [p.label for p in pairs] == ["CONTRADICT", "IRRELEVANT"] and {p.group for p in pairs} == {"Westlife"}


def test_fever_sets_label_fields_and_an_empty_evidence_row_is_skipped(tmp_path: Path) -> None:
    sym = _jsonl(
        tmp_path / "sym.jsonl",
        [
            {
                "id": "7",
                "claim": "The Cretaceous ended .",
                "evidence": "It ended .",
                "gold_label": "SUPPORTS",
                "label": "SUPPORTS",
            }
        ],
    )
    assert [(p.label, p.group) for p in X.load_fever_symmetric(sym)] == [("SUPPORT", "7")]
    adv = _jsonl(
        tmp_path / "adv.jsonl",
        [
            {"id": 1, "label": "REFUTES", "claim": "X is not a band .", "evidence": ""},
            {"id": 2, "label": "SUPPORTS", "claim": "Y is .", "evidence": "Y is ."},
        ],
    )
    assert [p.claim for p in X.load_fever_adversarial(adv)] == ["Y is."]
    assert X.skipped == {"fever_adversarial (empty evidence)": 1}


def test_anli_test_and_dev_taxinli_cad_breaking_conjnli_control(tmp_path: Path) -> None:
    anli = _jsonl(
        tmp_path / "anli.jsonl", [{"claim": "c", "evidence": "e", "tag": "r2_test", "label": "NOT ENOUGH INFO"}]
    )
    assert [(p.label, p.group) for p in X.load_anli_test(anli)] == [("IRRELEVANT", "r2_test")]
    dev = tmp_path / "anli" / "anlizinganli/anli_annot_v0.2"
    dev.mkdir(parents=True)
    (dev / "ANLI_analysis_r1_dev.csv").write_text(
        'context,statement,reason,gold_label,tags\n"A, B.",S.,r,c,"Numerical, Negation"\n', encoding="utf-8"
    )
    assert list(X.load_anli_dev(tmp_path / "anli", (1,))) == [LabelledPair("S.", "A, B.", "CONTRADICT", "anli")]
    tax = tmp_path / "taxinli10k.tsv"
    tax.write_text(
        'prem\thyp\tlabel\tannotated_label\tgenre\nP "quoted" text\tH\tneutral\tneutral\tfiction\n', encoding="utf-8"
    )
    assert [(p.passage, p.label, p.group) for p in X.load_taxinli(tax)] == [
        ('P "quoted" text', "IRRELEVANT", "fiction")
    ]
    for part in X.CAD_PARTS:
        (tmp_path / "cad" / "NLI" / part).mkdir(parents=True)
        (tmp_path / "cad" / "NLI" / part / "dev.tsv").write_text(
            f"sentence1\tsentence2\tgold_label\n{part} p\th\tcontradiction\n", encoding="utf-8"
        )
    assert [(p.passage, p.group) for p in X.load_cad(tmp_path / "cad", "dev")] == [(f"{k} p", k) for k in X.CAD_PARTS]
    brk = _jsonl(
        tmp_path / "b.jsonl",
        [{"sentence1": "A red car.", "sentence2": "A blue car.", "category": "colors", "gold_label": "contradiction"}],
    )
    assert [(p.claim, p.group) for p in X.load_breaking_nli(brk)] == [("A blue car.", "colors")]
    conj = tmp_path / "conj.tsv"
    conj.write_bytes(
        "Premise\tHypothesis\tLabel\nHe was born in Illinois, but moved.\tHe was born in Illinois."
        "\tentailment\n".encode("utf-8-sig")
    )
    assert list(X.load_conjnli(conj)) == [
        LabelledPair("He was born in Illinois.", "He was born in Illinois, but moved.", "SUPPORT", "conjnli")
    ]
    ctl = _jsonl(tmp_path / "c.jsonl", [{"uid": "id_0", "premise": "Long text.", "hypothesis": "H.", "label": "e"}])
    assert [p.label for p in X.load_control(ctl)] == ["SUPPORT"]


def test_averitec_writes_question_answer_pairs_out_and_skips_conflicting(tmp_path: Path) -> None:
    path = tmp_path / "dev.json"
    path.write_text(
        json.dumps(
            [
                {
                    "claim": "Connery refused an ad.",
                    "label": "Refuted",
                    "questions": [
                        {"question": "Where was it published?", "answers": [{"answer": "On a satire site"}]},
                        {"question": "Is there a letter", "answers": [{"answer": "No answer could be found."}]},
                    ],
                },
                {"claim": "X.", "label": "Conflicting Evidence/Cherrypicking", "questions": []},
            ]
        ),
        encoding="utf-8",
    )
    assert list(X.load_averitec(path)) == [
        LabelledPair("Connery refused an ad.", "Where was it published? On a satire site.", "CONTRADICT", "averitec")
    ]
    assert X.skipped == {"averitec": 1}


def test_an_unknown_label_names_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "pmonli.jsonl"
    _jsonl(
        path,
        [
            {"sentence1": "a", "sentence2": "b", "gold_label": "entailment"},
            {"sentence1": "a", "sentence2": "b", "gold_label": "maybe"},
        ],
    )
    with pytest.raises(InputError) as e:
        list(X.load_monli(path))
    assert "pmonli.jsonl:2" in str(e.value) and "gold_label" in str(e.value) and "'maybe'" in str(e.value)
    assert "entailment, contradiction, neutral" in str(e.value)
    tsv = tmp_path / "MED.tsv"
    tsv.write_text("index\tsentence1\tgold_label\n1\ta\tentailment\n", encoding="utf-8")
    with pytest.raises(InputError, match="missing column 'sentence2'"):
        list(X.load_med(tsv))


def test_the_registry_keeps_non_commercial_sets_for_evaluation_only() -> None:
    sets = X.extra_sets()
    for s in sets.values():
        if "NC" in s.licence:
            assert s.use == "eval", s.name
    assert sets["taxinli"].use == "eval" and sets["nan_nli"].use == "eval"
    assert {"vitaminc_real", "scone_train", "med", "cad_snli_train"} <= {k for k, s in sets.items() if s.use == "train"}
    with pytest.raises(InputError, match="unknown nli_extra set 'nope'; allowed: scone_train"):
        X.load_extra(".", "nope")
