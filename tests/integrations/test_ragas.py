"""The RAGAS metrics, run by RAGAS's own entry points: ``evaluate()`` and ``@experiment`` over a ``Dataset``.

Runs in .venv-ragas (``make test-integrations``); skips where ragas is not installed.
"""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ragas", reason="ragas is tested in its own virtualenv: make test-integrations")

from ragas import Dataset, EvaluationDataset, evaluate, experiment  # noqa: E402

from conflictscore_local import ConfigError, InputError, read_items  # noqa: E402
from conflictscore_local.integrations import shared_engine  # noqa: E402
from conflictscore_local.integrations._common import batcher_for  # noqa: E402
from conflictscore_local.integrations.ragas import ConflictScoreMetric, ConflictScoreSingleTurnMetric  # noqa: E402

from .conftest import EXAMPLES, LABELED_EXPLANATION, LABELED_VALUES, known_explanation  # noqa: E402


@pytest.fixture(autouse=True)
def _no_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def ragas_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "user_input": r["question"],
            "response": r["response"],
            "retrieved_contexts": [d["text"] for d in r["documents"]],
            "retrieved_context_ids": [d["id"] for d in r["documents"]],
        }
        for r in rows
    ]


@pytest.fixture(scope="module")
def direct() -> tuple[list[Any], Any]:
    """The bundled example scored by the engine itself, with the embedded defaults."""
    return shared_engine().score_all(list(read_items(EXAMPLES / "items.jsonl")))


def same(got: float, want: float | None) -> bool:
    return math.isnan(got) if want is None else got == pytest.approx(want)


def test_evaluate_scores_the_bundled_example_in_one_engine_step(
    example_rows: list[dict[str, Any]], direct: Any
) -> None:
    results, report = direct
    batcher = batcher_for(shared_engine())
    before = len(batcher.batch_sizes)
    cs_c, cs_r = ConflictScoreSingleTurnMetric(), ConflictScoreSingleTurnMetric(name="cs_r", key="cs_r")

    out = evaluate(
        EvaluationDataset.from_list(ragas_rows(example_rows)),
        metrics=[cs_c, cs_r],
        show_progress=False,
        raise_exceptions=True,
    )

    # both metrics' rows were gathered into one step, and identical rows scored once
    assert batcher.batch_sizes[before:] == [3]
    assert all(same(row["conflictscore"], res.metrics.cs_c) for row, res in zip(out.scores, results))
    assert all(same(row["cs_r"], res.metrics.cs_r) for row, res in zip(out.scores, results))
    # RAGAS's mean skips NaN: ConflictScore's macro averages
    assert out["conflictscore"] == [r.metrics.cs_c for r in results]
    assert repr(out) == f"{{'conflictscore': {report.macro['cs_c']:.4f}, 'cs_r': {report.macro['cs_r']:.4f}}}"


def test_evaluate_needs_only_response_and_retrieved_contexts(example_rows: list[dict[str, Any]], direct: Any) -> None:
    results, _ = direct
    rows = [
        {"response": r["response"], "retrieved_contexts": r["retrieved_contexts"]} for r in ragas_rows(example_rows)
    ]
    out = evaluate(
        EvaluationDataset.from_list(rows),
        metrics=[ConflictScoreSingleTurnMetric(key="support_rate")],
        show_progress=False,
        raise_exceptions=True,
    )
    assert out["conflictscore"] == [res.metrics.support_rate for res in results]


def test_batch_score_with_given_labels_gives_the_hand_computed_value_and_reason(labeled_row: dict[str, Any]) -> None:
    r = labeled_row
    metric = ConflictScoreMetric(pruner="none")  # given labels: no model is loaded
    row = {
        "response": r["response"],
        "retrieved_contexts": [d["text"] for d in r["documents"]],
        "retrieved_context_ids": [d["id"] for d in r["documents"]],
        "claims": r["claims"],
        "labels": r["labels"],
    }
    (res,) = metric.batch_score([row])
    assert res.value == pytest.approx(LABELED_VALUES["cs_c"])
    assert known_explanation(res.reason) == LABELED_EXPLANATION
    (res,) = ConflictScoreMetric(key="cs_r_evidenced", pruner="none").batch_score([row])
    assert res.value == pytest.approx(LABELED_VALUES["cs_r_evidenced"])
    assert metric.engine.built() == ()


def test_ascore_in_an_experiment_over_a_dataset(
    example_rows: list[dict[str, Any]], direct: Any, tmp_path: Path
) -> None:
    results, _ = direct
    metric = ConflictScoreMetric()
    batcher = batcher_for(metric.engine)
    before = len(batcher.batch_sizes)
    dataset = Dataset(name="bundled", backend="local/jsonl", root_dir=str(tmp_path))
    for i, row in enumerate(ragas_rows(example_rows)):
        dataset.append({"id": example_rows[i]["id"], **row})

    @experiment()
    async def conflict_experiment(row: dict[str, Any]) -> dict[str, Any]:
        res = await metric.ascore(
            response=row["response"],
            retrieved_contexts=row["retrieved_contexts"],
            user_input=row["user_input"],
            retrieved_context_ids=row["retrieved_context_ids"],
        )
        return {"id": row["id"], "cs_c": res.value, "reason": res.reason}

    exp = asyncio.run(conflict_experiment.arun(dataset, name="conflicts"))

    assert batcher.batch_sizes[before:] == [3]
    got = {e["id"]: e for e in exp}
    assert {res.item_id: got[res.item_id]["cs_c"] for res in results} == {
        res.item_id: res.metrics.cs_c for res in results
    }
    assert "supported by [wiki]; contradicted by [blog]" in got["curie"]["reason"]
    assert (tmp_path / "experiments" / "conflicts.jsonl").is_file()


def test_bad_settings_and_rows_are_refused_with_their_place() -> None:
    with pytest.raises(
        ConfigError, match="unknown key 'faithfulness'; allowed: cs_c, cs_r, cs_r_evidenced, support_rate"
    ):
        ConflictScoreMetric(key="faithfulness")
    with pytest.raises(ConfigError, match="unknown key 'cs-c'"):
        ConflictScoreSingleTurnMetric(key="cs-c")
    metric = ConflictScoreMetric(pruner="none")
    with pytest.raises(InputError, match=r"^ragas row 1: field 'retrieved_contexts': missing$"):
        metric.batch_score([{"response": "a", "retrieved_contexts": ["b"]}, {"response": "a"}])
    with pytest.raises(
        InputError, match=r"^ragas row 0: unknown column 'contexts'; allowed: response, retrieved_contexts, "
    ):
        metric.batch_score([{"response": "a", "contexts": ["b"]}])
    with pytest.raises(InputError, match=r"^ragas row 0: field 'retrieved_context_ids': 1 ids for 2 contexts$"):
        metric.batch_score([{"response": "a", "retrieved_contexts": ["b", "c"], "retrieved_context_ids": ["x"]}])
