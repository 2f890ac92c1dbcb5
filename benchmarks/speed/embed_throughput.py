"""Embedding throughput of the ``embedding`` pruner, and its exact search against faiss.

1. Passages per second and claims per second through ``EmbeddingPruner.embed`` (the
   packaged all-MiniLM-L6-v2 unless --model), for several batch sizes, on a seeded sample of
   ConflictBench documents and claims (RAMDocs + ContraQA EN555), in one run so the
   figures share the machine's load; beside them, the same encoder over "claim passage"
   texts: the cost of one call to a judge of the same size (a MiniLM NLI cross-encoder),
   which is what a pruned pair saves.
2. ``select()`` end to end on the sample items (each claim against its own documents):
   pairs per second with and without the embedding time.
3. The candidate search alone, on real embeddings tiled to N passages shared by M claims:
   the pruner's exact numpy path (every similarity plus the top-k documents) against faiss
   ``IndexFlatIP`` and ``IndexHNSWFlat`` (build + top-k search only), as ratios. faiss is no
   dependency of the project (this comparison is why): install ``faiss-cpu`` beside it to
   run this part; without it the part is skipped and says so.

    .venv/bin/python -m benchmarks.speed.embed_throughput --out benchmarks/results/speed/embed_throughput
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local.bench import build_bench
from conflictscore_local.core.types import Claim, Pair, Passage
from conflictscore_local.prune.embedding import EmbeddingPruner, keep_documents, passage_similarity


def timed(fn: Callable[[], Any], repeats: int) -> float:
    """Best wall time of ``repeats`` calls (the least disturbed by other jobs)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def search_comparison(vectors: np.ndarray, sizes: Sequence[int], n_claims: int, k: int) -> list[dict[str, Any]] | None:
    """Exact numpy path vs faiss indexes; None when faiss is not installed (no dependency of
    the project: ``pip install faiss-cpu`` beside it to run the comparison)."""
    try:
        import faiss
    except ImportError:
        print("faiss not installed: candidate search comparison skipped (pip install faiss-cpu)", file=sys.stderr)
        return None

    rng = np.random.default_rng(0)
    rows = []
    for n in sizes:
        p = vectors[rng.integers(0, len(vectors), n)] + rng.normal(0, 0.01, (n, vectors.shape[1])).astype(np.float32)
        p /= np.linalg.norm(p, axis=1, keepdims=True)
        c = p[rng.integers(0, n, n_claims)]
        doc_of = np.arange(n)

        def exact(c: np.ndarray = c, p: np.ndarray = p, doc_of: np.ndarray = doc_of) -> None:
            keep_documents(passage_similarity(c, [p]), doc_of, threshold=0.3, k=k)

        def flat(c: np.ndarray = c, p: np.ndarray = p) -> None:
            index = faiss.IndexFlatIP(p.shape[1])
            index.add(p)
            index.search(c, k)

        def hnsw(c: np.ndarray = c, p: np.ndarray = p) -> None:
            index = faiss.IndexHNSWFlat(p.shape[1], 32, faiss.METRIC_INNER_PRODUCT)
            index.add(p)
            index.search(c, k)

        t_exact, t_flat = timed(exact, 3), timed(flat, 3)
        t_hnsw = timed(hnsw, 1)
        rows.append(
            {
                "passages": n,
                "claims": n_claims,
                "k": k,
                "exact_numpy_s": round(t_exact, 4),
                "faiss_flat_s": round(t_flat, 4),
                "faiss_hnsw_build_search_s": round(t_hnsw, 4),
                "flat_over_exact": round(t_flat / t_exact, 2),
                "hnsw_over_exact": round(t_hnsw / t_exact, 2),
            }
        )
        print(rows[-1], file=sys.stderr)
    return rows


