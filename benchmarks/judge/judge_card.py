"""The default judge's model card tables, filled from the recorded results (never by hand).

``models/default-judge/README.md`` holds blocks ``<!-- card:NAME -->`` … ``<!-- /card:NAME -->``;
each is rendered here from files in ``benchmarks/results/judge/``. ``COLUMNS`` are the judges compared, oldest
first, each measured with the same commands: ``OLD`` (v3, the judge the retrains started from), each default since,
and ``NEW``, the last, the card's judge (``shipped_is_new`` refuses to fill the card of another checkpoint):

- ``targets``: issue 46's targets, each with every column's figure and whether NEW meets it;
- ``decision``: the decision rule NEW ships and why (``judge_decision_NEW.json``);
- ``ship``: the gate NEW passed to replace the previous default, and the stricter one it was changed from
  (``judge_ship_NEW.json``);
- ``data_general`` / ``data``: the training mixes of the two stages by source, with licences
  (``default-judge-MIX-general_data.json``, ``default-judge-MIX_data.json``: ``MIX`` is the build whose mixes NEW
  trained on), and ``mining``: what the second stage kept (``default-judge-NEW_mine.json``);
- ``balance``: label shares conditioned on surface features after rebalancing, both stages;
- ``leakage``: documents and claims removed because an evaluation or anchor set holds them;
- ``training``: every evaluation of both fits, the exported ones marked;
- ``sanity``: the hand-written sanity checklist per category, every column (``judge_sanity_<tag>.json``);
- ``checklist``: the templated behavioural checklist per capability (``judge_checklist_<tag>.json``);
- ``dev``: pair macro-F1 / detection F1 on every dev set (``judge_eval_<tag>-MIXdata.json`` for a judge older than
  the mix, else ``judge_eval_<tag>.json``: judge_ship.eval_file);
- ``anchors``: accuracy on the standard anchors (same files);
- ``conflictbench``: ConflictBench test and dev through ``bench run``, per conflict type, beside the "every
  claim is conflicted" rule (``conflictbench_default-judge-<tag>[-dev].json``);
- ``cost``: what a pair costs each (``judge_pair_cost_OLD-NEW.json``);
- ``v4``: v3 against the judge v4 candidates; with ``v4_training``, ``v4_anchors`` and ``v4_cost`` also the blocks
  of the v4 card, ``models/default-judge-base/README.md`` (``--card`` picks the card and its blocks).

    python -m benchmarks.judge.judge_card           # rewrite the blocks
    python -m benchmarks.judge.judge_card --card models/default-judge-base/README.md
    python -m benchmarks.judge.judge_card --check   # exit 1 if a block differs from the results (tests call this)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Callable

from benchmarks.judge.judge_ship import eval_file, rule_column
from conflictscore_local.core.detection import all_conflicted_f1
from conflictscore_local.formats.summary import read_summary

ROOT = Path(__file__).resolve().parents[2]

RESULTS = ROOT / "benchmarks" / "results" / "judge"
CARD = ROOT / "models" / "default-judge" / "README.md"
LABELS = ("SUPPORT", "CONTRADICT", "IRRELEVANT")
BLOCK = re.compile(r"(<!-- card:(?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /card:(?P=name) -->)", re.S)
COLUMNS = ("v3", "v5")
"""The judges the card compares, oldest first: v3 (the judge the retrains started from), then each default since;
the last is the card's judge."""
OLD, NEW = COLUMNS[0], COLUMNS[-1]
MIX = "v5"
"""The training mix the dev sets and anchors come from; an older judge's run on it is ``judge_eval_<tag>-v5data``."""
WHERE = {
    "v3": "git show dfcddc8:models/default-judge/model.safetensors",
    "v5": "git show 8f5fa77:models/default-judge/model.packed.safetensors",
}
"""Where each judge the card's judge replaced can still be had."""
GATE_CHANGED_FOR = "v5"
"""The judge whose result the gate was changed after (judge_ship.py's docstring)."""


def _where(tag: str) -> str:
    if tag not in WHERE:
        raise SystemExit(f"judge_card: no WHERE entry for {tag!r}: known {', '.join(WHERE)}")
    return WHERE[tag]


CONFLICT_TYPES = ("ambiguity", "misinformation", "contradiction", "opinion")


def _load(name: str, results: Path = RESULTS) -> Any:
    return json.loads((results / name).read_text(encoding="utf-8"))


