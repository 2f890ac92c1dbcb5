"""The default judge's model card tables, filled from the recorded results (never by hand).

``models/default-judge/README.md`` holds blocks ``<!-- card:NAME -->`` … ``<!-- /card:NAME -->``;
each is rendered here from files in ``benchmarks/results/``:

- ``data``: the training mix by source, with licences (``default-judge-v3_data.json``);
- ``balance``: label shares conditioned on surface features after rebalancing (same file);
- ``leakage``: documents and claims removed because an evaluation or anchor set holds them;
- ``checklist``: pass rate per capability, v2 and v3 (``judge_checklist_{v2,v3}.json``);
- ``dev``: pair macro-F1 / detection F1 on every dev set, v2 and v3, each under its shipped
  document rule and thresholds (``judge_eval_{v2,v3}.json``);
- ``anchors``: accuracy on the standard anchors (same files);
- ``conflictbench``: ConflictBench test and dev through ``bench run`` (the default pipeline),
  beside the "every claim is conflicted" rule (``conflictbench_default-judge*.json``);
- ``training``: every evaluation of the training run, its mean eval macro-F1 and timings, the
  exported one marked (``default-judge-v3_training.json``, the card's ``training.json``);
- ``v4``: v3 against the judge v4 candidates (``judge_eval_v4-*``, ``judge_checklist_v4-*``,
  ``conflictbench_default-judge-v4-*-dev.json``, ``judge_pair_cost.json``); with ``v4_training``,
  ``v4_anchors`` and ``v4_cost`` also the blocks of the v4 card, ``models/default-judge-base/README.md``
  (``--card`` picks the card and its blocks).

    python benchmarks/judge_card.py           # rewrite the blocks
    python benchmarks/judge_card.py --card models/default-judge-base/README.md
    python benchmarks/judge_card.py --check   # exit 1 if a block differs from the results (tests call this)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conflictscore_local.core.detection import all_conflicted_f1  # noqa: E402
from conflictscore_local.formats.summary import read_summary  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
CARD = ROOT / "models" / "default-judge" / "README.md"
LABELS = ("SUPPORT", "CONTRADICT", "IRRELEVANT")
BLOCK = re.compile(r"(<!-- card:(?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /card:(?P=name) -->)", re.S)


def _load(name: str) -> Any:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def _n(x: Any) -> str:
    return "–" if x is None else f"{x:,}" if isinstance(x, int) else f"{x:.3f}"


def data_table(results: Path = RESULTS) -> str:
    d = json.loads((results / "default-judge-v3_data.json").read_text())
    rows = ["| source | pairs | SUPPORT | CONTRADICT | IRRELEVANT | licence |", "|---|---:|---:|---:|---:|---|"]
    licences = {k.removesuffix("_train").removesuffix("_dev"): v["licence"] for k, v in d["sources"].items()}
    for name, kinds in sorted(d["pairs_by_source"].items()):
        counts = {lab: sum(k.get(lab, 0) for k in kinds.values()) for lab in LABELS}
        lic = licences.get(name) or licences.get(name.removesuffix("_train")) or (
            "as their sources" if name.startswith("aug_") or name == "offtopic" else licences.get(name.split("_")[0], "–"))
        rows.append(f"| {name} ({', '.join(sorted(kinds))}) | {sum(counts.values()):,} | "
                    + " | ".join(f"{counts[lab]:,}" for lab in LABELS) + f" | {lic} |")
    bt = d["bench_train"]["pairs_by_label"]
    rows.append(f"| ConflictBench train split ({d['bench_train']['items']:,} items, every claim × document) | "
                f"{sum(bt.values()):,} | " + " | ".join(f"{bt[lab]:,}" for lab in LABELS)
                + f" | {d['sources']['conflictbench']['licence']} |")
    total = {lab: d["pairs_by_label"][lab] + bt[lab] for lab in LABELS}
    rows.append(f"| **all** | **{sum(total.values()):,}** | " + " | ".join(f"{total[lab]:,}" for lab in LABELS) + " | |")
    return "\n".join(rows)


def balance_table(results: Path = RESULTS) -> str:
    d = json.loads((results / "default-judge-v3_data.json").read_text())["label_balance"]
    rows = [f"Rule: {d['rule']}; {d['dropped']:,} pairs dropped. Label shares after (before):", "",
            "| feature | value | pairs | SUPPORT | CONTRADICT | IRRELEVANT |", "|---|---|---:|---:|---:|---:|"]
    for feat, cells in d["after"].items():
        for value, c in cells.items():
            b = d["before"].get(feat, {}).get(value, {})
            rows.append(f"| {feat} | {value} | {c['pairs']:,} | "
                        + " | ".join(f"{c[lab]:.3f} ({b[lab]:.3f})" if lab in b else f"{c[lab]:.3f}" for lab in LABELS)
                        + " |")
    return "\n".join(rows)


def leakage_table(results: Path = RESULTS) -> str:
    d = json.loads((results / "default-judge-v3_data.json").read_text())["leakage"]
    rows = [f"Rule: {d['rule']}.", "", "| source | documents removed | claims removed |", "|---|---:|---:|"]
    for name, r in d["removed"].items():
        if r.get("documents") or r.get("claims"):
            rows.append(f"| {name} | {r.get('documents', 0):,} | {r.get('claims', 0):,} |")
    return "\n".join(rows)


def checklist_table(results: Path = RESULTS) -> str:
    v2, v3 = (json.loads((results / f"judge_checklist_{t}.json").read_text()) for t in ("v2", "v3"))
    rows = ["| capability | probes | v2 | v3 | target |", "|---|---:|---:|---:|---:|"]
    targets = {"negation", "numbers", "entities", "off_topic"}
    for cap, c3 in v3["capabilities"].items():
        c2 = v2["capabilities"].get(cap, {})
        rows.append(f"| {cap} | {c3['n']} | {_n(c2.get('pass_rate'))} | **{_n(c3['pass_rate'])}** | "
                    f"{'≥ 0.85' if cap in targets else ''} |")
    rows.append(f"| mean | | {_n(v2['macro_pass_rate'])} | **{_n(v3['macro_pass_rate'])}** | |")
    return "\n".join(rows)


def _shipped(r: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The document rule a judge ships and its figures per dev set under its own thresholds."""
    rule = r.get("document_rule_in_force") or "max"
    rules = r["document_rules"]["rules"]
    rule = rule if rule in rules else "max"
    return rule, rules[rule]["sets"]


