"""Question + answer → a declarative claim, by templates over common question forms.

"When was Rutherford High School established?" + "1961" →
"Rutherford High School was established in 1961." Forms no template covers fall back to
"The answer to '<question>?' is <answer>." — always a well-formed claim that contains the
answer, never a guess at grammar.
"""

from __future__ import annotations

import re
from typing import Callable

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAY_DATE = re.compile(rf"\b\d{{1,2}}(st|nd|rd|th)?\s+({_MONTHS})\b|\b({_MONTHS})\.?\s+\d{{1,2}}(st|nd|rd|th)?\b", re.I)
_BE = r"(?P<be>is|was|are|were)"
_IRREGULAR_PARTICIPLES = (
    "born|built|held|made|sold|won|led|set|found|laid|paid|run|sent|spent|taught|told|struck|begun|"
    "drawn|known|shown|grown|thrown|worn|torn|sworn|sung|hung|shot|cast|hit|put|read|split|spread|bought|brought"
)
_PARTICIPLE = rf"(?:\w+(?:ed|en|wn)|{_IRREGULAR_PARTICIPLES})"
_ADVERB = r"(?:first|last|originally|officially|initially|formally|primarily|mainly|officially|finally|also)"
_PREP = r"(?:by|to|as|in|into|on|at|for|from|with|of|under|onto|after|before|during)"
_IRREGULAR_PAST = {
    "become": "became",
    "begin": "began",
    "break": "broke",
    "bring": "brought",
    "build": "built",
    "buy": "bought",
    "come": "came",
    "do": "did",
    "draw": "drew",
    "find": "found",
    "get": "got",
    "give": "gave",
    "go": "went",
    "have": "had",
    "hold": "held",
    "leave": "left",
    "lose": "lost",
    "make": "made",
    "meet": "met",
    "run": "ran",
    "say": "said",
    "sell": "sold",
    "send": "sent",
    "sing": "sang",
    "speak": "spoke",
    "take": "took",
    "teach": "taught",
    "tell": "told",
    "win": "won",
    "write": "wrote",
    "rise": "rose",
    "fall": "fell",
    "found": "founded",
}
_REGULAR_VERBS = {
    "ascend",
    "die",
    "join",
    "start",
    "end",
    "open",
    "close",
    "retire",
    "marry",
    "release",
    "debut",
    "launch",
    "establish",
    "found",
    "create",
    "form",
    "invent",
    "discover",
    "sign",
    "play",
    "score",
    "graduate",
    "serve",
    "move",
    "return",
    "arrive",
    "publish",
    "record",
    "compose",
    "design",
    "direct",
    "produce",
    "perform",
    "appear",
    "occur",
    "happen",
    "last",
    "air",
    "premiere",
    "introduce",
    "reach",
    "succeed",
    "resign",
    "abdicate",
    "reign",
    "rule",
    "enter",
    "leave",
    "split",
    "merge",
    "collapse",
    "sink",
    "invade",
    "attack",
    "capture",
    "defeat",
    *_IRREGULAR_PAST,
}


def _when(answer: str) -> str:
    """The preposition of a time answer: on a day, in a year, month or period."""
    return "on" if _DAY_DATE.search(answer) else "in"


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:]


def _past(verb: str) -> str:
    v = verb.lower()
    if v in _IRREGULAR_PAST:
        return _IRREGULAR_PAST[v]
    if v.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", v):
        return verb[:-1] + "ied"
    return verb + "ed"


def _third_person(verb: str) -> str:
    v = verb.lower()
    if v == "have":
        return "has"
    if re.search(r"(s|sh|ch|x|z|o)$", v):
        return verb + "es"
    if re.search(r"[^aeiou]y$", v):
        return verb[:-1] + "ies"
    return verb + "s"


def _how_many(q: str, a: str) -> str | None:
    m = re.match(rf"^how many (?P<x>.+?) {_BE} there(?P<rest>.*)$", q, re.I)
    if m:
        return f"There {m['be']} {a} {m['x']}{m['rest']}"
    m = re.match(rf"^how many (?P<x>\w+(?: \w+)?) {_BE} (?P<rest>.+)$", q, re.I)
    return f"{a} {m['x']} {m['be']} {m['rest']}" if m else None


def _what_is_the(q: str, a: str) -> str | None:
    m = re.match(rf"^(?:what|who|which) {_BE} (?P<x>the .+)$", q, re.I)
    if not m or re.search(r"\b(is|was|are|were|does|do|did)$", m["x"], re.I):
        return None
    return f"{_cap(m['x'])} {m['be']} {a}"


