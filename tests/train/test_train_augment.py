"""Generated pairs, RAMDocs twins, and the ConflictBench control cap of the training mix."""

from __future__ import annotations

import random

from conflictscore_local.train.augment import (
    augment,
    compose,
    compound,
    feature_balance,
    negate,
    negate_both,
    rebalance,
    subject_edit,
    swap_entity,
    swap_number,
    thin_entity_twins,
)
from conflictscore_local.train.prepare import _cap_controls
from conflictscore_local.train.sources import LabelledPair

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


def test_compound_joins_two_claims_in_either_order() -> None:
    seen = set()
    for seed in range(40):
        claim = compound("The tower was completed in 1889.", "Aspirin reduces fever.", random.Random(seed))
        seen.add(claim)
        assert claim.endswith(".") and claim.count("1889") == 1 and "Aspirin reduces fever" in claim
        assert ".." not in claim and ";." not in claim
    # the second clause's leading function word is lower-cased; a leading name keeps its capital
    assert "Aspirin reduces fever and the tower was completed in 1889." in seen
    assert "The tower was completed in 1889; Aspirin reduces fever." in seen
    assert "Aspirin reduces fever. Also, the tower was completed in 1889." in seen
    assert len(seen) == 8  # 2 orders x 4 joiners


def test_compose_keeps_each_label_and_adds_an_irrelevant_twin() -> None:
    support = [
        LabelledPair("The tower was completed in 1889.", EIFFEL, "SUPPORT", "wiki"),
        LabelledPair(
            "Aspirin reduces fever in adults.", "Aspirin lowers body temperature in febrile adults.", "SUPPORT", "med"
        ),
    ]
    contradict = [LabelledPair("The Volga is 300 km long.", "The Volga river is 3,530 km long.", "CONTRADICT", "geo")]
    irrelevant = [
        LabelledPair("Coffee is grown in Brazil.", "Penguins live in Antarctica and eat krill.", "IRRELEVANT", "food"),
        LabelledPair("The senate was founded in Rome.", "Basalt is a volcanic rock.", "IRRELEVANT", "hist"),
    ]
    out = compose(support, contradict, irrelevant, random.Random(0), per_kind=5)
    by_kind = {}
    for p in out:
        by_kind.setdefault((p.source, p.kind), []).append(p)
    assert {k: len(v) for k, v in by_kind.items()} == {
        ("aug_compound", "partial_support"): 2,
        ("aug_compound", "partial_contradict"): 1,
        ("aug_compound", "neither"): 3,
        ("aug_aside", "support"): 2,
        ("aug_aside", "contradict"): 1,
        ("aug_aside", "irrelevant"): 2,
    }
    for p in by_kind[("aug_compound", "partial_support")] + by_kind[("aug_compound", "partial_contradict")]:
        source = next(q for q in support + contradict if q.passage == p.passage)
        assert p.label == source.label and _clause_of(source.claim) in p.claim and p.claim != source.claim
    partial = {p.claim: p.passage for p in out if p.kind.startswith("partial_")}
    for p in by_kind[("aug_compound", "neither")]:  # the compound against a passage neither part is about
        assert p.label == "IRRELEVANT" and p.claim in partial and p.passage != partial[p.claim]
    assert (
        "Coffee is not grown in Brazil. Also, the tower was completed in 1889.",
        "The Volga river is 3,530 km long.",
        "IRRELEVANT",
    ) in {(p.claim, p.passage, p.label) for p in by_kind[("aug_compound", "neither")]}
    for p in out:
        if p.source == "aug_aside":
            source = next(q for q in support + contradict + irrelevant if q.claim == p.claim and q.passage in p.passage)
            aside = p.passage.replace(source.passage, "").strip()
            assert p.label == source.label and " not " in f" {aside} "
    assert compose([], [], [], random.Random(0), per_kind=5) == []
    # the added part comes from another source: nothing is made from one source alone
    alone = [LabelledPair(p.claim, p.passage, p.label, "one") for p in support + contradict + irrelevant]
    assert compose(alone[:2], alone[2:3], alone[3:], random.Random(0), per_kind=5) == []
    # each label's compounds get IRRELEVANT twins (half the quota each)
    many = compose(support * 4, contradict * 8, irrelevant, random.Random(1), per_kind=4)
    twins = [p.claim for p in many if p.kind == "neither"]
    kinds = {p.claim: p.kind for p in many if p.kind.startswith("partial_")}
    assert sorted(kinds[c] for c in twins) == ["partial_contradict"] * 2 + ["partial_support"] * 2


