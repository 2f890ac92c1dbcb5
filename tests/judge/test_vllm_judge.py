"""The ``vllm`` judge on CPU: prompt construction, prefix grouping and reading labels from
recorded first-token log-probabilities (stand-in ``vllm`` module, real tokenizer)."""

from __future__ import annotations

import json
import math
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine
from conflictscore_local.backends import registry
from conflictscore_local.backends.checkpoints import load_tokenizer
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import Claim, Document, Item, Pair, Passage
from conflictscore_local.judge import llm as llm_module
from conflictscore_local.judge.prompts import INSTRUCTIONS, judge_messages, judge_text, passage_order

DOC_A = "The bridge over the river opened in 1932 after four years of work."
DOC_B = "Local papers reported that the bridge opened in 1934."
ANSWERS = {
    "opened in 1932": "SUPPORT",
    "opened in 1934": "CONTRADICT",
    "is painted red": "IRRELEVANT",
    "was built by Romans": "OFF",
}


def pair(claim: str, doc: str, k: int = 0) -> Pair:
    return Pair(Claim("it", k, f"The bridge {claim}."), Passage("it", doc[:5], 0, doc))


@pytest.fixture(scope="module")
def tok(tiny_causal_lm_dir: Path) -> Any:
    """The judge model's tokenizer (to read what the stand-in engine was sent)."""
    return load_tokenizer(tiny_causal_lm_dir)


@pytest.fixture
def answering(fake_vllm: Any, tok: Any) -> Any:
    """The stand-in engine answers from the recorded first-token alternatives by claim."""

    def answer(prompt: Any, params: Any) -> Any:
        text = tok.decode(prompt["prompt_token_ids"])
        claim = text.split("claim :")[-1]
        key = next(v for k, v in ANSWERS.items() if k.split()[-1].lower() in claim)
        steps = [fake_vllm.RECORDED[key]][: params.max_tokens]
        return fake_vllm.output(steps[0][0][1], steps)

    fake_vllm.LLM.answer = staticmethod(answer)
    return fake_vllm


@pytest.fixture
def vjudge(answering: Any, tiny_causal_lm_dir: Path) -> Any:
    return registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir)})


def test_prompt_puts_instructions_then_document_then_claim() -> None:
    (msg,) = judge_messages("The bridge opened in 1932.", DOC_A)
    assert msg["role"] == "user"
    assert msg["content"] == (
        f"{INSTRUCTIONS}\n\nDocument:\n{DOC_A}\n\nClaim: The bridge opened in 1932.\n\n"
        "Answer (SUPPORT, CONTRADICT or IRRELEVANT):"
    )
    assert judge_text("c", "d") == msg["content"].replace(DOC_A, "d").replace("The bridge opened in 1932.", "c")
    assert INSTRUCTIONS.endswith("Reply with exactly one word: SUPPORT, CONTRADICT or IRRELEVANT.")


def test_passage_order_groups_by_passage() -> None:
    pairs = [
        pair("opened in 1934", DOC_A),
        pair("is painted red", DOC_B),
        pair("opened in 1932", DOC_A),
        pair("opened in 1932", DOC_B),
    ]
    assert passage_order(pairs) == [2, 0, 1, 3]


def test_submission_is_grouped_by_passage_and_shares_prefixes(vjudge: Any, answering: Any, tok: Any) -> None:
    pairs = [
        pair("opened in 1934", DOC_A, 0),
        pair("is painted red", DOC_B, 1),
        pair("opened in 1932", DOC_A, 2),
        pair("opened in 1932", DOC_B, 3),
    ]
    vjudge.judge(pairs)
    ((prompts, params),) = answering.LLM.instances[0].calls
    texts = [tok.decode(p["prompt_token_ids"]) for p in prompts]
    docs = ["1932 after" in t for t in texts]
    assert docs == [True, True, False, False]
    ids = [p["prompt_token_ids"] for p in prompts]
    shared = next(k for k, (a, b) in enumerate(zip(ids[0], ids[1])) if a != b)
    doc_end = len(tok(tok.decode(ids[0]).split("claim :")[0], add_special_tokens=False)["input_ids"])
    assert shared >= doc_end - 2  # everything up to the claim is a common prefix
    assert params.kwargs["max_tokens"] == 1 and params.kwargs["logprobs"] == 20 and params.kwargs["temperature"] == 0.0
    assert answering.LLM.instances[0].kwargs["enable_prefix_caching"] is True


