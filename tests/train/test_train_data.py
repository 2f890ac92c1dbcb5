"""The default judge's training data: generated pairs, RAMDocs twins, and no leakage."""

from __future__ import annotations

import json
import random
from pathlib import Path

from conflictscore_local.bench import normalize_text, split_for
from conflictscore_local.train_data import augment, build, negate, swap_entity, swap_number, thin_entity_twins

EIFFEL = "The Eiffel Tower was completed in 1889 and drew 2,000,000 visitors in its first year."


def test_swap_number_changes_a_number_the_passage_states() -> None:
    rng = random.Random(0)
    for _ in range(20):
        new = swap_number("The Eiffel Tower was completed in 1889.", EIFFEL, rng)
        assert new is not None and new.startswith("The Eiffel Tower was completed in ")
        year = int(new.removeprefix("The Eiffel Tower was completed in ").rstrip("."))
        assert year != 1889 and 1859 <= year <= 1919  # a year moves by 1-30
    new = swap_number("It drew 2,000,000 visitors.", EIFFEL, rng)
    assert new is not None and new != "It drew 2,000,000 visitors." and "," in new
    assert swap_number("The tower was completed in 1925.", EIFFEL, rng) is None  # the passage does not state it
    assert swap_number("COVID-19 spread fast.", "COVID-19 spread in 2020.", rng) is None  # part of a name
    month = swap_number("It opened in March.", "It opened in March 1889.", rng)
    assert month is not None and month.startswith("It opened in ") and "March" not in month


def test_negate_and_its_refusals() -> None:
    assert negate("The tower was completed in 1889.") == "The tower was not completed in 1889."
    assert negate("Cats can spread the virus.") == "Cats cannot spread the virus."
    assert negate("The tower is not in Rome.") is None
    assert negate("If it rains, the game is cancelled.") is None
    assert negate("Paris, the capital of France.") is None


def test_swap_entity_swaps_only_the_object() -> None:
    pool = {"GPE": ["Paris", "Lyon", "Warsaw"], "PERSON": ["Marie Curie", "Pierre Curie"]}
    passage = "Marie Curie was born in Warsaw."
    claim = "Marie Curie was born in Warsaw."
    ents = [("Marie Curie", "PERSON"), ("Warsaw", "GPE")]
    got = {swap_entity(claim, passage, ents, pool, random.Random(s)) for s in range(10)}
    assert got == {"Marie Curie was born in Paris.", "Marie Curie was born in Lyon."}
    assert swap_entity("Warsaw is old.", "Warsaw is old.", [("Warsaw", "GPE")], pool, random.Random(0)) is None


def test_augment_labels_each_kind() -> None:
    support = [
        {"claim": "The tower was completed in 1889.", "passage": EIFFEL, "label": "SUPPORT", "source": "x"},
        {"claim": "Marie Curie was born in Warsaw.", "passage": "Marie Curie was born in Warsaw in 1867.",
         "label": "SUPPORT", "source": "x"},
    ]
    passages = ["Bananas are yellow fruit.", "Stock markets closed higher today."]

    def fake_entities(claims: list[str]) -> list[list[tuple[str, str]]]:
        return [[("Marie Curie", "PERSON"), ("Warsaw", "GPE")] if "Curie" in c else [] for c in claims]

    out = augment(support, passages, random.Random(0), per_kind=4, entities=fake_entities)
    kinds = {(p["source"], p["label"]) for p in out}
    assert kinds == {("aug_number", "CONTRADICT"), ("aug_negation", "CONTRADICT"), ("aug_unrelated", "IRRELEVANT")}
    unrelated = [p for p in out if p["source"] == "aug_unrelated"]
    assert {p["passage"] for p in unrelated} <= set(passages) and len(unrelated) == 2
    # with a pool of two places, the Warsaw claim's object can be swapped
    out = augment(support + [{**support[1], "claim": "Pierre Curie was born in Paris.",
                              "passage": "Pierre Curie was born in Paris."}], passages, random.Random(0), per_kind=4,
                  entities=lambda cs: [[("Marie Curie", "PERSON"), ("Warsaw", "GPE")] if "Marie" in c else
                                       [("Pierre Curie", "PERSON"), ("Paris", "GPE")] if "Pierre" in c else [] for c in cs])
    swapped = {p["claim"] for p in out if p["source"] == "aug_entity"}
    assert swapped == {"Marie Curie was born in Paris.", "Pierre Curie was born in Warsaw."}


def test_thin_entity_twins_keeps_only_documents_whose_label_differs() -> None:
    docs = [{"id": f"d{j}", "text": f"doc {j}"} for j in range(3)]
    plain = {"id": "ramdocs:1:no_entity", "variant": "no_entity", "claims": ["A is x."], "documents": docs,
             "gold_labels": [["SUPPORT", "CONTRADICT", "IRRELEVANT"]], "gold_conflicted": [True]}
    named = {**plain, "id": "ramdocs:1:entity", "variant": "entity", "claims": ["A (film) is x."],
             "gold_labels": [["SUPPORT", "IRRELEVANT", "IRRELEVANT"]]}
    same = {**plain, "id": "ramdocs:2:entity", "variant": "entity"}
    twin_of_same = {**plain, "id": "ramdocs:2:no_entity"}
    out, dropped = thin_entity_twins([plain, named, twin_of_same, same])
    assert [it["id"] for it in out] == ["ramdocs:1:no_entity", "ramdocs:1:entity", "ramdocs:2:no_entity"]
    assert out[1]["documents"] == [docs[1]] and out[1]["gold_labels"] == [["IRRELEVANT"]]
    assert out[1]["gold_conflicted"] == [False]
    assert dropped == 2 + 3


def test_built_training_data_holds_no_dev_or_test_claim(shared_data: Path, tmp_path: Path) -> None:
    record = build(shared_data, tmp_path, per_kind=50, sick_per_label=50)
    dev_test = {normalize_text(c) for s in ("dev", "test")
                for line in (tmp_path / f"bench_{s}.jsonl").open() for c in json.loads(line)["claims"]}
    pairs = [json.loads(line) for line in (tmp_path / "pairs.jsonl").open()]
    train_items = [json.loads(line) for line in (tmp_path / "bench_train.jsonl").open()]
    assert not any(normalize_text(p["claim"]) in dev_test for p in pairs)
    assert all(it["split"] == "train" for it in train_items)
    assert all(split_for(p["claim"]) == "train" for p in pairs if not p["source"].startswith("aug_"))
    assert {p["source"] for p in pairs} == {"healthver", "wice", "sick", "aug_number", "aug_negation",
                                            "aug_entity", "aug_unrelated"}
    assert record["pairs_by_source"]["sick"] == {"SUPPORT": 50, "CONTRADICT": 50, "IRRELEVANT": 50}
    assert record["files"]["pairs"]["sha256"] and record["bench"]["dev"]["items"] > 0
