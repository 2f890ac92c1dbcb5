"""No text in both a training and an evaluation split: the index, the filter and the check.

A judge that has seen a document during training may remember it, whatever claim it was
paired with; splitting by claim alone lets the same evidence sit in train and test. Two
texts are the same here when they are equal after :func:`~conflictscore_local.bench.split.normalize_text`,
or when they share a sentence of at least :data:`MIN_SENTENCE_WORDS` words (so a snippet
cut from an abstract counts as that abstract, and a passage of a document as the
document). Claims are compared as whole normalised texts.

Used by ``bench build`` (train items lose the documents and claims that dev/test use) and
by ``train-judge prepare`` (training pairs that touch any evaluation text are dropped);
both then run :func:`check_disjoint`, which fails the build when anything is left.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Sequence

from ..core.chunk import split_sentences
from ..core.errors import InputError
from ..core.types import CONTRADICT, SUPPORT
from .split import normalize_text

MIN_SENTENCE_WORDS = 6


@lru_cache(maxsize=200_000)
def text_keys(text: str) -> frozenset[str]:
    """The normalised text and its normalised sentences of at least :data:`MIN_SENTENCE_WORDS` words."""
    keys = {normalize_text(text)}
    for a, b in split_sentences(text):
        sentence = normalize_text(text[a:b])
        if len(sentence.split()) >= MIN_SENTENCE_WORDS:
            keys.add(sentence)
    keys.discard("")
    return frozenset(keys)


@dataclass
class TextIndex:
    """The documents and claims of the evaluation side, to test training texts against."""

    documents: set[str] = field(default_factory=set)
    claims: set[str] = field(default_factory=set)

    def add_document(self, text: str) -> None:
        self.documents |= text_keys(text)

    def add_claim(self, text: str) -> None:
        self.claims.add(normalize_text(text))

    def document_leaks(self, text: str) -> bool:
        """Whether ``text`` is (or shares a sentence with) an indexed document."""
        return not self.documents.isdisjoint(text_keys(text))

    def claim_leaks(self, text: str) -> bool:
        return normalize_text(text) in self.claims


@dataclass(frozen=True)
class Leaks:
    """Training documents and claims found on the evaluation side, with a few examples."""

    documents: int
    claims: int
    examples: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        return self.documents + self.claims

    def as_dict(self) -> dict[str, int]:
        return {"documents": self.documents, "claims": self.claims}


def find_leaks(index: TextIndex, documents: Iterable[str], claims: Iterable[str], *, examples: int = 3) -> Leaks:
    """Count the training ``documents`` and ``claims`` (one entry per use) that ``index`` holds."""
    n_docs = n_claims = 0
    shown: list[str] = []
    for text in documents:
        if index.document_leaks(text):
            n_docs += 1
            if len(shown) < examples:
                shown.append(f"document {text[:80]!r}")
    for text in claims:
        if index.claim_leaks(text):
            n_claims += 1
            if len(shown) < examples:
                shown.append(f"claim {text[:80]!r}")
    return Leaks(n_docs, n_claims, tuple(shown))


def check_disjoint(leaks: Leaks, *, what: str, path: str | None = None) -> None:
    """Fail (``InputError``, exit 2) when any training text is also an evaluation text."""
    if leaks.total:
        raise InputError(
            f"{what}: {leaks.documents} training document(s) and {leaks.claims} training claim(s) also occur in an "
            f"evaluation split (same normalised text, or a shared sentence of >= {MIN_SENTENCE_WORDS} words), e.g. "
            + "; ".join(leaks.examples),
            path=path,
        )


def eval_index(items: Iterable[dict[str, Any]], splits: tuple[str, ...] = ("dev", "test")) -> TextIndex:
    """The documents and claims of the ConflictBench items of ``splits``."""
    index = TextIndex()
    for it in items:
        if it["split"] in splits:
            for d in it["documents"]:
                index.add_document(d["text"])
            for c in it["claims"]:
                index.add_claim(c)
    return index


def bench_leaks(items: Sequence[dict[str, Any]]) -> Leaks:
    """Claim × document pairs of train items whose document, and train claims, that dev/test also use."""
    index = eval_index(items)
    train = [it for it in items if it["split"] == "train"]
    docs = (d["text"] for it in train for _ in it["claims"] for d in it["documents"])
    return find_leaks(index, docs, (c for it in train for c in it["claims"]))


def separate_splits(
    items: Sequence[dict[str, Any]], index: TextIndex | None = None
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Train items without the documents and claims that a dev or test item uses.

    Splits are assigned by claim or question (``split_for``), but evidence is shared
    across claims (a Climate-FEVER sentence is evidence for many claims; EN555 reuses
    Climate-FEVER and HealthVer evidence): the training side gives way, so dev and test keep
    every item. A train item loses the leaking documents (columns of ``gold_labels``) and
    claims (rows); ``gold_conflicted`` and ``conflict_type`` are recomputed; an item left
    with no claim or no document is dropped. ``index`` (default: the dev and test items')
    holds the evaluation texts. Returns the items and what was removed.
    """
    index = index if index is not None else eval_index(items)
    out: list[dict[str, Any]] = []
    removed = {"documents": 0, "claims": 0, "pairs": 0, "items": 0}
    for it in items:
        if it["split"] != "train":
            out.append(it)
            continue
        keep_d = [j for j, d in enumerate(it["documents"]) if not index.document_leaks(d["text"])]
        keep_c = [i for i, c in enumerate(it["claims"]) if not index.claim_leaks(c)]
        if len(keep_d) == len(it["documents"]) and len(keep_c) == len(it["claims"]):
            out.append(it)
            continue
        removed["documents"] += len(it["documents"]) - len(keep_d)
        removed["claims"] += len(it["claims"]) - len(keep_c)
        removed["pairs"] += len(it["claims"]) * len(it["documents"]) - len(keep_c) * len(keep_d)
        if not keep_d or not keep_c:
            removed["items"] += 1
            continue
        rows = [[it["gold_labels"][i][j] for j in keep_d] for i in keep_c]
        conflicted = [SUPPORT in r and CONTRADICT in r for r in rows]
        out.append(
            {
                **it,
                "documents": [it["documents"][j] for j in keep_d],
                "claims": [it["claims"][i] for i in keep_c],
                "response": " ".join(it["claims"][i] for i in keep_c),
                "gold_labels": rows,
                "gold_conflicted": conflicted,
                "conflict_type": it["conflict_type"] if any(conflicted) else "none",
            }
        )
    return out, removed