def _clause_of(claim: str) -> str:
    return claim.rstrip(".")[1:]  # without its first letter, whose case depends on the position


def test_swap_entity_swaps_only_the_object() -> None:
    pool = {"GPE": ["Paris", "Lyon", "Warsaw"], "PERSON": ["Marie Curie", "Pierre Curie"]}
    passage = "Marie Curie was born in Warsaw."
    claim = "Marie Curie was born in Warsaw."
    ents = [("Marie Curie", "PERSON"), ("Warsaw", "GPE")]
    got = {swap_entity(claim, passage, ents, pool, random.Random(s)) for s in range(10)}
    assert got == {"Marie Curie was born in Paris.", "Marie Curie was born in Lyon."}
    assert swap_entity("Warsaw is old.", "Warsaw is old.", [("Warsaw", "GPE")], pool, random.Random(0)) is None


def test_augment_makes_every_edit_in_both_directions() -> None:
    support = [
        LabelledPair("The tower was completed in 1889.", EIFFEL, "SUPPORT", "x"),
        LabelledPair("Marie Curie was born in Warsaw.", "Marie Curie was born in Warsaw in 1867.", "SUPPORT", "x"),
    ]
    contradict = [
        LabelledPair("The bridge was opened in 1901.", "The bridge opened to traffic in 1899.", "CONTRADICT", "x")
    ]
    irrelevant = [LabelledPair("The museum is closed on Mondays.", "Tickets cost ten euros.", "IRRELEVANT", "x")]
    passages = ["Bananas are yellow fruit.", "Stock markets closed higher today."]

    def fake_entities(claims: list[str]) -> list[list[tuple[str, str]]]:
        return [[("Marie Curie", "PERSON"), ("Warsaw", "GPE")] if "Curie" in c else [] for c in claims]

    out = augment(
        support,
        passages,
        random.Random(0),
        per_kind=4,
        entities=fake_entities,
        contradict=contradict,
        irrelevant=irrelevant,
    )
    by = {(p.source, p.kind): p for p in out if "Curie" not in p.claim}
    tower = "The tower was completed in "
    number = [by[("aug_number", k)] for k in ("claim_edit", "passage_edit", "both_edit")]
    assert [p.label for p in number] == ["CONTRADICT", "CONTRADICT", "SUPPORT"]
    changed = number[0].claim
    assert changed != support[0].claim and changed.startswith(tower) and number[0].passage == EIFFEL
    assert number[1].claim == support[0].claim and number[1].passage != EIFFEL
    assert number[2].claim == changed and number[2].passage == number[1].passage  # the same new value in both
    assert changed.removeprefix(tower).rstrip(".") in number[2].passage
    negation = {
        k: by[("aug_negation", k)]
        for k in ("claim_edit", "both_edit", "passage_edit", "contradicted_claim_negated", "irrelevant")
    }
    assert (
        negation["claim_edit"].claim == "The tower was not completed in 1889."
        and negation["claim_edit"].label == "CONTRADICT"
    )
    assert (
        negation["both_edit"].passage.startswith("The Eiffel Tower was not completed in 1889")
        and negation["both_edit"].label == "SUPPORT"
    )
    assert negation["passage_edit"].claim == support[0].claim and negation["passage_edit"].label == "CONTRADICT"
    assert negation["contradicted_claim_negated"] == LabelledPair(
        "The bridge was not opened in 1901.",
        "The bridge opened to traffic in 1899.",
        "SUPPORT",
        "aug_negation",
        "contradicted_claim_negated",
    )
    assert (
        negation["irrelevant"].claim == "The museum is not closed on Mondays."
        and negation["irrelevant"].label == "IRRELEVANT"
    )
    unrelated = [p for p in out if p.source == "aug_unrelated"]
    assert {p.passage for p in unrelated} <= set(passages) and len(unrelated) == 2
    # with a pool of two places, the object is swapped: in the claim alone, and in claim and passage alike
    out = augment(
        support + [LabelledPair("Pierre Curie was born in Paris.", "Pierre Curie was born in Paris.", "SUPPORT", "x")],
        passages,
        random.Random(0),
        per_kind=4,
        entities=lambda cs: [
            [("Marie Curie", "PERSON"), ("Warsaw", "GPE")]
            if "Marie" in c
            else [("Pierre Curie", "PERSON"), ("Paris", "GPE")]
            if "Pierre" in c
            else []
            for c in cs
        ],
    )
    swapped = {(p.claim, p.passage, p.label) for p in out if p.source == "aug_entity"}
    assert swapped == {
        ("Marie Curie was born in Paris.", "Marie Curie was born in Warsaw in 1867.", "CONTRADICT"),
        ("Marie Curie was born in Paris.", "Marie Curie was born in Paris in 1867.", "SUPPORT"),
        ("Pierre Curie was born in Warsaw.", "Pierre Curie was born in Paris.", "CONTRADICT"),
        ("Pierre Curie was born in Warsaw.", "Pierre Curie was born in Warsaw.", "SUPPORT"),
    }
    # the subject swapped: another person's birth place is irrelevant, unless the passage is swapped too
    subject = {(p.claim, p.passage, p.label, p.kind) for p in out if p.source == "aug_subject"}
    assert {
        ("Pierre Curie was born in Warsaw.", "Marie Curie was born in Warsaw in 1867.", "IRRELEVANT", "claim_edit"),
        ("Marie Curie was born in Warsaw.", "Pierre Curie was born in Warsaw in 1867.", "IRRELEVANT", "passage_edit"),
        ("Pierre Curie was born in Warsaw.", "Pierre Curie was born in Warsaw in 1867.", "SUPPORT", "both_edit"),
        ("Marie Curie was born in Paris.", "Pierre Curie was born in Paris.", "IRRELEVANT", "claim_edit"),
    } <= subject


