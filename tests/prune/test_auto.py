"""The ``auto`` pruner's rule on hand-computed cases, and its decision hook without the engine."""

from __future__ import annotations

from typing import Any

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.core.types import IRRELEVANT, Claim, Judgment, Pair, Passage
from conflictscore_local.prune.auto import REFERENCE_FLOPS_PER_TOKEN, AutoPruner, decide_prune, expected_pruned_share
from conflictscore_local.util.flops import flops_per_token, sequence_flops

RULE = {"kept_docs_base": 4.85, "kept_docs_share": 0.127}


def test_expected_pruned_share_by_hand() -> None:
    # own documents of RAMDocs + ContraQA (5.9 per claim): 1 - (4.85 + 0.127 * 5.9) / 5.9
    assert expected_pruned_share(5.9, 4.85, 0.127) == pytest.approx(1 - 5.5993 / 5.9)  # 0.0510
    assert expected_pruned_share(100, 4.85, 0.127) == pytest.approx(0.8245)
    assert expected_pruned_share(4, 4.85, 0.127) == 0.0  # fewer documents than a claim keeps
    assert expected_pruned_share(0, 4.85, 0.127) == 0.0


@pytest.mark.parametrize(
    "docs, judge_s, load_s, saving, cost, prune",
    [
        # 10 claims x 100 documents, 110 distinct texts: 0.8245 * 1000 * 0.01 = 8.245 s saved vs 1.1 + 1.5 s
        (1000, 0.01, 1.5, 8.245, 2.6, True),
        # 10 claims sharing 6 documents (16 texts): 1 - 5.612 / 6 = 0.06467; 0.06467 * 60 * 0.01 vs 0.16 + 1.5 s
        (60, 0.01, 1.5, 0.0388, 1.66, False),
        # ... and a judge 100 times as costly a pair: 3.88 s saved vs 1.66 s
        (60, 1.0, 1.5, 3.88, 1.66, True),
        # the embedder already loaded, a judge 3 times the cost of a text's embedding: 0.1164 s vs 0.16 s
        (60, 0.03, 0.0, 0.1164, 0.16, False),
    ],
)
def test_decide_prune_by_hand(
    docs: int, judge_s: float, load_s: float, saving: float, cost: float, prune: bool
) -> None:
    texts = 10 + docs // 10
    d = decide_prune(
        claims=10,
        pairs=docs,
        docs=docs,
        texts=texts,
        judge_s_per_pair=judge_s,
        embed_s_per_text=0.01,
        load_s=load_s,
        **RULE,
    )
    assert d.saving_s == pytest.approx(saving, abs=5e-4) and d.cost_s == pytest.approx(cost)
    assert d.prune is prune and d.docs_per_claim == docs / 10


def test_flops_from_a_config_by_hand() -> None:
    cfg = {"num_hidden_layers": 6, "hidden_size": 384, "intermediate_size": 1536}
    assert flops_per_token(cfg) == 2 * 6 * (4 * 384**2 + 2 * 384 * 1536) == REFERENCE_FLOPS_PER_TOKEN == 21233664
    assert sequence_flops(cfg, 100) == 100 * 21233664 + 4 * 6 * 100 * 100 * 384
    assert flops_per_token({"hidden_size": 384}) is None


def _groups(claims: int, docs: int) -> list[list[Pair]]:
    return [
        [Pair(Claim("it", c, f"claim {c}"), Passage("it", f"d{d}", 0, f"passage {d}")) for d in range(docs)]
        for c in range(claims)
    ]


class SizedJudge:
    def __init__(self, per_token: float | None):
        self.per_token = per_token

    def flops_per_token(self) -> float | None:
        return self.per_token


