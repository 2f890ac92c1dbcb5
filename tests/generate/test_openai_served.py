"""The ``openai`` generator against a real OpenAI-compatible server: ``transformers serve`` with
SmolLM2-135M-Instruct on CPU (session fixture ``served_smollm2``, see ``tests/conftest.py``).

What the stub tests cannot show: the real server's model listing, its chat template and
completions endpoint, that it ignores ``logprobs`` (answers without them), that it refuses a
model name it is not pinned to with HTTP 400 (vLLM: 404), and a real slow answer.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable
from conflictscore_local.generate.openai import LOGPROBS_IGNORED

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


def generator(server: Any, **kw: Any) -> Any:
    return registry.build("generator", "openai", {"base_url": server.url, "timeout_s": 120, "max_retries": 1, **kw})


def test_chat_and_completions_through_the_real_server(served_smollm2: Any) -> None:
    gen = generator(served_smollm2, max_concurrency=1)
    chat = [
        [{"role": "user", "content": "What is the capital of France?"}],
        [{"role": "user", "content": "Name a fruit."}],
    ]
    outs = gen.generate(chat, max_tokens=8, logprobs=5)
    assert all(isinstance(g.text, str) and g.text.strip() and g.error is None for g in outs)
    assert {g.finish_reason for g in outs} <= {"stop", "length"} and all(g.top_logprobs is None for g in outs)
    # it took the logprobs field and answered without: noticed at the first answer, not asked again
    assert gen.logprobs_refused == LOGPROBS_IGNORED and gen.stats()["answers_without_logprobs"] == 1
    assert gen.resolved["model"] == served_smollm2.model  # the name it lists: the path it was started with
    assert gen.served_model() == {"id": served_smollm2.model, "owned_by": "local"}
    (text,) = generator(served_smollm2, endpoint="completions").generate(["The capital of France is"], max_tokens=4)
    assert isinstance(text.text, str) and text.text and text.finish_reason in ("stop", "length")


def test_a_request_slower_than_timeout_s_is_given_up_in_time(served_smollm2: Any) -> None:
    gen = generator(served_smollm2, timeout_s=0.2, max_retries=1, backoff_s=0.05, max_backoff_s=0.05)
    t0 = time.perf_counter()
    (g,) = gen.generate(
        [[{"role": "user", "content": "Tell me a long story about a dragon and a knight."}]], max_tokens=48
    )
    took = time.perf_counter() - t0
    assert g.text is None and g.error == "timeout after 0.2s (gave up after 2 attempts)"
    assert took < 5.0 and gen.stats() == {"retries": 1, "failed": 1, "prompts": 1}


def test_a_model_name_the_server_does_not_serve_stops_the_run(served_smollm2: Any) -> None:
    with pytest.raises(BackendUnavailable) as e:
        generator(served_smollm2, model="judge").generate(["Hi"], max_tokens=2)
    msg = str(e.value)
    assert f"HTTP 400: {{\"detail\":\"Server is pinned to '{served_smollm2.model}'; requested 'judge'.\"}}" in msg
    assert msg.endswith(f"the server lists {served_smollm2.model!r}, not model='judge': check model=")
