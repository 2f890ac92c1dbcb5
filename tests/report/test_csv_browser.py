"""The pages' "download CSV" buttons, the judge line at their top and the compare page's documents,
in the real browser (headless system Chromium via Playwright): each CSV is the table
conflictscore_local.formats.table writes from the same run, to the page's six decimals."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local import read_results
from conflictscore_local.cli import main
from conflictscore_local.compare.files import compare_files
from conflictscore_local.compare.table import comparison_columns, comparison_records

from ..compare.test_compare import A, B, write

pytestmark = pytest.mark.slow  # a real Chromium per module


def downloaded(page: Any, button: str) -> tuple[str, list[dict[str, str]]]:
    with page.expect_download() as info:
        page.click(button)
    d = info.value
    text = Path(d.path()).read_text(encoding="utf-8")
    return d.suggested_filename, list(csv.DictReader(io.StringIO(text)))


def same(page_rows: list[dict[str, str]], records: list[dict[str, Any]]) -> None:
    assert len(page_rows) == len(records)
    for got, want in zip(page_rows, records):
        assert list(got) == list(want)
        for k, v in want.items():
            if v is None:
                assert got[k] == "", k
            elif isinstance(v, bool):
                assert got[k] == str(v).lower(), k
            elif isinstance(v, float):
                assert float(got[k]) == pytest.approx(v, abs=1e-6), k
            else:
                assert got[k] == str(v), k


def test_the_report_csv_buttons_write_the_item_and_pair_tables(run: dict[str, Path], open_report: Any) -> None:
    page = open_report(run["report"])
    results = read_results(run["scored"])
    name, rows = downloaded(page, "#csv-items")
    assert name == "scored.items.csv"
    same(rows, results.to_records())
    name, rows = downloaded(page, "#csv-pairs")
    assert name == "scored.pairs.csv"
    same(rows, results.to_records("pairs"))
    assert {r["label"] for r in rows} == {"SUPPORT", "CONTRADICT", "IRRELEVANT", ""}  # an unscored pair: empty label
    assert all(u.startswith(("file:", "blob:", "data:")) for u in page.requests), page.requests  # offline
    line = page.locator("#judge-line")
    assert line.get_attribute("data-judge") == "rule" and line.inner_text() == "judge rule"


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("compare-csv")
    paths = {"a": write(d / "a.jsonl", A), "b": write(d / "b.jsonl", B), "page": d / "compare.html"}
    assert main(["compare", str(paths["a"]), str(paths["b"]), "--report", str(paths["page"]), "-q"]) == 0
    return paths


def test_the_compare_csv_button_writes_the_comparison_table(compared: dict[str, Path], open_report: Any) -> None:
    page = open_report(compared["page"], width=1400)
    done = compare_files(compared["a"], compared["b"], None)
    name, rows = downloaded(page, "#csv-items")
    assert name == "compare.A.B.csv"
    assert list(rows[0]) == comparison_columns(done.result)
    want = {r["id"]: r for r in comparison_records(done.result, done.a.results, done.b.results)}
    same(sorted(rows, key=lambda r: r["id"]), [want[k] for k in sorted(want)])
    # the items table stays inside its section at 1,400 px: it scrolls in its own box
    box = page.evaluate("""() => { const s = document.querySelector('#items').getBoundingClientRect();
        const w = document.querySelector('.table-scroll').getBoundingClientRect();
        return [s.left, s.right, w.left, w.right, document.documentElement.scrollWidth, window.innerWidth]; }""")
    assert box[2] >= box[0] and box[3] <= box[1] and box[4] <= box[5]
    assert (
        page.locator("#judge-line").inner_text() == "judge A not recorded (give --summary-a) · judge B not "
        "recorded (give --summary-b)"
    )


def test_compare_items_show_each_items_response_and_documents(
    tmp_path: Path, run: dict[str, Path], open_report: Any
) -> None:
    page_path = tmp_path / "self.html"
    assert (
        main(
            [
                "compare",
                str(run["scored"]),
                str(run["scored"]),
                "--items",
                str(run["items"]),
                "--report",
                str(page_path),
                "--summary-a",
                str(run["summary"]),
                "--summary-b",
                str(run["summary"]),
                "-q",
            ]
        )
        == 0
    )
    page = open_report(page_path)
    page.click('#items-body tr.item-row[data-id="mixed"]')
    box = page.locator('.item-detail[data-id="mixed"]')
    assert box.locator('[data-role="response"]').inner_text() == "response Sky is blue. Grass is red."
    box.locator('[data-role="documents"] summary').click()
    docs = box.locator('[data-role="documents"] p.doc-text')
    assert docs.count() == 3 and docs.nth(0).get_attribute("data-doc") == "pro"
    assert docs.nth(0).inner_text() == "pro yes: sky is blue"
    assert page.locator('#judge-line [data-side="A"]').get_attribute("data-judge") == "rule"
    assert json.loads(run["summary"].read_text())["config"]["run"]["judge"]["name"] == "rule"
