"""Wires the stages together; the only module that knows their order.

items → claims (given or decomposed) → passages → pairs → pruner → cache → judge →
document labels → claim verdicts → item metrics. Each step handles many items at once so
every model call is batched across items; results come back in input order.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import math
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..backends import registry
from ..core.aggregate import claim_verdict, document_judgment, document_weights
from ..core.chunk import Chunker
from ..core.errors import ConfigError
from ..core.metrics import item_metrics
from ..core.sampling import select_claims
from ..core.types import IRRELEVANT, Claim, DocJudgment, InputRecord, Item, ItemResult, Judgment, Pair, Passage, Summary
from ..formats.summary import build_summary, now_utc
from ..formats.table import Results
from ..util.environment import versions
from ..util.interrupts import ctrl_c_held
from ..util.nlp import Salience
from ..util.progress import RunProgress
from .checks import cascade_warning, fallback_warning, unscored_warning
from .config import STAGES, RunConfig, StageConfig
from .reading import Notes, items_input, read_input

log = logging.getLogger(__name__)


Clock = Callable[[], float]
"""Seconds from an arbitrary start (``time.perf_counter``; tests hand in one they move by hand)."""


@dataclass
class _Timing:
    clock: Clock = time.perf_counter
    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, key: str, t0: float) -> float:
        """Add the time since ``t0`` to ``key``; returns it."""
        took = self.clock() - t0
        self.seconds[key] += took
        return took


StageArg = str | Mapping[str, Any] | Any


class Engine:
    """The ConflictScore pipeline, built once and reused for many items.

    ``Engine()`` uses the embedded defaults; ``Engine(config)`` a :class:`RunConfig`;
    stages can be overridden by keyword: a backend name (``judge="nli"``), a mapping with
    a name and arguments (``judge={"name": "nli", "model": "path"}``) or an object that
    already implements the role (checked against its Protocol). Every backend's arguments
    are checked here, before anything runs; backends are built (by ``registry.build``) and
    models loaded only when a stage is first needed, and once per engine. ``clock`` is what the
    timing and the checkpoint pacing read (:data:`Clock`).
    """

    def __init__(
        self,
        config: RunConfig | None = None,
        *,
        decomposer: StageArg | None = None,
        pruner: StageArg | None = None,
        judge: StageArg | None = None,
        progress: bool = False,
        clock: Clock = time.perf_counter,
    ):
        self.config = copy.deepcopy(config) if config is not None else RunConfig()
        self.progress = progress
        from ..backends.checkpoints import use_hash_memo_folder

        # the weights' hash memo beside this run's judgment cache (--cache), else the default cache's folder
        use_hash_memo_folder(self.config.cache_path().parent if self.config.cache.enabled else None)
        self._backends: dict[str, Any] = {}
        self._document_rule: str | None = None
        self._stage_configs: dict[str, Any] = {}
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
                registry.check_role(stage, arg, where=f"{stage} {type(arg).__name__}")
                self._backends[stage] = arg
                setattr(self.config, stage, StageConfig(arg.name or type(arg).__name__))
        for stage in STAGES:
            if stage not in self._backends:
                sc: StageConfig = getattr(self.config, stage)
                self._stage_configs[stage] = registry.config_for(stage, sc.name, sc.args)
        self._chunker: Chunker | None = None
        self._salience: Salience | None = None
        self._cache: Any = None
        self._cache_ready = False
        self._rejected_seen = 0
        self.clock = clock
        self.timing = _Timing(clock)
        self.counts: dict[str, int] = defaultdict(int)
        self._progress = RunProgress(None, enabled=False)
        self.after_lookup: Callable[[int, int], None] | None = None
        """Called once per step, after its cache lookups, with the passage pairs found in the cache and those
        left to judge (``--resume`` says what the interrupted run left it)."""

    # -- stages -----------------------------------------------------------------------
    def backend(self, stage: str) -> Any:
        """The backend of ``stage`` ("decomposer", "pruner", "judge"), built on first use."""
        if stage not in self._backends:
            backend = registry.build(stage, getattr(self.config, stage).name, self._stage_configs[stage])
            if self.config.cache.enabled:
                backend.use_cache_dir(self.config.cache_path().parent)  # derived files (ONNX exports) go beside it
                if stage == "judge":
                    backend.use_judgment_cache(self.config.cache_path())  # a judge made of judges (cascade)
                elif stage == "pruner":
                    backend.use_vector_store(self.cache)  # a pruner's embeddings
            self._backends[stage] = backend
        return self._backends[stage]

    def built(self) -> tuple[str, ...]:
        """The stages whose backend is built so far (a run whose items carry labels builds none)."""
        return tuple(s for s in STAGES if s in self._backends)

    def chunker(self) -> Chunker:
        if self._chunker is None:
            budget = self.backend("judge").passage_budget()
            count, max_tokens = budget if budget else (None, 384)
            wanted = self.config.chunk.max_tokens
            if wanted is not None:
                if budget and wanted > max_tokens:
                    # a longer passage would be truncated by the judge: its tail never judged
                    log.warning(
                        f"chunk.max_tokens={wanted} exceeds the judge's passage budget of {max_tokens} "
                        f"tokens; using {max_tokens}"
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
                from ..formats.cache import JudgmentCache

                self._cache = JudgmentCache(self.config.cache_path(), self.backend("judge").spec())
        return self._cache

    # -- what decides the results -------------------------------------------------------
    def fingerprint(self, items: Sequence[Item]) -> dict[str, Any]:
        """Everything that decides the output rows of ``items``, for refusing a resume that
        would mix results: the settings that change rows and the ``spec()`` of each backend
        the items need (what it resolved: weights, tokenizer, pipeline version, thresholds).
        Batch sizes, cache and checkpoint settings, bootstrap and how paths are spelled are
        left out: they change no row. Loads no model (weights are hashed, not loaded)."""
        decompose = any(it.claims is None for it in items)
        judge = any(it.labels is None and it.documents for it in items)
        settings: dict[str, Any] = {}
        backends: dict[str, Any] = {}
        if decompose:
            backends["decomposer"] = self._spec("decomposer")
        if judge:
            settings["chunk"] = dataclasses.asdict(self.config.chunk)
            settings["aggregate"] = dataclasses.asdict(self.config.aggregate)
            backends["pruner"] = self._spec("pruner")
            backends["judge"] = self._spec("judge")
        weighted = any(d.reliability is not None for it in items for d in it.documents)
        if "aggregate" in settings and not weighted:
            del settings["aggregate"]["min_side_weight"]  # read only by the weighted metrics
        elif weighted:
            settings.setdefault("aggregate", {})["min_side_weight"] = self.config.aggregate.min_side_weight
        sample = self.config.sample
        if sample.claims_per_item:
            settings["sample"] = {**dataclasses.asdict(sample), "seed": self.config.engine.seed}
            if sample.selection == "salient":
                settings["sample"]["salience"] = self._salience_spec()
        return json.loads(json.dumps({"settings": settings, "backends": backends}, sort_keys=True, default=str))

    def _spec(self, stage: str) -> Any:
        backend = self.backend(stage)
        # what decides its rows: its spec, less what cannot change a row (a backend's resume_spec says so)
        return dict(getattr(backend, "resume_spec", backend.spec)())

    # -- scoring ----------------------------------------------------------------------
    def score(self, items: Iterable[Item]) -> Iterator[ItemResult]:
        """Score items, yielding one :class:`ItemResult` per item in input order.

        Items are taken ``engine.step_items`` at a time (the batching scope); within a step
        the pruner and the judge run in calls of about ``engine.checkpoint_s`` seconds, and
        after each call the judgments are in the cache and every finished item is yielded;
        an interrupt (Ctrl-C) in a call puts the judgments it finished in the cache before it ends the
        run (:meth:`_judge`). One progress display counts the items, the pairs and the ETA
        (:class:`~..util.progress.RunProgress`).
        """
        step = self.config.engine.step_items
        total = len(items) if isinstance(items, Sequence) else None
        self._progress = bar = RunProgress(total, enabled=self.progress)
        buf: list[Item] = []
        try:
            for it in items:
                buf.append(it)
                if len(buf) >= step:
                    for r in self._step(buf):
                        bar.item()
                        yield r
                    buf = []
            if buf:
                for r in self._step(buf):
                    bar.item()
                    yield r
        finally:
            bar.close()
            self._progress = RunProgress(None, enabled=False)

    def score_all(
        self, items: "Iterable[Item | Mapping[str, Any]] | str | os.PathLike[str]"
    ) -> tuple[Results, Summary]:
        """Score every item and summarize: the one-call Python API.

        ``items``: the path of a JSONL file (read and checked as ``conflictscore score`` reads it), or
        :class:`Item` objects, or plain dicts of any input shape (this project's, RAGAS', DeepEval's; see
        :mod:`~conflictscore_local.formats.inputs`), validated before any model runs. The results are a
        :class:`~conflictscore_local.formats.table.Results` list (``to_records()``, ``to_pandas()``); the
        summary is the one ``score`` writes for the same run (its ``stages.input`` says what was read and
        which shape, its ``warnings`` what deserves a look): write it with
        :func:`~conflictscore_local.formats.summary.write_summary`."""
        t0, started_at = self.clock(), now_utc()
        notes = Notes()
        inp = read_input(items, None, notes) if isinstance(items, (str, os.PathLike)) else items_input(items, notes)
        self.timing = _Timing(self.clock)
        self.counts = defaultdict(int)
        results = Results(self.score(inp.items))
        return results, self.summarize(results, input=inp.record(), warnings=notes, started=t0, started_at=started_at)

    def _step(self, items: Sequence[Item]) -> Iterator[ItemResult]:
        ids = [it.id for it in items]
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"duplicate item id {dup!r}")
        claims: dict[str, list[Claim]] = {}
        for it in items:
            if it.claims is not None:
                claims[it.id] = [Claim(it.id, i, c) for i, c in enumerate(it.claims)]
            elif not it.response.strip():
                self.counts["empty_responses"] += 1
        todo = [it for it in items if it.claims is None]
        if todo:
            t0 = self.clock()
            dec = self.backend("decomposer").decompose(todo)
            self.timing.add("decompose_s", t0)
            if len(dec) != len(todo):
                raise RuntimeError(f"decomposer returned {len(dec)} claim lists for {len(todo)} items")
            for it, cs in zip(todo, dec):
                claims[it.id] = list(cs)
            self.counts["claims_decomposed"] += sum(len(c) for c in dec)
        totals = {it.id: len(claims[it.id]) for it in items if it.id in claims}
        if self.config.sample.claims_per_item:
            claims = self._sample(items, claims)

        judged_items = [it for it in items if it.labels is None and claims[it.id] and it.documents]
        skipped = {it.id: totals[it.id] - len(claims[it.id]) for it in judged_items}
        by_doc: dict[tuple[str, int, str], list[Judgment]] = defaultdict(list)
        pending: dict[str, int] = defaultdict(int)
        misses: list[Pair] = []
        cached_before = self.counts["passage_pairs_cached"]
        if judged_items:
            for j in self._prepare(judged_items, claims, misses, skipped):
                c, p = j.pair.claim, j.pair.passage
                by_doc[(c.item_id, c.index, p.doc_id)].append(j)
            for pair in misses:
                pending[pair.claim.item_id] += 1
        if self.after_lookup is not None:
            self.after_lookup(self.counts["passage_pairs_cached"] - cached_before, len(misses))
        pairs = sum(len(claims.get(it.id, ())) * len(it.documents) for it in items)  # the summary's pairs.total
        waiting = len({(p.claim.item_id, p.claim.index, p.passage.doc_id) for p in misses})
        self._progress.step(len(items), pairs, pairs - waiting, len(misses))

        done = 0

        def finished() -> Iterator[ItemResult]:
            nonlocal done
            while done < len(items) and not pending[items[done].id]:
                it = items[done]
                yield self._result(it, claims[it.id], by_doc, totals.get(it.id))
                done += 1

        yield from finished()
        for new in self._judge(misses):
            for j in new:
                c, p = j.pair.claim, j.pair.passage
                by_doc[(c.item_id, c.index, p.doc_id)].append(j)
                pending[c.item_id] -= 1
            yield from finished()
        yield from finished()

    def _prepare(
        self, items: Sequence[Item], claims: Mapping[str, list[Claim]], misses: list[Pair], skipped: Mapping[str, int]
    ) -> list[Judgment]:
        """Passages, candidate pairs, pruning and cache lookups of a step: the judgments
        known without the judge; the pairs it must judge are appended to ``misses``.
        ``skipped``: claims of each item left out by sampling (their pairs are counted)."""
        t0 = self.clock()
        passages = self._split(items)
        self.timing.add("chunk_s", t0)
        if self.config.sample.claims_per_item:
            self.counts["passage_pairs_skipped_by_sampling"] += sum(
                skipped[it.id] * len(passages[it.id]) for it in items
            )
        groups = [[Pair(c, p) for p in passages[it.id]] for it in items if passages[it.id] for c in claims[it.id]]
        self.counts["passage_pairs"] += sum(len(g) for g in groups)
        # a blank document can neither support nor contradict anything: never ask a model
        known: list[Judgment] = [
            Judgment(Pair(c, Passage(it.id, d.id, 0, d.text)), IRRELEVANT, None, "pruned", "empty document")
            for it in items
            for d in it.documents
            if not d.text.strip()
            for c in claims[it.id]
        ]
        kept, pruned = self._select(groups)
        known.extend(pruned)
        cache = self.cache() if kept else None
        if cache is None:
            misses.extend(kept)
            return known
        t0 = self.clock()
        hits = cache.get_many(kept)
        self.timing.add("cache_s", t0)
        self._count_rejected(cache)
        for p, h in zip(kept, hits):
            if h is None:
                misses.append(p)
            else:
                known.append(h)
                self.counts["passage_pairs_cached"] += 1
        return known

    def _split(self, items: Sequence[Item]) -> dict[str, list[Passage]]:
        """Every item's passages. With the cache on, documents split before (under the same
        judge, budget and overlap) take their stored spans and the rest are stored once split:
        a rerun counts no tokens."""
        chunker = self.chunker()
        docs = {it.id: [d for d in it.documents if d.text.strip()] for it in items}
        cache = self.cache() if any(docs.values()) else None
        if cache is None:
            return {it.id: chunker.split(it.id, docs[it.id]) for it in items}
        spec = {**chunker.spec(), "judge": cache.spec}  # the judge (its tokenizer counts) as the cache knows it
        texts = list(dict.fromkeys(d.text for ds in docs.values() for d in ds))
        known = cache.get_spans(spec, texts)
        self._count_rejected(cache)
        new = {t: chunker.spans(t) for t in texts if t not in known}
        out = {it.id: chunker.split(it.id, docs[it.id], {**known, **new}) for it in items}
        cache.put_spans(spec, new)
        self.counts["documents_split"] += len(new)
        self.counts["documents_split_stored"] += len(known)
        return out

    def _select(self, groups: Sequence[Sequence[Pair]]) -> tuple[list[Pair], list[Judgment]]:
        """The pruner's choice over every claim's candidates. With the cache on and a pruner
        that stores its selections (``cache_selections``), stored ones are looked up first:
        only claims never seen by this pruner are pruned, and reported exactly as before."""
        if not groups:
            return [], []
        pruner = self.backend("pruner")
        stored: list[Any] = [None] * len(groups)
        spec = None
        if pruner.cache_selections and self.config.cache.enabled:
            spec = dict(pruner.selection_spec())
            t0 = self.clock()
            stored = self.cache().get_selections(spec, groups)
            self.timing.add("cache_s", t0)
            self._count_rejected(self.cache())
        kept: list[Pair] = []
        pruned: list[Judgment] = []
        for sel in stored:
            if sel is not None:
                kept.extend(sel[0])
                pruned.extend(sel[1])
        self.counts["claims_selection_cached"] += sum(s is not None for s in stored)
        todo = [g for g, s in zip(groups, stored) if s is None]
        if todo and not pruner.decide(todo, judge=self.backend("judge"), judge_s_per_pair=self._judge_s_per_pair()):
            spec = None  # a step decided not to prune stores no selections
        pacer = self._pacer()
        for batch in pacer.batches(todo):
            pairs = [p for g in batch for p in g]
            t0 = self.clock()
            k, pr = pruner.select(pairs)
            pacer.took(len(pairs), self.timing.add("prune_s", t0))
            if len(k) + len(pr) != len(pairs):
                raise RuntimeError(
                    f"pruner returned {len(k)} kept + {len(pr)} pruned pairs for {len(pairs)} candidates"
                )
            k = [p if _finite(p.similarity) else dataclasses.replace(p, similarity=None) for p in k]
            pr = [
                j
                if _finite(j.pair.similarity)
                else dataclasses.replace(j, pair=dataclasses.replace(j.pair, similarity=None))
                for j in pr
            ]
            if spec is not None:
                t0 = self.clock()
                self.cache().put_selections(spec, batch, k, pr)
                self.timing.add("cache_s", t0)
            kept.extend(k)
            pruned.extend(pr)
        return kept, pruned

    def _judge_s_per_pair(self) -> float | None:
        """The judge's seconds per pair measured so far in this run (None before it has run):
        what a pruner's decision hook (``decide``, the ``auto`` pruner) weighs pruning against."""
        judged = self.counts.get("passage_pairs_judged")
        return self.timing.seconds.get("judge_s", 0.0) / judged if judged else None

    def _judge(self, pairs: Sequence[Pair]) -> Iterator[list[Judgment]]:
        """Judge ``pairs`` in checkpointed calls, yielding each call's judgments once they are
        in the cache. A judgment with a probability that is not a finite number is unscored."""
        if not pairs:
            return
        judge = self.backend("judge")
        cache = self.cache()
        bar = self._progress  # counts the claim × document pairs a call decides, as its passage pairs come back
        pacer = self._pacer()
        by_claim: dict[tuple[str, int], list[Pair]] = {}
        for p in pairs:  # a claim's pairs go to the judge in one call (a cascade decides per claim)
            by_claim.setdefault((p.claim.item_id, p.claim.index), []).append(p)
        try:
            for batch in pacer.batches(list(by_claim.values())):
                chunk = [p for g in batch for p in g]
                bar.call(len({(p.claim.item_id, p.claim.index, p.passage.doc_id) for p in chunk}), len(chunk))
                t0 = self.clock()
                try:
                    new = judge.judge(chunk, on_progress=bar.passages)
                except KeyboardInterrupt as stop:
                    self._keep_interrupted(stop, judge, cache)
                    raise
                bar.call_done()
                pacer.took(len(chunk), self.timing.add("judge_s", t0))
                if len(new) != len(chunk):
                    raise RuntimeError(f"judge returned {len(new)} judgments for {len(chunk)} pairs")
                new = [_checked(j) for j in new]
                with ctrl_c_held():  # the judgments counted are the judgments committed to the cache
                    if cache is not None:
                        t0 = self.clock()
                        cache.put_many(new, spec=judge.spec())  # the spec that made them (it can change mid-run)
                        self.timing.add("cache_s", t0)
                    self.counts["passage_pairs_judged"] += len(new)  # after the commit: never more than it holds
                self.counts["checkpoints"] += 1
                yield new
        except KeyboardInterrupt as stop:
            stop.judgments_cached = (  # type: ignore[attr-defined]  # carried on the interrupt to the command
                self.counts["passage_pairs_judged"] + getattr(stop, "judgments_cached", 0) if cache is not None else 0
            )
            raise

    def _keep_interrupted(self, stop: KeyboardInterrupt, judge: Any, cache: Any) -> None:
        """Ctrl-C in a judge call: the judgments the call finished (a judge that hands them over on the
        interrupt, as ``stop.judged``: ``(its spec, judgments)``) go into the cache before the run ends, so a
        ``--resume`` judges them no more; ``stop.judgments_cached`` counts them."""
        spec, finished = getattr(stop, "judged", None) or (None, ())
        scored = [j for j in (_checked(j) for j in finished) if j.label is not None]
        if cache is None or not scored or dict(spec or {}) != dict(judge.spec()):  # another judge's (a cascade's part)
            return
        cache.put_many(scored, spec=judge.spec())
        stop.judgments_cached = len(scored)  # type: ignore[attr-defined]

    def _count_rejected(self, cache: Any) -> None:
        """Count the cache rows that could not be read back (judged again), warning at the first."""
        new = cache.rejected - self._rejected_seen
        if new <= 0:
            return
        self._rejected_seen = cache.rejected
        if not self.counts.get("cache_rows_rejected"):
            log.warning(
                f"judgment cache {cache.path}: {new} stored row(s) are not judgments, selections, vectors "
                "or passage spans this version can trust (a label outside SUPPORT/CONTRADICT/IRRELEVANT or "
                "no judge of the cascade named, probabilities that are not finite numbers, a damaged "
                "selection, a vector not of the embedder's width or not finite, spans that do not cover "
                "their document): "
                "computed again and replaced; counted in stages.engine.cache_rows_rejected"
            )
        self.counts["cache_rows_rejected"] += new

    def _pacer(self) -> "_Pacer":
        return _Pacer(self.config.engine.checkpoint_s)

    def _result(
        self, it: Item, claims: list[Claim], by_doc: Mapping[tuple[str, int, str], list[Judgment]], total: int | None
    ) -> ItemResult:
        t0 = self.clock()
        agg = self.config.aggregate
        weights = document_weights(it.documents)
        verdicts = []
        for c in claims:
            if it.labels is not None:
                djs = [DocJudgment(d.id, lab, None, "given") for d, lab in zip(it.documents, it.labels[c.index])]
            else:
                djs = []
                for d in it.documents:
                    js = sorted(by_doc.get((it.id, c.index, d.id), ()), key=lambda j: j.pair.passage.index)
                    if js:
                        djs.append(
                            document_judgment(
                                d.id, js, threshold=agg.threshold, keep_both=agg.keep_both, rule=self.document_rule()
                            )
                        )
            verdicts.append(claim_verdict(c, djs, weights=weights, min_side_weight=agg.min_side_weight))
        self.timing.add("aggregate_s", t0)
        sampled = total if self.config.sample.claims_per_item and total is not None else None
        return ItemResult(it.id, tuple(verdicts), item_metrics(verdicts), sampled)

    # -- claim sampling -----------------------------------------------------------------
    def salience(self) -> Salience:
        """The salience scorer of ``sample.selection = "salient"`` (spaCy loads on first use)."""
        if self._salience is None:
            self._salience = Salience()
        return self._salience

    def _salience_spec(self) -> dict[str, Any]:
        self.salience().nlp()
        return dict(self.salience().resolved)

    def _sample(self, items: Sequence[Item], claims: Mapping[str, list[Claim]]) -> dict[str, list[Claim]]:
        """At most ``sample.claims_per_item`` claims of each item, by ``sample.selection``."""
        sample = self.config.sample
        scorer = self.salience().scores if sample.selection == "salient" else None
        t0 = self.clock()
        out = {}
        for it in items:
            if it.id not in claims:
                continue
            out[it.id] = select_claims(
                claims[it.id],
                sample.claims_per_item,
                sample.selection,
                seed=self.config.engine.seed,
                question=it.question,
                salience=scorer,
            )
            self.counts["claims_left_out_by_sampling"] += len(claims[it.id]) - len(out[it.id])
        self.timing.add("sample_s", t0)
        return out

    def document_rule(self) -> str:
        """The document rule in force: ``aggregate.document_rule``, or with ``auto`` the rule the
        judge's checkpoint was evaluated with (its ``document_rule()``, e.g. the ``nli`` judge's
        ``conflictscore.json``), else ``max``."""
        if self._document_rule is None:
            from ..core.aggregate import DOCUMENT_RULES

            rule = self.config.aggregate.document_rule
            if rule == "auto":
                found = self.backend("judge").document_rule()
                if found is not None and found not in DOCUMENT_RULES:
                    raise ConfigError(
                        f"the judge recommends document_rule {found!r}; allowed: "
                        f"{', '.join(DOCUMENT_RULES)} (set aggregate.document_rule to one of them)"
                    )
                rule = found or "max"
            self._document_rule = rule
        return self._document_rule

    # -- reporting --------------------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """The run config plus what each backend used resolved (model paths, revisions; by name, so the
        same run describes itself the same whatever it resolved first) and its ``spec()``: the
        content-derived identity (weights hashes, settings) that keys the cache and the resume
        fingerprint, so a summary says exactly what produced its labels."""
        backends = {}
        for stage in STAGES:
            b = self._backends.get(stage)
            if b is not None:  # the spec first: computing it records what it resolved (a model's fingerprint)
                spec = json.loads(json.dumps(b.spec(), default=str))
                described = b.describe()
                if isinstance(described.get("resolved"), Mapping):  # in one order, however it was resolved
                    described["resolved"] = dict(sorted(described["resolved"].items()))
                backends[stage] = {**described, "spec": spec}
            else:
                backends[stage] = {**getattr(self.config, stage).to_json(), "loaded": False}
        return {"run": self.config.to_json(), "backends": backends}

    def summarize(
        self,
        results: Sequence[ItemResult],
        *,
        timing: Mapping[str, float] | None = None,
        input: InputRecord | None = None,
        shard: Mapping[str, Any] | None = None,
        resumed_items: int | None = None,
        warnings: Sequence[str] = (),
        started: float | None = None,
        started_at: str | None = None,
        bench: Mapping[str, Any] | None = None,
        evaluation: Mapping[str, Any] | None = None,
    ) -> Summary:
        """The :class:`Summary` of a set of results (this engine's config, timing and counters), whole, by the
        one builder (:func:`~..formats.summary.build_summary`) that ``merge`` uses too: ``input`` (what reading
        saw), ``shard`` (the ``--shard`` record), ``resumed_items``, the ``warnings`` noted so far, ``started``
        (this engine's clock at the start: ``timing.total_s``), ``started_at`` (the UTC date and time it started:
        the summary's ``started``, and ``finished`` now), a ``bench run``'s ``bench`` and ``evaluation``;
        the checks of :mod:`.checks` add their warnings."""
        t = {k: round(v, 4) for k, v in self.timing.seconds.items()}
        if timing:
            t.update(timing)
        stages = {s: b.stats() for s, b in self._backends.items()}
        stages["engine"] = dict(self.counts)
        if self._document_rule is not None:  # decided when the first judged document was aggregated
            stages["aggregate"] = {
                "document_rule": self._document_rule,
                "configured": self.config.aggregate.document_rule,
            }
        limits = self.config.engine
        checks = (
            cascade_warning,
            lambda s: unscored_warning(s, limits.max_unscored_share),
            lambda s: fallback_warning(s, limits.max_fallback_share),
        )
        return build_summary(
            results,
            config=self.describe(),
            timing=t,
            stages=stages,
            versions=versions(),
            salience=self._salience.resolved if self._salience is not None else None,
            input=input,
            shard=shard,
            resumed_items=resumed_items,
            warnings=warnings,
            total_s=None if started is None else (lambda: self.clock() - started),
            bench=bench,
            evaluation=evaluation,
            started=started_at,
            finished=None if started_at is None else now_utc,
            checks=checks,
        )

    def close(self) -> None:
        if self._cache is not None:
            self._cache.close()
            self._cache = None
            self._cache_ready = False
            self._rejected_seen = 0
        for b in self._backends.values():
            b.close()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


FIRST_CALL_PAIRS = 64
"""Pairs in a step's first pruner or judge call, and the fewest in any: one full batch of the
``nli`` judge, small enough that the first checkpoint comes soon."""


@dataclass
class _Pacer:
    """Cuts a step's pruner or judge work into calls of about ``every`` seconds each.

    The first call is :data:`FIRST_CALL_PAIRS` pairs (the first checkpoint comes soon even
    while a model loads); each next one is sized by the pairs per second of the last
    (:meth:`took`), growing at most 16-fold at a time and never below the first size, so a
    slow judge still gets whole batches (``benchmarks/results/pipeline/checkpoint_overhead.md``).
    """

    every: float
    size: int = FIRST_CALL_PAIRS

    def batches(self, units: Sequence[Sequence[Pair]]) -> Iterator[Sequence[Sequence[Pair]]]:
        """Consecutive runs of ``units`` (each kept whole) of about ``size`` pairs."""
        i = 0
        while i < len(units):
            j, n = i, 0
            while j < len(units) and (j == i or n + len(units[j]) <= self.size):
                n += len(units[j])
                j += 1
            yield units[i:j]
            i = j

    def took(self, pairs: int, seconds: float) -> None:
        """Record that the last call of ``pairs`` pairs took ``seconds``."""
        self.size = max(FIRST_CALL_PAIRS, min(16 * self.size, int(pairs / max(seconds, 1e-6) * self.every)))


def _finite(x: float | None) -> bool:
    return x is None or math.isfinite(x)


def _checked(j: Judgment) -> Judgment:
    """``j``, or an unscored judgment when a probability is not a finite number (never written as NaN)."""
    if j.probs is not None and not all(isinstance(v, (int, float)) and math.isfinite(v) for v in j.probs.values()):
        return Judgment(
            j.pair, None, None, j.source, f"the judge returned probabilities that are not numbers: {dict(j.probs)}"
        )
    return j
