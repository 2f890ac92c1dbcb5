"""The ``nli`` judge's vLLM runtimes: ``runtime=vllm`` through ``LLM.classify`` (the stand-in vLLM
runs the same transformers model) and ``runtime=serve`` against a stub ``/classify`` server give
the ``torch`` runtime's labels for the same pairs; the old spellings (``--judge vllm|openai
--judge-arg mode=classify``) warn and are the same judge. The real engine: ``tests/vllm``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.packed import plain_folder
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.judge.distinct import distinct
from conflictscore_local.judge.nli.runtimes.base import pair_boundary

REPO = Path(__file__).resolve().parents[2]
DEFAULT_JUDGE = REPO / "models" / "default-judge"
TOLERANCE = 1e-4
"""Batched, padded PyTorch (nli) vs one unpadded input at a time (vLLM): float noise only."""


def nli(model: Path, **args: Any) -> Any:
    return registry.build("judge", "nli", {"model": str(model), "runtime": "torch", **args})


def on_vllm(model: Path, runtime_args: dict | None = None, **args: Any) -> Any:
    return registry.build(
        "judge", "nli", {"model": str(model), "runtime": "vllm", "runtime_args": runtime_args, **args}
    )


def agree(a: list, b: list) -> float:
    """Largest probability difference; asserts the labels are identical first."""
    assert [j.label for j in a] == [j.label for j in b]
    return max(abs(x.probs[k] - y.probs[k]) for x, y in zip(a, b) for k in x.probs)


@pytest.mark.slow  # the default judge on real pairs, batched and one at a time
def test_vllm_classify_gives_the_nli_labels_for_the_default_judge(fake_vllm: Any, bench_pairs: list) -> None:
    pairs = bench_pairs[:48]
    # dtype=auto: float32 on a CPU, as the torch runtime resolves it
    vj = on_vllm(DEFAULT_JUDGE, {"chunk_size": 20})
    reference = nli(DEFAULT_JUDGE)
    by_vllm, by_nli = vj.judge(pairs), reference.judge(pairs)
    assert agree(by_vllm, by_nli) <= TOLERANCE
    assert {j.label for j in by_nli} >= {"SUPPORT", "IRRELEVANT"}
    assert [j.note for j in by_vllm] == [j.note for j in by_nli]

    (llm,) = fake_vllm.LLM.instances
    assert llm.kwargs["runner"] == "pooling" and "enable_prefix_caching" not in llm.kwargs
    assert llm.kwargs["model"] == str(plain_folder(DEFAULT_JUDGE))  # a packed judge: its plain copy
    assert len({(p.passage.text, p.claim.text) for p in pairs}) == 47  # one repeated pair: judged once
    assert [len(p) for p, _ in llm.classify_calls] == [20, 20, 7]  # chunk_size inputs per engine call
    # the token ids vLLM got are the nli judge's inputs, segment ids passed in compressed form
    firsts = [pairs[i] for i in distinct(pairs).first][:20]
    feats, _ = reference.encode([p.passage.text for p in firsts], [p.claim.text for p in firsts])
    prompts, params = llm.classify_calls[0]
    assert [p["prompt_token_ids"] for p in prompts] == [f["input_ids"] for f in feats]
    boundaries = [q.extra_kwargs["compressed_token_type_ids"] for q in params]
    assert boundaries == [f["token_type_ids"].index(1) for f in feats]

    spec, ref_spec = vj.spec(), reference.spec()
    assert (spec["backend"], spec["runtime"], spec["dtype"]) == ("nli", "vllm", "float32")
    assert llm.kwargs["dtype"] == "float32"
    cal = json.loads((DEFAULT_JUDGE / "conflictscore.json").read_text())
    # v5 ships no thresholds: its rule is arg-max, and both runtimes decide by it
    assert cal["decision_rule"]["rule"] == "argmax" and spec["thresholds"] is None is ref_spec["thresholds"]
    assert all(j.label == max(j.probs, key=j.probs.__getitem__) for j in by_vllm)
    assert spec["engine_args"] == {}
    assert {k: v for k, v in spec.items() if k not in ("runtime", "engine_args")} == {
        k: v for k, v in ref_spec.items() if k != "runtime"
    }
    assert vj.passage_budget()[1] == reference.passage_budget()[1]
    assert vj.stats()["engine_calls"] == 3 and vj.describe()["resolved"]["runtime"] == "vllm"


@pytest.mark.slow  # the default judge on real pairs, twice
def test_without_segment_ids_the_default_judge_reads_pairs_differently(fake_vllm: Any, bench_pairs: list) -> None:
    """Why segment ids travel: the same ids with the claim as segment 0 change the probabilities."""
    pairs = bench_pairs[:16]
    reference = nli(DEFAULT_JUDGE)
    feats, _ = reference.encode([p.passage.text for p in pairs], [p.claim.text for p in pairs])
    llm = fake_vllm.LLM(model=str(plain_folder(DEFAULT_JUDGE)), runner="pooling", dtype="float32")
    plain = llm.classify(
        [{"prompt_token_ids": f["input_ids"]} for f in feats], pooling_params=fake_vllm.PoolingParams()
    )
    with_ids = llm.classify(
        [{"prompt_token_ids": f["input_ids"]} for f in feats],
        pooling_params=[
            fake_vllm.PoolingParams(extra_kwargs={"compressed_token_type_ids": pair_boundary(f)}) for f in feats
        ],
    )
    gap = max(abs(a - b) for x, y in zip(plain, with_ids) for a, b in zip(x.outputs.probs, y.outputs.probs))
    assert gap > 1e-3


def test_vllm_runtime_deberta_and_its_arguments(fake_vllm: Any, spread_nli: Any, bench_pairs: list) -> None:
    model = spread_nli("deberta-v2")
    vj = on_vllm(model, max_length=96, thresholds={"SUPPORT": 0.34, "CONTRADICT": 0.34})
    reference = nli(model, max_length=96, thresholds={"SUPPORT": 0.34, "CONTRADICT": 0.34})
    pairs = bench_pairs[:24]
    assert agree(vj.judge(pairs), reference.judge(pairs)) <= TOLERANCE
    assert vj.spec()["max_length"] == 96 and vj.spec()["thresholds"] == {"SUPPORT": 0.34, "CONTRADICT": 0.34}
    with pytest.raises(
        ConfigError,
        match="runtime_args base_url not allowed with runtime=vllm; allowed: "
        "tensor_parallel_size, max_model_len, gpu_memory_utilization, seed, "
        "engine_args, chunk_size",
    ):
        on_vllm(model, {"base_url": "http://x/v1"})
    with pytest.raises(ConfigError, match="runtime_args apply to runtime=vllm or runtime=serve; runtime is torch"):
        nli(model, runtime_args={"max_model_len": 64})
    with pytest.raises(ConfigError, match="runtime_args chunk_size must be a whole number >= 1, got 0"):
        on_vllm(model, {"chunk_size": 0})
    with pytest.raises(
        ConfigError,
        match=r"max_model_len 64 is shorter than the judge's max_length 96 \(inputs of up "
        r"to 96 tokens\); raise runtime_args max_model_len to 96 or more",
    ):
        on_vllm(model, {"max_model_len": 64}, max_length=96).spec()
    assert len(fake_vllm.LLM.instances) == 1  # vj's: the refused ones started none


def test_the_old_spelling_warns_and_is_the_same_judge(
    fake_vllm: Any, spread_nli: Any, bench_pairs: list, logged: Any
) -> None:
    """``--judge vllm --judge-arg mode=classify`` (one more release): the nli judge with runtime=vllm,
    its engine arguments moved to runtime_args, the same spec, so the same cache entries."""
    model = spread_nli("deberta-v2")
    with logged.expect(
        r"judge vllm: mode=classify is deprecated and goes in the next release; it runs --judge nli "
        rf"--judge-arg model={model} --judge-arg runtime=vllm"
    ):
        old = registry.build(
            "judge",
            "vllm",
            {
                "model": str(model),
                "mode": "classify",
                "max_length": 96,
                "dtype": "float32",
                "chunk_size": 10,
                "max_model_len": 128,
            },
        )
        old_spec = old.spec()
    new = on_vllm(model, {"chunk_size": 10, "max_model_len": 128}, max_length=96, dtype="float32")
    assert old_spec == new.spec()
    pairs = bench_pairs[:12]
    assert agree(old.judge(pairs), new.judge(pairs)) == 0.0
    assert fake_vllm.LLM.instances[0].kwargs == fake_vllm.LLM.instances[1].kwargs
    assert old.describe()["resolved"]["deprecated"] == "mode=classify: --judge nli --judge-arg runtime=vllm"
    with pytest.raises(ConfigError, match="top_logprobs, chat only apply with mode=generate"):
        registry.build("judge", "vllm", {"model": str(model), "mode": "classify", "top_logprobs": 5, "chat": False})
    with pytest.raises(ConfigError, match="negative_label only applies with mode=classify"):
        registry.build("judge", "vllm", {"model": str(model), "negative_label": "CONTRADICT"})
    with pytest.raises(ConfigError, match="'score' is not allowed; allowed: generate, classify"):
        registry.build("judge", "vllm", {"model": str(model), "mode": "score"})


def test_vllm_runtime_spec_keys_the_engine_arguments_that_change_outputs(fake_vllm: Any, spread_nli: Any) -> None:
    """As in generate mode: quantization (and every other output-changing engine argument) keys the
    judgment cache; a scheduling argument does not."""
    model = str(spread_nli("deberta-v2"))

    def spec(**engine_args: Any) -> dict:
        return dict(on_vllm(Path(model), {"engine_args": engine_args} if engine_args else None).spec())

    plain, fp8 = spec(), spec(quantization="fp8")
    assert fp8["engine_args"] == {"quantization": "fp8"} and plain["engine_args"] == {}
    assert plain != fp8
    assert spec(max_num_seqs=8, enforce_eager=True) == plain


# -- vllm serve's /classify -------------------------------------------------------------------


@pytest.fixture
def classify_server(openai_server: Any, openai_stub: Any) -> Any:
    """The stub answers ``/classify`` by running ``openai_server.classifier`` on each input's token
    ids alone, segment ids all 0, as vLLM's server does with token-id inputs."""
    import torch

    def respond(req: Any) -> Any:
        if req.path != "/classify":
            return openai_stub.Reply(status=404, body={"error": f"no route {req.path}"})
        probs = []
        for ids in req.body["input"]:
            with torch.inference_mode():
                logits = openai_server.classifier(input_ids=torch.tensor([ids])).logits
            probs.append(torch.softmax(logits, dim=-1)[0].tolist())
        return openai_stub.Reply(body=openai_stub.classify_reply(probs, req.body["model"]))

    openai_server.respond = respond
    return openai_server


