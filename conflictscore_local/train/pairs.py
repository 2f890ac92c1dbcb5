"""Training pairs from claims against corpus documents, built the way the judge will see them.

For a claim and a document with a label and rationale sentences (:class:`~.sources.ClaimRecord`):

- ``rationale``: the rationale sentences alone → the label (short, like snippet evidence);
- ``abstract``: the whole document split into passages by the judge's own chunker
  (:func:`~conflictscore_local.judge.nli.passage_budget`), the passage holding most of the
  rationale → the label (long, like a retrieved document). For an IRRELEVANT (NEI)
  document every passage is irrelevant; the one sharing most words with the claim is the
  hardest, and the one used;
- ``hard_negative``: a passage of a SUPPORT / CONTRADICT document that holds no rationale
  sentence → IRRELEVANT (when the document has more than one passage), else a
  non-rationale sentence of it;
- ``easy_negative``: a passage of a random document of the same corpus that the claim does
  not cite → IRRELEVANT.
"""

from __future__ import annotations

import random
import re
from typing import Iterable, Sequence

from ..core.chunk import Chunker
from ..core.types import IRRELEVANT, Document
from .sources import ClaimRecord, Corpus, LabelledPair, document_text

_WORD = re.compile(r"\w+")


def content_words(text: str) -> set[str]:
    """Lower-cased words longer than three characters, and numbers."""
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 3 or w.isdigit()}


def _closest(claim: str, texts: Sequence[str]) -> int:
    """Index of the text sharing most content words with the claim (the first on ties)."""
    cw = content_words(claim)
    return max(range(len(texts)), key=lambda i: (len(cw & content_words(texts[i])), -i))


def sentence_spans(sentences: Sequence[str]) -> list[tuple[int, int]]:
    """Character spans of the sentences in :func:`~.sources.document_text` of them."""
    spans, pos = [], 0
    for s in sentences:
        s = s.strip()
        if not s:
            spans.append((pos, pos))
            continue
        spans.append((pos, pos + len(s)))
        pos += len(s) + 1
    return spans


def claim_pairs(
    rec: ClaimRecord,
    corpus: Corpus,
    chunker: Chunker,
    rng: random.Random,
    *,
    easy_negatives: int = 1,
    hard_negatives: bool = True,
    pool: Sequence[str] = (),
) -> list[LabelledPair]:
    """The pairs of one claim (see the module docstring); ``pool`` holds the corpus document
    ids random easy negatives may be drawn from (the claim's own documents are skipped)."""
    out: list[LabelledPair] = []
    src = rec.source
    for ev in rec.evidence:
        sentences = corpus[ev.doc_id]
        text = document_text(sentences)
        if not text:
            continue
        spans = sentence_spans(sentences)
        passages = chunker.passages("", Document(ev.doc_id, text))
        rationale = [spans[i] for i in ev.rationale if spans[i][1] > spans[i][0]]

        def held(p_span: tuple[int, int]) -> int:
            return sum(1 for a, b in rationale if a < p_span[1] and b > p_span[0])

        if rationale:
            out.append(
                LabelledPair(
                    rec.claim, " ".join(sentences[i].strip() for i in ev.rationale), ev.label, src, "rationale"
                )
            )
        if ev.label == IRRELEVANT or not rationale:
            if ev.label == IRRELEVANT:
                k = _closest(rec.claim, [p.text for p in passages])
                out.append(LabelledPair(rec.claim, passages[k].text, IRRELEVANT, src, "abstract"))
            continue
        counts = [held(p.span) for p in passages]  # type: ignore[arg-type]  # the chunker's passages carry their spans
        best = max(range(len(passages)), key=lambda i: (counts[i], -i))
        out.append(LabelledPair(rec.claim, passages[best].text, ev.label, src, "abstract"))
        if not hard_negatives:
            continue
        free = [p.text for p, c in zip(passages, counts) if c == 0]
        if free:
            out.append(LabelledPair(rec.claim, free[_closest(rec.claim, free)], IRRELEVANT, src, "hard_negative"))
        else:
            others = [
                sentences[i].strip()
                for i in range(len(sentences))
                if i not in ev.rationale and len(sentences[i].split()) >= 6
            ]
            if others:
                out.append(
                    LabelledPair(rec.claim, others[_closest(rec.claim, others)], IRRELEVANT, src, "hard_negative")
                )
    own = {e.doc_id for e in rec.evidence}
    for _ in range(easy_negatives if pool else 0):
        doc_id = rng.choice(pool)
        if doc_id in own:
            continue
        text = document_text(corpus[doc_id])
        if text:
            passages = chunker.passages("", Document(doc_id, text))
            out.append(LabelledPair(rec.claim, rng.choice(passages).text, IRRELEVANT, src, "easy_negative"))
    return out


def corpus_pairs(
    records: Iterable[ClaimRecord],
    corpus: Corpus,
    chunker: Chunker,
    rng: random.Random,
    *,
    easy_negatives: int = 1,
    hard_negatives: bool = True,
    pool: Sequence[str] = (),
) -> list[LabelledPair]:
    """:func:`claim_pairs` of every record."""
    return [
        p
        for rec in records
        for p in claim_pairs(
            rec, corpus, chunker, rng, easy_negatives=easy_negatives, hard_negatives=hard_negatives, pool=pool
        )
    ]


def cap(
    pairs: Sequence[LabelledPair], per_label: dict[str, int] | int | None, rng: random.Random
) -> list[LabelledPair]:
    """At most ``per_label[label]`` pairs of each label (an int caps every label), sampled
    without replacement in a seeded order; None keeps all."""
    if per_label is None:
        return list(pairs)
    out = []
    for label in dict.fromkeys(p.label for p in pairs):
        group = [p for p in pairs if p.label == label]
        limit = per_label if isinstance(per_label, int) else per_label.get(label, len(group))
        out.extend(group if len(group) <= limit else rng.sample(group, limit))
    return out
