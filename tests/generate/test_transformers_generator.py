"""The ``transformers`` generator on a tiny random Qwen3 model with a real tokenizer."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.generate.text import render_prompt

CHATS = [[{"role": "user", "content": "Name a river " + "in Europe " * k}] for k in range(5)]


@pytest.fixture(scope="module")
def gen(tiny_causal_lm_dir: Path) -> Any:
    return registry.build(
        "generator", "transformers", {"model": str(tiny_causal_lm_dir), "batch_size": 2, "device": "cpu"}
    )


def test_chat_template_with_thinking_off(gen: Any, tiny_causal_lm_dir: Path) -> None:
    text, chat = gen.render([{"role": "user", "content": "Hi"}])
    assert chat and text == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    raw = registry.build("generator", "transformers", {"model": str(tiny_causal_lm_dir), "enable_thinking": "none"})
    assert "<think>" not in raw.render([{"role": "user", "content": "Hi"}])[0]
    assert gen.render("plain text") == ("plain text", False)


def test_batched_generation_matches_one_prompt_at_a_time(gen: Any) -> None:
    batched = gen.generate(CHATS, max_tokens=5, logprobs=3)
    single = [gen.generate([c], max_tokens=5, logprobs=3)[0] for c in CHATS]
    assert [g.text for g in batched] == [g.text for g in single]
    assert len({g.text for g in batched}) > 1  # the prompts lead to different continuations
    for a, b in zip(batched, single):
        assert len(a.top_logprobs) == len(b.top_logprobs)
        for sa, sb in zip(a.top_logprobs, b.top_logprobs):
            assert list(sa) == list(sb) and list(sa.values()) == pytest.approx(list(sb.values()), abs=1e-4)
    assert gen.stats()["batches"] == 3 + 5


def test_logprobs_are_top_k_per_generated_token(gen: Any) -> None:
    (g,) = gen.generate(CHATS[:1], max_tokens=4, logprobs=5)
    assert g.finish_reason in ("length", "stop") and 1 <= len(g.top_logprobs) <= 4
    for step in g.top_logprobs:
        values = list(step.values())
        assert 1 <= len(step) <= 5 and values == sorted(values, reverse=True)
        assert all(v <= 0 for v in values) and sum(math.exp(v) for v in values) <= 1.0 + 1e-6
    assert gen.generate(CHATS[:1], max_tokens=4)[0].top_logprobs is None


def test_max_tokens_and_stop_strings(gen: Any) -> None:
    (long,) = gen.generate(["the river"], max_tokens=12)
    assert long.finish_reason == "length" and long.text
    words = long.text.split()
    stop = words[len(words) // 2]
    (cut,) = gen.generate(["the river"], max_tokens=12, stop=[stop])
    assert cut.text == long.text[: long.text.index(stop)] and cut.finish_reason == "stop"


def test_sampling_is_reproducible_with_the_seed(gen: Any) -> None:
    a = gen.generate(CHATS[:2], max_tokens=6, temperature=1.0)
    b = gen.generate(CHATS[:2], max_tokens=6, temperature=1.0)
    greedy = gen.generate(CHATS[:2], max_tokens=6)
    assert [g.text for g in a] == [g.text for g in b]
    assert [g.text for g in a] != [g.text for g in greedy]


def test_resolved_and_config_errors(gen: Any) -> None:
    r = gen.describe()["resolved"]
    assert r["architecture"] == "Qwen3ForCausalLM" and r["dtype"] == "float32" and r["eos_token"] == "<|im_end|>"
    with pytest.raises(ConfigError, match="missing 1 required positional argument: 'model'"):
        registry.build("generator", "transformers", {})
    with pytest.raises(ConfigError, match="allowed: auto, cpu, mps, cuda, cuda:N"):
        registry.build("generator", "transformers", {"model": "x", "device": "tpu"})


def test_chat_prompt_needs_a_chat_template(tokenizer_dir: Path) -> None:
    from transformers import AutoTokenizer

    with pytest.raises(ConfigError, match="needs a model with a chat template"):
        render_prompt(AutoTokenizer.from_pretrained(str(tokenizer_dir)), [{"role": "user", "content": "x"}], {})


def test_progress_is_reported_per_batch(gen: Any) -> None:
    seen: list[int] = []
    out = gen.generate(["one", "two", "three"], max_tokens=2, on_progress=seen.append)
    assert len(out) == 3 and seen == [2, 1]
