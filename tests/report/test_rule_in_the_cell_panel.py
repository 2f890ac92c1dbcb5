"""The rule that turned a judge's probabilities into a label, in the report's cell panel and its pairs CSV, in
the real browser (headless system Chromium via Playwright), on the bundled default judge: the issue's "Water
boils at 100 °C at sea level" against a sentence saying exactly that."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main
from conflictscore_local.core.labels import decided, rule_text

from .test_csv_browser import downloaded
from .test_report_browser import open_item

pytestmark = pytest.mark.slow  # a real Chromium per module, the default judge

REPO = Path(__file__).resolve().parents[2]
ITEM = {
    "id": "water",
    "response": "Water boils at 100 °C at sea level.",
    "claims": ["Water boils at 100 °C at sea level."],
    "documents": [
        {"id": "same", "text": "Water boils at 100 °C at sea level."},
        {"id": "recipe", "text": "Stir the flour into the butter and bake for twenty minutes."},
    ],
}


def test_the_cell_panel_and_the_pairs_csv_show_the_rule_and_what_decided(tmp_path: Path, open_report: Any) -> None:
    items = tmp_path / "water.jsonl"
    items.write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    page_path, pairs = tmp_path / "water.html", tmp_path / "water.pairs.csv"
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(tmp_path / "water.jsonl.out.jsonl"),
                "--report",
                str(page_path),
                "--csv-pairs",
                str(pairs),
                "--pruner",
                "none",
                "--no-cache",
                "-q",
            ]
        )
        == 0
    )
    # the default judge's rule: its calibrated thresholds, or "argmax" (v5: conflictscore.json has no thresholds)
    shipped = json.loads((REPO / "models" / "default-judge" / "conflictscore.json").read_text()).get("thresholds")
    rule = rule_text(shipped)
    with open(pairs, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["rule"] for r in rows] == [rule, rule]
    same = rows[0]
    p = {k.upper(): float(same[f"p_{k}"]) for k in ("support", "contradict", "irrelevant")}
    assert same["decided"] == decided(p, rule)

    page = open_report(page_path)
    box = open_item(page, "water")
    box.locator('button.cell[data-claim="0"][data-doc="0"]').click()
    panel = box.locator("aside.cell-panel")
    assert panel.locator('[data-role="label"]').inner_text() == same["label"]
    assert panel.locator('[data-role="rule"]').inner_text() == f"decision rule {rule}\ndecided by {same['decided']}"
    assert panel.locator('[data-role="decided"]').inner_text() == same["decided"]
    name, shown = downloaded(page, "#csv-pairs")
    assert [(r["rule"], r["decided"]) for r in shown] == [(r["rule"], r["decided"]) for r in rows]
