"""Recall and reduction of the ``embedding`` pruner over a grid of thresholds, k and the guard.

Data: the ConflictBench items of RAMDocs and ContraQA (EN555), built from ``../shared/data``
by ``conflictscore_local.bench.build_bench``. Gold: a claim × document pair is relevant when
its gold label is SUPPORT or CONTRADICT. Documents are chunked by the engine's own chunker
(``Engine.chunker()``, i.e. the judge's token budget), and every decision is the pruner's
rule at the document level (best passage cosine ≥ threshold, or among the claim's k best
documents, or a guard key shared), computed with the pruner's own functions.

Settings:
- ``own``: each claim against its own item's documents (what ``conflictscore score`` does);
- ``pool5``, ``pool20``: each claim against its own documents plus those of 5 / 20 other
  items drawn at random (seeded; never an item sharing a document text with it, such as
  the other RAMDocs variant of the same question); the other items' documents are
  irrelevant by construction: report generation over a shared corpus.

Reported per grid point and setting: recall of relevant pairs (and of CONTRADICT pairs
alone), the fraction of claim × document pairs pruned and the fraction of claim × passage
pairs pruned (the judge calls saved). Defaults are chosen on the train and dev splits
(recall ≥ --target in every setting, guard on, most pairs pruned in the pooled settings),
then reported on the test split too. Finally the real ``EmbeddingPruner.select`` is run at
the chosen point and must keep exactly the pairs the sweep says it keeps.

    .venv/bin/python -m benchmarks.pipeline.prune_sweep --out benchmarks/results/pipeline/prune_sweep
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from benchmarks._lib.recording import header, run_meta, write_recorded
from conflictscore_local import Engine, RunConfig
from conflictscore_local.bench import build_bench
from conflictscore_local.core.types import CONTRADICT, SUPPORT, Claim, Item, Pair, Passage
from conflictscore_local.formats.inputs import parse_item
from conflictscore_local.pipeline.config import parse_assignment
from conflictscore_local.prune.embedding import EmbeddingPruner, keep_documents, passage_similarity
from conflictscore_local.prune.guard import shared_keys

SWEEP_SOURCES = ("ramdocs", "contraqa_en555")
THRESHOLDS = (0.0, 0.05, 0.1, 0.12, 0.14, 0.16, 0.18, 0.2, 0.25, 0.3, 0.4)
NEAR = 0.005  # pooled reductions this close to the best count as equal; then the larger k wins
KS = (0, 1, 2, 3, 5)


class MemoPruner(EmbeddingPruner):
    """The real pruner, remembering embeddings by text so the grid and the check embed once."""

    def __init__(self, config: EmbeddingPruner.Config):
        super().__init__(config)
        self.memo: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            self.memo.update(zip(todo, super().embed(todo)))
        return np.stack([self.memo[t] for t in texts]) if texts else super().embed([])


@dataclasses.dataclass
class Doc:
    """One document of one item, as the engine's chunker splits it; ``key`` = (item id, doc id)."""

    key: tuple[str, str]
    passages: list[Passage]


@dataclasses.dataclass
class Candidates:
    """Every (claim, candidate document) row of one setting, as flat arrays."""

    claim: np.ndarray  # global claim index
    doc: np.ndarray  # global document index
    cos: np.ndarray  # best passage cosine
    rank: np.ndarray  # 0-based rank of the document among the claim's candidates
    guard: np.ndarray  # some passage shares a number, date or name with the claim
    relevant: np.ndarray  # gold SUPPORT or CONTRADICT (own documents only)
    contradict: np.ndarray  # gold CONTRADICT
    passages: np.ndarray  # passages of the document (judge calls if kept)
    source: np.ndarray  # source name of the claim's item
    split: np.ndarray  # split of the claim's item


def load_items(data_dir: str | None) -> list[Item]:
    return [parse_item(obj) for obj in build_bench(data_dir, only=list(SWEEP_SOURCES))]


