"""What the harness integrations share, free of any framework import.

- :func:`shared_engine`: one :class:`Engine` per process and configuration, so models load once
  however many scorer or metric objects a harness creates.
- :func:`item_from`: a harness row (response, contexts) → a validated :class:`Item`.
- :class:`Batcher`: harnesses score samples as concurrent coroutines; the batcher gathers the
  items submitted together and scores them in one engine step (one batched judge call), in a
  worker thread so the event loop keeps running.
- :func:`metric_values` and :func:`explain`: the numbers and the text every integration reports.
"""

from __future__ import annotations

import asyncio
import json
import threading
import weakref
from dataclasses import dataclass, field, replace
from typing import Any, Awaitable, Callable, Mapping, Sequence

from ..core.errors import InputError
from ..core.metrics import METRICS, shown_keys
from ..core.types import Item, ItemResult
from ..formats.inputs import parse_item
from ..pipeline.config import RunConfig, load_config
from ..pipeline.engine import Engine, StageArg

_ENGINES: dict[str, Engine] = {}
_ENGINES_LOCK = threading.Lock()


def missing_extra(framework: str, extra: str, error: ImportError) -> str:
    """The message for an integration whose framework is missing or does not import."""
    return (
        f"conflictscore_local.integrations.{extra} could not import {framework} ({error}); install it with "
        f"pip install 'conflictscore-local[{extra}]', in its own virtualenv (the frameworks' pins clash)"
    )


def shared_engine(
    engine: Engine | None = None,
    *,
    config: RunConfig | str | None = None,
    decomposer: StageArg | None = None,
    pruner: StageArg | None = None,
    judge: StageArg | None = None,
) -> Engine:
    """The engine an integration scores with: ``engine`` itself when given, else the process-wide
    engine for this configuration (``config``: a :class:`RunConfig` or a TOML path; stages as
    :class:`Engine` takes them), built on first use. Its models load once, on first score."""
    if engine is not None:
        return engine
    cfg = load_config(config) if config is None or isinstance(config, str) else config
    stages = {"decomposer": decomposer, "pruner": pruner, "judge": judge}
    candidate = Engine(cfg, decomposer=decomposer, pruner=pruner, judge=judge)
    key = json.dumps(
        {
            "run": candidate.config.to_json(),
            # a stage given as an object is shared only with callers passing that same object
            "objects": {k: id(v) for k, v in stages.items() if v is not None and not isinstance(v, (str, Mapping))},
        },
        sort_keys=True,
        default=str,
    )
    with _ENGINES_LOCK:
        return _ENGINES.setdefault(key, candidate)


def item_from(
    item_id: str,
    response: str,
    documents: Sequence[str | Mapping[str, Any]],
    *,
    question: str | None = None,
    claims: Sequence[str] | None = None,
    labels: Sequence[Sequence[str]] | None = None,
    where: str | None = None,
) -> Item:
    """Build an :class:`Item` from a harness row, validated like a JSONL line.

    ``documents`` are strings (ids ``d0``, ``d1``, … by position, as the command line gives them) or
    ``{"id", "text"}`` objects;
    ``claims``/``labels`` skip decomposition/judging as in the input format. Bad input raises
    :class:`InputError` naming ``where`` (e.g. ``"ragas row 3"``) and the field.
    """
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence):
        raise InputError(
            f"expected a list of documents (strings or {{'id', 'text'}} objects), got {type(documents).__name__}",
            path=where,
            field="documents",
        )
    obj: dict[str, Any] = {"id": item_id, "response": response, "documents": list(documents)}
    if question is not None:
        obj["question"] = question
    if claims is not None:
        obj["claims"] = list(claims)
    if labels is not None:
        obj["labels"] = [list(row) for row in labels]
    return parse_item(obj, path=where)


def metric_values(result: ItemResult, undefined: float | None = None) -> dict[str, float | None]:
    """Every metric of the table (CS-C, CS-R, cs_r_evidenced, support rate, and the weighted
    ones when the item's documents carry reliability) of one item; ``undefined`` where a value
    is not defined (no claims, or no conflicted claim for CS-R)."""
    m = result.metrics
    return {k: (v if (v := m.get(k)) is not None else undefined) for k in shown_keys([m])}


