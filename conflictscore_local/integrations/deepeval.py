"""ConflictScore as a DeepEval metric (``pip install 'conflictscore-local[deepeval]'``).

    from deepeval import evaluate
    from deepeval.test_case import LLMTestCase
    from conflictscore_local.integrations.deepeval import ConflictScoreMetric

    case = LLMTestCase(input="Where was Marie Curie born?", actual_output="...",
                       retrieval_context=["Maria Skłodowska-Curie was born in Warsaw ...", "..."])
    evaluate([case], [ConflictScoreMetric(threshold=0.5)])

Each ``retrieval_context`` entry is judged as its own document (ids ``d0``, ``d1``, … in order, as on the command line,
or the ``source`` of a ``RetrievedContextData``),
so a claim backed by one passage and contradicted by another is *conflicted* rather than
"faithful". ``score`` is CS-C, the share of conflicted claims (lower is better): ``success``
when CS-C ≤ ``threshold``. ``reason`` lists the conflicted claims with their supporting and
contradicting contexts; ``score_breakdown`` holds CS-R, cs_r_evidenced and the support rate.
A response without any claim has no CS-C: the metric reports an ``error`` instead of a score.
Test-case ``metadata`` ``claims`` / ``labels`` skip decomposition / judging as in the JSONL input.
No LLM, no API key: DeepEval's ``evaluate`` runs test cases concurrently through ``a_measure``,
and the concurrent cases are scored together in one engine step.
"""

from __future__ import annotations

from typing import Any, Optional

from ..core.types import Item, ItemResult
from ..pipeline.engine import Engine
from ._common import batcher_for, explain, item_from, metric_values, missing_extra, shared_engine

try:
    from deepeval.metrics import BaseMetric
    from deepeval.metrics.utils import check_llm_test_case_params
    from deepeval.test_case import LLMTestCase, SingleTurnParams
    from deepeval.test_case.llm_test_case import RetrievedContextData
except ImportError as e:
    raise ImportError(missing_extra("deepeval", "deepeval", e)) from e

__all__ = ["ConflictScoreMetric"]


class ConflictScoreMetric(BaseMetric):
    """CS-C of ``actual_output`` against the ``retrieval_context`` passages, each judged apart.

    ``config`` (a run-configuration TOML path), ``decomposer``, ``pruner`` and ``judge`` (a backend
    name or ``{"name": ..., **args}``) choose the pipeline; ``engine`` passes one directly. Metrics
    with the same settings share one engine per process, so models load once.
    """

    _required_params = [SingleTurnParams.ACTUAL_OUTPUT, SingleTurnParams.RETRIEVAL_CONTEXT]

    def __init__(
        self,
        threshold: float = 0.5,
        config: Optional[str] = None,
        decomposer: Optional[str | dict[str, Any]] = None,
        pruner: Optional[str | dict[str, Any]] = None,
        judge: Optional[str | dict[str, Any]] = None,
        engine: Optional[Engine] = None,
        async_mode: bool = True,
    ):
        # DeepEval copies a metric per test case by calling the constructor with the attributes
        # named like its parameters, so each one is kept under its own name.
        self.threshold = threshold
        self.config, self.decomposer, self.pruner, self.judge = config, decomposer, pruner, judge
        self.engine = shared_engine(engine, config=config, decomposer=decomposer, pruner=pruner, judge=judge)
        self.async_mode = async_mode
        self.include_reason = True
        self.evaluation_model = "conflictscore-local"

    def _item(self, test_case: LLMTestCase) -> Item:
        check_llm_test_case_params(test_case, self._required_params, None, None, self)
        name = test_case.name
        meta = test_case.metadata or {}
        return item_from(
            "test_case" if name is None else str(name),
            test_case.actual_output,
            _documents(test_case.retrieval_context),
            question=test_case.input if isinstance(test_case.input, str) else None,
            claims=meta.get("claims"),
            labels=meta.get("labels"),
            where="deepeval test case" + (f" {name!r}" if name else ""),
        )

    def _record(self, result: ItemResult) -> Optional[float]:
        values = metric_values(result)
        self.score_breakdown = values
        self.reason = explain(result)
        self.score = values["cs_c"]
        self.error = None if self.score is not None else "the response has no claims: CS-C is undefined"
        self.success = self.is_successful()
        return self.score

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> Optional[float]:
        item = self._item(test_case)
        return self._record(batcher_for(self.engine).score_now([item])[0])

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> Optional[float]:
        item = self._item(test_case)
        return self._record(await batcher_for(self.engine).score(item))

    def is_successful(self) -> bool:
        if self.error is not None or self.score is None:
            self.success = False
        else:
            self.success = self.score <= self.threshold
        return self.success

    @property
    def __name__(self) -> str:
        return "ConflictScore (CS-C)"


def _documents(contexts: list[Any]) -> list[Any]:
    """Plain strings stay strings (numbered ids); a ``RetrievedContextData`` keeps its ``source`` as
    the document id (``source#2``, ``source#3``, … when several passages share a source)."""
    out: list[Any] = []
    seen: dict[str, int] = {}
    for c in contexts:
        if isinstance(c, RetrievedContextData):
            n = seen[c.source] = seen.get(c.source, 0) + 1
            out.append({"id": c.source if n == 1 else f"{c.source}#{n}", "text": c.context})
        else:
            out.append(c)
    return out
