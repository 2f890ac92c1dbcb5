"""The report in a real browser (headless system Chromium via Playwright), checked through the DOM."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.bench import make_item
from conflictscore_local.cli import main
from conflictscore_local.core.metrics import standard_keys

from .conftest import HOSTILE, LONG, artifact, write_jsonl

pytestmark = pytest.mark.slow  # a real Chromium per module


def rows(page: Any) -> list[str]:
    return page.locator("#items-body tr.item-row td.id").all_text_contents()


def open_item(page: Any, item_id: str) -> Any:
    page.locator(f'#items-body tr.item-row[data-id="{item_id}"]').click()
    return page.locator(f'.item-detail[data-id="{item_id}"]')


def test_summary_numbers_equal_the_summary_json(run: dict[str, Path], open_report):
    s = json.loads(run["summary"].read_text())
    page = open_report(run["report"])
    assert page.locator('[data-summary="n_items"]').get_attribute("data-value") == "5"
    assert page.locator('[data-summary="n_claims"]').get_attribute("data-value") == str(s["n_claims"]) == "8"
    assert page.locator("#metrics-table tr[data-metric]").count() == len(standard_keys())  # no reliability: no weighted
    for k in standard_keys():
        row = page.locator(f'#metrics-table tr[data-metric="{k}"]')
        for field in ("macro", "micro"):
            cell = row.locator(f'td[data-field="{field}"]')
            assert float(cell.get_attribute("data-value")) == s[field][k]  # the exact value, not a rounding
            assert cell.inner_text() == f"{s[field][k]:.3f}"
        lo, hi = s["ci95"][k]
        ci = row.locator('td[data-field="ci95"]')
        assert json.loads(ci.get_attribute("data-value")) == [lo, hi]
        assert ci.inner_text() == f"[{lo:.3f}, {hi:.3f}]"
        assert page.locator(f'[data-summary="macro.{k}"]').inner_text() == f"{s['macro'][k]:.3f}"
    # hand-computed: macro CS-C = (1/2 + 0 + 1/2 + 0) / 4 (the empty item has no CS-C)
    assert page.locator('tr[data-metric="cs_c"] td[data-field="macro"]').inner_text() == "0.250"
    for key, value in s["pairs"].items():
        assert int(page.locator(f'td[data-pair="{key}"]').get_attribute("data-value")) == value
    assert s["pairs"]["unscored"] == 1
    assert page.locator("#plots figure img").count() == 2
    assert all(
        src.startswith("data:image/svg+xml;base64,")
        for src in page.locator("#plots img").evaluate_all("els => els.map(e => e.src)")
    )


def test_conflicted_claim_is_marked_in_the_response_and_the_grid(run: dict[str, Path], open_report):
    page = open_report(run["report"])
    box = open_item(page, "mixed")
    assert box.locator(".question").inner_text() == "Question What colour are the sky and the grass?"
    assert box.locator("mark.claim.conflicted").all_text_contents() == ["Sky is blue."]
    assert box.locator("mark.claim:not(.conflicted)").all_text_contents() == ["Grass is red."]
    assert box.locator("p.response").inner_text() == "Response Sky is blue. Grass is red."
    grid_rows = box.locator("table.grid tbody tr")
    assert grid_rows.evaluate_all("rs => rs.map(r => r.classList.contains('conflicted'))") == [True, False]
    assert box.locator("table.grid tbody tr.conflicted .badge.conflicted").inner_text() == "conflicted · ratio 0.50"
    labels = box.locator("button.cell").evaluate_all("bs => bs.map(b => b.dataset.label)")
    assert labels == ["SUPPORT", "CONTRADICT", "IRRELEVANT", "IRRELEVANT", "IRRELEVANT", "CONTRADICT"]
    assert box.locator("table.grid thead th").all_text_contents() == ["claim × document", "pro", "con", "long"]
    box.locator("mark.claim.conflicted").click()
    assert grid_rows.evaluate_all("rs => rs.map(r => r.classList.contains('focus'))") == [True, False]


def test_clicking_a_cell_shows_its_passage_and_probabilities(run: dict[str, Path], open_report):
    page = open_report(run["report"])
    box = open_item(page, "mixed")
    box.locator('button.cell[data-claim="1"][data-doc="2"]').click()
    panel = box.locator("aside.cell-panel")
    assert panel.locator("h4").inner_text() == "claim 2 × long"
    assert panel.locator('[data-role="label"]').inner_text() == "CONTRADICT"
    assert panel.locator("h5").inner_text() == "deciding passage: passage 4 of 4"
    # the scored output records passage 3 at characters 96–124 of the document
    assert panel.locator('[data-role="passage"]').inner_text() == LONG[96:124] == "No: grass is red. Fish swim."
    probs = panel.locator('[data-role="probs"] td.num')
    assert probs.evaluate_all("ts => ts.map(t => t.dataset.value)") == ["0.1", "0.8", "0.1"]
    assert probs.all_text_contents() == ["0.100", "0.800", "0.100"]
    panel.locator("details summary").click()
    assert panel.locator("details mark").inner_text() == "No: grass is red. Fish swim."
    page.screenshot(path=str(artifact("item-mixed-cell.png")), full_page=True)

    box = open_item(page, "unsure")
    box.locator('button.cell[data-doc="1"]').click()
    panel = box.locator("aside.cell-panel")
    assert panel.locator('[data-role="label"]').inner_text() == "unscored"
    assert panel.locator('[data-role="note"]').inner_text() == "note: unreadable output"
    assert panel.locator('[data-role="passage"]').inner_text() == "??? the judge cannot read this"


def test_filter_search_and_sort(run: dict[str, Path], open_report):
    page = open_report(run["report"])
    assert rows(page) == ["mixed", "worked", "unsure", HOSTILE["id"], "empty"]  # CS-C descending, undefined last
    page.select_option("#filter", "conflicted")
    assert rows(page) == ["mixed", "worked"]
    assert page.locator("#count").inner_text() == "items 1–2 of 2 (filtered from 5)"
    page.select_option("#filter", "unscored")
    assert rows(page) == ["unsure"]
    page.select_option("#filter", "all")
    page.fill("#search", "WOR")
    assert rows(page) == ["worked"]
    page.fill("#search", "")
    page.locator('button[data-sort="cc"]').click()  # ascending now
    assert rows(page) == ["unsure", HOSTILE["id"], "mixed", "worked", "empty"]
    assert open_item(page, "empty").locator("table.grid tbody tr").count() == 0
    page.locator('button[data-sort="id"]').click()
    assert rows(page) == sorted(rows(page))


def test_data_is_text_never_markup_and_nothing_is_fetched(run: dict[str, Path], open_report):
    page = open_report(run["report"])
    box = open_item(page, HOSTILE["id"])
    assert page.title().startswith("ConflictScore report")
    assert box.locator("p.response").inner_text() == "Response " + HOSTILE["response"]
    box.locator("button.cell").first.click()
    assert box.locator('[data-role="passage"]').inner_text() == HOSTILE["documents"][0]["text"]
    assert page.locator("main img:not(#plots img), main b:has-text('bold'), main i").count() == 0
    assert page.evaluate("document.scripts.length") == 4  # meta, index, details, the page's own script
    assert set(page.requests) == {run["report"].resolve().as_uri()}


def test_pages_of_items_and_a_link_to_one_item(rule_judge: None, tmp_path: Path, open_report):
    items = [
        {
            "id": f"item-{i:03d}",
            "response": "a",
            "claims": ["a"],
            "documents": [{"id": "d", "text": "t"}],
            "labels": [["SUPPORT" if i % 3 else "CONTRADICT"]],
        }
        for i in range(120)
    ]
    inp = write_jsonl(tmp_path / "many.jsonl", items)
    assert main(["score", str(inp), "-o", str(tmp_path / "s.jsonl"), "--report", str(tmp_path / "r.html"), "-q"]) == 0
    page = open_report(tmp_path / "r.html")
    page.locator('button[data-sort="id"]').click()
    assert len(rows(page)) == 50 and rows(page)[0] == "item-000"
    page.click("#next")
    page.click("#next")
    assert rows(page) == [f"item-{i:03d}" for i in range(100, 120)]
    assert page.locator("#page").inner_text() == "page 3 of 3" and page.locator("#next").is_disabled()
    deep = open_report(tmp_path / "r.html", fragment="#item=item-077")
    assert deep.locator(".item-detail").get_attribute("data-id") == "item-077"
    assert deep.locator("tr.item-row.open td.id").inner_text() == "item-077"


def test_bench_report_shows_gold_beside_predictions(rule_judge: None, tmp_path: Path, open_report):
    S, C = "SUPPORT", "CONTRADICT"

    def bench_item(i: str, claim: str, docs: list[str], gold: list[str], kind: str) -> dict[str, Any]:
        return make_item(
            source="synthetic",
            id=i,
            question=None,
            claims=[claim],
            documents=[{"id": f"d{j}", "text": t} for j, t in enumerate(docs)],
            gold_labels=[gold],
            conflict_type=kind,
            split_key=claim,
        )

    items = [
        bench_item("found", "Sky is blue.", ["yes: sky is blue", "no: sky is blue"], [S, C], "contradiction"),
        bench_item("missed", "Fire is hot.", ["yes: fire is hot", "fire is hot, some say"], [S, C], "ambiguity"),
    ]
    inp = write_jsonl(tmp_path / "bench.jsonl", items)
    res, rep = tmp_path / "results.json", tmp_path / "bench.html"
    assert (
        main(
            [
                "bench",
                "run",
                str(inp),
                "-o",
                str(tmp_path / "pred.jsonl"),
                "--summary",
                str(res),
                "--report",
                str(rep),
                "--judge",
                "rule",
                "--pruner",
                "none",
                "--no-cache",
                "-q",
            ]
        )
        == 0
    )
    results = json.loads(res.read_text())
    page = open_report(rep)
    overall = page.locator('#detection-table tr[data-group="overall"]')
    for field in ("precision", "recall", "f1"):
        assert (
            overall.locator(f'td[data-field="{field}"]').inner_text()
            == f"{results['evaluation']['detection']['overall'][field]:.3f}"
        )
    assert overall.locator('td[data-field="f1"]').inner_text() == "0.667"  # P 1, R 1/2
    assert (
        page.locator('#detection-table tr[data-group="type:ambiguity"] td[data-field="recall"]').inner_text() == "0.000"
    )
    assert page.locator("#plots figure").count() == 4
    page.select_option("#filter", "missed")
    assert rows(page) == ["missed"]
    box = open_item(page, "missed")
    assert box.locator("[data-gold]").get_attribute("data-gold") == "FN"
    miss = box.locator("button.cell.gold-miss")
    assert miss.evaluate_all("bs => bs.map(b => [b.dataset.doc, b.dataset.label])") == [["1", "IRRELEVANT"]]
    miss.click()
    assert box.locator("aside.cell-panel .warn").first.inner_text() == "gold label: CONTRADICT"
    page.screenshot(path=str(artifact("bench-missed.png")), full_page=True)


def test_weights_sampling_and_the_deciding_judge_show_in_the_item(tmp_path: Path, open_report):
    # a scored file as a weighted, sampled cascade run writes it: 2 of 3 claims scored, d2 trusted at 0.2
    doc = {"label": "SUPPORT", "probs": {"SUPPORT": 0.9, "CONTRADICT": 0.05, "IRRELEVANT": 0.05}, "source": "judge"}
    con = {**doc, "label": "CONTRADICT", "probs": {"SUPPORT": 0.1, "CONTRADICT": 0.8, "IRRELEVANT": 0.1}}
    row = {
        "id": "w",
        "claims_total": 3,
        "claims": [
            {
                "text": "Sky is blue.",
                "index": 0,
                "support": ["d1"],
                "contradict": ["d2"],
                "irrelevant": [],
                "conflicted": True,
                "ratio": 0.5,
                "min_side_weight": 0.5,
                "judgments": [
                    {"doc_id": "d1", **doc, "weight": 0.9, "decided_by": "first"},
                    {"doc_id": "d2", **con, "weight": 0.2, "decided_by": "second"},
                ],
            },
            {
                "text": "Grass is green.",
                "index": 2,
                "support": ["d1", "d2"],
                "contradict": [],
                "irrelevant": [],
                "conflicted": False,
                "ratio": 0.0,
                "min_side_weight": 0.5,
                "judgments": [
                    {"doc_id": "d1", **doc, "weight": 0.9, "decided_by": "first"},
                    {"doc_id": "d2", **doc, "weight": 0.2, "decided_by": "first"},
                ],
            },
        ],
    }
    scored = write_jsonl(tmp_path / "scored.jsonl", [row])
    assert main(["report", str(scored), "-o", str(tmp_path / "r.html"), "-q"]) == 0
    page = open_report(tmp_path / "r.html")
    assert page.locator('#metrics-table tr[data-metric="cs_c_weighted"] td[data-field="macro"]').inner_text() == "0.000"
    assert page.locator('#metrics-table tr[data-metric="cs_r_weighted"] td[data-field="macro"]').inner_text() == "0.182"
    box = open_item(page, "w")
    assert box.locator('[data-role="sampled"]').inner_text() == "2 of 3 claims scored"
    assert box.locator('[data-role="weighted"]').first.inner_text() == "weighted: CS-C 0.000 · CS-R 0.182"
    assert box.locator(".claim-no").all_text_contents() == ["1", "3"]  # their numbers among the item's claims
    assert box.locator('table.grid tbody tr [data-role="weighted"]').first.inner_text() == (
        "weighted: not conflicted · ratio 0.18"
    )
    assert box.locator("th.doc-h").evaluate_all("hs => hs.map(h => h.title)") == [
        "d1 (reliability 0.90)",
        "d2 (reliability 0.20)",
    ]
    box.locator('button.cell[data-claim="0"][data-doc="1"]').click()
    panel = box.locator("aside.cell-panel")
    assert panel.locator('[data-role="decided-by"]').inner_text() == "decided by the second judge of the cascade"
    assert panel.locator('[data-role="reliability"]').inner_text() == "document reliability 0.20"