def markdown(r: dict[str, Any]) -> str:
    lines = [
        "# Embedding throughput of the `embedding` pruner",
        "",
        *header(r["meta"], f"; torch threads {r['meta']['torch_threads']}"),
        f"Model: {r['model']['model_source']}, device {r['model']['device']}, max_seq_length "
        f"{r['model']['max_seq_length']}.  ",
        f"Sample (seed {r['seed']}): {r['sample']['passages']} passages (mean {r['sample']['passage_tokens']} word "
        f"pieces), {r['sample']['claims']} claims (mean {r['sample']['claim_tokens']} word pieces). "
        f"Best of {r['repeats']} runs per figure.",
        "",
        "The machine is shared with other engineers' jobs: absolute figures move with their load; "
        "the ratios within this run are the robust part.",
        "",
        "## Embedding",
        "",
        "| batch size | passages / s | claims / s | claim + passage / s (≈ MiniLM-size judge pairs / s) |",
        "|---|---|---|---|",
    ]
    lines += [
        f"| {e['batch_size']} | {e['passages_per_s']} | {e['claims_per_s']} | {e['claim_passage_per_s']} |"
        for e in r["embed"]
    ]
    s = r["select"]
    lines += [
        "",
        "## `select()` on the sample items (own documents)",
        "",
        f"{s['pairs']} claim × passage pairs, {s['kept']} kept: {s['total_s']} s in all "
        f"({s['pairs_per_s']} pairs/s), of which embedding {s['embed_s']} s; the rest "
        f"(similarities, top-k, guard, building the outputs) runs at {s['pairs_per_s_without_embedding']} pairs/s.",
        "",
        "## Candidate search: exact numpy path vs faiss",
        "",
    ]
    if r["search"] is None:
        lines.append(
            "Not run: faiss is not installed (it is no dependency of the project; "
            "`pip install faiss-cpu` beside it to run the comparison)."
        )
        return "\n".join(lines) + "\n"
    lines += [
        "Exact = every claim × passage similarity and the top-k documents (what `select()` needs: every pair's "
        "similarity is recorded). faiss = index build + top-k search only (no similarity for the other pairs).",
        "",
        "| passages | claims | exact numpy s | faiss IndexFlatIP s | faiss HNSW build+search s | flat / exact | "
        "HNSW / exact |",
        "|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {x['passages']} | {x['claims']} | {x['exact_numpy_s']} | {x['faiss_flat_s']} | "
        f"{x['faiss_hnsw_build_search_s']} | {x['flat_over_exact']} | {x['hnsw_over_exact']} |"
        for x in r["search"]
    ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", help="shared data folder (default: $CONFLICTSCORE_DATA or ../shared/data)")
    ap.add_argument("--model", help="sentence-transformers model directory (default: the packaged MiniLM)")
    ap.add_argument("--items", type=int, default=80, help="items sampled for the select() run")
    ap.add_argument("--texts", type=int, default=400, help="passages (and claims) sampled for throughput")
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[16, 64, 128])
    ap.add_argument("--search-sizes", type=int, nargs="+", default=[1000, 10000, 50000])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="benchmarks/results/speed/embed_throughput", help="output path without extension")
    args = ap.parse_args(argv)

    import torch

    started, load = time.perf_counter(), os.getloadavg()
    items = build_bench(args.data_dir, only=["ramdocs", "contraqa_en555"])
    rng = random.Random(args.seed)
    docs = list(dict.fromkeys(d["text"] for it in items for d in it["documents"]))
    claims = list(dict.fromkeys(c for it in items for c in it["claims"]))
    docs, claims = rng.sample(docs, args.texts), rng.sample(claims, args.texts)
    joined = [f"{c} {d}" for c, d in zip(claims, docs)]

    pruner = EmbeddingPruner(EmbeddingPruner.Config(model=args.model))
    tok = pruner.model().tokenizer
    pruner.embed(docs[:32])
    embed = []
    for bs in args.batch_sizes:
        pruner.config = dataclasses.replace(pruner.config, batch_size=bs)
        t_p = timed(lambda: pruner.embed(docs), args.repeats)
        t_c = timed(lambda: pruner.embed(claims), args.repeats)
        t_j = timed(lambda: pruner.embed(joined), args.repeats)
        embed.append(
            {
                "batch_size": bs,
                "passages_per_s": round(len(docs) / t_p, 1),
                "claims_per_s": round(len(claims) / t_c, 1),
                "claim_passage_per_s": round(len(joined) / t_j, 1),
            }
        )
        print(embed[-1], file=sys.stderr)

    pruner = EmbeddingPruner(EmbeddingPruner.Config(model=args.model))
    pruner.model()
    pairs = []
    for it in rng.sample(items, args.items):
        passages = [Passage(it["id"], d["id"], 0, d["text"]) for d in it["documents"]]
        pairs += [Pair(Claim(it["id"], i, c), p) for i, c in enumerate(it["claims"]) for p in passages]
    t0 = time.perf_counter()
    kept, _ = pruner.select(pairs)
    total = time.perf_counter() - t0
    embed_s = pruner.stats()["embed_s"]
    select = {
        "pairs": len(pairs),
        "kept": len(kept),
        "total_s": round(total, 2),
        "embed_s": round(embed_s, 2),
        "pairs_per_s": round(len(pairs) / total, 1),
        "pairs_per_s_without_embedding": round(len(pairs) / (total - embed_s), 1),
    }

    vectors = pruner.embed(docs)
    search = search_comparison(vectors, args.search_sizes, n_claims=200, k=pruner.config.k)

    def mean_tokens(texts: list[str]) -> float:
        return round(float(np.mean([len(tok(t, verbose=False)["input_ids"]) for t in texts])), 1)

    result = {
        "meta": run_meta(__file__, argv, started, load, torch_threads=torch.get_num_threads()),
        "seed": args.seed,
        "repeats": args.repeats,
        "model": pruner.resolved,
        "sample": {
            "passages": len(docs),
            "claims": len(claims),
            "passage_tokens": mean_tokens(docs),
            "claim_tokens": mean_tokens(claims),
        },
        "embed": embed,
        "select": select,
        "search": search,
    }
    print(write_recorded(Path(args.out), result, markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
