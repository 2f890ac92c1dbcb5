"""The metric table: every per-item number ConflictScore reports, defined once.

A :class:`Metric` is a key (``cs_c``), how people read it (label, table column, help text),
which way is better, and its function over one item's claim verdicts. Everything that shows
metrics reads :data:`METRICS`, in its order: the item metrics of every output line, the macro
and micro averages and their bootstrap intervals in the summary, the CLI's text, the HTML
report and the harness integrations. A new metric is one entry here, plus its test.

Pure Python but for the bootstrap, a thousand resamples of every item: numpy (imported when
it runs), as the pure-Python loop took minutes for 200k items
(``benchmarks/results/decisions/bootstrap_speed.md``).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from .labels import decided
from .types import CONTRADICT, IRRELEVANT, SUPPORT, ClaimVerdict, ItemMetrics, ItemResult


@dataclass(frozen=True)
class Metric:
    """One per-item metric: ``compute(verdicts)`` over an item's claim verdicts, None where undefined.

    ``label``: its name in prose and headings; ``column``: in a narrow table column; ``code``:
    its key in the HTML report's item index; ``higher_is_better``: the direction a reader should
    take it in (None: neither). ``optional``: shown only where some item has a value (the
    weighted metrics, defined for items whose documents carry reliability); a standard metric
    is always listed, None where undefined. ``bounds``: the values it can take (each a share or a
    ratio: 0 to 1), what a ``--fail-if`` threshold is checked against.
    """

    key: str
    label: str
    column: str
    code: str
    help: str
    higher_is_better: bool | None
    compute: Callable[[Sequence[ClaimVerdict]], float | None]
    optional: bool = False
    bounds: tuple[float, float] = (0.0, 1.0)


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def _share(verdicts: Sequence[ClaimVerdict], test: Callable[[ClaimVerdict], bool]) -> float | None:
    return sum(1 for v in verdicts if test(v)) / len(verdicts) if verdicts else None


def conflicted_share(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """CS-C: conflicted claims / claims."""
    return _share(verdicts, lambda v: v.conflicted)


def conflict_ratio(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """CS-R: the mean of |D−| / (|D+| + |D−|) over conflicted claims."""
    return _mean([v.ratio for v in verdicts if v.conflicted])  # type: ignore[misc]  # a conflicted claim has a ratio


def evidenced_ratio(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """cs_r_evidenced: the same ratio over every claim some document takes a side on."""
    return _mean([v.ratio for v in verdicts if v.evidenced])  # type: ignore[misc]  # an evidenced claim has a ratio


def support_rate(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """Claims with a supporting document / claims: what a pooled metric reports."""
    return _share(verdicts, lambda v: bool(v.support))


def weighted_conflicted_share(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """cs_c_weighted: the share of claims that are conflicted with each side weighing at least
    ``aggregate.min_side_weight`` (over the claims whose documents carry reliability weights)."""
    return _share([v for v in verdicts if v.weighted], lambda v: bool(v.weighted_conflicted))


def weighted_conflict_ratio(verdicts: Sequence[ClaimVerdict]) -> float | None:
    """cs_r_weighted: the mean over conflicted claims (those CS-R averages over) of
    Σ_{D−} w / (Σ_{D+} w + Σ_{D−} w), over the claims whose documents carry weights."""
    return _mean([r for v in verdicts if v.weighted and v.conflicted and (r := v.weighted_ratio) is not None])


METRICS: dict[str, Metric] = {
    m.key: m
    for m in (
        Metric(
            "cs_c",
            "CS-C",
            "CS-C",
            "cc",
            "share of claims that some document supports and another contradicts",
            False,
            conflicted_share,
        ),
        Metric("cs_r", "CS-R", "CS-R", "cr", "mean |D−| / (|D+| + |D−|) over conflicted claims", False, conflict_ratio),
        Metric(
            "cs_r_evidenced",
            "cs_r_evidenced",
            "cs_r_evid.",
            "ce",
            "the same ratio over every claim some document takes a side on",
            False,
            evidenced_ratio,
        ),
        Metric(
            "support_rate",
            "support rate",
            "support",
            "sr",
            "share of claims with a supporting document: what a pooled metric reports",
            True,
            support_rate,
        ),
        Metric(
            "cs_c_weighted",
            "CS-C weighted",
            "CS-C w.",
            "cw",
            "share of claims conflicted with each side weighing at least aggregate.min_side_weight "
            "(document reliability)",
            False,
            weighted_conflicted_share,
            optional=True,
        ),
        Metric(
            "cs_r_weighted",
            "CS-R weighted",
            "CS-R w.",
            "rw",
            "mean Σ_{D−} w / (Σ_{D+} w + Σ_{D−} w) over conflicted claims (w: document reliability)",
            False,
            weighted_conflict_ratio,
            optional=True,
        ),
    )
}
"""The metric table, in the order every output lists the metrics."""


def no_score(verdicts: Sequence[ClaimVerdict]) -> bool:
    """Whether claims were judged against documents and not one judgment got a label (a judge whose every
    reply was unreadable, a server that never answered): then every metric is "no score" (None), never the
    0 that counting those claims as unconflicted would make. Claims with no document to judge are no such
    case (CS-C 0 by construction)."""
    judged = [j for v in verdicts for j in v.judgments]
    return bool(judged) and all(j.label is None for j in judged)


def nothing_scored(pairs: Mapping[str, Any] | None) -> bool:
    """Whether a run's pair counts (a summary's ``pairs``) say it judged pairs and gave not one of them a
    label: every metric of it is "no score", with no interval (what the console, the pages and ``view`` say)."""
    pairs = pairs or {}
    return bool(pairs.get("total")) and pairs.get("unscored") == pairs.get("total")


def item_metrics(verdicts: Sequence[ClaimVerdict]) -> ItemMetrics:
    """Every standard metric of the table for one item (None where undefined, and all of them None where
    nothing was scored: :func:`no_score`), and each optional one where it is defined."""
    if no_score(verdicts):
        return ItemMetrics(len(verdicts), {k: None for k, m in METRICS.items() if not m.optional})
    values = {k: m.compute(verdicts) for k, m in METRICS.items()}
    return ItemMetrics(len(verdicts), {k: v for k, v in values.items() if v is not None or not METRICS[k].optional})


def standard_keys() -> list[str]:
    """The keys of the table's standard (not optional) metrics, in table order."""
    return [k for k, m in METRICS.items() if not m.optional]