def _n(x: Any) -> str:
    return "–" if x is None else f"{x:,}" if isinstance(x, int) else f"{x:.3f}"


def _bench(results: Path, tag: str, split: str = "test") -> dict[str, Any]:
    """The ``evaluation`` of a ``bench run`` summary of judge ``tag`` (a summary of any release)."""
    sfx = "-dev" if split == "dev" else ""
    return read_summary(results / f"conflictbench_default-judge-{tag}{sfx}.json")["evaluation"]


def _eval(results: Path, tag: str) -> dict[str, Any]:
    """``tag``'s judge_eval record on the mix's dev sets and anchors (the gate's naming: judge_ship.eval_file)."""
    return _load(eval_file(results, tag, MIX).name, results)


def _dev_sets(results: Path, tag: str) -> tuple[str, dict[str, Any], str]:
    """(document rule, its sets, the column of the shipped decision rule: ``argmax`` or ``calibrated``)."""
    r = _eval(results, tag)
    rules = r["document_rules"]["rules"]
    rule = r.get("document_rule_in_force") or r["document_rules"]["best"]
    rule = rule if rule in rules else "max"
    col = "argmax" if rule_column(results, tag) == "argmax" else "calibrated"
    return rule, rules[rule]["sets"], col


def figures(results: Path, tag: str) -> dict[str, Any]:
    """Issue 46's figures of judge ``tag``, each from its recorded file."""
    sanity = _load(f"judge_sanity_{tag}.json", results)["summary"]
    anchors = _eval(results, tag)["anchors"]
    col = rule_column(results, tag)
    _, sets, dcol = _dev_sets(results, tag)
    test = _bench(results, tag)
    det = test["detection"]
    recalls = {t: det["by_conflict_type"][t]["recall"] for t in CONFLICT_TYPES if t in det["by_conflict_type"]}
    return {
        "sanity": sanity["overall"]["accuracy"],
        "sanity_min_category": min(c["accuracy"] for c in sanity["categories"].values() if c["accuracy"] is not None),
        "esnli_test": anchors["esnli_test"][col]["accuracy"],
        "taxinli": anchors["taxinli"][col]["accuracy"],
        "healthver_dev": sets["healthver_dev"][dcol]["macro_f1"],
        "conflictbench_f1": det["overall"]["f1"],
        "min_type_recall": min(v for v in recalls.values() if v is not None),
        "recalls": recalls,
        "control_fpr": det["overall"]["false_positive_rate"],
        "negation_errors": sanity["groups"]["negation"]["error_rate"],
        "number_errors": sanity["groups"]["numbers"]["error_rate"],
    }


TARGETS = (  # (key, what, target, higher is better)
    ("sanity", "sanity checklist accuracy (209 hand-written pairs)", 0.95, True),
    ("sanity_min_category", "its lowest category", 0.85, True),
    ("esnli_test", "e-SNLI test accuracy (9,824 pairs)", 0.85, True),
    ("taxinli", "TaxiNLI accuracy (≈ MNLI dev, 10,071 pairs)", 0.78, True),
    ("healthver_dev", "HealthVer dev pair macro-F1", 0.60, True),
    ("conflictbench_f1", "ConflictBench test detection F1", 0.75, True),
    ("min_type_recall", "its lowest recall over the conflict types", 0.5, True),
    ("control_fpr", "its false-positive rate on control claims", 0.15, False),
    ("negation_errors", "sanity negation error rate", 0.20, False),
    ("number_errors", "sanity number / date / unit error rate", 0.20, False),
)


