"""Hand-computed ConflictScore values: the numbers every report goes through."""

from __future__ import annotations

from fractions import Fraction

import pytest

from conflictscore_local.core.aggregate import claim_verdict, document_judgment
from conflictscore_local.core.metrics import bootstrap_ci, item_metrics, macro, micro, pair_counts
from conflictscore_local.core.types import Claim, DocJudgment, ItemResult, Judgment, Pair, Passage

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def verdicts(matrix: list[list[str | None]], item: str = "x") -> tuple:
    out = []
    for i, row in enumerate(matrix):
        djs = [DocJudgment(f"d{j + 1}", lab, None, "given") for j, lab in enumerate(row)]  # type: ignore[arg-type]
        out.append(claim_verdict(Claim(item, i, f"c{i + 1}"), djs))
    return tuple(out)


def result(matrix: list[list[str | None]], item: str = "x") -> ItemResult:
    vs = verdicts(matrix, item)
    return ItemResult(item, vs, item_metrics(vs))


WORKED = [[S, C, I], [S, S, C], [S, I, I], [I, I, I]]


def test_worked_example_from_design():
    vs = verdicts(WORKED)
    assert [v.conflicted for v in vs] == [True, True, False, False]
    assert [v.ratio for v in vs] == [0.5, pytest.approx(1 / 3), 0.0, None]
    assert vs[1].support == ("d1", "d2") and vs[1].contradict == ("d3",) and vs[1].irrelevant == ()
    m = item_metrics(vs)
    assert m.n_claims == 4
    assert m.cs_c == 0.5
    assert m.cs_r == pytest.approx(float(Fraction(5, 12)), abs=1e-15)
    assert m.cs_r_evidenced == pytest.approx(float(Fraction(5, 18)), abs=1e-15)
    assert m.support_rate == 0.75


def test_no_conflict_item():
    m = item_metrics(verdicts([[S, S, I], [I, S, I], [C, I, I]]))
    assert (m.cs_c, m.cs_r, m.support_rate) == (0.0, None, pytest.approx(2 / 3))
    # evidenced claims: ratios 0, 0, 1
    assert m.cs_r_evidenced == pytest.approx(1 / 3)


def test_nine_to_one_split_both_ways():
    nine_support = item_metrics(verdicts([[S] * 9 + [C]]))
    assert nine_support.cs_c == 1.0
    assert nine_support.cs_r == pytest.approx(0.1)
    assert nine_support.support_rate == 1.0
    nine_contra = item_metrics(verdicts([[S] + [C] * 9]))
    assert nine_contra.cs_r == pytest.approx(0.9)
    # a pooled metric says "supported" in both cases; CS-R tells them apart
    assert nine_support.support_rate == nine_contra.support_rate


def test_empty_response_has_no_metrics():
    m = item_metrics(())
    assert (m.n_claims, m.cs_c, m.cs_r, m.cs_r_evidenced, m.support_rate) == (0, None, None, None, None)


def test_claims_without_documents_are_unevidenced():
    m = item_metrics(verdicts([[], []]))
    assert (m.cs_c, m.cs_r, m.cs_r_evidenced, m.support_rate) == (0.0, None, None, 0.0)


def test_unscored_documents_are_skipped_and_counted():
    r = result([[S, None, C], [None, None, None]])
    assert r.verdicts[0].unscored == ("d2",)
    assert r.verdicts[0].ratio == 0.5
    assert r.metrics.cs_c == 0.5 and r.metrics.cs_r_evidenced == 0.5
    counts = pair_counts([r])
    assert counts["total"] == 6 and counts["unscored"] == 4 and counts["given"] == 6


