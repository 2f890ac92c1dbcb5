"""Metric conventions: labels without probabilities and ``aggregate.threshold``; one
document on both sides (``keep_both``) and the conflict definition ConflictBench gold uses."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from conflictscore_local import Engine, RunConfig, parse_item
from conflictscore_local.bench.gold import evaluate
from conflictscore_local.core.aggregate import claim_verdict, document_judgment
from conflictscore_local.core.metrics import item_metrics
from conflictscore_local.core.types import Claim, DocJudgment, ItemResult, Judgment, Pair, Passage
from conflictscore_local.judge._base import JudgeBase

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def pj(idx: int, label: str | None, probs: dict | None = None) -> Judgment:
    pair = Pair(Claim("x", 0, "c"), Passage("x", "d", idx, f"p{idx}"))
    return Judgment(pair, label, probs, "judge")  # type: ignore[arg-type]


def test_a_label_without_probabilities_is_not_subject_to_the_threshold() -> None:
    text_c = pj(0, C)  # an LLM reply read from its text: no probabilities
    d = document_judgment("d", [text_c, pj(1, I, {S: 0.1, C: 0.1, I: 0.8})], threshold=0.9)
    assert (d.label, d.probs, d.passage) == (C, None, 0)
    weak = pj(0, C, {S: 0.2, C: 0.5, I: 0.3})
    assert document_judgment("d", [weak], threshold=0.9).label == I  # probabilities: the threshold applies


def test_a_label_without_probabilities_ranks_below_any_probabilistic_one() -> None:
    # before: the text label counted as p = 1.0 and beat a passage the judge gave p(SUPPORT) = 0.55
    ps = [pj(0, S, {S: 0.55, C: 0.40, I: 0.05}), pj(1, C)]
    assert document_judgment("d", ps).label == S
    assert document_judgment("d", list(reversed(ps))).label == S
    # ... unless the probabilistic one is below the threshold: then the text label is the only side
    assert document_judgment("d", ps, threshold=0.6).label == C
    # two labels without probabilities: a tie, CONTRADICT wins (as for equal probabilities)
    assert document_judgment("d", [pj(0, S), pj(1, C)]).label == C
    assert document_judgment("d", [pj(0, S, {S: 0.6, C: 0.3, I: 0.1}), pj(1, C, {S: 0.3, C: 0.6, I: 0.1})]).label == C
    both = document_judgment("d", [pj(0, S), pj(1, C, {S: 0.1, C: 0.7, I: 0.2})], keep_both=True)
    assert both.both and both.note == "also SUPPORT by passage 0 (no probabilities)"


class TextJudge(JudgeBase):
    """Reads like an LLM judge whose server returned no logprobs: 'yes: <claim>' → SUPPORT,
    'no: <claim>' → CONTRADICT, else IRRELEVANT, all without probabilities."""

    name = "text"
    role = "judge"

    @dataclasses.dataclass(frozen=True)
    class Config:
        pass

    def judge(self, pairs: Sequence[Pair], on_progress: Any = None) -> list[Judgment]:
        out = []
        for p in pairs:
            text, claim = p.passage.text.lower(), p.claim.text.lower().rstrip(".")
            label = C if f"no: {claim}" in text else S if f"yes: {claim}" in text else I
            out.append(Judgment(p, label, None))  # type: ignore[arg-type]
        return out

    def spec(self) -> dict:
        return {"name": "text"}

    def passage_budget(self) -> None:
        return None


def test_the_summary_counts_sided_labels_without_probabilities(register_backend: Any) -> None:
    register_backend("judge", "text", TextJudge)
    docs = [
        {"id": "d0", "text": "yes: sky is blue"},
        {"id": "d1", "text": "no: sky is blue"},
        {"id": "d2", "text": "cats"},
    ]
    it = parse_item({"id": "a", "claims": ["Sky is blue."], "documents": docs})
    cfg = RunConfig.from_mapping(
        {
            "judge": {"name": "text"},
            "pruner": {"name": "none"},
            "aggregate": {"threshold": 0.9},
            "cache": {"enabled": False},
        }
    )
    with Engine(cfg) as engine:
        (res,), report = engine.score_all([it])
    v = res.verdicts[0]
    assert (v.support, v.contradict, v.conflicted) == (("d0",), ("d1",), True)
    assert report.stages["labels"] == {S: 1, C: 1, I: 1, "unscored": 0, "sided_without_probs": 2}
    given = parse_item(
        {
            "id": "g",
            "claims": ["x"],
            "labels": [[S, C]],
            "documents": [{"id": "a", "text": "t"}, {"id": "b", "text": "u"}],
        }
    )
    with Engine(cfg) as engine:
        _, report = engine.score_all([given])
    assert report.stages["labels"]["sided_without_probs"] == 0  # given labels are no model's


def test_one_document_on_both_sides_does_not_make_a_conflict() -> None:
    both = DocJudgment("A", C, {S: 0.4, C: 0.5, I: 0.1}, "judge", both=True)
    v = claim_verdict(Claim("x", 0, "c"), [both, DocJudgment("B", I, None, "judge")])
    assert (v.support, v.contradict, v.ratio) == (("A",), ("A",), 0.5)
    assert not v.conflicted  # before: conflicted, though ConflictBench gold needs two documents
    m = item_metrics((v,))
    assert (m.cs_c, m.cs_r, m.cs_r_evidenced, m.support_rate) == (0.0, None, 0.5, 1.0)
    # with a second document taking a side, the conflict is between two documents
    v2 = claim_verdict(Claim("x", 0, "c"), [both, DocJudgment("B", C, None, "judge")])
    assert (v2.support, v2.contradict, v2.conflicted) == (("A",), ("A", "B"), True)
    v3 = claim_verdict(Claim("x", 0, "c"), [both, DocJudgment("B", S, None, "judge")])
    assert (v3.support, v3.contradict, v3.conflicted) == (("A", "B"), ("A",), True)


def test_bench_detection_and_the_score_agree_on_keep_both() -> None:
    """A one-document claim whose document supports and contradicts it: gold says not
    conflicted (one document), and so does the prediction."""
    it = parse_item({"id": "q", "claims": ["c"], "documents": [{"id": "A", "text": "t"}, {"id": "B", "text": "u"}]})
    it = dataclasses.replace(
        it,
        meta={
            "gold_labels": [[C, I]],
            "gold_conflicted": [False],
            "conflict_type": "none",
            "source": "s",
            "split": "test",
        },
    )
    both = DocJudgment("A", C, {S: 0.4, C: 0.5, I: 0.1}, "judge", both=True)
    v = claim_verdict(Claim("q", 0, "c"), [both, DocJudgment("B", I, None, "judge")])
    det = evaluate([it], [ItemResult("q", (v,), item_metrics((v,)))])["detection"]["overall"]
    assert (det["tp"], det["fp"], det["fn"], det["tn"]) == (0, 0, 0, 1)


def _tj(idx: int, claim: str, text: str, label: str, probs: dict | None) -> Judgment:
    return Judgment(Pair(Claim("x", 0, claim), Passage("x", "d", idx, text)), label, probs, "judge")  # type: ignore[arg-type]


def test_document_rules_decide_who_may_take_a_side() -> None:
    claim = "Pierre Dupont was born in 1901 in Lyon."
    birth = _tj(0, claim, "Pierre Dupont was born in Lyon in 1901.", S, {S: 0.80, C: 0.05, I: 0.15})
    sons = _tj(1, claim, "Pierre Dupont had two sons, who ran the family firm.", C, {S: 0.01, C: 0.95, I: 0.04})
    # max: the most confident side wins, the off-topic passage about the sons
    assert document_judgment("d", [birth, sons]).label == C
    # relevant: only the passage with the lowest p(IRRELEVANT) (0.04, the sons) may decide
    assert document_judgment("d", [birth, sons], rule="relevant").label == C
    # on_topic: "pierre" and "dupont" are in every passage; the sons share no other claim word
    d = document_judgment("d", [birth, sons], rule="on_topic")
    assert (d.label, d.passage) == (S, 0)
    # a judge that knows the sons' passage is off topic: relevant picks the birth passage
    sons_irr = _tj(1, claim, sons.pair.passage.text, C, {S: 0.01, C: 0.60, I: 0.39})
    assert document_judgment("d", [birth, sons_irr], rule="relevant").label == S
    # ties on p(IRRELEVANT) all stay, then the usual ranking (CONTRADICT 0.6 over SUPPORT 0.5)
    a = _tj(0, claim, "x", S, {S: 0.5, C: 0.3, I: 0.2})
    b = _tj(1, claim, "y", C, {S: 0.2, C: 0.6, I: 0.2})
    assert document_judgment("d", [a, b], rule="relevant").label == C
    # one passage: every rule is the same
    for rule in ("max", "relevant", "on_topic"):
        assert document_judgment("d", [sons], rule=rule).label == C
    try:
        document_judgment("d", [sons], rule="vote")
    except ValueError as e:
        assert str(e) == "document rule 'vote'; allowed: max, relevant, on_topic"
    else:
        raise AssertionError("an unknown rule must be refused")


def test_on_topic_without_any_distinctive_passage_is_irrelevant() -> None:
    claim = "Acme was founded in 1901."
    ps = [
        _tj(0, claim, "Acme makes anvils.", C, {S: 0.1, C: 0.7, I: 0.2}),
        _tj(1, claim, "Acme sells anvils worldwide.", S, {S: 0.6, C: 0.1, I: 0.3}),
    ]
    assert document_judgment("d", ps, rule="on_topic").label == I  # only "acme" is shared, and every passage has it


def test_passages_within_a_tie_decide_by_index_whatever_their_last_decimal() -> None:
    """Float noise of a batch moves a judge's sixth decimal by one: within ``TIE`` two passages
    are tied, so which of them decides does not depend on the batch they were judged in."""
    from conflictscore_local.core.aggregate import TIE

    assert 1e-6 < TIE < 2e-6
    claim = "The bridge opened in 1932."
    # relevant: p(IRRELEVANT) 0.100001 and 0.100000 are tied, so both may take a side;
    # without the tie only passage 1 (CONTRADICT 0.7) would, and the label would be CONTRADICT
    sup = _tj(0, claim, "opened in 1932", S, {S: 0.85, C: 0.049999, I: 0.100001})
    con = _tj(1, claim, "opened in 1934", C, {S: 0.2, C: 0.7, I: 0.1})
    for order in ([sup, con], [con, sup]):
        assert document_judgment("d", order, rule="relevant").label == S
    # 2e-6 apart is not a tie: only the lower p(IRRELEVANT) passage may decide
    far = _tj(0, claim, "opened in 1932", S, {S: 0.85, C: 0.049998, I: 0.100002})
    assert document_judgment("d", [far, con], rule="relevant").label == C
    # one side, two passages 1e-6 apart: the lower index decides, whichever is higher
    a = _tj(0, claim, "a", S, {S: 0.900000, C: 0.05, I: 0.05})
    b = _tj(1, claim, "b", S, {S: 0.900001, C: 0.05, I: 0.049999})
    assert document_judgment("d", [a, b]).passage == 0
    assert document_judgment("d", [b, a]).passage == 0  # by index, not by the order given
    assert document_judgment("d", [a, _tj(1, claim, "b", S, {S: 0.900002, C: 0.05, I: 0.049998})]).passage == 1
    # both sides within a tie: CONTRADICT, as for equal probabilities
    s, c = _tj(0, claim, "s", S, {S: 0.600001, C: 0.3, I: 0.099999}), _tj(1, claim, "c", C, {S: 0.3, C: 0.6, I: 0.1})
    assert document_judgment("d", [s, c]).label == C
    # every passage IRRELEVANT: the nearest to a side within a tie, then the lower index
    i0 = _tj(0, claim, "i0", I, {S: 0.2, C: 0.1, I: 0.7})
    i1 = _tj(1, claim, "i1", I, {S: 0.200001, C: 0.1, I: 0.699999})
    assert document_judgment("d", [i0, i1]).passage == 0