def targets_table(results: Path = RESULTS) -> str:
    figs = {tag: figures(results, tag) for tag in COLUMNS}
    new = figs[NEW]
    cost = _load(f"judge_pair_cost_{OLD}-{NEW}.json", results)
    ms = {r["judge"]: r["ms_per_pair"] for r in cost["rows"] if r["dtype"] == "float32"}
    rows = [
        "| figure | target | " + " | ".join(COLUMNS) + f" | {NEW} meets it |",
        "|---|---:|" + "---:|" * len(COLUMNS) + "---|",
    ]
    for key, what, target, higher in TARGETS:
        v = new[key]
        met = v is not None and (v >= target if higher else v <= target)
        rows.append(
            f"| {what} | {'≥' if higher else '≤'} {target:g} | "
            + " | ".join(_n(figs[t][key]) for t in COLUMNS[:-1])
            + f" | **{_n(v)}** | {'yes' if met else '**no**'} |"
        )
    ratios = [ms[t] / ms[OLD] for t in COLUMNS]
    rows.append(
        f"| cost per pair, fp32, ÷ {OLD}'s | ≤ 1.3 | 1 | "
        + " | ".join(f"{r:.2f}" for r in ratios[1:-1])
        + ("" if len(COLUMNS) == 2 else " | ")
        + f"**{ratios[-1]:.2f}** | {'yes' if ratios[-1] <= 1.3 else '**no**'} |"
    )
    rows.append("")
    rows.append(
        "Recall per conflict type on ConflictBench test, "
        + " → ".join(COLUMNS)
        + ": "
        + ", ".join(
            f"{t} " + " → ".join(_n(figs[c]["recalls"].get(t)) for c in COLUMNS)
            for t in CONFLICT_TYPES
            if t in new["recalls"]
        )
        + "."
    )
    return "\n".join(rows)


def decision_table(results: Path = RESULTS) -> str:
    d = _load(f"judge_decision_{NEW}.json", results)
    dec, dev = d["decision"], d["dev"]
    rule = (
        "calibrated thresholds " + ", ".join(f"{k} ≥ {v}" for k, v in dec["thresholds"].items())
        if dec["rule"] == "thresholds"
        else "plain arg-max (the most probable label)"
    )
    return (
        f"**{rule}**, chosen by `benchmarks/judge/judge_decision.py` "
        f"([`judge_decision_{NEW}.md`](../../benchmarks/results/judge/judge_decision_{NEW}.md)): {dec['why']}. "
        f"The thresholds compared were calibrated on the dev sets under the `{dev['document_rule']}` "
        f"document rule: `{json.dumps(dev['thresholds'])}`."
    )


def ship_table(results: Path = RESULTS) -> str:
    v = _load(f"judge_ship_{NEW}.json", results)
    f, old = v["figures"], v["old"]
    b, paired = f["conflictbench_test_detection_f1"], f["conflictbench_test_detection_f1"]["paired"]
    lo, hi = paired["interval95"]
    rows = [
        f"| gate figure | {old} | {NEW} | passes |",
        "|---|---:|---:|---|",
        f"| sanity accuracy (higher) | {_n(f['sanity_accuracy']['old'])} | {_n(f['sanity_accuracy']['new'])} | "
        f"{'yes' if f['sanity_accuracy']['passes'] else '**no**'} |",
        f"| mean accuracy on e-SNLI test, TaxiNLI, MPE test, FM2 test (higher) | "
        f"{_n(f['general_anchor_accuracy']['old'])} | {_n(f['general_anchor_accuracy']['new'])} | "
        f"{'yes' if f['general_anchor_accuracy']['passes'] else '**no**'} |",
        f"| ConflictBench test detection F1 (not lower beyond noise) | {_n(b['old'])} | {_n(b['new'])} | "
        f"{'yes' if b['passes'] else '**no**'} |",
        "",
        f"ConflictBench test: F1({NEW}) − F1({old}) = {paired['difference']:+.4f}, paired bootstrap 95% interval "
        f"[{lo:+.4f}, {hi:+.4f}] over {paired['items']} items ({paired['claims']} claims, {paired['resamples']} "
        f"resamples). **{NEW} {'ships' if v['ships'] else 'does not ship'}** on this gate. Issue 46's own rule "
        f"({v['until_2026_12_04']['rule']}) "
        + (
            "**held it back** on "
            + ", ".join(v["until_2026_12_04"]["held_back_by"])
            + (
                ": it was overridden after that result by the gate above, a maintainers' decision to "
                if NEW == GATE_CHANGED_FOR
                else ": the gate above, set before this judge was trained, decides; a maintainers' decision to "
            )
            + f"confirm or reverse ({old} is `{_where(old)}`)"
            if v["until_2026_12_04"]["held_back_by"]
            else "passed it too"
        )
        + f" ([`judge_ship_{NEW}.json`](../../benchmarks/results/judge/judge_ship_{NEW}.json), "
        "`benchmarks/judge/judge_ship.py`).",
    ]
    return "\n".join(rows)