def test_subject_edit_swaps_only_a_subject_the_passage_names() -> None:
    pool = {"PERSON": ["Marie Curie", "Niels Bohr"], "GPE": ["Warsaw", "Paris"]}
    ents = [("Marie Curie", "PERSON"), ("Warsaw", "GPE")]
    claim = "Marie Curie was born in Warsaw."
    assert subject_edit(claim, "Marie Curie was born in Warsaw in 1867.", ents, pool, random.Random(0)) == (
        "Marie Curie",
        "Niels Bohr",
    )
    assert subject_edit(claim, "She was born in Warsaw.", ents, pool, random.Random(0)) is None  # not named there
    late = [("Warsaw", "GPE")]  # the first entity is not at the start: not the subject
    assert subject_edit("In 1867 a girl was born in Warsaw.", "Warsaw, 1867.", late, pool, random.Random(0)) is None


def test_negate_both_needs_the_same_predicate_in_the_passage() -> None:
    assert negate_both("Cats can spread the virus.", "Studies show that cats can spread the virus.") == (
        "Cats cannot spread the virus.",
        "Studies show that cats cannot spread the virus.",
    )
    # another clause's auxiliary is not the claim's predicate
    assert (
        negate_both("The tower was completed in 1889.", "The tower was designed by Eiffel and finished in 1889.")
        is None
    )
    assert negate_both("The tower was completed in 1889.", "It was not completed in 1889.") is None  # already negative
    assert negate_both("The tower was completed.", "The tower was completed, and the hall was completed.") is None


