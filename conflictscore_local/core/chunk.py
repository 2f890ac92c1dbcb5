"""Split documents into passages that fit the judge's window.

Passages follow sentence boundaries (and blank lines), carry a small overlap (whole
sentences) so a fact that straddles a boundary is seen whole once, and keep their
character span in the document. The token counter comes from the judge (its own
tokenizer); without one a whitespace word count stands in. Every passage is checked with
the counter itself, not only by adding up its sentences' counts, so a judge never has to
truncate one (truncation would silently drop the passage's last sentences).

The counter never sees more than ``max_tokens * MAX_CHARS_PER_TOKEN`` characters at once:
a document is counted sentence by sentence and passage by passage, and an over-long
sentence piece by piece, so the memory a tokenizer needs is bounded by the window, not by
the document (a 50 MB document tokenized whole takes gigabytes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Callable, Mapping, Sequence

from .types import Document, Passage

CountFn = Callable[[str], int]

SPLITTER_VERSION = 1
"""Bump when a change to the splitting moves any span: stored spans (a judgment cache's
``spans``) of another version are never read."""

# A sentence ends at . ! ? (optionally followed by closing quotes/brackets) and whitespace,
# unless the word before the dot is a known abbreviation, an initial, or a number; a blank
# line always ends one.
_ABBREV = {
    "mr",
    "mrs",
    "ms",
    "dr",
    "prof",
    "sr",
    "jr",
    "st",
    "mt",
    "vs",
    "etc",
    "e.g",
    "i.e",
    "cf",
    "no",
    "vol",
    "fig",
    "al",
    "inc",
    "ltd",
    "co",
    "corp",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
    "u.s",
    "u.k",
    "u.n",
    "gen",
    "gov",
    "sen",
    "rep",
    "approx",
    "est",
    "dept",
    "univ",
}
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+|\n[ \t]*\n\s*")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")

Unit = tuple[int, int, int]  # (start, end, tokens)

MAX_CHARS_PER_TOKEN = 32
"""Text longer than this many characters per token of budget is taken to be over budget
without counting it. Real text runs at 3–6 characters a token; a passage of text beyond 32
(long runs of whitespace, words the tokenizer maps to one unknown token) is cut smaller
than its token budget, never larger."""
_WORD = re.compile(r"\S+")


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (whitespace between them excluded)."""
    spans: list[tuple[int, int]] = []
    start = 0
    n = len(text)
    for m in _BOUNDARY.finditer(text):
        sep = m.group(0)
        body = sep.rstrip()
        if not _BLANK_LINE.search(sep[len(body) :]):
            end = m.start() + 1
            # the word before the dot; a bounded look-back keeps a run of non-boundaries linear
            word = re.search(r"([\w.]+)$", text[max(start, end - 65) : end - 1])
            w = word.group(1).lower() if word else ""
            initial = len(w) == 1 and w.isalpha()
            if text[end - 1] == "." and (w in _ABBREV or initial or re.fullmatch(r"(\w\.)+\w", w)):
                continue
            nxt = text[m.end() : m.end() + 1]
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