def _mix_rows(d: dict[str, Any]) -> list[str]:
    licences = {
        k.removesuffix("_train").removesuffix("_dev").removesuffix("_test"): (v or {}).get("licence", "–")
        for k, v in d["sources"].items()
    }
    rows = []
    for name, kinds in sorted(d["pairs_by_source"].items()):
        counts = {lab: sum(k.get(lab, 0) for k in kinds.values()) for lab in LABELS}
        lic = (
            licences.get(name)
            or licences.get(name.removesuffix("_train"))
            or (
                "as their sources"
                if name.startswith("aug_") or name == "offtopic"
                else next((v for k, v in licences.items() if k.startswith(name) or name.startswith(k)), "–")
            )
        )
        rows.append(
            f"| {name} ({', '.join(sorted(kinds))}) | {sum(counts.values()):,} | "
            + " | ".join(f"{counts[lab]:,}" for lab in LABELS)
            + f" | {lic} |"
        )
    return rows


def data_general_table(results: Path = RESULTS) -> str:
    d = _load(f"default-judge-{MIX}-general_data.json", results)
    rows = ["| source | pairs | SUPPORT | CONTRADICT | IRRELEVANT | licence |", "|---|---:|---:|---:|---:|---|"]
    rows += _mix_rows(d)
    total = d["pairs_by_label"]
    rows.append(
        f"| **all** | **{sum(total.values()):,}** | " + " | ".join(f"{total[lab]:,}" for lab in LABELS) + " | |"
    )
    return "\n".join(rows)


def data_table(results: Path = RESULTS) -> str:
    d = _load(f"default-judge-{MIX}_data.json", results)
    rows = ["| source | pairs | SUPPORT | CONTRADICT | IRRELEVANT | licence |", "|---|---:|---:|---:|---:|---|"]
    rows += _mix_rows(d)
    bt = d["bench_train"]["pairs_by_label"]
    rows.append(
        f"| ConflictBench train split ({d['bench_train']['items']:,} items, every claim × document) | "
        f"{sum(bt.values()):,} | "
        + " | ".join(f"{bt[lab]:,}" for lab in LABELS)
        + f" | {d['sources']['conflictbench']['licence']} |"
    )
    total = {lab: d["pairs_by_label"][lab] + bt[lab] for lab in LABELS}
    rows.append(
        f"| **all** | **{sum(total.values()):,}** | " + " | ".join(f"{total[lab]:,}" for lab in LABELS) + " | |"
    )
    return "\n".join(rows)


def mining_table(results: Path = RESULTS) -> str:
    m = _load(f"default-judge-{NEW}_mine.json", results)
    w = m["written"]
    rows = [
        f"Stage 1 judged the {m['pairs']:,} document pairs and got {m['wrong']:,} wrong (error rate "
        f"{m['error_rate']:.3f}); stage 2 trained on those, {w['correct_kept']:,} of the right ones "
        f"(share {m['options']['keep_correct']}), {w['replay']:,} stage-1 pairs to rehearse and ConflictBench "
        f"train: {w['all']:,} pairs from the mining. The hardest sources for stage 1:",
        "",
        "| source (kind) | pairs | judged wrong | error rate |",
        "|---|---:|---:|---:|",
    ]
    worst = sorted(m["by_source"].items(), key=lambda kv: -kv[1]["error_rate"])[:12]
    rows += [f"| {k} | {v['pairs']:,} | {v['wrong']:,} | {v['error_rate']:.3f} |" for k, v in worst]
    return "\n".join(rows)


def balance_table(results: Path = RESULTS) -> str:
    rows = []
    for stage, name in (
        ("stage 1", f"default-judge-{MIX}-general_data.json"),
        ("stage 2", f"default-judge-{MIX}_data.json"),
    ):
        d = _load(name, results)["label_balance"]
        rows += [
            f"{stage}: {d['rule']}; {d['dropped']:,} pairs dropped. Label shares after (before):",
            "",
            "| feature | value | pairs | SUPPORT | CONTRADICT | IRRELEVANT |",
            "|---|---|---:|---:|---:|---:|",
        ]
        for feat, cells in d["after"].items():
            for value, c in cells.items():
                b = d["before"].get(feat, {}).get(value, {})
                rows.append(
                    f"| {feat} | {value} | {c['pairs']:,} | "
                    + " | ".join(f"{c[lab]:.3f} ({b[lab]:.3f})" if lab in b else f"{c[lab]:.3f}" for lab in LABELS)
                    + " |"
                )
        rows.append("")
    return "\n".join(rows).rstrip()


