"""The ``openai`` generator against a stub OpenAI-compatible server on 127.0.0.1 (real
sockets, real client code): request shape, concurrency, retries, timeouts, bad replies."""

from __future__ import annotations

import email.utils
import socket
import threading
import time
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.generate.openai import _retry_after


def build(server: Any, **kw: Any) -> Any:
    return registry.build("generator", "openai", {"base_url": server.url, "backoff_s": 0.01, **kw})


def test_chat_request_shape_and_api_key(openai_server: Any, openai_stub: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-test")
    openai_server.respond = lambda r: openai_stub.Reply(
        body=openai_stub.chat_reply("Paris", [{"Paris": -0.01, "Lyon": -4.7}])
    )
    gen = build(openai_server, api_key_env="MY_KEY", model="qwen3")
    (g,) = gen.generate(
        [[{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital?"}]],
        max_tokens=5,
        stop=["\n"],
        logprobs=2,
    )
    assert g.text == "Paris" and g.top_logprobs == ({"Paris": -0.01, "Lyon": -4.7},) and g.finish_reason == "stop"
    (req,) = openai_server.posts()
    assert req.path == "/v1/chat/completions" and req.headers["Authorization"] == "Bearer sk-test"
    assert req.body == {
        "model": "qwen3",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital?"}],
        "max_tokens": 5,
        "temperature": 0.0,
        "stop": ["\n"],
        "seed": 0,
        "chat_template_kwargs": {"enable_thinking": False},
        "logprobs": True,
        "top_logprobs": 2,
    }


def test_model_discovered_and_plain_prompts_become_user_turns(
    openai_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    gen = build(openai_server, enable_thinking="none", extra_body='{"top_k": 1}')
    gen.generate(["hello"])
    (req,) = openai_server.posts()
    assert "Authorization" not in req.headers
    assert req.body == {
        "model": "stub-model",
        "messages": [{"role": "user", "content": "hello"}],
        "max_tokens": 256,
        "temperature": 0.0,
        "seed": 0,
        "top_k": 1,
    }
    assert gen.describe()["resolved"]["model"] == "stub-model"


def test_completions_endpoint(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(
        body=openai_stub.completion_reply(" SUPPORT", [{" SUP": -0.2, " CON": -1.9}, {"PORT": -0.001}], finish="length")
    )
    gen = build(openai_server, endpoint="completions", model="base")
    (g,) = gen.generate(["Answer:"], max_tokens=2, logprobs=2)
    assert g.text == " SUPPORT" and g.finish_reason == "length"
    assert g.top_logprobs == ({" SUP": -0.2, " CON": -1.9}, {"PORT": -0.001})
    (req,) = openai_server.posts()
    assert req.path == "/v1/completions" and req.body["prompt"] == "Answer:" and req.body["logprobs"] == 2
    assert "chat_template_kwargs" not in req.body
    with pytest.raises(ConfigError, match="chat prompts need endpoint=chat"):
        gen.generate([[{"role": "user", "content": "x"}]])


def test_concurrency_is_bounded_and_order_kept(openai_server: Any, openai_stub: Any) -> None:
    # Each request waits until 3 are in flight (a barrier, not a delay): with 3 workers the 12
    # prompts pass in 4 rounds of exactly 3, whatever the machine's load; more workers would put
    # a 4th in flight, fewer would break the barrier.
    rounds = threading.Barrier(3, timeout=60)

    def respond(r: Any) -> Any:
        rounds.wait()
        return openai_stub.Reply(body=openai_stub.chat_reply(f"echo {r.body['messages'][0]['content']}"))

    openai_server.respond = respond
    out = build(openai_server, max_concurrency=3).generate([f"p{k}" for k in range(12)])
    assert [g.text for g in out] == [f"echo p{k}" for k in range(12)]
    assert openai_server.max_in_flight == 3


def test_retries_429_and_500_then_succeeds(openai_server: Any, openai_stub: Any) -> None:
    script = iter(
        [
            openai_stub.Reply(429, {"error": "slow down"}, {"Retry-After": "0.3"}),
            openai_stub.Reply(500, {"error": "boom"}),
            openai_stub.Reply(body=openai_stub.chat_reply("ok")),
        ]
    )
    openai_server.respond = lambda r: next(script)
    gen = build(openai_server)
    waits: list[float] = []
    gen.sleep = waits.append
    (g,) = gen.generate(["x"])
    assert g.text == "ok" and g.error is None
    assert len(waits) == 2 and waits[0] == 0.3  # the server's Retry-After was honoured (more than backoff_s 0.01)
    assert 0.01 <= waits[1] <= 0.02  # then exponential backoff with jitter: 0.01 * 2 * [0.5, 1]
    assert len(openai_server.posts()) == 3 and gen.stats()["retries"] == 2


def test_gives_up_after_max_retries(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(503, {"error": "overloaded"})
    gen = build(openai_server, max_retries=2)
    (g,) = gen.generate(["x"])
    assert g.text is None and g.error == 'HTTP 503: {"error": "overloaded"} (gave up after 3 attempts)'
    assert len(openai_server.posts()) == 3 and gen.stats() == {"retries": 2, "failed": 1, "prompts": 1}


def test_timeout_is_an_error_not_a_hang(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("late"), delay_s=1.0)
    (g,) = build(openai_server, timeout_s=0.2, max_retries=0).generate(["x"])
    assert g.text is None and g.error == "timeout after 0.2s (gave up after 1 attempts)"


@pytest.mark.parametrize(
    "body, error",
    [
        (b"{not json", "malformed JSON reply: {not json"),
        ({"choices": []}, "malformed reply (missing list index out of range)"),
        (
            {"choices": [{"message": {"role": "assistant", "content": None}, "finish_reason": "length"}]},
            "reply without text (finish_reason 'length')",
        ),
        ({"object": "error"}, "malformed reply (missing 'choices')"),
    ],
)
def test_malformed_replies_are_errors_without_retry(
    openai_server: Any, openai_stub: Any, body: Any, error: str
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=body)
    (g,) = build(openai_server).generate(["x"])
    assert g.text is None and g.error.startswith(error)
    assert len(openai_server.posts()) == 1


def test_client_errors_are_not_retried_and_config_errors_stop_the_run(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(400, {"error": "prompt too long"})
    (g,) = build(openai_server).generate(["x"])
    assert g.error == 'HTTP 400: {"error": "prompt too long"}' and len(openai_server.posts()) == 1
    openai_server.respond = lambda r: openai_stub.Reply(404, {"error": "model `nope` does not exist"})
    with pytest.raises(
        BackendUnavailable, match=r"HTTP 404 .*does not exist.*check base_url, model and OPENAI_API_KEY"
    ):
        build(openai_server, model="nope").generate(["x", "y"])


def test_server_refusing_logprobs_is_asked_without_them(openai_server: Any, openai_stub: Any) -> None:
    def respond(r: Any) -> Any:
        if "logprobs" in r.body:
            return openai_stub.Reply(400, {"error": "logprobs are not supported by this model"})
        return openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT"))

    openai_server.respond = respond
    gen = build(openai_server)
    out = gen.generate(["a", "b"], logprobs=5)
    assert [g.text for g in out] == ["SUPPORT", "SUPPORT"] and all(g.top_logprobs is None for g in out)
    assert gen.stats()["logprobs_refused"] >= 1
    assert "logprobs" not in openai_server.posts()[-1].body


def test_connection_refused_is_retried_then_reported() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gen = registry.build(
        "generator",
        "openai",
        {"base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "max_retries": 1, "backoff_s": 0.01},
    )
    (g,) = gen.generate(["x"])
    assert g.text is None and g.error.startswith("connection error") and "gave up after 2 attempts" in g.error


def test_listing_models_fails_loudly(openai_server: Any) -> None:
    openai_server.models = []
    with pytest.raises(BackendUnavailable, match="lists no model; pass model=NAME"):
        build(openai_server).generate(["x"])


def test_retry_after_header_forms() -> None:
    assert _retry_after("2") == 2.0 and _retry_after("0.5") == 0.5 and _retry_after(None) is None
    assert _retry_after("soon") is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 < _retry_after(later) <= 30  # type: ignore[operator]


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="base_url must start with http"):
        registry.build("generator", "openai", {"base_url": "localhost:8000"})
    with pytest.raises(ConfigError, match="allowed: chat, completions"):
        registry.build("generator", "openai", {"endpoint": "responses"})
    with pytest.raises(ConfigError, match=r"max_concurrency must be an integer in \[1, 4096\]"):
        registry.build("generator", "openai", {"max_concurrency": 0})