def test_labels_and_probabilities_from_recorded_logprobs(vjudge: Any, fake_vllm: Any) -> None:
    pairs = [pair(c, DOC_A, k) for k, c in enumerate(ANSWERS)]
    out = vjudge.judge(pairs)
    assert [o.label for o in out] == ["SUPPORT", "CONTRADICT", "IRRELEVANT", None]
    s, c, i = math.exp(-0.0412), math.exp(-3.6031), math.exp(-4.5544)
    assert out[0].probs == pytest.approx(
        {"SUPPORT": s / (s + c + i), "CONTRADICT": c / (s + c + i), "IRRELEVANT": i / (s + c + i)}, abs=1e-6
    )
    assert out[1].probs["CONTRADICT"] == pytest.approx(
        math.exp(-0.1019) / (math.exp(-0.1019) + math.exp(-2.9347) + math.exp(-3.3083)), abs=1e-6
    )
    # the model wanted to say "The"; " I" is one letter, no label token
    assert out[3].note == (
        "label tokens hold 0.0% of the answer token's probability (min_label_mass 0.5); unparseable reply 'The'"
    )
    assert all(o.source == "judge" for o in out)
    assert vjudge.stats() == {
        "pairs": 4,
        "from_logprobs": 3,
        "low_label_mass": 1,
        "unscored": 1,
        "generator": {"prompts": 4},
    }


def test_thresholds_apply_to_the_label_distribution(answering: Any, tiny_causal_lm_dir: Path) -> None:
    j = registry.build(
        "judge", "vllm", {"model": str(tiny_causal_lm_dir), "thresholds": '{"SUPPORT": 0.99, "CONTRADICT": 0.5}'}
    )
    out = j.judge([pair("opened in 1932", DOC_A), pair("opened in 1934", DOC_A)])
    assert [o.label for o in out] == ["IRRELEVANT", "CONTRADICT"]  # p(SUPPORT) = 0.9587 < 0.99
    assert j.spec()["thresholds"] == {"SUPPORT": 0.99, "CONTRADICT": 0.5}


def test_identical_pairs_are_asked_once_and_progress_counts_all(vjudge: Any, answering: Any) -> None:
    p = pair("opened in 1932", DOC_A)
    twin = Pair(Claim("other", 3, p.claim.text), p.passage)
    seen: list[int] = []
    out = vjudge.judge([p, twin, p], on_progress=seen.append)
    assert [o.pair for o in out] == [p, twin, p] and {o.label for o in out} == {"SUPPORT"}
    assert len(answering.LLM.instances[0].calls[0][0]) == 1 and sum(seen) == 3


def test_pairs_go_to_the_engine_in_large_calls_with_progress_per_prompt(
    answering: Any, tiny_causal_lm_dir: Path
) -> None:
    pairs = [pair(f"opened in 1932 near pier {k}", DOC_A, k) for k in range(1100)]
    pairs += pairs[:3]  # asked once, counted as done when their twin is read
    seen: list[int] = []
    out = registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir)}).judge(pairs, on_progress=seen.append)
    assert {o.label for o in out} == {"SUPPORT"}
    (llm,) = answering.LLM.instances
    assert [len(c[0]) for c in llm.calls] == [1100]  # one engine call: continuous batching is never drained
    assert seen == [1] * 1100 + [3]
    chunked = registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), "chunk_size": 400})
    seen.clear()
    chunked.judge(pairs, on_progress=seen.append)
    assert [len(c[0]) for c in answering.LLM.instances[1].calls] == [400, 400, 300]
    assert sum(seen) == len(pairs) and len(seen) == 1101