def test_macro_vs_micro():
    a = result(WORKED, "a")  # cs_c 2/4, conflicted ratios 1/2, 1/3
    b = result([[S] * 9 + [C]], "b")  # cs_c 1/1, ratio 1/10
    empty = ItemResult("e", (), item_metrics(()))
    ms = [a.metrics, b.metrics, empty.metrics]
    mac = macro(ms)
    assert mac["cs_c"] == pytest.approx((0.5 + 1.0) / 2)
    assert mac["cs_r"] == pytest.approx((5 / 12 + 0.1) / 2)
    assert mac["support_rate"] == pytest.approx((0.75 + 1.0) / 2)
    mic = micro([a, b, empty])
    assert mic["cs_c"] == pytest.approx(3 / 5)
    assert mic["cs_r"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 10) / 3)
    assert mic["cs_r_evidenced"] == pytest.approx((1 / 2 + 1 / 3 + 0 + 1 / 10) / 4)
    assert mic["support_rate"] == pytest.approx(4 / 5)


def _pj(idx: int, label: str | None, probs: dict | None = None, note: str | None = None) -> Judgment:
    pair = Pair(Claim("x", 0, "c"), Passage("x", "d", idx, f"p{idx}"), similarity=0.5)
    return Judgment(pair, label, probs, "judge", note)  # type: ignore[arg-type]


def test_document_label_from_passages():
    d = document_judgment("d", [_pj(0, I), _pj(1, C, {S: 0.1, C: 0.8, I: 0.1})])
    assert (d.label, d.passage, d.n_passages) == (C, 1, 2)
    assert d.similarity == 0.5


def test_document_with_both_sides_takes_higher_probability_or_keeps_both():
    ps = [_pj(0, S, {S: 0.7, C: 0.2, I: 0.1}), _pj(1, C, {S: 0.05, C: 0.9, I: 0.05})]
    d = document_judgment("d", ps)
    assert (d.label, d.passage, d.both) == (C, 1, False)
    both = document_judgment("d", ps, keep_both=True)
    assert both.both and both.label == C
    v = claim_verdict(Claim("x", 0, "c"), [both])
    assert v.support == ("d",) and v.contradict == ("d",) and not v.conflicted  # one document: no conflict


def test_document_threshold():
    ps = [_pj(0, C, {S: 0.3, C: 0.4, I: 0.3}), _pj(1, I)]
    assert document_judgment("d", ps).label == C
    assert document_judgment("d", ps, threshold=0.5).label == I


def test_unscored_passage_makes_document_unscored_unless_another_takes_a_side():
    assert document_judgment("d", [_pj(0, I), _pj(1, None, note="timeout")]).label is None
    assert document_judgment("d", [_pj(0, I), _pj(1, None, note="timeout")]).note == "timeout"
    assert document_judgment("d", [_pj(0, S), _pj(1, None, note="timeout")]).label == S


def test_bootstrap_interval():
    ms = [item_metrics(verdicts(m)) for m in ([[S, C]], [[S, I]], [[S, I], [C, I]], [[C, I]])]
    ci = bootstrap_ci(ms, n_resamples=500, seed=3)
    lo, hi = ci["cs_c"]  # type: ignore[misc]
    assert 0.0 <= lo < macro(ms)["cs_c"] < hi <= 1.0  # type: ignore[operator]
    assert ci == bootstrap_ci(ms, n_resamples=500, seed=3)
    assert ci["cs_r"] is None  # one item only has a cs_r
    same = [item_metrics(verdicts([[S, C]]))] * 5
    assert bootstrap_ci(same)["cs_c"] == (1.0, 1.0)


def test_bootstrap_hand_checked_with_a_fixed_seed():
    """Values 0, 0.5, 1; 5 resamples from numpy's PCG64 seeded 7, whose index draws are
    [2,1,2] [2,1,2] [2,0,0] [0,0,2] [2,0,1]: means 5/6, 5/6, 1/3, 1/3, 1/2, sorted
    1/3 1/3 1/2 5/6 5/6. A 30% interval takes the 35% and 65% quantiles, at positions
    0.35·4 = 1.4 and 0.65·4 = 2.6: 1/3 + 0.4·(1/2 − 1/3) = 0.4 and 1/2 + 0.6·(5/6 − 1/2) = 0.7."""
    from conflictscore_local.core.types import ItemMetrics

    ms = [ItemMetrics(1, {"cs_c": v}) for v in (0.0, 0.5, 1.0)]
    ci = bootstrap_ci(ms, n_resamples=5, level=0.3, seed=7)
    assert ci["cs_c"] == pytest.approx((0.4, 0.7), abs=1e-12)
    assert ci["cs_r"] is None and ci["support_rate"] is None
    assert bootstrap_ci(ms, n_resamples=0)["cs_c"] is None


