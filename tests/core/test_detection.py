"""Pair and detection metrics on hand-made predictions with hand-computed values."""

from __future__ import annotations

import pytest

from conflictscore_local.core.detection import detection_metrics, grouped_detection, pair_metrics, prf

S, C, IR = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def test_prf_edge_cases():
    assert prf(0, 0, 0) == {"precision": None, "recall": None, "f1": None}
    assert prf(0, 1, 1) == {"precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert prf(0, 0, 3) == {"precision": None, "recall": 0.0, "f1": 0.0}  # flagged nothing: F1 0, not undefined
    assert prf(0, 2, 0) == {"precision": 0.0, "recall": None, "f1": None}  # no gold positive: F1 undefined
    assert prf(3, 1, 0) == {"precision": 0.75, "recall": 1.0, "f1": pytest.approx(6 / 7)}


def test_pair_metrics_hand_computed():
    pairs = [(S, S), (S, C), (S, None), (C, C), (C, IR), (IR, IR), (IR, IR), (IR, S)]
    m = pair_metrics(pairs)
    assert m["n_pairs"] == 8 and m["n_scored"] == 7 and m["unscored"] == 1
    assert m["unscored_by_gold"] == {S: 1, C: 0, IR: 0}
    assert m["accuracy"] == pytest.approx(4 / 7)
    assert m["confusion"] == {S: {S: 1, C: 1, IR: 0}, C: {S: 0, C: 1, IR: 1}, IR: {S: 1, C: 0, IR: 2}}
    assert m["per_label"][S] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    assert m["per_label"][C] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "support": 2}
    assert m["per_label"][IR]["precision"] == pytest.approx(2 / 3)
    assert m["per_label"][IR]["recall"] == pytest.approx(2 / 3)
    assert m["macro_f1"] == pytest.approx((0.5 + 0.5 + 2 / 3) / 3)


def test_macro_f1_counts_labels_predicted_but_not_in_gold():
    # gold has no CONTRADICT; predicting it three times must cost: scikit-learn gives 0.4667
    m = pair_metrics([(S, S), (IR, IR), (IR, C), (IR, C), (IR, C)])
    assert m["per_label"][C]["f1"] is None  # undefined per label (no gold CONTRADICT) ...
    assert m["macro_f1"] == pytest.approx((1.0 + 0.4 + 0.0) / 3)  # ... but it counts 0 in the macro


def test_macro_f1_label_never_predicted_counts_zero():
    m = pair_metrics([(S, S), (C, S)])
    assert m["macro_f1"] == pytest.approx((2 / 3 + 0.0) / 2)


def test_accuracy_reports_coverage_and_counts_unscored_as_wrong():
    m = pair_metrics([(S, S)] + [(S, None)] * 9)
    assert m["accuracy"] == 1.0
    assert m["coverage"] == pytest.approx(0.1)
    assert m["accuracy_all"] == pytest.approx(0.1)


def test_pair_metrics_unknown_gold_label():
    with pytest.raises(ValueError, match="allowed: SUPPORT, CONTRADICT, IRRELEVANT"):
        pair_metrics([("support", S)])


def test_pair_metrics_all_unscored():
    m = pair_metrics([(S, None)])
    assert m["accuracy"] is None and m["macro_f1"] is None and m["unscored"] == 1
    assert m["coverage"] == 0.0 and m["accuracy_all"] == 0.0


def test_detection_grouped_hand_computed():
    rows = [
        {"gold": True, "pred": True, "conflict_type": "ambiguity", "source": "a"},
        {"gold": True, "pred": False, "conflict_type": "ambiguity", "source": "a"},
        {"gold": False, "pred": True, "conflict_type": "ambiguity", "source": "a"},
        {"gold": True, "pred": True, "conflict_type": "misinformation", "source": "b"},
        {"gold": False, "pred": True, "conflict_type": "none", "source": "b"},
        {"gold": False, "pred": False, "conflict_type": "none", "source": "b"},
        {"gold": False, "pred": False, "conflict_type": "none", "source": "a"},
    ]
    d = grouped_detection(rows, ["conflict_type", "source"])
    o = d["overall"]
    assert (o["tp"], o["fp"], o["fn"], o["tn"]) == (2, 2, 1, 2)
    assert o["precision"] == 0.5 and o["recall"] == pytest.approx(2 / 3) and o["f1"] == pytest.approx(4 / 7)
    assert o["false_positive_rate"] == 0.5 and o["n_claims"] == 7 and o["n_gold_conflicted"] == 3
    t = d["by_conflict_type"]
    assert (t["ambiguity"]["precision"], t["ambiguity"]["recall"], t["ambiguity"]["f1"]) == (0.5, 0.5, 0.5)
    assert t["ambiguity"]["false_positive_rate"] == 1.0
    assert t["misinformation"]["f1"] == 1.0 and t["misinformation"]["false_positive_rate"] is None
    assert t["none"]["recall"] is None and t["none"]["f1"] is None and t["none"]["precision"] == 0.0
    assert t["none"]["false_positive_rate"] == pytest.approx(1 / 3)
    s = d["by_source"]
    assert s["a"]["f1"] == 0.5 and s["b"]["recall"] == 1.0 and s["b"]["f1"] == pytest.approx(2 / 3)


