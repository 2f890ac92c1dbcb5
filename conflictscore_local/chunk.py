"""Split documents into passages that fit the judge's window.

Passages follow sentence boundaries, carry a small overlap (whole sentences) so a fact
that straddles a boundary is seen whole once, and keep their character span in the
document. The token counter comes from the judge (its own tokenizer); without one a
whitespace word count stands in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

from .types import Document, Passage

CountFn = Callable[[str], int]

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) and whitespace,
# unless the word before the dot is a known abbreviation, an initial, or a number.
_ABBREV = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "vs", "etc", "e.g", "i.e", "cf",
    "no", "vol", "fig", "al", "inc", "ltd", "co", "corp", "jan", "feb", "mar", "apr", "jun",
    "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "gen", "gov", "sen",
    "rep", "approx", "est", "dept", "univ",
}
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (whitespace between them excluded)."""
    spans: list[tuple[int, int]] = []
    start = 0
    n = len(text)
    for m in _BOUNDARY.finditer(text):
        end = m.start() + 1
        word = re.search(r"([\w.]+)$", text[start:end - 1])
        w = word.group(1).lower() if word else ""
        if text[end - 1] == "." and (w in _ABBREV or (len(w) == 1 and w.isalpha()) or re.fullmatch(r"(\w\.)+\w", w)):
            continue
        nxt = text[m.end():m.end() + 1]
        if nxt and nxt.islower():
            continue
        seg_end = m.end() - len(m.group(0)) + len(m.group(0).rstrip())
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
    """Pack sentences into passages of at most ``max_tokens`` tokens.

    ``overlap`` sentences of a passage are repeated at the start of the next. A sentence
    longer than the budget on its own is cut at word boundaries.
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
        units: list[tuple[int, int, int]] = []  # (start, end, tokens)
        for a, b in split_sentences(text):
            t = self.count(text[a:b])
            if t <= self.max_tokens:
                units.append((a, b, t))
            else:
                units.extend(self._cut(text, a, b))
        groups: list[list[tuple[int, int, int]]] = []
        cur: list[tuple[int, int, int]] = []
        cur_t = 0
        for u in units:
            if cur and cur_t + u[2] > self.max_tokens:
                groups.append(cur)
                keep = cur[len(cur) - self.overlap:] if self.overlap else []
                # the overlap never pushes the next passage past the budget
                while keep and sum(k[2] for k in keep) + u[2] > self.max_tokens:
                    keep = keep[1:]
                cur, cur_t = list(keep), sum(k[2] for k in keep)
            cur.append(u)
            cur_t += u[2]
        if cur:
            groups.append(cur)
        return [
            Passage(item_id, doc.id, i, text[g[0][0]:g[-1][1]], (g[0][0], g[-1][1])) for i, g in enumerate(groups)
        ]

    def _cut(self, text: str, a: int, b: int) -> list[tuple[int, int, int]]:
        words = [(m.start() + a, m.end() + a) for m in re.finditer(r"\S+", text[a:b])]
        out: list[tuple[int, int, int]] = []
        i = 0
        while i < len(words):
            j = i + 1
            while j < len(words) and self.count(text[words[i][0]:words[j][1]]) <= self.max_tokens:
                j += 1
            s, e = words[i][0], words[j - 1][1]
            out.append((s, e, self.count(text[s:e])))
            i = j
        return out

    def split(self, item_id: str, docs: Sequence[Document]) -> list[Passage]:
        """All passages of an item's documents, in document order."""
        return [p for d in docs for p in self.passages(item_id, d)]
