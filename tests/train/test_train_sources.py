"""Loaders of the judge-training sources, on small files in each source's original format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.errors import InputError
from conflictscore_local.train.sources import (
    ClaimRecord,
    Evidence,
    LabelledPair,
    detokenize,
    load_check_covid,
    load_corpus,
    load_covidfact,
    load_esnli,
    load_fever_nli,
    load_healthver_csv,
    load_multivers_claims,
    load_sick,
    load_wice,
)

from .conftest import write_jsonl

ABSTRACT = ["Masks were studied in 2020.", "Masks cut transmission by half.", "Funding came from the state."]


@pytest.fixture
def corpus_file(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "corpus.jsonl",
        [
            {"doc_id": 7, "title": "Masks", "abstract": ABSTRACT},
            {"doc_id": 8, "title": "Other", "abstract": ["Cats sleep a lot.", "Dogs bark."]},
        ],
    )


def test_multivers_claims_map_labels_rationales_and_uncited_evidence(tmp_path: Path, corpus_file: Path) -> None:
    corpus = load_corpus(corpus_file)
    assert corpus["7"] == tuple(ABSTRACT)
    claims = write_jsonl(
        tmp_path / "claims.jsonl",
        [
            {
                "id": 1,
                "claim": " Masks halve transmission.",
                "doc_ids": [7, 8],
                "evidence": {"7": [{"sentences": [1], "label": "SUPPORT"}, {"sentences": [0], "label": "SUPPORT"}]},
            },
            {
                "id": 2,
                "claim": "Masks do nothing.",
                "cited_doc_ids": [7],
                "evidence": {"7": [{"sentences": [1], "label": "REFUTE"}]},
            },
        ],
    )
    got = list(load_multivers_claims(claims, "hv", corpus))
    assert got == [
        ClaimRecord("Masks halve transmission.", (Evidence("7", "SUPPORT", (0, 1)), Evidence("8", "IRRELEVANT")), "hv"),
        ClaimRecord("Masks do nothing.", (Evidence("7", "CONTRADICT", (1,)),), "hv"),
    ]


@pytest.mark.parametrize(
    ("row", "field", "message"),
    [
        ({"claim": "c", "doc_ids": [9], "evidence": {}}, "doc_ids", "document 9 is not in the corpus"),
        (
            {"claim": "c", "doc_ids": [7], "evidence": {"7": [{"sentences": [5], "label": "SUPPORT"}]}},
            "evidence.7[0].sentences",
            "sentence index 5 outside the abstract (3 sentences)",
        ),
        (
            {"claim": "c", "doc_ids": [7], "evidence": {"7": [{"sentences": [0], "label": "MAYBE"}]}},
            "evidence.7[0].label",
            "'MAYBE'; allowed: SUPPORT, CONTRADICT, REFUTE",
        ),
    ],
)
def test_multivers_errors_name_file_line_and_field(
    tmp_path: Path, corpus_file: Path, row: dict, field: str, message: str
) -> None:
    f = write_jsonl(tmp_path / "claims.jsonl", [{"claim": "ok", "doc_ids": [7], "evidence": {}}, row])
    with pytest.raises(InputError) as e:
        list(load_multivers_claims(f, "x", load_corpus(corpus_file)))
    assert (e.value.line, e.value.field) == (2, field) and message in str(e.value)


def test_check_covid_keeps_the_on_topic_sentences_of_not_enough_info(tmp_path: Path) -> None:
    corpus = load_corpus(
        write_jsonl(tmp_path / "corpus.json", [{"cord_id": "ab1", "title": "t", "abstract": ABSTRACT}]),
        id_field="cord_id",
    )
    f = write_jsonl(
        tmp_path / "train.json",
        [
            {
                "id": "a_0",
                "claim": "Masks cut transmission by 90%.",
                "cord_id": "ab1",
                "label": "REFUTE",
                "evidence_set": [{"sent_index": 1, "type": "PRIMARY"}],
                "is_auth": False,
            },
            {
                "id": "a_1",
                "claim": "Masks were cheap.",
                "cord_id": "ab1",
                "label": "NOTENOUGHINFO",
                "evidence_set": [{"sent_index": 0, "type": "PRIMARY"}, {"sent_index": 2, "type": "SUPPLEMENTARY"}],
            },
        ],
    )
    got = list(load_check_covid(f, corpus))
    assert [r.evidence for r in got] == [
        (Evidence("ab1", "CONTRADICT", (1,)),),
        (Evidence("ab1", "IRRELEVANT", (0, 2)),),
    ]
    bad = write_jsonl(tmp_path / "bad.json", [{"claim": "c", "cord_id": "zz", "label": "SUPPORT", "evidence_set": []}])
    with pytest.raises(InputError, match="bad.json:1: field 'cord_id': document zz is not in the corpus"):
        list(load_check_covid(bad, corpus))


def test_covidfact_joins_its_evidence_sentences(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "cf.jsonl",
        [
            {
                "claim": "Vitamin D cures covid",
                "label": "REFUTED",
                "evidence": ["No effect was seen.", "n = 40."],
                "gold_source": "x",
                "flair": "y",
            }
        ],
    )
    assert list(load_covidfact(f)) == [
        LabelledPair("Vitamin D cures covid", "No effect was seen. n = 40.", "CONTRADICT", "covidfact", "evidence")
    ]


def test_line_aligned_nli_files_are_detokenised(tmp_path: Path) -> None:
    for name, text in {
        "dev.raw.input0": "Soul Food is a 1997 film by Kenneth `` Babyface '' Edmonds -LRB- US -RRB- .\n",
        "dev.raw.input1": "Soul Food was released in 1997.\n",
        "dev.label": "entailment\n",
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert list(load_fever_nli(tmp_path)) == [
        LabelledPair(
            "Soul Food was released in 1997.",
            'Soul Food is a 1997 film by Kenneth "Babyface" Edmonds (US).',
            "SUPPORT",
            "fever_nli",
        )
    ]
    for name, text in {
        "s1.dev": "two women are embracing .\na man sleeps .\n",
        "s2.dev": "two people hug .\nthe man is n't awake .\n",
        "labels.dev": "entailment\ncontradiction\n",
    }.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    got = list(load_esnli(tmp_path, "dev"))
    assert [(p.claim, p.passage, p.label) for p in got] == [
        ("Two people hug.", "Two women are embracing.", "SUPPORT"),
        ("The man isn't awake.", "A man sleeps.", "CONTRADICT"),
    ]
    (tmp_path / "labels.dev").write_text("entailment\nmaybe\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"labels.dev:2: 'maybe'; allowed: entailment, contradiction, neutral"):
        list(load_esnli(tmp_path, "dev"))
    (tmp_path / "labels.dev").write_text("entailment\n", encoding="utf-8")
    with pytest.raises(InputError, match="differ in length: 2 / 2 / 1 lines"):
        list(load_esnli(tmp_path, "dev"))


def test_detokenize() -> None:
    assert (
        detokenize("Obama 's policy , in 2009 -LRB- mostly -RRB- , was n't new .")
        == "Obama's policy, in 2009 (mostly), wasn't new."
    )


def test_csv_and_tsv_sources(tmp_path: Path) -> None:
    hv = tmp_path / "hv.csv"
    hv.write_text(
        'evidence,claim,label,question\n"Masks work, a trial found.",Masks work.,Supports,q\ne,c,Maybe,q\n',
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"hv.csv:3: field 'label': 'Maybe'; allowed: Supports, Refutes, Neutral"):
        list(load_healthver_csv(hv))
    assert next(load_healthver_csv(hv)) == LabelledPair(
        "Masks work.", "Masks work, a trial found.", "SUPPORT", "healthver_dev"
    )
    sick = tmp_path / "SICK.txt"
    sick.write_text(
        "pair_ID\tsentence_A\tsentence_B\tentailment_judgment\n1\tA dog runs.\tNo dog runs.\tCONTRADICTION\n",
        encoding="utf-8",
    )
    assert list(load_sick(sick)) == [LabelledPair("No dog runs.", "A dog runs.", "CONTRADICT", "sick")]


def test_wice_keeps_supported_claims_with_their_smallest_sentence_set(tmp_path: Path) -> None:
    f = write_jsonl(
        tmp_path / "wice.jsonl",
        [
            {
                "label": "supported",
                "claim": "X won in 1990.",
                "evidence": ["X won.", "", "It was 1990.", "Other."],
                "supporting_sentences": [[0, 2, 3], [0, 2]],
            },
            {"label": "partially_supported", "claim": "Y.", "evidence": ["a"], "supporting_sentences": [[0]]},
        ],
    )
    assert list(load_wice(f)) == [LabelledPair("X won in 1990.", "X won. It was 1990.", "SUPPORT", "wice")]
    json.dumps([p.as_json() for p in load_wice(f)])