def is_cover(text: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether ``spans`` are passage spans of ``text`` as :class:`Chunker` makes them: at least one,
    each non-empty and within the text, starts and ends strictly increasing (passages may overlap),
    and every character outside them whitespace (nothing of the document left unjudged)."""
    if not spans:
        return False
    covered = 0
    last_start = last_end = -1
    for a, b in spans:
        if not (0 <= a < b <= len(text)) or a <= last_start or b <= last_end:
            return False
        if a > covered and text[covered:a].strip():
            return False
        covered = max(covered, b)
        last_start, last_end = a, b
    return not text[covered:].strip()


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
    memo_chars: int = 16_000_000
    """Spans already computed are kept per document text, up to this many characters of text
    in all (oldest forgotten first; a text over 1/16 of it is never kept): pooled corpora and
    sweeps hand the same documents to many items, and counting tokens is most of a warm
    rerun (benchmarks/results/speed/throughput.md). 0 turns the memo off."""
    _memo: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _memo_size: list[int] = field(default_factory=lambda: [0], init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.max_tokens < 8:
            raise ValueError(f"chunk max_tokens must be at least 8, got {self.max_tokens}")
        if self.overlap < 0:
            raise ValueError(f"chunk overlap must be >= 0, got {self.overlap}")
        if self.memo_chars < 0:
            raise ValueError(f"chunk memo_chars must be >= 0, got {self.memo_chars}")

    @property
    def max_chars(self) -> int:
        """The most characters handed to ``count`` at once."""
        return self.max_tokens * MAX_CHARS_PER_TOKEN

    def remembered(self) -> list[str]:
        """The texts whose spans are memoised now, the oldest first (the next to be forgotten)."""
        return list(self._memo)

    def remembered_chars(self) -> int:
        """How many characters of text the memo holds (at most ``memo_chars``)."""
        return self._memo_size[0]

    def _fit(self, text: str, a: int, b: int) -> int | None:
        """The token count of ``text[a:b]`` when it fits the budget, else None (too long to count is None)."""
        if b - a > self.max_chars:
            return None
        t = self.count(text[a:b])
        return t if t <= self.max_tokens else None

    def passages(
        self, item_id: str, doc: Document, known: Mapping[str, Sequence[tuple[int, int]]] | None = None
    ) -> list[Passage]:
        """The passages of one document; one passage when it fits. ``known``: spans of texts
        split before (a judgment cache's ``spans``), used instead of counting again."""
        text = doc.text
        spans = known.get(text) if known else None
        if spans is None:
            spans = self.spans(text)
        return [Passage(item_id, doc.id, i, text[s:e], (s, e)) for i, (s, e) in enumerate(spans)]

    def spans(self, text: str) -> tuple[tuple[int, int], ...]:
        """The character spans of the passages of ``text`` (the same text gives the same spans,
        computed once while it stays in the memo)."""
        hit = self._memo.get(text)
        if hit is not None:
            return hit
        spans = tuple(self._spans(text))
        if 0 < len(text) <= self.memo_chars // 16:
            memo, size = self._memo, self._memo_size
            while memo and size[0] + len(text) > self.memo_chars:
                oldest = next(iter(memo))
                del memo[oldest]
                size[0] -= len(oldest)
            memo[text] = spans
            size[0] += len(text)
        return spans

    def _spans(self, text: str) -> list[tuple[int, int]]:
        if self._fit(text, 0, len(text)) is not None:
            return [(0, len(text))]
        units: list[Unit] = []
        for a, b in split_sentences(text):
            t = self._fit(text, a, b)
            units.extend([(a, b, t)] if t is not None else self._cut(text, a, b))
        return self._pack(text, units, self.overlap)

    def split(
        self, item_id: str, docs: Sequence[Document], known: Mapping[str, Sequence[tuple[int, int]]] | None = None
    ) -> list[Passage]:
        """All passages of an item's documents, in document order (``known``: see :meth:`passages`)."""
        return [p for d in docs for p in self.passages(item_id, d, known)]

    def spec(self) -> dict[str, Any]:
        """What decides the spans, beside the ``count`` function (which its owner names):
        the splitting's version, budget and overlap."""
        return {"splitter": SPLITTER_VERSION, "max_tokens": self.max_tokens, "overlap": self.overlap}

    def _pack(self, text: str, units: Sequence[Unit], overlap: int) -> list[tuple[int, int]]:
        """Greedy packing of units (each within budget) into spans within budget.

        Unit counts are added up to find a candidate, which is then checked with ``count``
        on the real text (whitespace between units may cost tokens) and shrunk if needed.
        """
        limit = self.max_tokens
        sums = [0, *accumulate(u[2] for u in units)]

        def over(a: int, b: int) -> bool:
            return self._fit(text, units[a][0], units[b - 1][1]) is None

        spans: list[tuple[int, int]] = []
        n, done, a = len(units), 0, 0
        while done < n:
            while a < done and sums[done + 1] - sums[a] > limit:
                a += 1
            b = done + 1
            while b < n and sums[b + 1] - sums[a] <= limit:
                b += 1
            while b > done + 1 and over(a, b):
                b -= 1
            if a < done and over(a, b):
                a += 1
                continue
            spans.append((units[a][0], units[b - 1][1]))
            done = b
            a = max(b - overlap, a + 1)
        return spans

    def _cut(self, text: str, a: int, b: int) -> list[Unit]:
        """An over-long sentence as the longest word-boundary pieces within budget; a word
        longer than the budget is cut at characters. Each count sees one piece at most."""
        out: list[Unit] = []
        s, guess = a, 0
        while s < b:
            m = _WORD.search(text, s, b)
            if m is None:
                break
            s = m.start()
            window_end = min(b, s + self.max_chars)
            ends = [s + w.end() for w in _WORD.finditer(text[s:window_end])]
            if window_end < b and not text[window_end].isspace():
                ends.pop()  # the window cut that word: it is not a boundary
            k, t = self._longest(text, s, ends, guess)
            if k == 0:  # the first word alone is over budget
                word_end = _WORD.match(text, s).end()  # type: ignore[union-attr]  # _WORD matches at a word start
                out.extend(self._cut_chars(text, s, min(word_end, b)))
                s = min(word_end, b)
                continue
            out.append((s, ends[k - 1], t))
            s, guess = ends[k - 1], k
        return out

    def _cut_chars(self, text: str, a: int, b: int) -> list[Unit]:
        """An over-long word (a URL, a base64 blob) as the longest character pieces within budget."""
        out: list[Unit] = []
        s, guess = a, 0
        while s < b:
            ends = range(s + 1, min(b, s + self.max_chars) + 1)
            k, t = self._longest(text, s, ends, guess)
            k = max(k, 1)  # one character over budget: no smaller piece exists
            if t == 0 and k == 1:
                t = self.count(text[s : s + 1])
            out.append((s, ends[k - 1], t))
            s, guess = ends[k - 1], k
        return out

    def _longest(self, text: str, s: int, ends: Sequence[int], guess: int) -> tuple[int, int]:
        """The largest k with ``text[s:ends[k - 1]]`` within budget (0: none), and its count.

        ``ends`` increase; counts are taken to grow with them. The search starts at
        ``guess`` (the previous piece's size: pieces tend to be alike) and gallops up or
        bisects down, a few counts per piece.
        """
        n = len(ends)
        if n == 0:
            return 0, 0
        lo, lo_t, hi = 0, 0, n + 1
        k = min(max(guess, 1), n)
        while True:
            t = self.count(text[s : ends[k - 1]])
            if t <= self.max_tokens:
                lo, lo_t = k, t
            else:
                hi = k
            if hi - lo <= 1:
                return lo, lo_t
            k = min(n, max(lo + 1, 2 * lo)) if hi == n + 1 else (lo + hi) // 2
