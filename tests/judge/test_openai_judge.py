"""The ``openai`` judge against a stub OpenAI-compatible server on 127.0.0.1: labels from
logprobs and from strict text, and explicit unscored judgments for every kind of failure."""

from __future__ import annotations

import math
from typing import Any

import pytest

from conflictscore_local import Engine
from conflictscore_local.backends import registry
from conflictscore_local.core.types import Claim, Document, Item, Pair, Passage

DOC = "The bridge over the river opened in 1932 after four years of work."


def claim_of(req: Any) -> str:
    body = req.body
    text = body["messages"][0]["content"] if "messages" in body else body["prompt"]
    return text.split("Claim: ")[1].split("\n")[0]


def pairs(*claims: str) -> list[Pair]:
    return [Pair(Claim("it", k, c), Passage("it", "d", 0, DOC)) for k, c in enumerate(claims)]


def build(server: Any, **kw: Any) -> Any:
    return registry.build("judge", "openai", {"base_url": server.url, "backoff_s": 0.01, "max_retries": 1, **kw})


def test_labels_from_top_logprobs(openai_server: Any, openai_stub: Any) -> None:
    first = {
        "opened in 1932": {"SUP": -0.1, "CON": -2.5, "IR": -3.0, "The": -5.0},
        "opened in 1934": {" CON": -0.05, "Con": -3.5, "SUP": -4.0},
    }

    def respond(r: Any) -> Any:
        step = next((v for k, v in first.items() if k in claim_of(r)), {"SUP": -0.01})  # else: the probe
        return openai_stub.Reply(body=openai_stub.chat_reply(next(iter(step)), [step]))

    openai_server.respond = respond
    j = build(openai_server)
    out = j.judge(pairs("The bridge opened in 1932.", "The bridge opened in 1934."))
    assert [o.label for o in out] == ["SUPPORT", "CONTRADICT"]
    s, c, i = math.exp(-0.1), math.exp(-2.5), math.exp(-3.0)
    assert out[0].probs == pytest.approx(
        {"SUPPORT": s / (s + c + i), "CONTRADICT": c / (s + c + i), "IRRELEVANT": i / (s + c + i)}, abs=1e-6
    )
    # " CON" and "Con" both start CONTRADICT: their probabilities add up
    c2, s2 = math.exp(-0.05) + math.exp(-3.5), math.exp(-4.0)
    assert out[1].probs == pytest.approx(
        {"SUPPORT": s2 / (s2 + c2), "CONTRADICT": c2 / (s2 + c2), "IRRELEVANT": 0.0}, abs=1e-6
    )
    probe, req = openai_server.posts()[0], openai_server.posts()[1]
    assert claim_of(probe) == "The sky is blue." and probe.body["max_tokens"] == 1 and probe.body["top_logprobs"] == 10
    assert req.body["logprobs"] is True and req.body["top_logprobs"] == 10 and req.body["max_tokens"] == 8
    assert req.body["chat_template_kwargs"] == {"enable_thinking": False}
    assert j.stats()["from_logprobs"] == 2 and j.describe()["resolved"]["logprobs"] == "returned"


@pytest.mark.parametrize(
    "reply, label, note",
    [
        ("Support.", "SUPPORT", None),
        ("**CONTRADICT**", "CONTRADICT", None),
        ("<think>\nThe years differ.\n</think>\n\nCONTRADICT", "CONTRADICT", None),
        ("It supports the claim.", None, "unparseable reply 'It supports the claim.'"),
        ("SUPPORT, mostly", None, "unparseable reply 'SUPPORT, mostly'"),
    ],
)
def test_text_path_is_strict(
    openai_server: Any, openai_stub: Any, reply: str, label: str | None, note: str | None
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply(reply))
    (out,) = build(openai_server).judge(pairs("The bridge opened in 1932."))
    assert (out.label, out.note, out.probs) == (label, note, None)


