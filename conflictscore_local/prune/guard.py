"""The lexical guard: numbers, dates and names a claim shares with a passage.

Sentence embeddings barely move when a number, a date or a name is swapped ("born in 1867"
vs "born in 1868"), which is exactly the difference a conflict detector must see. The
pruner never drops a pair whose claim and passage share one of these keys. The keys are
cheap surface heuristics (regular expressions and capitalisation, no parser):

- numbers, normalised: "1,867" and "1867" match, "3.50" and "3.5", "95.7%" and "95.7 percent";
- month names, full or abbreviated ("Sept." and "September" match), when capitalised;
- names: capitalised words and acronyms ("Curie", "NASA", "COVID" of "COVID-19"; hyphens and
  apostrophes split words, so "Curie's" matches "Curie"), case-insensitively, except stop-words
  and single letters, so a sentence opening "The" or "However" is no name.
"""

from __future__ import annotations

import re

_MONTHS = {
    "january": "jan",
    "february": "feb",
    "march": "mar",
    "april": "apr",
    "may": "may",
    "june": "jun",
    "july": "jul",
    "august": "aug",
    "september": "sep",
    "october": "oct",
    "november": "nov",
    "december": "dec",
    "jan": "jan",
    "feb": "feb",
    "mar": "mar",
    "apr": "apr",
    "jun": "jun",
    "jul": "jul",
    "aug": "aug",
    "sep": "sep",
    "sept": "sep",
    "oct": "oct",
    "nov": "nov",
    "dec": "dec",
}

STOPWORDS = frozenset(
    """
a about above according after again against all also although always am among an and another any are
around as at be because been before being below between both but by can could did do does doing down
during each either even ever every few for from further had has have having he her here hers herself him
himself his how however i if in into is it its itself just let many me more most much must my myself
neither never no nor not now of off often on once one only or other others our ours ourselves out over
own per perhaps same several she should since so some still such than that the their theirs them
themselves then there therefore these they this those though through thus to too under until up upon us
very was we were what whatever when where whereas whether which while who whom whose why will with
within without would yet you your yours yourself yourselves
""".split()
)

_NUMBER = re.compile(r"(?<![\w.])(?:\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.\d+)?")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")


def _number_key(raw: str) -> str:
    whole, _, frac = raw.replace(",", "").partition(".")
    whole = whole.lstrip("0") or "0"
    frac = frac.rstrip("0")
    return f"#{whole}.{frac}" if frac else f"#{whole}"


def lexical_keys(text: str) -> frozenset[str]:
    """The numbers (``#1867``), months (``@sep``) and names (``curie``) in ``text``.

    Not memoised here: a process-wide cache would keep every passage it saw alive. A caller
    that meets the same texts again memoises for the length of its own work.
    """
    keys = {_number_key(m.group(0)) for m in _NUMBER.finditer(text)}
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not word[0].isupper():
            continue
        low = word.lower()
        if low in _MONTHS:
            keys.add("@" + _MONTHS[low])
        elif len(word) > 1 and low not in STOPWORDS:
            keys.add(low)
    return frozenset(keys)


def shared_keys(claim: str, passage: str) -> frozenset[str]:
    """The guard keys ``claim`` and ``passage`` have in common (empty: the guard does not fire)."""
    return lexical_keys(claim) & lexical_keys(passage)
