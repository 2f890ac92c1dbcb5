"""The judge's sanity checklist: hand-written (passage, claim, label) pairs anyone can read, in
``benchmarks/judge/sanity/pairs.jsonl``, scored by any judge and reported per category.

The pairs were written for this checklist (no public data set's text); each label follows from
the passage alone (no world knowledge): SUPPORT when the passage says the claim is true,
CONTRADICT when it says the claim is false, IRRELEVANT when it does neither. One JSON object a
line: ``{"id", "category", "passage", "claim", "label", "note"?}``. Categories:

  antonym_property  antonyms and colour / property swaps; the same property; another property
  numbers           counts, amounts, percentages, arithmetic: the same value reworded or another
  dates             years, days, months, decades and centuries (a decade does not fix a year)
  units             km / miles, °C / °F, kg / g ... converted correctly, or the wrong unit
  negation_claim    a negation in the claim
  negation_premise  a negation in the passage, double negations included
  paraphrase        a paraphrase (SUPPORT) or a paraphrase of the opposite (CONTRADICT)
  partial           a compound claim: one part supported and the other not mentioned → SUPPORT
                    (the project's partial-support convention, as in judge_checklist.py and
                    docs/training.md), one part contradicted → CONTRADICT
  off_topic         another subject, same domain or shared words (IRRELEVANT); on-topic controls
  quantifiers       all / some / none / most / at least / only
  identity          the claim restates the passage (nearly) word for word, or swaps one word of a
                    short fact (issue 46's "Grass is purple" / "Snow is black" / water at 100 °C)

Each pair is one claim against one passage, judged by the judge itself in one batched call,
the way ``judge_checklist.py`` judges its pair probes (its ``build_engine``: the named judge and
its ``--judge-arg``s, pruner ``none``, no judgment cache). Reported: accuracy overall and per
category (n, errors, 95% Wilson interval), per gold label, the confusion matrix, every error
(passage, claim, gold, predicted, probabilities, the decision rule and the label plain arg-max
would give), and two figures of issue 46:

  negation errors  errors / pairs over the categories negation_claim and negation_premise
  number errors    errors / pairs over the categories numbers, dates and units

An unscored pair (the judge gave no label) counts as an error and is reported as ``unscored``.
Targets (issue 46, for the shipped default judge): accuracy ≥ 0.95, every category ≥ 0.85,
negation errors ≤ 0.20 and number errors ≤ 0.20. This is a benchmark: it measures a judge, it
asserts nothing.

With the data folder present (``$CONFLICTSCORE_DATA``, else ``../shared/data``), the run also
counts the pairs whose passage or claim is, or shares a sentence of six words or more with, a
text of the general NLI sets a judge here trains on (``judge_checklist_probes.training_index``
plus ``nli_general``); ``--no-leak-check`` skips that (about two minutes).

examples:
  python -m benchmarks.judge.judge_sanity --tag v3                  (the shipped default judge)
  python -m benchmarks.judge.judge_sanity --judge-arg calibration=false --tag v3-argmax
  python -m benchmarks.judge.judge_sanity --judge nli --judge-arg model=benchmarks/work/judge-v5 --tag v5

writes benchmarks/results/judge/judge_sanity_<tag>.json and .md (with the command, commit, machine,
CPU flags, load and versions) and prints the tables.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks.judge.judge_checklist import build_engine, judge_pairs, judge_record, wilson
from conflictscore_local.core.errors import ConflictScoreError, InputError
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT

REPO = Path(__file__).resolve().parents[2]

log = logging.getLogger("judge_sanity")

PAIRS = REPO / "benchmarks" / "judge" / "sanity" / "pairs.jsonl"
LABELS = (SUPPORT, CONTRADICT, IRRELEVANT)
CATEGORIES = (
    "antonym_property",
    "numbers",
    "dates",
    "units",
    "negation_claim",
    "negation_premise",
    "paraphrase",
    "partial",
    "off_topic",
    "quantifiers",
    "identity",
)
FIELDS = ("id", "category", "passage", "claim", "label")
OPTIONAL_FIELDS = ("note",)
GROUPS = {"negation": ("negation_claim", "negation_premise"), "numbers": ("numbers", "dates", "units")}
"""The two error figures of issue 46: errors / pairs over these categories together."""
TARGETS = {"accuracy": 0.95, "min_category_accuracy": 0.85, "negation_error_rate": 0.20, "number_error_rate": 0.20}
UNSCORED = "unscored"
RULE_CHANGED, RULE_SAME = "thresholds (not arg-max's label)", "thresholds (the same label as arg-max)"
"""An error's ``rule`` under calibrated thresholds: whether the thresholds changed arg-max's label."""
MIN_LEAK_CHARS = 8
"""Training texts shorter than this are not indexed by the leak check (the checklist's shortest
sentences, "Ice is hot.", have 11 characters)."""


@dataclass(frozen=True)
class SanityPair:
    """One hand-written pair of the checklist; ``line`` is its line in the file."""

    id: str
    category: str
    passage: str
    claim: str
    label: str
    note: str | None
    line: int


def load_pairs(path: Path = PAIRS) -> list[SanityPair]:
    """Every pair of the checklist file, checked: a JSON object a line with the fields
    id, category, passage, claim, label (and optionally note), non-empty strings, a label and a
    category from the allowed ones, ids unique. A bad line is an ``InputError`` naming the file,
    the line, the field and the allowed values."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read the checklist: {e}") from None
    pairs: list[SanityPair] = []
    seen: dict[str, int] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        where = f"{path}, line {n}"
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as e:
            raise InputError(f"{where}: not JSON ({e.msg})") from None
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object with the fields {', '.join(FIELDS)}")
        unknown = sorted(set(row) - set(FIELDS) - set(OPTIONAL_FIELDS))
        if unknown:
            raise InputError(f"{where}: unknown field {unknown[0]!r}; allowed: {', '.join(FIELDS + OPTIONAL_FIELDS)}")
        for field in FIELDS:
            value = row.get(field)
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{where}: field {field!r} must be a non-empty string, got {value!r}")
        if "note" in row and not isinstance(row["note"], str):
            raise InputError(f"{where}: field 'note' must be a string, got {row['note']!r}")
        if row["label"] not in LABELS:
            raise InputError(f"{where}: field 'label' is {row['label']!r}; allowed: {', '.join(LABELS)}")
        if row["category"] not in CATEGORIES:
            raise InputError(f"{where}: field 'category' is {row['category']!r}; allowed: {', '.join(CATEGORIES)}")
        if row["id"] in seen:
            raise InputError(f"{where}: field 'id' {row['id']!r} repeats line {seen[row['id']]}")
        seen[row["id"]] = n
        pairs.append(
            SanityPair(
                row["id"], row["category"], row["passage"], row["claim"], row["label"], row.get("note") or None, n
            )
        )
    if not pairs:
        raise InputError(f"{path}: no pairs")
    return pairs