@pytest.mark.parametrize("levels", [7, 900])  # few distinct values: multinomial counts; many: index draws
def test_bootstrap_of_many_items_in_blocks(monkeypatch, levels: int):
    """Many items: resamples come a block at a time (the blocks give what one draw would),
    and the interval is close to the normal one for a mean, m ± 1.96·sd/√n."""
    from conflictscore_local.core import metrics
    from conflictscore_local.core.types import ItemMetrics

    n = 8000
    ms = [ItemMetrics(1, {"cs_c": (i % levels) / (levels - 1)}) for i in range(n)]
    whole = bootstrap_ci(ms, n_resamples=400, seed=1)["cs_c"]
    monkeypatch.setattr(metrics, "BOOTSTRAP_BLOCK", 3 * max(levels, n) if levels * 8 > n else 3 * levels)
    assert bootstrap_ci(ms, n_resamples=400, seed=1)["cs_c"] == pytest.approx(whole, rel=1e-12)
    vals = [m.cs_c for m in ms]
    mean = sum(vals) / n
    half = 1.96 * (sum((v - mean) ** 2 for v in vals) / n) ** 0.5 / n**0.5  # type: ignore[operator]
    lo, hi = whole  # type: ignore[misc]
    assert lo == pytest.approx(mean - half, abs=0.2 * half) and hi == pytest.approx(mean + half, abs=0.2 * half)


def test_irrelevant_document_reports_its_most_similar_passage():
    def pruned(idx: int, sim: float) -> Judgment:
        pair = Pair(Claim("x", 0, "c"), Passage("x", "d", idx, f"p{idx}"), similarity=sim)
        return Judgment(pair, I, None, "pruned")

    d = document_judgment("d", [pruned(0, 0.05), pruned(1, 0.12), pruned(2, 0.01)])
    assert (d.label, d.source, d.passage, d.similarity) == (I, "pruned", 1, 0.12)


def test_deciding_passage_span_is_recorded_and_round_trips():
    def at(idx: int, span: tuple[int, int], label: str, p: float) -> Judgment:
        pair = Pair(Claim("x", 0, "c"), Passage("x", "d", idx, f"p{idx}", span))
        return Judgment(pair, label, {S: p if label == S else 0.0, C: p if label == C else 0.0, I: 1 - p})  # type: ignore[arg-type]

    d = document_judgment("d", [at(0, (0, 40), I, 0.1), at(1, (31, 77), C, 0.8)])
    assert (d.passage, d.passage_span) == (1, (31, 77))
    assert d.to_json()["passage_span"] == [31, 77]
    assert DocJudgment.from_json(d.to_json()) == d
    whole = document_judgment("d", [at(0, (0, 12), S, 0.9)])
    assert whole.passage_span is None and "passage_span" not in whole.to_json()


def test_bootstrap_mean_ci_is_the_macro_bootstrap_of_plain_values():
    from conflictscore_local.core.metrics import bootstrap_ci, bootstrap_mean_ci
    from conflictscore_local.core.types import ItemMetrics

    values = [1, 0, 1, 1, 0, 1, 0, 1]
    ci = bootstrap_mean_ci(values, n_resamples=500, seed=3)
    as_items = [ItemMetrics(1, {"cs_c": float(v)}) for v in values]
    assert ci == bootstrap_ci(as_items, n_resamples=500, seed=3)["cs_c"]
    assert 0.0 <= ci[0] < 5 / 8 < ci[1] <= 1.0
    assert bootstrap_mean_ci([True, True, True]) == (1.0, 1.0)
    assert bootstrap_mean_ci([1]) is None and bootstrap_mean_ci([]) is None
