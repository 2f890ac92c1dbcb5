"""The workloads the speed benchmarks share, built from ``../shared/data``, and the flags that name
them. Beside :mod:`recording` (what a script records), the one other module the scripts of this
folder import: a script is its measurement, not its inputs.

- ``ramdocs_questions``: RAMDocs questions (claims of both variants, documents by text), from
  which ``rag_job`` (each question against its own documents), ``grown_job`` (other questions'
  documents added), ``pooled_job`` (every item against one pooled corpus) and ``sweep_job``
  (each question answered R times) build items;
- ``long_job``: SciFact dev claims against their cited abstracts plus three uncited ones;
- ``load_pairs``: ContraQA paragraphs or Climate-FEVER sentences as judge pairs;
- ``candidate_groups``: each claim × its item's passages, as the engine hands them to the pruner;
- ``doc_labels``: the claim × document labels of scored results, to compare variants;
- ``plain_folder``: the judge's checkpoint as a plain float32 ``transformers`` folder, what the
  peers load (a packed checkpoint unpacked);
- ``token_counts``: real and padded tokens and the matmul FLOPs of forwards in the peers' batches or
  the engine's;
- ``matmul_peak``: the machine's matmul GFLOP/s at the judge's shape, what a forward is divided by.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from conflictscore_local.core.types import Claim, Item, Pair, Passage
from conflictscore_local.formats.inputs import parse_item
from conflictscore_local.judge.nli.runtimes.base import token_batches
from conflictscore_local.util.flops import sequence_flops
from conflictscore_local.util.locations import default_data_dir

CONFLICT_FILE = "contraqa_en555/raw_data/healthver_climate-fever_conflcits_with_questions_and_answers.json"
CLIMATE_FEVER = "climate_fever/dataset/climate-fever.jsonl"


# -- flags and folders ---------------------------------------------------------------------------
def base_parser(doc: str, out: str, suffixes: str = ".json, .md") -> argparse.ArgumentParser:
    """The flags the speed benchmarks share: the results prefix and the data folder."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--out", default=f"benchmarks/results/{out}", help=f"results prefix ({suffixes})")
    ap.add_argument("--data-dir", help="the shared data folder (default ../shared/data)")
    return ap


