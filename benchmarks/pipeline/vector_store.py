"""What storing the pruner's embeddings in the judgment cache saves (``prune/embedding.py``).

A sweep scores several responses against the same documents (report generation under three
prompt strategies, a model comparison, a judge swap). The embedding pruner embeds every
distinct claim and passage it meets; with the vectors stored by content, a second response set
against documents already seen embeds only its new claims. On RAMDocs questions against one
pooled corpus (``throughput.pooled_job``), each question's claims split into two responses,
A and B, one process, the embedder loaded first (its load is reported apart):

1. ``A``: select A's candidates with an empty store (everything embedded, stored);
2. ``B stored``: select B's candidates with that store (only B's claims embedded);
3. ``B fresh``: select B's candidates with a new, empty store (the run without this feature);

and the selections of 2 and 3 compared pair by pair (the stored rows are the rows embedding
gives again, so they must agree). Repeated ``--repeats`` times, B stored and B fresh
alternating, medians reported.

    .venv/bin/python -m benchmarks.pipeline.vector_store --out benchmarks/results/pipeline/vector_store \\
        [--items 8 --docs 64]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Sequence

from benchmarks._lib.recording import header, run_meta, write_recorded
from benchmarks._lib.workloads import base_parser, candidate_groups, pooled_job, ramdocs_questions
from conflictscore_local import Engine
from conflictscore_local.core.types import Item, Pair
from conflictscore_local.formats.cache import JudgmentCache
from conflictscore_local.prune.embedding import EmbeddingPruner


def halves(items: Sequence[Item]) -> tuple[list[Item], list[Item]]:
    """Each item twice: with the first half of its claims (A) and with the rest (B)."""
    from dataclasses import replace

    a, b = [], []
    for it in items:
        claims = list(it.claims or ())
        cut = max(1, len(claims) // 2)
        a.append(replace(it, claims=tuple(claims[:cut])))
        b.append(replace(it, claims=tuple(claims[cut:]) or tuple(claims[:1])))
    return a, b


def select(pruner: EmbeddingPruner, store: JudgmentCache, pairs: list[Pair]) -> tuple[float, dict[str, Any], Any]:
    pruner.use_vector_store(lambda: store)
    pruner.counters.clear()
    t0 = time.perf_counter()
    kept, pruned = pruner.select(pairs)
    took = time.perf_counter() - t0
    chosen = [(p.claim.text, p.passage.text, round(p.similarity or 0.0, 5)) for p in kept] + [
        (j.pair.claim.text, j.pair.passage.text, "pruned") for j in pruned
    ]
    return took, pruner.stats(), sorted(chosen, key=str)


def measure(args: Any) -> dict[str, Any]:
    questions = ramdocs_questions(Path(args.data_dir) if args.data_dir else None)
    engine = Engine(pruner="none")
    a_items, b_items = halves(pooled_job(questions, args.items, args.docs))
    a_pairs = [p for g in candidate_groups(engine, a_items) for p in g]
    b_pairs = [p for g in candidate_groups(engine, b_items) for p in g]
    pruner = EmbeddingPruner()
    t0 = time.perf_counter()
    pruner.model()
    load_s = time.perf_counter() - t0
    pruner.embed(["warm-up text"])
    spec = {"benchmark": "vector_store"}
    runs: dict[str, list[float]] = {"A": [], "B stored": [], "B fresh": []}
    stats: dict[str, Any] = {}
    agree = []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            shared = JudgmentCache(Path(tmp) / f"shared{r}.sqlite", spec)
            took, stats["A"], _ = select(pruner, shared, a_pairs)
            runs["A"].append(took)
            order = ("B stored", "B fresh") if r % 2 == 0 else ("B fresh", "B stored")
            chosen = {}
            for name in order:
                store = shared if name == "B stored" else JudgmentCache(Path(tmp) / f"fresh{r}.sqlite", spec)
                took, stats[name], chosen[name] = select(pruner, store, b_pairs)
                runs[name].append(took)
            agree.append(chosen["B stored"] == chosen["B fresh"])
    med = {k: round(statistics.median(v), 3) for k, v in runs.items()}
    return {
        "items": args.items,
        "corpus_docs": args.docs,
        "repeats": args.repeats,
        "pairs": {"A": len(a_pairs), "B": len(b_pairs)},
        "claims": {"A": len({p.claim for p in a_pairs}), "B": len({p.claim for p in b_pairs})},
        "passages": len({p.passage.text for p in b_pairs}),
        "load_s": round(load_s, 3),
        "select_s": {k: [round(x, 3) for x in v] for k, v in runs.items()},
        "median_s": med,
        "speedup_b": round(med["B fresh"] / med["B stored"], 2) if med["B stored"] else None,
        "texts": {
            k: {"embedded": s.get("texts_embedded", 0), "stored": s.get("texts_stored", 0)} for k, s in stats.items()
        },
        "selections_identical": all(agree),
    }


def markdown(data: dict[str, Any]) -> str:
    m = data["measured"]
    lines = [
        "# Stored embeddings: a second response set against documents already seen",
        "",
        *header(data["meta"], f"; torch threads {data['meta']['torch_threads']}"),
        f"{m['items']} RAMDocs questions against one pooled corpus of {m['corpus_docs']} documents "
        f"({m['passages']} passages); each question's claims split into response A ({m['claims']['A']} claims, "
        f"{m['pairs']['A']} pairs) and response B ({m['claims']['B']} claims, {m['pairs']['B']} pairs). "
        f"Embedder loaded first ({m['load_s']} s, not counted). {m['repeats']} repeats, B stored and B fresh "
        "alternating; the pruner's `select()` seconds:",
        "",
        "| run | median s | each run s | texts embedded | texts read from the store |",
        "|---|---|---|---|---|",
    ]
    for name in ("A", "B stored", "B fresh"):
        t = m["texts"][name]
        lines.append(
            f"| {name} | {m['median_s'][name]} | {', '.join(map(str, m['select_s'][name]))} | "
            f"{t['embedded']} | {t['stored']} |"
        )
    lines += [
        "",
        f"B with A's vectors stored: **{m['speedup_b']}×** faster than B with an empty store; "
        f"selections identical (kept pairs, similarities to 5 decimals, pruned pairs): "
        f"{'yes' if m['selections_identical'] else 'NO'}.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = base_parser(__doc__, "vector_store")
    ap.add_argument("--items", type=int, default=8, help="RAMDocs questions (default 8)")
    ap.add_argument("--docs", type=int, default=64, help="documents in the pooled corpus (default 64)")
    ap.add_argument("--repeats", type=int, default=3, help="repeats (default 3)")
    args = ap.parse_args(argv)
    import torch

    t0, load = time.perf_counter(), os.getloadavg()
    measured = measure(args)
    meta = {**run_meta(__file__, argv, t0, load), "torch_threads": torch.get_num_threads()}
    print(write_recorded(Path(args.out), {"measured": measured, "meta": meta}, markdown))


if __name__ == "__main__":
    main()
