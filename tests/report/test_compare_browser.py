"""The comparison page in a real browser (headless system Chromium via Playwright), checked through the DOM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main

from ..compare.test_compare import A, B, result, write
from .conftest import artifact

pytestmark = pytest.mark.slow  # a real Chromium per module

HOSTILE = result(
    "x</script><b>bold</b>", [("<img src=x onerror=\"document.title='pwned'\">", ["SUPPORT", "CONTRADICT"])]
)


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("compare-page")
    paths = {
        "a": write(d / "standard.jsonl", [*A, HOSTILE]),
        "b": write(d / "balanced.jsonl", [*B, HOSTILE]),
        "json": d / "compare.json",
        "page": d / "compare.html",
    }
    assert (
        main(
            [
                "compare",
                str(paths["a"]),
                str(paths["b"]),
                "-o",
                str(paths["json"]),
                "--report",
                str(paths["page"]),
                "--label-a",
                "standard",
                "--label-b",
                "balanced",
                "-q",
            ]
        )
        == 0
    )
    return paths


def rows(page: Any) -> list[str]:
    return page.locator("#items-body tr.item-row td.id").all_text_contents()


def test_metrics_equal_the_comparison_json(compared: dict[str, Path], open_report: Any) -> None:
    c = json.loads(compared["json"].read_text())
    page = open_report(compared["page"])
    assert page.title() == "ConflictScore comparison: balanced against standard"
    for k, m in c["metrics"].items():
        row = page.locator(f'#compare-table tr[data-metric="{k}"]')
        for field in ("a", "b", "diff"):
            assert float(row.locator(f'td[data-field="{field}"]').get_attribute("data-value")) == m[field]
        assert json.loads(row.locator('td[data-field="ci95"]').get_attribute("data-value")) == m["ci95"]
        assert float(row.locator('td[data-field="p_permutation"]').get_attribute("data-value")) == m["p_permutation"]
    # hand-computed (tests/compare/test_compare.py): CS-C 1/3 → 2/3 over q1, q2, q3 (and the hostile item, 1 → 1)
    cs_c = page.locator('#compare-table tr[data-metric="cs_c"]')
    assert cs_c.locator('td[data-field="diff"]').inner_text() == "+0.250"
    assert cs_c.locator('td[data-field="verdict"]').inner_text() == "no detectable difference"
    assert page.locator('[data-summary="only_a"]').inner_text() == "1"
    assert page.locator('[data-conflicted="b_only"]').inner_text() == "3"
    assert page.locator('td[data-change="support_lost"]').get_attribute("data-value") == "1"
    assert page.locator("#mismatch-note").is_visible()


def test_filter_by_change_and_the_side_by_side_claims(compared: dict[str, Path], open_report: Any) -> None:
    page = open_report(compared["page"])
    assert sorted(rows(page)) == sorted(["q1", "q2", "q3", "only-a", "only-b", "x</script><b>bold</b>"])
    page.select_option("#filter", "support_lost")
    assert rows(page) == ["q3"]
    page.select_option("#filter", "newly_conflicted")
    assert sorted(rows(page)) == ["q1", "q2", "q3"]
    page.select_option("#filter", "only_b")
    assert rows(page) == ["only-b"]
    assert page.locator("#count").inner_text() == "items 1–1 of 1 (filtered from 6)"
    page.select_option("#filter", "changed")
    assert sorted(rows(page)) == ["q1", "q2", "q3"]  # the hostile item is the same in both
    page.locator('#items-body tr.item-row[data-id="q3"]').click()
    box = page.locator('.item-detail[data-id="q3"]')
    side = box.locator("table.side-by-side tbody tr")
    assert side.count() == 2
    w = side.nth(0)
    assert w.locator('td[data-side="a"] .claim-quote').inner_text() == "w"
    assert w.locator('td[data-side="a"]').get_attribute("class") == "claim-side conflicted"
    assert w.locator('td[data-side="b"]').get_attribute("class") == "claim-side"
    assert w.locator(".badge.change").evaluate_all("bs => bs.map(b => b.dataset.change)") == [
        "no_longer_conflicted",
        "support_lost",
        "labels_changed",
    ]
    assert w.locator('[data-doc="d1"]').inner_text() == "d1: SUPPORT → IRRELEVANT"
    assert box.locator(".detail-head .badge").first.inner_text() == "CS-C 0.500 → 0.500"
    page.screenshot(path=str(artifact("compare-q3.png")), full_page=True)
    page.locator('#items-body tr.item-row[data-id="q2"]').click()
    t = page.locator('.item-detail[data-id="q2"] table.side-by-side tbody tr').nth(1)  # only in B
    assert t.locator('td[data-side="a"]').inner_text() == "no such claim"
    assert t.locator("td.what").inner_text() == "only in balanced"


def test_data_is_text_never_markup_and_nothing_is_fetched(compared: dict[str, Path], open_report: Any) -> None:
    page = open_report(compared["page"], fragment="#item=" + "x</script><b>bold</b>")
    box = page.locator(".item-detail")
    assert box.get_attribute("data-id") == "x</script><b>bold</b>"
    assert box.locator(".claim-quote").first.inner_text() == "<img src=x onerror=\"document.title='pwned'\">"
    assert page.title().startswith("ConflictScore comparison")
    assert page.locator("main img, main b:has-text('bold')").count() == 0
    assert page.evaluate("document.scripts.length") == 4
    assert {r.split("#")[0] for r in page.requests} == {compared["page"].resolve().as_uri()}
