"""The default judge before and after retraining, on every evaluation set held out from training.

    .venv/bin/python -m benchmarks.judge.judge_report [--before benchmarks/results/judge/judge-v1] \\
        [--after benchmarks/results/judge/judge-v2]

Each folder holds ``bench run`` results (JSON) named after the evaluation file of
``conflictscore train-judge prepare``: ``scifact_dev``, ``check_covid_dev``, ``citint_dev``,
``healthver_dev`` (``--pruner none``: every claim × document pair judged); ConflictBench test
and dev (default pipeline) are ``benchmarks/results/judge/conflictbench_<NAME>.json`` and
``conflictbench_<NAME>-dev.json`` with NAME ``default-judge`` (before: the committed judge)
and ``judge-v2-attempt`` (after), the rows of ``benchmarks/results/judge/conflictbench.md``. Pair macro-F1 is
recomputed from each run's
confusion matrix with the benchmark's current definition (scikit-learn's convention: labels
= gold ∪ predicted), so results recorded before that convention compare exactly. Writes
``benchmarks/results/judge/default_judge_v1_vs_v2.{json,md}``; absolute paths inside the result
files are rewritten relative to the repository (``--relativize``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local.bench import default_data_dir
from conflictscore_local.core.detection import all_conflicted_f1, pair_metrics
from conflictscore_local.formats.summary import upgrade

REPO = Path(__file__).resolve().parents[2]

SETS = ("bench_test", "bench_dev", "healthver_dev", "check_covid_dev", "citint_dev", "scifact_dev")
TYPES = ("ambiguity", "misinformation", "counterfactual", "contradiction", "opinion")


def macro_f1(confusion: dict) -> float | None:
    """Pair macro-F1 of a recorded confusion matrix, by the benchmark's own definition."""
    return pair_metrics((g, p) for g, row in confusion.items() for p, n in row.items() for _ in range(n))["macro_f1"]


def relativize(path: Path) -> None:
    """Rewrite absolute repository and data paths in a result file (the run recorded them resolved)."""
    text = path.read_text(encoding="utf-8")
    new = text.replace(str(default_data_dir().resolve()) + "/", "$CONFLICTSCORE_DATA/").replace(str(REPO) + "/", "")
    # results recorded in another checkout of the repository (the committed v1 runs)
    new = re.sub(r'"/[^"]*?/((?:models|benchmarks|\.venv)/)', r'"\1', new)
    if new != text:
        path.write_text(new, encoding="utf-8")


def figures(result: dict) -> dict:
    ev = upgrade(result)["evaluation"]  # a bench run summary of any release
    det, pm = ev["detection"], ev["pairs"]
    out = {
        "n_pairs": pm["n_pairs"],
        "macro_f1": macro_f1(pm["confusion"]),
        "every_claim_conflicted_f1": all_conflicted_f1(det["overall"]),
        "per_label_f1": {k: v["f1"] for k, v in pm["per_label"].items()},
        "detection": {k: det["overall"][k] for k in ("precision", "recall", "f1", "n_gold_conflicted")},
    }
    out["by_conflict_type"] = {
        t: {k: v.get(k) for k in ("precision", "recall", "f1", "n_claims", "n_gold_conflicted", "false_positive_rate")}
        for t, v in det.get("by_conflict_type", {}).items()
    }
    out["by_source"] = {
        s: {k: v[k] for k in ("precision", "recall", "f1", "n_gold_conflicted")}
        for s, v in det.get("by_source", {}).items()
    }
    return out


