"""The ``vllm`` generator on CPU: a stand-in ``vllm`` module with the real API's shapes
records what the engine is given; outputs are recorded ``RequestOutput``-shaped objects."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.generate.vllm import progress_bar, to_generation


def test_missing_vllm_names_the_extra(monkeypatch: pytest.MonkeyPatch, tiny_causal_lm_dir: Path) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir)})
    with pytest.raises(BackendUnavailable) as e:
        gen.generate(["hello"])
    assert "pip install 'conflictscore-local[vllm]'" in str(e.value)


def test_engine_arguments_are_passed_through(fake_vllm: Any, tiny_causal_lm_dir: Path) -> None:
    gen = registry.build(
        "generator",
        "vllm",
        {
            "model": str(tiny_causal_lm_dir),
            "tensor_parallel_size": "2",
            "max_model_len": "4096",
            "gpu_memory_utilization": "0.55",
            "engine_args": '{"enforce_eager": true, "max_num_seqs": 64}',
        },
    )
    gen.generate(["hello"], max_tokens=7, stop=["\n"], logprobs=5)
    (llm,) = fake_vllm.LLM.instances
    assert llm.kwargs == {
        "model": str(tiny_causal_lm_dir.resolve()),
        "tensor_parallel_size": 2,
        "max_model_len": 4096,
        "gpu_memory_utilization": 0.55,
        "dtype": "auto",
        "enable_prefix_caching": True,
        "seed": 0,
        "enforce_eager": True,
        "max_num_seqs": 64,
    }
    ((_, params),) = llm.calls
    assert params.kwargs == {"max_tokens": 7, "temperature": 0.0, "stop": ["\n"], "logprobs": 5, "seed": 0}
    assert gen.describe()["resolved"]["engine_args"]["max_num_seqs"] == 64


def test_engine_args_may_not_shadow_named_arguments(fake_vllm: Any, tiny_causal_lm_dir: Path) -> None:
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir), "engine_args": {"max_model_len": 8}})
    with pytest.raises(ConfigError, match="set max_model_len as arguments of their own"):
        gen.generate(["hello"])


def test_chat_prompts_are_rendered_with_thinking_off_and_sent_as_token_ids(
    fake_vllm: Any, tiny_causal_lm_dir: Path
) -> None:
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir)})
    tok = gen.tokenizer()
    chat = [{"role": "user", "content": "Is the sky blue?"}]
    gen.generate([chat, "a raw prompt"])
    ((prompts, _),) = fake_vllm.LLM.instances[0].calls
    rendered = "<|im_start|>user\nIs the sky blue?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n"
    assert prompts[0] == {"prompt_token_ids": tok(rendered, add_special_tokens=False)["input_ids"]}
    assert tok.decode(prompts[0]["prompt_token_ids"]).count("[CLS]") == 0  # no second set of special tokens
    assert prompts[1] == "a raw prompt"
    thinking = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir), "enable_thinking": "none"})
    assert "<think>" not in tok.decode(thinking.encode(chat)["prompt_token_ids"])


def test_recorded_outputs_become_generations(fake_vllm: Any) -> None:
    steps = [fake_vllm.RECORDED["CONTRADICT"], [(1, "ADICT", -0.001), (2, "ADICTION", -7.2)]]
    g = to_generation(fake_vllm.output("CONTRADICT", steps, finish="length"))
    assert g.text == "CONTRADICT" and g.finish_reason == "length" and g.error is None
    assert g.top_logprobs == (
        {"CON": -0.1019, "SUP": -2.9347, "IR": -3.3083, "The": -7.51},
        {"ADICT": -0.001, "ADICTION": -7.2},
    )
    assert to_generation(fake_vllm.output("<think>\nhmm\n</think>\n\nSUPPORT", [])).text == "SUPPORT"
    assert to_generation(fake_vllm.output("x", [])).top_logprobs is None
    empty = fake_vllm.RequestOutput("1", None, None, [])
    assert to_generation(empty).text is None and "no completion" in to_generation(empty).error


def test_outputs_come_back_in_input_order(fake_vllm: Any, tiny_causal_lm_dir: Path) -> None:
    fake_vllm.LLM.answer = staticmethod(lambda p, sp: fake_vllm.output(f"echo {p}", []))
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir)})
    out = gen.generate(["a", "b", "c"])
    assert [g.text for g in out] == ["echo a", "echo b", "echo c"]
    assert gen.stats() == {"prompts": 3}


def test_progress_bar_forwards_finished_requests_only() -> None:
    seen: list[int] = []
    bar_class = progress_bar(seen.append)
    assert list(bar_class(range(50), desc="Adding requests", mininterval=0, miniters=1)) == list(range(50))
    assert seen == []  # adding requests is no progress
    bar = bar_class(total=3, desc="Processed prompts", dynamic_ncols=True, postfix="")
    for _ in range(3):
        assert bar.format_dict["elapsed"] >= 0
        bar.postfix = "est. speed"
        bar.update(1)
    bar.close()
    assert seen == [1, 1, 1] and bar.n == 3


def test_generate_reports_progress_per_finished_request(fake_vllm: Any, tiny_causal_lm_dir: Path) -> None:
    fake_vllm.LLM.answer = staticmethod(lambda p, sp: fake_vllm.output("ok", []))
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir)})
    seen: list[int] = []
    out = gen.generate(["a", "b", "c"], on_progress=seen.append)
    assert [g.text for g in out] == ["ok"] * 3 and seen == [1, 1, 1]


def test_a_separate_tokenizer_is_resolved_once_for_both_sides(fake_vllm: Any, tiny_causal_lm_dir: Path) -> None:
    gen = registry.build("generator", "vllm", {"model": str(tiny_causal_lm_dir), "tokenizer": str(tiny_causal_lm_dir)})
    gen.generate(["hello"])
    resolved = str(tiny_causal_lm_dir.resolve())
    assert fake_vllm.LLM.instances[0].kwargs["tokenizer"] == resolved  # vLLM and the chat rendering agree
    assert gen.describe()["resolved"]["tokenizer_path"] == resolved