def test_near_misses_are_one_small_step_off() -> None:
    rng = random.Random(3)
    years = set()
    for _ in range(200):
        new = swap_number("It opened in 1889.", "It opened in 1889.", rng)
        assert new is not None
        years.add(int(new.removeprefix("It opened in ").rstrip(".")))
    assert 1889 not in years and {1886, 1887, 1888, 1890, 1891, 1892} <= years  # near misses are among them
    days = {swap_number("Born on 7 November.", "She was born on 7 November 1867.", random.Random(s)) for s in range(50)}
    assert all(d is not None and 1 <= int(d.split()[2]) <= 28 for d in days if d and d.split()[2].isdigit())


def test_rebalance_removes_a_feature_that_predicts_the_label() -> None:
    pairs = [LabelledPair(f"It is not {i}.", "p", "CONTRADICT", "s") for i in range(60)]
    pairs += [LabelledPair(f"It is not {i}.", "p", lab, "s") for i in range(10) for lab in ("SUPPORT", "IRRELEVANT")]
    pairs += [
        LabelledPair(f"It is {i}.", "p", lab, "s") for i in range(40) for lab in ("SUPPORT", "CONTRADICT", "IRRELEVANT")
    ]
    before = feature_balance(pairs)["negation_in_claim"]["yes"]
    assert before["CONTRADICT"] == 0.75
    kept, dropped = rebalance(pairs, random.Random(0), features=("negation_in_claim",), tolerance=1.3, rounds=2)
    after = feature_balance(kept)["negation_in_claim"]
    # reference: the larger "no negation" cell, 1/3 each; the negated cell's scarcest label (10) allows
    # round(1.3 * 1/3 * 30) = 13 CONTRADICT pairs of its 60
    assert dropped == 47
    assert after["yes"] == {"pairs": 33, "SUPPORT": 0.303, "CONTRADICT": 0.394, "IRRELEVANT": 0.303}
    assert [p for p in kept if "not" not in p.claim] == [
        p for p in pairs if "not" not in p.claim
    ]  # only the skewed cell


def test_thin_entity_twins_keeps_only_documents_whose_label_differs() -> None:
    docs = [{"id": f"d{j}", "text": f"doc {j}"} for j in range(3)]
    plain = {
        "id": "ramdocs:1:no_entity",
        "variant": "no_entity",
        "claims": ["A is x."],
        "documents": docs,
        "gold_labels": [["SUPPORT", "CONTRADICT", "IRRELEVANT"]],
        "gold_conflicted": [True],
    }
    named = {
        **plain,
        "id": "ramdocs:1:entity",
        "variant": "entity",
        "claims": ["A (film) is x."],
        "gold_labels": [["SUPPORT", "IRRELEVANT", "IRRELEVANT"]],
    }
    same = {**plain, "id": "ramdocs:2:entity", "variant": "entity"}
    twin_of_same = {**plain, "id": "ramdocs:2:no_entity"}
    out, dropped = thin_entity_twins([plain, named, twin_of_same, same])
    assert [it["id"] for it in out] == ["ramdocs:1:no_entity", "ramdocs:1:entity", "ramdocs:2:no_entity"]
    assert out[1]["documents"] == [docs[1]] and out[1]["gold_labels"] == [["IRRELEVANT"]]
    assert out[1]["gold_conflicted"] == [False]
    assert dropped == 2 + 3


def test_conflictbench_controls_are_capped_per_source_and_conflicts_kept() -> None:
    items = [
        {"id": f"{src}:{i}", "source": src, "conflict_type": "none" if i % 2 else "contradiction"}
        for src in ("a", "b")
        for i in range(6)
    ]
    out, dropped = _cap_controls(items, 1, random.Random(0))
    assert dropped == 4
    for src in ("a", "b"):
        kept = [it for it in out if it["source"] == src]
        assert sum(it["conflict_type"] == "none" for it in kept) == 1
        assert sum(it["conflict_type"] != "none" for it in kept) == 3
    assert [it["id"] for it in out] == [it["id"] for it in items if it in out]  # input order


