"""`conflictscore view` next to `inspect view` and `promptfoo view`, in the real browser (headless system
Chromium via Playwright): runs dated by the start and end their summaries record (not by file times, which a
copy makes all the same), sorted and filtered by any column, a support-rate column, and a compare command that
carries --items so the comparison page shows the documents."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main

from .conftest import write_jsonl

pytestmark = pytest.mark.slow  # a real Chromium per module

ITEMS = [
    {
        "id": "a",
        "response": "c1. c2.",
        "claims": ["c1", "c2"],
        "documents": ["doc one text", "doc two text"],
        "labels": [["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"]],
    },
    {"id": "b", "response": "c3.", "claims": ["c3"], "documents": ["doc three text"], "labels": [["CONTRADICT"]]},
]
CALM = [
    {**ITEMS[0], "labels": [["SUPPORT", "IRRELEVANT"], ["SUPPORT", "IRRELEVANT"]]},
    {**ITEMS[1], "labels": [["SUPPORT"]]},
]


@pytest.fixture(scope="module")
def copied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs, then the whole folder copied (every file's time now the copy's)."""
    made = tmp_path_factory.mktemp("made")
    write_jsonl(made / "items.jsonl", ITEMS)
    write_jsonl(made / "calm.jsonl", CALM)
    for name, src in (("tense", "items.jsonl"), ("quiet", "calm.jsonl")):
        assert (
            main(
                [
                    "score",
                    str(made / src),
                    "-o",
                    str(made / f"{name}.scored.jsonl"),
                    "--summary",
                    str(made / f"{name}.summary.json"),
                    "-q",
                ]
            )
            == 0
        )
    # the second run's input under the first's name, so both runs read "items.jsonl"
    quiet = json.loads((made / "quiet.summary.json").read_text())
    quiet["stages"]["input"]["file"] = "items.jsonl"
    quiet["started"], quiet["finished"] = "2026-01-02T03:04:05+00:00", "2026-01-02T03:04:09+00:00"
    (made / "quiet.summary.json").write_text(json.dumps(quiet))
    copy = tmp_path_factory.mktemp("copy") / "runs"
    shutil.copytree(made, copy, copy_function=shutil.copy)  # new files: their times are the copy's
    return copy


def test_runs_are_dated_by_their_summaries_and_sort_and_filter_by_any_column(copied: Path, open_report: Any) -> None:
    assert main(["view", str(copied), "-q"]) == 0
    page = open_report(copied / "conflictscore-view.html", ready="body[data-ready=ready]")
    tense = json.loads((copied / "tense.summary.json").read_text())
    row = page.locator('tr.run-row[data-key="tense"]')
    assert row.locator('[data-field="started"]').inner_text() == tense["started"]
    assert row.locator('[data-field="finished"]').inner_text() == tense["finished"]
    quiet = page.locator('tr.run-row[data-key="quiet"]')
    assert quiet.locator('[data-field="started"]').inner_text() == "2026-01-02T03:04:05+00:00"
    assert row.locator('[data-field="support_rate"]').get_attribute("data-value") == str(tense["macro"]["support_rate"])
    assert quiet.locator('[data-field="support_rate"]').inner_text().startswith("1.000")  # every claim supported

    def order() -> list[str]:
        return page.locator("tr.run-row:not([hidden])").evaluate_all("rs => rs.map(r => r.dataset.key)")

    assert order() == ["tense", "quiet"]  # newest start first
    page.click('button[data-sort="cs_c"]')  # CS-C: highest first
    assert order() == ["tense", "quiet"] and page.locator("body").get_attribute("data-sort") == "cs_c:desc"
    page.click('button[data-sort="cs_c"]')
    assert order() == ["quiet", "tense"]
    page.click('button[data-sort="run"]')  # names: a to z
    assert order() == ["quiet", "tense"]
    page.fill('input[data-filter="cs_c"]', ">0.2")  # tense: (1/2 + 1) / 2 = 0.75; quiet: 0
    assert order() == ["tense"] and page.locator("#runs-shown").inner_text() == "1 of 2 runs shown (filtered)"
    page.fill('input[data-filter="cs_c"]', "")
    page.fill('input[data-filter="run"]', "QUI")
    assert order() == ["quiet"]


def test_the_compare_command_carries_items_and_its_page_shows_the_documents(copied: Path, open_report: Any) -> None:
    assert main(["view", str(copied), "-q"]) == 0
    page = open_report(copied / "conflictscore-view.html", ready="body[data-ready=ready]")
    page.check('tr.run-row[data-key="quiet"] input.pick')
    page.check('tr.run-row[data-key="tense"] input.pick')
    shown = page.locator("#compare-command").inner_text()
    assert "--items items.jsonl" in shlex.join(shlex.split(shown))
    words = shlex.split(shown)
    done = subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", *words[1:], "-q"],
        cwd=copied,
        env={**os.environ},
        check=False,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    compared = open_report(copied / "compare.quiet.tense.html")
    compared.locator('#items-body tr.item-row[data-id="a"]').click()
    detail = compared.locator('.item-detail[data-id="a"]')
    assert "response c1. c2." in detail.inner_text()  # the texts come from --items
    assert "doc one text" in detail.text_content()  # the documents, under their fold
