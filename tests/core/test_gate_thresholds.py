"""Issue 47 (review reliability-4: G-4f75cc, G-1e999-lt, G-cmp-1e999, G-outofrange): a ``--fail-if``
threshold that reads as infinity (``1e999``) or lies outside the values its metric takes (``cs_c>5``,
``cs_c>=-3``, ``cs_c.diff<1e400``) makes a gate that can never hold, or always holds: refused before any
work (exit 2, nothing written), naming the range."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.errors import ConfigError
from conflictscore_local.core.gate import parse_condition

ITEMS = [
    {
        "id": "a",
        "response": "c1. c2.",
        "claims": ["c1", "c2"],
        "documents": ["one", "two"],
        "labels": [["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"]],
    }
]


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    try:
        rc = main([*args])
    except SystemExit as e:
        rc = int(e.code or 0)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return rc, err


@pytest.mark.parametrize(
    "cond, says",
    [
        (
            "cs_c>1e999",
            "1e999 is not a finite number (it reads as inf); give a threshold from 0 to 1, the values CS-C takes",
        ),
        ("cs_c<1e999", "1e999 is not a finite number"),
        ("cs_c>-1e999", "-1e999 is not a finite number (it reads as -inf)"),
        ("cs_c>5", "CS-C lies from 0 to 1, so a threshold of 5 means the condition never holds; give one from 0 to 1"),
        ("cs_c>=-3", "CS-C lies from 0 to 1, so a threshold of -3 means the condition always holds"),
        (
            "micro.support_rate<-0.5",
            "support rate lies from 0 to 1, so a threshold of -0.5 means the condition never holds",
        ),
        ("cs_r<=2", "CS-R lies from 0 to 1, so a threshold of 2 means the condition always holds"),
    ],
)
def test_score_refuses_a_threshold_the_metric_cannot_reach(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cond: str, says: str
) -> None:
    """Before: ``cs_c>1e999`` exit 0 (never holds), ``cs_c<1e999`` exit 4 (always holds), no word."""
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(ITEMS[0]) + "\n")
    rc, err = cli(capsys, "score", str(inp), "-q", "--no-cache", "-o", str(tmp_path / "o.jsonl"), "--fail-if", cond)
    assert rc == 2
    assert says in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.jsonl"]


def test_compare_refuses_a_diff_threshold_beyond_minus_one_to_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(ITEMS[0]) + "\n")
    assert cli(capsys, "score", str(inp), "-q", "--no-cache", "-o", str(tmp_path / "a.jsonl"))[0] == 0
    a = str(tmp_path / "a.jsonl")
    rc, err = cli(capsys, "compare", a, a, "--json", "--fail-if", "cs_c.diff<1e400")
    assert rc == 2 and "1e400 is not a finite number (it reads as inf); give a threshold from -1 to 1" in err
    rc, err = cli(capsys, "compare", a, a, "--json", "--fail-if", "cs_c.diff>1.5")
    assert rc == 2 and "B − A of CS-C lies from -1 to 1, so a threshold of 1.5 means the condition never holds" in err
    rc, err = cli(capsys, "compare", a, a, "-q", "--fail-if", "cs_c.a>2")
    assert rc == 2 and "CS-C lies from 0 to 1" in err


def test_thresholds_within_the_range_are_taken_as_typed() -> None:
    assert [parse_condition(c).threshold for c in ("cs_c>0", "cs_c>=1", "cs_c<1.0", "micro.cs_r<=0.25")] == [
        0.0,
        1.0,
        1.0,
        0.25,
    ]
    assert parse_condition("cs_c.diff<-1", compare=True).threshold == -1.0
    assert parse_condition("cs_c.diff>-0.05", compare=True).threshold == -0.05
    with pytest.raises(ConfigError, match="lies from -1 to 1"):
        parse_condition("cs_c.diff<-1.01", compare=True)