def test_prepare_drops_training_claims_and_abstracts_that_are_evaluation_texts() -> None:
    from collections import Counter

    from conflictscore_local.bench.leakage import TextIndex
    from conflictscore_local.train.prepare import _filter_pairs, _filter_records
    from conflictscore_local.train.sources import ClaimRecord, Evidence

    corpus = {
        "1": ("Masks cut transmission by half in the trial.", "Funding came from the state."),
        "2": ("Cats sleep for most of the day.",),
    }
    index = TextIndex()
    index.add_document("Masks cut transmission by half in the trial.")  # an eval snippet of abstract 1
    index.add_claim("Cats are lazy.")
    records = [
        ClaimRecord("Masks work.", (Evidence("1", "SUPPORT", (0,)), Evidence("2", "IRRELEVANT")), "hv"),
        ClaimRecord("Cats are lazy.", (Evidence("2", "SUPPORT", (0,)),), "hv"),
    ]
    counts: Counter[str] = Counter()
    kept = _filter_records(records, corpus, index, counts)
    assert kept == [ClaimRecord("Masks work.", (Evidence("2", "IRRELEVANT"),), "hv")]
    assert counts == {"documents": 1, "claims": 1}
    pairs = [
        LabelledPair("x", "Masks cut transmission by half in the trial. More.", "SUPPORT", "s"),
        LabelledPair("cats are LAZY", "p", "SUPPORT", "s"),
        LabelledPair("y", "Fine passage.", "IRRELEVANT", "s"),
    ]
    counts = Counter()
    assert _filter_pairs(pairs, index, counts) == pairs[2:] and counts == {"documents": 1, "claims": 1}


def test_unit_edit_converts_a_shared_quantity_and_keeps_the_number_under_the_other_unit() -> None:
    import random

    from conflictscore_local.train.augment import _conversions, unit_edit

    # the most readable conversion first (log10 of the value nearest 1.5): 5,000 metres, not 500,000 cm
    assert _conversions("5", "km") == ["5,000 metres", "500,000 centimetres", "5,000,000 millimetres"]
    assert _conversions("20", "°C") == ["68 °F"] and _conversions("21", "°C") == []  # 69.8 °F is no whole degree
    assert _conversions("3", "hours") == ["180 minutes", "10,800 seconds"]  # 0.125 days: three decimals
    # three times in four the most readable conversion, else the next one; the number kept under its unit
    seen = set()
    for seed in range(12):
        edit = unit_edit("The strike lasted 2 weeks.", "The strike lasted 2 weeks in all.", random.Random(seed))
        assert edit is not None and edit["old"] == "2 weeks"
        seen.add((edit["same"], edit["wrong"]))
    assert seen == {("14 days", "2 days"), ("336 hours", "2 hours")}
    assert unit_edit("It took 2 weeks.", "It took 3 weeks.", random.Random(0)) is None  # not shared
    assert unit_edit("The road is long.", "The road is 4 km long.", random.Random(0)) is None


def test_augment_units_are_label_symmetric() -> None:
    import random

    from conflictscore_local.train.augment import augment
    from conflictscore_local.train.sources import LabelledPair

    src = LabelledPair("The bridge is 2 km long.", "Opened in 1932, the bridge is 2 km long.", "SUPPORT", "toy")
    out = [
        p
        for p in augment([src], [src.passage], random.Random(0), per_kind=0, units=5, entities=lambda c: [[]] * len(c))
        if p.source == "aug_unit"
    ]
    assert sorted((p.kind, p.label) for p in out) == [
        ("claim_convert", "SUPPORT"),
        ("claim_wrong_unit", "CONTRADICT"),
        ("passage_convert", "SUPPORT"),
        ("passage_wrong_unit", "CONTRADICT"),
    ]
    by = {p.kind: p for p in out}
    assert (
        by["claim_convert"].claim == "The bridge is 2,000 metres long." and by["claim_convert"].passage == src.passage
    )
    assert by["passage_wrong_unit"].passage == "Opened in 1932, the bridge is 2 metres long."
