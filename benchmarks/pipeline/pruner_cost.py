"""The inputs of the ``auto`` pruner's rule, measured on this machine (``prune/auto.py``).

On RAMDocs questions (claims given, documents split by the engine's chunker for the default
judge), in one process:

1. ``load_s``: loading the embedding pruner's model (all-MiniLM-L6-v2);
2. ``embed_s_per_text``: the pruner's embedding seconds per distinct text (claims and passage
   windows), from ``select()`` on each claim against its own documents;
3. ``judge_s_per_pair``: the default ``nli`` judge's seconds per pair on the same pairs (model
   loaded first, no cache);
4. the share of pairs ``select()`` prunes against the item's own documents and with 5 / 20
   other items' documents pooled in, beside the share the rule expects for the same
   documents per claim;
5. the rule's decision for each of those workloads with the measured costs, beside the
   judge time pruning actually saved and the embedding it cost.

    .venv/bin/python -m benchmarks.pipeline.pruner_cost --out benchmarks/results/pipeline/pruner_cost [--questions 24]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from benchmarks._lib.recording import header, run_meta, uptime, write_recorded
from benchmarks._lib.workloads import base_parser, candidate_groups, grown_job, rag_job, ramdocs_questions
from conflictscore_local import Engine
from conflictscore_local.core.types import Item
from conflictscore_local.prune.auto import AutoConfig, decide_prune, expected_pruned_share
from conflictscore_local.prune.embedding import EmbeddingPruner


def measure(args: argparse.Namespace) -> dict[str, Any]:
    questions = ramdocs_questions(Path(args.data_dir) if args.data_dir else None)
    engine = Engine(pruner="none")
    judge = engine.backend("judge")
    cfg = AutoConfig()
    out: dict[str, Any] = {}

    pruner = EmbeddingPruner()
    t0 = time.perf_counter()
    pruner.model()
    out["load_s"] = round(time.perf_counter() - t0, 3)
    pruner.embed(["warm-up text"])
    own = rag_job(questions, args.questions)
    groups = candidate_groups(engine, own)
    pairs = [p for g in groups for p in g]
    pruner.counters.clear()
    pruner.select(pairs)
    st = pruner.stats()
    out["embed_s_per_text"] = round(st["embed_s"] / st["texts_embedded"], 5)
    out["embed_texts"] = st["texts_embedded"]

    judge.judge(pairs[:8])  # loads the model
    sample = pairs[: args.judge_pairs]
    t0 = time.perf_counter()
    judge.judge(sample)
    out["judge_s_per_pair"] = round((time.perf_counter() - t0) / len(sample), 5)
    out["judge_pairs"] = len(sample)
    out["judge_flops_per_token"] = judge.flops_per_token()

    workloads: dict[str, list[Item]] = {"own": own}
    for extra in (int(x) for x in args.pools.split(",")):
        workloads[f"pool{extra}"] = grown_job(questions, args.questions, extra + 1, stride=extra)

    rows = {}
    for name, items in workloads.items():
        groups = candidate_groups(engine, items)
        pairs = [p for g in groups for p in g]
        pruner.counters.clear()
        kept, pruned = pruner.select(pairs)
        st = pruner.stats()
        docs = sum(len({p.passage.doc_id for p in g}) for g in groups)
        texts = len({p.claim.text for p in pairs}) + len({p.passage.text for p in pairs})
        decision = decide_prune(
            claims=len(groups),
            pairs=len(pairs),
            docs=docs,
            texts=texts,
            judge_s_per_pair=out["judge_s_per_pair"],
            embed_s_per_text=out["embed_s_per_text"],
            load_s=out["load_s"],
            kept_docs_base=cfg.kept_docs_base,
            kept_docs_share=cfg.kept_docs_share,
            judge_cost_from="measured",
        )
        rows[name] = {
            "items": len(items),
            "claims": len(groups),
            "pairs": len(pairs),
            "docs_per_claim": round(docs / len(groups), 2),
            "pruned_share": round(len(pruned) / len(pairs), 4),
            "expected_pruned_share": round(
                expected_pruned_share(docs / len(groups), cfg.kept_docs_base, cfg.kept_docs_share), 4
            ),
            "embed_s": round(st["embed_s"], 3),
            "judge_s_saved": round(len(pruned) * out["judge_s_per_pair"], 3),
            "pays": len(pruned) * out["judge_s_per_pair"] > st["embed_s"] + out["load_s"],
            "decision": decision.to_json(),
        }
    out["workloads"] = rows
    out["rule"] = {"kept_docs_base": cfg.kept_docs_base, "kept_docs_share": cfg.kept_docs_share}
    return out


def markdown(data: dict[str, Any]) -> str:
    m = data["measured"]
    lines = [
        "# The `auto` pruner's rule: its inputs measured",
        "",
        *header(data["meta"], f"; torch threads {data['meta']['torch_threads']}"),
        f"uptime before: `{data['meta']['uptime_before']}`  ",
        f"uptime after: `{data['meta']['uptime_after']}`",
        "",
        "| input (the `auto` pruner's argument) | measured |",
        "|---|---|",
        f"| embedder load, s (`load_s`) | {m['load_s']} |",
        f"| embedding, s per distinct text (`embed_s_per_text`; {m['embed_texts']} texts) | {m['embed_s_per_text']} |",
        f"| default judge, s per pair (`judge_s_per_pair`; {m['judge_pairs']} pairs) | {m['judge_s_per_pair']} |",
        f"| ratios | a text's embedding = {m['embed_s_per_text'] / m['judge_s_per_pair']:.2f} judge pairs; "
        f"the load = {m['load_s'] / m['judge_s_per_pair']:.0f} judge pairs |",
        "",
        "| workload | items | claims | pairs | docs per claim | pruned share | expected by the rule | embedding s | "
        "judge s saved | pruning paid | rule decides |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, r in m["workloads"].items():
        d = r["decision"]
        lines.append(
            f"| {name} | {r['items']} | {r['claims']} | {r['pairs']} | {r['docs_per_claim']} | "
            f"{r['pruned_share']} | {r['expected_pruned_share']} | {r['embed_s']} | {r['judge_s_saved']} | "
            f"{'yes' if r['pays'] else 'no'} | {'prune' if d['prune'] else 'no pruning'} "
            f"(saving {d['saving_s']:.2f} s vs cost {d['cost_s']:.2f} s) |"
        )
    lines += [
        "",
        "`own`: each claim against its own documents (RAG-style); `poolN`: plus the documents of N other "
        "questions. 'pruning paid': the judge time the pruned pairs would have cost exceeds the embedding "
        "plus the embedder's load. The rule decides from the counts and the costs before embedding anything.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = base_parser(__doc__, "pruner_cost")
    ap.add_argument("--questions", type=int, default=24, help="RAMDocs questions (default 24)")
    ap.add_argument("--judge-pairs", type=int, default=256, help="pairs the judge cost is measured on")
    ap.add_argument("--pools", default="5,10", help="other questions pooled in, comma-separated (default 5,10)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--render", action="store_true", help="only write OUT.md again from OUT.json")
    args = ap.parse_args(argv)
    started, load = time.perf_counter(), os.getloadavg()
    out = Path(args.out)
    if args.render:
        out.with_suffix(".md").write_text(markdown(json.loads(out.with_suffix(".json").read_text(encoding="utf-8"))))
        return
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)

    before = uptime()
    measured = measure(args)
    data = {
        "meta": run_meta(
            __file__,
            argv,
            started,
            load,
            torch_threads=torch.get_num_threads(),
            uptime_before=before,
            uptime_after=uptime(),
        ),
        "measured": measured,
    }
    print(write_recorded(out, data, markdown))


if __name__ == "__main__":
    main()
