"""Split documents into passages that fit the judge's window.

Passages follow sentence boundaries (and blank lines), carry a small overlap (whole
sentences) so a fact that straddles a boundary is seen whole once, and keep their
character span in the document. The token counter comes from the judge (its own
tokenizer); without one a whitespace word count stands in. Every passage is checked with
the counter itself, not only by adding up its sentences' counts, so a judge never has to
truncate one (truncation would silently drop the passage's last sentences).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Sequence

from .types import Document, Passage

CountFn = Callable[[str], int]

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) and whitespace,
# unless the word before the dot is a known abbreviation, an initial, or a number; a blank
# line always ends one.
_ABBREV = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "cf",
    "no", "vol", "fig", "al", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun",
    "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "gen", "gov", "sen",
    "rep", "approx", "est", "dept", "univ",
}
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+|\n[ \t]*\n\s*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

Unit = tuple[int, int, int]  # (start, end, tokens)


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (whitespace between them excluded)."""
    spans: list[tuple[int, int]] = []
    start = 0
    n = len(text)
    for m in _BOUNDARY.finditer(text):
        sep = m.group(0)
        body = sep.rstrip()
        if not _BLANK_LINE.search(sep[len(body):]):
            end = m.start() + 1
            word = re.search(r"([\w.]+)$", text[start:end - 1])
            w = word.group(1).lower() if word else ""
            initial = len(w) == 1 and w.isalpha()
            if text[end - 1] == "." and (w in _ABBREV or initial or re.fullmatch(r"(\w\.)+\w", w)):
                continue
            nxt = text[m.end():m.end() + 1]
            if nxt and nxt.islower():
                continue
        seg_end = m.start() + len(body)
        if text[start:seg_end].strip():
            spans.append(_strip(text, start, seg_end))
        start = m.end()
    if text[start:n].strip():
        spans.append(_strip(text, start, n))
    return spans


def _strip(text: str, a: int, b: int) -> tuple[int, int]:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return a, b


def word_count(text: str) -> int:
    """Whitespace tokens: the stand-in token counter (about 0.75 of a subword count)."""
    return len(text.split())


@dataclass(frozen=True)
class Chunker:
    """Pack sentences into passages of at most ``max_tokens`` tokens (as ``count`` counts).

    Each passage after the first starts with up to ``overlap`` sentences of the one before
    (fewer when they would leave no room for a new sentence). A sentence longer than the
    budget on its own is cut at word boundaries, and a word longer than the budget at
    character boundaries.
    """

    max_tokens: int = 384
    overlap: int = 1
    count: CountFn = word_count

    def __post_init__(self) -> None:
        if self.max_tokens < 8:
            raise ValueError(f"chunk max_tokens must be at least 8, got {self.max_tokens}")
        if self.overlap < 0:
            raise ValueError(f"chunk overlap must be >= 0, got {self.overlap}")

    def passages(self, item_id: str, doc: Document) -> list[Passage]:
        """The passages of one document; one passage when it fits."""
        text = doc.text
        if self.count(text) <= self.max_tokens:
            return [Passage(item_id, doc.id, 0, text, (0, len(text)))]
        units: list[Unit] = []
        for a, b in split_sentences(text):
            t = self.count(text[a:b])
            units.extend([(a, b, t)] if t <= self.max_tokens else self._cut(text, a, b))
        spans = self._pack(text, units, self.overlap)
        return [Passage(item_id, doc.id, i, text[s:e], (s, e)) for i, (s, e) in enumerate(spans)]

    def split(self, item_id: str, docs: Sequence[Document]) -> list[Passage]:
        """All passages of an item's documents, in document order."""
        return [p for d in docs for p in self.passages(item_id, d)]

    def _pack(self, text: str, units: Sequence[Unit], overlap: int) -> list[tuple[int, int]]:
        """Greedy packing of units (each within budget) into spans within budget.

        Unit counts are added up to find a candidate, which is then checked with ``count``
        on the real text (whitespace between units may cost tokens) and shrunk if needed.
        """
        limit = self.max_tokens
        sums = [0, *accumulate(u[2] for u in units)]

        def real(a: int, b: int) -> int:
            return self.count(text[units[a][0]:units[b - 1][1]])

        spans: list[tuple[int, int]] = []
        n, done, a = len(units), 0, 0
        while done < n:
            while a < done and sums[done + 1] - sums[a] > limit:
                a += 1
            b = done + 1
            while b < n and sums[b + 1] - sums[a] <= limit:
                b += 1
            while b > done + 1 and real(a, b) > limit:
                b -= 1
            if a < done and real(a, b) > limit:
                a += 1
                continue
            spans.append((units[a][0], units[b - 1][1]))
            done = b
            a = max(b - overlap, a + 1)
        return spans

    def _cut(self, text: str, a: int, b: int) -> list[Unit]:
        """An over-long sentence as word-boundary pieces within budget."""
        words: list[Unit] = []
        for m in re.finditer(r"\S+", text[a:b]):
            s, e = a + m.start(), a + m.end()
            t = self.count(text[s:e])
            words.extend([(s, e, t)] if t <= self.max_tokens else self._cut_chars(text, s, e))
        return [(s, e, self.count(text[s:e])) for s, e in self._pack(text, words, 0)]

    def _cut_chars(self, text: str, a: int, b: int) -> list[Unit]:
        """An over-long word (a URL, a base64 blob) as character pieces within budget."""
        out: list[Unit] = []
        step = max(1, (b - a) // 2)
        s = a
        while s < b:
            e = min(b, s + step)
            t = self.count(text[s:e])
            while t > self.max_tokens and e - s > 1:
                e = s + max(1, (e - s) // 2)
                t = self.count(text[s:e])
            out.append((s, e, t))
            s = e
        return out
