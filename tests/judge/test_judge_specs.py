"""A cached label must come from the judge the run names: each gap in the judge specs
(the cache keys' judge part), reproduced through the engine and its cache where it matters."""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import checkpoints, registry
from conflictscore_local.core.types import Claim, Document, Item, Pair, Passage

MNLI = {0: "entailment", 1: "neutral", 2: "contradiction"}
DOC = "The bridge over the river opened in 1932 after four years of work."
ITEM = Item("q", "r", (Document("d", DOC),), claims=("The bridge opened in 1932.",))


def labels_and_sources(judge: dict, items: list[Item] = [ITEM], **cfg: Any) -> list[tuple[Any, str]]:
    config = RunConfig.from_mapping({"pruner": {"name": "none"}, **cfg})
    with Engine(config, judge=judge) as engine:
        results, _ = engine.score_all(items)
    return [(j.label, j.source) for r in results for v in r.verdicts for j in v.judgments]


# -- (1) a folder named "snapshots/<x>" was fingerprinted by its name ----------------------
def test_checkpoints_copied_under_one_snapshot_name_do_not_share_labels(
    crafted_nli: Callable[..., Path], tmp_path: Path
) -> None:
    a = tmp_path / "a" / "snapshots" / "x"
    b = tmp_path / "b" / "snapshots" / "x"
    shutil.copytree(crafted_nli(MNLI, 0), a)  # always SUPPORT
    shutil.copytree(crafted_nli(MNLI, 2), b)  # always CONTRADICT: one bias value differs
    assert labels_and_sources({"name": "nli", "model": str(a)}) == [("SUPPORT", "judge")]
    assert labels_and_sources({"name": "nli", "model": str(b)}) == [("CONTRADICT", "judge")]  # was SUPPORT, cache
    assert labels_and_sources({"name": "nli", "model": str(a)}) == [("SUPPORT", "cache")]


# -- (2) config.json was not hashed ----------------------------------------------------------
def test_a_changed_config_json_changes_the_nli_spec(crafted_nli: Callable[..., Path], tmp_path: Path) -> None:
    src = crafted_nli(MNLI, 0)
    edited = tmp_path / "edited"
    shutil.copytree(src, edited)
    config = json.loads((edited / "config.json").read_text())
    (edited / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 0.5}))  # same weights, other outputs
    spec = registry.build("judge", "nli", {"model": str(src)}).spec()
    changed = registry.build("judge", "nli", {"model": str(edited)}).spec()
    assert changed["model"]["weights_sha256"] == spec["model"]["weights_sha256"]
    assert changed["model"]["config_sha256"] != spec["model"]["config_sha256"] and changed != spec


def test_a_skipped_weights_hash_is_said_in_the_summary(
    crafted_nli: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "FULL_HASH_LIMIT", 1024)
    path = crafted_nli(MNLI, 0)
    with Engine(judge={"name": "nli", "model": str(path)}, pruner="none") as engine:
        _, report = engine.score_all([ITEM])
    fp = report.config["backends"]["judge"]["resolved"]["model_fingerprint"]
    size = (path / "model.safetensors").stat().st_size
    assert fp["hash"] == (
        f"skipped ({size} bytes of weights > FULL_HASH_LIMIT 1024): "
        "identified by path, file sizes and modification times"
    )
    assert fp["path"] == str(path.resolve()) and len(fp["config_sha256"]) == 64


# -- (3) vLLM engine arguments that change outputs --------------------------------------------
def test_vllm_engine_args_that_change_outputs_are_in_the_spec(tiny_causal_lm_dir: Path) -> None:
    def spec(**kw: Any) -> Any:
        return registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), **kw}).spec()

    base = spec()
    assert base["model"]["engine_args"] == {}
    fp8 = spec(engine_args='{"quantization": "fp8"}')
    assert fp8 != base and fp8["model"]["engine_args"] == {"quantization": "fp8"}
    assert spec(engine_args='{"kv_cache_dtype": "fp8_e5m2"}') not in (base, fp8)
    assert spec(engine_args='{"hf_overrides": {"rope_theta": 20000}}') != base
    # placement and scheduling only: the same answers, the same key
    assert spec(engine_args='{"max_num_seqs": 8, "enforce_eager": true, "pipeline_parallel_size": 2}') == base