@pytest.mark.parametrize("backend", ["vllm", "openai"])
@pytest.mark.parametrize(
    "arg, value, message",
    [
        ("max_tokens", "0", "max_tokens must be an integer in [1, 1000000]"),
        ("min_label_mass", "1.5", "min_label_mass must be a finite number in [0, 1]"),
        ("chunk_size", "0", "chunk_size must be an integer in [1, 10000000]"),
        ("thresholds", '{"SUPPORT": 0.5}', "thresholds need both SUPPORT and CONTRADICT"),
        ("top_logprobs", "101", "top_logprobs must be an integer in ["),
    ],
)
def test_llm_judge_arguments_are_checked(backend: str, arg: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        registry.build("judge", backend, {"model": "m", arg: value})


def test_spec_and_resolved(vjudge: Any, tiny_causal_lm_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = vjudge.spec()
    assert spec["backend"] == "vllm" and spec["prompt_version"] == "judge-v1" and spec["chat"] is True
    assert len(spec["model"]["weights_sha256"]) == 64 and spec["min_label_mass"] == 0.5
    # WordPiece splits one label word: it is read from its first token, which still names it
    resolved = vjudge.describe()["resolved"]
    assert resolved["label_tokens"] == {
        "SUPPORT": ["support"],
        "CONTRADICT": ["contra", "##dict"],
        "IRRELEVANT": ["irrelevant"],
    }
    assert resolved["label_single_tokens"] is False
    parallel = registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), "tensor_parallel_size": 4})
    assert parallel.spec() == spec  # how the model is served does not change its answers
    monkeypatch.setattr(llm_module, "PROMPT_VERSION", "judge-v2")
    assert vjudge.spec() == {**spec, "prompt_version": "judge-v2"}


def test_spec_follows_what_renders_the_prompt(vjudge: Any, tiny_causal_lm_dir: Path, tmp_path: Path) -> None:
    def spec(**kw: Any) -> Any:
        return registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), **kw}).spec()

    base = vjudge.spec()
    assert base["model"]["chat_template_kwargs"] is None and len(base["model"]["chat_template_sha256"]) == 64
    assert spec(chat_template_kwargs='{"reasoning_effort": "high"}') != base
    assert spec(enable_thinking="true") != base
    same = tmp_path / "same-tokenizer"
    shutil.copytree(tiny_causal_lm_dir, same)
    assert spec(tokenizer=str(same)) == base  # the same tokenizer files elsewhere: the same prompts
    edited = tmp_path / "edited-template"
    shutil.copytree(tiny_causal_lm_dir, edited)
    template = edited / "chat_template.jinja"
    template.write_text(template.read_text().replace("<|im_start|>assistant", "<|im_start|>assistant\nAnswer:"))
    assert spec(tokenizer=str(edited)) != base
    # the same weights with a changed template in the model folder itself
    assert spec(model=str(edited))["model"]["weights_sha256"] == base["model"]["weights_sha256"]
    assert spec(model=str(edited)) != base
    vocab = tmp_path / "other-vocab"
    shutil.copytree(tiny_causal_lm_dir, vocab)
    config = json.loads((vocab / "tokenizer_config.json").read_text())
    added = {**config, "extra_special_tokens": [*config["extra_special_tokens"], "<tool_call>"]}
    (vocab / "tokenizer_config.json").write_text(json.dumps(added))
    assert spec(tokenizer=str(vocab)) != base  # the template is unchanged, the tokenization is not


def test_label_words_must_be_readable_from_their_first_token(vjudge: Any) -> None:
    class Spelling:
        def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
            return {"input_ids": [7, 8] if text == "IRRELEVANT" else [1]}

        def decode(self, ids: list[int]) -> str:
            return {7: "I", 8: "RRELEVANT", 1: "X"}[ids[0]]

    vjudge.generator()._tokenizer = Spelling()
    with pytest.raises(ConfigError, match=r"spells SUPPORT as \['X'\]"):
        vjudge.check_label_tokens()


