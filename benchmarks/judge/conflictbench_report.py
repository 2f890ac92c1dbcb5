"""Fill benchmarks/results/judge/conflictbench.md from the ConflictBench result files, and plot F1 per type.

Reads ``benchmarks/results/judge/conflictbench_stats.json`` (from ``bench build --stats``) and
every ``benchmarks/results/judge/conflictbench_<run>.json`` (from ``bench run``), rewrites the
parts of ``benchmarks/results/judge/conflictbench.md`` between the ``<!-- conflictbench:... -->``
markers, and draws ``benchmarks/results/judge/conflictbench_f1_by_type.png`` (needs matplotlib:
``pip install conflictscore-local[plot]``; skipped with a note otherwise). Run by
``benchmarks/judge/run_conflictbench.sh``; rerun it after adding a result file.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import compact_png
from conflictscore_local.formats.summary import read_summary

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "judge"
DOC = RESULTS / "conflictbench.md"
PLOT = RESULTS / "conflictbench_f1_by_type.png"
TYPES = ("ambiguity", "misinformation", "counterfactual", "contradiction", "opinion")


def fmt(v: Any) -> str:
    return "–" if v is None else f"{v:.3f}"


def load_runs() -> dict[str, dict[str, Any]]:
    runs = {}
    for p in sorted(RESULTS.glob("conflictbench_*.json")):
        if p.stem != "conflictbench_stats":
            runs[p.stem.removeprefix("conflictbench_")] = read_summary(p)  # any release's schema
    return runs


def stats_section(stats: dict[str, Any]) -> str:
    splits = ("train", "dev", "test")
    lines = [
        "| source | items | claims | conflicted claims | pairs | SUPPORT | CONTRADICT | IRRELEVANT | "
        "items train / dev / test |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, c in [*stats["source"].items(), ("**all**", stats["total"]["all"])]:
        per_split = (
            " / ".join(str(stats["source_split"].get(f"{name}/{s}", {}).get("items", 0)) for s in splits)
            if name != "**all**"
            else " / ".join(str(stats["split"].get(s, {}).get("items", 0)) for s in splits)
        )
        lines.append(
            f"| {name} | {c['items']} | {c['claims']} | {c['conflicted']} | {c['pairs']} | "
            f"{c.get('SUPPORT', 0)} | {c.get('CONTRADICT', 0)} | {c.get('IRRELEVANT', 0)} | {per_split} |"
        )
    lines += ["", "| conflict type | items | claims | conflicted claims | pairs |", "|---|---:|---:|---:|---:|"]
    for name, c in stats["conflict_type"].items():
        lines.append(f"| {name} | {c['items']} | {c['claims']} | {c['conflicted']} | {c['pairs']} |")
    lines += ["", "| split | items | claims | conflicted claims | pairs |", "|---|---:|---:|---:|---:|"]
    for name in splits:
        c = stats["split"][name]
        lines.append(f"| {name} | {c['items']} | {c['claims']} | {c['conflicted']} | {c['pairs']} |")
    return "\n".join(lines)


def _judge_desc(res: dict[str, Any]) -> str:
    if res["bench"]["given_labels"]:
        return "gold labels (sanity check)"
    be = res["config"]["backends"]
    j = be.get("judge", {})
    resolved = j.get("resolved") or {}
    model = resolved.get("model_path") or resolved.get("model") or (j.get("args") or {}).get("model") or ""
    pruner = be.get("pruner", {}).get("name", "?")
    return f"`{j.get('name', '?')}` {Path(str(model)).name if model else ''} · pruner `{pruner}`".strip()


def results_section(runs: dict[str, dict[str, Any]]) -> str:
    head = (
        "| run | judge | split | claims | pair acc. | pair macro-F1 | det. P | det. R | det. F1 | "
        + " | ".join(f"F1 {t}" for t in TYPES)
        + " | FPR controls | unscored | gold S/C pruned | pairs/s |"
    )
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, r in runs.items():
        d, pm, pr = r["evaluation"]["detection"], r["evaluation"]["pairs"], r["evaluation"]["pruning"]
        by_type = d["by_conflict_type"]
        f1s = " | ".join(fmt(by_type.get(t, {}).get("f1")) for t in TYPES)
        lines.append(
            f"| {name} | {_judge_desc(r)} | {r['bench']['split'] or 'all'} | {r['n_claims']} | "
            f"{fmt(pm['accuracy'])} | {fmt(pm['macro_f1'])} | {fmt(d['overall']['precision'])} | "
            f"{fmt(d['overall']['recall'])} | {fmt(d['overall']['f1'])} | {f1s} | "
            f"{fmt(by_type.get('none', {}).get('false_positive_rate'))} | {r['evaluation']['unscored']['pairs']} | "
            f"{pr['gold_support_pruned']}/{pr['gold_contradict_pruned']} | "
            f"{r['timing'].get('judge_passage_pairs_per_s', '–')} |"
        )
    gold_runs = [r for r in runs.values() if r["bench"]["given_labels"]]
    gold_runs.sort(key=lambda r: r["bench"]["split"] != "test")
    floor = gold_runs[0] if gold_runs else None
    if floor is not None:
        lines.append(_floor_row(floor))
    lines += ["", "| run | command-line pipeline | created (UTC) | platform | input sha256 |", "|---|---|---|---|---|"]
    for name, r in runs.items():
        run = r["config"]["run"]
        pipe = (
            "gold labels given: no judge or pruner ran"
            if r["bench"]["given_labels"]
            else f"judge `{json.dumps(run['judge'])}`, pruner `{json.dumps(run['pruner'])}`"
        )
        lines.append(
            f"| {name} | {pipe} | {r['bench'].get('created', '?')} | {r['versions'].get('platform', '?')} | "
            f"`{r['bench']['input_sha256'][:12]}` |"
        )
    return "\n".join(lines)


def _floor_row(gold: dict[str, Any]) -> str:
    """Flag every claim as conflicted: precision = prevalence, recall = 1 (from the gold counts)."""

    def f1(m: dict[str, Any]) -> float | None:
        if not m["n_claims"] or not m["n_gold_conflicted"]:
            return None
        p = m["n_gold_conflicted"] / m["n_claims"]
        return 2 * p / (p + 1)

    d = gold["evaluation"]["detection"]
    o = d["overall"]
    f1s = " | ".join(fmt(f1(d["by_conflict_type"][t]) if t in d["by_conflict_type"] else None) for t in TYPES)
    split = gold["bench"]["split"] or "all"
    prevalence = fmt(o["n_gold_conflicted"] / o["n_claims"])
    return (
        f"| *floor* | flag every claim conflicted (computed from the gold counts) | {split} | {o['n_claims']} "
        f"| – | – | {prevalence} | 1.000 | {fmt(f1(o))} | {f1s} | 1.000 | – | – | – |"
    )


def plot(runs: dict[str, dict[str, Any]]) -> str:
    """Bars of detection F1 per conflict type, one colour per run on the test split."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "(plot skipped: matplotlib is not installed; `pip install conflictscore-local[plot]`)"
    runs = {k: r for k, r in runs.items() if r["bench"]["split"] == "test"}
    fig, ax = plt.subplots(figsize=(7, 3.2), dpi=100)
    width = 0.8 / max(1, len(runs))
    for k, (name, r) in enumerate(runs.items()):
        by_type = r["evaluation"]["detection"]["by_conflict_type"]
        vals = [by_type.get(t, {}).get("f1") or 0.0 for t in TYPES]
        ax.bar([i + k * width for i in range(len(TYPES))], vals, width, label=name)
    ax.set_xticks([i + width * (len(runs) - 1) / 2 for i in range(len(TYPES))], TYPES)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("detection F1")
    ax.set_title("ConflictBench: conflict detection F1 per conflict type")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    fig.savefig(PLOT)
    plt.close(fig)
    compact_png(PLOT)
    return f"![detection F1 per conflict type](results/{PLOT.name})"


def replace_block(text: str, key: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- conflictbench:{key} -->).*?(<!-- /conflictbench:{key} -->)", re.S)
    if not pattern.search(text):
        raise SystemExit(f"{DOC}: marker <!-- conflictbench:{key} --> not found")
    return pattern.sub(lambda m: f"{m.group(1)}\n{body}\n{m.group(2)}", text)


def main() -> int:
    stats_path = RESULTS / "conflictbench_stats.json"
    if not stats_path.exists():
        print(f"{stats_path} missing: run benchmarks/judge/run_conflictbench.sh", file=sys.stderr)
        return 2
    runs = load_runs()
    text = DOC.read_text(encoding="utf-8")
    text = replace_block(text, "stats", stats_section(json.loads(stats_path.read_text(encoding="utf-8"))))
    text = replace_block(text, "results", results_section(runs))
    text = replace_block(text, "plot", plot(runs))
    DOC.write_text(text, encoding="utf-8")
    print(f"updated {DOC.relative_to(ROOT)} ({len(runs)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
