"""The inspect_ai scorer, run by inspect's own ``eval()`` with the local ``mockllm/model``.

Runs in .venv-inspect (``make test-integrations``); skips where inspect_ai is not installed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("inspect_ai", reason="inspect_ai is tested in its own virtualenv: make test-integrations")

from inspect_ai import Task, eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage, get_model  # noqa: E402
from inspect_ai.solver import Generate, TaskState, generate, solver  # noqa: E402

from conflictscore_local import Engine, read_items  # noqa: E402
from conflictscore_local.integrations import shared_engine  # noqa: E402
from conflictscore_local.integrations._common import batcher_for  # noqa: E402
from conflictscore_local.integrations.inspect import conflictscore  # noqa: E402

from .conftest import EXAMPLES, LABELED_EXPLANATION, LABELED_VALUES, known, known_explanation  # noqa: E402

KEYS = ("cs_c", "cs_r", "cs_r_evidenced", "support_rate")


def answering(responses: dict[str, str]) -> Any:
    """mockllm/model answering each question with the given response (usage set, so no tokenizer download)."""

    def output(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm", content=responses[messages[-1].text])
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=output)


def run(task: Task, responses: dict[str, str], tmp_path: Path) -> Any:
    (log,) = eval(task, model=answering(responses), log_dir=str(tmp_path / "logs"), display="none")
    return log


def task_means(log: Any) -> dict[str, float]:
    return {s.name: s.metrics["mean"].value for s in log.results.scores}


def test_eval_with_given_labels_gives_the_hand_computed_values(labeled_row: dict[str, Any], tmp_path: Path) -> None:
    r = labeled_row
    sample = Sample(
        id=r["id"],
        input=r["question"],
        metadata={"documents": r["documents"], "claims": r["claims"], "labels": r["labels"]},
    )
    engine = Engine()  # its own engine, to see that it loads no model
    log = run(
        Task(dataset=[sample], solver=generate(), scorer=conflictscore(engine=engine)),
        {r["question"]: r["response"]},
        tmp_path,
    )

    assert log.status == "success", log.error
    score = log.samples[0].scores["conflictscore"]
    assert known(score.value) == pytest.approx(LABELED_VALUES)
    assert known_explanation(score.explanation) == LABELED_EXPLANATION
    assert score.metadata["claims"][0]["support"] == ["d1"] and score.metadata["claims"][0]["contradict"] == ["d2"]
    assert known(task_means(log)) == pytest.approx(LABELED_VALUES)
    assert engine.built() == ()  # given labels: no backend built, no model loaded


def test_eval_scores_the_bundled_example_like_the_engine_in_one_step(
    example_rows: list[dict[str, Any]], tmp_path: Path
) -> None:
    engine = shared_engine()  # the embedded defaults: spaCy claims, MiniLM pruner, the default judge
    direct, report = engine.score_all(list(read_items(EXAMPLES / "items.jsonl")))
    batcher = batcher_for(engine)
    before = len(batcher.batch_sizes)

    samples = [Sample(id=r["id"], input=r["question"], metadata={"documents": r["documents"]}) for r in example_rows]
    log = run(
        Task(dataset=samples, solver=generate(), scorer=conflictscore()),
        {r["question"]: r["response"] for r in example_rows},
        tmp_path,
    )

    assert log.status == "success", log.error
    assert batcher.batch_sizes[before:] == [3]  # the three samples went through one engine step
    by_id = {s.id: s.scores["conflictscore"] for s in log.samples}
    for res in direct:
        got = by_id[res.item_id]
        for k in KEYS:
            want = getattr(res.metrics, k)
            assert math.isnan(got.value[k]) if want is None else got.value[k] == pytest.approx(want), (res.item_id, k)
        # the sample log carries each claim's verdict as `conflictscore score` writes it
        verdict = ("text", "span", "support", "contradict", "irrelevant", "conflicted", "ratio")
        assert [{k: c[k] for k in verdict} for c in got.metadata["claims"]] == [
            {k: c[k] for k in verdict} for c in res.to_json()["claims"]
        ]
    # inspect's means skip the NaN of undefined values: they are ConflictScore's macro averages
    assert task_means(log) == pytest.approx(dict(report.macro))
    curie = by_id["curie"]
    assert (
        "conflicted: 'Marie Curie was born in Warsaw in 1867.' supported by [wiki]; contradicted by [blog]"
        in curie.explanation
    )


@solver
def retrieve(corpus: dict[str, list[str]]) -> Any:
    """A stand-in retrieval step: puts the question's passages in the store, as a RAG solver would."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.store.set("documents", corpus[state.input_text])
        return await generate(state)

    return solve


def test_documents_from_the_retrieval_step_in_the_store(tmp_path: Path) -> None:
    q = "Who won?"
    corpus = {q: ["Candidate A won with 52 percent.", "Candidate B was declared the winner."]}
    sample = Sample(id="s1", input=q, metadata={"claims": ["Candidate A won."], "labels": [["SUPPORT", "CONTRADICT"]]})
    log = run(
        Task(dataset=[sample], solver=retrieve(corpus), scorer=conflictscore()), {q: "Candidate A won."}, tmp_path
    )

    assert log.status == "success", log.error
    score = log.samples[0].scores["conflictscore"]
    assert score.value["cs_c"] == 1.0 and score.value["cs_r"] == 0.5
    assert score.explanation.endswith("conflicted: 'Candidate A won.' supported by [d0]; contradicted by [d1]")


def test_a_sample_without_documents_fails_naming_the_sample_and_the_key(tmp_path: Path) -> None:
    sample = Sample(id="nodocs", input="Q?")
    log = run(Task(dataset=[sample], solver=generate(), scorer=conflictscore()), {"Q?": "A."}, tmp_path)
    assert log.status == "error"
    assert (
        "inspect sample 'nodocs': field 'documents': missing: put the sample's documents in its metadata"
        in log.error.message
    )
