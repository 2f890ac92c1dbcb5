"""``benchmarks/judge/judge_decision.py``: arg-max unless the thresholds raise the dev mean and break no sanity pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def jd() -> Any:
    from benchmarks.judge import judge_decision

    return judge_decision


def _eval(argmax: tuple[float, float], thresholds: tuple[float, float]) -> dict[str, Any]:
    sets = {
        name: {"argmax": {"macro_f1": a}, "calibrated": {"macro_f1": t}}
        for name, a, t in zip(("bench_dev", "healthver_dev"), argmax, thresholds)
    }
    return {
        "document_rule_in_force": "max",
        "document_rules": {
            "best": "max",
            "rules": {"max": {"thresholds": {"SUPPORT": 0.4, "CONTRADICT": 0.3}, "sets": sets}},
        },
    }


def _sanity(wrong: dict[str, str], accuracy: float) -> dict[str, Any]:
    return {
        "summary": {"overall": {"accuracy": accuracy}, "errors": [{"id": k, "predicted": v} for k, v in wrong.items()]}
    }


def test_thresholds_that_raise_the_dev_mean_and_break_no_sanity_pair_are_kept(jd: Any) -> None:
    dev = jd.dev_means(_eval((0.60, 0.70), (0.64, 0.70)))
    assert dev["mean"] == {"argmax": 0.65, "thresholds": 0.67}
    d = jd.decide(dev, _sanity({"a": "SUPPORT"}, 0.9), _sanity({"a": "SUPPORT", "b": "IRRELEVANT"}, 0.8))
    assert d["rule"] == "thresholds" and d["thresholds"] == {"SUPPORT": 0.4, "CONTRADICT": 0.3}
    assert (d["sanity_broken"], d["sanity_fixed"]) == ([], ["b"])


def test_arg_max_stays_when_the_thresholds_break_a_pair_or_do_not_raise_the_mean(jd: Any) -> None:
    dev = jd.dev_means(_eval((0.60, 0.70), (0.64, 0.70)))
    d = jd.decide(dev, _sanity({"a": "SUPPORT", "c": "CONTRADICT"}, 0.9), _sanity({"a": "SUPPORT"}, 0.95))
    assert d["rule"] == "argmax" and d["thresholds"] is None and d["sanity_broken"] == ["c"]
    assert "arg-max gets right and the thresholds get wrong: 1 (c)" in d["why"]
    flat = jd.dev_means(_eval((0.60, 0.70), (0.60, 0.70)))
    assert jd.decide(flat, _sanity({}, 1.0), _sanity({}, 1.0))["rule"] == "argmax"


def test_apply_writes_the_rule_and_drops_the_thresholds_for_arg_max(jd: Any, tmp_path: Path) -> None:
    (tmp_path / "conflictscore.json").write_text(
        json.dumps({"format": 1, "max_length": 192, "thresholds": {"SUPPORT": 0.45, "CONTRADICT": 0.3}})
    )
    evals, t, a = (tmp_path / n for n in ("eval.json", "t.json", "a.json"))
    evals.write_text(json.dumps(_eval((0.6, 0.7), (0.6, 0.69))))
    t.write_text(json.dumps(_sanity({}, 1.0)))
    a.write_text(json.dumps(_sanity({}, 1.0)))
    assert (
        jd.main(
            [
                "--eval",
                str(evals),
                "--sanity",
                str(t),
                "--sanity-argmax",
                str(a),
                "--model",
                str(tmp_path),
                "--tag",
                "t",
                "--apply",
                "--out-dir",
                str(tmp_path),
            ]
        )
        == 0
    )
    cfg = json.loads((tmp_path / "conflictscore.json").read_text())
    assert "thresholds" not in cfg and cfg["decision_rule"]["rule"] == "argmax" and cfg["max_length"] == 192
    assert json.loads((tmp_path / "judge_decision_t.json").read_text())["decision"]["rule"] == "argmax"


def _bench_files(tmp_path: Path, preds: dict[str, list[list[bool]]], gold: list[list[bool]]) -> dict[str, Path]:
    """A benchmark of len(gold) items and, per tag, a bench run output predicting ``preds[tag]``."""
    bench = tmp_path / "bench.jsonl"
    bench.write_text("".join(json.dumps({"id": f"i{n}", "gold_conflicted": g}) + "\n" for n, g in enumerate(gold)))
    runs = {}
    for tag, pred in preds.items():
        runs[tag] = tmp_path / f"run_{tag}.jsonl"
        runs[tag].write_text(
            "".join(
                json.dumps({"id": f"i{n}", "claims": [{"conflicted": c} for c in p]}) + "\n" for n, p in enumerate(pred)
            )
        )
    return {"bench": bench, **runs}


def test_the_paired_f1_difference_is_exact_on_the_items_and_zero_for_equal_runs(tmp_path: Path) -> None:
    from benchmarks.judge import judge_ship as ship

    gold = [[True, False], [True], [False], [True, True]]
    # new: TP 3 (i0, i1, i3a), FP 0, FN 1 -> F1 6/7; old: TP 2 (i0, i3a), FP 1 (i2), FN 2 -> F1 4/7
    f = _bench_files(
        tmp_path,
        {
            "new": [[True, False], [True], [False], [True, False]],
            "old": [[True, False], [False], [True], [True, False]],
        },
        gold,
    )
    new, old = (ship.claims_by_item(f["bench"], f[t]) for t in ("new", "old"))
    assert new["i0"] == [(True, True), (False, False)] and old["i2"] == [(False, True)]
    d = ship.paired_f1_difference(new, old, resamples=200)
    assert d["difference"] == pytest.approx(6 / 7 - 4 / 7) and (d["items"], d["claims"]) == (4, 6)
    assert d["interval95"][0] <= d["difference"] <= d["interval95"][1]
    same = ship.paired_f1_difference(old, old, resamples=50)
    assert same["difference"] == 0 and same["interval95"] == [0.0, 0.0]


def test_a_run_of_other_items_is_refused_naming_its_line(tmp_path: Path) -> None:
    from benchmarks.judge import judge_ship as ship

    f = _bench_files(tmp_path, {"x": [[True], [False, True]]}, [[True], [False]])
    with pytest.raises(SystemExit, match=r"run_x.jsonl:2: item 'i1' is not in .* with 2 claims"):
        ship.claims_by_item(f["bench"], f["x"])


def test_the_ship_gate_needs_sanity_and_general_inference_higher_and_no_bench_loss_beyond_noise(tmp_path: Path) -> None:
    from benchmarks.judge import judge_ship as ship

    real = json.loads(
        (ship.RESULTS / "conflictbench_default-judge-v2.json").read_text()
    )  # a recorded bench run summary
    for tag, f1, acc, anchor in (("new", 0.69, 0.70, 0.6), ("old", 0.70, 0.54, 0.5), ("worse", 0.78, 0.50, 0.7)):
        real["detection"]["overall"]["f1"] = f1
        (tmp_path / f"conflictbench_default-judge-{tag}.json").write_text(json.dumps(real))
        (tmp_path / f"judge_sanity_{tag}.json").write_text(json.dumps({"summary": {"overall": {"accuracy": acc}}}))
        anchors = {
            "anchors": {
                "esnli_test": {"shipped": {"accuracy": anchor}},
                "mpe_test": {"shipped": {"accuracy": 0}},
                "anli": {"shipped": {"accuracy": 1}},
            }
        }
        for name in (f"judge_eval_{tag}.json", f"judge_eval_{tag}-newdata.json", f"judge_eval_{tag}-worsedata.json"):
            (tmp_path / name).write_text(json.dumps(anchors))
    gold = [[True], [True], [False], [True], [False]]
    f = _bench_files(
        tmp_path,
        {
            "new": [[True], [False], [False], [True], [False]],
            "old": [[True], [True], [False], [True], [False]],
            "worse": [[True], [True], [False], [True], [False]],
        },
        gold,
    )
    common = [
        "--old",
        "old",
        "--bench",
        str(f["bench"]),
        "--results",
        str(tmp_path),
        "--run",
        f"old={f['old']}",
        "--run",
        f"new={f['new']}",
        "--run",
        f"worse={f['worse']}",
    ]
    # new loses one true conflict of five items: F1 0.8 against 1.0, an interval that still reaches 0
    assert ship.main(["--new", "new", *common]) == 0
    verdict = json.loads((tmp_path / "judge_ship_new.json").read_text())
    bench = verdict["figures"]["conflictbench_test_detection_f1"]
    assert bench["passes"] and not bench["higher"] and bench["paired"]["interval95"][1] >= 0
    assert verdict["until_2026_12_04"] == {
        "rule": "strictly higher ConflictBench test detection F1 and sanity accuracy",
        "ships": False,
        "held_back_by": ["conflictbench_test_detection_f1"],
    }
    assert ship.main(["--new", "worse", *common]) == 1
    verdict = json.loads((tmp_path / "judge_ship_worse.json").read_text())
    assert verdict["held_back_by"] == ["sanity_accuracy"]
    assert verdict["figures"]["general_anchor_accuracy"] == {"new": 0.35, "old": 0.25, "higher": True, "passes": True}


def test_the_gate_reads_each_judge_under_the_rule_it_ships_and_the_old_judges_own_run_of_the_same_anchors(
    tmp_path: Path,
) -> None:
    from benchmarks.judge import judge_ship as ship

    real = json.loads((ship.RESULTS / "conflictbench_default-judge-v2.json").read_text())
    anchors = {
        "esnli_test": {"units": 10, "of": 10, "argmax": {"accuracy": 0.8}, "shipped": {"accuracy": 0.7}},
        "taxinli": {"units": 4, "of": 4, "argmax": {"accuracy": 0.6}, "shipped": {"accuracy": 0.5}},
    }
    for tag in ("a", "b"):
        (tmp_path / f"conflictbench_default-judge-{tag}.json").write_text(json.dumps(real))
        (tmp_path / f"judge_sanity_{tag}.json").write_text(json.dumps({"summary": {"overall": {"accuracy": 0.5}}}))
        (tmp_path / f"judge_eval_{tag}.json").write_text(json.dumps({"anchors": anchors}))
    # a chose arg-max (its argmax column: mean 0.7); b has no decision file: the thresholds it was evaluated with
    (tmp_path / "judge_decision_a.json").write_text(json.dumps({"decision": {"rule": "argmax"}}))
    assert ship.figures(tmp_path, "a", "a")["general_anchor_accuracy"] == pytest.approx(0.7)
    # b is the old judge with no run on a's data: its own run serves, the same anchors
    assert ship.eval_file(tmp_path, "b", "a").name == "judge_eval_b.json"
    assert ship.figures(tmp_path, "b", "a")["general_anchor_accuracy"] == pytest.approx(0.6)
    (tmp_path / "judge_decision_b.json").write_text(json.dumps({"decision": {"rule": "thresholds"}}))
    assert ship.figures(tmp_path, "b", "a")["general_anchor_accuracy"] == pytest.approx(0.6)
    # the old judge that ships arg-max is read under arg-max too (v5 against v51)
    (tmp_path / "judge_decision_b.json").write_text(json.dumps({"decision": {"rule": "argmax"}}))
    assert ship.figures(tmp_path, "b", "a")["general_anchor_accuracy"] == pytest.approx(0.7)
    # ... and not when it judged another sample of an anchor
    other = {**anchors, "taxinli": {**anchors["taxinli"], "units": 3}}
    (tmp_path / "judge_eval_b.json").write_text(json.dumps({"anchors": other}))
    with pytest.raises(SystemExit, match=r"b and a judged different taxinli anchors .* judge_eval --tag b-adata"):
        ship.figures(tmp_path, "b", "a")
    # a run on a's data wins over b's own
    mine = {k: {**v, "argmax": {"accuracy": 0.4}} for k, v in anchors.items()}
    (tmp_path / "judge_eval_b-adata.json").write_text(json.dumps({"anchors": mine}))
    assert ship.eval_file(tmp_path, "b", "a").name == "judge_eval_b-adata.json"
    assert ship.figures(tmp_path, "b", "a")["general_anchor_accuracy"] == pytest.approx(0.4)