def test_detection_no_claims():
    m = detection_metrics([])
    assert m["precision"] is None and m["recall"] is None and m["n_claims"] == 0


def test_macro_f1_is_scikit_learns_on_random_predictions():
    metrics = pytest.importorskip("sklearn.metrics")
    import random

    rng = random.Random(7)
    for n in (1, 2, 5, 40):
        for _ in range(50):
            labels = rng.sample([S, C, IR], rng.randint(1, 3))
            pairs = [(rng.choice(labels), rng.choice([S, C, IR])) for _ in range(n)]
            gold, pred = zip(*pairs)
            expected = metrics.f1_score(gold, pred, average="macro", zero_division=0)
            assert pair_metrics(pairs)["macro_f1"] == pytest.approx(expected), pairs


def test_one_detection_metric_entry_reaches_every_reader(tmp_path) -> None:
    """A new detection metric is one entry of ``DETECTION_METRICS``: the evaluation's every group, the
    terminal table of ``bench run`` and the report's detection table read it."""
    import json

    from conflictscore_local.backends.registry import REGISTRY
    from conflictscore_local.bench import make_item
    from conflictscore_local.bench.gold import evaluate, read_items_checked
    from conflictscore_local.cli.text import format_bench
    from conflictscore_local.core.detection import DetectionMetric
    from conflictscore_local.formats.results import read_results
    from conflictscore_local.report.data import load_inputs
    from conflictscore_local.report.render import render_html

    item = make_item(
        source="synthetic",
        id="b1",
        question=None,
        claims=["Sky is blue.", "Fire is hot."],
        documents=[{"id": "d0", "text": "yes"}, {"id": "d1", "text": "no"}],
        gold_labels=[["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"]],
        conflict_type="contradiction",
        split_key="k",
    )
    judged = [
        {"doc_id": "d0", "label": "SUPPORT", "probs": None, "source": "judge"},
        {"doc_id": "d1", "label": "CONTRADICT", "probs": None, "source": "judge"},
    ]
    row = {
        "id": "b1",
        "claims": [
            {"text": c, "support": ["d0"], "contradict": ["d1"], "irrelevant": [], "judgments": judged}
            for c in item["claims"]
        ],
    }
    (tmp_path / "b.jsonl").write_text(json.dumps(item) + "\n")
    (tmp_path / "p.jsonl").write_text(json.dumps(row) + "\n")
    items, results = read_items_checked(tmp_path / "b.jsonl"), read_results(tmp_path / "p.jsonl")
    fp_share = DetectionMetric(
        "fp_share",
        "false-positive share",
        "FPS",
        "FP / claims",
        False,
        lambda c: c["fp"] / sum(c.values()) if sum(c.values()) else None,
    )
    with REGISTRY["detection_metric"].registered("fp_share", fp_share):
        ev = evaluate(items, results)
        assert ev["detection"]["overall"]["fp_share"] == 0.5  # TP 1 (the real conflict), FP 1 of 2 claims
        assert ev["detection"]["by_conflict_type"]["contradiction"]["fp_share"] == 0.5
        summary = {
            "n_items": 1,
            "n_claims": 2,
            "macro": {},
            "micro": {},
            "config": {},
            "bench": {"split": None, "given_labels": False},
            "evaluation": ev,
        }
        head, overall = format_bench(summary).splitlines()[2:4]
        assert head.split()[1:6] == ["P", "R", "F1", "FPR", "FPS"] and overall.split()[5] == "0.500"
        page = render_html(load_inputs(tmp_path / "p.jsonl", items=tmp_path / "b.jsonl", summary=summary))
        assert 'title="FP / claims">false-positive share</th>' in page
        assert '<td class="num" data-field="fp_share">0.500</td>' in page
    assert "fp_share" not in evaluate(items, results)["detection"]["overall"]
