"""``auto``: the ``embedding`` pruner where it is expected to pay, no pruning elsewhere.

Pruning costs an embedding of every distinct claim and passage of a step (and loading the
embedder once); it saves the judge calls of the pairs it prunes. Against each item's own,
retrieved documents it prunes about 5% of the pairs, so with a judge no larger than the
embedder it makes a run slower; in a pooled corpus it prunes 73-83% and pays. So before
each engine step the engine asks (:meth:`AutoPruner.decide`, its pruner-decision hook) and
the rule is, with the step's numbers:

    expected pruned share  f = max(0, 1 - (kept_docs_base + kept_docs_share * D) / D)
    saving = f * N * J          cost = E * T + L
    prune iff saving > cost

- ``D``: candidate documents per claim (mean over the step's claims), ``N``: candidate pairs;
- ``f``: the share of a claim's documents the embedding pruner at its default settings is
  expected to prune; kept documents grow as ``4.85 + 0.127 * D``, the line through what
  ``benchmarks/pipeline/prune_sweep.py`` measured on RAMDocs + ContraQA (own documents, D ≈ 5.9: 4.5%
  pruned; 5 and 20 other items' documents pooled in: 73% and 83%);
- ``J``: the judge's seconds per pair: measured in this run once the judge has run (its
  first call includes loading the judge, so an early estimate errs towards pruning),
  else ``judge_s_per_pair`` scaled by the judge's FLOPs per token against the default
  judge's (an ``nli`` judge reads them from its config), else ``other_judge_s_per_pair``
  for judges that say nothing of their cost (LLM judges);
- ``E``: the embedder's seconds per text (measured in this run once it has embedded, else
  ``embed_s_per_text``), ``T``: distinct claim and passage texts of the step not yet in the
  judgment cache's vector store (stored ones are read back, not embedded);
- ``L``: ``load_s`` while the embedder is not loaded yet and the step has texts to embed, else 0.

The defaults of ``judge_s_per_pair``, ``embed_s_per_text`` and ``load_s`` are measured by
``benchmarks/pipeline/pruner_cost.py`` (``benchmarks/results/pipeline/pruner_cost.md``) on a 2-core CPU under a
load of about 11, so their absolute values are slow; what the rule needs is their ratios
(embedding a text about 0.7 of a judge pair, loading the embedder about 65 judge pairs),
and once this run has measured a judge of known size, the embedder's priors are scaled by
how much faster or slower it ran than ``judge_s_per_pair``. ``other_judge_s_per_pair`` (5 s)
is an assumption for LLM judges (a generation per pair), not a measurement. Every decision, with
its inputs, is kept in ``stats()["decisions"]`` (the summary's ``stages.pruner``). Selections
made when pruning are those of the ``embedding`` pruner with the same arguments (and shared
with it in the judgment cache). Outputs depend on the decision: for a run whose pruning must
not depend on measured speed, choose ``--pruner embedding`` or ``--pruner none``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..backends import registry
from ..backends.arguments import flat, ranged
from ..core.types import Judgment, Pair
from ..util.flops import flops_per_token
from ._base import PrunerBase
from .embedding import EmbeddingConfig, EmbeddingPruner

RULE_VERSION = 1
REFERENCE_FLOPS_PER_TOKEN = flops_per_token({"num_hidden_layers": 6, "hidden_size": 384, "intermediate_size": 1536})
"""Matmul FLOPs per token of the default judge's encoder (6 layers, hidden 384, intermediate
1536): what ``judge_s_per_pair`` was measured with."""


@dataclass(frozen=True)
class AutoConfig:
    """Arguments of the ``auto`` pruner: the ``embedding`` pruner's (used when it prunes) and the rule's.

    ``kept_docs_base`` / ``kept_docs_share``: documents a claim keeps, as ``base + share * D``
    of its ``D`` candidates. ``judge_s_per_pair``: seconds per pair of the default judge's size
    before the run has measured its judge; ``other_judge_s_per_pair``: the same for judges
    that do not report their size (an LLM judge: an assumption, not measured here);
    ``embed_s_per_text``, ``load_s``: the embedder's cost before the run has measured it.
    """

    embedding: EmbeddingConfig = flat(default_factory=EmbeddingConfig)
    kept_docs_base: float = ranged(4.85, 0.0, 1e6)
    kept_docs_share: float = ranged(0.127, 0.0, 1.0)
    judge_s_per_pair: float = ranged(0.23, 0.0, 1e6, what="judge_s_per_pair (seconds)")
    other_judge_s_per_pair: float = ranged(5.0, 0.0, 1e6, what="other_judge_s_per_pair (seconds)")
    embed_s_per_text: float = ranged(0.158, 0.0, 1e6, what="embed_s_per_text (seconds)")
    load_s: float = ranged(15.0, 0.0, 1e6, what="load_s (seconds)")


@dataclass(frozen=True)
class Decision:
    """One step's choice and everything it was computed from (seconds, counts)."""

    prune: bool
    claims: int
    pairs: int
    docs_per_claim: float
    texts: int
    expected_pruned_share: float
    judge_s_per_pair: float
    judge_cost_from: str
    embed_s_per_text: float
    load_s: float
    saving_s: float
    cost_s: float

    def to_json(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        for k, v in out.items():
            if isinstance(v, float):
                out[k] = round(v, 6)
        return out


def expected_pruned_share(docs_per_claim: float, base: float, share: float) -> float:
    """The share of a claim's candidate documents expected to be pruned (see the module docstring)."""
    if docs_per_claim <= 0:
        return 0.0
    return max(0.0, 1.0 - (base + share * docs_per_claim) / docs_per_claim)


def decide_prune(
    *,
    claims: int,
    pairs: int,
    docs: int,
    texts: int,
    judge_s_per_pair: float,
    embed_s_per_text: float,
    load_s: float,
    kept_docs_base: float,
    kept_docs_share: float,
    judge_cost_from: str = "given",
) -> Decision:
    """The rule on plain numbers: prune when the judge time it is expected to save exceeds
    the embedding (and loading) it costs. ``docs``: claim × document candidates of the step."""
    d = docs / claims if claims else 0.0
    f = expected_pruned_share(d, kept_docs_base, kept_docs_share)
    saving = f * pairs * judge_s_per_pair
    cost = embed_s_per_text * texts + load_s
    return Decision(
        saving > cost,
        claims,
        pairs,
        d,
        texts,
        f,
        judge_s_per_pair,
        judge_cost_from,
        embed_s_per_text,
        load_s,
        saving,
        cost,
    )


class AutoPruner(PrunerBase):
    """Prunes with ``embedding`` in the steps where the rule expects it to pay, keeps every pair in the others."""

    name = "auto"
    role = "pruner"
    Config = AutoConfig

    cache_selections = True
    """Stored selections are the ``embedding`` pruner's (:meth:`selection_spec`); a step decided
    not to prune stores none (:meth:`decide` returns False)."""

    def __init__(self, config: AutoConfig | None = None):
        super().__init__(config)
        self.embedding: EmbeddingPruner = registry.build("pruner", "embedding", self.config.embedding)
        self._prune = True
        self.decisions: list[Decision] = []

    def spec(self) -> dict[str, Any]:
        """The rule and the pruner it may use: the resume fingerprint of an ``auto`` run."""
        return {
            "backend": "auto",
            "rule_version": RULE_VERSION,
            "embedding": self.embedding.spec(),
            "kept_docs": [self.config.kept_docs_base, self.config.kept_docs_share],
        }

    def selection_spec(self) -> Mapping[str, Any]:
        """What stored selections are keyed by: the ``embedding`` pruner's spec (they are its selections)."""
        return self.embedding.spec()

    def decide(
        self, groups: Sequence[Sequence[Pair]], *, judge: Any = None, judge_s_per_pair: float | None = None
    ) -> bool:
        """Choose for the next :meth:`select` calls (one engine step's ``groups``: each a claim's
        candidates) and record the choice; ``judge_s_per_pair``: measured in this run, if so."""
        cfg = self.config
        prior, source = self._judge_prior(judge)
        # the embedder's priors were measured beside the judge's: a judge of known size measured
        # faster or slower here says the machine is, and scales them alike
        scale = judge_s_per_pair / prior if judge_s_per_pair is not None and prior and _sized(judge) else 1.0
        if judge_s_per_pair is not None:
            j, source = judge_s_per_pair, "measured in this run"
        else:
            j = prior
        stats = self.embedding.stats()
        if stats.get("texts_embedded"):
            e = stats["embed_s"] / stats["texts_embedded"]
        else:
            e = cfg.embed_s_per_text * scale
        texts = self.embedding.texts_to_embed([p for g in groups for p in g])  # stored ones cost nothing
        docs = sum(len({(p.passage.item_id, p.passage.doc_id) for p in g}) for g in groups)
        decision = decide_prune(
            claims=len(groups),
            pairs=sum(len(g) for g in groups),
            docs=docs,
            texts=texts,
            judge_s_per_pair=j,
            embed_s_per_text=e,
            load_s=0.0 if not texts or self.embedding.resolved.get("load_s") is not None else cfg.load_s * scale,
            kept_docs_base=cfg.kept_docs_base,
            kept_docs_share=cfg.kept_docs_share,
            judge_cost_from=source,
        )
        self.decisions.append(decision)
        self._prune = decision.prune
        return decision.prune

    def _judge_prior(self, judge: Any) -> tuple[float, str]:
        per_token = _sized(judge)
        if per_token:
            return (
                self.config.judge_s_per_pair * per_token / REFERENCE_FLOPS_PER_TOKEN,
                f"judge_s_per_pair scaled by the judge's FLOPs per token ({per_token:.3g})",
            )
        return self.config.other_judge_s_per_pair, "other_judge_s_per_pair (the judge reports no size)"

    def use_vector_store(self, get_store: Any) -> None:
        """The ``embedding`` pruner's vector store (see :meth:`EmbeddingPruner.use_vector_store`)."""
        self.embedding.use_vector_store(get_store)

    def select(self, pairs: Sequence[Pair]) -> tuple[list[Pair], list[Judgment]]:
        """The ``embedding`` pruner's selection when the step was decided to prune, else every pair."""
        if self._prune:
            return self.embedding.select(pairs)
        self.count("kept_unpruned", len(pairs))
        return list(pairs), []

    def describe(self) -> dict[str, Any]:
        out = super().describe()
        if self.embedding.resolved:
            out["resolved"] = dict(self.embedding.resolved)
        return out

    def stats(self) -> dict[str, Any]:
        out = {**self.embedding.stats(), **super().stats()}
        out["decisions"] = [d.to_json() for d in self.decisions]
        out["pruned_steps"] = sum(d.prune for d in self.decisions)
        return out

    def close(self) -> None:
        self.embedding.close()


def _sized(judge: Any) -> float | None:
    """The judge's matmul FLOPs per token when it reports them (an ``nli`` judge does), else None."""
    return judge.flops_per_token() if judge is not None else None
