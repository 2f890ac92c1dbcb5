"""ConflictScore as a RAGAS metric (``pip install 'conflictscore-local[ragas]'``).

Two entry points over one scoring path:

- :class:`ConflictScoreMetric`, RAGAS's current metric API (``ragas.metrics.collections.BaseMetric``):
  ``await metric.ascore(response=..., retrieved_contexts=[...])`` returns a ``MetricResult`` whose
  ``value`` is CS-C (or ``key``) and whose ``reason`` lists the conflicted claims with their
  supporting and contradicting contexts; ``batch_score`` / ``abatch_score`` score a whole dataset
  in one engine step, and concurrent ``ascore`` calls (a ``@experiment`` over a ``Dataset``) are
  gathered into one step too.
- :class:`ConflictScoreSingleTurnMetric` for ``ragas.evaluate()`` (deprecated in RAGAS 0.4 but
  still the common harness), which takes only ``SingleTurnMetric`` objects and keeps only the value.

Both read ``response`` and ``retrieved_contexts`` (each context judged as its own document, id
``retrieved_context_ids[j]`` when given, else ``d0``, ``d1``, …) and ``user_input`` as the
question. Undefined values (no claims; CS-R with no conflicted claim) are NaN, which RAGAS's means
skip. No LLM and no embeddings are requested from RAGAS, so no API key is needed.
"""

from __future__ import annotations

import asyncio
import math
import typing as t
from dataclasses import dataclass, field

from ..core.errors import ConfigError, InputError
from ..core.metrics import METRICS
from ..core.types import Item, ItemResult
from ..pipeline.engine import Engine
from ._common import batcher_for, explain, item_from, metric_values, missing_extra, shared_engine

try:
    from ragas.metrics.base import MetricType, SingleTurnMetric
    from ragas.metrics.collections import BaseMetric
    from ragas.metrics.result import MetricResult
except ImportError as e:
    raise ImportError(missing_extra("ragas", "ragas", e)) from e

if t.TYPE_CHECKING:
    from langchain_core.callbacks import Callbacks
    from ragas.dataset_schema import SingleTurnSample
    from ragas.run_config import RunConfig as RagasRunConfig

__all__ = ["ConflictScoreMetric", "ConflictScoreSingleTurnMetric"]


def _check_key(key: str) -> str:
    if key not in METRICS:
        raise ConfigError(f"ConflictScore RAGAS metric: unknown key {key!r}; allowed: {', '.join(METRICS)}")
    return key


def _item(
    where: str,
    response: t.Any,
    retrieved_contexts: t.Any,
    user_input: str | None = None,
    retrieved_context_ids: t.Sequence[str | int] | None = None,
    claims: t.Sequence[str] | None = None,
    labels: t.Sequence[t.Sequence[str]] | None = None,
) -> Item:
    documents = retrieved_contexts
    if retrieved_context_ids is not None and isinstance(retrieved_contexts, list):
        if len(retrieved_context_ids) != len(retrieved_contexts):
            raise InputError(
                f"{len(retrieved_context_ids)} ids for {len(retrieved_contexts)} contexts",
                path=where,
                field="retrieved_context_ids",
            )
        documents = [{"id": str(i), "text": c} for i, c in zip(retrieved_context_ids, retrieved_contexts)]
    return item_from("row", response, documents, question=user_input, claims=claims, labels=labels, where=where)


_COLUMNS = ("response", "retrieved_contexts", "user_input", "retrieved_context_ids", "claims", "labels")


def _row_item(where: str, row: t.Any) -> Item:
    if not isinstance(row, t.Mapping):
        raise InputError(f"expected a mapping of column names to values, got {type(row).__name__}", path=where)
    unknown = sorted(set(row) - set(_COLUMNS))
    if unknown:
        raise InputError(f"unknown column {unknown[0]!r}; allowed: {', '.join(_COLUMNS)}", path=where)
    for required in _COLUMNS[:2]:
        if row.get(required) is None:
            raise InputError("missing", path=where, field=required)
    return _item(where, **row)