def leakage_table(results: Path = RESULTS) -> str:
    rows = []
    for stage, name in (
        ("stage 1", f"default-judge-{MIX}-general_data.json"),
        ("stage 2", f"default-judge-{MIX}_data.json"),
    ):
        d = _load(name, results)["leakage"]
        if not rows:
            rows += [
                f"Rule: {d['rule']}.",
                "",
                "| stage | source | documents removed | claims removed |",
                "|---|---|---:|---:|",
            ]
        for src, r in d["removed"].items():
            if r.get("documents") or r.get("claims"):
                rows.append(f"| {stage} | {src} | {r.get('documents', 0):,} | {r.get('claims', 0):,} |")
    return "\n".join(rows)


def training_table(results: Path = RESULTS) -> str:
    rows = [
        "| stage | epoch | mean eval macro-F1 | training s | evaluation s | exported |",
        "|---|---:|---:|---:|---:|---|",
    ]
    notes = []
    for stage, name in (
        ("1", f"default-judge-{NEW}-stage1_training.json"),
        ("2", f"default-judge-{NEW}_training.json"),
    ):
        r = _load(name, results)
        for h in r["history"]:
            best = "**yes** (best)" if h["epoch"] == r["best_epoch"] else ""
            rows.append(
                f"| {stage} | {h['epoch']} | {h['eval']['macro_f1']:.4f} | {h['train_s']:,.0f} | "
                f"{h['eval_s']:,.0f} | {best} |"
            )
        o = r["options"]
        notes.append(
            f"stage {stage}: {sum(r['train_labels'].values()):,} pairs, {o['epochs']} epoch{'s' * (o['epochs'] > 1)} "
            f"at lr {o['lr']:g}, "
            f"batch {o['batch_size']}, window {o['max_length']}, int8 embeddings frozen "
            f"{'yes' if o.get('int8_embeddings') else 'no'}; {r['train_pairs_per_s']} training pairs/s, "
            f"{r['threads']} threads, device {r['device']}{', bf16 autocast' if o.get('bf16') else ''}; eval sets: "
            + ", ".join(Path(f["path"]).stem for f in r["eval_files"])
        )
    return "\n".join(rows + [""] + [f"- {x}" for x in notes])


def _cells(values: list[str]) -> str:
    """Table cells, the last (the card's judge) in bold."""
    return " | ".join(values[:-1] + [f"**{values[-1]}**"])


def sanity_table(results: Path = RESULTS) -> str:
    recs = [_load(f"judge_sanity_{t}.json", results)["summary"] for t in COLUMNS]
    rows = ["| category | pairs | " + " | ".join(COLUMNS) + " |", "|---|---:|" + "---:|" * len(COLUMNS)]
    for cat, c in recs[-1]["categories"].items():
        rows.append(
            f"| {cat} | {c['n']} | " + _cells([_n(r["categories"].get(cat, {}).get("accuracy")) for r in recs]) + " |"
        )
    rows.append(
        f"| **all** | {recs[-1]['overall']['n']} | " + _cells([_n(r["overall"]["accuracy"]) for r in recs]) + " |"
    )
    return "\n".join(rows)


def checklist_table(results: Path = RESULTS) -> str:
    recs = [_load(f"judge_checklist_{t}.json", results) for t in COLUMNS]
    rows = ["| capability | probes | " + " | ".join(COLUMNS) + " |", "|---|---:|" + "---:|" * len(COLUMNS)]
    for cap, c in recs[-1]["capabilities"].items():
        rows.append(
            f"| {cap} | {c['n']} | "
            + _cells([_n(r["capabilities"].get(cap, {}).get("pass_rate")) for r in recs])
            + " |"
        )
    rows.append("| mean | | " + _cells([_n(r["macro_pass_rate"]) for r in recs]) + " |")
    return "\n".join(rows)


