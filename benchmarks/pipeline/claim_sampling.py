"""Claim sampling against the full matrix: how far CS-C and CS-R move when only K claims per item are judged.

For each data set one full run's per-claim verdicts are taken, and sampling is simulated by
subsetting them: the claims ``conflictscore_local.core.sampling.select_claims`` keeps (the code
``--claims-per-item K --claim-selection RULE`` runs) are the only ones the item's metrics are
recomputed from (``metrics.item_metrics``). That is exactly what a sampled run would give, as a
claim's verdict depends on its own pairs only, and it costs no judge call. Per rule and K:

- the absolute error of macro CS-C and CS-R against the full matrix (random: the mean over
  ``--seeds`` seeds, and the largest);
- how often the sampled run's 95% bootstrap interval (its ``ci95``, 1000 resamples) holds the
  full value (random: share of seeds; the others: yes or no);
- the share of judge calls saved: the claim × passage pairs the judge answered for the claims
  left out, over all it answered (ConflictBench with gold labels has no judge calls: the share of
  claim × document cells left out instead).

Data sets: ConflictBench with its gold labels (all splits, or ``--split``), ConflictBench dev scored by
the default judge (``--predictions``: the ``-o`` file of ``bench run``), and the report-generation
outputs in ``benchmarks/results/experiments/report_generation/TAG/STRATEGY.scored.jsonl``; each whole, and again
with only its items of two claims or more (most items of both have one claim, which every rule keeps).

    .venv/bin/python -m benchmarks.pipeline.claim_sampling --bench benchmarks/work/conflictbench.jsonl \\
        --predictions benchmarks/work/dev-default.pred.jsonl --out benchmarks/results/pipeline/claim_sampling

writes OUT.json (every cell), OUT.md (the table, with the command, the machine and the load) and
OUT.png (error against K per rule).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from benchmarks._lib.recording import run_meta, write_recorded
from conflictscore_local import Engine
from conflictscore_local.bench.gold import load_bench_items, with_gold_labels
from conflictscore_local.compare import read_run
from conflictscore_local.core.metrics import bootstrap_ci, item_metrics, macro
from conflictscore_local.core.sampling import SELECTIONS, select_claims
from conflictscore_local.core.types import ClaimVerdict, ItemResult
from conflictscore_local.util.nlp import Salience

KEYS = ("cs_c", "cs_r")
KS = (1, 2, 3, 5)
MULTI = ": only the items with two claims or more"


def multi(results: Sequence[ItemResult]) -> list[ItemResult]:
    """The items sampling can change at all (an item of one claim keeps it under every rule)."""
    return [r for r in results if len(r.verdicts) >= 2]


def judge_calls(v: ClaimVerdict) -> int:
    """The claim × passage pairs the judge answered for one claim (judged now or earlier, cached)."""
    return sum(j.n_passages for j in v.judgments if j.source in ("judge", "cache"))


def cells(v: ClaimVerdict) -> int:
    """The claim × document cells of one claim (what a gold-labelled run counts instead of judge calls)."""
    return len(v.judgments)


def subset(results: Sequence[ItemResult], keep: Callable[[ItemResult], list[ClaimVerdict]]) -> list[ItemResult]:
    out = []
    for r in results:
        vs = tuple(keep(r))
        out.append(ItemResult(r.item_id, vs, item_metrics(vs), len(r.verdicts)))
    return out


def measure(
    name: str,
    results: Sequence[ItemResult],
    questions: dict[str, str | None],
    cost: Callable[[ClaimVerdict], int],
    cost_name: str,
    seeds: int,
    salience: Salience,
) -> dict[str, Any]:
    """Every rule and K on one data set's full verdicts."""
    full = macro([r.metrics for r in results])
    total_cost = sum(cost(v) for r in results for v in r.verdicts)
    n_claims = sum(len(r.verdicts) for r in results)
    scores: dict[str, dict[int, float]] = {}  # salience of every claim, computed once per item

    def salient(r: ItemResult) -> Callable[[Sequence[str], str | None], list[float]]:
        if r.item_id not in scores:
            vals = salience.scores([v.claim.text for v in r.verdicts], questions.get(r.item_id))
            scores[r.item_id] = {v.claim.index: s for v, s in zip(r.verdicts, vals)}
        by_text = {v.claim.text: scores[r.item_id][v.claim.index] for v in r.verdicts}
        return lambda texts, q: [by_text[t] for t in texts]

    def run(k: int, rule: str, seed: int) -> tuple[dict[str, float | None], dict[str, Any], int, int]:
        def keep(r: ItemResult) -> list[ClaimVerdict]:
            claims = [v.claim for v in r.verdicts]
            chosen = select_claims(
                claims,
                k,
                rule,
                seed=seed,
                question=questions.get(r.item_id),
                salience=salient(r) if rule == "salient" else None,
            )
            wanted = {c.index for c in chosen}
            return [v for v in r.verdicts if v.claim.index in wanted]

        sampled = subset(results, keep)
        ms = [r.metrics for r in sampled]
        kept_cost = sum(cost(v) for r in sampled for v in r.verdicts)
        return macro(ms), bootstrap_ci(ms, seed=seed), kept_cost, sum(len(r.verdicts) for r in sampled)

    rows = []
    for rule in SELECTIONS:
        for k in KS:
            draws = [run(k, rule, s) for s in (range(seeds) if rule == "random" else [0])]
            kept_cost, kept = draws[0][2], draws[0][3]
            row: dict[str, Any] = {
                "rule": rule,
                "k": k,
                "claims_scored": kept,
                "claims": n_claims,
                f"{cost_name}_saved_share": round(1 - kept_cost / total_cost, 6) if total_cost else 0.0,
                "draws": len(draws),
            }
            for key in KEYS:
                errs = [abs(m[key] - full[key]) for m, _, _, _ in draws if m.get(key) is not None]
                cover = [ci[key] is not None and ci[key][0] <= full[key] <= ci[key][1] for _, ci, _, _ in draws]
                row[key] = {
                    "mean_abs_error": round(sum(errs) / len(errs), 6) if errs else None,
                    "max_abs_error": round(max(errs), 6) if errs else None,
                    "ci95_holds_full": round(sum(cover) / len(cover), 4),
                }
            rows.append(row)
    hist: dict[int, int] = {}
    for r in results:
        hist[len(r.verdicts)] = hist.get(len(r.verdicts), 0) + 1
    return {
        "name": name,
        "items": len(results),
        "claims": n_claims,
        "claims_per_item": dict(sorted(hist.items())),
        "full": {k: full[k] for k in KEYS},
        "cost": cost_name,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default="benchmarks/work/conflictbench.jsonl", help="ConflictBench items (bench build)")
    ap.add_argument("--split", choices=("train", "dev", "test"), help="gold-label data set: only this split")
    ap.add_argument(
        "--predictions", help="ConflictBench dev scored by a judge: the per-item output (-o) of bench run --split dev"
    )
    ap.add_argument(
        "--report-generation",
        default="benchmarks/results/experiments/report_generation/smollm2-135m",
        help="folder of STRATEGY.scored.jsonl files",
    )
    ap.add_argument("--seeds", type=int, default=50, help="random selection: seeds per K (default 50)")
    ap.add_argument("--out", default="benchmarks/results/pipeline/claim_sampling")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    load = os.getloadavg()
    salience = Salience()
    sets = []

    bench = load_bench_items(args.bench, split=args.split)
    questions = {it.id: it.question for it in bench}
    with Engine() as engine:  # the gold labels scored through the engine: no model runs
        gold = list(engine.score(with_gold_labels(bench)))
    name = f"ConflictBench {args.split or 'all splits'}, gold labels"
    sets.append(measure(name, gold, questions, cells, "cells", args.seeds, salience))
    sets.append(measure(name + MULTI, multi(gold), questions, cells, "cells", args.seeds, salience))
    if args.predictions:
        pred = read_run(args.predictions, label="predictions").results
        name = f"ConflictBench, {Path(args.predictions).name} (judged)"
        sets.append(measure(name, pred, questions, judge_calls, "judge_calls", args.seeds, salience))
        sets.append(measure(name + MULTI, multi(pred), questions, judge_calls, "judge_calls", args.seeds, salience))
    folder = Path(args.report_generation)
    if folder.is_dir():
        runs = [read_run(p, label=p.stem) for p in sorted(folder.glob("*.scored.jsonl"))]
        from conflictscore_local.util.jsonl import iter_jsonl

        q = {row["id"]: row.get("question") for p in sorted(folder.glob("*.scored.jsonl")) for _, row in iter_jsonl(p)}
        merged = [ItemResult(f"{run.label}:{r.item_id}", r.verdicts, r.metrics) for run in runs for r in run.results]
        q = {f"{run.label}:{i}": q.get(i) for run in runs for i in (r.item_id for r in run.results)}
        name = f"report generation ({folder.name}, {len(runs)} strategies pooled)"
        sets.append(measure(name, merged, q, judge_calls, "judge_calls", args.seeds, salience))
        sets.append(measure(name + MULTI, multi(merged), q, judge_calls, "judge_calls", args.seeds, salience))

    meta = {
        **run_meta(__file__, argv, t0, load),
        "salience": salience.resolved,
        "seeds": args.seeds,
        "predictions": args.predictions,
    }
    text = write_recorded(Path(args.out), {"sets": sets, "meta": meta}, markdown, plot)
    print(text)
    return 0