class SmolSpelling:
    """How SmolLM2-135M's tokenizer spells the labels: S UP PORT, CON TR AD ICT, IR RE LE V ANT."""

    PIECES = {
        "SUPPORT": ["S", "UP", "PORT"],
        "CONTRADICT": ["CON", "TR", "AD", "ICT"],
        "IRRELEVANT": ["IR", "RE", "LE", "V", "ANT"],
    }

    def __init__(self, pieces: dict | None = None):
        self.pieces = pieces or self.PIECES
        self.vocab = sorted({p for v in self.pieces.values() for p in v})

    def __call__(self, text: str, add_special_tokens: bool = True) -> dict:
        return {"input_ids": [self.vocab.index(p) for p in self.pieces[text]]}

    def decode(self, ids: list[int]) -> str:
        return self.vocab[ids[0]]


def test_a_one_letter_label_start_is_read_as_its_label(vjudge: Any) -> None:
    """SmolLM2 starts SUPPORT with "S": the token is that label's when no other label starts with
    it; its probability adds to any "SUPPORT" alternative; "Sure" stays no label."""
    from conflictscore_local.generate._base import Generation

    vjudge.generator()._tokenizer = SmolSpelling()
    assert vjudge.check_label_tokens() == SmolSpelling.PIECES
    assert vjudge.resolved["label_short_tokens"] == {"S": "SUPPORT"}
    step = {
        "S": math.log(0.5),
        "SUPPORT": math.log(0.1),
        "CON": math.log(0.2),
        "IR": math.log(0.1),
        "Sure": math.log(0.1),
    }
    j = vjudge.read(pair("opened in 1932", DOC_A), Generation("S", (step,)), None)
    assert j.label == "SUPPORT"
    assert j.probs == pytest.approx({"SUPPORT": 0.6 / 0.9, "CONTRADICT": 0.2 / 0.9, "IRRELEVANT": 0.1 / 0.9}, abs=1e-6)
    low = vjudge.read(
        pair("opened in 1932", DOC_A), Generation("Sure", ({"Sure": math.log(0.9), "S": math.log(0.1)},)), None
    )
    assert low.label is None and low.note.startswith("label tokens hold 10.0% of the answer token's probability")

    vjudge.generator()._tokenizer = SmolSpelling({**SmolSpelling.PIECES, "CONTRADICT": ["IR", "X"]})
    with pytest.raises(ConfigError, match=r"spells CONTRADICT as \['IR', 'X'\]; its first token does not identify"):
        vjudge.check_label_tokens()


def test_passage_budget_fits_max_model_len(vjudge: Any, tiny_causal_lm_dir: Path, tok: Any) -> None:
    count, budget = vjudge.passage_budget()
    prompt = tok.apply_chat_template(
        judge_messages("", ""), tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    overhead = len(tok(prompt, add_special_tokens=False)["input_ids"])
    assert budget == 512 - overhead - 128 - 1  # max_position_embeddings − prompt − claim room − answer
    assert count("The bridge opened.") == 4
    small = registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), "passage_tokens": 100})
    assert small.passage_budget()[1] == 100
    with pytest.raises(ConfigError, match="leaves no room for passages"):
        registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), "max_model_len": 200}).passage_budget()


def test_import_guard(monkeypatch: pytest.MonkeyPatch, tiny_causal_lm_dir: Path) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    j = registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir)})
    with pytest.raises(BackendUnavailable, match=r"pip install 'conflictscore-local\[vllm\]'"):
        j.judge([pair("opened in 1932", DOC_A)])


def test_engine_end_to_end_then_from_cache(vjudge: Any, answering: Any, tiny_causal_lm_dir: Path) -> None:
    item = Item(
        "q",
        "r",
        (Document("a", DOC_A), Document("b", DOC_B)),
        claims=("The bridge opened in 1932.", "The bridge is painted red."),
    )
    for source in ("judge", "cache"):
        with Engine(judge={"name": "vllm", "model": str(tiny_causal_lm_dir)}, pruner="none") as engine:
            (res,), report = engine.score_all([item])
        assert [j.source for v in res.verdicts for j in v.judgments] == [source] * 4
        assert res.verdicts[1].irrelevant == ("a", "b")
    assert report.pairs["cached"] == 4