def serve_judge(server: Any, model: Path, runtime_args: dict | None = None, **args: Any) -> Any:
    from transformers import AutoModelForSequenceClassification

    server.classifier = AutoModelForSequenceClassification.from_pretrained(str(model)).eval()
    return registry.build(
        "judge",
        "nli",
        {
            "model": str(model),
            "runtime": "serve",
            **args,
            "runtime_args": {"base_url": server.url, "max_retries": 0, **(runtime_args or {})},
        },
    )


def test_served_classify_gives_the_nli_labels(classify_server: Any, spread_nli: Any, bench_pairs: list) -> None:
    model = spread_nli("deberta-v2")
    pairs = bench_pairs[:40]
    judge = serve_judge(classify_server, model, {"batch_size": 16, "max_concurrency": 2}, max_length=128)
    by_server = judge.judge(pairs)
    reference = nli(model, max_length=128)
    assert agree(by_server, reference.judge(pairs)) <= TOLERANCE

    posts = classify_server.posts()
    assert {r.path for r in posts} == {"/classify"}  # at the server root, not under /v1
    assert len({(p.passage.text, p.claim.text) for p in pairs}) == 39  # one pair repeats: judged once
    assert sorted(len(r.body["input"]) for r in posts) == [7, 16, 16]
    assert all(r.body["model"] == "stub-model" for r in posts)
    firsts = [pairs[i] for i in distinct(pairs).first]
    feats, _ = reference.encode([p.passage.text for p in firsts], [p.claim.text for p in firsts])
    sent = sorted(ids for r in posts for ids in r.body["input"])
    assert sent == sorted(f["input_ids"] for f in feats)
    spec = judge.spec()
    assert (spec["backend"], spec["runtime"]) == ("nli", "serve")
    assert spec["served_model"] == "stub-model" and spec["classify_url"] == classify_server.root + "/classify"
    assert judge.stats()["requests"] == 3


