"""Pairs generated from real training pairs, label-symmetric, and the thinning of RAMDocs' entity twins.

A judge learns any surface feature that predicts a label by itself. Generating only
"negated claim vs original evidence → CONTRADICT" teaches "a negation → CONTRADICT"
(default judge v2 did exactly that), and only "changed number → CONTRADICT" teaches
nothing about numbers that agree. So every edit here is made in both directions
(:func:`augment`): the same supported pair yields a CONTRADICT pair with the edit in the
claim, one with the edit in the passage, and a SUPPORT pair with the same edit in both; a
negation also meets irrelevant passages (→ IRRELEVANT). :func:`feature_balance` measures
what is left: the label distribution conditioned on each surface feature.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter
from typing import Any, Callable, Iterable, Sequence

from ..bench import normalize_text
from ..core.types import CONTRADICT, IRRELEVANT, SUPPORT
from .sources import LabelledPair

_NUMBER = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w|[.,]\d)")
_MONTHS = (
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
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
_AUX = re.compile(r"\b(is|are|was|were|has|have|had|can|will|does|did|do|should|could|would|must|may)\b(?! not\b)")
_NEGATION = re.compile(r"\b(not|no|never|n't|cannot|nobody|nothing|none)\b|n't\b", re.IGNORECASE)
_ENTITY_TYPES = ("PERSON", "GPE", "ORG", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART")


def thin_entity_twins(items: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """RAMDocs items come in two variants over the same documents, the claim naming its
    entity or not. Keep the ``entity`` variant's documents only where a label differs from
    the ``no_entity`` twin (the ambiguity documents that teach "another entity is
    irrelevant"): elsewhere the two give near-identical pairs. Returns the items and the
    number of claim × document pairs dropped."""
    twins = {it["id"].rsplit(":", 1)[0]: it for it in items if it.get("variant") == "no_entity"}
    out, dropped = [], 0
    for it in items:
        twin = twins.get(it["id"].rsplit(":", 1)[0]) if it.get("variant") == "entity" else None
        if twin is None or len(twin["gold_labels"]) != len(it["gold_labels"]):
            out.append(it)
            continue
        keep = [
            j
            for j in range(len(it["documents"]))
            if any(row[j] != trow[j] for row, trow in zip(it["gold_labels"], twin["gold_labels"]))
        ]
        dropped += len(it["claims"]) * (len(it["documents"]) - len(keep))
        if keep:
            rows = [[row[j] for j in keep] for row in it["gold_labels"]]
            out.append(
                {
                    **it,
                    "documents": [it["documents"][j] for j in keep],
                    "gold_labels": rows,
                    "gold_conflicted": [SUPPORT in r and CONTRADICT in r for r in rows],
                }
            )
    return out, dropped


def bench_support_pairs(items: Iterable[dict[str, Any]], max_words: int) -> list[LabelledPair]:
    """(claim, document) pairs of ConflictBench items labelled SUPPORT, short documents only."""
    return [
        LabelledPair(c.strip(), d["text"].strip(), SUPPORT, it["source"], "bench_document")
        for it in items
        for c, row in zip(it["claims"], it["gold_labels"])
        for d, lab in zip(it["documents"], row)
        if lab == SUPPORT and len(d["text"].split()) <= max_words
    ]


# -- edits ---------------------------------------------------------------------------------------
_DAY_MONTH = re.compile(r"^(\d{1,2})$")


def _near_miss(value: int, rng: random.Random, *, year: bool) -> int:
    """A value one small step off: a year by 1–3, a small count by 1–2, a larger one by 1–5 %."""
    if year:
        return value + rng.choice((-1, 1)) * rng.randint(1, 3)
    step = rng.randint(1, 2) if value < 50 else max(1, round(value * rng.uniform(0.01, 0.05)))
    new = value + rng.choice((-1, 1)) * step
    return new if new > 0 else value + step


def _other_number(token: str, rng: random.Random) -> str:
    """A different number in the same format. Half the edits are near misses (a year moved by
    1–3, a count by a few units or per cent), half far (years by 1–30, values by 20–90 %): a
    judge must not let "almost the same number" pass as support."""
    plain = token.replace(",", "")
    near = rng.random() < 0.5
    if "." in plain:
        decimals = len(plain.split(".")[1])
        value = float(plain)
        factor = rng.uniform(1.02, 1.1) if near else rng.choice((rng.uniform(0.2, 0.8), rng.uniform(1.2, 1.9)))
        new = round(value * factor, decimals)
        return f"{new:.{decimals}f}" if new != value else f"{value + 10**-decimals:.{decimals}f}"
    value = int(plain)
    year = 1000 <= value <= 2100 and "," not in token
    if near:
        new = _near_miss(value, rng, year=year)
    elif year:
        new = value + rng.choice((-1, 1)) * rng.randint(1, 30)
    else:
        new = value + rng.choice((-1, 1)) * max(1, round(value * rng.uniform(0.2, 0.9)))
        new = new if new > 0 and new != value else value + rng.randint(1, 9)
    if value <= 31 and not year:  # days of the month stay days of the month
        new = min(max(new, 1), 28) if new != value else value % 28 + 1
    return f"{new:,}" if "," in token else str(new)


def _mentions(text: str, token: str) -> int:
    """How often ``text`` states the number or month ``token`` as a whole token."""
    return len(re.findall(rf"(?<![\w.,])(?<![A-Za-z]-){re.escape(token)}(?!\w|[.,]\d)", text))


def _number_spans(text: str, other: str) -> list[tuple[int, int, str]]:
    """Numbers and months of ``text`` that ``text`` states once and ``other`` states too."""
    return [
        (m.start(), m.end(), kind)
        for pattern, kind in ((_NUMBER, "n"), (_MONTH, "m"))
        for m in pattern.finditer(text)
        if _mentions(other, m.group()) and _mentions(text, m.group()) == 1
    ]


def _replace_token(text: str, old: str, new: str) -> str:
    return re.sub(rf"(?<![\w.,])(?<![A-Za-z]-){re.escape(old)}(?!\w|[.,]\d)", new, text)


def number_edit(claim: str, passage: str, rng: random.Random) -> tuple[str, str] | None:
    """``(old, new)``: a number or month the claim states once and the passage states too,
    and a value neither states; None when there is none."""
    spans = _number_spans(claim, passage)
    if not spans:
        return None
    a, b, kind = rng.choice(spans)
    old = claim[a:b]
    new = _other_number(old, rng) if kind == "n" else rng.choice([m for m in _MONTHS if m != old])
    if new == old or _mentions(passage, new) or _mentions(claim, new):
        return None
    return old, new


def swap_number(text: str, other: str, rng: random.Random) -> str | None:
    """``text`` with one number or month that ``other`` also states (and ``text`` states
    once) changed to a value ``other`` does not state; None when there is none."""
    edit = number_edit(text, other, rng)
    return None if edit is None else _replace_token(text, *edit)


# -- units: the same quantity in another unit (SUPPORT), the number kept under another unit (CONTRADICT) --
_UNITS: dict[str, tuple[str, float, tuple[str, ...]]] = {
    # name: (dimension, size in the dimension's base unit, spellings; the first is written)
    "kilometres": ("length", 1000.0, ("kilometres", "kilometers", "km")),
    "metres": ("length", 1.0, ("metres", "meters", "m")),
    "centimetres": ("length", 0.01, ("centimetres", "centimeters", "cm")),
    "millimetres": ("length", 0.001, ("millimetres", "millimeters", "mm")),
    "miles": ("imperial", 5280.0, ("miles",)),
    "feet": ("imperial", 1.0, ("feet", "ft")),
    "inches": ("imperial", 1 / 12, ("inches",)),
    "tonnes": ("mass", 1000.0, ("tonnes", "tons")),
    "kilograms": ("mass", 1.0, ("kilograms", "kg")),
    "grams": ("mass", 0.001, ("grams", "g")),
    "litres": ("volume", 1.0, ("litres", "liters", "L")),
    "millilitres": ("volume", 0.001, ("millilitres", "milliliters", "ml", "mL")),
    "weeks": ("time", 604800.0, ("weeks",)),
    "days": ("time", 86400.0, ("days",)),
    "hours": ("time", 3600.0, ("hours",)),
    "minutes": ("time", 60.0, ("minutes",)),
    "seconds": ("time", 1.0, ("seconds",)),
}
_SPELLING = {sp: name for name, (_, _, sps) in _UNITS.items() for sp in sps}
_QUANTITY = re.compile(
    r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?("
    + "|".join(sorted((re.escape(sp) for sp in _SPELLING), key=len, reverse=True))
    + r"|°C|°F|degrees Celsius|degrees Fahrenheit)\b"
)


def _number_text(value: float) -> str | None:
    """A quantity written as people write it (``5,000``, ``2.5``), or None when it is not a whole number
    or a value with at most two decimals, or too large to read."""
    if value <= 0 or value >= 1e7:
        return None
    if abs(value - round(value)) < 1e-9:
        return f"{round(value):,}"
    if abs(value * 100 - round(value * 100)) < 1e-6:
        return f"{value:.2f}".rstrip("0")
    return None


def _conversions(number: str, unit: str) -> list[str]:
    """The same quantity in each other unit of its dimension that gives a readable number, the most readable
    first (the value nearest 30 on a log scale: 5 km as 5,000 metres before 500,000 centimetres)."""
    value = float(number.replace(",", ""))
    if unit in ("°C", "degrees Celsius", "°F", "degrees Fahrenheit"):
        celsius = unit in ("°C", "degrees Celsius")
        other = value * 9 / 5 + 32 if celsius else (value - 32) * 5 / 9
        text = _number_text(other)
        return [f"{text} °F" if celsius else f"{text} °C"] if text and other == round(other) else []
    name = _SPELLING[unit]
    dim, size, _ = _UNITS[name]
    out = []
    for other_name, (other_dim, other_size, spellings) in _UNITS.items():
        if other_dim == dim and other_name != name:
            text = _number_text(value * size / other_size)
            if text is not None:
                out.append((abs(math.log10(value * size / other_size) - 1.5), f"{text} {spellings[0]}"))
    return [text for _, text in sorted(out)]


def unit_edit(claim: str, passage: str, rng: random.Random) -> dict[str, str] | None:
    """For a quantity with a unit that the claim states once and the passage states too: ``old`` as written,
    ``same`` (the quantity in another unit of its dimension: 5 km → 5,000 metres) and ``wrong`` (the number
    kept under that other unit: 5 km → 5 metres, or the temperature's number under the other scale); None
    when there is none."""
    found = [m for m in _QUANTITY.finditer(claim) if claim.count(m.group()) == 1 and m.group() in passage]
    rng.shuffle(found)
    for m in found:
        number, unit = m.group(1), m.group(2)
        options = _conversions(number, unit)
        if not options:
            continue
        same = options[0] if len(options) == 1 or rng.random() < 0.75 else options[1]
        wrong = f"{number} {same.split(' ', 1)[1]}"
        if wrong.replace(",", "") == same.replace(",", ""):
            continue
        return {"old": m.group(), "same": same, "wrong": wrong}
    return None


def negate(claim: str, max_words: int = 25) -> str | None:
    """The claim with its first auxiliary negated ("was" → "was not"); None when it already
    holds a negation, has no auxiliary, is conditional or longer than ``max_words``."""
    if _NEGATION.search(claim) or len(claim.split()) > max_words or claim.lower().startswith(("if ", "when ")):
        return None
    m = _AUX.search(claim)
    if m is None:
        return None
    word = "cannot" if m.group() == "can" else f"{m.group()} not"
    return claim[: m.start()] + word + claim[m.end() :]


_AUX_BIGRAM = re.compile(_AUX.pattern + r"\s+(\w+)")


def negate_both(claim: str, passage: str, max_words: int = 25) -> tuple[str, str] | None:
    """The claim and the passage negated at the same predicate: the claim's first "auxiliary
    + next word" ("was completed") when the passage states it exactly once; None when the
    claim cannot be negated (see :func:`negate`), the passage already holds a negation, or
    the predicate is not shared. Aligning the two keeps the SUPPORT label of the doubly
    negated pair true (negating another clause of the passage would not)."""
    if negate(claim, max_words) is None or _NEGATION.search(passage):
        return None
    m = _AUX_BIGRAM.search(claim)
    if m is None or m.start() != _AUX.search(claim).start():  # type: ignore[union-attr]  # _AUX matches wherever _AUX_BIGRAM did
        return None
    bigram = re.compile(rf"\b{re.escape(m.group(1))}\s+{re.escape(m.group(2))}\b")
    hits = list(bigram.finditer(passage))
    if len(hits) != 1:
        return None
    word = "cannot" if m.group(1) == "can" else f"{m.group(1)} not"
    h = hits[0]
    new_passage = passage[: h.start()] + f"{word} {m.group(2)}" + passage[h.end() :]
    new_claim = claim[: m.start()] + f"{word} {m.group(2)}" + claim[m.end() :]
    return new_claim, new_passage


def swap_entity(
    claim: str, passage: str, ents: Sequence[tuple[str, str]], pool: dict[str, list[str]], rng: random.Random
) -> str | None:
    """The claim with its last named entity, when the passage names it too and it is not the
    claim's first entity (the subject), replaced by another entity of the same type that
    the passage does not name; None otherwise.

    Only the object side is swapped: a claim about another subject would be IRRELEVANT to
    the passage, not contradicted by it.
    """
    edit = entity_edit(claim, passage, ents, pool, rng)
    return None if edit is None else claim.replace(edit[0], edit[1], 1)


def entity_edit(
    claim: str, passage: str, ents: Sequence[tuple[str, str]], pool: dict[str, list[str]], rng: random.Random
) -> tuple[str, str] | None:
    """``(old, new)`` for :func:`swap_entity`: the claim's object entity and its replacement."""
    if len(ents) < 2:
        return None
    text, label = ents[-1]
    if text not in passage or len(pool.get(label, ())) < 2 or claim.count(text) != 1 or text == ents[0][0]:
        return None
    for _ in range(10):
        new = rng.choice(pool[label])
        if new != text and new not in passage and new.casefold() not in claim.casefold() and text not in new:
            return text, new
    return None


def subject_edit(
    claim: str, passage: str, ents: Sequence[tuple[str, str]], pool: dict[str, list[str]], rng: random.Random
) -> tuple[str, str] | None:
    """``(old, new)``: the claim's subject (its first named entity, within its first three
    words, named once in the claim and in the passage) and another entity of the same type
    that neither names; None otherwise. A claim about another subject is IRRELEVANT to the
    passage (what holds for one town says nothing about another), not contradicted by it."""
    if not ents:
        return None
    text, label = ents[0]
    start = claim.find(text)
    if start < 0 or len(claim[:start].split()) > 2 or claim.count(text) != 1 or text not in passage:
        return None
    if len(pool.get(label, ())) < 2:
        return None
    for _ in range(10):
        new = rng.choice(pool[label])
        if (
            new != text
            and new not in passage
            and new.casefold() not in claim.casefold()
            and text not in new
            and new not in text
        ):
            return text, new
    return None


def named_entities(claims: Sequence[str]) -> list[list[tuple[str, str]]]:
    """(text, type) of the named entities of each claim, with spaCy's small English pipeline."""
    from ..util.nlp import installed_pipeline, load_pipeline

    nlp = load_pipeline(installed_pipeline() or "en_core_web_sm", disable=["lemmatizer"])
    return [
        [(e.text, e.label_) for e in doc.ents if e.label_ in _ENTITY_TYPES] for doc in nlp.pipe(claims, batch_size=256)
    ]


# -- the generated pairs ---------------------------------------------------------------------------
def _content_words(text: str) -> set[str]:
    return {w for w in normalize_text(text).split() if len(w) > 3}


def augment(
    support: Sequence[LabelledPair],
    passages: Sequence[str],
    rng: random.Random,
    *,
    per_kind: int,
    contradict: Sequence[LabelledPair] = (),
    irrelevant: Sequence[LabelledPair] = (),
    entities: Callable[[Sequence[str]], list[list[tuple[str, str]]]] = named_entities,
    units: int = 0,
    unit_pool: Sequence[LabelledPair] = (),
) -> list[LabelledPair]:
    """Label-symmetric pairs generated from supported (and irrelevant) training pairs.

    Each kind is made in every direction from the same source pair, so the edit itself
    predicts no label (``kind`` names the direction):

    - ``aug_number``: a number, year or month both state, changed in the claim → CONTRADICT
      (``claim_edit``), in the passage → CONTRADICT (``passage_edit``), to the same new value
      in both → SUPPORT (``both_edit``). Half the changes are near misses (a year by 1–3);
    - ``aug_negation``: the claim of a supported pair negated → CONTRADICT (``claim_edit``);
      claim and passage negated at the same predicate (:func:`negate_both`) → SUPPORT
      (``both_edit``), and the passage alone → CONTRADICT (``passage_edit``); as many
      negated claims of ``contradict`` pairs against their passage, which states the
      negative → SUPPORT (``contradicted_claim_negated``), and of ``irrelevant`` pairs →
      IRRELEVANT (``irrelevant``);
    - ``aug_entity``: the claim's object entity swapped → CONTRADICT (``claim_edit``), swapped
      in claim and passage alike → SUPPORT (``both_edit``);
    - ``aug_subject``: the claim's subject swapped for another entity of its type (:func:`subject_edit`)
      → IRRELEVANT (``claim_edit``; also with a changed number, ``claim_edit_value``), swapped in
      the passage alone → IRRELEVANT (``passage_edit``), in both → SUPPORT (``both_edit``);
    - ``aug_unrelated``: the claim against a passage drawn from the whole pool that shares at
      most one content word → IRRELEVANT;
    - ``aug_unit`` (``units`` source pairs from ``support`` and ``unit_pool``, drawn from their own
      seeded stream so that 0 leaves the other kinds as they were): a quantity both state (:func:`unit_edit`) written
      in another unit of its dimension in the claim → SUPPORT (``claim_convert``), in the passage → SUPPORT
      (``passage_convert``); its number kept under that other unit in the claim → CONTRADICT
      (``claim_wrong_unit``), in the passage → CONTRADICT (``passage_wrong_unit``).

    ``per_kind`` bounds the source pairs used per kind (each yields up to three pairs).
    """
    order = list(support)
    rng.shuffle(order)
    out: list[LabelledPair] = []
    used: Counter[str] = Counter()

    def add(claim: str, passage: str, label: str, source: str, direction: str) -> None:
        out.append(LabelledPair(claim, passage, label, source, direction))  # type: ignore[arg-type]  # add's callers pass the three labels only

    for p in order:
        if used["aug_number"] >= per_kind:
            break
        edit = number_edit(p.claim, p.passage, rng)
        if edit is None:
            continue
        old, new = edit
        used["aug_number"] += 1
        changed_claim, changed_passage = _replace_token(p.claim, old, new), _replace_token(p.passage, old, new)
        add(changed_claim, p.passage, CONTRADICT, "aug_number", "claim_edit")
        add(p.claim, changed_passage, CONTRADICT, "aug_number", "passage_edit")
        add(changed_claim, changed_passage, SUPPORT, "aug_number", "both_edit")
    for p in order:
        if used["aug_negation"] >= per_kind:
            break
        both = negate_both(p.claim, p.passage)
        neg = negate(p.claim)
        if neg is None:
            continue
        used["aug_negation"] += 1
        add(neg, p.passage, CONTRADICT, "aug_negation", "claim_edit")
        if both is not None:
            add(both[0], both[1], SUPPORT, "aug_negation", "both_edit")
            add(p.claim, both[1], CONTRADICT, "aug_negation", "passage_edit")
    # a negated claim is supported by evidence that contradicts the claim (the evidence states
    # the negative), and stays irrelevant to a passage that was irrelevant to the claim
    for pool_pairs, label, direction in (
        (contradict, SUPPORT, "contradicted_claim_negated"),
        (irrelevant, IRRELEVANT, "irrelevant"),
    ):
        shuffled = list(pool_pairs)
        rng.shuffle(shuffled)
        made = 0
        for p in shuffled:
            if made >= used["aug_negation"]:
                break
            neg = negate(p.claim)
            if neg is not None:
                add(neg, p.passage, label, "aug_negation", direction)
                made += 1
    sample = order[: per_kind * 4]
    ents = entities([p.claim for p in sample])
    pool: dict[str, list[str]] = {}
    for es in ents:
        for text, kind in es:
            pool.setdefault(kind, []).append(text)
    pool = {k: sorted(set(v)) for k, v in pool.items()}
    for p, es in zip(sample, ents):
        if used["aug_entity"] >= per_kind // 2:
            break
        edit = entity_edit(p.claim, p.passage, es, pool, rng)
        if edit is None:
            continue
        used["aug_entity"] += 1
        old, new = edit
        add(p.claim.replace(old, new, 1), p.passage, CONTRADICT, "aug_entity", "claim_edit")
        add(p.claim.replace(old, new, 1), p.passage.replace(old, new), SUPPORT, "aug_entity", "both_edit")
    for p, es in zip(sample, ents):
        if used["aug_subject"] >= per_kind // 2:
            break
        edit = subject_edit(p.claim, p.passage, es, pool, rng)
        if edit is None:
            continue
        used["aug_subject"] += 1
        old, new = edit
        other_claim = p.claim.replace(old, new, 1)
        add(other_claim, p.passage, IRRELEVANT, "aug_subject", "claim_edit")
        add(p.claim, p.passage.replace(old, new), IRRELEVANT, "aug_subject", "passage_edit")
        add(other_claim, p.passage.replace(old, new), SUPPORT, "aug_subject", "both_edit")
        number = number_edit(other_claim, p.passage, rng)
        if number is not None:  # another subject with another value: still irrelevant, not a contradiction
            add(_replace_token(other_claim, *number), p.passage, IRRELEVANT, "aug_subject", "claim_edit_value")
    for p in order[:per_kind]:
        words = _content_words(p.claim)
        for _ in range(10):
            other = rng.choice(passages)
            if len(words & _content_words(other)) <= 1:
                add(p.claim, other, IRRELEVANT, "aug_unrelated", "random")
                break
    if units:
        unit_rng = random.Random(f"units-{rng.random()}")
        made = 0
        for p in [*support, *unit_pool]:
            if made >= units:
                break
            if p.label != SUPPORT:
                continue
            unit = unit_edit(p.claim, p.passage, unit_rng)
            if unit is None:
                continue
            made += 1
            old, same, wrong = unit["old"], unit["same"], unit["wrong"]
            add(p.claim.replace(old, same, 1), p.passage, SUPPORT, "aug_unit", "claim_convert")
            add(p.claim, p.passage.replace(old, same), SUPPORT, "aug_unit", "passage_convert")
            add(p.claim.replace(old, wrong, 1), p.passage, CONTRADICT, "aug_unit", "claim_wrong_unit")
            add(p.claim, p.passage.replace(old, wrong), CONTRADICT, "aug_unit", "passage_wrong_unit")
    return out


# -- compound claims and negated asides -------------------------------------------------------------
_JOINERS = ("{a}, and {b}.", "{a}; {b}.", "{a} and {b}.", "{a}. Also, {b}.")
_LOWER_FIRST = frozenset(
    "a an the it its this that these those there they he she we in on at for of by "
    "some many most all both each one two several".split()
)


def _clause(text: str, *, first: bool) -> str:
    """``text`` as a clause of a compound sentence: no final stop; a leading function word
    lower-cased when the clause comes second (a leading name keeps its capital)."""
    t = text.strip().rstrip(".!?").strip()
    if not first and t:
        word = t.split()[0]
        if word.lower() in _LOWER_FIRST and word[:1].isupper():
            t = word.lower() + t[len(word) :]
    return t


def compound(known: str, silent: str, rng: random.Random) -> str:
    """One claim stating ``known`` and ``silent`` (in a random order, through one of
    :data:`_JOINERS`): the claim a decomposer leaves whole when two facts share a sentence."""
    a, b = (known, silent) if rng.random() < 0.5 else (silent, known)
    return rng.choice(_JOINERS).format(a=_clause(a, first=True), b=_clause(b, first=False))


def _unrelated(
    words: set[str], pool: Sequence[LabelledPair], rng: random.Random, *, other_than: LabelledPair, tries: int = 10
) -> LabelledPair | None:
    """A pair of ``pool`` from another source than ``other_than`` whose claim and passage share
    at most one content word with ``words`` (a caption set's claims share a scene with its own
    passages even without shared words)."""
    for _ in range(tries):
        q = rng.choice(pool)
        if (
            q.source != other_than.source
            and q.passage != other_than.passage
            and len(words & _content_words(q.claim)) <= 1
            and len(words & _content_words(q.passage)) <= 1
        ):
            return q
    return None


def compose(
    support: Sequence[LabelledPair],
    contradict: Sequence[LabelledPair],
    irrelevant: Sequence[LabelledPair],
    rng: random.Random,
    *,
    per_kind: int,
    max_words: int = 100,
) -> list[LabelledPair]:
    """Label-symmetric compound claims and negated asides (the project's convention: partial
    support counts, and a negation elsewhere in the passage changes nothing).

    - ``aug_compound``: a pair's claim joined (:func:`compound`) with the claim of an
      unrelated pair, against the first pair's passage, which is silent on the added part:
      the label stays the pair's own (``partial_support`` → SUPPORT, ``partial_contradict``
      → CONTRADICT), and the same compound against a passage unrelated to both parts →
      IRRELEVANT (``neither``; half as many, from each label's compounds alike). The added part
      always comes from another source than the pair. It is negated (:func:`negate`) a third of the time,
      so neither the joiner nor a negation in it predicts a label;
    - ``aug_aside``: a passage of a SUPPORT, CONTRADICT or IRRELEVANT pair with an unrelated
      negated statement added before or after it (``support``, ``contradict``,
      ``irrelevant``): the label is unchanged.

    ``per_kind`` bounds the pairs made per label and kind; passages stay within ``max_words``.
    """
    out: list[LabelledPair] = []
    every = [*support, *contradict, *irrelevant]
    if not every:
        return out

    def silent_part(p: LabelledPair) -> str | None:
        q = _unrelated(_content_words(p.claim) | _content_words(p.passage), every, rng, other_than=p)
        if q is None:
            return None
        if rng.random() < 1 / 3:
            return negate(q.claim) or q.claim
        return q.claim

    for pool, label, direction in (
        (support, SUPPORT, "partial_support"),
        (contradict, CONTRADICT, "partial_contradict"),
    ):
        order = list(pool)
        rng.shuffle(order)
        made = neither = 0  # each label's compounds get their own IRRELEVANT twins, half the quota
        for p in order:
            if made >= per_kind:
                break
            other = silent_part(p)
            if other is None:
                continue
            claim = compound(p.claim, other, rng)
            out.append(LabelledPair(claim, p.passage, label, "aug_compound", direction))
            made += 1
            far = _unrelated(_content_words(claim), every, rng, other_than=p) if 2 * neither < per_kind else None
            if far is not None:
                out.append(LabelledPair(claim, far.passage, IRRELEVANT, "aug_compound", "neither"))
                neither += 1
    negatable = [q for q in every if negate(q.claim) is not None]
    for pool, label, direction in (
        (support, SUPPORT, "support"),
        (contradict, CONTRADICT, "contradict"),
        (irrelevant, IRRELEVANT, "irrelevant"),
    ):
        order = list(pool)
        rng.shuffle(order)
        made = 0
        for p in order:
            if made >= per_kind or not negatable:
                break
            q = _unrelated(_content_words(p.claim) | _content_words(p.passage), negatable, rng, other_than=p)
            aside = negate(q.claim) if q is not None else None
            if aside is None or len(p.passage.split()) + len(aside.split()) > max_words:
                continue
            aside = aside.strip()
            aside = aside if aside.endswith((".", "!", "?")) else aside + "."
            passage = f"{p.passage.strip()} {aside}" if rng.random() < 0.5 else f"{aside} {p.passage.strip()}"
            out.append(LabelledPair(p.claim, passage, label, "aug_aside", direction))
            made += 1
    return out


# -- balance ---------------------------------------------------------------------------------------
_DIGIT = re.compile(r"\d")


def surface_features(p: LabelledPair) -> dict[str, str]:
    """The surface features a label must not follow by itself: a negation cue in the claim
    or the passage, a digit in the claim, and the passage's length (words)."""
    words = len(p.passage.split())
    return {
        "negation_in_claim": "yes" if _NEGATION.search(p.claim) else "no",
        "negation_in_passage": "yes" if _NEGATION.search(p.passage) else "no",
        "digit_in_claim": "yes" if _DIGIT.search(p.claim) else "no",
        "passage_words": "<=25" if words <= 25 else "26-60" if words <= 60 else ">60",
    }


def feature_balance(pairs: Sequence[LabelledPair]) -> dict[str, dict[str, dict[str, Any]]]:
    """Per surface feature and value: pairs, and the share of each label (3 decimals)."""
    cells: dict[str, dict[str, Counter[str]]] = {}
    for p in pairs:
        for name, value in surface_features(p).items():
            cells.setdefault(name, {}).setdefault(value, Counter())[p.label] += 1
    labels = (SUPPORT, CONTRADICT, IRRELEVANT)
    return {
        name: {
            value: {"pairs": sum(c.values()), **{lab: round(c[lab] / sum(c.values()), 3) for lab in labels}}
            for value, c in sorted(values.items())
        }
        for name, values in cells.items()
    }


BALANCED_FEATURES = ("negation_in_claim", "negation_in_passage", "digit_in_claim")


def rebalance(
    pairs: Sequence[LabelledPair],
    rng: random.Random,
    *,
    features: Sequence[str] = BALANCED_FEATURES,
    tolerance: float = 1.3,
    rounds: int = 2,
) -> tuple[list[LabelledPair], int]:
    """Drop pairs (sampled) until, for each of ``features``, no label's share in a feature
    cell exceeds ``tolerance`` × its share in the feature's largest cell (the common case:
    no negation, no digit), which is never trimmed. Returns the pairs (input order) and how
    many were dropped."""
    keep = list(range(len(pairs)))
    feats = [surface_features(p) for p in pairs]
    for _ in range(rounds):
        for name in features:
            cells: dict[str, dict[str, list[int]]] = {}
            for i in keep:
                cells.setdefault(feats[i][name], {}).setdefault(pairs[i].label, []).append(i)
            ref_cell = max(cells.values(), key=lambda c: sum(map(len, c.values())))
            n_ref = sum(map(len, ref_cell.values()))
            share = {lab: len(idx) / n_ref for lab, idx in ref_cell.items()}
            drop: set[int] = set()
            for by_label in cells.values():
                if by_label is ref_cell:
                    continue
                # the cell's size if it followed the reference shares, from its scarcest label
                scale = min(len(by_label.get(lab, ())) / share[lab] for lab in share)
                for lab, idx in by_label.items():
                    limit = max(1, round(tolerance * share.get(lab, 0.0) * scale))
                    if len(idx) > limit:
                        drop |= set(idx) - set(rng.sample(idx, limit))
            keep = [i for i in keep if i not in drop]
    return [pairs[i] for i in keep], len(pairs) - len(keep)