def dev_table(results: Path = RESULTS) -> str:
    v2, v3 = (json.loads((results / f"judge_eval_{t}.json").read_text()) for t in ("v2", "v3"))
    (r2, s2), (r3, s3) = _shipped(v2), _shipped(v3)
    rows = [f"Each judge under its own shipped rule (v2: `{r2}`, v3: `{r3}`) with thresholds calibrated on these sets "
            f"(they chose the checkpoint and the thresholds: not held-out figures).", "",
            "| dev set | pair macro-F1 v2 | v3 | detection F1 v2 | v3 | control FPR v2 | v3 |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for name in s3:
        a, b = s2.get(name, {}).get("calibrated", {}), s3[name]["calibrated"]
        da, db = a.get("detection") or {}, b.get("detection") or {}
        rows.append(f"| {name} | {_n(a.get('macro_f1'))} | {_n(b['macro_f1'])} | {_n(da.get('f1'))} | "
                    f"{_n(db.get('f1'))} | {_n(da.get('false_positive_rate'))} | {_n(db.get('false_positive_rate'))} |")
    return "\n".join(rows)


def anchors_table(results: Path = RESULTS) -> str:
    v2, v3 = (json.loads((results / f"judge_eval_{t}.json").read_text()) for t in ("v2", "v3"))
    rows = ["Accuracy with each judge's own decision rule; a seeded sample of each anchor where `units` < `of`. "
            "Published for scale: DeBERTa-v3-large (MNLI/FEVER/ANLI) MNLI-m 0.912, ANLI 0.702.", "",
            "| anchor | units (of) | accuracy v2 | v3 | macro-F1 v2 | v3 |", "|---|---:|---:|---:|---:|---:|"]
    for name, b in v3["anchors"].items():
        a = v2["anchors"].get(name, {})
        rows.append(f"| {name} | {b.get('units', '–')} ({b.get('of', '–')}) | {_n(a.get('shipped', {}).get('accuracy'))} | "
                    f"{_n(b['shipped']['accuracy'])} | {_n(a.get('shipped', {}).get('macro_f1'))} | "
                    f"{_n(b['shipped']['macro_f1'])} |")
    return "\n".join(rows)


def conflictbench_table(results: Path = RESULTS) -> str:
    rows = ["| split | judge | pair macro-F1 | detection P / R / F1 | control FPR | every-claim-conflicted F1 |",
            "|---|---|---:|---|---:|---:|"]
    for split, suffix in (("test", ""), ("dev", "-dev")):
        for tag, name in (("v2", f"conflictbench_default-judge-v2{suffix}.json"),
                          ("v3", f"conflictbench_default-judge{suffix}.json")):
            ev = read_summary(results / name)["evaluation"]  # a bench run summary of any release
            det = ev["detection"]["overall"]
            rows.append(f"| {split} | {tag} | {_n(ev['pairs']['macro_f1'])} | {_n(det['precision'])} / "
                        f"{_n(det['recall'])} / **{_n(det['f1'])}** | {_n(det['false_positive_rate'])} | "
                        f"{_n(all_conflicted_f1(det))} |")
    return "\n".join(rows)


def training_table(results: Path = RESULTS) -> str:
    r = json.loads((results / "default-judge-v3_training.json").read_text())
    rows = ["| epoch | mean eval macro-F1 | training s | evaluation s | exported |",
            "|---:|---:|---:|---:|---|"]
    for h in r["history"]:
        best = "**yes** (best)" if h["epoch"] == r["best_epoch"] else ""
        rows.append(f"| {h['epoch']} | {h['eval']['macro_f1']:.4f} | {h['train_s']:,.0f} | "
                    f"{h['eval_s']:,.0f} | {best} |")
    rows.append(f"\nSchedule: {r['options']['epochs']} epoch(s), run to epoch {r['history'][-1]['epoch']} "
                f"(`--stop-after {r['options']['stop_after']:g}`); {r['train_pairs_per_s']} training pairs/s over all "
                f"sessions, {r['threads']} threads, device {r['device']}.")
    return "\n".join(rows)


V4 = (("v3", "v3", "default-judge", "the default, models/default-judge (MiniLM-L6, 22.7M parameters)"),
      ("v4-mpnet6-r64", "v4-mpnet6-r64", "default-judge-v4-mpnet6-r64",
       "MPNet 6 layers fully fine-tuned, shipped as its rank-64 difference from the base: the opt-in default-judge-base"),
      ("v4-mpnet6-full", "v4-mpnet6-full", None, "the same fine-tune whole (not shippable: over 50 MB)"))
"""(judge_eval / checklist tag, pair-cost tag, ConflictBench dev run stem or None, what it is) of v3 and the v4 candidates."""


def _optional(results: Path, name: str) -> Any:
    path = results / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _errors(check: dict[str, Any] | None) -> dict[str, Any]:
    """Checklist error rates: 1 - pass rate of negation, numbers and off_topic; off-topic passages judged
    CONTRADICT; supported claims with a negation about something else in the evidence judged wrong."""
    if check is None:
        return {}
    caps = check["capabilities"]
    off = caps["off_topic"]["confusion"].get("IRRELEVANT", {})
    d = caps["negation"]["by_direction"].get("d_aff_claim_negation_elsewhere", {})
    return {"negation": 1 - caps["negation"]["pass_rate"], "numbers": 1 - caps["numbers"]["pass_rate"],
            "off_topic": 1 - caps["off_topic"]["pass_rate"],
            "off_topic_c": off.get("CONTRADICT", 0) / sum(off.values()) if off else None,
            "neg_elsewhere": 1 - d["pass_rate"] if d else None, "mean": check["macro_pass_rate"]}


def v4_table(results: Path = RESULTS) -> str:
    """v3 against the v4 candidates: the dev objective and conflict detection, the checklist's error
    rates, ConflictBench dev through `bench run`, and what a pair costs (fp32, this CPU)."""
    cost = _optional(results, "judge_pair_cost.json")
    ms = {r["judge"]: r["ms_per_pair"] for r in (cost or {}).get("rows", []) if r["dtype"] == "float32"}
    rows = ["Each judge under its own best document rule with thresholds calibrated on the five dev sets (they "
            "chose the thresholds: not held-out figures); checklist error rates = 1 − pass rate; ConflictBench dev "
            "through `bench run` (embedding pruner). – : not measured.", "",
            "| judge | dev objective | bench_dev detection F1 | healthver_dev detection F1 | ConflictBench dev "
            "detection F1 | negation error | negation elsewhere error | numbers error | off-topic error | "
            "off-topic → CONTRADICT | checklist mean | ms per pair (fp32) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for tag, cost_tag, bench, what in V4:
        ev = _optional(results, f"judge_eval_{tag}.json")
        if ev is None:
            continue
        rule = ev["document_rules"]["best"]
        best = ev["document_rules"]["rules"][rule]
        sets = best["sets"]
        det = {n: (sets.get(n, {}).get("calibrated", {}).get("detection") or {}).get("f1") for n in ("bench_dev",
                                                                                                  "healthver_dev")}
        run = _optional(results, f"conflictbench_{bench}-dev.json") if bench else None
        e = _errors(_optional(results, f"judge_checklist_{tag}.json"))
        cell = f"{ms[cost_tag]:.0f}" if cost_tag in ms else "–"
        rows.append(f"| {tag}: {what} | {_n(best['objective_calibrated'])} (`{rule}`) | {_n(det['bench_dev'])} | "
                    f"{_n(det['healthver_dev'])} | {_n(run['detection']['overall']['f1'] if run else None)} | "
                    f"{_n(e.get('negation'))} | {_n(e.get('neg_elsewhere'))} | {_n(e.get('numbers'))} | "
                    f"{_n(e.get('off_topic'))} | {_n(e.get('off_topic_c'))} | {_n(e.get('mean'))} | "
                    f"{cell} |")
    return "\n".join(rows)


def v4_training_table(results: Path = RESULTS) -> str:
    rows = ["| candidate | epoch | pairs trained | train loss | mean eval macro-F1 (HealthVer, ScoNe dev) | training s | "
            "exported |", "|---|---:|---:|---:|---:|---:|---|"]
    notes = []
    for kind in ("lora", "full"):
        r = _optional(results, f"judge-v4-mpnet6-{kind}_training.json")
        if r is None:
            continue
        n = sum(r["train_labels"].values())
        for h in r["history"]:
            rows.append(f"| {kind} | {h['epoch']} | {round(n * h['epoch']):,} | {_n(h['train_loss'])} | "
                        f"{h['eval']['macro_f1']:.4f} | {h['train_s']:,.0f} | "
                        f"{'**yes**' if h['epoch'] == r['best_epoch'] else ''} |")
        b = r["base"]
        notes.append(f"{kind}: {b['trainable_parameters']:,} trainable of {b['trainable_parameters'] + b['frozen_parameters']:,} "
                     f"parameters, layers {b['kept_layers']} of {b['layers']}, lr {r['options']['lr']:g}, "
                     f"{r['train_pairs_per_s']} training pairs/s on {r['threads']} thread(s), bf16 autocast "
                     f"{'on' if r['options']['bf16'] else 'off'}, schedule {r['options']['epochs']} epoch run to "
                     f"{r['history'][-1]['epoch']}")
    return "\n".join(rows + [""] + [f"- {x}" for x in notes])


def v4_anchors_table(results: Path = RESULTS) -> str:
    evals = {tag: _optional(results, f"judge_eval_{tag}.json") for tag, *_ in V4}
    have = [t for t, r in evals.items() if r is not None and r.get("anchors")]
    if not have:
        return "No anchors recorded."
    rows = ["Accuracy with each judge's own decision rule, on a seeded sample of each anchor where `units` < `of` "
            "(v3: 600 units, the v4 candidate: 200, the CPU budget).", "",
            "| anchor | " + " | ".join(f"{t} units (of) | {t} accuracy" for t in have) + " |",
            "|---|" + "---:|---:|" * len(have)]
    for name in evals[have[0]]["anchors"]:
        cells = []
        for t in have:
            a = evals[t]["anchors"].get(name, {})
            cells += [f"{a.get('units', '–')} ({a.get('of', '–')})", _n(a.get("shipped", {}).get("accuracy"))]
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def v4_cost_table(results: Path = RESULTS) -> str:
    cost = _optional(results, "judge_pair_cost.json")
    if cost is None:
        return "Not measured."
    m = cost["meta"]
    rows = [f"`{m['command']}` — {m['date']}, {m['machine']}, {cost['meta'].get('threads')} threads, 1-minute load "
            f"{m['load_average'][0]} → {m['load_average'][1]}.", "",
            "| judge | dtype | mean tokens | pairs/s | ms per pair | × v3 |", "|---|---|---:|---:|---:|---:|"]
    rows += [f"| {r['judge']} | {r['dtype']} | {r['mean_tokens']} | {r['pairs_per_s']} | {r['ms_per_pair']} | "
             f"{r['x_first']} |" for r in cost["rows"]]
    return "\n".join(rows)


TABLES: dict[str, Callable[[Path], str]] = {
    "data": data_table, "balance": balance_table, "leakage": leakage_table, "checklist": checklist_table,
    "dev": dev_table, "anchors": anchors_table, "conflictbench": conflictbench_table,
    "training": training_table, "v4": v4_table,
}
V4_CARD = ROOT / "models" / "default-judge-base" / "README.md"
V4_TABLES: dict[str, Callable[[Path], str]] = {
    "v4": v4_table, "v4_training": v4_training_table, "v4_anchors": v4_anchors_table, "v4_cost": v4_cost_table,
}


def tables_for(card: Path) -> dict[str, Callable[[Path], str]]:
    """The blocks a card holds: the v4 card's (``models/default-judge-base``), else the default judge's."""
    return V4_TABLES if Path(card).resolve() == V4_CARD.resolve() else TABLES


def render(card: str, results: Path = RESULTS, tables: dict[str, Callable[[Path], str]] | None = None,
           where: Path = CARD) -> str:
    """``card`` with every ``card:NAME`` block refilled from ``results``; an unknown name is an error."""
    tables = TABLES if tables is None else tables

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in tables:
            raise SystemExit(f"{where}: unknown block card:{name}; allowed: {', '.join(tables)}")
        return m.group(1) + tables[name](results) + "\n" + m.group(4)

    return BLOCK.sub(fill, card)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the card differs from its results files")
    ap.add_argument("--card", default=str(CARD))
    args = ap.parse_args(argv)
    path = Path(args.card)
    text = path.read_text(encoding="utf-8")
    new = render(text, tables=tables_for(path), where=path)
    if args.check:
        if new != text:
            print(f"{path}: tables differ from benchmarks/results; run python benchmarks/judge_card.py", file=sys.stderr)
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