def _rate(k: int, n: int) -> float | None:
    return round(k / n, 4) if n else None


def decision(judge: str, describe: dict[str, Any]) -> tuple[str, dict[str, float] | None]:
    """The judge's decision rule in words, and its calibrated thresholds (None: arg-max or the
    backend's own)."""
    thresholds = (describe.get("spec") or {}).get("thresholds")
    if thresholds:
        rule = (
            "calibrated thresholds: "
            + ", ".join(f"{k} ≥ {v}" for k, v in thresholds.items())
            + " (candidates; the more probable wins; none → IRRELEVANT)"
        )
        return rule, thresholds
    return ("arg-max" if judge == "nli" else "the backend's own"), None


def summarize(
    pairs: Sequence[SanityPair], results: Sequence[dict[str, Any]], thresholds: dict[str, float] | None = None
) -> dict[str, Any]:
    """Accuracy overall, per category, per gold label and per error group; the confusion matrix
    (gold → predicted, ``unscored`` for no label); every error with what the judge said."""
    from conflictscore_local.judge.labels import decide

    rows = list(zip(pairs, results, strict=True))
    correct = [r["label"] == p.label for p, r in rows]

    def block(sel: list[int]) -> dict[str, Any]:
        k = sum(correct[i] for i in sel)
        if not any(rows[i][1]["label"] is not None for i in sel):  # nothing scored is no score, never 0
            return {"n": len(sel), "correct": k, "errors": len(sel) - k, "accuracy": None, "ci95": None}
        return {
            "n": len(sel),
            "correct": k,
            "errors": len(sel) - k,
            "accuracy": _rate(k, len(sel)),
            "ci95": wilson(k, len(sel)),
        }

    scored = sum(r["label"] is not None for _, r in rows)
    overall = block(list(range(len(rows))))
    categories = {}
    for cat in CATEGORIES:
        sel = [i for i, (p, _) in enumerate(rows) if p.category == cat]
        if sel:
            c = block(sel)
            c["by_gold_label"] = {
                lab: block([i for i in sel if rows[i][0].label == lab])
                for lab in LABELS
                if any(rows[i][0].label == lab for i in sel)
            }
            categories[cat] = c
    by_gold = {
        lab: block([i for i, (p, _) in enumerate(rows) if p.label == lab])
        for lab in LABELS
        if any(p.label == lab for p in pairs)
    }
    confusion: dict[str, Counter[str]] = {lab: Counter() for lab in by_gold}
    for p, r in rows:
        confusion[p.label][r["label"] or UNSCORED] += 1
    groups = {}
    for name, cats in GROUPS.items():
        g = block([i for i, (p, _) in enumerate(rows) if p.category in cats])
        groups[name] = {
            "categories": list(cats),
            "n": g["n"],
            "errors": g["errors"],
            "error_rate": None if g["accuracy"] is None else _rate(g["errors"], g["n"]),
        }
    errors = []
    for (p, r), ok in zip(rows, correct):
        if ok:
            continue
        e: dict[str, Any] = {
            "id": p.id,
            "category": p.category,
            "passage": p.passage,
            "claim": p.claim,
            "gold": p.label,
            "predicted": r["label"] or UNSCORED,
            "probs": r.get("probs"),
        }
        if r.get("probs"):
            e["argmax"] = decide(r["probs"])
            if thresholds:
                e["rule"] = RULE_CHANGED if e["argmax"] != r["label"] else RULE_SAME
        for k in ("note", "decided_by"):
            if r.get(k) is not None:
                e["judge_" + k if k == "note" else k] = r[k]
        if p.note:
            e["pair_note"] = p.note
        errors.append(e)
    cat_acc = [c["accuracy"] for c in categories.values() if c["accuracy"] is not None]
    figures = {
        "accuracy": overall["accuracy"],
        "min_category_accuracy": min(cat_acc) if cat_acc else None,
        "negation_error_rate": groups["negation"]["error_rate"],
        "number_error_rate": groups["numbers"]["error_rate"],
    }
    targets = {
        k: {
            "target": ("≥ " if k.endswith("accuracy") else "≤ ") + str(t),
            "value": figures[k],
            "met": None if figures[k] is None else (figures[k] >= t if k.endswith("accuracy") else figures[k] <= t),
        }
        for k, t in TARGETS.items()
    }
    return {
        "overall": {**overall, "scored": scored, "unscored": len(rows) - scored},
        "categories": categories,
        "by_gold_label": by_gold,
        "confusion": {g: dict(sorted(c.items())) for g, c in confusion.items()},
        "groups": groups,
        "targets": targets,
        "errors": errors,
    }