def test_served_classify_refuses_a_checkpoint_with_segment_ids(classify_server: Any, tiny_nli_dir: Path) -> None:
    judge = serve_judge(classify_server, tiny_nli_dir)
    with pytest.raises(ConfigError, match=r"its inputs carry segment ids \(token_type_ids, type_vocab_size 2\)"):
        judge.spec()
    assert classify_server.posts() == []


def test_served_classify_failures_are_unscored(
    classify_server: Any, openai_stub: Any, spread_nli: Any, bench_pairs: list
) -> None:
    judge = serve_judge(classify_server, spread_nli("deberta-v2"), {"batch_size": 2})
    classify_server.respond = lambda req: openai_stub.Reply(status=503, body={"error": "overloaded"})
    out = judge.judge(bench_pairs[:3])
    assert [j.label for j in out] == [None] * 3
    assert out[0].note.startswith(f"no answer from {classify_server.root}/classify: HTTP 503")
    classify_server.respond = lambda req: openai_stub.Reply(body={"data": [{"index": 0}]})
    out = judge.judge(bench_pairs[3:4])
    assert out[0].label is None and out[0].note.startswith("malformed /classify reply (missing or bad 'probs')")
    assert judge.stats()["unscored"] == 4


def test_served_classify_old_spelling_is_runtime_serve(
    classify_server: Any, spread_nli: Any, bench_pairs: list, logged: Any
) -> None:
    model = spread_nli("deberta-v2")
    new = serve_judge(classify_server, model, {"batch_size": 4})
    with logged.expect("judge openai: mode=classify is deprecated .* --judge-arg runtime=serve"):
        old = registry.build(
            "judge",
            "openai",
            {
                "base_url": classify_server.url,
                "mode": "classify",
                "checkpoint": str(model),
                "max_retries": 0,
                "batch_size": 4,
            },
        )
        assert old.spec() == new.spec()
    pairs = bench_pairs[:6]
    assert agree(old.judge(pairs), new.judge(pairs)) == 0.0
    assert sorted(len(r.body["input"]) for r in classify_server.posts()) == [2, 2, 4, 4]


def test_served_classify_arguments() -> None:
    with pytest.raises(
        ConfigError,
        match="runtime_args max_model_len not allowed with runtime=serve; allowed: base_url, "
        "model, api_key_env, max_concurrency, timeout_s, max_retries, backoff_s, "
        "max_backoff_s, batch_size",
    ):
        registry.build("judge", "nli", {"runtime": "serve", "runtime_args": {"max_model_len": 8}})
    with pytest.raises(ConfigError, match="mode=classify needs checkpoint=DIR"):
        registry.build("judge", "openai", {"mode": "classify"})
    with pytest.raises(ConfigError, match="batch_size only applies with mode=classify"):
        registry.build("judge", "openai", {"batch_size": 8})
    with pytest.raises(ConfigError, match="top_logprobs only applies with mode=generate"):
        registry.build("judge", "openai", {"mode": "classify", "model": "m", "top_logprobs": 3})
