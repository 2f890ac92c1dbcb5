"""The gate a new default judge passes before it ships: it must beat the judge it replaces on ConflictBench
test detection F1 (``bench run``, the held-out split) and on the sanity checklist's accuracy.

    python benchmarks/judge_ship.py --new v5 --old v3

reads ``benchmarks/results/conflictbench_default-judge-<tag>.json`` and ``judge_sanity_<tag>.json`` of both,
prints each figure with its verdict, writes ``judge_ship_<new>.json`` and exits 0 when the new judge ships,
1 when it does not (naming the figure that held it back).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Sequence

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
RESULTS = ROOT / "benchmarks" / "results"

from conflictscore_local.formats.summary import read_summary  # noqa: E402  (a bench run summary of any release)


def figures(results: Path, tag: str) -> dict[str, float]:
    """ConflictBench test detection F1 and sanity accuracy of the judge ``tag``."""
    bench = read_summary(results / f"conflictbench_default-judge-{tag}.json")
    sanity = json.loads((results / f"judge_sanity_{tag}.json").read_text(encoding="utf-8"))
    return {"conflictbench_test_detection_f1": bench["evaluation"]["detection"]["overall"]["f1"],
            "sanity_accuracy": sanity["summary"]["overall"]["accuracy"]}


def gate(new: dict[str, float], old: dict[str, float]) -> dict[str, Any]:
    """Each figure, whether the new judge beats the old one on it, and the verdict."""
    rows = {k: {"new": new[k], "old": old[k], "beats": new[k] is not None and old[k] is not None and new[k] > old[k]}
            for k in old}
    held = [k for k, r in rows.items() if not r["beats"]]
    return {"figures": rows, "ships": not held, "held_back_by": held}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--new", required=True, help="the candidate's tag")
    p.add_argument("--old", required=True, help="the shipped judge's tag")
    p.add_argument("--results", type=Path, default=RESULTS)
    args = p.parse_args(argv)
    verdict = {"new": args.new, "old": args.old,
               **gate(figures(args.results, args.new), figures(args.results, args.old))}
    (args.results / f"judge_ship_{args.new}.json").write_text(json.dumps(verdict, indent=2) + "\n", encoding="utf-8")
    for k, r in verdict["figures"].items():
        print(f"{k}: {args.new} {r['new']} vs {args.old} {r['old']}: {'beats' if r['beats'] else 'does not beat'}")
    print(f"{args.new} ships" if verdict["ships"] else
          f"{args.new} does not ship: held back by {', '.join(verdict['held_back_by'])}")
    return 0 if verdict["ships"] else 1


if __name__ == "__main__":
    sys.exit(main())