def leak_check(pairs: Sequence[SanityPair], data_dir: Path) -> dict[str, Any]:
    """Pairs whose passage or claim is (or shares a sentence of six words or more with) a text of
    the general NLI sets a judge of this project trains on."""
    from benchmarks.judge import judge_checklist_probes as probes_mod

    index = probes_mod.training_index(data_dir, min_chars=MIN_LEAK_CHARS)
    general = data_dir / "nli_general"
    files = [p for p in sorted(general.rglob("*")) if p.is_file() and "_checks" not in p.relative_to(general).parts]
    for path in files:
        if not path.name.lower().startswith(("readme", "license")) and path.suffix not in (".md", ".py"):
            for s in probes_mod._training_strings(path):
                if len(s) >= MIN_LEAK_CHARS:
                    index.add_document(probes_mod.detokenize(s))
    hits = [{"id": p.id, "text": t} for p in pairs for t in (p.passage, p.claim) if index.document_leaks(t)]
    return {
        "checked": True,
        "sets": "nli_extra (less its evaluation-only sets), fever_nli, esnli, sick, nli_general",
        "pairs_sharing_text": len({h["id"] for h in hits}),
        "texts": hits,
    }


def report(record: dict[str, Any]) -> str:
    """The Markdown page of one run."""

    def f(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    s, j, m = record["summary"], record["judge"], record["meta"]
    o = s["overall"]
    lines = [
        f"# Judge sanity checklist: `{record['tag']}`",
        "",
        *header(m),
        f"CPU flags: {m['cpu_flags']}.  ",
        f"Judge: `{j['name']}` with arguments `{j['args'] or {}}`; model `{j.get('model')}`; decision rule: "
        f"{record['decision']}.  ",
        f"Pairs: {o['n']} hand-written pairs of `{record['pairs_file']}` "
        f"(sha256 `{record['pairs_sha256'][:12]}`), "
        "each one claim against one passage, judged by the judge itself (pruner none, no cache).",
        "",
        f"**Accuracy {f(o['accuracy'])}** ({o['correct']} / {o['n']}; 95% interval {o['ci95']}; "
        f"{o['unscored']} unscored, counted as errors).",
        "",
        "| category | n | errors | accuracy | 95% interval | by gold label (accuracy, n) |",
        "|---|---:|---:|---:|---|---|",
    ]
    for cat, c in s["categories"].items():
        gold = ", ".join(f"{lab} {f(b['accuracy'])} ({b['n']})" for lab, b in c["by_gold_label"].items())
        lines.append(f"| {cat} | {c['n']} | {c['errors']} | {f(c['accuracy'])} | {c['ci95']} | {gold} |")
    lines.append(f"| **all** | {o['n']} | {o['errors']} | **{f(o['accuracy'])}** | {o['ci95']} | |")
    lines += ["", "| gold label | n | accuracy |", "|---|---:|---:|"]
    lines += [f"| {lab} | {b['n']} | {f(b['accuracy'])} |" for lab, b in s["by_gold_label"].items()]
    predicted = [lab for lab in (*LABELS, UNSCORED) if any(lab in row for row in s["confusion"].values())]
    lines += [
        "",
        "Confusion matrix (rows: gold label, columns: predicted):",
        "",
        "| gold \\ predicted | " + " | ".join(predicted) + " |",
        "|---|" + "---:|" * len(predicted),
    ]
    lines += [
        f"| {gold} | " + " | ".join(str(row.get(p, 0)) for p in predicted) + " |"
        for gold, row in s["confusion"].items()
    ]
    g = s["groups"]
    lines += [
        "",
        "Negation and number errors (issue 46): the error rate (errors / pairs) over the categories "
        f"{' + '.join(g['negation']['categories'])}: **{f(g['negation']['error_rate'])}** "
        f"({g['negation']['errors']} / {g['negation']['n']}); over {' + '.join(g['numbers']['categories'])}: "
        f"**{f(g['numbers']['error_rate'])}** ({g['numbers']['errors']} / {g['numbers']['n']}).",
        "",
        "| target (issue 46) | value | met |",
        "|---|---:|---|",
    ]
    for k, t in s["targets"].items():
        met = "–" if t["met"] is None else ("yes" if t["met"] else "**no**")
        lines.append(f"| {k.replace('_', ' ')} {t['target']} | {f(t['value'])} | {met} |")
    leak = record["leak_check"]
    lines += [
        "",
        (
            "Pairs sharing text with the general NLI training sets (" + leak["sets"] + "): "
            f"{leak['pairs_sharing_text']}"
            + (": " + ", ".join(sorted({h["id"] for h in leak["texts"]})) if leak["texts"] else "")
            + "."
        )
        if leak.get("checked")
        else f"Leak check: not run ({leak['why']}).",
        "",
    ]
    lines += [f"## Errors ({len(s['errors'])})", ""]
    if not s["errors"]:
        lines.append("None.")
    for e in s["errors"]:
        probs = ", ".join(f"{k} {v:.3f}" for k, v in e["probs"].items()) if e.get("probs") else "none"
        how = f"; arg-max {e['argmax']}" if "argmax" in e else ""
        how += f"; rule: {e['rule']}" if "rule" in e else ""
        how += f"; decided by {e['decided_by']}" if "decided_by" in e else ""
        how += f"; judge's note: {e['judge_note']}" if "judge_note" in e else ""
        lines += [
            f"- **{e['id']}** gold {e['gold']}, predicted **{e['predicted']}** (p: {probs}{how})  ",
            f"  passage: {e['passage']}  ",
            f"  claim: {e['claim']}" + (f"  \n  note: {e['pair_note']}" if "pair_note" in e else ""),
        ]
    lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--judge",
        default="nli",
        metavar="NAME",
        help="judge backend, a registered name (see `conflictscore backends`; default: %(default)s)",
    )
    ap.add_argument(
        "--judge-arg",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an argument of the judge (repeatable; VALUE read as JSON when it parses), e.g. "
        "model=PATH, calibration=false",
    )
    ap.add_argument("--tag", help="names the result files judge_sanity_<tag>.{json,md} (default: the judge name)")
    ap.add_argument(
        "--pairs", default=str(PAIRS.relative_to(REPO)), help="the checklist, JSON lines (default: %(default)s)"
    )
    ap.add_argument("--out-dir", default="benchmarks/results/judge", help="where the files go (default: %(default)s)")
    ap.add_argument(
        "--no-leak-check",
        action="store_true",
        help="skip counting the pairs that share text with the training sets (about two minutes)",
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    try:
        return run(args, argv)
    except ConflictScoreError as e:
        print(f"judge_sanity: error: {e}", file=sys.stderr)
        return 2


def run(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    import hashlib

    from conflictscore_local.util.locations import default_data_dir

    started, load = time.perf_counter(), os.getloadavg()
    path = Path(args.pairs)
    path = path if path.is_absolute() else REPO / path
    pairs = load_pairs(path)
    engine = build_engine(args.judge, args.judge_arg)  # checks the judge's name and arguments before any work
    log.info("%d pairs", len(pairs))
    results = judge_pairs(engine, pairs)
    judge = judge_record(engine, args.judge, args.judge_arg)
    rule, thresholds = decision(args.judge, judge["describe"])
    engine.close()
    leak: dict[str, Any] = {"checked": False, "why": "--no-leak-check"}
    if not args.no_leak_check:
        try:
            data_dir = default_data_dir()
        except ConflictScoreError as e:
            leak["why"] = str(e)
        else:
            if (data_dir / "nli_extra").is_dir():
                log.info("indexing the training sets (to count the pairs that share text with them)")
                leak = leak_check(pairs, data_dir)
            else:
                leak["why"] = f"no {data_dir / 'nli_extra'}"
    tag = args.tag or args.judge
    record = {
        "tag": tag,
        "meta": run_meta(__file__, argv, started, load),
        "judge": judge,
        "decision": rule,
        "pairs_file": path,
        "pairs_sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "definitions": {
            "accuracy": "pairs whose predicted label is the gold label / all pairs (unscored pairs are errors)",
            "negation_error_rate": "errors / pairs over the categories " + " + ".join(GROUPS["negation"]),
            "number_error_rate": "errors / pairs over the categories " + " + ".join(GROUPS["numbers"]),
        },
        "summary": summarize(pairs, results, thresholds),
        "leak_check": leak,
    }
    out = Path(args.out_dir)
    out = out if out.is_absolute() else REPO / out
    out.mkdir(parents=True, exist_ok=True)
    md = write_recorded(out / f"judge_sanity_{tag}.json", record, report)
    print(md.split("\n## Errors")[0])
    log.info("wrote %s and .md", out / f"judge_sanity_{tag}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