def engine_chunker(judge: str, judge_args: list[str]) -> Any:
    args = dict(parse_assignment(a, flag="--judge-arg") for a in judge_args)
    engine = Engine(RunConfig(), judge={"name": judge, **args})
    return engine.chunker(), engine.backend("judge").describe()


def partners(items: Sequence[Item], n: int, seed: int) -> list[list[int]]:
    """For each item, ``n`` other items sharing no document text with it (seeded)."""
    rng = random.Random(seed)
    texts = [{d.text for d in it.documents} for it in items]
    out = []
    for i in range(len(items)):
        chosen: list[int] = []
        order = rng.sample(range(len(items)), len(items))
        for j in order:
            if j != i and texts[i].isdisjoint(texts[j]):
                chosen.append(j)
                if len(chosen) == n:
                    break
        out.append(chosen)
    return out


def candidates(
    items: Sequence[Item],
    claims: list[Claim],
    claim_item: np.ndarray,
    docs: list[Doc],
    item_docs: list[list[int]],
    best: np.ndarray,
    pool: list[list[int]] | None,
) -> Candidates:
    """The rows of one setting: each claim against its own documents and its partners'."""
    cols: dict[str, list[Any]] = {k: [] for k in Candidates.__dataclass_fields__}
    for c, claim in enumerate(claims):
        i = int(claim_item[c])
        item = items[i]
        gold = item.meta["gold_labels"][claim.index]
        own = item_docs[i]
        other = [d for j in (pool[i] if pool else []) for d in item_docs[j]]
        cand = own + other
        cos = best[c, cand]
        order = np.argsort(-cos, kind="stable")
        rank = np.empty(len(cand), dtype=np.intp)
        rank[order] = np.arange(len(cand))
        for pos, d in enumerate(cand):
            label = gold[pos] if pos < len(own) else None
            cols["claim"].append(c)
            cols["doc"].append(d)
            cols["cos"].append(cos[pos])
            cols["rank"].append(rank[pos])
            cols["guard"].append(any(shared_keys(claim.text, p.text) for p in docs[d].passages))
            cols["relevant"].append(label in (SUPPORT, CONTRADICT))
            cols["contradict"].append(label == CONTRADICT)
            cols["passages"].append(len(docs[d].passages))
            cols["source"].append(item.meta["source"])
            cols["split"].append(item.meta["split"])
    return Candidates(**{k: np.asarray(v) for k, v in cols.items()})


def keep_mask(c: Candidates, threshold: float, k: int, guard: bool) -> np.ndarray:
    """The pruner's rule per (claim, document) row (see ``keep_documents`` and the guard)."""
    keep = (c.cos >= threshold) | (c.rank < k)
    return keep | c.guard if guard else keep


def _share(hit: np.ndarray, rows: np.ndarray) -> float | None:
    return round(float(hit[rows].mean()), 4) if rows.any() else None


def measure(c: Candidates, threshold: float, k: int, guard: bool, mask: np.ndarray | None = None) -> dict[str, Any]:
    keep = keep_mask(c, threshold, k, guard)
    m = np.ones(len(keep), dtype=bool) if mask is None else mask
    rel, con = m & c.relevant, m & c.contradict
    out = {
        "recall": _share(keep, rel),
        "recall_contradict": _share(keep, con),
        "pruned_docs": round(float(1 - keep[m].mean()), 4),
        "pruned_passages": round(float(1 - c.passages[m & keep].sum() / c.passages[m].sum()), 4),
        "relevant": int(rel.sum()),
        "doc_pairs": int(m.sum()),
    }
    for s in SWEEP_SOURCES:
        out[f"recall_{s}"] = _share(keep, rel & (c.source == s))
    return out


