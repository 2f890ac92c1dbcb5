"""The one summary schema: every field declares its reduction (the ``stages`` section entry by entry), an
unknown kind is refused, one builder serves the engine and ``merge``, and a ``bench run`` results file of the
earlier schema is still read (renamed)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from conflictscore_local import Summary
from conflictscore_local.core.errors import ConfigError, InputError
from conflictscore_local.core.types import InputRecord, Stages
from conflictscore_local.formats.summary import (
    RATE,
    REDUCERS,
    check_summary,
    read_summary,
    reduce_fields,
    reduce_summaries,
    reductions,
    upgrade,
)

ROOT = Path(__file__).resolve().parents[2]


def test_every_field_declares_how_it_reduces_over_shards() -> None:
    assert Summary.reductions() == {
        "n_items": "rows",
        "n_claims": "rows",
        "macro": "rows",
        "micro": "rows",
        "ci95": "rows",
        "pairs": "rows",
        "timing": "sum",
        "config": "first",
        "versions": "first",
        "stages": "section",
        "warnings": "cat",
        "sampling": "rows",
        "bench": "first",
        "evaluation": "rows",
        "started": "min",
        "finished": "max",
    }
    assert reductions(Stages) == {
        "decomposer": "sum",
        "pruner": "sum",
        "judge": "sum",
        "engine": "sum",
        "aggregate": "sum",
        "labels": "rows",
        "input": "first",
        "resumed_items": "sum",
        "shard": "rows",
        "other": "sum",
    }
    assert set(REDUCERS) == {"rows", "sum", "first", "cat", "min", "max", "section"}


def test_an_unknown_reduction_is_refused_naming_the_allowed_kinds() -> None:
    from conflictscore_local.core.types import _reduced

    @dataclasses.dataclass(frozen=True)
    class Section:
        total: int = _reduced("mean", default=0)
        seen: int = dataclasses.field(default=0)  # declares none

    with pytest.raises(
        ConfigError,
        match=r"^Section.total: unknown reduction 'mean'; allowed: rows, sum, first, "
        r"cat, min, max, section$",
    ):
        reduce_fields(Section, [{"total": 1}, {"total": 2}])
    with pytest.raises(ConfigError, match=r"^Section.seen: unknown reduction None; allowed: rows, sum"):
        reductions(dataclasses.make_dataclass("Section", [("seen", int, dataclasses.field(default=0))]))


def test_the_old_name_report_warns() -> None:
    import conflictscore_local
    from conflictscore_local.core import types

    with pytest.warns(DeprecationWarning, match=r"^Report is deprecated and will be removed in 0\.3\.0: use Summary"):
        assert conflictscore_local.Report is Summary
    with pytest.warns(DeprecationWarning, match="Report is deprecated"):
        assert types.Report is Summary
    assert "Report" not in conflictscore_local.__all__


def test_shards_reduce_as_declared_and_the_rate_is_derived_from_the_sums() -> None:
    a = {
        "timing": {"judge_s": 1.0, "total_s": 2.0, RATE: 5.0},
        "stages": {
            "engine": {"passage_pairs_judged": 3},
            "judge": {"judged": 3},
            "input": {"lines": 4},
            "labels": {"SUPPORT": 7},
            "shard": {"index": 1},
        },
        "warnings": ["a"],
        "config": {"run": {"engine": {"seed": 0, "bootstrap": 10}}},
        "versions": {"python": "3"},
        "started": "2026-03-01T10:00:00+00:00",
        "finished": "2026-03-01T10:05:00+00:00",
    }
    b = {
        "timing": {"judge_s": 2.0, "total_s": 1.5},
        "stages": {"engine": {"passage_pairs_judged": 6}, "judge": {"judged": 6}, "input": {"lines": 4}},
        "warnings": ["b"],
        "config": {"run": {}},
        "versions": {"python": "4"},
        "started": "2026-03-01T09:58:00+00:00",
        "finished": "2026-03-01T10:01:00+00:00",
    }
    s = reduce_summaries([a, b], [], warnings=lambda i, w: f"shard {i + 1}: {w}")
    assert s.timing == {"judge_s": 3.0, "total_s": 3.5, RATE: 3.0}  # 9 pairs / 3 s, not 5 + nothing
    assert s.stages == {
        "judge": {"judged": 9},
        "engine": {"passage_pairs_judged": 9},
        "labels": {
            "SUPPORT": 0,
            "CONTRADICT": 0,
            "IRRELEVANT": 0,
            "unscored": 0,
            "sided_without_probs": 0,
        },  # labels from the rows (none), no shard record
        "input": {
            "lines": 4,
            "blank_lines": None,
            "items": 0,
            "empty_responses": 0,
            "no_documents": 0,
            "file": None,
            "shape": "conflictscore",
        },
    }  # the first shard's
    assert s.stages.input == InputRecord(lines=4) and s.stages.judge == {"judged": 9}  # typed by attribute
    merged = reduce_summaries([a, b], [], shard={"merged": True})
    assert merged.stages["shard"] == {"merged": True} and merged.stages.shard == {"merged": True}
    assert s.warnings == ("shard 1: a", "shard 2: b")
    assert s.config == a["config"] and s.versions == {"python": "3"}
    assert (s.n_items, s.n_claims, s.bench, s.evaluation) == (0, 0, None, None)
    assert (s.started, s.finished) == ("2026-03-01T09:58:00+00:00", "2026-03-01T10:05:00+00:00")  # min / max
    undated = reduce_summaries([{k: v for k, v in a.items() if k not in ("started", "finished")}, b], [])
    assert (undated.started, undated.finished) == (b["started"], b["finished"])  # a shard without: left out


def test_an_earlier_bench_results_file_reads_as_this_schema() -> None:
    # recorded by an earlier release
    path = ROOT / "benchmarks" / "results" / "judge" / "conflictbench_gold-labels.json"
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