def _f(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", default="benchmarks/results/judge/judge-v1")
    ap.add_argument("--after", default="benchmarks/results/judge/judge-v2")
    ap.add_argument("--before-bench", default="default-judge-v1")
    ap.add_argument("--after-bench", default="default-judge")
    ap.add_argument(
        "--after-training",
        default="models/default-judge/training.json",
        help="training.json of the after judge: its calibrated eval figures (the judge's own rule and "
        "aggregation, every pair judged) fill the sets with no `bench run` file (default: %(default)s)",
    )
    ap.add_argument(
        "--names",
        nargs=2,
        default=("v1", "v2"),
        metavar=("BEFORE", "AFTER"),
        help="what the two judges are called in the tables (default: v1 v2)",
    )
    ap.add_argument(
        "--out", default=None, help="results file stem (default benchmarks/results/judge/default_judge_BEFORE_vs_AFTER)"
    )
    ap.add_argument("--relativize", action="store_true", help="rewrite absolute paths in the result files first")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    args.out = args.out or f"benchmarks/results/judge/default_judge_{args.names[0]}_vs_{args.names[1]}"
    runs: dict[str, dict[str, dict]] = {}
    for tag, folder, bench in (("before", args.before, args.before_bench), ("after", args.after, args.after_bench)):
        for name in SETS:
            f = REPO / folder / f"{name}.json"
            if name.startswith("bench_"):
                f = (
                    REPO
                    / "benchmarks/results/judge"
                    / f"conflictbench_{bench}{'-dev' if name == 'bench_dev' else ''}.json"
                )
            if not f.is_file():
                continue
            if args.relativize:
                relativize(f)
            runs.setdefault(name, {})[tag] = figures(json.loads(f.read_text(encoding="utf-8")))
    tr = REPO / args.after_training
    if tr.is_file():
        cal = (json.loads(tr.read_text(encoding="utf-8")).get("calibration") or {}).get("eval", {})
        for name, m in cal.items():
            if name in SETS and "after" not in runs.get(name, {}):
                det = m.get("detection")
                runs.setdefault(name, {})["after"] = {
                    "source": "training.json",
                    "n_pairs": m["pairs"]["n_pairs"],
                    "macro_f1": m["macro_f1"],
                    "per_label_f1": {k: v["f1"] for k, v in m["pairs"]["per_label"].items()},
                    "detection": {k: det[k] for k in ("precision", "recall", "f1", "n_gold_conflicted")} if det else {},
                    "by_conflict_type": {},
                    "by_source": {},
                }
    record = {
        "meta": run_meta(__file__, argv, started, load),
        "before": args.before,
        "after": args.after,
        "names": list(args.names),
        "sets": runs,
    }
    print(write_recorded(REPO / args.out, record, report))
    return 0


def report(r: dict) -> str:
    before, after = r.get("names", ("v1", "v2"))
    lines = [
        f"# Default judge: {before} (before) vs {after} (after; committed as models/default-judge), on the held-out "
        "evaluation sets",
        "",
        *header(r["meta"]),
        f"Before: `{r['before']}`, after: `{r['after']}`. Pair macro-F1 with "
        "scikit-learn's convention, recomputed from each run's confusion matrix. After-figures marked * come from "
        "the after judge's training.json (calibrated thresholds, the judge's rule and the engine's aggregation, "
        "every pair judged: what `bench run --pruner none` computes); the dev files were tuned on.",
        "",
        "| evaluation set | pairs | macro-F1 before | after | detection F1 before | after |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, v in r["sets"].items():
        b, a = v.get("before", {}), v.get("after", {})
        has_det = (b or a).get("detection", {}).get("n_gold_conflicted")
        star = "*" if a.get("source") == "training.json" else ""
        lines.append(
            f"| {name} | {(b or a).get('n_pairs')} | {_f(b.get('macro_f1'))} | {_f(a.get('macro_f1'))}{star} | "
            + (
                f"{_f(b.get('detection', {}).get('f1'))} | {_f(a.get('detection', {}).get('f1'))}{star} |"
                if has_det
                else "– | – |"
            )
        )
    test = r["sets"].get("bench_test", {})
    if test:
        lines += [
            "",
            "ConflictBench test, conflict detection P / R / F1:",
            "",
            "| group | claims | gold conflicted | before P / R / F1 | after P / R / F1 |",
            "|---|---:|---:|---|---|",
        ]
        groups = [("overall", test.get("before", test.get("after"))["detection"], None)]
        groups += [(t, None, t) for t in TYPES] + [
            (f"source {s}", None, s) for s in (test.get("after") or test["before"])["by_source"]
        ]
        trivial = (test.get("after") or test["before"]).get("every_claim_conflicted_f1")
        for label, _, key in groups:
            cells = []
            meta = None
            for tag in ("before", "after"):
                f = test.get(tag)
                if f is None:
                    cells.append("–")
                    continue
                g = f["detection"] if key is None else f["by_conflict_type"].get(key) or f["by_source"].get(key)
                if g is None:
                    cells.append("–")
                    continue
                meta = meta or g
                cells.append(f"{_f(g['precision'])} / {_f(g['recall'])} / {_f(g['f1'])}")
            if meta is not None:
                lines.append(
                    f"| {label} | {meta.get('n_claims', '')} | {meta['n_gold_conflicted']} | {cells[0]} | {cells[1]} |"
                )
        fprs = [
            (test.get(t) or {}).get("by_conflict_type", {}).get("none", {}).get("false_positive_rate")
            for t in ("before", "after")
        ]
        lines += [
            "",
            f"False-positive rate on control claims (items without a gold conflict): {_f(fprs[0])} → {_f(fprs[1])}.",
        ]
        if trivial is not None:
            lines += [
                "",
                f'For scale: the rule "every claim is conflicted" scores detection F1 {trivial:.3f} on this split.',
            ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
