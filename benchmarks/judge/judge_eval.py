"""A judge on the dev sets and the standard anchors, and the document rules compared on the dev sets.

Every figure goes through the project's own code: the ``nli`` judge (built by the registry)
gives passage probabilities, :func:`conflictscore_local.judge.labels.decide` turns them
into labels, :func:`conflictscore_local.core.aggregate.document_judgment` decides each claim ×
document unit under a document rule, and :mod:`conflictscore_local.core.detection` scores
them (pair macro-F1, accuracy, conflict detection) — as ``train-judge fit`` evaluates and as
a run judges.

- ``--dev``: eval files written by ``train-judge prepare`` (ConflictBench dev and the
  SciFact / Check-COVID / Citation-Integrity / HealthVer dev files, …). For each document
  rule (:data:`~conflictscore_local.core.aggregate.DOCUMENT_RULES`) the SUPPORT / CONTRADICT
  thresholds are fitted on them with :func:`conflictscore_local.train.evaluate.calibrate`
  (the objective ``fit --calibrate`` uses), and every set is reported under argmax and
  under those thresholds: the rule with the best objective is the one to ship.
- ``--anchors``: the ``anchor_*.jsonl`` files (ANLI R1–R3 test, TaxiNLI ≈ MNLI dev,
  ConTRoL, AVeriTeC, NaN-NLI, FEVER-Symmetric test, ConjNLI dev, CAD-SNLI test), accuracy
  and macro-F1 with the judge's own decision rule (its calibrated thresholds, if any).

    python -m benchmarks.judge.judge_eval --tag v2 --judge-arg model=benchmarks/work/judge-v2 \\
        --data benchmarks/work/judge-data-v3 --dev bench_dev scifact_dev check_covid_dev citint_dev healthver_dev \\
        --anchors anli taxinli control averitec nan_nli fever_symmetric conjnli cad_test

writes ``benchmarks/results/judge/judge_eval_<tag>.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local.backends import registry
from conflictscore_local.core.aggregate import DOCUMENT_RULES
from conflictscore_local.core.types import LABELS, Claim, Pair, Passage
from conflictscore_local.util.paths import portable

ROOT = Path(__file__).resolve().parents[2]

RESULTS = ROOT / "benchmarks" / "results" / "judge"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--tag", required=True, help="names the results files: judge_eval_<tag>.{json,md}")
    p.add_argument(
        "--judge-arg",
        action="append",
        default=[],
        metavar="K=V",
        help="an argument of the nli judge (repeatable), e.g. model=PATH; none: the default judge",
    )
    p.add_argument("--data", default="benchmarks/work/judge-data-v3", help="the folder `train-judge prepare` wrote")
    p.add_argument("--dev", nargs="*", default=[], metavar="NAME", help="dev files (NAME.jsonl in --data)")
    p.add_argument("--anchors", nargs="*", default=[], metavar="NAME", help="anchor files (anchor_NAME.jsonl)")
    p.add_argument(
        "--anchor-sample",
        type=int,
        default=None,
        metavar="N",
        help="judge a seeded sample of N units of each anchor (default: all; the count is recorded)",
    )
    p.add_argument(
        "--anchor-whole",
        nargs="*",
        default=[],
        metavar="NAME",
        help="anchors judged whole even with --anchor-sample (those a target is stated on)",
    )
    p.add_argument("--rules", nargs="*", default=list(DOCUMENT_RULES), choices=DOCUMENT_RULES)
    p.add_argument(
        "--max-fpr",
        action="append",
        default=[],
        metavar="SET=RATE",
        help="calibrate only over thresholds whose false-positive rate on SET's control claims is at "
        "most RATE (repeatable), e.g. bench_dev=0.087 (v2's rate): a rule none of whose thresholds "
        "holds it loses to one that does",
    )
    p.add_argument(
        "--apply-best",
        metavar="CHECKPOINT",
        help="write the best rule's calibrated thresholds into CHECKPOINT/conflictscore.json "
        "(and the rule under 'document_rule', for the record)",
    )
    p.add_argument("--threads", type=int, default=None, help="torch threads (default: the cores available)")
    p.add_argument("--out-dir", default=str(RESULTS))
    return p.parse_args(argv)


def judge_probs(judge: Any, ev: Any) -> Any:
    """Passage probabilities (rows in ``LABELS`` order) of every row of an eval set."""
    import numpy as np

    claims: dict[str, Claim] = {}
    pairs = []
    for r, (claim, text) in enumerate(zip(ev.claims, ev.passages)):
        c = claims.setdefault(claim, Claim("eval", len(claims), claim))
        pairs.append(Pair(c, Passage("eval", f"r{r}", 0, text)))
    judged = judge.judge(pairs)
    return np.array([[j.probs[lab] for lab in LABELS] for j in judged], dtype=np.float64)


def sample_units(ev: Any, n: int | None, seed: int = 0) -> Any:
    """A seeded sample of ``n`` units of an eval set (all of them when ``n`` is None or larger),
    in their original order, with their passages, labels and groups."""
    import random

    from conflictscore_local.train.data import EvalSet

    if n is None or n >= len(ev):
        return ev
    out = EvalSet(name=ev.name, conflicted=list(ev.conflicted))
    for u in sorted(random.Random(seed).sample(range(len(ev)), n)):
        lo, hi = ev.offsets[u], ev.offsets[u + 1]
        out.add(ev.claims[lo], ev.passages[lo:hi], ev.labels[u], ev.groups[u])
    return out


def _figures(m: dict[str, Any]) -> dict[str, Any]:
    pm = m["pairs"]
    out = {
        "macro_f1": round(m["macro_f1"], 4),
        "accuracy": round(pm["accuracy"], 4) if pm["accuracy"] is not None else None,
        "pairs": pm["n_pairs"],
    }
    if "detection" in m:
        det = m["detection"]
        out["detection"] = {
            k: (round(det[k], 4) if isinstance(det[k], float) else det[k])
            for k in ("precision", "recall", "f1", "false_positive_rate", "n_gold_conflicted")
        }
    return out


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    import torch
    from transformers import AutoTokenizer

    from conflictscore_local.pipeline.config import parse_assignment
    from conflictscore_local.train.data import read_eval_set
    from conflictscore_local.train.evaluate import calibrate, evaluate
    from conflictscore_local.train.loop import make_chunker

    torch.set_num_threads(args.threads or len(os.sched_getaffinity(0)))
    judge = registry.build("judge", "nli", dict(parse_assignment(a, flag="--judge-arg") for a in args.judge_arg))
    tokenizer = AutoTokenizer.from_pretrained(judge.checkpoint())
    chunker = make_chunker(tokenizer, judge.max_length())
    data = Path(args.data)
    started, load = time.perf_counter(), os.getloadavg()
    record: dict[str, Any] = {
        "judge": portable(judge.describe()),
        "thresholds_shipped": judge.thresholds(),
    }
    # what the judge decides with: its own thresholds and document rule, or those --apply-best writes
    shipped, shipped_rule = judge.thresholds(), judge.document_rule() or "max"
    sets, probs = [], []
    for name in args.dev:
        ev, _ = read_eval_set(str(data / f"{name}.jsonl"), chunker)
        sets.append(ev)
        probs.append(judge_probs(judge, ev))
    max_fpr = {}
    for a in args.max_fpr:
        name, sep, rate = a.partition("=")
        try:
            max_fpr[name] = float(rate)
        except ValueError:
            raise SystemExit(f"--max-fpr expects SET=RATE, got {a!r}") from None
        if not 0.0 <= max_fpr[name] <= 1.0:  # NaN fails this too
            raise SystemExit(f"--max-fpr {a!r}: RATE must be a rate in [0, 1]")
        if not sep or name not in args.dev:
            raise SystemExit(f"--max-fpr {a!r}: SET must be one of the --dev sets ({', '.join(args.dev)})")
    if sets:
        rules: dict[str, Any] = {}
        for rule in args.rules:
            cal = calibrate(probs, sets, rule=rule, max_fpr=max_fpr)
            rules[rule] = {
                "max_fpr": cal.max_fpr,
                "max_fpr_met": cal.met,
                "thresholds": cal.thresholds,
                "objective_argmax": round(cal.argmax_score, 4),
                "objective_calibrated": round(cal.score, 4),
                "objective_shipped_thresholds": round(_objective(probs, sets, judge.thresholds(), rule), 4),
                "sets": {
                    ev.name: {
                        "argmax": _figures(evaluate(p, ev, None, rule)),
                        "calibrated": _figures(evaluate(p, ev, cal.thresholds, rule)),
                    }
                    for ev, p in zip(sets, probs)
                },
            }
        best = max(rules, key=lambda r: (rules[r]["max_fpr_met"], rules[r]["objective_calibrated"], r == "max"))
        record["document_rules"] = {"objective": cal.objective, "best": best, "rules": rules}
        if args.apply_best:
            path = Path(args.apply_best) / "conflictscore.json"
            cfg = json.loads(path.read_text())
            cfg["thresholds"] = rules[best]["thresholds"]
            if cfg["thresholds"] is None:
                del cfg["thresholds"]
            cfg["document_rule"] = best
            path.write_text(json.dumps(cfg, indent=1) + "\n")
            record["applied_to"] = portable(str(path))
            shipped, shipped_rule = rules[best]["thresholds"], best
    record["thresholds_in_force"] = shipped
    record["document_rule_in_force"] = shipped_rule
    anchors = {}
    for name in args.anchors:
        full, _ = read_eval_set(str(data / f"anchor_{name}.jsonl"), chunker)
        ev = sample_units(full, None if name in args.anchor_whole else args.anchor_sample)
        p = judge_probs(judge, ev)
        anchors[name] = {
            "units": len(ev),
            "of": len(full),
            "argmax": _figures(evaluate(p, ev, None)),
            "shipped": _figures(evaluate(p, ev, shipped)),
        }
    record["anchors"] = anchors
    record = {"meta": run_meta(__file__, argv, started, load), **record}
    print(write_recorded(Path(args.out_dir) / f"judge_eval_{args.tag}", record, lambda r: markdown(args.tag, r)))
    return 0


def _objective(probs: Any, sets: Any, thresholds: Any, rule: str) -> float:
    from conflictscore_local.train.evaluate import evaluate, objective

    return sum(objective(evaluate(p, ev, thresholds, rule)) for p, ev in zip(probs, sets)) / len(sets)


def markdown(tag: str, r: dict[str, Any]) -> str:
    lines = [
        f"# Judge evaluation: {tag}",
        "",
        *header(r["meta"]),
        f"Shipped thresholds: {r['thresholds_shipped']}.",
        "",
    ]
    dr = r.get("document_rules")
    if dr:
        bound = next((v.get("max_fpr") for v in dr["rules"].values() if v.get("max_fpr")), None)
        held = (
            (
                "Thresholds compete only where the control false-positive rate stays within "
                + ", ".join(f"{k} ≤ {b}" for k, b in bound.items())
                + " (`--max-fpr`). "
            )
            if bound
            else ""
        )
        lines += [
            "## Document rules (dev sets)",
            "",
            f"Objective: {dr['objective']}. {held}Best: **{dr['best']}**.",
            "",
            "| rule | objective argmax | objective, judge's thresholds | objective calibrated | thresholds | "
            "FPR bound held |",
            "|---|---:|---:|---:|---|---|",
        ]
        for rule, v in dr["rules"].items():
            met = "–" if not v.get("max_fpr") else "yes" if v.get("max_fpr_met") else "**no**"
            lines.append(
                f"| {rule} | {v['objective_argmax']} | {v['objective_shipped_thresholds']} | "
                f"{v['objective_calibrated']} | {v['thresholds']} | {met} |"
            )
        lines += [
            "",
            "| rule | set | macro-F1 argmax | calibrated | detection F1 argmax | calibrated | FPR calibrated |",
            "|---|---|---:|---:|---:|---:|---:|",
        ]
        for rule, v in dr["rules"].items():
            for name, s in v["sets"].items():
                det_a, det_c = s["argmax"].get("detection"), s["calibrated"].get("detection")
                lines.append(
                    f"| {rule} | {name} | {s['argmax']['macro_f1']} | {s['calibrated']['macro_f1']} | "
                    f"{det_a['f1'] if det_a else '–'} | {det_c['f1'] if det_c else '–'} | "
                    f"{det_c['false_positive_rate'] if det_c else '–'} |"
                )
        lines.append("")
    if r.get("anchors"):
        lines += [
            "## Anchors",
            "",
            "Units: a seeded sample of each anchor where `units` < `of` (`--anchor-sample`).",
            "",
            "| set | units (of) | pairs | accuracy argmax | macro-F1 argmax | accuracy (judge's rule) | "
            "macro-F1 (judge's rule) |",
            "|---|---:|---:|---:|---:|---:|---:|",
        ]
        for name, v in r["anchors"].items():
            lines.append(
                f"| {name} | {v.get('units', '–')} ({v.get('of', '–')}) | {v['argmax']['pairs']} | "
                f"{v['argmax']['accuracy']} | {v['argmax']['macro_f1']} | "
                f"{v['shipped']['accuracy']} | {v['shipped']['macro_f1']} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