# -- (4) the openai judge was keyed on the served name, an alias -----------------------------
def served(root: str, created: int = 1700000000) -> dict:
    return {
        "id": "judge",
        "object": "model",
        "created": created,
        "owned_by": "vllm",
        "root": root,
        "parent": None,
        "max_model_len": 32768,
        "permission": [{"id": "modelperm-1"}],
    }


def test_openai_spec_keys_on_what_the_server_reports(openai_server: Any, openai_stub: Any) -> None:
    openai_server.models = [served("/models/Qwen3-32B")]
    args = {"base_url": openai_server.url, "model": "judge", "max_retries": 0}
    judge = {"name": "openai", **args}
    spec = registry.build("judge", "openai", args).spec()
    assert spec["model"] == {
        "name": "judge",
        "base_url": openai_server.url,
        "served": {"id": "judge", "owned_by": "vllm", "root": "/models/Qwen3-32B", "max_model_len": 32768},
        "enable_thinking": False,
        "chat_template_kwargs": None,
        "extra_body": None,
    }
    openai_server.models = [served("/models/Qwen3-32B", created=1800000000)]  # vLLM: created = listing time
    assert registry.build("judge", "openai", args).spec() == spec

    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", [{"SUP": -0.01}]))
    assert labels_and_sources(judge) == [("SUPPORT", "judge")]
    # other weights behind the same alias at the same URL: asked again, not answered from the cache
    openai_server.models = [served("/models/Qwen3-8B")]
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("CONTRADICT", [{"CON": -0.01}]))
    assert labels_and_sources(judge) == [("CONTRADICT", "judge")]  # was SUPPORT, from the cache
    with Engine(judge=judge, pruner="none") as engine:
        _, report = engine.score_all([ITEM])
    assert report.config["backends"]["judge"]["generator"]["served_model"] == {
        k: v for k, v in served("/models/Qwen3-8B").items() if k != "permission"
    }


def test_a_pinned_model_fingerprint_keys_the_cache(openai_server: Any, openai_stub: Any) -> None:
    pin = {"model_fingerprint": "sha256:9f2c", "max_retries": 0}
    spec = registry.build("judge", "openai", {"base_url": openai_server.url, **pin}).spec()
    assert spec["model"] == {
        "fingerprint": "sha256:9f2c",
        "enable_thinking": False,
        "chat_template_kwargs": None,
        "extra_body": None,
    }
    # the same weights behind another URL and name: the same key, and nothing is asked to build it
    elsewhere = registry.build("judge", "openai", {"base_url": "http://127.0.0.2:9/v1", "model": "other", **pin})
    assert elsewhere.spec() == spec and openai_server.requests == []
    assert (
        spec
        != registry.build(
            "judge", "openai", {**pin, "base_url": openai_server.url, "model_fingerprint": "sha256:0000"}
        ).spec()
    )


def test_a_server_that_reports_nothing_is_keyed_by_name_with_a_warning(openai_server: Any, logged: Any) -> None:
    openai_server.models = ["someone-else"]
    judge = registry.build("judge", "openai", {"base_url": openai_server.url, "model": "judge", "max_retries": 0})
    with logged.expect(r"does not list 'judge'.*model_fingerprint"):
        spec = judge.spec()
    assert spec["model"]["served"] is None and spec["model"]["name"] == "judge"
    assert judge.describe()["generator"]["served_model"] == "unknown: GET /models does not list 'judge'"


def test_a_server_without_a_models_route_still_judges(openai_server: Any, openai_stub: Any, logged: Any) -> None:
    openai_server.models = None  # GET /models: 404
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", [{"SUP": -0.01}]))
    with logged.expect(r"GET /models failed: .*HTTP 404"):
        got = labels_and_sources({"name": "openai", "base_url": openai_server.url, "model": "judge"})
    assert got == [("SUPPORT", "judge")]


