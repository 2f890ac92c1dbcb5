"""Issue 47 (review reliability-4: OUT-csv-formula, "the pages' CSV buttons write the same columns, not
tested"): the report's and the comparison page's "download CSV" buttons neutralise formula cells as
``--csv`` does (formats/table.neutral_cell), in the real browser (headless system Chromium via Playwright)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import read_results
from conflictscore_local.cli import main
from conflictscore_local.formats.table import FORMULA_STARTS, PAIR_COLUMNS, csv_text, item_columns

from ..formats.test_csv_injection import CMD, HOSTILE, LINK


def downloaded(page: Any, button: str) -> tuple[str, list[dict[str, str]]]:
    """The file a button downloads, as rows (read as bytes: a CR inside a cell stays a CR)."""
    with page.expect_download() as info:
        page.click(button)
    d = info.value
    text = Path(d.path()).read_bytes().decode("utf-8")
    return d.suggested_filename, list(csv.DictReader(io.StringIO(text, newline="")))


pytestmark = pytest.mark.slow  # a real Chromium per module


def test_the_report_buttons_write_the_tables_score_writes(tmp_path: Path, open_report: Any) -> None:
    inp = tmp_path / "inj.jsonl"
    inp.write_text("".join(json.dumps(r) + "\n" for r in HOSTILE), encoding="utf-8")
    scored, page_path = tmp_path / "inj.scored.jsonl", tmp_path / "inj.report.html"
    assert main(["score", str(inp), "-o", str(scored), "--report", str(page_path), "--no-cache", "-q"]) == 0
    page = open_report(page_path)
    results = read_results(scored)
    _, items = downloaded(page, "#csv-items")
    assert [r["id"] for r in items] == ["'" + LINK, "'\rCR-1"]
    _, pairs = downloaded(page, "#csv-pairs")
    assert [(r["claim"], r["doc_id"]) for r in pairs][:2] == [("'=1+1", "'" + CMD), ("'=1+1", "'\tTAB")]
    for r in items + pairs:
        assert not any(v.startswith(FORMULA_STARTS) for v in r.values()), r
    # the button's tables are the command's, cell for cell where the page keeps the text
    want = list(csv.DictReader(io.StringIO(csv_text(results.to_records("pairs"), PAIR_COLUMNS), newline="")))
    assert [(r["item_id"], r["claim"], r["doc_id"], r["label"]) for r in pairs] == [
        (r["item_id"], r["claim"], r["doc_id"], r["label"]) for r in want
    ]
    want = list(csv.DictReader(io.StringIO(csv_text(results.to_records(), item_columns(results)), newline="")))
    assert [(r["id"], r["n_claims"]) for r in items] == [(r["id"], r["n_claims"]) for r in want]


def test_the_compare_button_neutralises_ids_and_keeps_negative_numbers(tmp_path: Path, open_report: Any) -> None:
    one = {
        "id": "=cmd",
        "response": "c",
        "claims": ["c"],
        "documents": ["x", "y"],
        "labels": [["SUPPORT", "CONTRADICT"]],
    }
    runs = []
    for name, labels in (("a", ["SUPPORT", "CONTRADICT"]), ("b", ["SUPPORT", "SUPPORT"])):
        src = tmp_path / f"{name}.in.jsonl"
        src.write_text(json.dumps({**one, "labels": [labels]}) + "\n", encoding="utf-8")
        runs.append(tmp_path / f"{name}.jsonl")
        assert main(["score", str(src), "-o", str(runs[-1]), "--no-cache", "-q"]) == 0
    page_path = tmp_path / "cmp.html"
    assert main(["compare", *map(str, runs), "--report", str(page_path), "--bootstrap", "10", "-q"]) == 0
    _, (row,) = downloaded(open_report(page_path), "#csv-items")
    assert row["id"] == "'=cmd"
    assert float(row["diff_cs_c"]) == -1.0 and row["diff_cs_c"].startswith("-")  # a number, not neutralised
