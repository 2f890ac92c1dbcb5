"""The ``openai`` judge asks the server whether it returns log-probabilities before the spec keys
the cache (a one-token probe), and a server that answers without them (``transformers serve``
ignores the field) is read from the text under a text-only spec; an HTTP 400 for a model the
server does not list stops the run. Against the stub server; ``test_openai_served.py`` runs the
same against a real one."""

from __future__ import annotations

import re
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.core.errors import BackendUnavailable
from conflictscore_local.core.types import Claim, Document, Item, Pair, Passage
from conflictscore_local.generate.openai import LOGPROBS_IGNORED

from .test_judge_specs import refusing

DOC = "The bridge over the river opened in 1932 after four years of work."
PAIRS = [Pair(Claim("it", k, f"The bridge opened in {1931 + k}."), Passage("it", "d", 0, DOC)) for k in range(2)]
IGNORED = re.escape(LOGPROBS_IGNORED)


def build(server: Any, **kw: Any) -> Any:
    return registry.build("judge", "openai", {"base_url": server.url, "max_retries": 0, **kw})


def test_a_server_that_ignores_logprobs_is_read_text_only_from_the_first_spec(
    openai_server: Any, openai_stub: Any, logged: Any
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT"))  # never logprobs
    j = build(openai_server)
    with logged.expect(
        rf"judge openai: {IGNORED}; labels are read from the reply text "
        r"\(top_logprobs 10 -> 0 in the spec; --judge-arg top_logprobs=0"
    ):
        assert j.spec()["top_logprobs"] == 0
    (probe,) = openai_server.posts()
    assert probe.body["max_tokens"] == 1 and probe.body["top_logprobs"] == 10 and probe.body["logprobs"] is True
    assert j.describe()["resolved"]["logprobs"] == f"refused: {LOGPROBS_IGNORED}"
    out = j.judge(PAIRS)
    assert [(o.label, o.probs) for o in out] == [("SUPPORT", None)] * 2 and j.spec()["top_logprobs"] == 0
    assert all("logprobs" not in r.body and "top_logprobs" not in r.body for r in openai_server.posts()[1:])
    assert "protocol_changes" not in j.describe()["resolved"]  # nothing switched mid-run
    assert j.stats()["from_text"] == 2 and j.stats()["generator"]["answers_without_logprobs"] == 1


def test_a_server_that_refuses_logprobs_at_the_probe(openai_server: Any, openai_stub: Any, logged: Any) -> None:
    openai_server.respond = refusing(openai_stub, ("",))  # every claim: logprobs refused, SUPPORT without
    j = build(openai_server)
    with logged.expect(r"HTTP 400: .*logprobs are not supported.*top_logprobs 10 -> 0"):
        assert j.spec()["top_logprobs"] == 0
    assert ["logprobs" in r.body for r in openai_server.posts()] == [True, False]  # refused, asked again without
    assert j.describe()["resolved"]["logprobs"].startswith("refused: HTTP 400: ")
    assert [(o.label, o.probs) for o in j.judge(PAIRS)] == [("SUPPORT", None)] * 2


def test_the_spec_asks_nothing_when_told_the_reading_or_the_identity(
    openai_server: Any, openai_stub: Any, logged: Any
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT"))
    assert build(openai_server, top_logprobs=0).spec()["top_logprobs"] == 0 and openai_server.posts() == []
    pinned = build(openai_server, model="judge", model_fingerprint="sha256:9f2c")
    assert pinned.spec()["top_logprobs"] == 10 and openai_server.posts() == []
    # pinned, the first answers tell: the call is read from the text and the switch recorded
    with logged.expect(rf"logprobs refused by the server after 0 prompts \({IGNORED}\)"):
        out = pinned.judge(PAIRS)
    assert [(o.label, o.probs) for o in out] == [("SUPPORT", None)] * 2 and pinned.spec()["top_logprobs"] == 0
    assert pinned.describe()["resolved"]["protocol_changes"] == [
        {"after_prompts": 0, "top_logprobs": [10, 0], "reason": LOGPROBS_IGNORED}
    ]


def test_an_answer_without_logprobs_after_answers_with_them_switches_nothing(
    openai_server: Any, openai_stub: Any
) -> None:
    def respond(r: Any) -> Any:  # logprobs for every claim but 1932's
        top = None if "Claim: The bridge opened in 1932." in r.body["messages"][0]["content"] else [{"SUP": -0.01}]
        return openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", top))

    openai_server.respond = respond
    j = build(openai_server, max_concurrency=1)
    assert j.spec()["top_logprobs"] == 10 and j.describe()["resolved"]["logprobs"] == "returned"
    out = j.judge(PAIRS)
    assert [o.probs is None for o in out] == [False, True] and j.spec()["top_logprobs"] == 10
    assert j.stats()["generator"]["answers_without_logprobs"] == 1 and j.stats()["from_logprobs"] == 1


def test_through_the_engine_a_rerun_reads_every_label_from_the_cache(
    openai_server: Any, openai_stub: Any, tmp_path: Any
) -> None:
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT"))
    items = [Item("i", "r", (Document("d", DOC),), claims=("The bridge opened in 1932.", "It is red."))]
    cfg = RunConfig.from_mapping({"pruner": {"name": "none"}, "cache": {"path": str(tmp_path / "c.sqlite")}})
    sources = []
    for _ in range(2):
        with Engine(cfg, judge={"name": "openai", "base_url": openai_server.url}) as e:
            (res,), _ = e.score_all(items)
        sources.append([j.source for v in res.verdicts for j in v.judgments])
    assert sources == [["judge", "judge"], ["cache", "cache"]]
    assert len(openai_server.posts()) == 1 + 2 + 1  # probe + pairs, then the second run's probe alone


@pytest.mark.parametrize("models, raises", [(["served"], True), (["served", "other"], False), (None, False)])
def test_http_400_stops_the_run_only_for_a_model_the_server_does_not_list(
    openai_server: Any, openai_stub: Any, models: Any, raises: bool
) -> None:
    openai_server.models = models  # None: no GET /models route
    openai_server.respond = lambda r: openai_stub.Reply(400, {"detail": "Server is pinned to 'served'"})
    gen = registry.build("generator", "openai", {"base_url": openai_server.url, "model": "other", "max_retries": 0})
    if raises:
        with pytest.raises(
            BackendUnavailable,
            match=re.escape(
                """HTTP 400: {"detail": "Server is pinned to 'served'"}; the server lists 'served', not """
                "model='other': check model="
            ),
        ):
            gen.generate(["Hi"])
    else:  # listed, or nothing to compare with: the request's own failure, unscored by the judge
        (g,) = gen.generate(["Hi"])
        assert g.text is None and g.error == """HTTP 400: {"detail": "Server is pinned to 'served'"}"""