def fmt(v: float | None, digits: int = 3) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    m = result["meta"]
    lines = [
        "# Claim sampling against the full matrix",
        "",
        f"Date {m['date']}; `{m['command']}`; {m['machine']}; load average {m['load_average']} (start, end); "
        f"{m['total_s']} s. Entities for `salient`: {m['salience'].get('entities', '?')}.",
        "",
        "Computed from one full run's per-claim verdicts by subsetting claims (the claims `--claims-per-item K "
        "--claim-selection RULE` would keep, chosen by the same code), not by rerunning the judge: a claim's "
        "verdict depends on its own pairs only, so this is what a sampled run gives. Error = |macro over items with "
        f'K claims − macro with every claim|; random: mean (and max) over {m["seeds"]} seeds. "CI holds": share of '
        "runs whose 95% bootstrap interval holds the full-matrix value. Saved: share of judge calls (claim × "
        "passage pairs judged; for gold labels, claim × document cells) the left-out claims would have cost.",
        "",
    ]
    if m.get("predictions"):
        lines += [
            f"The judged verdicts are `{m['predictions']}`, written by `conflictscore bench run {{BENCH}} --split "
            f"dev -o {m['predictions']} --summary R.json` with the default pipeline (the run of "
            "`benchmarks/results/judge/conflictbench_default-judge-dev.json`).",
            "",
        ]
    for s in result["sets"]:
        hist = ", ".join(f"{n} claim{'s' if int(n) != 1 else ''}: {c}" for n, c in s["claims_per_item"].items())
        lines += [
            f"## {s['name']}",
            "",
            f"{s['items']} items, {s['claims']} claims ({hist}); full matrix: CS-C {fmt(s['full']['cs_c'])}, "
            f"CS-R {fmt(s['full']['cs_r'])}. K ≥ the most claims an item has changes nothing.",
            "",
            "| rule | K | claims scored | saved | CS-C error (max) | CI holds | CS-R error (max) | CI holds |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in s["rows"]:
            saved = r[f"{s['cost']}_saved_share"]
            lines.append(
                f"| {r['rule']} | {r['k']} | {r['claims_scored']} / {r['claims']} | {saved:.1%} | "
                f"{fmt(r['cs_c']['mean_abs_error'])} ({fmt(r['cs_c']['max_abs_error'])}) | "
                f"{r['cs_c']['ci95_holds_full']:.0%} | {fmt(r['cs_r']['mean_abs_error'])} "
                f"({fmt(r['cs_r']['max_abs_error'])}) | {r['cs_r']['ci95_holds_full']:.0%} |"
            )
        lines.append("")
    return "\n".join(lines)


def plot(result: dict[str, Any], path: Path) -> None:
    """Error against K per rule, one row per data set (matplotlib's object API, as the report's plots)."""
    from matplotlib.figure import Figure

    sets = result["sets"]
    fig = Figure(figsize=(9.0, 2.6 * len(sets)), layout="constrained")
    axes = fig.subplots(len(sets), 2, squeeze=False)
    for row, s in zip(axes, sets):
        for ax, key in zip(row, KEYS):
            for rule in SELECTIONS:
                pts = [(r["k"], r[key]["mean_abs_error"]) for r in s["rows"] if r["rule"] == rule]
                ax.plot(
                    [k for k, _ in pts], [e if e is not None else float("nan") for _, e in pts], marker="o", label=rule
                )
            ax.set_xticks(list(KS))
            ax.set_xlabel("K (claims per item)")
            ax.set_ylabel(f"|Δ {key.upper().replace('_', '-')}|")
            ax.set_title(s["name"].replace(MULTI, ", ≥ 2 claims"), fontsize=7.5)
            ax.spines[["top", "right"]].set_visible(False)
    axes[0][1].legend(frameon=False, fontsize=8)
    fig.savefig(path, dpi=110, metadata={"Software": None})


if __name__ == "__main__":
    sys.exit(main())