class ConflictScoreMetric(BaseMetric):
    """ConflictScore on RAGAS's current metric API: ``ascore`` → ``MetricResult(value, reason)``.

    ``key`` picks the value: ``cs_c`` (default), ``cs_r``, ``cs_r_evidenced``, ``support_rate``, or with
    documents that carry reliability ``cs_c_weighted`` / ``cs_r_weighted`` (NaN for an item without).
    ``config`` (a run-configuration TOML path), ``decomposer``, ``pruner`` and ``judge`` (a backend
    name or ``{"name": ..., **args}``) choose the pipeline, or ``engine`` passes one; metrics with
    the same settings share one engine per process.
    """

    def __init__(
        self,
        name: str = "conflictscore",
        key: str = "cs_c",
        config: str | None = None,
        decomposer: str | dict[str, t.Any] | None = None,
        pruner: str | dict[str, t.Any] | None = None,
        judge: str | dict[str, t.Any] | None = None,
        engine: Engine | None = None,
    ):
        self.key = _check_key(key)
        self.engine = shared_engine(engine, config=config, decomposer=decomposer, pruner=pruner, judge=judge)
        super().__init__(name=name, allowed_values=(0.0, 1.0))

    def _result(self, result: ItemResult) -> MetricResult:
        value = metric_values(result, undefined=math.nan).get(self.key, math.nan)
        return MetricResult(value=value, reason=explain(result))

    async def ascore(
        self,
        response: str,
        retrieved_contexts: list[str],
        user_input: str | None = None,
        retrieved_context_ids: list[str | int] | None = None,
        claims: list[str] | None = None,
        labels: list[list[str]] | None = None,
    ) -> MetricResult:
        item = _item("ragas sample", response, retrieved_contexts, user_input, retrieved_context_ids, claims, labels)
        return self._result(await batcher_for(self.engine).score(item))

    async def abatch_score(self, inputs: list[dict[str, t.Any]]) -> list[MetricResult]:
        """Score every row in one engine step (``batch_score`` runs this too)."""
        items = [_row_item(f"ragas row {i}", row) for i, row in enumerate(inputs)]
        results = await asyncio.to_thread(batcher_for(self.engine).score_now, items)
        return [self._result(r) for r in results]


@dataclass
class ConflictScoreSingleTurnMetric(SingleTurnMetric):
    """ConflictScore for ``ragas.evaluate()``: the value of ``key`` per sample (NaN where undefined).

    Samples that ``evaluate`` scores concurrently are gathered into one engine step.
    """

    name: str = "conflictscore"
    key: str = "cs_c"
    config: str | None = None
    decomposer: str | dict[str, t.Any] | None = None
    pruner: str | dict[str, t.Any] | None = None
    judge: str | dict[str, t.Any] | None = None
    engine: Engine | None = field(default=None, repr=False)
    _required_columns: dict[MetricType, set[str]] = field(
        default_factory=lambda: {
            MetricType.SINGLE_TURN: {
                "response",
                "retrieved_contexts",
                "user_input:optional",
                "retrieved_context_ids:optional",
            }
        }
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_key(self.key)
        self.engine = shared_engine(
            self.engine, config=self.config, decomposer=self.decomposer, pruner=self.pruner, judge=self.judge
        )

    def init(self, run_config: "RagasRunConfig") -> None:
        """Nothing to set up: the engine loads its models on first use."""

    async def _single_turn_ascore(self, sample: "SingleTurnSample", callbacks: "Callbacks") -> float:
        item = _item(
            "ragas sample",
            sample.response,
            sample.retrieved_contexts,
            sample.user_input,
            getattr(sample, "retrieved_context_ids", None),
        )
        result = await batcher_for(self.engine).score(item)  # type: ignore[arg-type]  # __post_init__ set the engine
        return float(metric_values(result, undefined=math.nan).get(self.key, math.nan))  # type: ignore[arg-type]  # undefined=nan: no None