def dev_table(results: Path = RESULTS) -> str:
    dev = {t: _dev_sets(results, t) for t in COLUMNS}
    rules = "; ".join(
        f"{t}: document rule `{r}`, " + ("arg-max" if c == "argmax" else "thresholds") for t, (r, _, c) in dev.items()
    )
    rows = [
        f"Each judge under its own shipped rules ({rules}). The dev sets chose {NEW}'s checkpoint and rule: "
        "not held-out figures.",
        "",
        "| dev set | pair macro-F1 "
        + " | ".join(COLUMNS)
        + " | detection F1 "
        + " | ".join(COLUMNS)
        + " | control FPR "
        + " | ".join(COLUMNS)
        + " |",
        "|---|" + "---:|" * (3 * len(COLUMNS)),
    ]
    for name in dev[NEW][1]:
        cells = [dev[t][1].get(name, {}).get(dev[t][2], {}) for t in COLUMNS]
        dets = [c.get("detection") or {} for c in cells]
        rows.append(
            f"| {name} | "
            + " | ".join(_n(c.get("macro_f1")) for c in cells)
            + " | "
            + " | ".join(_n(d.get("f1")) for d in dets)
            + " | "
            + " | ".join(_n(d.get("false_positive_rate")) for d in dets)
            + " |"
        )
    return "\n".join(rows)


def anchors_table(results: Path = RESULTS) -> str:
    recs = {t: (_eval(results, t)["anchors"], rule_column(results, t)) for t in COLUMNS}
    rows = [
        "Accuracy and macro-F1 with each judge's own decision rule; never trained on, never used for selection; "
        "a seeded sample where `units` < `of`. ANLI, ConTRoL and AVeriTeC are non-commercial (evaluation only).",
        "",
        "| anchor | units (of) | accuracy " + " | ".join(COLUMNS) + " | macro-F1 " + " | ".join(COLUMNS) + " |",
        "|---|---:|" + "---:|" * (2 * len(COLUMNS)),
    ]
    for name, b in recs[NEW][0].items():
        cells = [a.get(name, {}).get(col, {}) for a, col in recs.values()]
        rows.append(
            f"| {name} | {b.get('units', '–')} ({b.get('of', '–')}) | "
            + _cells([_n(c.get("accuracy")) for c in cells])
            + " | "
            + " | ".join(_n(c.get("macro_f1")) for c in cells)
            + " |"
        )
    return "\n".join(rows)


def conflictbench_table(results: Path = RESULTS) -> str:
    rows = [
        "| split | judge | pair macro-F1 | detection P / R / F1 | control FPR | "
        + " | ".join(f"recall {t}" for t in CONFLICT_TYPES)
        + " | every-claim-conflicted F1 |",
        "|---|---|---:|---|---:|" + "---:|" * len(CONFLICT_TYPES) + "---:|",
    ]
    for split in ("test", "dev"):
        for tag in COLUMNS:
            ev = _bench(results, tag, split)
            det = ev["detection"]["overall"]
            by = ev["detection"]["by_conflict_type"]
            rows.append(
                f"| {split} | {tag} | {_n(ev['pairs']['macro_f1'])} | {_n(det['precision'])} / "
                f"{_n(det['recall'])} / **{_n(det['f1'])}** | {_n(det['false_positive_rate'])} | "
                + " | ".join(_n(by.get(t, {}).get("recall")) for t in CONFLICT_TYPES)
                + f" | {_n(all_conflicted_f1(det))} |"
            )
    return "\n".join(rows)


def cost_table(results: Path = RESULTS) -> str:
    cost = _load(f"judge_pair_cost_{OLD}-{NEW}.json", results)
    m = cost["meta"]
    rows = [
        f"`{m['command']}` — {m['date']}, {m['machine']}; 1-minute load {m['load_average'][0]} → "
        f"{m['load_average'][1]}.",
        "",
        "| judge | dtype | mean tokens | pairs/s | ms per pair | × the first |",
        "|---|---|---:|---:|---:|---:|",
    ]
    rows += [
        f"| {r['judge']} | {r['dtype']} | {r['mean_tokens']} | {r['pairs_per_s']} | {r['ms_per_pair']} | "
        f"{r['x_first']} |"
        for r in cost["rows"]
    ]
    return "\n".join(rows)


V4 = (
    ("v3", "v3", "default-judge", "the default when v4 was tried (MiniLM-L6, 22.7M parameters)"),
    (
        "v4-mpnet6-r64",
        "v4-mpnet6-r64",
        "default-judge-v4-mpnet6-r64",
        "MPNet 6 layers fully fine-tuned, shipped as its rank-64 difference from the base: "
        "the opt-in default-judge-base",
    ),
    ("v4-mpnet6-full", "v4-mpnet6-full", None, "the same fine-tune whole (not shippable: over 50 MB)"),
)
"""(judge_eval / checklist tag, pair-cost tag, ConflictBench dev run stem or None, what it is) of v3 and the
v4 candidates."""


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
    return {
        "negation": 1 - caps["negation"]["pass_rate"],
        "numbers": 1 - caps["numbers"]["pass_rate"],
        "off_topic": 1 - caps["off_topic"]["pass_rate"],
        "off_topic_c": off.get("CONTRADICT", 0) / sum(off.values()) if off else None,
        "neg_elsewhere": 1 - d["pass_rate"] if d else None,
        "mean": check["macro_pass_rate"],
    }


