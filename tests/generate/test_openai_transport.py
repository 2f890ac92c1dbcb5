"""The ``openai`` client under a faulty server: retried statuses, transport errors, malformed
logprob values and servers that echo the API key. Each case ends as an unscored pair (or,
for a certificate that never verifies, a clear stop), never as an aborted run or a leaked key."""

from __future__ import annotations

import ssl
import urllib.error
import urllib.request
from typing import Any

import pytest

from conflictscore_local import Engine
from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable
from conflictscore_local.core.types import Claim, Document, Item, Pair, Passage

KEY = "sk-test-0123456789abcdef"
DOC = "The bridge over the river opened in 1932 after four years of work."


def gen(server: Any, **kw: Any) -> Any:
    return registry.build("generator", "openai", {"base_url": server.url, "backoff_s": 0.01, "model": "m", **kw})


def judge(server: Any, **kw: Any) -> Any:
    return registry.build("judge", "openai", {"base_url": server.url, "backoff_s": 0.01, "max_retries": 1, **kw})


PAIR = Pair(Claim("it", 0, "The bridge opened in 1932."), Passage("it", "d", 0, DOC))


def test_408_is_retried(openai_server: Any, openai_stub: Any) -> None:
    script = iter(
        [openai_stub.Reply(408, {"error": "request timeout"}), openai_stub.Reply(body=openai_stub.chat_reply("ok"))]
    )
    openai_server.respond = lambda r: next(script)
    g = gen(openai_server)
    (out,) = g.generate(["x"])
    assert out.text == "ok" and len(openai_server.posts()) == 2 and g.stats()["retries"] == 1


class _Broken:
    """What ``urlopen`` returns when the connection breaks while the reply is read."""

    def __init__(self, error: BaseException):
        self.error = error

    def __enter__(self) -> "_Broken":
        return self

    def __exit__(self, *_: Any) -> None:
        pass

    def read(self) -> bytes:
        raise self.error


@pytest.mark.parametrize(
    "error, note",
    [
        (
            ssl.SSLError(1, "[SSL: DECRYPTION_FAILED_OR_BAD_RECORD_MAC] decryption failed or bad record mac"),
            "connection error: SSLError: [SSL: DECRYPTION_FAILED_OR_BAD_RECORD_MAC] decryption failed or "
            "bad record mac (gave up after 2 attempts)",
        ),
        (
            OSError(113, "No route to host"),
            "connection error: OSError: [Errno 113] No route to host (gave up after 2 attempts)",
        ),
    ],
)
def test_transport_errors_while_reading_become_unscored_pairs(
    monkeypatch: pytest.MonkeyPatch, error: BaseException, note: str
) -> None:
    calls = []

    def urlopen(req: Any, timeout: float) -> _Broken:
        calls.append(req.full_url)
        return _Broken(error)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    j = registry.build(
        "judge",
        "openai",
        {
            "base_url": "https://judge.example/v1",
            "model": "m",
            "backoff_s": 0.01,
            "max_retries": 1,
            "model_fingerprint": "pinned",
        },
    )
    (out,) = j.judge([PAIR])  # before: the error escaped and aborted the run
    assert (out.label, out.note) == (None, f"no answer: {note}")
    assert calls == ["https://judge.example/v1/chat/completions"] * 2


def test_a_certificate_that_does_not_verify_stops_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    def urlopen(req: Any, timeout: float) -> Any:
        bad = ssl.SSLCertVerificationError(1, "certificate verify failed")
        bad.verify_message = "self-signed certificate"
        raise urllib.error.URLError(bad)

    monkeypatch.setattr(urllib.request, "urlopen", urlopen)
    g = registry.build("generator", "openai", {"base_url": "https://judge.example/v1", "model": "m"})
    with pytest.raises(
        BackendUnavailable, match=r"TLS certificate not verified \(self-signed certificate\).*SSL_CERT_FILE"
    ):
        g.generate(["x"])


