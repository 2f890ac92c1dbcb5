"""The ``ray`` judge: a single-process run's rows from Ray Data workers (a local Ray instance
with 2 CPU workers), and the ``vllm`` judge's path through ``ray.data.llm`` (a stand-in for
``ray.data.llm``, which needs vLLM, on the real Ray Data). Probabilities of the ``nli`` judge
are compared to 1e-5: a batched forward's float summation order depends on the other pairs in
its padded batch (measured: up to 2e-6 between batch sizes in one process), labels never.

Ray starts once for the module with 4 logical CPUs: 2 for the workers, 2 for Ray Data's read
tasks (with 2 CPUs and 2 workers Ray 2.60 deadlocked). Every test times out instead of hanging.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.checkpoints import load_tokenizer
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.core.types import Claim, Pair, Passage
from conflictscore_local.judge.ray_data import RayJudgeConfig, from_engine_row, generation_from_row
from conflictscore_local.pipeline.config import RunConfig
from conflictscore_local.pipeline.scoring import score_file

from ..support.rows import row_differences

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install '.[ray]')")
pytestmark = [pytest.mark.timeout(300), pytest.mark.slow]  # a local Ray instance: about a minute

DOCS = [
    "Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891.",
    "Some sources claim that Curie was born in Kraków.",
    "The Eiffel Tower was completed in 1889 for the World's Fair.",
    "Cats purr when they are content, and sometimes when they are stressed.",
    "",
]
CLAIMS = [
    "Curie was born in Warsaw.",
    "Curie was born in 1867.",
    "The tower was finished in 1889.",
    "Cats purr.",
    "Curie moved to Paris in 1891.",
]


@pytest.fixture(scope="module")
def local_ray() -> Any:
    ray.init(num_cpus=4, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def write_items(path: Path, n: int = 12) -> Path:
    rows = []
    for i in range(n):
        claims = [CLAIMS[(i + k) % len(CLAIMS)] for k in range(1 + i % 3)]
        docs = [{"id": f"d{j}", "text": DOCS[(i * 3 + j) % len(DOCS)]} for j in range(2 + i % 3)]
        rows.append(json.dumps({"id": f"item-{i}", "claims": claims, "documents": docs}))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return path


def run(items: Path, out: Path, judge: dict[str, Any]) -> dict[str, Any]:
    cfg = RunConfig.from_mapping({"judge": judge, "pruner": {"name": "none"}, "cache": {"enabled": False}})
    return score_file(items, out, config=cfg, summary_path=out.with_suffix(".json")).to_json()


@pytest.mark.parametrize("workers", [1, 2])
def test_cpu_workers_give_the_rows_of_one_process(local_ray: Any, tmp_path: Path, workers: int) -> None:
    """The default judge (the real shipped checkpoint, float32 as on every CPU) in-process, then
    on 1 and 2 Ray actors."""
    items = write_items(tmp_path / "items.jsonl")
    nli = {"name": "nli", "dtype": "float32"}
    one = run(items, tmp_path / "one.jsonl", nli)
    dist = run(items, tmp_path / "ray.jsonl", {"name": "ray", "judge": nli, "workers": workers, "batch_size": 8})
    rows = [[json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("one.jsonl", "ray.jsonl")]
    # every label, source, note, verdict and metric equal; probabilities up to the float noise
    # of batching other pairs together (as in one process with another batch_size)
    assert row_differences(rows[0], rows[1], prob_tol=1e-5) == []
    for key in ("n_items", "n_claims", "macro", "micro", "ci95", "pairs"):
        assert dist[key] == one[key], key
    assert one["pairs"]["judged"] > 0 and one["pairs"]["pruned"] > 0  # blank documents never reach a model
    backend = dist["config"]["backends"]["judge"]
    assert backend["name"] == "ray" and backend["judge"]["name"] == "nli"
    assert backend["resolved"]["started_local"] is False and backend["resolved"]["cluster_resources"]["CPU"] == 4.0
    stats = dist["stages"]["judge"]  # repeated texts went to the workers once per judge call
    assert stats["distinct_pairs"] < stats["pairs"] == one["stages"]["judge"]["pairs"]
    assert stats["batches"] >= 2  # batches of 8 pairs over the workers
    assert ray.is_initialized()  # a Ray instance the judge did not start is left running


@pytest.mark.slow
def test_the_openai_judge_on_two_workers_gives_the_rows_of_one_process(
    local_ray: Any, served_smollm2: Any, tmp_path: Path, logged: Any
) -> None:
    """The ``openai`` judge against a real server (``transformers serve``, which ignores
    logprobs), in-process and from 2 Ray workers: each worker's judge finds that out as the
    driver's did, so the rows and the spec are the same."""
    items = write_items(tmp_path / "items.jsonl", n=2)
    openai = {"name": "openai", "base_url": served_smollm2.url, "max_tokens": 3, "timeout_s": 120, "max_retries": 1}
    with logged.expect("answered without log-probabilities"):
        one = run(items, tmp_path / "one.jsonl", openai)
    with logged.expect("answered without log-probabilities"):  # the driver's probe
        dist = run(items, tmp_path / "ray.jsonl", {"name": "ray", "judge": openai, "workers": 2, "batch_size": 4})
    rows = [[json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("one.jsonl", "ray.jsonl")]
    assert row_differences(rows[0], rows[1]) == []
    assert dist["pairs"] == one["pairs"] and one["pairs"]["judged"] > 0
    spec = one["config"]["backends"]["judge"]["spec"]
    assert dist["config"]["backends"]["judge"]["spec"] == spec and spec["top_logprobs"] == 0
    assert dist["stages"]["judge"]["distinct_pairs"] == one["stages"]["judge"]["pairs"]  # judged on the workers


def test_spec_and_passage_budget_are_the_wrapped_judges(tiny_nli_dir: Path) -> None:
    inner = registry.build("judge", "nli", {"model": str(tiny_nli_dir)})
    wrapped = registry.build("judge", "ray", {"judge": {"name": "nli", "model": str(tiny_nli_dir)}, "workers": 3})
    assert wrapped.spec() == inner.spec()  # same cache keys as a single-process run
    count, budget = wrapped.passage_budget()
    assert (count("a few words here"), budget) == (
        inner.passage_budget()[0]("a few words here"),
        inner.passage_budget()[1],
    )


@pytest.mark.parametrize(
    "args,msg",
    [
        (
            {"workers": 2, "num_cpus": 2},
            "num_cpus=2 leaves no CPU for Ray Data's read tasks beside 2 workers of 1 CPU "
            "(they would wait for ever); give at least 3",
        ),
        ({"judge": {"model": "x"}}, "judge must name the judge to distribute"),
        ({"judge": {"name": "ray"}}, "the ray judge cannot distribute itself"),
        ({"judge": {"name": "nli", "batch": 3}}, "judge ray: judge 'nli': unknown argument 'batch'; allowed: model"),
        ({"judge": {"name": "nope"}}, "unknown judge 'nope'; allowed:"),
        ({"workers": 0}, "workers must be an integer in [1, 100000], got 0"),
    ],
)
def test_bad_arguments_are_refused_before_ray_starts(args: dict[str, Any], msg: str) -> None:
    with pytest.raises(ConfigError) as e:
        registry.build("judge", "ray", args)
    assert msg in str(e.value)
    assert RayJudgeConfig(workers=3, cpus_per_worker=0.5).local_cpus() == 4  # ceil(1.5) + 2 readers


# -- vllm through ray.data.llm ----------------------------------------------------------------

ANSWERS = {"warsaw": "SUPPORT", "1867": "CONTRADICT", "1889": "IRRELEVANT", "purr": "OFF", "1891": "FAIL"}


def fake_ray_llm(fake_vllm: Any, tok: Any) -> types.ModuleType:
    """``ray.data.llm`` as far as the judge uses it. The processor runs the judge's preprocess
    and postprocess as Ray Data maps, and in between answers each row as Ray's vLLM stage
    does (``vLLMOutputData``: ``generated_text``, ``logprobs`` as ``{token_id: {logprob, rank,
    decoded_token}}``), from the same recorded answers the in-process stand-in engine gives; a
    'FAIL' row comes back as Ray returns a failed row (``__inference_error__``, no postprocess)."""
    mod = types.ModuleType("ray.data.llm")
    mod.configs = []  # type: ignore[attr-defined]

    class vLLMEngineProcessorConfig:  # noqa: N801 - Ray's name
        def __init__(self, **kwargs: Any) -> None:
            self.kwargs = kwargs
            mod.configs.append(self)  # type: ignore[attr-defined]

    def engine(row: dict[str, Any]) -> dict[str, Any]:
        prompt = {"prompt_token_ids": list(row["tokenized_prompt"])}
        if answer_key(tok, prompt) == "FAIL":
            return {"idx": row["idx"], "__inference_error__": "engine died"}
        out = fake_vllm.LLM.answer(prompt, fake_vllm.SamplingParams(**row["sampling_params"])).outputs[0]
        steps = [
            {
                tid: {"logprob": lp.logprob, "rank": lp.rank, "decoded_token": lp.decoded_token}
                for tid, lp in step.items()
            }
            for step in out.logprobs
        ]
        return {"idx": row["idx"], "generated_text": out.text, "logprobs": steps, "num_generated_tokens": len(steps)}

    def build_processor(config: Any, preprocess: Any = None, postprocess: Any = None) -> Any:
        mod.built = (config, preprocess, postprocess)  # type: ignore[attr-defined]

        def run(ds: Any) -> Any:
            answered = [engine(r) for r in ds.map(preprocess).take_all()]
            ok = ray.data.from_items([r for r in answered if "__inference_error__" not in r]).map(postprocess)
            failed = [r for r in answered if "__inference_error__" in r]
            return ok.union(ray.data.from_items(failed)) if failed else ok

        return run

    mod.vLLMEngineProcessorConfig = vLLMEngineProcessorConfig  # type: ignore[attr-defined]
    mod.build_processor = build_processor  # type: ignore[attr-defined]
    return mod


def answer_key(tok: Any, prompt: dict[str, Any]) -> str:
    claim = tok.decode(prompt["prompt_token_ids"]).split("claim :")[-1]
    return next(v for k, v in ANSWERS.items() if k in claim)


@pytest.fixture
def answering(fake_vllm: Any, tiny_causal_lm_dir: Path) -> Any:
    tok = load_tokenizer(tiny_causal_lm_dir)

    def answer(prompt: Any, params: Any) -> Any:
        key = answer_key(tok, prompt)
        if key == "FAIL":  # the in-process engine has no failed rows; answer off-label instead
            key = "OFF"
        steps = [fake_vllm.RECORDED[key]][: params.max_tokens]
        return fake_vllm.output(steps[0][0][1], steps)

    fake_vllm.LLM.answer = staticmethod(answer)
    return tok


def test_vllm_judge_through_ray_data_llm(
    local_ray: Any, answering: Any, fake_vllm: Any, tiny_causal_lm_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    llm = fake_ray_llm(fake_vllm, answering)
    monkeypatch.setitem(sys.modules, "ray.data.llm", llm)
    monkeypatch.setattr(ray.data, "llm", llm, raising=False)
    doc = DOCS[0]
    claims = [
        f"Curie {c}." for c in ("was born in warsaw", "was born in 1867", "saw 1889", "liked to purr", "moved in 1891")
    ]
    pairs = [Pair(Claim("it", k, c), Passage("it", "d0", 0, doc)) for k, c in enumerate(claims)]
    pairs.append(Pair(Claim("it2", 0, claims[0]), Passage("it2", "d9", 0, doc)))  # a duplicate text: asked once
    wrapped = registry.build(
        "judge",
        "ray",
        {
            "judge": {"name": "vllm", "model": str(tiny_causal_lm_dir), "max_model_len": 512},
            "workers": 2,
            "batch_size": 4,
        },
    )
    got = wrapped.judge(pairs)
    single = registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), "max_model_len": 512}).judge(pairs)

    (cfg,) = llm.configs
    assert cfg.kwargs == {
        "model_source": str(tiny_causal_lm_dir),
        "concurrency": 2,
        "batch_size": 4,
        "engine_kwargs": {
            "tensor_parallel_size": 1,
            "max_model_len": 512,
            "gpu_memory_utilization": 0.9,
            "dtype": "auto",
            "enable_prefix_caching": True,
            "seed": 0,
        },
        "chat_template_stage": False,
        "tokenize_stage": False,
        "detokenize_stage": False,
        "should_continue_on_error": True,
        "placement_group_config": {"bundle_per_worker": {"CPU": 1.0}},
        "log_engine_metrics": False,
    }
    # what the engine was sent: the in-process generator's token ids and sampling parameters
    (sent,) = fake_vllm.LLM.instances[0].calls
    pre = llm.built[1]
    rows = wrapped.inner().generator().rows([[{"role": "user", "content": "x"}]])
    assert pre(rows[0])["sampling_params"] == {"max_tokens": 1, "temperature": 0.0, "seed": 0, "logprobs": 20}
    assert len(sent[0]) == 5  # five distinct prompts in-process too

    assert [j.label for j in got] == ["SUPPORT", "CONTRADICT", "IRRELEVANT", None, None, "SUPPORT"]
    for a, b in zip(got[:4] + got[5:], single[:4] + single[5:]):
        assert (a.label, a.probs, a.note, a.pair) == (b.label, b.probs, b.note, b.pair)
    assert got[4].note == "no answer: ray.data.llm: engine died" and got[4].pair is pairs[4]
    assert (
        wrapped.spec()
        == registry.build("judge", "vllm", {"model": str(tiny_causal_lm_dir), "max_model_len": 512}).spec()
    )
    assert wrapped.stats()["judge"]["generator"] == {"prompts": 5}


