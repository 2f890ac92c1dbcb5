"""Pairs from claims × corpus documents: rationale, whole-abstract passage, hard and easy negatives."""

from __future__ import annotations

import random

from conflictscore_local.core.chunk import Chunker
from conflictscore_local.train.pairs import cap, claim_pairs
from conflictscore_local.train.sources import ClaimRecord, Evidence, LabelledPair

# whitespace words, 8 a passage: each 5-word sentence of the abstract is its own passage
CHUNKER = Chunker(max_tokens=8, overlap=0)
CORPUS = {
    "7": ("Masks were studied in 2020.", "Masks cut transmission by half.", "Funding came from the state."),
    "8": ("Cats sleep a lot.", "Dogs bark."),
}


def test_a_supported_claim_gives_rationale_abstract_and_negative_pairs() -> None:
    rec = ClaimRecord("Masks halve transmission.", (Evidence("7", "SUPPORT", (1,)),), "hv")
    got = claim_pairs(rec, CORPUS, CHUNKER, random.Random(0), pool=["8"])
    assert got == [
        LabelledPair("Masks halve transmission.", "Masks cut transmission by half.", "SUPPORT", "hv", "rationale"),
        LabelledPair("Masks halve transmission.", "Masks cut transmission by half.", "SUPPORT", "hv", "abstract"),
        # of the passages without rationale, the one sharing a word ("masks") with the claim
        LabelledPair("Masks halve transmission.", "Masks were studied in 2020.", "IRRELEVANT", "hv", "hard_negative"),
        LabelledPair("Masks halve transmission.", "Cats sleep a lot. Dogs bark.", "IRRELEVANT", "hv", "easy_negative"),
    ]


def test_an_uncited_abstract_gives_its_closest_passage_as_irrelevant() -> None:
    rec = ClaimRecord("State funding of masks.", (Evidence("7", "IRRELEVANT"),), "hv")
    got = claim_pairs(rec, CORPUS, CHUNKER, random.Random(0), pool=["7"])  # the only pool document is its own
    assert got == [
        LabelledPair("State funding of masks.", "Funding came from the state.", "IRRELEVANT", "hv", "abstract")
    ]


def test_a_one_passage_abstract_gives_a_non_rationale_sentence_as_hard_negative() -> None:
    wide = Chunker(max_tokens=100, overlap=0)
    corpus = {"9": ("Masks cut transmission by half.", "Short one.", "The trial ran in four large cities.")}
    rec = ClaimRecord("Masks cut transmission.", (Evidence("9", "CONTRADICT", (0,)),), "x")
    got = claim_pairs(rec, corpus, wide, random.Random(0), easy_negatives=0)
    assert [(p.passage, p.label, p.kind) for p in got] == [
        ("Masks cut transmission by half.", "CONTRADICT", "rationale"),
        (" ".join(corpus["9"]), "CONTRADICT", "abstract"),  # the whole abstract fits the window
        ("The trial ran in four large cities.", "IRRELEVANT", "hard_negative"),  # sentences of >= 6 words only
    ]


def test_cap_samples_per_label() -> None:
    pairs = [LabelledPair(f"c{i}", "p", lab, "s") for i, lab in enumerate(["SUPPORT"] * 5 + ["CONTRADICT"] * 2)]
    got = cap(pairs, {"SUPPORT": 3}, random.Random(0))
    assert sum(p.label == "SUPPORT" for p in got) == 3 and sum(p.label == "CONTRADICT" for p in got) == 2
    assert len(cap(pairs, 1, random.Random(0))) == 2 and cap(pairs, None, random.Random(0)) == pairs