def choose(grid: list[dict[str, Any]], settings: Sequence[str], target: float) -> dict[str, Any]:
    """The default: guard on; recall of relevant and of CONTRADICT pairs ≥ ``target`` in every
    setting on the train+dev items; most claim × passage pairs pruned in the pooled settings.
    Points within ``NEAR`` of that reduction in every pooled setting count as equal, and the
    largest k (a safety net that costs nothing measurable there), then threshold, wins.
    """
    pooled = [s for s in settings if s != "own"]
    ok = [
        g
        for g in grid
        if g["guard"]
        and all(g["tune"][s]["recall"] >= target and g["tune"][s]["recall_contradict"] >= target for s in settings)
    ]
    if not ok:
        raise SystemExit(f"no grid point keeps recall >= {target} in every setting")
    best = {s: max(g["tune"][s]["pruned_passages"] for g in ok) for s in pooled}
    near = [g for g in ok if all(g["tune"][s]["pruned_passages"] >= best[s] - NEAR for s in pooled)]
    return max(near, key=lambda g: (g["k"], g["threshold"]))


def misses(
    c: Candidates,
    point: dict[str, Any],
    items: Sequence[Item],
    claims: list[Claim],
    docs: list[Doc],
    claim_item: np.ndarray,
    show: int = 12,
) -> dict[str, Any]:
    """The relevant (claim, document) rows the chosen point prunes: counts and the lowest-cosine examples."""
    keep = keep_mask(c, point["threshold"], point["k"], point["guard"])
    rows = np.flatnonzero(c.relevant & ~keep)
    counts: dict[str, int] = {}
    examples = []
    for r in rows[np.argsort(c.cos[rows])]:
        claim = claims[c.claim[r]]
        item = items[int(claim_item[c.claim[r]])]
        doc = docs[c.doc[r]]
        label = CONTRADICT if c.contradict[r] else SUPPORT
        key = f"{item.meta['source']} / {item.meta['conflict_type']} / {label}"
        counts[key] = counts.get(key, 0) + 1
        if len(examples) < show:
            text = " ".join(p.text for p in doc.passages)
            examples.append(
                {
                    "item": item.id,
                    "doc": doc.key[1],
                    "label": label,
                    "cosine": round(float(c.cos[r]), 3),
                    "claim": claim.text,
                    "document": text[:160] + ("…" if len(text) > 160 else ""),
                }
            )
    return {"total": len(rows), "by_source_type_label": dict(sorted(counts.items())), "lowest_cosine": examples}


def check_select(
    pruner: EmbeddingPruner, point: dict[str, Any], c: Candidates, claims: list[Claim], docs: list[Doc]
) -> str:
    """Run the real ``select`` at ``point`` on one setting; it must keep the documents the sweep keeps.

    Only documents tied with the claim's k-th best cosine (duplicate texts) may differ: the
    top-k cut breaks such ties arbitrarily.
    """
    saved = pruner.config
    pruner.config = dataclasses.replace(saved, threshold=point["threshold"], k=point["k"], guard=point["guard"])
    try:
        kept, _ = pruner.select([Pair(claims[ci], p) for ci, d in zip(c.claim, c.doc) for p in docs[d].passages])
    finally:
        pruner.config = saved
    got = {(p.claim, p.passage.item_id, p.passage.doc_id) for p in kept}
    keep = keep_mask(c, point["threshold"], point["k"], point["guard"])
    row = {(claims[ci], *docs[d].key): r for r, (ci, d) in enumerate(zip(c.claim, c.doc))}
    want = {key for key, r in row.items() if keep[r]}
    kth = {int(ci): cos for ci, cos, rank in zip(c.claim, c.cos, c.rank) if rank == point["k"] - 1}
    diff = got ^ want
    bad = [key for key in diff if c.cos[row[key]] != kth.get(int(c.claim[row[key]]))]
    if bad:
        raise SystemExit(f"select() and the sweep disagree on {len(bad)} claim × document pairs, e.g. {bad[0]}")
    return f"{len(got)} of {len(row)} claim × document pairs kept by select(), " + (
        "identical to the sweep" if not diff else f"{len(diff)} differ only by ties at the top-k cut"
    )


def _cell(text: str) -> str:
    return " ".join(text.replace("|", "\\|").split())


