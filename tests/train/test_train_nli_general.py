"""The nli_general and FactCG loaders on small files in their original formats: labels, grouping, skips, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.errors import InputError
from conflictscore_local.train import nli_extra
from conflictscore_local.train.nli_general import load_cg2c, load_fm2, load_lingnli, load_mpe, load_rte


def _jsonl(path: Path, rows: list[object]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_lingnli_reads_the_per_round_files_of_every_protocol_never_a_combined_one(tmp_path: Path) -> None:
    root = tmp_path / "NLI_data"
    row = {
        "premise": "Graves hid out in the deep woods.",
        "hypothesis": "Graves hid.",
        "label": "entailment",
        "promptID": 57581,
    }
    _jsonl(root / "1_Baseline_protocol" / "train_round1_baseline.jsonl", [row])
    _jsonl(
        root / "2_Ling_on_side_protocol" / "train_round2_LotS.jsonl",
        [{**row, "hypothesis": "Graves was seen.", "label": "neutral", "promptID": "9"}],
    )
    _jsonl(root / "3_Ling_in_loop_protocol" / "train_round5_LitL_combined.jsonl", [row, row])
    _jsonl(
        root / "1_Baseline_protocol" / "val_round1_base.jsonl",
        [{**row, "hypothesis": "Graves stood in the open.", "label": "contradiction"}],
    )
    train = list(load_lingnli(tmp_path, "train"))
    assert [(p.claim, p.passage, p.label, p.source, p.group) for p in train] == [
        ("Graves hid.", "Graves hid out in the deep woods.", "SUPPORT", "lingnli", "57581"),
        ("Graves was seen.", "Graves hid out in the deep woods.", "IRRELEVANT", "lingnli", "9"),
    ]
    assert [p.label for p in load_lingnli(tmp_path, "val")] == ["CONTRADICT"]
    with pytest.raises(InputError, match="split 'test'; allowed: train, val"):
        list(load_lingnli(tmp_path, "test"))


def test_lingnli_bad_label_names_file_line_and_field(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "NLI_data" / "1_Baseline_protocol" / "train_round1_baseline.jsonl",
        [
            {"premise": "a b", "hypothesis": "a", "label": "entailment", "promptID": 1},
            {"premise": "a b", "hypothesis": "b", "label": "entails", "promptID": 2},
        ],
    )
    with pytest.raises(InputError) as e:
        list(load_lingnli(tmp_path, "train"))
    assert str(e.value) == f"{path}:2: field 'label': 'entails'; allowed: entailment, contradiction, neutral"


MPE_HEADER = (
    "ID\tpremise1\tpremise2\tpremise3\tpremise4\thypothesis\tentailment_judgments\tneutral_judgments\t"
    "contradiction_judgments\tgold_label\n"
)


def test_mpe_joins_the_four_captions_and_reads_the_row_whose_label_lost_its_tab(tmp_path: Path) -> None:
    path = tmp_path / "mpe_dev.txt"
    path.write_text(
        MPE_HEADER
        + '1\t1.jpg#0/A child holds a spoon\t1.jpg#1/A toddler eats.\t1.jpg#2/A "kid" smiles!\t1.jpg#3/Food\t'
        "Toddler sitting.\t5\t0\t0\tentailment\n"
        + "467\t2.jpg#0/A man runs.\t2.jpg#1/A man jogs.\t2.jpg#2/A runner.\t2.jpg#3/Road.\tThe man sleeps.\t"
        "0\t1\t3   contradiction\n",
        encoding="utf-8",
    )
    pairs = list(load_mpe(path))
    assert [(p.claim, p.passage, p.label, p.group) for p in pairs] == [
        ("Toddler sitting.", 'A child holds a spoon. A toddler eats. A "kid" smiles! Food.', "SUPPORT", "1.jpg"),
        ("The man sleeps.", "A man runs. A man jogs. A runner. Road.", "CONTRADICT", "2.jpg"),
    ]


def test_rte_keeps_entailment_and_counts_the_merged_label_it_skips(tmp_path: Path) -> None:
    path = tmp_path / "train.tsv"
    path.write_text(
        "index\tsentence1\tsentence2\tlabel\n0\tNo weapons were found.\tWeapons were found.\t"
        "not_entailment\n1\tThe pope died in 2005.\tThe pope died.\tentailment\n",
        encoding="utf-8",
    )
    nli_extra.skipped.clear()
    assert [(p.claim, p.label) for p in load_rte(path)] == [("The pope died.", "SUPPORT")]
    assert nli_extra.skipped["rte"] == 1


def test_fm2_joins_the_gold_evidence_and_refuses_a_claim_without_any(tmp_path: Path) -> None:
    row = {
        "id": "x",
        "text": "Gandhi was filmed in India.",
        "label": "REFUTES",
        "wikipedia_page": "Gandhi (film)",
        "gold_evidence": [
            {"section_header": "P", "text": "Shooting was moved."},
            {"section_header": "P", "text": "It was filmed abroad."},
        ],
        "retrieved_evidence": [],
    }
    path = _jsonl(tmp_path / "dev.jsonl", [row, {**row, "label": "SUPPORTS", "gold_evidence": []}])
    gen = load_fm2(path)
    first = next(gen)
    assert (first.claim, first.passage, first.label, first.group) == (
        "Gandhi was filmed in India.",
        "Shooting was moved. It was filmed abroad.",
        "CONTRADICT",
        "Gandhi (film)",
    )
    with pytest.raises(InputError) as e:
        next(gen)
    assert str(e.value) == f"{path}:2: field 'gold_evidence': no evidence sentence"


def test_cg2c_maps_one_to_support_and_zero_to_irrelevant_and_groups_twins_by_claim(tmp_path: Path) -> None:
    base = {"task": "bin_grounding", "text_c": []}
    path = _jsonl(
        tmp_path / "CG2C_doc.jsonl",
        [
            {
                **base,
                "text_a": "Ken Clarke said the cut was unfair. Inflation rose.",
                "text_b": ["Clarke criticised it."],
                "orig_label": 1,
            },
            {**base, "text_a": "Inflation rose.", "text_b": ["Clarke criticised it."], "orig_label": 0},
            {**base, "text_a": "Doc.", "text_b": ["Other."], "orig_label": 2},
        ],
    )
    gen = load_cg2c(path)
    a, b = next(gen), next(gen)
    assert (a.label, b.label) == ("SUPPORT", "IRRELEVANT")
    assert a.group == b.group and a.claim == b.claim == "Clarke criticised it."
    with pytest.raises(InputError) as e:
        next(gen)
    assert str(e.value) == f"{path}:3: field 'orig_label': 2; allowed: 1, 0"