def explain(result: ItemResult) -> str:
    """One line of metrics, then each conflicted claim with its supporting and contradicting documents."""
    m = result.metrics
    n_conf = sum(v.conflicted for v in result.verdicts)

    def fmt(x: float | None) -> str:
        return "undefined" if x is None else f"{x:.3f}"

    shown = shown_keys([m])
    values = [f"{METRICS[k].label} {fmt(m.get(k))}" for k in shown]
    values[shown.index("cs_c")] += f" ({n_conf} of {m.n_claims} claims conflicted)"
    lines = [", ".join(values)]
    below = ", below aggregate.min_side_weight: not conflicted when weighted"
    for v in result.verdicts:
        if v.conflicted:
            weighed = (
                ""
                if not v.weighted
                else (
                    f" (weight {v.side_weight(v.support):g} against {v.side_weight(v.contradict):g}"
                    f"{'' if v.weighted_conflicted else below})"
                )
            )
            lines.append(
                f"conflicted: {v.claim.text!r} supported by [{', '.join(v.support)}]; "
                f"contradicted by [{', '.join(v.contradict)}]{weighed}"
            )
    unscored = sum(len(v.unscored) for v in result.verdicts)
    if unscored:
        lines.append(f"{unscored} claim-document judgments unscored (skipped by the metrics)")
    return "\n".join(lines)


def _with_item_id(result: ItemResult, item_id: str) -> ItemResult:
    verdicts = tuple(replace(v, claim=replace(v.claim, item_id=item_id)) for v in result.verdicts)
    return replace(result, item_id=item_id, verdicts=verdicts)


@dataclass
class _LoopQueue:
    waiting: list[tuple[Item, asyncio.Future[ItemResult]]] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class Batcher:
    """Scores the items of concurrent calls together, one engine step per gathered batch.

    ``await batcher.score(item)`` queues the item; the first waiting call opens a window of
    ``wait_s`` seconds for others to join, then the batch goes to the engine in a worker thread.
    Items arriving while a batch is being scored form the next batch. ``batch_sizes`` records the
    number of distinct items of every engine call. ``sleep`` is how the window waits
    (``asyncio.sleep``; tests hand in one they release by hand).
    """

    def __init__(self, engine: Engine, wait_s: float = 0.05, sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep):
        self.engine = engine
        self.wait_s = wait_s
        self.sleep = sleep
        self.batch_sizes: list[int] = []
        self._lock = threading.Lock()
        self._queues: dict[asyncio.AbstractEventLoop, _LoopQueue] = {}

    def score_now(self, items: Sequence[Item]) -> list[ItemResult]:
        """Score ``items`` in one engine call. Identical items (a harness running two metrics over
        the same rows) are scored once; ids repeated across different items are allowed."""
        distinct: dict[Item, int] = {}
        order = [distinct.setdefault(it, len(distinct)) for it in items]
        seen: dict[str, int] = {}
        renamed = []
        for it in distinct:
            n = seen[it.id] = seen.get(it.id, 0) + 1
            renamed.append(it if n == 1 else replace(it, id=f"{it.id}\x00{n}"))
        with self._lock:
            self.batch_sizes.append(len(renamed))
            results = list(self.engine.score(renamed))
        restored = [r if r.item_id == it.id else _with_item_id(r, it.id) for it, r in zip(distinct, results)]
        return [restored[k] for k in order]

    async def score(self, item: Item) -> ItemResult:
        loop = asyncio.get_running_loop()
        q = self._queues.get(loop)
        if q is None:
            q = self._queues[loop] = _LoopQueue()
        fut: asyncio.Future[ItemResult] = loop.create_future()
        q.waiting.append((item, fut))
        if q.task is None:
            q.task = loop.create_task(self._drain(loop, q))
        return await fut

    async def _drain(self, loop: asyncio.AbstractEventLoop, q: _LoopQueue) -> None:
        try:
            await self.sleep(self.wait_s)
            while q.waiting:
                batch, q.waiting = q.waiting, []
                try:
                    results = await asyncio.to_thread(self.score_now, [it for it, _ in batch])
                except Exception as e:  # every caller of the batch sees the engine's error
                    for _, f in batch:
                        if not f.done():
                            f.set_exception(e)
                else:
                    for (_, f), r in zip(batch, results):
                        if not f.done():
                            f.set_result(r)
        finally:
            q.task = None
            if self._queues.get(loop) is q and not q.waiting:
                del self._queues[loop]


_BATCHERS: "weakref.WeakKeyDictionary[Engine, Batcher]" = weakref.WeakKeyDictionary()


def batcher_for(engine: Engine) -> Batcher:
    """The one :class:`Batcher` of ``engine``, so every scorer sharing the engine shares its batches."""
    with _ENGINES_LOCK:
        b = _BATCHERS.get(engine)
        if b is None:
            b = _BATCHERS[engine] = Batcher(engine)
        return b


def score_items(items: Sequence[Item], engine: Engine | None = None) -> list[ItemResult]:
    """Score ``items`` in one engine call through the engine's batcher (synchronous)."""
    return batcher_for(shared_engine(engine)).score_now(items)
