"""Passage judgments → document labels → claim verdicts (the metrics over verdicts: :mod:`.metrics`).

Pure Python on purpose: this is the part every number in a report goes through, and it
must be exact and cheap to test by hand.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Callable, Mapping, Sequence

from .types import CONTRADICT, IRRELEVANT, SUPPORT, Claim, ClaimVerdict, DocJudgment, Document, Judgment

DocumentRule = Callable[[Sequence[Judgment]], "set[int] | None"]
"""A document rule: the indices of a multi-passage document's passages that may take a side (None: all)."""

TIE = 1.5e-6
"""Probabilities closer than this are tied when passages are ranked: judges report six
decimals, and a batched forward's float noise (about 1e-7, from the other pairs in its batch)
can move the sixth decimal by one. A tie goes to the lower passage index, so the batch a pair
was judged in cannot change which passage decides (``docs/pipeline.md``)."""


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
      (ties, within :data:`TIE`: all tied; a judgment without probabilities cannot be ranked
      and may take a side);
    - ``on_topic``: only passages sharing a word with the claim that not every passage of
      the document holds (the document's subject, named in every passage, does not count).

    SUPPORT if an allowed passage is labelled SUPPORT with p(SUPPORT) ≥ ``threshold``, CONTRADICT
    likewise. A label without probabilities (an LLM reply read from its text) carries no
    confidence to compare: the threshold does not apply to it (its document judgment shows
    ``probs: null`` and the summary counts it, ``stages.labels.sided_without_probs``),
    and it ranks below every label that has probabilities. When a document has both sides,
    the higher-ranked one wins, CONTRADICT on a tie (within :data:`TIE`; between passages of
    one side the lower index wins a tie) (or, with ``keep_both``, the document
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
            if (
                cur is None
                or _beats(rank, cur[0])
                or (not _beats(cur[0], rank) and j.pair.passage.index < cur[1].pair.passage.index)
            ):
                best[j.label] = (rank, j)
    sup, con = best[SUPPORT], best[CONTRADICT]
    if sup and con and keep_both:
        shown = f"p={sup[0][1]:.3f}" if sup[0][0] else "no probabilities"
        note = f"also SUPPORT by passage {sup[1].pair.passage.index} ({shown})"
        return _doc(doc_id, con[1], n, CONTRADICT, note=note, both=True)
    if sup and con:
        decider = sup[1] if _beats(sup[0], con[0]) else con[1]
    elif sup or con:
        decider = (sup or con)[1]  # type: ignore[index]  # one of sup, con is set here
    else:
        unscored = [j for j in passages if j.label is None]
        if unscored:
            return _doc(doc_id, unscored[0], n, None)
        # every passage IRRELEVANT (or below threshold): record the passage that came
        # closest to taking a side (then the most similar one), so a user can see how near
        # the call was
        nearest = max(max(j.prob(SUPPORT), j.prob(CONTRADICT)) for j in passages)
        near = [j for j in passages if max(j.prob(SUPPORT), j.prob(CONTRADICT)) >= nearest - TIE]
        decider = max(near, key=lambda j: (j.pair.similarity or -1.0, -j.pair.passage.index))
        return _doc(doc_id, decider, n, IRRELEVANT)
    return _doc(doc_id, decider, n, decider.label)


_WORD = re.compile(r"[^\W_]+")
_STOP = frozenset(
    """about above after again against also among because been before being below between both
could does doing down during each from further have having here into more most other over same should some such
than that their them then there these they this those through under until very were what when where which while
whom with would your""".split()
)


def topic_words(text: str) -> set[str]:
    """Lower-cased words of four or more letters that are not function words, and numbers."""
    return {w for w in _WORD.findall(text.casefold()) if (len(w) >= 4 and w not in _STOP) or w.isdigit()}


def _every_passage(passages: Sequence[Judgment]) -> set[int] | None:
    """``max``: every passage may take a side (the strongest decides)."""
    return None


def _most_relevant(passages: Sequence[Judgment]) -> set[int] | None:
    """``relevant``: the passages the judge finds least IRRELEVANT (and those without probabilities)."""
    ranked = [
        (float(j.probs[IRRELEVANT]), k) for k, j in enumerate(passages) if j.probs is not None and IRRELEVANT in j.probs
    ]
    if not ranked:
        return None
    low = min(p for p, _ in ranked)
    unranked = {k for k, j in enumerate(passages) if j.probs is None or IRRELEVANT not in j.probs}
    return {k for p, k in ranked if p <= low + TIE} | unranked


def _on_topic(passages: Sequence[Judgment]) -> set[int] | None:
    """``on_topic``: the passages sharing a topic word with the claim that not every passage has."""
    claim = topic_words(passages[0].pair.claim.text)
    words = [topic_words(j.pair.passage.text) for j in passages]
    common = set.intersection(*words)
    return {k for k, w in enumerate(words) if (claim & w) - common}


DOCUMENT_RULES: dict[str, DocumentRule] = {"max": _every_passage, "relevant": _most_relevant, "on_topic": _on_topic}
"""Which passages of a long document may decide its label (see :func:`document_judgment`), by name: the
registry's ``document_rule`` namespace (a plugin's rule is added here)."""


def _allowed(passages: Sequence[Judgment], rule: str) -> set[int] | None:
    """Indices of the passages that may take a side under ``rule`` (None: all)."""
    return DOCUMENT_RULES[rule](passages)


def _beats(a: tuple[int, float], b: tuple[int, float]) -> bool:
    """Whether side rank ``a`` is above ``b`` by more than a tie (:data:`TIE`)."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] > b[1] + TIE)


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
        label=label,  # type: ignore[arg-type]  # callers pass a Label or None
        probs=j.probs,
        source=j.source,
        passage=j.pair.passage.index if n > 1 else None,
        n_passages=n,
        similarity=j.pair.similarity,
        note=note if note is not None else j.note,
        both=both,
        passage_span=j.pair.passage.span if n > 1 else None,
        decided_by=j.decided_by,
        rule=j.rule,
    )


def claim_verdict(
    claim: Claim,
    doc_judgments: Sequence[DocJudgment],
    *,
    weights: Mapping[str, float] | None = None,
    min_side_weight: float | None = None,
) -> ClaimVerdict:
    """Split documents into D+, D−, irrelevant and unscored for one claim.

    A document judged ``both`` (see ``document_judgment(keep_both=True)``) is in D+ and D−.
    ``weights`` (document id → reliability, given when the item's documents carry any) are
    recorded on the document judgments, and ``min_side_weight`` on the verdict, for the
    weighted metrics; a document missing from ``weights`` counts 1.0.
    """
    if weights is not None:
        if min_side_weight is None:
            raise ValueError("weights given without min_side_weight")
        doc_judgments = [replace(d, weight=float(weights.get(d.doc_id, 1.0))) for d in doc_judgments]
    else:
        min_side_weight = None
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
    return ClaimVerdict(claim, tuple(sup), tuple(con), tuple(irr), tuple(uns), tuple(doc_judgments), min_side_weight)


def document_weights(documents: Sequence[Document]) -> dict[str, float] | None:
    """Each document's reliability weight (1.0 where not given), or None when no document of
    the item gives one: the weighted metrics are then undefined for it."""
    if all(d.reliability is None for d in documents):
        return None
    return {d.id: 1.0 if d.reliability is None else float(d.reliability) for d in documents}


__all__ = ["claim_verdict", "document_judgment", "document_weights", "side_rank"]