def shown_keys(metrics: Iterable[ItemMetrics]) -> list[str]:
    """The table's keys a set of items reports, in table order: every standard metric, and an
    optional one where some item has a value."""
    present = {k for m in metrics for k in m.values}
    return [k for k, m in METRICS.items() if not m.optional or k in present]


def defined(metrics: Iterable[ItemMetrics], key: str) -> list[float]:
    """The values of metric ``key`` over items, leaving out the items where it is undefined."""
    return [v for m in metrics if (v := m.get(key)) is not None]


def macro(metrics: Sequence[ItemMetrics]) -> dict[str, float | None]:
    """Mean over items of each per-item value that is not None (the keys of :func:`shown_keys`)."""
    return {k: _mean(defined(metrics, k)) for k in shown_keys(metrics)}


def micro(results: Sequence[ItemResult]) -> dict[str, float | None]:
    """The metrics pooled over all claims of all items, as if they were one item."""
    return dict(item_metrics([v for r in results for v in r.verdicts]).values)


BOOTSTRAP_BLOCK = 1 << 22
"""Indices drawn at once by :func:`bootstrap_columns` (32 MiB of int64): memory stays flat for any number of items."""


def bootstrap_columns(
    columns: Mapping[str, Sequence[float]],
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap interval of the mean of each column of plain numbers.

    Each column's ``n`` values are resampled with replacement: ``n_resamples`` means of ``n``
    draws, and the interval is their ``(1 - level) / 2`` and ``1 - (1 - level) / 2`` quantiles,
    linearly interpolated. One numpy generator (PCG64 from ``seed``) draws for all columns in
    their order, vectorised in blocks of resamples. None for a column of fewer than two values.

    Values repeat a lot (``cs_c`` of a 3-claim item is 0, 1/3, 2/3 or 1): when a column has at
    most an eighth as many distinct values as values, a resample is drawn as multinomial counts
    over the distinct values, the same distribution as ``n`` index draws at a cost that grows
    with the distinct values rather than the items (measured: ``benchmarks/results/decisions/bootstrap_speed.md``).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    out: dict[str, tuple[float, float] | None] = {}
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    for k, column in columns.items():
        vals = np.asarray(column, dtype=np.float64)
        n = len(vals)
        if n < 2 or n_resamples < 1:
            out[k] = None
            continue
        distinct, counts = np.unique(vals, return_counts=True)
        grouped = len(distinct) * 8 <= n
        means = np.empty(n_resamples, dtype=np.float64)
        block = max(1, BOOTSTRAP_BLOCK // (len(distinct) if grouped else n))
        for start in range(0, n_resamples, block):
            rows = min(block, n_resamples - start)
            if grouped:
                means[start : start + rows] = rng.multinomial(n, counts / n, size=rows) @ distinct / n
            else:
                means[start : start + rows] = vals[rng.integers(0, n, size=(rows, n))].mean(axis=1)
        lo, hi = np.quantile(means, [lo_q, hi_q])
        out[k] = (float(lo), float(hi))
    return out


def bootstrap_ci(
    metrics: Sequence[ItemMetrics],
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap interval over items of each macro value: the items where a metric is
    defined are resampled (the macro skips the others), metrics in table order
    (:func:`bootstrap_columns`)."""
    return bootstrap_columns(
        {k: defined(metrics, k) for k in shown_keys(metrics)}, n_resamples=n_resamples, level=level, seed=seed
    )


def bootstrap_mean_ci(
    values: Sequence[float], *, n_resamples: int = 1000, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (e.g. 0/1 correctness per
    question), drawn exactly as the macro CS-C's is: one resampling implementation for every
    interval a report shows. None with fewer than two values."""
    return bootstrap_columns({"mean": values}, n_resamples=n_resamples, level=level, seed=seed)["mean"]


def pair_counts(results: Iterable[ItemResult]) -> dict[str, int]:
    """Document-level judgment counts by source, plus unscored, over a set of results."""
    c: Counter[str] = Counter()
    total = 0
    unscored = 0
    for r in results:
        for v in r.verdicts:
            for j in v.judgments:
                total += 1
                c[j.source] += 1
                unscored += j.label is None
    return {
        "total": total,
        "judged": c["judge"],
        "pruned": c["pruned"],
        "cached": c["cache"],
        "given": c["given"],
        "unscored": unscored,
    }


def label_counts(results: Iterable[ItemResult]) -> dict[str, Any]:
    """How many claim × document judgments carry each label (None → ``unscored``), and
    ``sided_without_probs``: SUPPORT / CONTRADICT labels a model gave without probabilities
    (text-read LLM replies), to which ``aggregate.threshold`` does not apply; ``rules`` (when a judge
    named one): per decision rule, how many labels each part of it gave (``{"thresholds S>=0.45
    C>=0.30": {"C>=0.30": 6, "S>=0.45": 5, "neither threshold": 7}}``; ``reply text`` for a label read
    from a reply)."""
    c: Counter[str] = Counter()
    rules: dict[str, Counter[str]] = {}
    for r in results:
        for v in r.verdicts:
            for j in v.judgments:
                c[j.label or "unscored"] += 1
                c["sided_without_probs"] += j.label in (SUPPORT, CONTRADICT) and j.probs is None and j.source != "given"
                if j.rule is not None and j.label is not None:
                    rules.setdefault(j.rule, Counter())[decided(j.probs, j.rule) or j.rule] += 1
    out: dict[str, Any] = {k: c[k] for k in (SUPPORT, CONTRADICT, IRRELEVANT, "unscored", "sided_without_probs")}
    if rules:
        out["rules"] = {rule: dict(sorted(n.items())) for rule, n in sorted(rules.items())}
    return out


def summarize_metrics(results: Sequence[ItemResult], *, seed: int = 0, n_resamples: int = 1000) -> Mapping[str, Any]:
    """The dataset-level numbers of a report: macro, micro, ci95, pair and label counts."""
    ms = [r.metrics for r in results]
    return {
        "n_items": len(results),
        "n_claims": sum(m.n_claims for m in ms),
        "macro": macro(ms),
        "micro": micro(results),
        "ci95": bootstrap_ci(ms, seed=seed, n_resamples=n_resamples),
        "pairs": pair_counts(results),
        "labels": label_counts(results),
    }


__all__ = [
    "METRICS",
    "Metric",
    "bootstrap_ci",
    "bootstrap_columns",
    "bootstrap_mean_ci",
    "defined",
    "item_metrics",
    "label_counts",
    "macro",
    "micro",
    "pair_counts",
    "shown_keys",
    "standard_keys",
    "summarize_metrics",
]
