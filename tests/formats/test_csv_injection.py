"""Issue 47 (review reliability-4: OUT-csv-formula): every CSV the project writes neutralises text cells that a
spreadsheet would run as a formula (OWASP's rule: a cell starting with ``=``, ``+``, ``-``, ``@``, tab or CR gets
a single quote before it); numbers, negative ones included, stay numbers. Met through the command line: ``score
--csv / --csv-pairs`` (to files and to stdout) and ``compare --csv``, on ids, claims and document ids that
start like formulas (claims come from LLM answers, ids from retrieved data)."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import conflictscore_local
from conflictscore_local.formats.table import FORMULA_STARTS, csv_text, neutral_cell

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]
LINK = '=HYPERLINK("http://127.0.0.1:9/x?"&A1,"click")'
CMD = "@SUM(1+1)*cmd|' /C calc'!A0"
HOSTILE = [
    {
        "id": LINK,
        "response": "=1+1",
        "claims": ["=1+1", "+1 is a number", "-2+3 is one"],
        "documents": [{"id": CMD, "text": "yes"}, {"id": "\tTAB", "text": "no"}],
        "labels": [["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"], ["IRRELEVANT", "SUPPORT"]],
    },
    {
        "id": "\rCR-1",
        "response": "plain",
        "claims": ["a plain claim - with a dash", "'quoted already"],
        "documents": [{"id": "d0", "text": "x"}],
        "labels": [["SUPPORT"], ["CONTRADICT"]],
    },
]


def cs(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command in a subprocess; stdout and stderr decoded as they are (a CR stays a CR)."""
    done = subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", *args],
        cwd=cwd,
        capture_output=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)},
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def read(path: Path) -> str:
    return path.read_bytes().decode("utf-8")


def rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_the_rule_on_cells() -> None:
    assert [neutral_cell(s) for s in ("=1+1", "+1", "-2", "@x", "\tx", "\rx", "a=b", "", "'=x", "1e5")] == [
        "'=1+1",
        "'+1",
        "'-2",
        "'@x",
        "'\tx",
        "'\rx",
        "a=b",
        "",
        "'=x",
        "1e5",
    ]
    assert FORMULA_STARTS == ("=", "+", "-", "@", "\t", "\r")
    # numbers are numbers (no spreadsheet runs them), text is text: -0.5 as a float stays -0.5
    assert (
        csv_text([{"a": -0.5, "b": "-0.5", "c": -3, "d": True, "e": None}], ["a", "b", "c", "d", "e"])
        == "a,b,c,d,e\n-0.5,'-0.5,-3,true,\n"
    )


def test_score_tables_neutralise_formula_cells(tmp_path: Path) -> None:
    """Before: ``=HYPERLINK(...)`` as an id, ``=1+1`` as a claim and ``@SUM(...)`` as a document id were
    written as they are, live formulas when the table is opened."""
    inp = tmp_path / "inj.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in HOSTILE), encoding="utf-8")
    done = cs(
        "score",
        str(inp),
        "-q",
        "--no-cache",
        "-o",
        "o.jsonl",
        "--csv",
        "items.csv",
        "--csv-pairs",
        "pairs.csv",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    items = rows(read(tmp_path / "items.csv"))
    assert [r["id"] for r in items] == ["'" + LINK, "'\rCR-1"]
    assert [r["cs_c"] for r in items] == ["0.3333333333333333", "0.0"]  # numbers as numbers
    pairs = rows(read(tmp_path / "pairs.csv"))
    assert [(r["item_id"], r["claim"], r["doc_id"]) for r in pairs] == [
        ("'" + LINK, "'=1+1", "'" + CMD),
        ("'" + LINK, "'=1+1", "'\tTAB"),
        ("'" + LINK, "'+1 is a number", "'" + CMD),
        ("'" + LINK, "'+1 is a number", "'\tTAB"),
        ("'" + LINK, "'-2+3 is one", "'" + CMD),
        ("'" + LINK, "'-2+3 is one", "'\tTAB"),
        ("'\rCR-1", "a plain claim - with a dash", "d0"),
        ("'\rCR-1", "'quoted already", "d0"),
    ]
    # no cell a spreadsheet would evaluate, in any column of either table
    for r in items + pairs:
        assert not any(v.startswith(FORMULA_STARTS) for v in r.values()), r
    # the same tables on stdout
    for flag, want in (("--csv", items), ("--csv-pairs", pairs)):
        done = cs("score", str(inp), "-q", "--no-cache", "-o", f"o{flag}.jsonl", flag, "-", cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert rows(done.stdout) == want
    # the JSONL keeps the user's text as it is
    out = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text(encoding="utf-8").splitlines()]
    assert out[0]["id"] == LINK and out[0]["claims"][0]["text"] == "=1+1"


def test_compare_table_neutralises_ids_and_keeps_negative_numbers(tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    one = [
        {"id": "=cmd", "response": "c", "claims": ["c"], "documents": ["x", "y"], "labels": [["SUPPORT", "CONTRADICT"]]}
    ]
    two = [{**one[0], "labels": [["SUPPORT", "SUPPORT"]]}]
    for path, items in ((a, one), (b, two)):
        src = path.with_suffix(".in.jsonl")
        src.write_text(json.dumps(items[0]) + "\n", encoding="utf-8")
        assert cs("score", str(src), "-q", "--no-cache", "-o", str(path), cwd=tmp_path).returncode == 0
    done = cs("compare", str(a), str(b), "--csv", "cmp.csv", "-q", "--bootstrap", "10", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (row,) = rows(read(tmp_path / "cmp.csv"))
    assert row["id"] == "'=cmd"
    assert (row["a_cs_c"], row["b_cs_c"], row["diff_cs_c"]) == ("1.0", "0.0", "-1.0")  # a number, not neutralised
