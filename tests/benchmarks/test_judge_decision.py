"""``benchmarks/judge_decision.py``: arg-max unless the thresholds raise the dev mean and break no sanity pair."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture(scope="module")
def jd(benchmark_script: Any) -> Any:
    return benchmark_script("judge_decision")


def _eval(argmax: tuple[float, float], thresholds: tuple[float, float]) -> dict[str, Any]:
    sets = {name: {"argmax": {"macro_f1": a}, "calibrated": {"macro_f1": t}}
            for name, a, t in zip(("bench_dev", "healthver_dev"), argmax, thresholds)}
    return {"document_rule_in_force": "max",
            "document_rules": {"best": "max", "rules": {"max": {"thresholds": {"SUPPORT": 0.4, "CONTRADICT": 0.3},
                                                                "sets": sets}}}}


def _sanity(wrong: dict[str, str], accuracy: float) -> dict[str, Any]:
    return {"summary": {"overall": {"accuracy": accuracy},
                        "errors": [{"id": k, "predicted": v} for k, v in wrong.items()]}}


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
    (tmp_path / "conflictscore.json").write_text(json.dumps({"format": 1, "max_length": 192,
                                                             "thresholds": {"SUPPORT": 0.45, "CONTRADICT": 0.3}}))
    evals, t, a = (tmp_path / n for n in ("eval.json", "t.json", "a.json"))
    evals.write_text(json.dumps(_eval((0.6, 0.7), (0.6, 0.69))))
    t.write_text(json.dumps(_sanity({}, 1.0)))
    a.write_text(json.dumps(_sanity({}, 1.0)))
    assert jd.main(["--eval", str(evals), "--sanity", str(t), "--sanity-argmax", str(a), "--model", str(tmp_path),
                    "--tag", "t", "--apply", "--out-dir", str(tmp_path)]) == 0
    cfg = json.loads((tmp_path / "conflictscore.json").read_text())
    assert "thresholds" not in cfg and cfg["decision_rule"]["rule"] == "argmax" and cfg["max_length"] == 192
    assert json.loads((tmp_path / "judge_decision_t.json").read_text())["decision"]["rule"] == "argmax"


def test_the_ship_gate_needs_both_figures_beaten(benchmark_script: Any, tmp_path: Path) -> None:
    ship = benchmark_script("judge_ship")
    real = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "results" /
                       "conflictbench_default-judge-v2.json").read_text())  # a recorded bench run summary
    for tag, f1, acc in (("new", 0.76, 0.70), ("old", 0.70, 0.54), ("worse", 0.78, 0.50)):
        real["detection"]["overall"]["f1"] = f1
        (tmp_path / f"conflictbench_default-judge-{tag}.json").write_text(json.dumps(real))
        (tmp_path / f"judge_sanity_{tag}.json").write_text(json.dumps({"summary": {"overall": {"accuracy": acc}}}))
    assert ship.main(["--new", "new", "--old", "old", "--results", str(tmp_path)]) == 0
    assert ship.main(["--new", "worse", "--old", "old", "--results", str(tmp_path)]) == 1
    verdict = json.loads((tmp_path / "judge_ship_worse.json").read_text())
    assert verdict["held_back_by"] == ["sanity_accuracy"] and verdict["figures"]["conflictbench_test_detection_f1"][
        "beats"] is True
