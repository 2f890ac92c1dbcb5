"""The decision rule a judge ships with: plain arg-max, unless calibrated thresholds earn their place.

Judge v5's rule (issue 46): SUPPORT / CONTRADICT thresholds (``conflictscore.json``'s ``thresholds``: a
label is a candidate when its probability reaches its threshold, the more probable candidate wins, none
→ IRRELEVANT) replace arg-max only when both hold:

1. they raise the mean pair macro-F1 over the dev sets (``judge_eval.py``'s record: the document rule in
   force, each set under arg-max and under the thresholds calibrated on the dev sets);
2. they keep every sanity pair right that arg-max gets right (``judge_sanity.py`` run twice: with the
   thresholds, and with ``--judge-arg calibration=false``): no pair of the checklist becomes an error.

    python -m benchmarks.judge.judge_decision --eval benchmarks/results/judge/judge_eval_v5.json \\
        --sanity benchmarks/results/judge/judge_sanity_v5-thresholds.json \\
        --sanity-argmax benchmarks/results/judge/judge_sanity_v5-argmax.json \\
        --model benchmarks/work/judge-v5 --tag v5 --apply

writes ``benchmarks/results/judge/judge_decision_<tag>.{json,md}``; ``--apply`` writes the rule into the model's
``conflictscore.json`` (arg-max: its ``thresholds`` removed) with the reason, under ``decision_rule``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local.jobs import write_json_atomic

ROOT = Path(__file__).resolve().parents[2]

RESULTS = ROOT / "benchmarks" / "results" / "judge"


def dev_means(eval_record: dict[str, Any]) -> dict[str, Any]:
    """Mean pair macro-F1 over the dev sets under arg-max and under the calibrated thresholds, for the
    document rule in force, with each set's figures."""
    rules = eval_record["document_rules"]
    rule = eval_record.get("document_rule_in_force") or rules["best"]
    sets = rules["rules"][rule]["sets"]
    if not sets:
        raise SystemExit("judge_decision: the judge_eval record has no dev set")
    per = {
        name: {"argmax": s["argmax"]["macro_f1"], "thresholds": s["calibrated"]["macro_f1"]} for name, s in sets.items()
    }
    mean = {k: round(sum(v[k] for v in per.values()) / len(per), 4) for k in ("argmax", "thresholds")}
    return {"document_rule": rule, "thresholds": rules["rules"][rule]["thresholds"], "sets": per, "mean": mean}


def sanity_errors(record: dict[str, Any]) -> dict[str, str]:
    """Pair id → the wrong label, from a ``judge_sanity.py`` record."""
    return {e["id"]: e["predicted"] for e in record["summary"]["errors"]}


def decide(dev: dict[str, Any], with_thresholds: dict[str, Any], argmax: dict[str, Any]) -> dict[str, Any]:
    """The rule and why: thresholds only when they raise the mean dev macro-F1 and break no sanity pair."""
    wrong_t, wrong_a = sanity_errors(with_thresholds), sanity_errors(argmax)
    broken = sorted(set(wrong_t) - set(wrong_a))
    fixed = sorted(set(wrong_a) - set(wrong_t))
    raises = dev["thresholds"] is not None and dev["mean"]["thresholds"] > dev["mean"]["argmax"]
    use = raises and not broken
    why = []
    why.append(
        f"mean dev macro-F1 {dev['mean']['thresholds']} with the thresholds against {dev['mean']['argmax']} "
        f"with arg-max ({'raised' if raises else 'not raised'})"
    )
    why.append(
        f"sanity pairs arg-max gets right and the thresholds get wrong: {len(broken)}"
        + (f" ({', '.join(broken[:8])}{' ...' if len(broken) > 8 else ''})" if broken else "")
    )
    return {
        "rule": "thresholds" if use else "argmax",
        "thresholds": dev["thresholds"] if use else None,
        "why": "; ".join(why),
        "sanity_broken": broken,
        "sanity_fixed": fixed,
        "sanity_accuracy": {
            "thresholds": with_thresholds["summary"]["overall"]["accuracy"],
            "argmax": argmax["summary"]["overall"]["accuracy"],
        },
    }


def apply(model: Path, result: dict[str, Any]) -> dict[str, Any]:
    """Write the rule into ``model``'s ``conflictscore.json``; returns the new content."""
    path = model / "conflictscore.json"
    cfg = json.loads(path.read_text(encoding="utf-8"))
    d = result["decision"]
    if d["rule"] == "argmax":
        cfg.pop("thresholds", None)
    else:
        cfg["thresholds"] = d["thresholds"]
    cfg["decision_rule"] = {"rule": d["rule"], "why": d["why"], "chosen_by": "benchmarks/judge/judge_decision.py"}
    write_json_atomic(path, cfg)
    return cfg


def markdown(r: dict[str, Any]) -> str:
    d, dev = r["decision"], r["dev"]
    lines = [
        f"# The decision rule of `{r['tag']}`",
        "",
        *header(r["meta"]),
        "**Rule: "
        + (f"calibrated thresholds {json.dumps(d['thresholds'])}" if d["rule"] == "thresholds" else "plain arg-max")
        + f".** {d['why']}.",
        "",
        f"Document rule in force: `{dev['document_rule']}`; thresholds calibrated on the dev sets: "
        f"`{json.dumps(dev['thresholds'])}`.",
        "",
        "| dev set | macro-F1, arg-max | macro-F1, thresholds |",
        "|---|---:|---:|",
    ]
    for name, v in dev["sets"].items():
        lines.append(f"| {name} | {v['argmax']:.3f} | {v['thresholds']:.3f} |")
    lines.append(f"| **mean** | **{dev['mean']['argmax']:.3f}** | **{dev['mean']['thresholds']:.3f}** |")
    lines += [
        "",
        f"Sanity checklist accuracy: arg-max {d['sanity_accuracy']['argmax']}, thresholds "
        f"{d['sanity_accuracy']['thresholds']}; pairs the thresholds break: {len(d['sanity_broken'])}, "
        f"pairs they fix: {len(d['sanity_fixed'])}.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--eval", required=True, type=Path, help="judge_eval.py's record of the judge (JSON)")
    p.add_argument("--sanity", required=True, type=Path, help="judge_sanity.py's record with the thresholds")
    p.add_argument("--sanity-argmax", required=True, type=Path, help="judge_sanity.py's record with arg-max")
    p.add_argument("--model", type=Path, help="the checkpoint whose conflictscore.json --apply writes")
    p.add_argument("--tag", required=True, help="names the results: judge_decision_<tag>.{json,md}")
    p.add_argument("--apply", action="store_true", help="write the rule into --model's conflictscore.json")
    p.add_argument("--out-dir", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    if args.apply and args.model is None:
        p.error("--apply needs --model")
    started, load = time.perf_counter(), os.getloadavg()
    records = [json.loads(f.read_text(encoding="utf-8")) for f in (args.eval, args.sanity, args.sanity_argmax)]
    dev = dev_means(records[0])
    result = {
        "tag": args.tag,
        "dev": dev,
        "decision": decide(dev, records[1], records[2]),
        "inputs": [str(f) for f in (args.eval, args.sanity, args.sanity_argmax)],
    }
    if args.apply:
        result["applied_to"] = str(args.model)
        result["conflictscore_json"] = apply(args.model, result)
    result["meta"] = run_meta(__file__, argv, started, load)
    print(write_recorded(args.out_dir / f"judge_decision_{args.tag}", result, markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