# -- (5) logprobs switched off mid-run: the spec still said top_logprobs=10 -------------------
def refusing(openai_stub: Any, refuse_for: tuple[str, ...]) -> Callable[[Any], Any]:
    """Answers SUPPORT (with logprobs when asked), but refuses logprobs for the named claims."""

    def respond(r: Any) -> Any:
        asked = "logprobs" in r.body
        claim = r.body["messages"][0]["content"].split("Claim: ")[1]
        if asked and any(c in claim for c in refuse_for):
            return openai_stub.Reply(400, {"error": "logprobs are not supported by this model"})
        top = [{"SUP": -0.05, "CON": -3.0}] if asked else None
        return openai_stub.Reply(body=openai_stub.chat_reply("SUPPORT", top))

    return respond


def test_judgments_after_a_protocol_switch_are_keyed_under_the_spec_that_made_them(
    openai_server: Any, openai_stub: Any, tmp_path: Path, logged: Any
) -> None:
    items = [Item(f"i{k}", "r", (Document("d", DOC),), claims=(f"The bridge opened in {1930 + k}.",)) for k in (1, 2)]
    judge = {"name": "openai", "base_url": openai_server.url, "max_retries": 0}
    cfg = {"engine": {"step_items": 1}, "cache": {"path": str(tmp_path / "cache.sqlite")}}
    openai_server.respond = refusing(openai_stub, ("1932",))  # i2's request is refused: the switch
    with logged.expect(r"logprobs refused by the server after 1 prompts .*\(top_logprobs 10 -> 0"):
        with Engine(RunConfig.from_mapping({"pruner": {"name": "none"}, **cfg}), judge=judge) as engine:
            results, report = engine.score_all(items)
            assert engine.backend("judge").spec()["top_logprobs"] == 0
    assert [r.verdicts[0].judgments[0].probs is None for r in results] == [False, True]
    assert report.config["backends"]["judge"]["resolved"]["protocol_changes"] == [
        {
            "after_prompts": 1,
            "top_logprobs": [10, 0],
            "reason": 'HTTP 400: {"error": "logprobs are not supported by this model"}',
        }
    ]
    with sqlite3.connect(tmp_path / "cache.sqlite") as db:
        specs = [json.loads(s) for (s,) in db.execute("SELECT spec FROM specs")]
    # the judge's specs (beside them: the passage splitting's, which names the judge it counted for)
    tops = sorted(spec["top_logprobs"] for spec in specs if spec.get("backend") == "openai")
    assert tops == [0, 10] and [s["splitter"] for s in specs if "splitter" in s] == [1]
    # a server taking logprobs again: i1's label (made with logprobs) is reused, i2's text-read one is not
    openai_server.respond = refusing(openai_stub, ())
    again = labels_and_sources(judge, items, **cfg)
    assert again == [("SUPPORT", "cache"), ("SUPPORT", "judge")]  # was i2 from the cache


def test_a_switch_inside_one_call_rereads_the_whole_call_from_text(openai_server: Any, openai_stub: Any) -> None:
    openai_server.respond = refusing(openai_stub, ("1933", "1934"))
    j = registry.build(
        "judge", "openai", {"base_url": openai_server.url, "max_retries": 0, "chunk_size": 2, "max_concurrency": 1}
    )
    pairs = [Pair(Claim("it", k, f"The bridge opened in {1931 + k}."), Passage("it", "d", 0, DOC)) for k in range(4)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = j.judge(pairs)
    # the first two were answered with logprobs; read again from their text, all four share one spec
    assert [(o.label, o.probs) for o in out] == [("SUPPORT", None)] * 4
    assert j.spec()["top_logprobs"] == 0 and j.stats()["from_text"] == 4
    assert j.describe()["resolved"]["protocol_changes"][0]["after_prompts"] == 2
