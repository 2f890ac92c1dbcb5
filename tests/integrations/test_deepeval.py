"""The DeepEval metric, run by DeepEval's own ``evaluate()`` and ``assert_test``.

Runs in .venv-deepeval (``make test-integrations``); skips where deepeval is not installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("deepeval", reason="deepeval is tested in its own virtualenv: make test-integrations")

from deepeval import assert_test, evaluate  # noqa: E402
from deepeval.errors import MissingTestCaseParamsError  # noqa: E402
from deepeval.evaluate.configs import DisplayConfig  # noqa: E402
from deepeval.test_case import LLMTestCase  # noqa: E402
from deepeval.test_case.llm_test_case import RetrievedContextData  # noqa: E402

from conflictscore_local import read_items  # noqa: E402
from conflictscore_local.integrations import explain, shared_engine  # noqa: E402
from conflictscore_local.integrations._common import batcher_for  # noqa: E402
from conflictscore_local.integrations.deepeval import ConflictScoreMetric  # noqa: E402

from .conftest import EXAMPLES, LABELED_EXPLANATION, LABELED_VALUES, known, known_explanation  # noqa: E402

QUIET = DisplayConfig(print_results=False, show_indicator=False)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """DeepEval writes its run cache under ./.deepeval; no API key is needed or offered."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def labeled_case(row: dict[str, Any]) -> LLMTestCase:
    return LLMTestCase(
        name=row["id"],
        input=row["question"],
        actual_output=row["response"],
        retrieval_context=[RetrievedContextData(source=d["id"], context=d["text"]) for d in row["documents"]],
        metadata={"claims": row["claims"], "labels": row["labels"]},
    )


def test_evaluate_scores_the_bundled_example_in_one_engine_step(example_rows: list[dict[str, Any]]) -> None:
    engine = shared_engine()
    results, _ = engine.score_all(list(read_items(EXAMPLES / "items.jsonl")))
    batcher = batcher_for(engine)
    before = len(batcher.batch_sizes)
    cases = [
        LLMTestCase(
            name=r["id"],
            input=r["question"],
            actual_output=r["response"],
            retrieval_context=[RetrievedContextData(source=d["id"], context=d["text"]) for d in r["documents"]],
        )
        for r in example_rows
    ]

    out = evaluate(cases, [ConflictScoreMetric(threshold=0.5)], display_config=QUIET)

    assert batcher.batch_sizes[before:] == [3]  # DeepEval's concurrent a_measure calls, one engine step
    got = {t.name: t.metrics_data[0] for t in out.test_results}
    for res in results:
        md = got[res.item_id]
        assert md.score == pytest.approx(res.metrics.cs_c)
        assert md.success is (res.metrics.cs_c <= 0.5)
        assert md.error is None
        assert md.reason == explain(res)  # the sources are the document ids


def test_assert_test_with_given_labels(labeled_row: dict[str, Any]) -> None:
    case = labeled_case(labeled_row)
    assert_test(case, [ConflictScoreMetric(threshold=0.5, pruner="none")])  # CS-C 1/3 ≤ 0.5: passes
    with pytest.raises(AssertionError, match=r"ConflictScore \(CS-C\) \(score: 0\.33.*threshold: 0\.2"):
        assert_test(case, [ConflictScoreMetric(threshold=0.2, pruner="none")])


def test_measure_reports_score_reason_breakdown_and_success(labeled_row: dict[str, Any]) -> None:
    metric = ConflictScoreMetric(threshold=0.3, pruner="none")
    assert metric.measure(labeled_case(labeled_row)) == pytest.approx(1 / 3)
    assert known(metric.score_breakdown) == pytest.approx(LABELED_VALUES)
    assert known_explanation(metric.reason) == LABELED_EXPLANATION
    assert metric.success is False and metric.is_successful() is False  # 1/3 > 0.3: too many conflicts
    at = ConflictScoreMetric(threshold=1 / 3, pruner="none")
    at.measure(labeled_case(labeled_row))
    assert at.score == 1 / 3 and at.success is True  # CS-C equal to the threshold passes (≤)
    assert metric.engine.built() == ()  # given labels: no model loaded


def test_a_response_without_claims_is_an_error_not_a_score(labeled_row: dict[str, Any]) -> None:
    case = labeled_case(labeled_row)
    case.metadata = {"claims": [], "labels": []}
    metric = ConflictScoreMetric(pruner="none")
    assert metric.measure(case) is None
    assert metric.error == "the response has no claims: CS-C is undefined"
    assert metric.success is False


def test_plain_string_contexts_are_numbered() -> None:
    case = LLMTestCase(
        input="Who won?",
        actual_output="Candidate A won.",
        retrieval_context=["Candidate A won.", "Candidate B won."],
        metadata={"claims": ["Candidate A won."], "labels": [["SUPPORT", "CONTRADICT"]]},
    )
    metric = ConflictScoreMetric(pruner="none")
    assert metric.measure(case) == 1.0
    assert metric.reason.endswith("conflicted: 'Candidate A won.' supported by [d0]; contradicted by [d1]")


def test_a_test_case_without_retrieval_context_is_refused() -> None:
    case = LLMTestCase(input="Q?", actual_output="A.")
    with pytest.raises(
        MissingTestCaseParamsError, match="'retrieval_context' cannot be None for the 'ConflictScore \\(CS-C\\)' metric"
    ):
        ConflictScoreMetric(pruner="none").measure(case)
