"""The one summary schema: every field declares its reduction, one builder serves the engine and
``merge``, and a ``bench run`` results file of the earlier schema is still read (renamed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local import Report, Summary
from conflictscore_local.core.errors import InputError
from conflictscore_local.formats.summary import RATE, check_summary, read_summary, reduce_summaries, upgrade

ROOT = Path(__file__).resolve().parents[1]


def test_every_field_declares_how_it_reduces_over_shards() -> None:
    assert Report is Summary  # the old name, for one release
    assert Summary.reductions() == {
        "n_items": "rows", "n_claims": "rows", "macro": "rows", "micro": "rows", "ci95": "rows", "pairs": "rows",
        "timing": "sum", "config": "first", "versions": "first", "stages": "sum", "warnings": "cat",
        "sampling": "rows", "bench": "first", "evaluation": "rows", "started": "min", "finished": "max"}


def test_shards_reduce_as_declared_and_the_rate_is_derived_from_the_sums() -> None:
    a = {"timing": {"judge_s": 1.0, "total_s": 2.0, RATE: 5.0},
         "stages": {"engine": {"passage_pairs_judged": 3}, "judge": {"judged": 3}, "input": {"lines": 4},
                    "labels": {"SUPPORT": 7}, "shard": {"index": 1}},
         "warnings": ["a"], "config": {"run": {"engine": {"seed": 0, "bootstrap": 10}}}, "versions": {"python": "3"}}
    b = {"timing": {"judge_s": 2.0, "total_s": 1.5}, "stages": {"engine": {"passage_pairs_judged": 6},
                                                                "judge": {"judged": 6}, "input": {"lines": 4}},
         "warnings": ["b"], "config": {"run": {}}, "versions": {"python": "4"}}
    s = reduce_summaries([a, b], [], warnings=lambda i, w: f"shard {i + 1}: {w}")
    assert s.timing == {"judge_s": 3.0, "total_s": 3.5, RATE: 3.0}  # 9 pairs / 3 s, not 5 + nothing
    assert s.stages == {"engine": {"passage_pairs_judged": 9}, "judge": {"judged": 9}, "input": {"lines": 4},
                        "labels": {"SUPPORT": 0, "CONTRADICT": 0, "IRRELEVANT": 0, "unscored": 0,
                                   "sided_without_probs": 0}}  # labels from the rows (none), no shard record
    assert s.warnings == ("shard 1: a", "shard 2: b")
    assert s.config == a["config"] and s.versions == {"python": "3"}
    assert (s.n_items, s.n_claims, s.bench, s.evaluation) == (0, 0, None, None)


def test_an_earlier_bench_results_file_reads_as_this_schema() -> None:
    path = ROOT / "benchmarks" / "results" / "conflictbench_gold-labels.json"  # recorded by an earlier release
    old = json.loads(path.read_text())
    new = read_summary(path)
    assert new["n_items"] == old["bench"]["n_items"] and new["n_claims"] == old["bench"]["n_claims"]
    assert new["macro"] == old["conflictscore"]["macro"] and new["pairs"] == old["engine_pairs"]
    assert new["evaluation"] == {k: old[k] for k in ("pairs", "detection", "unscored", "pruning")}
    assert "n_items" not in new["bench"] and new["bench"]["split"] == old["bench"]["split"]
    assert "ci95" not in new  # it recorded none: readers compute it
    assert upgrade(new) == new  # this schema is left as it is
    with pytest.raises(InputError, match="field 'conflictscore.macro': missing"):
        check_summary({"bench": {}, "detection": {}}, "old.json")