@pytest.mark.parametrize(
    "top, error",
    [
        ([{"SUP": "-0.1", "CON": -2.0}], "logprob '-0.1' is not a number"),
        ([{"SUP": None, "CON": -2.0}], "logprob None is not a number"),
        ([{"SUP": -0.1, "CON": True}], "logprob True is not a number"),
    ],
)
def test_malformed_logprob_values_make_the_pair_unscored(
    openai_server: Any, openai_stub: Any, top: list, error: str
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", top))
    j = judge(openai_server)
    (out,) = j.judge([PAIR])  # before: TypeError out of the label reader
    assert out.label is None and out.note.startswith(f"no answer: malformed reply: {error}: ")
    # the logprobs probe and the pair, neither retried: it would come back the same
    assert j.stats()["unscored"] == 1 and len(openai_server.posts()) == 2


def test_malformed_completions_logprobs_and_tokens(openai_server: Any, openai_stub: Any) -> None:
    reply = openai_stub.completion_reply(" SUPPORT", [{" SUP": -0.1, " CON": "x"}])
    openai_server.respond = lambda r: openai_stub.Reply(body=reply)
    (out,) = judge(openai_server, endpoint="completions").judge([PAIR])
    assert out.label is None and "logprob 'x' is not a number" in out.note
    chat = openai_stub.chat_reply("SUPPORT", [{"SUP": -0.1}])
    chat["choices"][0]["logprobs"]["content"][0]["token"] = None
    openai_server.respond = lambda r: openai_stub.Reply(body=chat)
    (out,) = judge(openai_server).judge([PAIR])
    assert out.label is None and "token None is not a string" in out.note


def test_through_the_engine_a_malformed_reply_is_one_unscored_pair(openai_server: Any, openai_stub: Any) -> None:
    def respond(r: Any) -> Any:
        bad = "1934" in r.body["messages"][0]["content"].split("Claim: ")[1]
        return openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", [{"SUP": None if bad else -0.01}]))

    openai_server.respond = respond
    item = Item("q", "r", (Document("d", DOC),), claims=("The bridge opened in 1932.", "The bridge opened in 1934."))
    with Engine(judge={"name": "openai", "base_url": openai_server.url, "max_retries": 0}, pruner="none") as engine:
        (res,), report = engine.score_all([item])
    assert [v.judgments[0].label for v in res.verdicts] == ["SUPPORT", None]
    assert report.pairs["unscored"] == 1


ECHO = {
    "error": "invalid request",
    "received_headers": {"Authorization": f"Bearer {KEY}", "Accept": "*/*"},
    "hint": f"key {KEY} has no access",
}


@pytest.mark.parametrize("status", [400, 500])
def test_an_echoed_api_key_never_reaches_a_note(
    openai_server: Any, openai_stub: Any, monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.respond = lambda r: openai_stub.Reply(status, ECHO)
    (out,) = judge(openai_server).judge([PAIR])
    assert out.label is None and KEY not in out.note and "[redacted]" in out.note
    assert '"Authorization": "Bearer [redacted]"' in out.note and "key [redacted] has no access" in out.note
    assert openai_server.posts()[0].headers["Authorization"] == f"Bearer {KEY}"  # it was sent, just not kept


def test_redaction_covers_malformed_bodies_replies_and_fatal_errors(
    openai_server: Any, openai_stub: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    openai_server.respond = lambda r: openai_stub.Reply(body=f"<html>bad gateway for {KEY}</html>".encode())
    (out,) = judge(openai_server).judge([PAIR])
    assert out.note == "no answer: malformed JSON reply: <html>bad gateway for [redacted]</html>"
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply(f"My key is {KEY}"))
    (out,) = judge(openai_server).judge([PAIR])
    assert out.note == "unparseable reply 'My key is [redacted]'"
    openai_server.respond = lambda r: openai_stub.Reply(401, ECHO)
    with pytest.raises(BackendUnavailable) as e:
        judge(openai_server).judge([PAIR])
    assert KEY not in str(e.value) and "HTTP 401" in str(e.value)
