"""Tables out (--csv, --csv-pairs, -o x.csv; Results.to_records / to_pandas) and the CI gate
(--fail-if on score and compare), on runs whose labels are given, so every value is hand-computed."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import read_results
from conflictscore_local.cli import main
from conflictscore_local.core.errors import BackendUnavailable, ConfigError
from conflictscore_local.core.gate import check_comparison, parse_condition
from conflictscore_local.formats.table import Results

from ..compare.test_compare import C, I, S, result

ITEMS = [
    # c1: d0 supports, d1 contradicts → conflicted (ratio 1/2); c2: supported only. CS-C 1/2, CS-R 1/2,
    # cs_r_evidenced (1/2 + 0) / 2 = 1/4, support rate 1
    {
        "id": "a",
        "response": "c1. c2.",
        "claims": ["c1", "c2"],
        "documents": ["one", {"id": "x", "text": "two"}],
        "labels": [[S, C], [S, I]],
    },
    # contradicted only: CS-C 0, CS-R undefined, cs_r_evidenced 1, support rate 0
    {"id": "b", "response": "c3.", "claims": ["c3"], "documents": ["three"], "labels": [[C]]},
]
# macro CS-C (1/2 + 0) / 2 = 1/4; micro CS-C 1 of 3 claims


def write_items(path: Path) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    return path


def run(argv: list[str]) -> int:
    """``main(argv)``'s exit status, argparse's own refusals (SystemExit 2) included."""
    try:
        return main(argv)
    except SystemExit as e:
        return int(e.code or 0)


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_score_o_csv_writes_the_item_table_and_no_jsonl(tmp_path: Path) -> None:
    items = write_items(tmp_path / "in.jsonl")
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(tmp_path / "out.csv"),
                "--csv-pairs",
                str(tmp_path / "pairs.csv"),
                "--no-cache",
                "-q",
            ]
        )
        == 0
    )
    assert (tmp_path / "out.csv").read_text() == (
        "id,n_claims,cs_c,cs_r,cs_r_evidenced,support_rate,n_conflicted,n_unscored\n"
        "a,2,0.5,0.5,0.25,1.0,1,0\n"
        "b,1,0.0,,1.0,0.0,0,0\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl", "out.csv", "pairs.csv"]  # no JSONL
    pairs = rows((tmp_path / "pairs.csv").read_text())
    assert [
        (r["item_id"], r["claim_index"], r["claim"], r["claim_conflicted"], r["doc_id"], r["label"], r["source"])
        for r in pairs
    ] == [
        ("a", "0", "c1", "true", "d0", S, "given"),
        ("a", "0", "c1", "true", "x", C, "given"),
        ("a", "1", "c2", "false", "d0", S, "given"),
        ("a", "1", "c2", "false", "x", I, "given"),
        ("b", "0", "c3", "false", "d0", C, "given"),
    ]
    assert list(pairs[0]) == [
        "item_id",
        "claim_index",
        "claim",
        "claim_conflicted",
        "doc_id",
        "label",
        "p_support",
        "p_contradict",
        "p_irrelevant",
        "rule",
        "decided",
        "source",
        "passage",
        "passage_start",
        "passage_end",
        "note",
    ]


def test_csv_beside_the_jsonl_equals_the_records_read_back(tmp_path: Path) -> None:
    items = write_items(tmp_path / "in.jsonl")
    assert (
        main(
            ["score", str(items), "-o", str(tmp_path / "o.jsonl"), "--csv", str(tmp_path / "t.csv"), "--no-cache", "-q"]
        )
        == 0
    )
    back = read_results(tmp_path / "o.jsonl")
    assert isinstance(back, Results)
    assert back.to_records() == [
        {
            "id": "a",
            "n_claims": 2,
            "cs_c": 0.5,
            "cs_r": 0.5,
            "cs_r_evidenced": 0.25,
            "support_rate": 1.0,
            "n_conflicted": 1,
            "n_unscored": 0,
        },
        {
            "id": "b",
            "n_claims": 1,
            "cs_c": 0.0,
            "cs_r": None,
            "cs_r_evidenced": 1.0,
            "support_rate": 0.0,
            "n_conflicted": 0,
            "n_unscored": 0,
        },
    ]
    assert len(back.to_records("pairs")) == 5
    assert rows((tmp_path / "t.csv").read_text())[1]["cs_r"] == ""


def test_csv_to_stdout_takes_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = write_items(tmp_path / "in.jsonl")
    assert main(["score", str(items), "-o", str(tmp_path / "o.jsonl"), "--csv", "-", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("id,n_claims,cs_c") and len(out.splitlines()) == 3  # the table alone


def test_a_csv_output_cannot_be_resumed_and_is_one_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = write_items(tmp_path / "in.jsonl")
    assert main(["score", str(items), "-o", str(tmp_path / "o.csv"), "--resume", "--no-cache"]) == 2
    assert "error: --resume needs the per-item JSONL: write -o OUT.jsonl (with --csv OUT.csv" in capsys.readouterr().err
    assert (
        main(["score", str(items), "-o", str(tmp_path / "o.csv"), "--csv", str(tmp_path / "p.csv"), "--no-cache"]) == 2
    )
    assert "an -o ending in .csv is the item table already" in capsys.readouterr().err
    assert main(["score", str(items), "-o", str(tmp_path / "o.jsonl"), "--csv", str(items), "--no-cache"]) == 2
    assert not (tmp_path / "o.jsonl").exists()


def test_to_pandas_has_the_records_columns_and_says_which_extra_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    res = Results([result("q", [("x", [S, C])])])
    pytest.importorskip("pandas")
    frame = res.to_pandas()
    assert list(frame.columns) == [
        "id",
        "n_claims",
        "cs_c",
        "cs_r",
        "cs_r_evidenced",
        "support_rate",
        "n_conflicted",
        "n_unscored",
    ]
    assert frame.loc[0, "cs_c"] == 1.0 and list(res.to_pandas("pairs")["doc_id"]) == ["d1", "d2"]
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(BackendUnavailable) as e:
        res.to_pandas()
    assert str(e.value) == (
        "Results.to_pandas() needs pandas: pip install 'conflictscore-local[pandas]', or use "
        "Results.to_records(), which needs nothing"
    )
    with pytest.raises(ConfigError):
        res.to_records("claims")


def test_fail_if_exits_4_with_one_line_per_condition_that_held(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: Any
) -> None:
    items = write_items(tmp_path / "in.jsonl")
    argv = ["score", str(items), "-o", str(tmp_path / "o.jsonl"), "--no-cache", "-q"]
    assert main(argv + ["--fail-if", "cs_c>0.3", "--fail-if", "micro.cs_c<0.3"]) == 0  # 0.25 and 1/3
    assert capsys.readouterr().err == ""
    assert (
        main(
            argv
            + [
                "--fail-if",
                "cs_c >= 0.25",
                "--fail-if",
                "micro.cs_c>0.3",
                "--fail-if",
                "support_rate<0.4",
                "--fail-if",
                "cs_c_weighted>0",
            ]
        )
        == 4
    )
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "warning: --fail-if cs_c_weighted>0: macro CS-C weighted is undefined in this run, "
        "so the condition was not judged",
        "conflictscore score: failed: --fail-if cs_c >= 0.25: macro CS-C is 0.25",
        "conflictscore score: failed: --fail-if micro.cs_c>0.3: micro CS-C is 0.3333",
    ]


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("cs_q>0.3", "unknown metric in 'cs_q' (did you mean cs_r?)"),
        ("cs_c=0.3", "not METRIC OP NUMBER"),
        ("total.cs_c>0.3", "unknown scope in 'total.cs_c'"),
        ("cs_c>high", "not METRIC OP NUMBER"),
    ],
)
def test_a_bad_condition_exits_2_naming_the_metrics_and_operators(
    text: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["score", str(tmp_path / "none.jsonl"), "-o", str(tmp_path / "o.jsonl"), "--fail-if", text]) == 2
    err = capsys.readouterr().err
    assert (
        f"conflictscore score: error: argument --fail-if: {why}; allowed: [macro.|micro.]METRIC with METRIC one of "
        "cs_c, cs_r, cs_r_evidenced, support_rate, cs_c_weighted, cs_r_weighted; operators >, <, >=, <=" in err
    )


def comparison(diffs: list[float]) -> dict[str, Any]:
    return {
        "a": {"label": "A"},
        "b": {"label": "B"},
        "metrics": {
            "cs_c": {
                "n": len(diffs),
                "a": 0.0,
                "b": sum(diffs) / len(diffs),
                "diff": sum(diffs) / len(diffs),
                "ci95": None,
            }
        },
    }


def test_a_diff_condition_is_judged_on_the_paired_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # every item's CS-C rises by 1/2: the bootstrap interval of B − A is [0.5, 0.5]
    a = [result(f"q{i}", [("x", [S, I]), ("y", [S, I])]) for i in range(4)]
    b = [result(f"q{i}", [("x", [S, C]), ("y", [S, I])]) for i in range(4)]
    # two items, B − A of 0 and 1: mean 1/2, interval [0, 1] (resampled means 0, 1/2, 1)
    c = [result("q0", [("x", [S, I])]), result("q1", [("x", [S, I])])]
    d = [result("q0", [("x", [S, I])]), result("q1", [("x", [S, C])])]
    paths = {}
    for name, scored in (("a", a), ("b", b), ("c", c), ("d", d)):
        paths[name] = tmp_path / f"{name}.jsonl"
        paths[name].write_text("".join(json.dumps(r.to_json()) + "\n" for r in scored))
    base = ["compare", str(paths["a"]), str(paths["b"]), "--json"]
    assert main(base + ["--fail-if", "cs_c.diff>0.5", "--fail-if", "cs_c.diff<0.5"]) == 0
    capsys.readouterr()
    assert main(base + ["--fail-if", "cs_c.diff>0.4", "--fail-if", "cs_c.diff>=0.5", "--fail-if", "cs_c.b>0.2"]) == 4
    assert capsys.readouterr().err.splitlines() == [
        "conflictscore compare: failed: --fail-if cs_c.diff>0.4: CS-C B − A is 0.5, 95% interval [0.5, 0.5]: its lower "
        "bound 0.5 > 0.4",
        "conflictscore compare: failed: --fail-if cs_c.diff>=0.5: CS-C B − A is 0.5, 95% interval [0.5, 0.5]: its "
        "lower bound 0.5 >= 0.5",
        "conflictscore compare: failed: --fail-if cs_c.b>0.2: CS-C of B is 0.5 over 4 paired items",
    ]
    noisy = ["compare", str(paths["c"]), str(paths["d"]), "--json"]
    assert (
        main(noisy + ["--fail-if", "cs_c.diff>0", "--fail-if", "cs_c.diff<1"]) == 0
    )  # the mean 1/2 is not beyond noise
    capsys.readouterr()
    assert main(noisy + ["--fail-if", "cs_c.diff<=1"]) == 4
    assert "its upper bound 1 <= 1" in capsys.readouterr().err
    # without an interval, the point difference
    assert check_comparison([parse_condition("cs_c.diff>0.4", compare=True)], comparison([0.5])) == [
        "--fail-if cs_c.diff>0.4: CS-C B − A is 0.5 (no interval: the point difference)"
    ]
    assert run(["compare", str(paths["a"]), str(paths["b"]), "--json", "--fail-if", "cs_c>0.1"]) == 2
    assert (
        "argument --fail-if: unknown scope in 'cs_c'; allowed: METRIC.diff, METRIC.a or METRIC.b"
        in capsys.readouterr().err
    )


def test_compare_prints_json_without_o_and_writes_a_csv_for_o_x_csv(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(
        json.dumps(result("q", [("x", [S, I])]).to_json())
        + "\n"
        + json.dumps(result("only", [("y", [S])]).to_json())
        + "\n"
    )
    b.write_text(json.dumps(result("q", [("x", [S, C])]).to_json()) + "\n")
    assert main(["compare", str(a), str(b), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["metrics"]["cs_c"]["diff"] == 1.0
    assert main(["compare", str(a), str(b), "-o", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["items"]["only_a_ids"] == ["only"]
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "c.csv"), "-q"]) == 0
    table = rows((tmp_path / "c.csv").read_text())
    assert [(r["id"], r["side"], r["a_cs_c"], r["b_cs_c"], r["diff_cs_c"], r["newly_conflicted"]) for r in table] == [
        ("q", "both", "0.0", "1.0", "1.0", "1"),
        ("only", "a", "0.0", "", "", "0"),
    ]
    assert not (tmp_path / "c.json").exists()
    assert main(["compare", str(a), str(b)]) == 0  # printed, nothing written
    assert capsys.readouterr().out.startswith("B = B (b.jsonl) against A = A (a.jsonl): 1 items matched")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.jsonl", "b.jsonl", "c.csv"]


def test_bench_run_source_names_do_not_swallow_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(
            [
                "bench",
                "run",
                "--source",
                "ramdocs",
                "wice",
                str(tmp_path / "missing.jsonl"),
                "-o",
                str(tmp_path / "o.jsonl"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "missing.jsonl" in err and "required: INPUT" not in err
    assert main(["bench", "run", "--source", "ramdocs", "-o", str(tmp_path / "o.jsonl")]) == 2
    assert "error: the following arguments are required: INPUT" in capsys.readouterr().err