def test_logprobs_that_name_no_label_fall_back_to_the_text(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(
        body=openai_stub.chat_reply("The document", [{"The": -0.01, " I": -6.0}, {" document": -0.1}])
    )
    (out,) = build(openai_server).judge(pairs("The bridge opened in 1932."))
    assert out.label is None and out.note == (  # " I" is one letter: no label token
        "label tokens hold 0.0% of the answer token's probability (min_label_mass 0.5); "
        "unparseable reply 'The document'"
    )


def test_progress_is_reported_per_answered_request(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT"))
    asked = pairs(*(f"The bridge opened in {1900 + k}." for k in range(5)))
    seen: list[int] = []
    out = build(openai_server, max_concurrency=2).judge(asked + asked[:2], on_progress=seen.append)
    assert [o.label for o in out] == ["SUPPORT"] * 7 and seen == [1, 1, 1, 1, 1, 2]


def test_a_reply_opening_with_a_label_letter_is_no_label(openai_server: Any, openai_stub: Any) -> None:
    # "I" (of "I cannot tell") starts IRRELEVANT letter by letter, but one letter names no label
    openai_server.respond = lambda r: openai_stub.Reply(
        body=openai_stub.chat_reply("I cannot tell.", [{"I": -0.01, "IR": -6.0, "SUP": -7.0}])
    )
    (out,) = build(openai_server).judge(pairs("The bridge opened in 1932."))
    assert out.label is None and out.note == (
        "label tokens hold 0.3% of the answer token's probability (min_label_mass 0.5); "
        "unparseable reply 'I cannot tell.'"
    )


@pytest.mark.parametrize(
    "reply, note",
    [
        (
            lambda s: s.Reply(500, {"error": "boom"}),
            'no answer: HTTP 500: {"error": "boom"} (gave up after 2 attempts)',
        ),
        (
            lambda s: s.Reply(429, {"error": "busy"}),
            'no answer: HTTP 429: {"error": "busy"} (gave up after 2 attempts)',
        ),
        (
            lambda s: s.Reply(body=b"<html>502 Bad Gateway</html>"),
            "no answer: malformed JSON reply: <html>502 Bad Gateway</html>",
        ),
        (
            lambda s: s.Reply(body=s.chat_reply("SUPPORT"), delay_s=1.0),
            "no answer: timeout after 0.2s (gave up after 2 attempts)",
        ),
    ],
)
def test_failures_become_unscored_judgments(openai_server: Any, openai_stub: Any, reply: Any, note: str) -> None:
    openai_server.respond = lambda r: reply(openai_stub)
    j = build(openai_server, timeout_s=0.2)
    (out,) = j.judge(pairs("The bridge opened in 1932."))
    assert out.label is None and out.probs is None and out.note == note and out.source == "judge"
    assert j.stats()["unscored"] == 1 and j.stats()["generator"]["failed"] == 2  # the logprobs probe, then the pair
    assert j.describe()["resolved"]["logprobs"] == f"undecided: the probe got {note}"


def test_completions_endpoint_uses_the_text_prompt(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(
        body=openai_stub.completion_reply(" IRRELEVANT", [{" IR": -0.3, " SUP": -1.6}])
    )
    j = build(openai_server, endpoint="completions", top_logprobs=2)
    (out,) = j.judge(pairs("The bridge is painted red."))
    assert out.label == "IRRELEVANT" and out.probs["IRRELEVANT"] == pytest.approx(
        math.exp(-0.3) / (math.exp(-0.3) + math.exp(-1.6)), abs=1e-6
    )
    body = openai_server.posts()[-1].body  # after the logprobs probe
    assert body["prompt"].endswith("Claim: The bridge is painted red.\n\nAnswer (SUPPORT, CONTRADICT or IRRELEVANT):")
    assert body["logprobs"] == 2 and j.spec()["chat"] is False


def test_spec_names_the_served_model(openai_server: Any, openai_stub: Any, logged: Any) -> None:
    openai_server.models = ["Qwen/Qwen3-32B"]
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", [{"SUP": -0.01}]))
    spec = build(openai_server).spec()
    assert spec["model"] == {
        "name": "Qwen/Qwen3-32B",
        "base_url": openai_server.url,
        "served": {"id": "Qwen/Qwen3-32B"},
        "enable_thinking": False,
        "chat_template_kwargs": None,
        "extra_body": None,
    }
    assert spec["prompt_version"] == "judge-v1" and spec != build(openai_server, top_logprobs=5).spec()
    assert spec == build(openai_server, max_concurrency=64, timeout_s=5, max_retries=9, chunk_size=100).spec()
    assert spec != build(openai_server, chat_template_kwargs='{"reasoning_effort": "high"}').spec()
    assert spec != build(openai_server, extra_body='{"top_k": 1}').spec()
    elsewhere = registry.build(
        "judge", "openai", {"base_url": "http://127.0.0.2:9/v1", "model": "Qwen/Qwen3-32B", "max_retries": 0}
    )
    with logged.expect("GET /models failed"):  # nothing listens there
        assert elsewhere.spec()["model"] == {**spec["model"], "base_url": "http://127.0.0.2:9/v1", "served": None}


def test_through_the_engine_unscored_pairs_are_counted_and_asked_again(openai_server: Any, openai_stub: Any) -> None:
    def respond(r: Any) -> Any:
        claim = claim_of(r)
        if "1932" in claim or claim == "The sky is blue.":  # the second: the logprobs probe
            return openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", [{"SUP": -0.01}]))
        return openai_stub.Reply(body=openai_stub.chat_reply("I cannot tell."))

    openai_server.respond = respond
    item = Item(
        "q",
        "r",
        (Document("d1", DOC), Document("d2", "Tolls were charged until 1950.")),
        claims=("The bridge opened in 1932.", "The bridge was built by Romans."),
    )
    cfg = {"name": "openai", "base_url": openai_server.url, "max_retries": 0}
    with Engine(judge=cfg, pruner="none") as engine:
        (res,), report = engine.score_all([item])
    assert report.pairs["unscored"] == 2 and report.pairs["judged"] == 4
    assert res.verdicts[1].unscored == ("d1", "d2")
    assert res.verdicts[1].judgments[0].note == "unparseable reply 'I cannot tell.'"
    asked = len(openai_server.posts())
    with Engine(judge=cfg, pruner="none") as engine:
        (res,), report = engine.score_all([item])
    assert report.pairs["cached"] == 2 and report.pairs["unscored"] == 2
    assert len(openai_server.posts()) - asked == 3  # the logprobs probe, then only the unscored pairs