def at_least(low: int) -> Any:
    """An argparse ``type``: a whole number of at least ``low``; anything else is refused naming what is allowed."""

    def check(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = low - 1
        if value < low:
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed; allowed: a whole number of at least {low}")
        return value

    check.__name__ = f"whole number >= {low}"  # what argparse names in its own messages
    return check


positive = at_least(1)
"""An argparse ``type``: a whole number of at least 1."""


def data_dir(arg: str | None) -> Path:
    """``--data-dir``, else ``$CONFLICTSCORE_DATA``, else ``<repo>/../shared/data``; exits naming it
    when it is not a folder."""
    path = Path(arg) if arg else default_data_dir()
    if not path.is_dir():
        sys.exit(f"data directory {path} not found (use --data-dir or CONFLICTSCORE_DATA)")
    return path


# -- RAMDocs -------------------------------------------------------------------------------------
@dataclass
class Question:
    key: str
    claims: list[str]
    docs: list[str]


def ramdocs_questions(data: Path | None) -> list[Question]:
    """RAMDocs questions: the claims of both variants of a question, its documents (by text)."""
    from conflictscore_local.bench import build_bench

    by_q: dict[str, Question] = {}
    for it in build_bench(data, only=["ramdocs"]):
        key = it["id"].split(":")[1]
        q = by_q.setdefault(key, Question(key, [], []))
        q.claims.extend(c for c in it["claims"] if c not in q.claims)
        q.docs.extend(d["text"] for d in it["documents"] if d["text"] not in q.docs)
    return list(by_q.values())


def rag_job(questions: Sequence[Question], n: int) -> list[Item]:
    """The first ``n`` questions, each against its own documents."""
    return [
        parse_item(
            {"id": q.key, "claims": q.claims, "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(q.docs)]}
        )
        for q in questions[:n]
    ]


def grown_job(questions: Sequence[Question], n: int, factor: int, stride: int = 7) -> list[Item]:
    """``rag_job`` with ``factor - 1`` other questions' documents added to each item: item ``i`` gets
    those of the questions after the first ``n`` from ``i * stride`` on (wrapping round)."""
    rest = questions[n:]
    items = []
    for i, q in enumerate(questions[:n]):
        texts = list(q.docs)
        for k in range(factor - 1):
            texts += rest[(i * stride + k) % len(rest)].docs
        items.append(
            parse_item(
                {
                    "id": q.key,
                    "claims": q.claims,
                    "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(dict.fromkeys(texts))],
                }
            )
        )
    return items


def sweep_job(questions: Sequence[Question], n_questions: int, responses: int, seed: int = 0) -> list[Item]:
    """Q×R: each question answered ``responses`` times, every response claiming a random non-empty
    subset of the question's claims, against the question's documents."""
    rng = random.Random(seed)
    items = []
    for q in questions[:n_questions]:
        for r in range(responses):
            claims = rng.sample(q.claims, rng.randint(1, len(q.claims)))
            items.append(
                parse_item(
                    {
                        "id": f"{q.key}/r{r}",
                        "claims": claims,
                        "documents": [{"id": f"d{j}", "text": t} for j, t in enumerate(q.docs)],
                    }
                )
            )
    return items


def pooled_job(questions: Sequence[Question], n_items: int, n_docs: int) -> list[Item]:
    """I×D: ``n_items`` items, each against one pooled corpus of ``n_docs`` documents (the items' own
    documents first, round-robin, then other questions'); ``meta["own_documents"]`` names its own."""
    own = [q.docs for q in questions[:n_items]]
    corpus: list[str] = []
    for rank in range(max(len(d) for d in own)):  # round-robin: every item keeps some of its own documents
        corpus.extend(d[rank] for d in own if rank < len(d) and d[rank] not in corpus)
    for q in questions[n_items:]:
        corpus.extend(t for t in q.docs if t not in corpus)
    corpus = corpus[:n_docs]
    docs = [{"id": f"c{j}", "text": t} for j, t in enumerate(corpus)]
    return [
        parse_item(
            {
                "id": q.key,
                "claims": q.claims,
                "documents": docs,
                "own_documents": [d["id"] for d in docs if d["text"] in q.docs],
            }
        )
        for q in questions[:n_items]
    ]


# -- other sets ----------------------------------------------------------------------------------
def long_job(data: Path, n: int, seed: int = 0) -> list[Item]:
    """SciFact dev claims against their cited abstracts plus three uncited ones."""
    folder = data / "scifact"
    corpus = {}
    with open(folder / "corpus.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            corpus[row["doc_id"]] = " ".join([row["title"], *row["abstract"]])
    claims = [json.loads(x) for x in (folder / "claims_dev_cited.jsonl").read_text(encoding="utf-8").splitlines()]
    rng = random.Random(seed)
    ids = sorted(corpus)
    items = []
    for c in [c for c in claims if c.get("evidence")][:n]:
        docs = [d for d in c["doc_ids"] if d in corpus] + rng.sample(ids, 3)
        items.append(
            parse_item(
                {
                    "id": f"scifact:{c['id']}",
                    "claims": [c["claim"]],
                    "documents": [{"id": str(d), "text": corpus[d]} for d in dict.fromkeys(docs)],
                }
            )
        )
    return items


def load_pairs(root: Path, kind: str, n: int) -> list[Pair]:
    """The first ``n`` (claim, evidence paragraph) or (claim, evidence sentence) pairs."""
    path = root / (CONFLICT_FILE if kind == "paragraphs" else CLIMATE_FEVER)
    if not path.is_file():
        sys.exit(f"benchmark data not found: {path} (pass --data-dir or set CONFLICTSCORE_DATA)")
    if kind == "paragraphs":
        records = [
            (str(r["claim_id"]), r["claim"], r["paragraphs"]) for r in json.loads(path.read_text(encoding="utf-8"))
        ]
    else:
        lines = path.read_text(encoding="utf-8").splitlines()
        records = [(r["claim_id"], r["claim"], [e["evidence"] for e in r["evidences"]]) for r in map(json.loads, lines)]
    pairs = [
        Pair(Claim(cid, 0, claim), Passage(cid, f"e{k}", 0, text))
        for cid, claim, texts in records
        for k, text in enumerate(texts)
    ]
    return pairs[:n]


# -- what the engine makes of them ---------------------------------------------------------------
def candidate_groups(engine: Any, items: Sequence[Item]) -> list[list[Pair]]:
    """Each claim × its item's passages, as the engine hands them to the pruner."""
    chunker = engine.chunker()
    groups = []
    for it in items:
        passages = chunker.split(it.id, list(it.documents))
        for k, c in enumerate(it.claims or ()):
            groups.append([Pair(Claim(it.id, k, c), p) for p in passages])
    return groups


def doc_labels(results: Sequence[Any]) -> dict[tuple[str, int, str], str | None]:
    """``(item id, claim index, document id) → label`` of scored results."""
    return {(r.item_id, v.claim.index, j.doc_id): j.label for r in results for v in r.verdicts for j in v.judgments}


# -- the weights every peer reads ------------------------------------------------------------
def plain_folder(checkpoint: Path, out: Path) -> Path:
    """``checkpoint`` as a plain float32 ``transformers`` folder in ``out``: a packed checkpoint unpacked
    (:func:`~conflictscore_local.backends.packed.unpack`), else its weights cast to float32 (exact from
    float16) and its config's dtype said so; the small files copied."""
    from conflictscore_local.backends.packed import is_packed, unpack

    if is_packed(checkpoint):
        unpack(checkpoint, out, dtype="float32")
    else:
        from safetensors.torch import load_file, save_file

        out.mkdir(parents=True, exist_ok=True)
        for f in checkpoint.iterdir():
            if f.is_file() and f.name != "model.safetensors":
                shutil.copyfile(f, out / f.name)
        state = {
            k: v.float().contiguous() if v.is_floating_point() else v
            for k, v in load_file(str(checkpoint / "model.safetensors")).items()
        }
        save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    cfg = json.loads((out / "config.json").read_text(encoding="utf-8"))
    for key in ("dtype", "torch_dtype"):
        if key in cfg:
            cfg[key] = "float32"
    (out / "config.json").write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    return out


# -- the forwards and the limit ---------------------------------------------------------------
PEER_BATCH = 32
"""The batch a user's loop (``CrossEncoder.predict``, a plain transformers loop) runs, inputs in order."""


def token_counts(
    lengths: Sequence[int], config: Any, *, in_order: bool, batch_size: int, max_tokens: int
) -> dict[str, Any]:
    """Real and padded tokens and the matmul FLOPs of the forwards over inputs of ``lengths``:
    ``in_order``: batches of ``PEER_BATCH`` as given (the peers), else the engine's length-sorted
    batches of at most ``batch_size`` inputs and ``max_tokens`` padded tokens."""
    real = sum(lengths)
    flops = sum(sequence_flops(config, n) or 0.0 for n in lengths)
    if in_order:
        ls = list(lengths)
        batches = [range(s, min(s + PEER_BATCH, len(ls))) for s in range(0, len(ls), PEER_BATCH)]
    else:
        ls = sorted(lengths, reverse=True)
        batches = list(token_batches(list(range(len(ls))), ls, batch_size, max_tokens))
    padded = sum(len(b) * max(ls[i] for i in b) for b in batches if len(b))
    return {
        "real_tokens": real,
        "padded_tokens": padded,
        "padded_over_real": round(padded / real, 3) if real else None,
        "judge_gflop": round(flops / 1e9, 3),
    }


# -- the limit ---------------------------------------------------------------------------------
def matmul_peak(
    dtype_name: str, tokens: int, hidden: int, inner: int, seconds: float = 3.0, device: str = "cpu"
) -> float:
    """Best GFLOP/s (GOP/s for ``int8``) of ``tokens x hidden @ hidden x inner`` matmuls in ``dtype``
    over about ``seconds``: the limit a judge forward is divided by. ``int8``: ``torch._int_mm``
    (int8 in, int32 out: VNNI or AMX-INT8 where the CPU has them)."""
    import time

    import torch

    if dtype_name == "int8":
        a = torch.randint(-64, 64, (tokens, hidden), dtype=torch.int8, device=device)
        b = torch.randint(-64, 64, (hidden, inner), dtype=torch.int8, device=device)
        mm = torch._int_mm
    else:
        dtype = getattr(torch, dtype_name)
        a = torch.randn(tokens, hidden, dtype=dtype, device=device)
        b = torch.randn(hidden, inner, dtype=dtype, device=device)
        mm = torch.mm
    flop = 2.0 * tokens * hidden * inner
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    best = 0.0
    with torch.inference_mode():
        mm(a, b)  # warm-up
        sync()
        end = time.perf_counter() + seconds
        while best == 0.0 or time.perf_counter() < end:  # at least one timed product, however slow
            t0 = time.perf_counter()
            mm(a, b)
            sync()
            best = max(best, flop / (time.perf_counter() - t0) / 1e9)
    return round(best, 2)
