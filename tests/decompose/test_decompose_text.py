"""The text rules shared by the decomposers: layout, fillers, markers, claim clean-up, output parsing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.core.types import Item
from conflictscore_local.decompose._text import (
    assemble,
    claim_key,
    finish_claim,
    is_filler,
    is_question,
    marker_length,
    mask_markup,
    parse_claims,
    response_blocks,
    strip_markup,
)

RECORDED = json.loads((Path(__file__).parent / "data" / "llm_outputs.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("rec", RECORDED, ids=[f"{i}-{r['model']}" for i, r in enumerate(RECORDED)])
def test_recorded_llm_outputs_parse_to_the_expected_claims(rec):
    parsed = parse_claims(rec["output"], markers_required=True)
    if rec["claims"] is None:
        assert parsed is None
    else:
        assert [finish_claim(c) for c in parsed] == rec["claims"]


def test_bullets_required_means_prose_alone_is_unreadable_but_seq2seq_reads_it():
    prose = "Curie was born in Warsaw. Curie moved to Paris in 1891."
    assert parse_claims(prose, markers_required=True) is None
    assert parse_claims(prose, markers_required=False) == ["Curie was born in Warsaw.", "Curie moved to Paris in 1891."]


@pytest.mark.parametrize(
    "output, claims",
    [
        ("Curie was born in Warsaw ; Curie moved to Paris", ["Curie was born in Warsaw", "Curie moved to Paris"]),
        ("Curie was born in Warsaw | Curie moved to Paris", ["Curie was born in Warsaw", "Curie moved to Paris"]),
        (
            "1. Curie was born in Warsaw. 2. Curie moved to Paris.",
            ["Curie was born in Warsaw.", "Curie moved to Paris."],
        ),
        ("Curie was born in Warsaw.\nCurie moved to Paris.", ["Curie was born in Warsaw.", "Curie moved to Paris."]),
        ('["The U.S. entered the war in 1917."]', ["The U.S. entered the war in 1917."]),
        ("The U.S. entered the war in 1917.", ["The U.S. entered the war in 1917."]),
        ("none", []),
        ("   ", None),
        (None, None),
    ],
)
def test_seq2seq_output_forms(output, claims):
    assert parse_claims(output, markers_required=False) == claims


def test_a_thinking_block_is_skipped_and_an_unclosed_one_is_unreadable():
    assert parse_claims("<think>x - y</think>\n- A fact.", markers_required=True) == ["A fact."]
    assert parse_claims("- A fact.\n<think>never closed", markers_required=True) is None


@pytest.mark.parametrize(
    "raw, done",
    [
        ("paris is the capital of France", "Paris is the capital of France."),
        ("It cost $4.2 million,", "It cost $4.2 million."),
        ("What a view!", "What a view."),
        ("**Paris** is  the capital.", "Paris is the capital."),
        ("iPhone sales rose in 2010", "iPhone sales rose in 2010."),
        ('He said "yes."', 'He said "yes."'),
    ],
)
def test_finish_claim(raw, done):
    assert finish_claim(raw) == done


def test_claim_key_ignores_case_spacing_and_punctuation():
    assert claim_key("Paris is the capital.") == claim_key("  paris IS the capital") == "paris is the capital"
    assert claim_key("3,559 people") != claim_key("3,569 people")


def test_assemble_dedupes_per_item_and_indexes_from_zero():
    items = [Item("a", "x", ()), Item("b", "y", ())]
    out = assemble(
        items,
        [[("paris is big", (0, 1)), ("Paris is big.", (2, 3)), ("Rome is old", (4, 5))], [("Paris is big", (0, 1))]],
    )
    assert [(c.item_id, c.index, c.text, c.span) for c in out[0]] == [
        ("a", 0, "Paris is big.", (0, 1)),
        ("a", 1, "Rome is old.", (4, 5)),
    ]
    assert [(c.item_id, c.index, c.text) for c in out[1]] == [("b", 0, "Paris is big.")]


def test_response_blocks_skip_list_markers_headings_and_join_wrapped_lines():
    text = (
        "## Facts\n- **Paris** is the capital.\n2) Rome is old.\nThe Nile is\nlong and wide.\n\n| a | b |\n"
        "---\n#1 in 1990 was Vogue.\n"
    )
    blocks = [text[a:b] for a, b in response_blocks(text)]
    assert blocks == [
        "**Paris** is the capital.",
        "Rome is old.",
        "The Nile is\nlong and wide.",
        "#1 in 1990 was Vogue.",
    ]


@pytest.mark.parametrize(
    "sentence",
    [
        "Sure!",
        "Great question.",
        "That's a really good question!",
        "I hope this helps.",
        "Hope that helps!",
        "Let me know if you need anything else.",
        "Feel free to ask more.",
        "Thanks for asking!",
        "Here are some key facts about Paris:",
        "As an AI language model, I cannot browse the web.",
        "**",
        "Hello there!",
        "Let me know if you have any questions, and good luck!",
        "If you have any questions, feel free to ask.",
        "Sure, here is the information:",
        "However, I hope this helps!",
        "Thank you for asking about **Paris**!",
    ],
)
def test_fillers(sentence):
    assert is_filler(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "Great Britain is an island.",
        "Sure enough, the plan worked in 1944.",
        "Thanks to the railway, the town grew.",
        "Here is where the treaty was signed in 1648.",
        "Let Paris be the example: it has 2 million people.",
        "Here is the information: Paris has 2.1 million inhabitants.",
        "Here's a quick summary: the tower is 330 m tall.",
        "Let me explain: the drug was approved in 2019.",
        "Thank you for asking about Paris, which has 2 million people.",
        "I hope this helps you see why the tower, built in 1889, is 330 m tall.",
    ],
)
def test_fact_sentences_are_not_fillers(sentence):
    assert not is_filler(sentence)


def test_questions():
    assert is_question("Did you know that cats sleep 16 hours a day?")
    assert is_question('Is it "Paris?"')
    assert not is_question("Paris is the capital.")


@pytest.mark.parametrize(
    "sentence, rest",
    [
        ("However, the bridge was completed in 1932.", "the bridge was completed in 1932."),
        ("Sure, here's what I found: Paris is big.", "Paris is big."),
        ("It is worth noting that the tower opened in 1889.", "the tower opened in 1889."),
        ("In 1990, he moved to Paris.", "In 1990, he moved to Paris."),
        ("However,", "However,"),
        ("Here is the information: Paris has 2.1 million inhabitants.", "Paris has 2.1 million inhabitants."),
        ("Let me explain: the drug was approved in 2019.", "the drug was approved in 2019."),
        ("Sure thing, the Nile is 6,650 km long.", "the Nile is 6,650 km long."),
        ("That's a great question: the Nile is long.", "the Nile is long."),
    ],
)
def test_marker_length(sentence, rest):
    assert sentence[marker_length(sentence) :] == rest


@pytest.mark.parametrize(
    "text, plain",
    [
        ("**Paris** is big.", "Paris is big."),
        ("__Einstein__ was born in *Ulm* and _died_ in Princeton.", "Einstein was born in Ulm and died in Princeton."),
        ("***Very*** `numpy` arrays", "Very numpy arrays"),
        ("See [the docs](https://x.org/a_b) or ![a map](map.png).", "See the docs or a map."),
        ("**Paris**'s mayor", "Paris's mayor"),
        # not emphasis: arithmetic, identifiers, citations, a lone star
        ("5 * 3 * 2 = 30", "5 * 3 * 2 = 30"),
        ("snake_case_name and a*b*c", "snake_case_name and a*b*c"),
        ("Paris is big [1]. * note", "Paris is big [1]. * note"),
    ],
)
def test_inline_markup_is_masked_in_place_and_stripped(text, plain):
    masked = mask_markup(text)
    assert len(masked) == len(text)
    assert all(m == c or m == " " for m, c in zip(masked, text))
    assert strip_markup(text) == plain