def test_engine_rows_to_generations() -> None:
    """Ray's output row → the judge's Generation: alternatives most probable first, one entry per text."""
    row = {
        "idx": 3,
        "generated_text": "<think>\n\n</think>\n\nSUPPORT",
        "logprobs": [
            {
                50: {"logprob": -0.04, "rank": 1, "decoded_token": "SUP"},
                7: {"logprob": -3.6, "rank": 2, "decoded_token": "CON"},
                8: {"logprob": -5.0, "rank": 3, "decoded_token": "SUP"},
                9: {"logprob": -6.0, "rank": 4, "decoded_token": None},
            }
        ],
    }
    out = from_engine_row(row)
    g = generation_from_row(out)
    assert out["idx"] == 3 and g.text == "SUPPORT"
    assert g.top_logprobs == ({"SUP": -0.04, "CON": -3.6, "9": -6.0},)
    as_pairs = from_engine_row({**row, "logprobs": [list(row["logprobs"][0].items())]})
    assert generation_from_row(as_pairs) == g
    assert generation_from_row({"idx": 1, "__inference_error__": "OOM"}).error == "ray.data.llm: OOM"
    assert (
        generation_from_row(from_engine_row({"idx": 1, "generated_text": "IRRELEVANT", "logprobs": None})).top_logprobs
        is None
    )
