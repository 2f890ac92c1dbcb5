"""The one split function of ConflictBench: a deterministic hash of normalised text.

Every item is assigned by the text it tests (the claim, or the question for
question-answering sources), so the same text lands in the same split wherever it comes
from: a Climate-FEVER claim that EN555 reuses, or a HealthVer claim a training set
borrows, can never sit in train in one place and in dev/test in another.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from typing import Literal

Split = Literal["train", "dev", "test"]
SPLITS: tuple[Split, ...] = ("train", "dev", "test")
# cumulative bucket bounds: 70 % train, 15 % dev, 15 % test
_BOUNDS: tuple[tuple[float, Split], ...] = ((0.70, "train"), (0.85, "dev"), (1.0, "test"))

_SPACE = re.compile(r"\s+")
_EDGES = re.compile(r"^[\W_]+|[\W_]+$")


def normalize_text(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed, punctuation stripped at both ends."""
    t = unicodedata.normalize("NFKC", text).casefold()
    t = _SPACE.sub(" ", t).strip()
    return _EDGES.sub("", t)


def split_for(key: str) -> Split:
    """``train`` / ``dev`` / ``test`` for a claim or question text (70/15/15 by SHA-256).

    Texts that differ only in case, spacing or leading/trailing punctuation share a split.
    """
    if not isinstance(key, str):
        raise TypeError(f"split_for expects a string, got {type(key).__name__}")
    digest = hashlib.sha256(normalize_text(key).encode("utf-8")).digest()
    u = int.from_bytes(digest[:8], "big") / 2**64
    for bound, name in _BOUNDS:
        if u < bound:
            return name
    return "test"
