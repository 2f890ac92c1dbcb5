"""The probes of ``benchmarks/judge/judge_checklist.py``: templates with their own vocabulary, and
probes mined from evaluation-only public sets.

Every probe is a (claim, passage, gold label) with its capability, its direction (which
way the label goes, so that no constant answer passes a capability), its source (template
id, or data set + file + row) and whether it is judged as a pair by the bare judge or as a
long document through the engine. Generation is deterministic for a seed: one
``random.Random`` per capability, seeded by ``f"{seed}:{capability}"``.

Templated probes use only the names, places, organisations, quantities and sentence
frames of judge_checklist_vocabulary.py (fictional people, organisations, towns and products, so that
a label never depends on world knowledge, plus a few real capitals and real background
facts used as off-topic filler). Mined probes come only from sets this project never
trains on (NaN-NLI, ANLI R1-R3 dev, TaxiNLI, ConTRoL dev, FEVER-Symmetric test), and
a mined probe whose claim or passage also occurs in a set the project trains or may
train on is dropped (:func:`training_index`, the project's own leak test).
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from benchmarks.judge.judge_checklist_vocabulary import (  # noqa: F401 (the tests read the pools here)
    BOOKS,
    CITIES,
    COUNT_FRAMES,
    COUNTRIES,
    DATE_FRAMES,
    DISTRACTORS,
    DOMAIN,
    DRUGS,
    ENGINE_MAKERS,
    ENTITY_FRAMES,
    EVENTS,
    FILMS,
    FLEETS,
    HOSPITALS,
    LIBRARIES,
    NEG_FRAMES,
    NEUTRAL,
    ORGS,
    PARA_FRAMES,
    PEOPLE,
    PERCENT_FRAMES,
    PHARMA,
    POOLS,
    RANGE_PASSAGES,
    ROLE_FRAMES,
    STADIUMS,
    STRUCTURES,
    STUDIES,
    TOWNS,
    TRIALS,
    UNIT_FRAMES,
    VENUES,
    YEAR_FRAMES,
)

SUPPORT, CONTRADICT, IRRELEVANT = "SUPPORT", "CONTRADICT", "IRRELEVANT"

CAPABILITIES: tuple[str, ...] = (
    "negation",
    "numbers",
    "entities",
    "off_topic",
    "paraphrase",
    "partial",
    "long_document",
)
"""The capabilities, in report order."""


@dataclass(frozen=True)
class Probe:
    """One labelled test case. ``document``: judged as one document through the engine
    (passage splitting and the document decision), else as one pair by the bare judge."""

    id: str
    capability: str
    direction: str
    label: str
    claim: str
    passage: str
    source: str
    origin: str  # "templated" | "mined"
    document: bool = False
    meta: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def as_json(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "capability": self.capability,
            "direction": self.direction,
            "label": self.label,
            "origin": self.origin,
            "source": self.source,
            "claim": self.claim,
            "passage": self.passage,
        }
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


DIRECTIONS: dict[str, dict[str, tuple[str, str]]] = {
    # capability -> direction -> (gold label, what it tests)
    "negation": {
        "a_neg_claim_neg_evidence": (SUPPORT, "(a) a negated claim, evidence that states the negative"),
        "b_aff_claim_neg_evidence": (CONTRADICT, "(b) an affirmative claim, negative evidence"),
        "c_neg_claim_aff_evidence": (CONTRADICT, "(c) a negated claim, affirmative evidence"),
        "d_aff_claim_negation_elsewhere": (
            SUPPORT,
            "(d) an affirmative claim, affirmative evidence with a negation about something else",
        ),
        "e_double_negation_support": (SUPPORT, '(e) double negation ("it is not true that ... not ..."), supported'),
        "e_double_negation_contradict": (CONTRADICT, "(e) double negation, contradicted"),
    },
    "numbers": {
        f"{lab.lower()}_{kind}": (lab, text)
        for kind, (s_text, c_text) in {
            "count": ("the same count, reworded or reformatted (3,559 / 3559)", "a count one step off"),
            "year": ("the same year, reworded", "a year one to three off"),
            "date": ("the same date, reformatted (7 November 1867 / November 7, 1867)", "a day or month one step off"),
            "unit": (
                "the same quantity, unit spelled out (km / kilometres)",
                "the same number in another unit (m / km, mg / g, million / billion)",
            ),
            "percent": ("the same percentage (% / percent)", "a percentage one step off"),
            "range": (
                "an exact value inside a claimed bound or range (more than / between)",
                "a value outside the claimed bound or range",
            ),
        }.items()
        for lab, text in ((SUPPORT, s_text), (CONTRADICT, c_text))
    },
    "entities": {
        **{
            f"{lab.lower()}_{kind}": (lab, f"{what} ({kind} in the same slot)")
            for kind in ("place", "person", "organisation")
            for lab, what in ((SUPPORT, "the same entity"), (CONTRADICT, "another entity"))
        },
        "support_role": (SUPPORT, "two named parties in their roles, reworded (A acquired B / B was acquired by A)"),
        "contradict_role": (CONTRADICT, "two named parties with their roles swapped (A acquired B / B acquired A)"),
    },
    "off_topic": {
        "other_subject_same_attribute": (IRRELEVANT, "the same statement about another subject"),
        "same_domain_shared_words": (IRRELEVANT, "another subject of the same domain, sharing words with the claim"),
        "other_domain": (IRRELEVANT, "a passage from another domain"),
        "same_entity_other_attribute": (IRRELEVANT, "the same subject, another attribute"),
        "control_support": (SUPPORT, "control: an on-topic passage that supports the claim"),
        "control_contradict": (CONTRADICT, "control: an on-topic passage that contradicts the claim"),
    },
    "paraphrase": {
        "paraphrase_support": (SUPPORT, "the claim paraphrases the passage"),
        "opposite_contradict": (
            CONTRADICT,
            "the claim paraphrases the opposite (antonym, converse, reversed direction; no negation word)",
        ),
    },
    "partial": {
        "supported_part": (
            SUPPORT,
            "a compound claim; the passage supports one part, is silent on the other "
            "(the project's convention: partial support counts)",
        ),
        "contradicted_part": (CONTRADICT, "a compound claim; the passage contradicts one part, is silent on the other"),
    },
    "long_document": {
        "support_in_long": (SUPPORT, "one supporting sentence among 16-24 off-topic ones"),
        "contradict_in_long": (CONTRADICT, "one contradicting sentence among 16-24 off-topic ones"),
        "none_in_long": (
            IRRELEVANT,
            "16-24 off-topic sentences, some about the same domain or the same statement of another subject",
        ),
    },
}


# ---------------------------------------------------------------------------------------
# text helpers


def possessive(name: str) -> str:
    """``Velcor Industries'`` / ``Amelia Okafor's``."""
    return name + ("'" if name.endswith("s") else "'s")


def render(template: str, *, start: bool = True, **slots: str) -> str:
    """``template`` filled (``{S}`` etc., plus ``{Sp}`` for the possessive of ``S``), as a
    sentence (capitalised, final full stop) or, with ``start=False``, a clause to embed."""
    values = dict(slots)
    for k, v in slots.items():
        values.setdefault(k + "p", possessive(v))
    text = template.format(**values)
    if start:
        text = text[:1].upper() + text[1:]
        return text if text.endswith((".", "!", "?")) else text + "."
    if not template.startswith("{"):
        text = text[:1].lower() + text[1:]
    return text.rstrip(".")


def sentence(template: str, **slots: str) -> str:
    return render(template, start=True, **slots)


def clause(template: str, **slots: str) -> str:
    return render(template, start=False, **slots)


NEGATION_CUES = re.compile(r"\b(not|no|never|none|nobody|nothing|neither|nor|without|cannot)\b|n't\b", re.I)


def has_negation(text: str) -> bool:
    """Whether ``text`` holds a negation cue (not, no, never, n't, none, neither, nor, without ...)."""
    return bool(NEGATION_CUES.search(text))


def fmt_int(n: int, comma: bool = True) -> str:
    return f"{n:,}" if comma else str(n)


def parse_int(text: str) -> int:
    """The integer written as ``3,559`` / ``3559``."""
    return int(text.replace(",", ""))


def near_int(n: int, rng: random.Random) -> int:
    """A different count "one step off": one digit changed, a few percent up or down, or two
    neighbouring digits swapped; same number of digits, never ``n``."""
    s = str(n)
    for _ in range(50):
        how = rng.choice(("digit", "percent", "swap"))
        if how == "digit":
            i = rng.randrange(1 if len(s) > 1 else 0, len(s))
            m = int(s[:i] + rng.choice([c for c in "0123456789" if c != s[i]]) + s[i + 1 :])
        elif how == "percent":
            m = n + rng.choice((-1, 1)) * max(1, round(n * rng.uniform(0.02, 0.12)))
        else:
            if len(s) < 2:
                continue
            i = rng.randrange(len(s) - 1)
            m = int(s[:i] + s[i + 1] + s[i] + s[i + 2 :])
        if m != n and m > 0 and len(str(m)) == len(s):
            return m
    return n + 1 if len(str(n + 1)) == len(s) else n - 1


def near_year(y: int, rng: random.Random) -> int:
    """Another year, one to three off."""
    return y + rng.choice((-3, -2, -1, 1, 2, 3))


MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
DATE_STYLES = ("dmy", "mdy", "ordinal")


def fmt_date(d: dt.date, style: str) -> str:
    """``7 November 1867`` (dmy), ``November 7, 1867`` (mdy), ``the 7th of November 1867`` (ordinal)."""
    month = MONTHS[d.month - 1]
    if style == "dmy":
        return f"{d.day} {month} {d.year}"
    if style == "mdy":
        return f"{month} {d.day}, {d.year}"
    if style == "ordinal":
        suffix = "th" if 11 <= d.day % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(d.day % 10, "th")
        return f"the {d.day}{suffix} of {month} {d.year}"
    raise ValueError(f"unknown date style {style!r}; allowed: {', '.join(DATE_STYLES)}")


def parse_date(text: str) -> dt.date:
    """The date written by :func:`fmt_date` in any style."""
    m = re.fullmatch(r"(?:the )?(\d{1,2})(?:st|nd|rd|th)?(?: of)? (\w+) (\d{4})", text)
    if m:
        return dt.date(int(m[3]), MONTHS.index(m[2]) + 1, int(m[1]))
    m = re.fullmatch(r"(\w+) (\d{1,2}), (\d{4})", text)
    if not m:
        raise ValueError(f"not a date written by fmt_date: {text!r}")
    return dt.date(int(m[3]), MONTHS.index(m[1]) + 1, int(m[2]))


def near_date(d: dt.date, rng: random.Random) -> dt.date:
    """The same year and month with the day one to three off, or the same day with the month one off."""
    if rng.random() < 0.6:
        days = [d.day + k for k in (-3, -2, -1, 1, 2, 3) if 1 <= d.day + k <= 28]
        return d.replace(day=rng.choice(days))
    month = d.month + (1 if d.month == 1 else -1 if d.month == 12 else rng.choice((-1, 1)))
    return d.replace(month=month)


def near_percent(x: float, rng: random.Random) -> float:
    """Another percentage: digits swapped (4.5 -> 5.4) or 0.3-1.9 points off."""
    a, b = f"{x:.1f}".replace(".", "")[-2:]
    if a != b and rng.random() < 0.4 and len(f"{x:.1f}") == 3:
        return float(f"{b}.{a}")
    return round(x + rng.choice((-1, 1)) * rng.choice((0.3, 0.5, 0.8, 1.2, 1.9)), 1)


def round_bounds(n: int) -> tuple[int, int, int]:
    """``(below, above, step)``: round numbers just below and just above ``n`` (two significant digits)."""
    step = 10 ** max(0, len(str(n)) - 2)
    below = (n // step) * step
    if below == n:
        below -= step
    return below, (n // step + 1) * step, step


# ---------------------------------------------------------------------------------------
# facts: one statement about one subject, with statements that support and contradict it


@dataclass(frozen=True)
class Fact:
    """A statement about ``subject``: true variants (each supports the others), false
    variants (each contradicts them) and the frame it came from."""

    kind: str
    frame: str
    stype: str
    subject: str
    true: tuple[str, ...]
    false: tuple[str, ...]
    claims: tuple[str, ...]  # the true variants that state exactly the fact (no extra detail): usable as claims
    predicate: str | None  # a claim without its leading subject, for compound claims
    false_claims: tuple[str, ...] = ()

    def contradiction(self, rng: random.Random) -> tuple[str, str]:
        """A (claim, passage) pair that contradict each other. For an entity fact the claim
        names the wrong entity and the passage the right one ("the capital of Australia is
        Sydney" vs "Canberra is the capital of Australia"), so a passage is never false
        about the real world; otherwise the claim is true and the passage changes it."""
        if self.kind == "entity":
            return rng.choice(self.false_claims), rng.choice(self.true[len(self.claims) :])
        return rng.choice(self.claims), rng.choice(self.false)

    def statements(self) -> tuple[str, ...]:
        """What may be said of this subject as background: negation facts either way; the
        others only as true (a wrong capital or a wrong year is not background text)."""
        return self.true + self.false if self.kind == "negation" else self.true

    @property
    def domain(self) -> str:
        return DOMAIN[self.stype]


FACT_KINDS = ("negation", "entity", "count", "year")


def _pick(rng: random.Random, pool: Sequence[str], avoid: Iterable[str] = ()) -> str:
    bad = set(avoid)
    options = [x for x in pool if x not in bad]
    if not options:
        raise LookupError(f"every name of the pool is excluded ({len(pool)} names)")
    return rng.choice(options)


def _predicate(subject: str, variants: Iterable[str]) -> str | None:
    cap = subject[:1].upper() + subject[1:]
    for v in variants:
        if v.startswith(cap + " ") and "," not in v:
            return v[len(cap) + 1 :].rstrip(".")
    return None


def make_fact(kind: str, rng: random.Random, *, avoid: Iterable[str] = (), frame: str | None = None) -> Fact:
    """A random fact of ``kind`` (negation frame, entity frame, count or year frame) whose
    subject and entities are none of ``avoid``; ``frame`` picks the frame by id."""
    avoid = set(avoid)
    if kind == "negation":
        f = next(x for x in NEG_FRAMES if x[0] == frame) if frame else rng.choice(NEG_FRAMES)
        fid, stype, pos, neg, neg_alts, pos_alts, _ = f
        s = _pick(rng, POOLS[stype], avoid)
        true = tuple(sentence(t, S=s) for t in (pos, *pos_alts))
        false = tuple(sentence(t, S=s) for t in (neg, *neg_alts))
        return Fact(kind, fid, stype, s, true, false, true, _predicate(s, true))
    if kind == "entity":
        f = next(x for x in ENTITY_FRAMES if x[0] == frame) if frame else rng.choice(ENTITY_FRAMES)
        fid, _etype, stype, epool, passages, claims = f
        s = _pick(rng, POOLS[stype], avoid)
        if epool == "capital":
            _, e, others = next(c for c in COUNTRIES if c[0] == s)
            e2 = rng.choice(others)
        else:
            e = _pick(rng, POOLS[epool], avoid | {s})
            e2 = _pick(rng, POOLS[epool], avoid | {s, e})
        true = tuple(sentence(t, S=s, E=e) for t in (*claims, *passages))
        false = tuple(sentence(t, S=s, E=e2) for t in (*claims, *passages))
        return Fact(
            kind,
            fid,
            stype,
            s,
            true,
            false,
            true[: len(claims)],
            _predicate(s, true[: len(claims)]),
            false[: len(claims)],
        )
    if kind == "count":
        f = next(x for x in COUNT_FRAMES if x[0] == frame) if frame else rng.choice(COUNT_FRAMES)
        fid, stype, templates, (lo, hi) = f
        s = _pick(rng, POOLS[stype], avoid)
        n = rng.randint(lo, hi)
        m = near_int(n, rng)
        true = tuple(sentence(t, S=s, N=fmt_int(n)) for t in templates)
        false = tuple(sentence(t, S=s, N=fmt_int(m)) for t in templates)
        return Fact(kind, fid, stype, s, true, false, true, _predicate(s, true))
    if kind == "year":
        f = next(x for x in YEAR_FRAMES if x[0] == frame) if frame else rng.choice(YEAR_FRAMES)
        fid, stype, templates, (lo, hi) = f
        s = _pick(rng, POOLS[stype], avoid)
        y = rng.randint(lo, hi)
        y2 = near_year(y, rng)
        true = tuple(sentence(t, S=s, Y=str(y)) for t in templates)
        false = tuple(sentence(t, S=s, Y=str(y2)) for t in templates)
        return Fact(kind, fid, stype, s, true, false, true, _predicate(s, true))
    raise ValueError(f"unknown fact kind {kind!r}; allowed: {', '.join(FACT_KINDS)}")


def frames_of(kind: str) -> tuple[str, ...]:
    table = {"negation": NEG_FRAMES, "entity": ENTITY_FRAMES, "count": COUNT_FRAMES, "year": YEAR_FRAMES}[kind]
    return tuple(f[0] for f in table)


def cycle_frames(kind: str, n: int, rng: random.Random) -> list[str]:
    """``n`` frame ids of ``kind``, each used about equally often, in random order."""
    ids = list(frames_of(kind))
    out: list[str] = []
    while len(out) < n:
        rng.shuffle(ids)
        out += ids
    return out[:n]


def mentions(text: str, names: Iterable[str]) -> bool:
    """Whether ``text`` names any of ``names`` (case-insensitive; "the X" also matches "X")."""
    low = text.lower()
    for name in names:
        core = name.lower().removeprefix("the ")
        if core and core in low:
            return True
    return False


STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or but is are was were be been has have had it its this that "
    "these those as after before during since than then there their them they he she his her who which what "
    "when where while not no never did does do into over under about more most less also can could will would "
    "all any each every some such only so very just one two three first new".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in STOPWORDS}


# ---------------------------------------------------------------------------------------
# templated probes, one generator per capability


class _Builder:
    """Collects the probes of one capability, numbering them."""

    def __init__(self, capability: str):
        self.capability = capability
        self.probes: list[Probe] = []

    def add(
        self,
        direction: str,
        claim: str,
        passage: str,
        source: str,
        *,
        document: bool = False,
        origin: str = "templated",
        label: str | None = None,
        **meta: Any,
    ) -> None:
        gold = label or DIRECTIONS[self.capability][direction][0]
        pid = f"{self.capability}.{origin[0]}{len(self.probes):03d}"
        self.probes.append(Probe(pid, self.capability, direction, gold, claim, passage, source, origin, document, meta))


def negation_probes(rng: random.Random, per_direction: int = 22, double: int = 12) -> list[Probe]:
    """(a)-(d) ``per_direction`` probes each, cycling over the negation frames; (e) ``double`` each way."""
    b = _Builder("negation")
    by_id = {f[0]: f for f in NEG_FRAMES}
    for direction in (
        "a_neg_claim_neg_evidence",
        "b_aff_claim_neg_evidence",
        "c_neg_claim_aff_evidence",
        "d_aff_claim_negation_elsewhere",
    ):
        for fid in cycle_frames("negation", per_direction, rng):
            _, stype, pos, neg, neg_alts, pos_alts, extra = by_id[fid]
            s = rng.choice(POOLS[stype])
            if direction == "a_neg_claim_neg_evidence":
                ev = rng.choice(neg_alts)
                b.add(direction, sentence(neg, S=s), sentence(ev, S=s), f"template negation.{fid}")
            elif direction == "b_aff_claim_neg_evidence":
                ev = rng.choice((neg, *neg_alts))
                b.add(direction, sentence(pos, S=s), sentence(ev, S=s), f"template negation.{fid}")
            elif direction == "c_neg_claim_aff_evidence":
                ev = rng.choice(pos_alts)
                b.add(direction, sentence(neg, S=s), sentence(ev, S=s), f"template negation.{fid}")
            else:  # the evidence affirms; a negation about something else follows in the same or the next sentence
                ev = sentence(rng.choice((pos, *pos_alts)), S=s)
                if rng.random() < 0.5:
                    passage = f"{ev[:-1]}, {rng.choice(('but', 'although'))} {extra}."
                else:
                    passage = f"{ev} {extra[:1].upper() + extra[1:]}."
                b.add(direction, sentence(pos, S=s), passage, f"template negation.{fid}")
    prefixes = ("It is not true that", "It is not the case that", "It is false that")
    for direction in ("e_double_negation_support", "e_double_negation_contradict"):
        for k, fid in enumerate(cycle_frames("negation", double, rng)):
            _, stype, pos, neg, neg_alts, pos_alts, _ = by_id[fid]
            s = rng.choice(POOLS[stype])
            double_neg = f"{rng.choice(prefixes)} {clause(neg, S=s)}."
            in_claim = k % 2 == 0  # half with the double negation in the claim, half in the evidence
            if direction == "e_double_negation_support":
                claim, ev = (
                    (double_neg, sentence(rng.choice(pos_alts), S=s)) if in_claim else (sentence(pos, S=s), double_neg)
                )
            else:
                claim, ev = (
                    (double_neg, sentence(rng.choice(neg_alts), S=s)) if in_claim else (sentence(neg, S=s), double_neg)
                )
            b.add(direction, claim, ev, f"template negation.{fid}.double_in_{'claim' if in_claim else 'evidence'}")
    return b.probes


def number_probes(rng: random.Random, per_direction: int = 11) -> list[Probe]:
    """Counts, years, dates, units, percentages and ranges: the same value (reworded or
    reformatted) → SUPPORT, one step off → CONTRADICT."""
    b = _Builder("numbers")
    for lab in (SUPPORT, CONTRADICT):
        d = lab.lower()
        for i in range(per_direction):  # counts
            fid, stype, templates, (lo, hi) = COUNT_FRAMES[i % len(COUNT_FRAMES)]
            s, n = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            t_pass, t_claim = rng.sample(templates, 2)
            value = n if lab == SUPPORT else near_int(n, rng)
            comma = not (lab == SUPPORT and n >= 1000 and rng.random() < 0.5)  # 3559 vs 3,559
            b.add(
                f"{d}_count",
                sentence(t_claim, S=s, N=fmt_int(value, comma)),
                sentence(t_pass, S=s, N=fmt_int(n)),
                f"template numbers.count.{fid}",
                value=n,
                claimed=value,
            )
        for i in range(per_direction):  # years
            fid, stype, templates, (lo, hi) = YEAR_FRAMES[i % len(YEAR_FRAMES)]
            s, y = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            t_pass, t_claim = rng.sample(templates, 2)
            value = y if lab == SUPPORT else near_year(y, rng)
            b.add(
                f"{d}_year",
                sentence(t_claim, S=s, Y=str(value)),
                sentence(t_pass, S=s, Y=str(y)),
                f"template numbers.year.{fid}",
                value=y,
                claimed=value,
            )
        for i in range(per_direction):  # dates
            fid, stype, templates, (lo, hi) = DATE_FRAMES[i % len(DATE_FRAMES)]
            s = rng.choice(POOLS[stype])
            day = dt.date(rng.randint(lo, hi), rng.randint(1, 12), rng.randint(1, 28))
            st_pass, st_claim = rng.sample(DATE_STYLES, 2)
            value = day if lab == SUPPORT else near_date(day, rng)
            t_pass, t_claim = (rng.choice(templates), rng.choice(templates))
            b.add(
                f"{d}_date",
                sentence(t_claim, S=s, D=fmt_date(value, st_claim)),
                sentence(t_pass, S=s, D=fmt_date(day, st_pass)),
                f"template numbers.date.{fid}",
                value=day.isoformat(),
                claimed=value.isoformat(),
            )
        for i in range(per_direction):  # units
            fid, stype, tpl, (lo, hi), same, other, unit = UNIT_FRAMES[i % len(UNIT_FRAMES)]
            s, n = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            alt = rng.choice(same if lab == SUPPORT else other)
            b.add(
                f"{d}_unit",
                sentence(tpl, S=s, V=alt.format(n=fmt_int(n))),
                sentence(tpl, S=s, V=unit.format(n=fmt_int(n))),
                f"template numbers.unit.{fid}",
                unit=unit.format(n="N"),
                claimed_unit=alt.format(n="N"),
            )
        for i in range(per_direction):  # percentages
            fid, stype, templates = PERCENT_FRAMES[i % len(PERCENT_FRAMES)]
            s, x = rng.choice(POOLS[stype]), round(rng.uniform(2.1, 14.9), 1)
            if fid in ("response_rate", "turnout"):
                x = round(rng.uniform(21.0, 78.0), 1)
            t_pass, t_claim = rng.sample(templates, 2)
            value = x if lab == SUPPORT else near_percent(x, rng)
            word = rng.choice(("percent", "per cent")) if lab == SUPPORT else None
            claimed = f"{value:.1f} {word}" if word else f"{value:.1f}%"
            b.add(
                f"{d}_percent",
                sentence(t_claim, S=s, X=claimed),
                sentence(t_pass, S=s, X=f"{x:.1f}%"),
                f"template numbers.percent.{fid}",
                value=x,
                claimed=value,
            )
        for i in range(per_direction):  # ranges and bounds
            if i % 3 == 2:  # the passage gives a range
                fid, stype, p_tpl, c_tpl, (lo, hi) = RANGE_PASSAGES[(i // 3) % len(RANGE_PASSAGES)]
                s = rng.choice(POOLS[stype])
                a = rng.randint(lo, hi)
                _, _, step = round_bounds(a)
                a = (a // step) * step
                bb = a + step * rng.choice((2, 3, 5))
                if lab == SUPPORT:
                    q = rng.choice((f"more than {fmt_int(a - step)}", f"fewer than {fmt_int(bb + step)}"))
                else:
                    q = rng.choice((fmt_int(bb + step * rng.choice((1, 2))), fmt_int(max(1, a - step))))
                    q = rng.choice((q, f"more than {fmt_int(bb + step)}", f"fewer than {fmt_int(a)}"))
                if fid == "rash" and q.startswith("fewer"):
                    q = q.replace("fewer", "less")
                b.add(
                    f"{d}_range",
                    sentence(c_tpl, S=s, Q=q),
                    sentence(p_tpl, S=s, A=fmt_int(a), B=fmt_int(bb)),
                    f"template numbers.range.{fid}",
                    range=[a, bb],
                    claimed=q,
                )
                continue
            fid, stype, templates, (lo, hi) = COUNT_FRAMES[i % len(COUNT_FRAMES)]
            s, n = rng.choice(POOLS[stype]), rng.randint(lo, hi)
            below, above, step = round_bounds(n)
            if lab == SUPPORT:
                q = rng.choice(
                    (
                        f"more than {fmt_int(below)}",
                        f"fewer than {fmt_int(above)}",
                        f"between {fmt_int(below)} and {fmt_int(above + step)}",
                    )
                )
            else:
                q = rng.choice(
                    (
                        f"more than {fmt_int(above)}",
                        f"fewer than {fmt_int(below)}",
                        f"between {fmt_int(above)} and {fmt_int(above + 4 * step)}",
                        f"between {fmt_int(max(step, below - 4 * step))} and {fmt_int(below)}",
                    )
                )
            t_pass, t_claim = rng.sample(templates, 2)
            b.add(
                f"{d}_range",
                sentence(t_claim, S=s, N=q),
                sentence(t_pass, S=s, N=fmt_int(n)),
                f"template numbers.range.{fid}",
                value=n,
                claimed=q,
            )
    return b.probes


def entity_probes(rng: random.Random, per_direction: int = 16) -> list[Probe]:
    """Another entity in the same slot → CONTRADICT; the same one, reworded → SUPPORT; two
    named parties with their roles swapped → CONTRADICT, kept → SUPPORT. The subject
    never changes (a claim about another subject would be IRRELEVANT)."""
    b = _Builder("entities")
    for etype in ("place", "person", "organisation"):
        frames = [f for f in ENTITY_FRAMES if f[1] == etype]
        for lab in (SUPPORT, CONTRADICT):
            for i in range(per_direction):
                fid = frames[i % len(frames)][0]
                fact = make_fact("entity", rng, frame=fid)
                frame = next(f for f in ENTITY_FRAMES if f[0] == fid)
                n_claims = len(frame[5])
                if lab == SUPPORT:
                    claim = rng.choice(fact.claims)
                    passage = rng.choice([t for t in fact.true[n_claims:] if t != claim])
                else:
                    claim, passage = fact.contradiction(rng)
                b.add(f"{lab.lower()}_{etype}", claim, passage, f"template entities.{fid}")
    for lab in (SUPPORT, CONTRADICT):
        for i in range(per_direction):
            fid, pool, passages, keep, swap = ROLE_FRAMES[i % len(ROLE_FRAMES)]
            if pool == "engine_maker/fleet":
                a, bb = rng.choice(ENGINE_MAKERS), rng.choice(FLEETS)
            else:
                a, bb = rng.sample(POOLS[pool], 2)
            t = rng.choice(TOWNS)
            passage = sentence(rng.choice(passages), A=a, B=bb, T=t)
            claim = sentence(rng.choice(keep if lab == SUPPORT else swap), A=a, B=bb, T=t)
            b.add(f"{lab.lower()}_role", claim, passage, f"template entities.role.{fid}")
    return b.probes


def _distractors(domain: str | None = None, exclude: str | None = None) -> list[tuple[str, str]]:
    return [(d, s) for d, ss in DISTRACTORS.items() if (domain is None or d == domain) and d != exclude for s in ss]


def off_topic_probes(rng: random.Random, per_direction: int = 28, controls: int = 14) -> list[Probe]:
    """Passages that say nothing about the claim → IRRELEVANT, four ways; plus on-topic
    controls (SUPPORT, CONTRADICT) so that answering IRRELEVANT to everything fails."""
    b = _Builder("off_topic")
    kinds = [k for _ in range(per_direction) for k in FACT_KINDS][:per_direction]

    def claim_fact(kind: str) -> Fact:
        return make_fact(kind, rng)

    for kind in kinds:  # the same statement about another subject
        f = claim_fact(kind)
        other = make_fact(kind, rng, avoid=_fact_names(f), frame=f.frame)
        b.add(
            "other_subject_same_attribute",
            rng.choice(f.claims),
            rng.choice(other.statements()),
            f"template off_topic.other_subject.{kind}.{f.frame}",
        )
    for kind in kinds:  # same domain, shared words, another subject
        best = 0
        while not best:  # a claim for which some same-domain passage shares a content word
            f = claim_fact(kind)
            claim = rng.choice(f.claims)
            pool = [s for _, s in _distractors(f.domain)]
            for k2 in FACT_KINDS:
                for fid in frames_of(k2):
                    try:
                        g = make_fact(k2, rng, avoid=_fact_names(f), frame=fid)
                    except LookupError:
                        continue
                    if g.domain == f.domain and g.frame != f.frame:
                        pool.append(rng.choice(g.statements()))
            pool = [p for p in pool if not mentions(p, _fact_names(f))]
            words = content_words(claim)
            best = max(len(words & content_words(p)) for p in pool)
        passage = rng.choice([p for p in pool if len(words & content_words(p)) == best])
        b.add(
            "same_domain_shared_words",
            claim,
            passage,
            f"template off_topic.same_domain.{kind}.{f.frame}",
            shared_words=sorted(words & content_words(passage)),
        )
    for kind in kinds:  # another domain
        f = claim_fact(kind)
        if rng.random() < 0.5:
            passage = rng.choice(_distractors(exclude=f.domain))[1]
        else:
            while True:
                g = make_fact(rng.choice(FACT_KINDS), rng, avoid=_fact_names(f))
                if g.domain != f.domain:
                    break
            passage = rng.choice(g.statements())
        b.add("other_domain", rng.choice(f.claims), passage, f"template off_topic.other_domain.{kind}.{f.frame}")
    for kind in kinds:  # same subject, another attribute
        f = claim_fact(kind)
        while f.stype not in NEUTRAL:
            f = claim_fact(kind)
        attr = rng.choice(NEUTRAL[f.stype])
        b.add(
            "same_entity_other_attribute",
            rng.choice(f.claims),
            sentence("{S} " + attr, S=f.subject),
            f"template off_topic.same_entity.{kind}.{f.frame}",
        )
    for direction, lab in (("control_support", SUPPORT), ("control_contradict", CONTRADICT)):
        for kind in kinds[:controls]:
            f = claim_fact(kind)
            claim = rng.choice(f.claims)
            if lab == CONTRADICT:
                claim, passage = f.contradiction(rng)
            else:
                passage = rng.choice([t for t in f.true if t != claim])
            b.add(direction, claim, passage, f"template off_topic.control.{kind}.{f.frame}")
    return b.probes


def _fact_names(f: Fact) -> set[str]:
    """The subject and the other named things of a fact's statements (to keep them out of
    off-topic passages)."""
    names = {f.subject}
    for pool in (PEOPLE, ORGS, PHARMA, CITIES, TOWNS):
        names |= {x for x in pool if any(x in t for t in f.true + f.false)}
    return names


def paraphrase_probes(rng: random.Random, per_frame: int = 2) -> list[Probe]:
    """A paraphrase of the passage → SUPPORT; a paraphrase of its opposite (antonym,
    converse, reversed direction; no negation word) → CONTRADICT."""
    b = _Builder("paraphrase")
    for fid, passage, same, opposite in PARA_FRAMES:
        for _ in range(per_frame):
            for direction, tpl in (("paraphrase_support", same), ("opposite_contradict", opposite)):
                o, o2 = rng.sample(ORGS, 2)
                t1, t2 = rng.sample(TOWNS, 2)
                c1, c2 = rng.sample(CITIES, 2)
                slots = dict(
                    O=o,
                    O2=o2,
                    T=t1,
                    T1=t1,
                    T2=t2,
                    C1=c1,
                    C2=c2,
                    P=rng.choice(PEOPLE),
                    D=rng.choice(DRUGS),
                    B=rng.choice(STRUCTURES),
                    L=rng.choice(VENUES),
                    H=rng.choice(HOSPITALS),
                    R=rng.choice(STUDIES),
                )
                b.add(direction, sentence(tpl, **slots), sentence(passage, **slots), f"template paraphrase.{fid}")
    return b.probes


def partial_probes(rng: random.Random, per_direction: int = 50) -> list[Probe]:
    """ "S did A and B": the passage supports A and says nothing of B → SUPPORT (partial
    support counts); the passage contradicts A and says nothing of B → CONTRADICT."""
    b = _Builder("partial")
    for direction in ("supported_part", "contradicted_part"):
        made = 0
        while made < per_direction:
            kind = FACT_KINDS[made % len(FACT_KINDS)]
            f = make_fact(kind, rng)
            if f.predicate is None or f.stype not in NEUTRAL:
                continue
            attr = rng.choice(NEUTRAL[f.stype])
            parts = [f.predicate, attr] if rng.random() < 0.6 else [attr, f.predicate]
            claim = sentence("{S} " + f"{parts[0]} and {parts[1]}", S=f.subject)
            stated = f"{sentence('{S}', S=f.subject)[:-1]} {f.predicate}."
            pool = [t for t in (f.true if direction == "supported_part" else f.false) if t != stated] or list(f.true)
            b.add(direction, claim, rng.choice(pool), f"template partial.{kind}.{f.frame}", silent_part=attr)
            made += 1
    return b.probes


def long_document_probes(rng: random.Random, per_direction: int = 40) -> list[Probe]:
    """One supporting or contradicting sentence among 16-24 off-topic sentences (other
    subjects, the same domain among them), or none; judged as one document by the engine."""
    b = _Builder("long_document")
    positions = ("start", "middle", "end")
    for direction in ("support_in_long", "contradict_in_long", "none_in_long"):
        for i in range(per_direction):
            kind = FACT_KINDS[i % len(FACT_KINDS)]
            f = make_fact(kind, rng)
            claim = rng.choice(f.claims)
            support = rng.choice([t for t in f.true if t != claim])
            names = _fact_names(f)
            n = rng.randint(16, 24)
            filler: list[str] = []
            same_domain = [s for _, s in _distractors(f.domain)]
            used = set(names)  # each filler subject once: the filler never contradicts itself
            while len(filler) < n:
                r = rng.random()
                if r < 0.35:
                    cand = rng.choice(_distractors())[1]
                elif r < 0.5 and same_domain:
                    cand = rng.choice(same_domain)
                else:
                    k2 = rng.choice(FACT_KINDS)
                    try:
                        g = make_fact(k2, rng, avoid=used, frame=f.frame if k2 == kind and rng.random() < 0.3 else None)
                    except LookupError:
                        continue
                    cand = rng.choice(g.statements())
                    if not mentions(cand, used):
                        used |= _fact_names(g) - set(CITIES)
                if cand not in filler and not mentions(cand, names):
                    filler.append(cand)
            pos = positions[i % 3]
            meta: dict[str, Any] = {"sentences": n}
            if direction == "contradict_in_long":
                claim, relevant = f.contradiction(rng)
            if direction != "none_in_long":
                relevant = support if direction == "support_in_long" else relevant
                at = {"start": rng.randint(0, 2), "middle": n // 2 + rng.randint(-2, 2), "end": n - rng.randint(0, 2)}[
                    pos
                ]
                filler.insert(at, relevant)
                meta.update(position=pos, relevant_sentence=at, relevant=relevant)
            paras, k = [], 0
            while k < len(filler):
                size = rng.randint(4, 7)
                paras.append(" ".join(filler[k : k + size]))
                k += size
            b.add(
                direction, claim, "\n\n".join(paras), f"template long_document.{kind}.{f.frame}", document=True, **meta
            )
    return b.probes


GENERATORS: dict[str, Callable[[random.Random], list[Probe]]] = {
    "negation": negation_probes,
    "numbers": number_probes,
    "entities": entity_probes,
    "off_topic": off_topic_probes,
    "paraphrase": paraphrase_probes,
    "partial": partial_probes,
    "long_document": long_document_probes,
}


def templated_probes(seed: int, capabilities: Sequence[str] = CAPABILITIES) -> dict[str, list[Probe]]:
    """The templated probes of each capability; the same for the same seed."""
    return {c: GENERATORS[c](random.Random(f"{seed}:{c}")) for c in capabilities}


# ---------------------------------------------------------------------------------------
# mined probes: evaluation-only public sets, read in their original format

NLI_LABELS = {
    "e": SUPPORT,
    "entailment": SUPPORT,
    "c": CONTRADICT,
    "contradiction": CONTRADICT,
    "n": IRRELEVANT,
    "neutral": IRRELEVANT,
    "SUPPORTS": SUPPORT,
    "REFUTES": CONTRADICT,
}
EVAL_ONLY = ("nan-nli", "anli", "taxinli", "control", "averitec", "fever-symmetric/symmetric_v0.2/fever_symmetric_test")
"""The sets (folders of ``nli_extra``, or a file stem) mined here; everything else in
``nli_extra`` is treated as training data."""
ANLI_DOUBTFUL_TAGS = frozenset({"Error", "Ambiguity", "Debatable", "Plausibility", "Likely", "Unlikely"})
"""ANLI annotation tags whose gold label rests on judgement, not on the text: not mined."""
MAX_PAIR_WORDS = 110
"""Mined pair passages longer than this are left out, so that the bare judge reads them whole."""


@dataclass(frozen=True)
class Row:
    source: str  # "dataset file row N"
    premise: str
    hypothesis: str
    label: str
    tags: frozenset[str] = frozenset()


def _csv_rows(path: Path, delimiter: str = ",") -> Iterator[tuple[int, dict[str, str]]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        for i, row in enumerate(
            csv.DictReader(fh, delimiter=delimiter, quoting=csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE),
            start=1,
        ):
            yield i, row


def load_nan_nli(root: Path) -> list[Row]:
    """NaN-NLI ``data/nan.csv``: premise, hypothesis, label (entailment / contradiction / neutral)."""
    path = root / "nan-nli/data/nan.csv"
    return [
        Row(f"nan-nli data/nan.csv row {i}", r["premise"], r["hypothesis"], NLI_LABELS[r["label"].strip()])
        for i, r in _csv_rows(path)
    ]


def load_anli_dev(root: Path) -> list[Row]:
    """ANLI R1-R3 dev with annotations (``ANLI_analysis_r{1,2,3}_dev.csv``): context,
    statement, gold_label (e/n/c), tags (a Python list)."""
    out = []
    for r in (1, 2, 3):
        name = f"anli/anlizinganli/anli_annot_v0.2/ANLI_analysis_r{r}_dev.csv"
        for i, row in _csv_rows(root / name):
            tags = frozenset(ast.literal_eval(row["tags"])) if row["tags"].startswith("[") else frozenset()
            out.append(
                Row(
                    f"anli {Path(name).name} row {i}",
                    row["context"],
                    row["statement"],
                    NLI_LABELS[row["gold_label"].strip()],
                    tags,
                )
            )
    return out


TAXI_COLUMNS = (
    "lexical_linguistic",
    "syntactic_linguistic",
    "factivity_linguistic",
    "negation_logic",
    "boolean_logic",
    "quantifier_logic",
    "conditional_logic",
    "comparative_logic",
    "relational_reasoning",
    "spatial_reasoning",
    "temporal_reasoning",
    "causal_reasoning",
    "coreference_reasoning",
    "world_knowledge",
    "taxonomic_knowledge",
)


def load_taxinli(root: Path) -> list[Row]:
    """TaxiNLI ``taxinli10k.tsv`` (MNLI pairs): rows whose re-annotated label agrees with the
    MNLI gold label, with their reasoning categories as tags."""
    out = []
    for i, row in _csv_rows(root / "taxinli/taxinli10k.tsv", delimiter="\t"):
        if row["label"] != row["annotated_label"] or row["label"] not in NLI_LABELS:
            continue
        tags = frozenset(c for c in TAXI_COLUMNS if row.get(c, "0").strip() == "1") | {f"genre:{row['genre']}"}
        out.append(Row(f"taxinli taxinli10k.tsv row {i}", row["prem"], row["hyp"], NLI_LABELS[row["label"]], tags))
    return out


def detokenize(text: str) -> str:
    """FEVER's PTB tokens back to text (the training code's own ``detokenize``)."""
    from conflictscore_local.train.sources import detokenize as undo

    return undo(text)


def load_fever_symmetric_test(root: Path) -> list[Row]:
    """FEVER-Symmetric v0.2 **test** (claim, evidence sentence, SUPPORTS / REFUTES)."""
    path = root / "fever-symmetric/symmetric_v0.2/fever_symmetric_test.jsonl"
    out = []
    with path.open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if line.strip():
                r = json.loads(line)
                out.append(
                    Row(
                        f"fever-symmetric fever_symmetric_test.jsonl line {i}",
                        detokenize(r["evidence"]),
                        detokenize(r["claim"]),
                        NLI_LABELS[r["gold_label"]],
                    )
                )
    return out


def load_control_dev(root: Path) -> list[Row]:
    """ConTRoL ``data/dev.jsonl`` (long passage, hypothesis, e/c/n)."""
    out = []
    with (root / "control/data/dev.jsonl").open(encoding="utf-8") as fh:
        for i, line in enumerate(fh, start=1):
            if line.strip():
                r = json.loads(line)
                out.append(
                    Row(f"control data/dev.jsonl line {i}", r["premise"], r["hypothesis"], NLI_LABELS[r["label"]])
                )
    return out


def _training_strings(path: Path) -> Iterator[str]:
    """Every text field of a data file (JSON lines / JSON / CSV / TSV / one text a line)."""

    def walk(v: Any) -> Iterator[str]:
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            for x in v.values():
                yield from walk(x)
        elif isinstance(v, list):
            for x in v:
                yield from walk(x)

    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("cp1252")
    if path.suffix in (".jsonl", ".json"):
        for line in text.splitlines():
            line = line.strip()
            if line:
                try:
                    yield from walk(json.loads(line))
                except json.JSONDecodeError:
                    pass
    elif path.suffix in (".csv", ".tsv", ".txt"):
        delimiter = "," if path.suffix == ".csv" else "\t"
        for row in csv.reader(text.splitlines(), delimiter=delimiter):
            yield from row
    elif re.fullmatch(r"\.(raw\.input\d|dev|test)", "".join(path.suffixes)) or path.name.startswith(("s1.", "s2.")):
        yield from text.splitlines()


TRAINING_SOURCES = ("fever_nli", "esnli", "sick")
"""Sets of ``../shared/data`` (outside ``nli_extra``) that the shipped judge was trained on and
that the mined sets could share text with (FEVER, SNLI)."""


def training_index(data_dir: Path, min_chars: int = 20) -> Any:
    """The project's :class:`~conflictscore_local.bench.leakage.TextIndex` of every text a
    judge of this project was or may be trained on: all of ``nli_extra`` except the
    evaluation-only sets, plus FEVER NLI, e-SNLI and SICK (texts of ``min_chars`` characters or
    more). A mined probe that shares its claim or passage (or a sentence of six words or more)
    with it is dropped."""
    from conflictscore_local.bench.leakage import TextIndex

    index = TextIndex()
    extra = data_dir / "nli_extra"
    files = [p for p in sorted(extra.rglob("*")) if p.is_file() and p.parts[len(extra.parts)] != "_checks"]
    files = [p for p in files if not any(str(p.relative_to(extra)).startswith(e) for e in EVAL_ONLY)]
    files += [p for s in TRAINING_SOURCES for p in sorted((data_dir / s).glob("*")) if p.is_file()]
    for path in files:
        if path.name.lower().startswith(("readme", "license", "data_license")) or path.suffix in (".md", ".py"):
            continue
        for s in _training_strings(path):
            if len(s) >= min_chars:
                index.add_document(detokenize(s))
    return index


def _leaks(index: Any, row: Row) -> bool:
    return index is not None and (index.document_leaks(row.premise) or index.document_leaks(row.hypothesis))


def _sample(
    rows: Sequence[Row],
    per_label: int,
    rng: random.Random,
    used: set[str],
    labels: Sequence[str] = (SUPPORT, CONTRADICT, IRRELEVANT),
) -> list[Row]:
    """Up to ``per_label`` rows of each label, not already used by another capability."""
    out = []
    for lab in labels:
        pool = [r for r in rows if r.label == lab and r.source not in used]
        picked = rng.sample(pool, min(per_label, len(pool)))
        used.update(r.source for r in picked)
        out += picked
    return out


def _short(r: Row) -> bool:
    return len(r.premise.split()) <= MAX_PAIR_WORDS


DIGIT = re.compile(r"\d")
CAPITALISED = re.compile(r"\b[A-Z][a-z]{2,}")


def _names(text: str) -> set[str]:
    """Capitalised words that are not sentence-initial function words: the names in ``text``."""
    return {w for w in CAPITALISED.findall(text) if w.lower() not in STOPWORDS}


def mined_probes(
    data_dir: Path, seed: int, capabilities: Sequence[str] = CAPABILITIES, index: Any = None
) -> tuple[dict[str, list[Probe]], dict[str, Any]]:
    """Probes from the evaluation-only sets in ``data_dir/nli_extra``, and what was dropped
    as shared with training data (``index``, see :func:`training_index`)."""
    root = data_dir / "nli_extra"
    info: dict[str, Any] = {"dropped_shared_with_training": Counter()}
    rows: dict[str, list[Row]] = {}
    for name, loader in (
        ("nan-nli", load_nan_nli),
        ("anli", load_anli_dev),
        ("taxinli", load_taxinli),
        ("fever-symmetric", load_fever_symmetric_test),
        ("control", load_control_dev),
    ):
        kept = []
        for r in loader(root):
            if _leaks(index, r):
                info["dropped_shared_with_training"][name] += 1
            else:
                kept.append(r)
        rows[name] = kept
    info["rows_available"] = {k: len(v) for k, v in rows.items()}
    info["dropped_shared_with_training"] = dict(info["dropped_shared_with_training"])
    anli = [r for r in rows["anli"] if _short(r) and not r.tags & ANLI_DOUBTFUL_TAGS]
    taxi = [r for r in rows["taxinli"] if _short(r)]
    fever = rows["fever-symmetric"]
    out: dict[str, list[Probe]] = {}
    for cap in capabilities:
        rng = random.Random(f"{seed}:mined:{cap}")
        used: set[str] = set()
        b = _Builder(cap)
        picked: list[tuple[str, Row]] = []
        if cap == "negation":
            picked += [("nan-nli", r) for r in _sample(rows["nan-nli"], 14, rng, used)]
            picked += [("anli", r) for r in _sample([r for r in anli if "Negation" in r.tags], 6, rng, used)]
            picked += [("taxinli", r) for r in _sample([r for r in taxi if "negation_logic" in r.tags], 6, rng, used)]
            for _, r in picked:
                neg = "negated" if has_negation(r.hypothesis) else "affirmative"
                b.add(
                    f"mined_{r.label.lower()}_{neg}_claim",
                    r.hypothesis,
                    r.premise,
                    r.source,
                    origin="mined",
                    label=r.label,
                )
        elif cap == "numbers":
            num = [r for r in anli if r.tags & {"Numerical", "Dates", "Cardinal"} and DIGIT.search(r.hypothesis)]
            picked += [("anli", r) for r in _sample(num, 8, rng, used)]
            fnum = [r for r in fever if DIGIT.search(r.hypothesis) and DIGIT.search(r.premise)]
            picked += [("fever", r) for r in _sample(fnum, 18, rng, used, (SUPPORT, CONTRADICT))]
        elif cap == "entities":
            picked += [("anli", r) for r in _sample([r for r in anli if "Names" in r.tags], 6, rng, used)]
            fent = [r for r in fever if not DIGIT.search(r.hypothesis)]
            picked += [("fever", r) for r in _sample(fent, 20, rng, used, (SUPPORT, CONTRADICT))]
        elif cap == "off_topic":
            on_topic = [r for r in taxi if r.label == IRRELEVANT]
            for r in _sample(on_topic, 14, rng, used, (IRRELEVANT,)):
                b.add("mined_on_topic_neutral", r.hypothesis, r.premise, r.source, origin="mined", label=IRRELEVANT)
            for r in _sample([r for r in taxi if not r.tags & {"negation_logic"}], 7, rng, used, (SUPPORT, CONTRADICT)):
                b.add(
                    f"mined_control_{r.label.lower()}", r.hypothesis, r.premise, r.source, origin="mined", label=r.label
                )
            claims = rng.sample(fever, min(32, len(fever)))
            n_same = 0
            for c in claims:  # a claim against another row's evidence: shared words, no shared name or number
                cw, names = content_words(c.hypothesis), _names(c.hypothesis + " " + c.premise)
                ok = [
                    e
                    for e in fever
                    if e is not c
                    and cw & content_words(e.premise)
                    and not names & _names(e.premise)
                    and not set(re.findall(r"\d+", c.hypothesis)) & set(re.findall(r"\d+", e.premise))
                ]
                if ok and n_same < 18:
                    e = rng.choice(ok)
                    b.add(
                        "mined_same_domain_cross_pair",
                        c.hypothesis,
                        e.premise,
                        f"{c.source} (claim) x {e.source.split(' ', 2)[-1]} (evidence)",
                        origin="mined",
                        label=IRRELEVANT,
                    )
                    n_same += 1
            other = [r for r in taxi if r.label in (SUPPORT, CONTRADICT, IRRELEVANT)]
            for c in rng.sample(fever, min(14, len(fever))):  # a Wikipedia claim against spoken or written English
                unrelated = [r for r in other if not content_words(c.hypothesis) & content_words(r.premise)]
                if not unrelated:
                    continue
                e = rng.choice(unrelated)
                b.add(
                    "mined_other_domain_cross_pair",
                    c.hypothesis,
                    e.premise,
                    f"{c.source} (claim) x {e.source} (premise)",
                    origin="mined",
                    label=IRRELEVANT,
                )
        elif cap == "paraphrase":
            lex = [
                r
                for r in taxi
                if r.tags & {"lexical_linguistic", "syntactic_linguistic"} and not r.tags & set(TAXI_COLUMNS[2:])
            ]
            picked += [("taxinli", r) for r in _sample(lex, 24, rng, used, (SUPPORT, CONTRADICT))]
        elif cap == "long_document":
            long_rows = [r for r in rows["control"] if 150 <= len(r.premise.split()) <= 400]
            for r in _sample(long_rows, 15, rng, used):
                b.add(
                    f"mined_{r.label.lower()}",
                    r.hypothesis,
                    r.premise,
                    r.source,
                    origin="mined",
                    label=r.label,
                    document=True,
                )
        if cap not in ("negation", "off_topic", "long_document"):
            for _, r in picked:
                b.add(f"mined_{r.label.lower()}", r.hypothesis, r.premise, r.source, origin="mined", label=r.label)
        out[cap] = b.probes
    info["not_mined"] = {
        "partial": "no evaluation-only set labels partially supported compound claims by this project's convention "
        "(NLI sets call them neutral)",
        "averitec": "not used: its evidence is question-answer pairs and its verdicts often rest on the fact-checkers' "
        "judgement of sources, not on text a judge reads",
    }
    return out, info
