"""Passage judgments → document labels → claim verdicts → ConflictScore metrics.

Pure Python on purpose: this is the part every number in a report goes through, and it
must be exact and cheap to test by hand. The one exception is the bootstrap, a thousand
resamples of every item: numpy (imported when it runs), as the pure-Python loop took
minutes for 200k items (``benchmarks/results/bootstrap_speed.md``).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Iterable, Mapping, Sequence

from .types import (
    CONTRADICT,
    IRRELEVANT,
    SUPPORT,
    Claim,
    ClaimVerdict,
    DocJudgment,
    ItemMetrics,
    ItemResult,
    Judgment,
)

METRIC_KEYS: tuple[str, ...] = ("cs_c", "cs_r", "cs_r_evidenced", "support_rate")


DOCUMENT_RULES: tuple[str, ...] = ("max", "relevant", "on_topic")
"""Which passages of a long document may decide its label (see :func:`document_judgment`)."""


def document_judgment(
    doc_id: str,
    passages: Sequence[Judgment],
    *,
    threshold: float = 0.0,
    keep_both: bool = False,
    rule: str = "max",
) -> DocJudgment:
    """Decide a claim's label against a document from its passages' judgments.

    ``rule`` says which passages of a multi-passage document may take a side (a one-passage
    document is the same under every rule), so that one off-topic passage cannot decide:

    - ``max``: every passage;
    - ``relevant``: only the most relevant passage, the one with the lowest p(IRRELEVANT)
      (ties: all tied; a judgment without probabilities cannot be ranked and may take a side);
    - ``on_topic``: only passages sharing a word with the claim that not every passage of
      the document holds (the document's subject, named in every passage, does not count).

    SUPPORT if an allowed passage is labelled SUPPORT with p(SUPPORT) ≥ ``threshold``, CONTRADICT
    likewise. A label without probabilities (an LLM reply read from its text) carries no
    confidence to compare: the threshold does not apply to it (its document judgment shows
    ``probs: null`` and the summary counts it, ``stages.labels.sided_without_probs``),
    and it ranks below every label that has probabilities. When a document has both sides,
    the higher-ranked one wins, CONTRADICT on a tie (or, with ``keep_both``, the document
    counts on both sides and the label is CONTRADICT, the rarer and costlier signal). When
    no passage takes a side and some passage is unscored, the document is unscored: an
    IRRELEVANT verdict would be a guess.
    """
    if not passages:
        raise ValueError(f"document {doc_id!r} has no passage judgments")
    if rule not in DOCUMENT_RULES:
        raise ValueError(f"document rule {rule!r}; allowed: {', '.join(DOCUMENT_RULES)}")
    n = len(passages)
    allowed = _allowed(passages, rule) if n > 1 else None
    best: dict[str, tuple[tuple[int, float], Judgment] | None] = {SUPPORT: None, CONTRADICT: None}
    for k, j in enumerate(passages):
        if j.label in best and (allowed is None or k in allowed):
            rank = side_rank(j)
            if rank is None or (rank[0] == 1 and rank[1] < threshold):
                continue
            cur = best[j.label]
            if cur is None or rank > cur[0]:
                best[j.label] = (rank, j)
    sup, con = best[SUPPORT], best[CONTRADICT]
    if sup and con and keep_both:
        shown = f"p={sup[0][1]:.3f}" if sup[0][0] else "no probabilities"
        note = f"also SUPPORT by passage {sup[1].pair.passage.index} ({shown})"
        return _doc(doc_id, con[1], n, CONTRADICT, note=note, both=True)
    if sup and con:
        decider = sup[1] if sup[0] > con[0] else con[1]
    elif sup or con:
        decider = (sup or con)[1]  # type: ignore[index]
    else:
        unscored = [j for j in passages if j.label is None]
        if unscored:
            return _doc(doc_id, unscored[0], n, None)
        # every passage IRRELEVANT (or below threshold): record the passage that came
        # closest to taking a side (then the most similar one), so a user can see how near
        # the call was
        decider = max(
            passages,
            key=lambda j: (max(j.prob(SUPPORT), j.prob(CONTRADICT)), j.pair.similarity or -1.0),
        )
        return _doc(doc_id, decider, n, IRRELEVANT)
    return _doc(doc_id, decider, n, decider.label)


_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset("""about above after again against also among because been before being below between both
could does doing down during each from further have having here into more most other over same should some such
than that their them then there these they this those through under until very were what when where which while
whom with would your""".split())


def topic_words(text: str) -> set[str]:
    """Lower-cased words of four or more letters that are not function words, and numbers."""
    return {w for w in _WORD.findall(text.casefold()) if (len(w) >= 4 and w not in _STOP) or w.isdigit()}


def _allowed(passages: Sequence[Judgment], rule: str) -> set[int] | None:
    """Indices of the passages that may take a side under ``rule`` (None: all)."""
    if rule == "relevant":
        ranked = [(float(j.probs[IRRELEVANT]), k) for k, j in enumerate(passages)
                  if j.probs is not None and IRRELEVANT in j.probs]
        if not ranked:
            return None
        low = min(p for p, _ in ranked)
        unranked = {k for k, j in enumerate(passages) if j.probs is None or IRRELEVANT not in j.probs}
        return {k for p, k in ranked if p == low} | unranked
    if rule == "on_topic":
        claim = topic_words(passages[0].pair.claim.text)
        words = [topic_words(j.pair.passage.text) for j in passages]
        common = set.intersection(*words)
        return {k for k, w in enumerate(words) if (claim & w) - common}
    return None


def side_rank(j: Judgment) -> tuple[int, float] | None:
    """How strongly a passage judgment takes its side: ``(1, p(label))`` with probabilities,
    ``(0, 0.0)`` without (below any judgment that has them), None when it takes no side."""
    if j.label not in (SUPPORT, CONTRADICT):
        return None
    if j.probs is None or j.label not in j.probs:
        return (0, 0.0)
    return (1, float(j.probs[j.label]))


def _doc(
    doc_id: str, j: Judgment, n: int, label: str | None, *, note: str | None = None, both: bool = False
) -> DocJudgment:
    return DocJudgment(
        doc_id=doc_id,
        label=label,  # type: ignore[arg-type]
        probs=j.probs,
        source=j.source,
        passage=j.pair.passage.index if n > 1 else None,
        n_passages=n,
        similarity=j.pair.similarity,
        note=note if note is not None else j.note,
        both=both,
        passage_span=j.pair.passage.span if n > 1 else None,
    )


def claim_verdict(claim: Claim, doc_judgments: Sequence[DocJudgment]) -> ClaimVerdict:
    """Split documents into D+, D−, irrelevant and unscored for one claim.

    A document judged ``both`` (see ``document_judgment(keep_both=True)``) is in D+ and D−.
    """
    sup: list[str] = []
    con: list[str] = []
    irr: list[str] = []
    uns: list[str] = []
    for d in doc_judgments:
        if d.label is None:
            uns.append(d.doc_id)
        elif d.label == SUPPORT:
            sup.append(d.doc_id)
        elif d.label == CONTRADICT:
            con.append(d.doc_id)
            if d.both:
                sup.append(d.doc_id)
        else:
            irr.append(d.doc_id)
    return ClaimVerdict(claim, tuple(sup), tuple(con), tuple(irr), tuple(uns), tuple(doc_judgments))


def item_metrics(verdicts: Sequence[ClaimVerdict]) -> ItemMetrics:
    """CS-C, CS-R, cs_r_evidenced and support rate of one item (None where undefined)."""
    n = len(verdicts)
    conflicted = [v.ratio for v in verdicts if v.conflicted]
    evidenced = [v.ratio for v in verdicts if v.evidenced]
    return ItemMetrics(
        n_claims=n,
        cs_c=len(conflicted) / n if n else None,
        cs_r=_mean(conflicted),  # type: ignore[arg-type]
        cs_r_evidenced=_mean(evidenced),  # type: ignore[arg-type]
        support_rate=sum(1 for v in verdicts if v.support) / n if n else None,
    )


def _mean(xs: Sequence[float]) -> float | None:
    return math.fsum(xs) / len(xs) if xs else None


def macro(metrics: Sequence[ItemMetrics]) -> dict[str, float | None]:
    """Mean over items of each per-item value that is not None."""
    return {k: _mean([v for m in metrics if (v := getattr(m, k)) is not None]) for k in METRIC_KEYS}


def micro(results: Sequence[ItemResult]) -> dict[str, float | None]:
    """The metrics pooled over all claims of all items, as if they were one item."""
    pooled = [v for r in results for v in r.verdicts]
    m = item_metrics(pooled)
    return {k: getattr(m, k) for k in METRIC_KEYS}


BOOTSTRAP_BLOCK = 1 << 22
"""Indices drawn at once by :func:`bootstrap_ci` (32 MiB of int64): memory stays flat for any number of items."""


def bootstrap_ci(
    metrics: Sequence[ItemMetrics],
    *,
    n_resamples: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> dict[str, tuple[float, float] | None]:
    """Percentile bootstrap interval over items for each macro value.

    For each metric the items where it is defined are resampled with replacement (the
    macro skips the others): ``n_resamples`` means of ``n`` draws from those ``n`` values,
    and the interval is their ``(1 - level) / 2`` and ``1 - (1 - level) / 2`` quantiles,
    linearly interpolated. One numpy generator (PCG64 from ``seed``) draws for all metrics
    in :data:`METRIC_KEYS` order, vectorised in blocks of resamples. None when fewer than
    two items have a value.

    Per-item values repeat a lot (``cs_c`` of a 3-claim item is 0, 1/3, 2/3 or 1): when
    there are at most an eighth as many distinct values as items, a resample is drawn as
    multinomial counts over the distinct values, the same distribution as ``n`` index draws
    at a cost that grows with the distinct values rather than the items (measured in
    ``benchmarks/bootstrap_speed.py``).
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    out: dict[str, tuple[float, float] | None] = {}
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    for k in METRIC_KEYS:
        vals = np.array([v for m in metrics if (v := getattr(m, k)) is not None], dtype=np.float64)
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
                means[start:start + rows] = rng.multinomial(n, counts / n, size=rows) @ distinct / n
            else:
                means[start:start + rows] = vals[rng.integers(0, n, size=(rows, n))].mean(axis=1)
        lo, hi = np.quantile(means, [lo_q, hi_q])
        out[k] = (float(lo), float(hi))
    return out


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


def label_counts(results: Iterable[ItemResult]) -> dict[str, int]:
    """How many claim × document judgments carry each label (None → ``unscored``), and
    ``sided_without_probs``: SUPPORT / CONTRADICT labels a model gave without probabilities
    (text-read LLM replies), to which ``aggregate.threshold`` does not apply."""
    c: Counter[str] = Counter()
    for r in results:
        for v in r.verdicts:
            for j in v.judgments:
                c[j.label or "unscored"] += 1
                c["sided_without_probs"] += j.label in (SUPPORT, CONTRADICT) and j.probs is None and j.source != "given"
    return {k: c[k] for k in (SUPPORT, CONTRADICT, IRRELEVANT, "unscored", "sided_without_probs")}


def summarize_metrics(
    results: Sequence[ItemResult], *, seed: int = 0, n_resamples: int = 1000
) -> Mapping[str, object]:
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


def bootstrap_mean_ci(
    values: Sequence[float], *, n_resamples: int = 1000, level: float = 0.95, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (e.g. 0/1 correctness per
    question), drawn exactly as :func:`bootstrap_ci` draws the macro CS-C: one resampling
    implementation for every interval a report shows. None with fewer than two values."""
    as_items = [ItemMetrics(1, float(v), None, None, None) for v in values]
    return bootstrap_ci(as_items, n_resamples=n_resamples, level=level, seed=seed)["cs_c"]


__all__ = [
    "METRIC_KEYS",
    "bootstrap_ci",
    "bootstrap_mean_ci",
    "claim_verdict",
    "document_judgment",
    "item_metrics",
    "label_counts",
    "macro",
    "micro",
    "pair_counts",
    "summarize_metrics",
]