def _be_participle(q: str, a: str) -> str | None:
    """When was X built? · What year was X founded? · Where is X located? · In which city is X located?"""
    tail = rf"(?P<adv> {_ADVERB})? (?P<v>{_PARTICIPLE})(?P<rest> {_PREP} .+)?$"
    for lead, prep in (
        ("when", None),
        (r"(?:in )?what year", "in"),
        ("where", "in"),
        (r"in (?:which|what) \w+(?: \w+)?", "in"),
    ):
        m = re.match(rf"^{lead} {_BE} (?P<x>.+?){tail}", q, re.I)
        if m:
            p = prep or _when(a)
            return f"{_cap(m['x'])} {m['be']}{m['adv'] or ''} {m['v']}{m['rest'] or ''} {p} {a}"
    return None


def _where_is(q: str, a: str) -> str | None:
    m = re.match(rf"^where {_BE} (?P<x>.+)$", q, re.I)
    return f"{_cap(m['x'])} {m['be']} in {a}" if m else None


def _what_noun_be(q: str, a: str) -> str | None:
    """What sport is X associated with? · What political party is X a member of?"""
    tail = rf"(?P<y>{_PARTICIPLE} {_PREP}|(?:a|an|the) \w+ {_PREP})"
    m = re.match(rf"^(?:what|which) (?:\w+ ){{1,3}}?{_BE} (?P<x>.+?) {tail}$", q, re.I)
    return f"{_cap(m['x'])} {m['be']} {m['y']} {a}" if m else None


def _does(q: str, a: str) -> str | None:
    """What sport does X play? · What does the abbreviation X stand for?"""
    m = re.match(rf"^what (?:\w+ ){{0,3}}?(?:does|do) (?P<x>.+?) (?P<v>\w+)(?P<p> {_PREP})?$", q, re.I)
    if not m:
        return None
    verb = _third_person(m["v"]) if q.lower().split()[1:].count("does") or " does " in q.lower() else m["v"]
    return f"{_cap(m['x'])} {verb}{m['p'] or ''} {a}"


def _when_did(q: str, a: str) -> str | None:
    """When did X <verb> ...? with a known verb put in the past tense."""
    m = re.match(r"^when did (?P<x>.+)$", q, re.I)
    if not m:
        return None
    words = m["x"].split(" ")
    for i, w in enumerate(words[1:], 1):
        if w.lower() in _REGULAR_VERBS:
            rest = " ".join(words[i + 1 :])
            return f"{_cap(' '.join(words[:i]))} {_past(w)}{' ' + rest if rest else ''} {_when(a)} {a}"
    return None


def _subject(q: str, a: str) -> str | None:
    """Who won X? · Which team has the most Y? — the answer becomes the subject."""
    m = re.match(r"^who (?P<v>\w+) (?P<rest>.+)$", q, re.I)
    if m and m["v"].lower() not in {"is", "was", "are", "were", "did", "does", "do", "has", "have", "had"}:
        return f"{_cap(a)} {m['v']} {m['rest']}"
    verbs = "has|have|had|won|holds|held|played|plays"
    m = re.match(rf"^(?:which|what) (?:\w+ ){{1,3}}?(?P<v>{verbs}) (?P<rest>.+)$", q, re.I)
    return f"{_cap(a)} {m['v']} {m['rest']}" if m else None


_RULES: tuple[Callable[[str, str], str | None], ...] = (
    _how_many,
    _what_is_the,
    _be_participle,
    _where_is,
    _what_noun_be,
    _does,
    _when_did,
    _subject,
)


def declarative(question: str, answer: str) -> str:
    """A declarative sentence stating that ``answer`` answers ``question``."""
    q = " ".join(question.split()).rstrip(" ?.")
    a = " ".join(answer.split()).rstrip(".")
    for rule in _RULES:
        s = rule(q, a)
        if s is not None:
            return s.rstrip(" .") + "."
    return f"The answer to '{q}?' is {a}."


def strip_qualifier(entity: str) -> str:
    """``Jeff Green (basketball)`` → ``Jeff Green``: the name without its disambiguating part."""
    return re.sub(r"\s*\([^)]*\)\s*$", "", entity).strip()


def name_entity(claim: str, entity: str) -> str:
    """The claim made specific to ``entity``.

    When the entity's bare name (or its part before the first comma) occurs in the claim
    as whole words, in any case (``Reg Park`` is not in ``Reg Parker``), it is replaced by
    the full entity (``Jeff Green`` → ``Jeff Green (basketball)``,
    ``Washington Township, Michigan`` → ``Washington Township, Gratiot County, Michigan``);
    otherwise the claim is prefixed with ``Regarding <entity>,``.
    """
    entity = " ".join(entity.split())
    base = strip_qualifier(entity)
    head, *segments = [s.strip() for s in base.split(",")]
    for name in (base, head):
        m = re.search(rf"(?<!\w){re.escape(name)}(?!\w)", claim, re.I) if name else None
        if m:
            end = m.end()
            for seg in segments if name == head else ():
                if seg and claim[end:].lower().startswith(", " + seg.lower()):
                    end += len(seg) + 2
            return claim[: m.start()] + entity + claim[end:]
    lead = "the" + claim[3:] if claim.startswith("The ") else claim
    return f"Regarding {entity}, {lead}"