def test_decide_takes_the_measured_cost_then_the_judge_size_then_the_other_prior() -> None:
    pruner: AutoPruner = registry.build(
        "pruner",
        "auto",
        {"judge_s_per_pair": 0.01, "embed_s_per_text": 0.01, "load_s": 1.5, "other_judge_s_per_pair": 1.0},
    )
    groups = _groups(10, 6)  # 60 pairs, D = 6, 16 texts: f = 0.06467
    assert pruner.decide(groups, judge=SizedJudge(REFERENCE_FLOPS_PER_TOKEN)) is False  # 0.0388 s vs 1.66 s
    assert pruner.decide(groups, judge=SizedJudge(None)) is True  # 1 s a pair: 3.88 s vs 1.66 s
    assert pruner.decide(groups, judge=SizedJudge(None), judge_s_per_pair=0.02) is False  # measured wins
    assert pruner.decide(groups, judge=SizedJudge(100 * REFERENCE_FLOPS_PER_TOKEN)) is True  # 100x: 1 s a pair
    made = pruner.stats()["decisions"]
    assert [d["prune"] for d in made] == [False, True, False, True]
    assert [d["judge_cost_from"].split(" ")[0] for d in made] == [
        "judge_s_per_pair",
        "other_judge_s_per_pair",
        "measured",
        "judge_s_per_pair",
    ]
    assert made[0]["judge_s_per_pair"] == 0.01 and made[3]["judge_s_per_pair"] == 1.0 and made[2]["texts"] == 16
    assert pruner.stats()["pruned_steps"] == 2


def test_select_follows_the_decision(monkeypatch: pytest.MonkeyPatch) -> None:
    pruner: AutoPruner = registry.build(
        "pruner", "auto", {"threshold": 0.3, "k": 1, "judge_s_per_pair": 0.012, "embed_s_per_text": 0.01, "load_s": 1.5}
    )
    assert (pruner.embedding.config.threshold, pruner.embedding.config.k) == (0.3, 1)
    groups = _groups(2, 60)  # f = 1 - 12.47 / 60: 0.792 * 120 * 0.012 = 1.14 s saved vs 0.62 + 1.5 s
    pairs = [p for g in groups for p in g]
    seen: list[int] = []

    def fake(ps: Any) -> tuple[list[Pair], list[Judgment]]:
        seen.append(len(ps))
        return list(ps[:1]), [Judgment(p, IRRELEVANT, None, "pruned", "fake") for p in ps[1:]]

    monkeypatch.setattr(pruner.embedding, "select", fake)
    assert pruner.decide(groups, judge=SizedJudge(REFERENCE_FLOPS_PER_TOKEN)) is False
    assert pruner.select(pairs) == (pairs, []) and seen == []
    assert pruner.decide(groups, judge=None, judge_s_per_pair=1e6) is True
    kept, pruned = pruner.select(pairs)
    assert kept == pairs[:1] and len(pruned) == 119 and seen == [120]
    assert pruner.stats()["kept_unpruned"] == 120


def test_a_measured_judge_of_known_size_scales_the_embedder_priors_alike() -> None:
    pruner: AutoPruner = registry.build(
        "pruner", "auto", {"judge_s_per_pair": 0.01, "embed_s_per_text": 0.01, "load_s": 1.5}
    )
    groups = _groups(2, 60)  # 120 pairs, 62 texts, f = 0.7922
    assert pruner.decide(groups, judge=SizedJudge(REFERENCE_FLOPS_PER_TOKEN)) is False  # 0.95 s vs 2.12 s
    # twice as slow a machine: every cost doubles and the choice stands
    assert pruner.decide(groups, judge=SizedJudge(REFERENCE_FLOPS_PER_TOKEN), judge_s_per_pair=0.02) is False
    first, second = pruner.stats()["decisions"]
    assert (second["embed_s_per_text"], second["load_s"]) == (0.02, 3.0)
    assert second["saving_s"] == pytest.approx(2 * first["saving_s"]) and second["cost_s"] == pytest.approx(4.24)
    # an unsized (LLM) judge measured slow says nothing of the machine: the embedder priors stay
    pruner.decide(groups, judge=SizedJudge(None), judge_s_per_pair=0.02)
    assert pruner.stats()["decisions"][-1]["embed_s_per_text"] == 0.01