def _f(v: float | None, digits: int = 4) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def markdown(result: dict[str, Any]) -> str:
    chosen, settings = result["chosen"], result["settings"]
    lines = [
        "# Embedding pruner: recall / reduction sweep",
        "",
        *header(result["meta"]),
        f"Model: {result['pruner']['resolved']['model_source']} ({result['pruner']['resolved']['model']}).  ",
        f"Chunker: the engine's, from judge `{result['chunker']['judge']}`: max_tokens "
        f"{result['chunker']['max_tokens']}, overlap {result['chunker']['overlap']}.  ",
        f"Data: {result['data']['items']} items, {result['data']['claims']} claims, {result['data']['documents']} "
        f"documents, {result['data']['passages']} passages ({', '.join(SWEEP_SOURCES)}); "
        f"relevant = gold SUPPORT or CONTRADICT. Embedding took {result['embed_s']} s.",
        "",
        "Settings: `own` = each claim against its own documents; `poolN` = plus the documents of N other "
        f"random items (seed {result['seed']}; other items' documents are irrelevant).",
        "",
        "## Chosen defaults",
        "",
        f"`threshold = {chosen['threshold']}`, `k = {chosen['k']}`, `guard = {str(chosen['guard']).lower()}`: "
        f"of the grid points with the guard on that keep ≥ {result['target']} of the relevant and of the CONTRADICT "
        f"pairs in every setting (train+dev items), the one that prunes most in the pooled settings (points within "
        f"{NEAR} of it count as equal; the largest k, then threshold, wins). Test-split columns: held out.",
        "",
        "| setting | recall (all) | recall CONTRADICT | recall ramdocs | recall contraqa | pruned doc pairs | "
        "pruned passage pairs | recall test split | pruned test split |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in settings:
        a, t = chosen["all"][s], chosen["test"][s]
        lines.append(
            f"| {s} | {_f(a['recall'])} | {_f(a['recall_contradict'])} | {_f(a['recall_ramdocs'])} | "
            f"{_f(a['recall_contraqa_en555'])} | {_f(a['pruned_docs'], 3)} | {_f(a['pruned_passages'], 3)} | "
            f"{_f(t['recall'])} | {_f(t['pruned_passages'], 3)} |"
        )
    m = result["misses_own"]
    lines += [
        "",
        f"`select()` check at the chosen point: {result['select_check']}",
        "",
        f"### What the chosen point prunes that gold calls relevant (`own` setting, all items): {m['total']} pairs",
        "",
        "| source / conflict type / gold label | pairs |",
        "|---|---|",
        *[f"| {k} | {v} |" for k, v in m["by_source_type_label"].items()],
        "",
        "Lowest-cosine examples:",
        "",
        "| item | doc | gold | cosine | claim | document (start) |",
        "|---|---|---|---|---|---|",
        *[
            f"| {e['item']} | {e['doc']} | {e['label']} | {e['cosine']} | {_cell(e['claim'])} | "
            f"{_cell(e['document'])} |"
            for e in m["lowest_cosine"]
        ],
        "",
    ]
    for s in settings:
        lines += [
            f"## Setting `{s}` (all items): recall / pruned passage pairs",
            "",
            "| threshold | "
            + " | ".join(f"k={k} guard off" for k in KS)
            + " | "
            + " | ".join(f"k={k} guard on" for k in KS)
            + " |",
            "|---" * (1 + 2 * len(KS)) + "|",
        ]
        for t in THRESHOLDS:
            cells = []
            for guard in (False, True):
                for k in KS:
                    g = next(x for x in result["grid"] if x["threshold"] == t and x["k"] == k and x["guard"] == guard)
                    m = g["all"][s]
                    cells.append(f"{_f(m['recall'], 3)} / {_f(m['pruned_passages'], 2)}")
            lines.append(f"| {t} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += [
        "Full grid with per-source and CONTRADICT recall, train+dev and test figures: the JSON file beside this one.",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", help="shared data folder (default: $CONFLICTSCORE_DATA or ../shared/data)")
    ap.add_argument("--model", help="sentence-transformers model directory (default: the packaged MiniLM)")
    ap.add_argument("--judge", default="nli", help="judge whose passage budget chunks the documents (as the engine)")
    ap.add_argument("--judge-arg", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--pool", type=int, nargs="+", default=[5, 20], help="other items per pooled setting")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--target", type=float, default=0.98, help="recall every setting must keep")
    ap.add_argument("--out", default="benchmarks/results/pipeline/prune_sweep", help="output path without extension")
    args = ap.parse_args(argv)

    started, load = time.perf_counter(), os.getloadavg()
    items = load_items(args.data_dir)
    chunker, judge_desc = engine_chunker(args.judge, args.judge_arg)
    docs: list[Doc] = []
    item_docs: list[list[int]] = []
    for it in items:
        by_doc: dict[str, list[Passage]] = {}
        for p in chunker.split(it.id, it.documents):
            by_doc.setdefault(p.doc_id, []).append(p)
        item_docs.append(list(range(len(docs), len(docs) + len(it.documents))))
        docs.extend(Doc((it.id, d.id), by_doc[d.id]) for d in it.documents)
    claims = [Claim(it.id, j, c) for it in items for j, c in enumerate(it.claims or ())]
    claim_item = np.array([i for i, it in enumerate(items) for _ in it.claims or ()])
    passages = [p for d in docs for p in d.passages]
    print(f"{len(items)} items, {len(claims)} claims, {len(docs)} documents, {len(passages)} passages", file=sys.stderr)

    pruner = MemoPruner(EmbeddingPruner.Config(model=args.model))
    t0 = time.perf_counter()
    windows = {t: pruner.passage_windows(t) for t in dict.fromkeys(p.text for p in passages)}
    pruner.embed([c.text for c in claims] + [w for ws in windows.values() for w in ws])
    embed_s = round(time.perf_counter() - t0, 1)
    print(f"embedded in {embed_s} s", file=sys.stderr)
    sim = passage_similarity(pruner.embed([c.text for c in claims]), [pruner.embed(windows[p.text]) for p in passages])
    doc_of = np.array([d for d, doc in enumerate(docs) for _ in doc.passages])
    best, _ = keep_documents(sim, doc_of, threshold=1.0, k=0)

    settings = {"own": None, **{f"pool{n}": partners(items, n, args.seed) for n in args.pool}}
    cands = {s: candidates(items, claims, claim_item, docs, item_docs, best, pool) for s, pool in settings.items()}
    grid = []
    for guard in (False, True):
        for k in KS:
            for t in THRESHOLDS:
                point: dict[str, Any] = {"threshold": t, "k": k, "guard": guard, "all": {}, "tune": {}, "test": {}}
                for s, c in cands.items():
                    point["all"][s] = measure(c, t, k, guard)
                    point["tune"][s] = measure(c, t, k, guard, c.split != "test")
                    point["test"][s] = measure(c, t, k, guard, c.split == "test")
                grid.append(point)
    chosen = choose(grid, list(settings), args.target)
    described = pruner.describe()
    check = "; ".join(
        f"{s}: {check_select(pruner, chosen, cands[s], claims, docs)}" for s in ("own", f"pool{args.pool[0]}")
    )

    result = {
        "meta": run_meta(__file__, argv, started, load),
        "seed": args.seed,
        "target": args.target,
        "pruner": described,
        "chunker": {
            "judge": judge_desc.get("resolved", {}).get("model_path", args.judge),
            "max_tokens": chunker.max_tokens,
            "overlap": chunker.overlap,
        },
        "data": {
            "items": len(items),
            "claims": len(claims),
            "documents": len(docs),
            "passages": len(passages),
            "sources": list(SWEEP_SOURCES),
        },
        "embed_s": embed_s,
        "settings": list(settings),
        "select_check": check,
        "misses_own": misses(cands["own"], chosen, items, claims, docs, claim_item),
        "chosen": chosen,
        "grid": grid,
    }
    print(write_recorded(Path(args.out), result, markdown).split("## Setting")[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
