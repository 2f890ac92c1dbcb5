"""The ``cascade`` judge: a cheap judge for every pair, a second one only where it matters.

Every pair goes to the ``first`` judge. A pair goes on to the ``second`` judge when

1. the first judge is unsure: its top probability is below ``escalate_below`` (a judgment
   without probabilities, an LLM reply read from its text, carries no confidence and is not
   escalated by this rule; an unscored one always is; ``escalate_below = 1`` sends every pair), or
2. (``escalate_flips``) its passage could flip its claim's conflict status: had the first judge
   given the pair its runner-up label (the second most probable; without probabilities, either
   other label), the claim would change between conflicted and not. The claim's documents are
   decided from the first judge's labels of the pairs in the same call (the engine hands a
   claim's pairs to the judge together) with the default document rule (``max``, no threshold).

The second judge's label replaces the first's. Where the second cannot give one (its server
down, a reply it cannot read) the escalation failed: the pair is unscored, its note saying why
and what the first judge said (``on_second_failure="unscored"``, the default: the run ends with
a warning naming how many escalations failed, and exits 3 like any run with too much unscored
work), or, with ``on_second_failure="keep_first"``, the first judge's label is kept and the note
says so (counted, warned about, recorded in the spec). Every judgment records which judge
decided (``decided_by``: ``"first"`` or ``"second"``; inside a nested cascade ``"first/second"``),
and the output's document judgments carry it on. The spec holds both judges' specs and the
escalation settings, so it keys the judgment cache and the resume fingerprint. With the
judgment cache on, each judge's own judgments are cached under its own spec too, so moving
``escalate_below`` re-asks neither judge what it answered before: a threshold sweep costs only
the new escalations (``benchmarks/pipeline/cascade_sweep.py``).

Both judges are built through the registry from their configs (``{"name": ..., args...}``), so
their arguments are checked before anything runs and recorded in the summary.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

from ..backends import registry
from ..backends.arguments import check_ranges, ranged
from ..core.aggregate import claim_verdict, document_judgment
from ..core.errors import ConfigError
from ..core.types import CONTRADICT, LABELS, Judgment, Label, Pair
from ._base import JudgeBase, ProgressFn

log = logging.getLogger(__name__)

RULE_VERSION = 2
"""Bumped whenever what is escalated, or what a failed escalation gives, changes for the same
judgments (part of the spec). 2: a failed escalation is unscored unless ``keep_first``."""
ON_SECOND_FAILURE: tuple[str, ...] = ("unscored", "keep_first")
JUDGES: tuple[str, ...] = ("first", "second")


@dataclass(frozen=True)
class CascadeConfig:
    """``first`` / ``second``: judge configs, ``{"name": BACKEND, ARG: VALUE, ...}``.

    ``on_second_failure``: what an escalated pair the second judge gives no label becomes:
    ``unscored`` (the default: counted as unscored work, the run says so and exits 3 when there
    is too much of it) or ``keep_first`` (the first judge's label stands, counted and warned about).
    """

    first: dict[str, Any] = field(default_factory=lambda: {"name": "nli"})
    second: dict[str, Any] | None = None
    escalate_below: float = ranged(0.8, 0.0, 1.0, what="escalate_below (a probability)")
    escalate_flips: bool = True
    on_second_failure: Literal["unscored", "keep_first"] = "unscored"

    def __post_init__(self) -> None:
        for which in JUDGES:
            judge_config(getattr(self, which), which)
        check_ranges(self, where="judge cascade")


def judge_config(spec: Any, which: str) -> tuple[str, dict[str, Any]]:
    """(backend name, arguments) of the ``first`` or ``second`` judge config, checked against that
    backend's arguments (``ValueError`` naming ``which``)."""
    example = 'e.g. {"name": "nli", "model": "models/default-judge"}'
    if spec is None:
        raise ValueError(f'{which} is required: a judge config {{"name": BACKEND, ARG: VALUE...}}, {example}')
    if not isinstance(spec, Mapping) or not isinstance(spec.get("name"), str):
        raise ValueError(f'{which} must be a judge config with a "name" ({example}), got {spec!r}')
    name = spec["name"]
    args = {k: v for k, v in spec.items() if k != "name"}
    try:
        registry.config_for("judge", name, args, where=f"{which} ({name})")
    except ConfigError as e:
        msg = str(e)
        raise ValueError(msg if msg.startswith(which) else f"{which}: {msg}") from None
    return name, args


def top_probability(j: Judgment) -> float:
    """The probability of the first judge's likeliest label (1.0 without probabilities: no confidence to doubt)."""
    if j.probs is None or not j.probs:
        return 1.0
    return max(float(v) for v in j.probs.values())


def alternatives(j: Judgment) -> list[Label]:
    """The labels a pair might have had instead: its runner-up (CONTRADICT on a tie, the rarer and
    costlier signal), or either other label without probabilities."""
    if j.label is None:
        return []
    others = [lab for lab in LABELS if lab != j.label]
    if j.probs is None or not all(lab in j.probs for lab in others):
        return others
    return [max(others, key=lambda lab: (float(j.probs[lab]), lab == CONTRADICT))]  # type: ignore[index]  # j.probs checked not None above


def _conflicted(claim: Any, docs: Mapping[str, Sequence[Judgment]]) -> bool:
    return claim_verdict(claim, [document_judgment(d, js) for d, js in docs.items()]).conflicted


def escalations(judgments: Sequence[Judgment], escalate_below: float, flips: bool) -> tuple[set[int], set[int]]:
    """Which of the first judge's ``judgments`` go to the second judge: (the unsure and the
    unscored, those that could flip their claim's conflict status), as indices."""
    unsure = {
        i
        for i, j in enumerate(judgments)
        if j.label is None or escalate_below >= 1.0 or top_probability(j) < escalate_below
    }
    flip: set[int] = set()
    if not flips:
        return unsure, flip
    claims: dict[Any, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for i, j in enumerate(judgments):
        claims[(j.pair.claim.item_id, j.pair.claim.index)][j.pair.passage.doc_id].append(i)
    for docs in claims.values():
        order = {d: sorted(ix, key=lambda i: judgments[i].pair.passage.index) for d, ix in docs.items()}
        current = {d: [judgments[i] for i in ix] for d, ix in order.items()}
        claim = judgments[next(iter(order.values()))[0]].pair.claim
        status = _conflicted(claim, current)
        for d, ix in order.items():
            for k, i in enumerate(ix):
                for alt in alternatives(judgments[i]):
                    changed = list(current[d])
                    changed[k] = dataclasses.replace(judgments[i], label=alt)
                    if _conflicted(claim, {**current, d: changed}) != status:
                        flip.add(i)
                        break
    return unsure, flip


class CascadeJudge(JudgeBase):
    """``first`` judges every pair; ``second`` the unsure ones and those that could flip a claim."""

    name = "cascade"
    role = "judge"
    Config = CascadeConfig

    def __init__(self, config: CascadeConfig | None = None):
        super().__init__(config)
        self._judges: dict[str, Any] = {}
        self._cache_path: Path | None = None
        self._caches: dict[str, Any] = {}

    # -- the two judges -------------------------------------------------------------------
    def judges(self) -> tuple[Any, Any]:
        """The first and the second judge, built through the registry on first use (no model loads)."""
        for which in JUDGES:
            if which not in self._judges:
                name, args = judge_config(getattr(self.config, which), which)
                self._judges[which] = registry.build("judge", name, args)
        return self._judges["first"], self._judges["second"]

    def use_judges(self, first: Any, second: Any) -> None:
        """Judge with these objects instead of building the configured ones (checked against the Judge role)."""
        for which, judge in zip(JUDGES, (first, second)):
            registry.check_role("judge", judge, where=f"cascade {which} judge {type(judge).__name__}")
            self._judges[which] = judge

    def use_cache_dir(self, folder: Path) -> None:
        for j in self.judges():
            j.use_cache_dir(folder)

    def use_judgment_cache(self, path: str | os.PathLike[str]) -> None:
        """Cache each judge's own judgments in the run's judgment cache, under that judge's spec."""
        self._cache_path = Path(path)

    def _cache(self, which: str, judge: Any) -> Any:
        if self._cache_path is None:
            return None
        if which not in self._caches:
            from ..formats.cache import JudgmentCache

            self._caches[which] = JudgmentCache(self._cache_path, judge.spec())
        return self._caches[which]

    # -- identity ----------------------------------------------------------------------
    def spec(self) -> Mapping[str, Any]:
        """Both judges' specs and the escalation settings: what decides the labels."""
        first, second = self.judges()
        return {
            "backend": "cascade",
            "first": dict(first.spec()),
            "second": dict(second.spec()),
            "escalate_below": self.config.escalate_below,
            "escalate_flips": self.config.escalate_flips,
            "on_second_failure": self.config.on_second_failure,
            "rule_version": RULE_VERSION,
        }

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        first, second = self.judges()
        out["judges"] = {"first": first.describe(), "second": second.describe()}
        return out

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        if out.get("pairs"):
            out["escalated_share"] = round(out.get("escalated", 0) / out["pairs"], 6)
            out.setdefault("decided_by_second", 0)
            out.setdefault("second_failed", 0)
            out["on_second_failure"] = self.config.on_second_failure
        for which, judge in self._judges.items():
            if judge.stats():
                out[which] = judge.stats()
        return out

    def passage_budget(self) -> tuple[Callable[[str], int], int] | None:
        """The tighter window of the two judges: every passage must fit both."""
        budgets = [b for b in (j.passage_budget() for j in self.judges()) if b is not None]
        return min(budgets, key=lambda b: b[1]) if budgets else None

    # -- judging -----------------------------------------------------------------------
    def _ask(self, which: str, judge: Any, pairs: Sequence[Pair], on_progress: ProgressFn | None) -> list[Judgment]:
        """``judge``'s judgments of ``pairs``: from its cache where it answered before, else asked."""
        if not pairs:
            return []
        cache = self._cache(which, judge)
        known: list[Judgment | None] = cache.get_many(pairs) if cache is not None else [None] * len(pairs)
        if cache is not None and cache.rejected > self.counters.get(f"{which}_cache_rows_rejected", 0):
            new = cache.rejected - self.counters.get(f"{which}_cache_rows_rejected", 0)
            if not self.counters.get(f"{which}_cache_rows_rejected"):
                log.warning(
                    f"judgment cache {cache.path}: {new} stored row(s) of the cascade's {which} judge are not "
                    "judgments this version can trust: asked again and replaced; counted in "
                    f"stages.judge.{which}_cache_rows_rejected"
                )
            self.count(f"{which}_cache_rows_rejected", new)
        todo = [i for i, j in enumerate(known) if j is None]
        self.count(f"{which}_cached", len(pairs) - len(todo))
        if on_progress is not None and len(pairs) > len(todo):
            on_progress(len(pairs) - len(todo))
        if todo:
            new = judge.judge([pairs[i] for i in todo], on_progress=on_progress)
            if len(new) != len(todo):
                raise RuntimeError(f"cascade {which} judge returned {len(new)} judgments for {len(todo)} pairs")
            if cache is not None:
                cache.put_many(new, spec=judge.spec())
            for i, j in zip(todo, new):
                known[i] = j
        return known  # type: ignore[return-value]  # every slot is filled by now

    def judge(self, pairs: Sequence[Pair], on_progress: ProgressFn | None = None) -> list[Judgment]:
        """Label every pair with the first judge, then the escalated ones with the second (input order kept)."""
        if not pairs:
            return []
        first, second = self.judges()
        firsts = self._ask("first", first, pairs, None)
        unsure, flip = escalations(firsts, self.config.escalate_below, self.config.escalate_flips)
        up = sorted(unsure | flip)
        if on_progress is not None and len(pairs) > len(up):
            on_progress(len(pairs) - len(up))  # the rest is done once the second judge answers
        seconds = self._ask("second", second, [pairs[i] for i in up], on_progress)
        out = [_decided(j, "first") for j in firsts]
        kept = failed = 0
        keep = self.config.on_second_failure == "keep_first"
        for i, j in zip(up, seconds):
            if j.label is not None:
                out[i] = _decided(j, "second")
                continue
            failed += 1
            first_label = firsts[i].label
            if first_label is None:
                out[i] = dataclasses.replace(out[i], note=j.note)
            elif keep:
                kept += 1
                out[i] = dataclasses.replace(
                    out[i],
                    note=f"second judge gave no label ({j.note}); the first "
                    "judge's label is kept (on_second_failure=keep_first)",
                )
            else:
                out[i] = dataclasses.replace(
                    out[i],
                    label=None,
                    probs=None,
                    decided_by=None,
                    note=f"second judge gave no label ({j.note}); unscored (the first judge said {first_label}; "
                    "on_second_failure=keep_first would keep it)",
                )
        self.count("pairs", len(pairs))
        self.count("escalated", len(up))
        self.count("escalated_unsure", len(unsure))
        self.count("escalated_flip_only", len(flip - unsure))
        self.count("decided_by_second", len(up) - failed)
        self.count("second_failed", failed)
        if kept:
            self.count("second_unscored_first_kept", kept)
        return out

    def close(self) -> None:
        for c in self._caches.values():
            c.close()
        self._caches = {}
        for j in self._judges.values():
            j.close()


def _decided(j: Judgment, which: str) -> Judgment:
    """``j`` as this cascade's judgment: source ``judge``, ``decided_by`` naming ``which`` judge."""
    by = which if j.decided_by is None else f"{which}/{j.decided_by}"
    return dataclasses.replace(j, source="judge", decided_by=by)


__all__ = ["CascadeConfig", "CascadeJudge", "alternatives", "escalations", "top_probability"]
