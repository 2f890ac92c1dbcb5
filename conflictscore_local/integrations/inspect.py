"""ConflictScore as an inspect_ai scorer (``pip install 'conflictscore-local[inspect]'``).

    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.solver import generate
    from conflictscore_local.integrations.inspect import conflictscore

    sample = Sample(input="Where was Marie Curie born?",
                    metadata={"documents": [{"id": "wiki", "text": "..."}, {"id": "blog", "text": "..."}]})
    eval(Task(dataset=[sample], solver=generate(), scorer=conflictscore()), model="...")

The scorer judges the model's output against the sample's documents, each kept apart: a list of
strings or ``{"id", "text"}`` objects, read from the task state's store under ``documents_key``
(where a retrieval solver puts what it retrieved) or else from the sample metadata. Metadata
``claims`` / ``labels`` skip decomposition / judging as in the JSONL input. The score's value holds
every metric of the table, ``cs_c``, ``cs_r``, ``cs_r_evidenced`` and ``support_rate`` (NaN where undefined, which
inspect's metrics skip, so the task's means equal ConflictScore's macro averages); its explanation lists the
conflicted claims with their supporting and contradicting documents; its metadata holds every
claim's verdict as ``conflictscore score`` writes it.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.errors import InputError
from ..core.metrics import standard_keys
from ..pipeline.engine import Engine
from ._common import batcher_for, explain, item_from, metric_values, missing_extra, shared_engine

try:
    from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
    from inspect_ai.solver import TaskState
except ImportError as e:
    raise ImportError(missing_extra("inspect_ai", "inspect", e)) from e

__all__ = ["conflictscore"]


@scorer(metrics={k: [mean(), stderr()] if k == "cs_c" else [mean()] for k in standard_keys()})
def conflictscore(
    documents_key: str = "documents",
    config: str | None = None,
    decomposer: str | dict[str, Any] | None = None,
    pruner: str | dict[str, Any] | None = None,
    judge: str | dict[str, Any] | None = None,
    engine: Engine | None = None,
) -> Scorer:
    """Score each sample's output with ConflictScore.

    Args:
      documents_key: store / metadata key holding the sample's documents.
      config: a run-configuration TOML file (as ``conflictscore score --config``).
      decomposer: backend name or ``{"name": ..., **args}``, overriding the configuration.
      pruner: as ``decomposer``.
      judge: as ``decomposer``, e.g. ``{"name": "nli", "model": "/models/deberta-v3-large-mnli"}``.
      engine: an :class:`Engine` to use instead (then the other settings are ignored).
    """
    batcher = batcher_for(shared_engine(engine, config=config, decomposer=decomposer, pruner=pruner, judge=judge))

    async def score(state: TaskState, target: Target) -> Score:
        where = f"inspect sample {state.sample_id!r}"
        documents = state.store.get(documents_key)
        if documents is None:
            documents = state.metadata.get(documents_key)
        if documents is None:
            raise InputError(
                "missing: put the sample's documents in its metadata or, from a retrieval solver, "
                f"in state.store under {documents_key!r}",
                path=where,
                field=documents_key,
            )
        item = item_from(
            str(state.sample_id),
            state.output.completion,
            documents,
            question=state.input_text,
            claims=state.metadata.get("claims"),
            labels=state.metadata.get("labels"),
            where=where,
        )
        result = await batcher.score(item)
        return Score(
            value=metric_values(result, undefined=math.nan),
            explanation=explain(result),
            metadata=result.to_json(),
        )

    return score
