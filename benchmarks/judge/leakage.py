"""Documents and claims shared between training and evaluation, before and after the leak-free split.

    .venv/bin/python -m benchmarks.judge.leakage [--data-json benchmarks/work/judge-data/data.json]

ConflictBench: the claim-only split (``build_bench(leak_free=False)``, what main had) against
the leak-free one (the default): per source, the dev/test claim × document pairs whose
document is also a train document (the same normalised text, and by the stricter rule the
build enforces: the same text or a shared sentence of >= 6 words), and the train pairs
removed. Judge training data: the leak counts ``train-judge prepare`` recorded in its
``data.json`` (before filtering, removed, after), plus the old recipe's count (HealthVer dev
pairs trained on whose passage is a ConflictBench dev/test document). Writes
``benchmarks/results/judge/leakage.json`` and ``leakage.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local.bench import build_bench, default_data_dir, normalize_text, split_for
from conflictscore_local.bench.leakage import TextIndex, bench_leaks, separate_splits
from conflictscore_local.train.sources import load_healthver_csv

REPO = Path(__file__).resolve().parents[2]


def eval_pairs_with_train_docs(items: list[dict]) -> dict[str, dict[str, int]]:
    """Per source: dev/test claim × document pairs, and those whose document a train item
    also holds (exact normalised text; sentence rule)."""
    exact = {normalize_text(d["text"]) for it in items if it["split"] == "train" for d in it["documents"]}
    index = TextIndex()
    for it in items:
        if it["split"] == "train":
            for d in it["documents"]:
                index.add_document(d["text"])
    out: dict[str, Counter[str]] = {}
    for it in items:
        if it["split"] == "train":
            continue
        c = out.setdefault(f"{it['source']}/{it['split']}", Counter())
        for _ in it["claims"]:
            for d in it["documents"]:
                c["pairs"] += 1
                c["doc_in_train_exact"] += normalize_text(d["text"]) in exact
                c["doc_in_train_sentence"] += index.document_leaks(d["text"])
    return {k: dict(v) for k, v in sorted(out.items())}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--data-json",
        default="benchmarks/work/judge-data/data.json",
        help="data.json of `conflictscore train-judge prepare` (default: %(default)s)",
    )
    ap.add_argument("--out", default="benchmarks/results/judge/leakage", help="output stem (default: %(default)s)")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    data_dir = default_data_dir()
    claim_only = build_bench(data_dir, leak_free=False)
    leak_free = build_bench(data_dir)
    _, removed = separate_splits(claim_only)
    cb_index = TextIndex()
    for it in claim_only:
        if it["split"] != "train":
            for d in it["documents"]:
                cb_index.add_document(d["text"])
    cb_exact = {normalize_text(d["text"]) for it in claim_only if it["split"] != "train" for d in it["documents"]}
    # the old recipe trained on the HealthVer dev pairs whose claim fell in the bench's train split
    hv = [p for p in load_healthver_csv(data_dir / "healthver/data/healthver_dev.csv") if split_for(p.claim) == "train"]
    record = {
        "meta": run_meta(__file__, argv, started, load),
        "conflictbench": {
            "claim_only_split": {
                "eval_pairs": eval_pairs_with_train_docs(claim_only),
                "train_leaks": bench_leaks(claim_only).as_dict(),
            },
            "leak_free_split": {
                "eval_pairs": eval_pairs_with_train_docs(leak_free),
                "train_leaks": bench_leaks(leak_free).as_dict(),
            },
            "train_removed": removed,
        },
        "old_recipe_healthver_dev_pairs_with_a_bench_dev_test_document": {
            "exact": sum(normalize_text(p.passage) in cb_exact for p in hv),
            "sentence": sum(cb_index.document_leaks(p.passage) for p in hv),
            "pairs": len(hv),
        },
    }
    data_json = Path(args.data_json)
    if data_json.is_file():
        record["train_judge_prepare"] = json.loads(data_json.read_text())["leakage"]
    print(write_recorded(REPO / args.out, record, report))
    return 0


def report(r: dict) -> str:
    cb = r["conflictbench"]
    lines = [
        "# Leakage between training and evaluation",
        "",
        *header(r["meta"]),
        "A document leaks when a training document has the same normalised text (exact) or shares a sentence of",
        "at least 6 words with it (sentence: the rule the builds enforce).",
        "",
        "## ConflictBench: dev/test claim × document pairs whose document is also a train document",
        "",
        "| source/split | pairs | claim-only split: exact | claim-only: sentence | leak-free split: exact "
        "| leak-free: sentence |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    before, after = cb["claim_only_split"]["eval_pairs"], cb["leak_free_split"]["eval_pairs"]
    tot = Counter()
    for k, v in before.items():
        a = after[k]
        lines.append(
            f"| {k} | {v['pairs']} | {v['doc_in_train_exact']} | {v['doc_in_train_sentence']} | "
            f"{a['doc_in_train_exact']} | {a['doc_in_train_sentence']} |"
        )
        tot.update(
            {
                "pairs": v["pairs"],
                "b_e": v["doc_in_train_exact"],
                "b_s": v["doc_in_train_sentence"],
                "a_e": a["doc_in_train_exact"],
                "a_s": a["doc_in_train_sentence"],
            }
        )
    lines.append(f"| **all** | {tot['pairs']} | {tot['b_e']} | {tot['b_s']} | {tot['a_e']} | {tot['a_s']} |")
    rm = cb["train_removed"]
    lines += [
        "",
        f"The leak-free build removes from train items {rm['documents']} documents, {rm['claims']} claims "
        f"({rm['pairs']} claim × document pairs; {rm['items']} items left empty); dev and test are unchanged. "
        f"Train leaks by the build's check: claim-only split {cb['claim_only_split']['train_leaks']}, "
        f"leak-free {cb['leak_free_split']['train_leaks']}.",
        "",
    ]
    old = r["old_recipe_healthver_dev_pairs_with_a_bench_dev_test_document"]
    lines += [
        "## Judge training data",
        "",
        f"Old recipe (main): {old['pairs']} HealthVer dev pairs (claims in the bench's train split) were trained on; "
        f"{old['exact']} of them have a passage "
        f"that is a ConflictBench dev/test document ({old['sentence']} by the sentence rule).",
        "",
    ]
    if "train_judge_prepare" in r:
        t = r["train_judge_prepare"]
        lines += [
            "`conflictscore train-judge prepare` (new recipe), training documents / claims that are "
            "evaluation texts (ConflictBench dev+test, SciFact / Check-COVID / Citation-Integrity / HealthVer "
            "dev), per source:",
            "",
            "| source | before filtering: documents | claims | removed: documents | claims |",
            "|---|---:|---:|---:|---:|",
        ]
        for src, b in t["before_filtering"].items():
            rem = t["removed"].get(src, {})
            lines.append(
                f"| {src} | {b['documents']} | {b['claims']} | {rem.get('documents', 0)} | {rem.get('claims', 0)} |"
            )
        lines += ["", f"After filtering (the check that fails the build): {t['after']}.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
