"""Wires the stages together; the only module that knows their order.

items → claims (given or decomposed) → passages → pairs → pruner → cache → judge →
document labels → claim verdicts → item metrics. Each step handles many items at once so
every model call is batched across items; results come back in input order.
"""

from __future__ import annotations

import copy
import platform
import sys
import time
import warnings
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any, Iterable, Iterator, Mapping, Sequence

from . import registry
from .aggregate import claim_verdict, document_judgment, item_metrics, summarize_metrics
from .chunk import Chunker
from .config import STAGES, RunConfig, StageConfig
from .errors import ConfigError
from .types import IRRELEVANT, Claim, DocJudgment, Item, ItemResult, Judgment, Pair, Passage, Report

_VERSIONED = (
    "conflictscore-local", "torch", "transformers", "sentence-transformers", "faiss-cpu", "faiss-gpu",
    "spacy", "vllm", "openai", "numpy", "tokenizers",
)


def versions() -> dict[str, str]:
    """Python, platform and the versions of the installed libraries a run may use."""
    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in _VERSIONED:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            pass
    return out


@dataclass
class _Timing:
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, key: str, t0: float) -> None:
        self.seconds[key] += time.perf_counter() - t0


StageArg = str | Mapping[str, Any] | Any


class Engine:
    """The ConflictScore pipeline, built once and reused for many items.

    ``Engine()`` uses the embedded defaults; ``Engine(config)`` a :class:`RunConfig`;
    stages can be overridden by keyword: a backend name (``judge="nli"``), a mapping with
    a name and arguments (``judge={"name": "nli", "model": "path"}``) or an object that
    already implements the role. Backends are built and models loaded only when a stage is
    first needed, and once per engine.
    """

    def __init__(
        self,
        config: RunConfig | None = None,
        *,
        decomposer: StageArg | None = None,
        pruner: StageArg | None = None,
        judge: StageArg | None = None,
        progress: bool = False,
    ):
        self.config = copy.deepcopy(config) if config is not None else RunConfig()
        self.progress = progress
        self._backends: dict[str, Any] = {}
        for stage, arg in (("decomposer", decomposer), ("pruner", pruner), ("judge", judge)):
            if arg is None:
                continue
            if isinstance(arg, str):
                setattr(self.config, stage, StageConfig(arg))
            elif isinstance(arg, Mapping):
                body = dict(arg)
                if "name" not in body:
                    raise ConfigError(f"{stage}: a mapping needs a 'name'")
                setattr(self.config, stage, StageConfig(body.pop("name"), body))
            else:
                self._backends[stage] = arg
                setattr(self.config, stage, StageConfig(getattr(arg, "name", type(arg).__name__)))
        for stage in STAGES:
            if stage not in self._backends:
                registry.check_name(stage, getattr(self.config, stage).name)
        self._chunker: Chunker | None = None
        self._cache: Any = None
        self._cache_ready = False
        self.timing = _Timing()
        self.counts: dict[str, int] = defaultdict(int)

    # -- stages -----------------------------------------------------------------------
    def backend(self, stage: str) -> Any:
        """The backend of ``stage`` ("decomposer", "pruner", "judge"), built on first use."""
        if stage not in self._backends:
            sc: StageConfig = getattr(self.config, stage)
            self._backends[stage] = registry.build(stage, sc.name, sc.args)
        return self._backends[stage]

    def chunker(self) -> Chunker:
        if self._chunker is None:
            budget = self.backend("judge").passage_budget()
            count, max_tokens = budget if budget else (None, 384)
            wanted = self.config.chunk.max_tokens
            if wanted is not None:
                if budget and wanted > max_tokens:
                    # a longer passage would be truncated by the judge: its tail never judged
                    warnings.warn(
                        f"chunk.max_tokens={wanted} exceeds the judge's passage budget of {max_tokens} "
                        f"tokens; using {max_tokens}",
                        stacklevel=2,
                    )
                else:
                    max_tokens = wanted
            kw: dict[str, Any] = {"max_tokens": max_tokens, "overlap": self.config.chunk.overlap}
            if count is not None:
                kw["count"] = count
            try:
                self._chunker = Chunker(**kw)
            except ValueError as e:
                raise ConfigError(f"[chunk]: {e}") from None
        return self._chunker

    def cache(self) -> Any:
        if not self._cache_ready:
            self._cache_ready = True
            if self.config.cache.enabled:
                from .cache import JudgmentCache

                self._cache = JudgmentCache(self.config.cache_path(), self.backend("judge").spec())
        return self._cache

    # -- scoring ----------------------------------------------------------------------
    def score(self, items: Iterable[Item]) -> Iterator[ItemResult]:
        """Score items, yielding one :class:`ItemResult` per item in input order."""
        step = max(1, self.config.engine.step_items)
        total = len(items) if isinstance(items, Sequence) else None
        bar = _bar(total, "items", self.progress)
        buf: list[Item] = []
        try:
            for it in items:
                buf.append(it)
                if len(buf) >= step:
                    yield from self._step(buf)
                    bar.update(len(buf))
                    buf = []
            if buf:
                yield from self._step(buf)
                bar.update(len(buf))
        finally:
            bar.close()

    def score_all(self, items: Iterable[Item]) -> tuple[list[ItemResult], Report]:
        """Score every item and summarize: the one-call Python API."""
        self.timing = _Timing()
        self.counts = defaultdict(int)
        t0 = time.perf_counter()
        results = list(self.score(items))
        self.timing.add("total_s", t0)
        return results, self.summarize(results)

    def _step(self, items: Sequence[Item]) -> list[ItemResult]:
        ids = [it.id for it in items]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"duplicate item id {dup!r}")
        claims: dict[str, list[Claim]] = {}
        for it in items:
            if it.claims is not None:
                claims[it.id] = [Claim(it.id, i, c) for i, c in enumerate(it.claims)]
        todo = [it for it in items if it.claims is None]
        if todo:
            t0 = time.perf_counter()
            dec = self.backend("decomposer").decompose(todo)
            self.timing.add("decompose_s", t0)
            if len(dec) != len(todo):
                raise RuntimeError(f"decomposer returned {len(dec)} claim lists for {len(todo)} items")
            for it, cs in zip(todo, dec):
                claims[it.id] = list(cs)
            self.counts["claims_decomposed"] += sum(len(c) for c in dec)

        doc_judgments: dict[tuple[str, int], list[DocJudgment]] = {}
        judged_items = [it for it in items if it.labels is None and claims[it.id] and it.documents]
        for it in items:
            if it.labels is not None:
                for c in claims[it.id]:
                    doc_judgments[(it.id, c.index)] = [
                        DocJudgment(d.id, lab, None, "given") for d, lab in zip(it.documents, it.labels[c.index])
                    ]
        if judged_items:
            self._judge_items(judged_items, claims, doc_judgments)

        out = []
        for it in items:
            verdicts = tuple(claim_verdict(c, doc_judgments.get((it.id, c.index), [])) for c in claims[it.id])
            out.append(ItemResult(it.id, verdicts, item_metrics(verdicts)))
        return out

    def _judge_items(
        self,
        items: Sequence[Item],
        claims: Mapping[str, list[Claim]],
        doc_judgments: dict[tuple[str, int], list[DocJudgment]],
    ) -> None:
        t0 = time.perf_counter()
        chunker = self.chunker()
        passages: dict[str, list[Passage]] = {
            it.id: chunker.split(it.id, [d for d in it.documents if d.text.strip()]) for it in items
        }
        self.timing.add("chunk_s", t0)
        pairs = [Pair(c, p) for it in items for c in claims[it.id] for p in passages[it.id]]
        self.counts["passage_pairs"] += len(pairs)
        # a blank document can neither support nor contradict anything: never ask a model
        judgments: list[Judgment] = [
            Judgment(Pair(c, Passage(it.id, d.id, 0, d.text)), IRRELEVANT, None, "pruned", "empty document")
            for it in items
            for d in it.documents
            if not d.text.strip()
            for c in claims[it.id]
        ]

        t0 = time.perf_counter()
        kept, pruned = self.backend("pruner").select(pairs) if pairs else ([], [])
        self.timing.add("prune_s", t0)
        if len(kept) + len(pruned) != len(pairs):
            raise RuntimeError(
                f"pruner returned {len(kept)} kept + {len(pruned)} pruned pairs for {len(pairs)} candidates"
            )

        cache = self.cache() if kept else None
        judgments.extend(pruned)
        misses = kept
        if cache is not None:
            t0 = time.perf_counter()
            hits = cache.get_many(kept)
            judgments.extend(h for h in hits if h is not None)
            self.counts["passage_pairs_cached"] += len(kept) - sum(h is None for h in hits)
            misses = [p for p, h in zip(kept, hits) if h is None]
            self.timing.add("cache_s", t0)
        if misses:
            t0 = time.perf_counter()
            bar = _bar(len(misses), "pairs", self.progress)
            try:
                new = self.backend("judge").judge(misses, on_progress=bar.update)
            finally:
                bar.close()
            self.timing.add("judge_s", t0)
            if len(new) != len(misses):
                raise RuntimeError(f"judge returned {len(new)} judgments for {len(misses)} pairs")
            self.counts["passage_pairs_judged"] += len(new)
            judgments.extend(new)
            if cache is not None:
                cache.put_many(new, spec=self.backend("judge").spec())  # the spec that made them

        t0 = time.perf_counter()
        by_doc: dict[tuple[str, int, str], list[Judgment]] = defaultdict(list)
        for j in judgments:
            c, p = j.pair.claim, j.pair.passage
            by_doc[(c.item_id, c.index, p.doc_id)].append(j)
        agg = self.config.aggregate
        for it in items:
            for c in claims[it.id]:
                djs = []
                for d in it.documents:
                    js = sorted(by_doc[(it.id, c.index, d.id)], key=lambda j: j.pair.passage.index)
                    djs.append(document_judgment(d.id, js, threshold=agg.threshold, keep_both=agg.keep_both))
                doc_judgments[(it.id, c.index)] = djs
        self.timing.add("aggregate_s", t0)

    # -- reporting --------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The run config plus what each backend used resolved (model paths, revisions)."""
        backends = {}
        for stage in STAGES:
            b = self._backends.get(stage)
            backends[stage] = b.describe() if b is not None and hasattr(b, "describe") else {
                **getattr(self.config, stage).to_json(),
                "loaded": False,
            }
        return {"run": self.config.to_json(), "backends": backends}

    def summarize(self, results: Sequence[ItemResult], *, timing: Mapping[str, float] | None = None) -> Report:
        """The :class:`Report` of a set of results (this engine's config and timing)."""
        m = summarize_metrics(results, seed=self.config.engine.seed, n_resamples=self.config.engine.bootstrap)
        t = {k: round(v, 4) for k, v in self.timing.seconds.items()}
        if timing:
            t.update(timing)
        if t.get("judge_s") and self.counts.get("passage_pairs_judged"):
            t["judge_passage_pairs_per_s"] = round(self.counts["passage_pairs_judged"] / t["judge_s"], 2)
        stages = {s: b.stats() for s, b in self._backends.items() if hasattr(b, "stats")}
        stages["engine"] = dict(self.counts)
        labels = m.pop("labels")
        return Report(
            n_items=m["n_items"],  # type: ignore[arg-type]
            n_claims=m["n_claims"],  # type: ignore[arg-type]
            macro=m["macro"],  # type: ignore[arg-type]
            micro=m["micro"],  # type: ignore[arg-type]
            ci95=m["ci95"],  # type: ignore[arg-type]
            pairs=m["pairs"],  # type: ignore[arg-type]
            timing=t,
            config=self.describe(),
            versions=versions(),
            stages={**stages, "labels": labels},
        )

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
            self._cache_ready = False
        for b in self._backends.values():
            if hasattr(b, "close"):
                b.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int | None, unit: str, enabled: bool) -> Any:
    if not enabled:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=unit, file=sys.stderr, dynamic_ncols=True, leave=False)