def v4_table(results: Path = RESULTS) -> str:
    """v3 against the v4 candidates: the dev objective and conflict detection, the checklist's error
    rates, ConflictBench dev through `bench run`, and what a pair costs (fp32, this CPU)."""
    cost = _optional(results, "judge_pair_cost.json")
    ms = {r["judge"]: r["ms_per_pair"] for r in (cost or {}).get("rows", []) if r["dtype"] == "float32"}
    rows = [
        "Each judge under its own best document rule with thresholds calibrated on the five dev sets (they "
        "chose the thresholds: not held-out figures); checklist error rates = 1 − pass rate; ConflictBench dev "
        "through `bench run` (embedding pruner). – : not measured.",
        "",
        "| judge | dev objective | bench_dev detection F1 | healthver_dev detection F1 | ConflictBench dev "
        "detection F1 | negation error | negation elsewhere error | numbers error | off-topic error | "
        "off-topic → CONTRADICT | checklist mean | ms per pair (fp32) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for tag, cost_tag, bench, what in V4:
        ev = _optional(results, f"judge_eval_{tag}.json")
        if ev is None:
            continue
        rule = ev["document_rules"]["best"]
        best = ev["document_rules"]["rules"][rule]
        sets = best["sets"]
        det = {
            n: (sets.get(n, {}).get("calibrated", {}).get("detection") or {}).get("f1")
            for n in ("bench_dev", "healthver_dev")
        }
        run = _optional(results, f"conflictbench_{bench}-dev.json") if bench else None
        e = _errors(_optional(results, f"judge_checklist_{tag}.json"))
        cell = f"{ms[cost_tag]:.0f}" if cost_tag in ms else "–"
        rows.append(
            f"| {tag}: {what} | {_n(best['objective_calibrated'])} (`{rule}`) | {_n(det['bench_dev'])} | "
            f"{_n(det['healthver_dev'])} | {_n(run['detection']['overall']['f1'] if run else None)} | "
            f"{_n(e.get('negation'))} | {_n(e.get('neg_elsewhere'))} | {_n(e.get('numbers'))} | "
            f"{_n(e.get('off_topic'))} | {_n(e.get('off_topic_c'))} | {_n(e.get('mean'))} | "
            f"{cell} |"
        )
    return "\n".join(rows)


def v4_training_table(results: Path = RESULTS) -> str:
    rows = [
        "| candidate | epoch | pairs trained | train loss | mean eval macro-F1 (HealthVer, ScoNe dev) | training s | "
        "exported |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    notes = []
    for kind in ("lora", "full"):
        r = _optional(results, f"judge-v4-mpnet6-{kind}_training.json")
        if r is None:
            continue
        n = sum(r["train_labels"].values())
        for h in r["history"]:
            rows.append(
                f"| {kind} | {h['epoch']} | {round(n * h['epoch']):,} | {_n(h['train_loss'])} | "
                f"{h['eval']['macro_f1']:.4f} | {h['train_s']:,.0f} | "
                f"{'**yes**' if h['epoch'] == r['best_epoch'] else ''} |"
            )
        b = r["base"]
        notes.append(
            f"{kind}: {b['trainable_parameters']:,} trainable of "
            f"{b['trainable_parameters'] + b['frozen_parameters']:,} "
            f"parameters, layers {b['kept_layers']} of {b['layers']}, lr {r['options']['lr']:g}, "
            f"{r['train_pairs_per_s']} training pairs/s on {r['threads']} thread(s), bf16 autocast "
            f"{'on' if r['options']['bf16'] else 'off'}, schedule {r['options']['epochs']} epoch run to "
            f"{r['history'][-1]['epoch']}"
        )
    return "\n".join(rows + [""] + [f"- {x}" for x in notes])


def v4_anchors_table(results: Path = RESULTS) -> str:
    evals = {tag: _optional(results, f"judge_eval_{tag}.json") for tag, *_ in V4}
    have = [t for t, r in evals.items() if r is not None and r.get("anchors")]
    if not have:
        return "No anchors recorded."
    rows = [
        "Accuracy with each judge's own decision rule, on a seeded sample of each anchor where `units` < `of` "
        "(v3: 600 units, the v4 candidate: 200, the CPU budget).",
        "",
        "| anchor | " + " | ".join(f"{t} units (of) | {t} accuracy" for t in have) + " |",
        "|---|" + "---:|---:|" * len(have),
    ]
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
    rows = [
        f"`{m['command']}` — {m['date']}, {m['machine']}, {cost['meta'].get('threads')} threads, 1-minute load "
        f"{m['load_average'][0]} → {m['load_average'][1]}.",
        "",
        "| judge | dtype | mean tokens | pairs/s | ms per pair | × v3 |",
        "|---|---|---:|---:|---:|---:|",
    ]
    rows += [
        f"| {r['judge']} | {r['dtype']} | {r['mean_tokens']} | {r['pairs_per_s']} | {r['ms_per_pair']} | "
        f"{r['x_first']} |"
        for r in cost["rows"]
    ]
    return "\n".join(rows)


TABLES: dict[str, Callable[[Path], str]] = {
    "targets": targets_table,
    "ship": ship_table,
    "decision": decision_table,
    "data_general": data_general_table,
    "data": data_table,
    "mining": mining_table,
    "balance": balance_table,
    "leakage": leakage_table,
    "training": training_table,
    "sanity": sanity_table,
    "checklist": checklist_table,
    "dev": dev_table,
    "anchors": anchors_table,
    "conflictbench": conflictbench_table,
    "cost": cost_table,
    "v4": v4_table,
}
V4_CARD = ROOT / "models" / "default-judge-base" / "README.md"
V4_TABLES: dict[str, Callable[[Path], str]] = {
    "v4": v4_table,
    "v4_training": v4_training_table,
    "v4_anchors": v4_anchors_table,
    "v4_cost": v4_cost_table,
}


def tables_for(card: Path) -> dict[str, Callable[[Path], str]]:
    """The blocks a card holds: the v4 card's (``models/default-judge-base``), else the default judge's."""
    return V4_TABLES if Path(card).resolve() == V4_CARD.resolve() else TABLES


def render(
    card: str, results: Path = RESULTS, tables: dict[str, Callable[[Path], str]] | None = None, where: Path = CARD
) -> str:
    """``card`` with every ``card:NAME`` block refilled from ``results``; an unknown name is an error."""
    tables = TABLES if tables is None else tables

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in tables:
            raise SystemExit(f"{where}: unknown block card:{name}; allowed: {', '.join(tables)}")
        return m.group(1) + tables[name](results) + "\n" + m.group(4)

    return BLOCK.sub(fill, card)


def shipped_is_new(folder: Path, results: Path = RESULTS) -> None:
    """Refuse to fill the card of the checkpoint in ``folder`` with another judge's figures: its training.json
    must be ``default-judge-<NEW>_training.json`` (``NEW`` = the last of ``COLUMNS``)."""
    record = results / f"default-judge-{NEW}_training.json"
    shipped = folder / "training.json"
    if not record.exists() or not shipped.exists() or shipped.read_bytes() != record.read_bytes():
        known = sorted(
            p.name.removeprefix("default-judge-").removesuffix("_training.json")
            for p in results.glob("default-judge-*_training.json")
        )
        raise SystemExit(
            f"judge_card: {shipped} is not {record.name}: the checkpoint there is not {NEW}, the last of COLUMNS "
            f"{COLUMNS}; set COLUMNS in benchmarks/judge/judge_card.py to end with the shipped judge's tag "
            f"(tags with a training record: {', '.join(known)})"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the card differs from its results files")
    ap.add_argument("--card", default=str(CARD))
    args = ap.parse_args(argv)
    path = Path(args.card)
    if path.resolve() == CARD.resolve():
        shipped_is_new(path.parent)
    text = path.read_text(encoding="utf-8")
    new = render(text, tables=tables_for(path), where=path)
    if args.check:
        if new != text:
            print(
                f"{path}: tables differ from benchmarks/results/judge; run python -m benchmarks.judge.judge_card",
                file=sys.stderr,
            )
            return 1
        return 0
    path.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
