"""An all-unscored run is "no score" everywhere, never a result: an OpenAI-compatible judge (a real HTTP server
on 127.0.0.1) whose every reply is unreadable; the console, the summary, the CSV, the report page (in the real
browser: headless system Chromium via Playwright) and the `view` index say "no score" with no interval, and
the pages name the served model and the server's host."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main

pytestmark = pytest.mark.slow  # a real Chromium per module

ITEMS = [
    {
        "id": "q1",
        "response": "Paris is in France. It rains.",
        "claims": ["Paris is in France.", "It rains."],
        "documents": ["Paris is the capital of France.", "Lyon is in France.", "It rained all day."],
    }
]


def test_a_judge_whose_replies_cannot_be_read_gives_no_score(
    tmp_path: Path, openai_server: Any, openai_stub: Any, capsys: pytest.CaptureFixture[str], open_report: Any
) -> None:
    openai_server.respond = lambda request: openai_stub.Reply(body=openai_stub.chat_reply("Let me think about it."))
    items = tmp_path / "in.jsonl"
    items.write_text("".join(json.dumps(r) + "\n" for r in ITEMS), encoding="utf-8")
    runs = tmp_path / "runs"
    runs.mkdir()
    rc = main(
        [
            "score",
            str(items),
            "-o",
            str(runs / "q.scored.jsonl"),
            "--summary",
            str(runs / "q.summary.json"),
            "--report",
            str(runs / "q.report.html"),
            "--csv",
            str(tmp_path / "items.csv"),
            "--pruner",
            "none",
            "--no-cache",
            "--judge",
            "openai",
            "--judge-arg",
            f"base_url={openai_server.url}",
            "--judge-arg",
            "max_retries=0",
        ]
    )
    out = capsys.readouterr()
    assert rc == 3  # more unscored than engine.max_unscored_share allows: still written
    assert out.out.splitlines()[:6] == [
        "items 1   claims 2",
        "no score: none of the 6 judgments got a label (each one's note in OUTPUT says why)",
        "cs_c            no score",
        "cs_r            no score",
        "cs_r_evidenced  no score",
        "support_rate    no score",
    ]
    assert "0.000" not in out.out
    host = openai_server.root.removeprefix("http://")
    assert f"judge openai, model stub-model at {host}" in out.out
    s = json.loads((runs / "q.summary.json").read_text())
    assert s["macro"] == s["micro"] == dict.fromkeys(("cs_c", "cs_r", "cs_r_evidenced", "support_rate"))
    assert s["ci95"] == dict.fromkeys(("cs_c", "cs_r", "cs_r_evidenced", "support_rate"))
    assert s["pairs"]["unscored"] == s["pairs"]["total"] == 6
    with open(tmp_path / "items.csv", newline="", encoding="utf-8") as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["cs_c"], row["support_rate"], row["n_unscored"]) == ("", "", "6")

    page = open_report(runs / "q.report.html")
    assert page.locator('[data-summary="macro.cs_c"]').inner_text() == "no score"
    metric = page.locator('#metrics-table tr[data-metric="cs_c"]')
    assert metric.locator('[data-field="macro"]').inner_text() == "no score"
    assert metric.locator('[data-field="micro"]').inner_text() == "no score"
    assert metric.locator('[data-field="ci95"]').inner_text() == ""  # no interval, not [0.000, 0.000]
    assert page.locator("#unscored-note").inner_text().startswith("No score: none of the 6 pairs got a readable label")
    assert page.locator("#judge-line").get_attribute("data-model") == f"stub-model at {host}"

    assert main(["view", str(runs), "-q"]) == 0
    view = open_report(runs / "conflictscore-view.html", ready="body[data-ready=ready]")
    cell = view.locator('tr.run-row[data-key="q"] td[data-field="cs_c"]')
    assert cell.inner_text() == "no score" and cell.get_attribute("data-value") == ""
    judge = view.locator('tr.run-row[data-key="q"] td[data-field="judge"]')
    assert judge.inner_text() == f"openai · stub-model at {host}"
