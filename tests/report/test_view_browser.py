"""`conflictscore view DIR`: the run index in the real browser (headless system Chromium via
Playwright), written statically and served on 127.0.0.1."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from conflictscore_local.cli import main
from conflictscore_local.report.view import compare_command, find_runs, serve, stem

from ..compare.test_compare import A, write
from .conftest import write_jsonl

pytestmark = pytest.mark.slow  # a real Chromium per module

LABELLED = [
    {
        "id": "a",
        "response": "c1. c2.",
        "claims": ["c1", "c2"],
        "documents": ["one", "two"],
        "labels": [["SUPPORT", "CONTRADICT"], ["SUPPORT", "IRRELEVANT"]],
    },
    {"id": "b", "response": "c3.", "claims": ["c3"], "documents": ["three"], "labels": [["CONTRADICT"]]},
]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of runs: one with summary and report, one in a subfolder with a summary, one scored file alone."""
    d = tmp_path_factory.mktemp("runs")
    items = write_jsonl(d / "items.jsonl", LABELLED)
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(d / "first.scored.jsonl"),
                "--summary",
                str(d / "first.summary.json"),
                "--report",
                str(d / "first.report.html"),
                "-q",
            ]
        )
        == 0
    )
    (d / "sub").mkdir()
    assert (
        main(
            [
                "score",
                str(items),
                "-o",
                str(d / "sub" / "second.jsonl"),
                "--summary",
                str(d / "sub" / "second.json"),
                "--set",
                "aggregate.keep_both=true",
                "-q",
            ]
        )
        == 0
    )
    write(d / "plain.jsonl", A)
    (d / "notes.json").write_text('{"not": "a summary"}')
    return d


def test_runs_are_found_with_their_files_and_numbers(runs: Path) -> None:
    found = {r.key: r.record() for r in find_runs(runs)}
    assert sorted(found) == ["first", "plain", "sub/second"]
    first = found["first"]
    assert (first["scored"], first["summary"], first["report"]) == (
        "first.scored.jsonl",
        "first.summary.json",
        "first.report.html",
    )
    assert first["kind"] == "score" and first["n_items"] == 2 and first["input"] == "items.jsonl"
    assert (
        first["metrics"]["cs_c"]["macro"] == 0.25
    )  # (1/2 + 0) / 2, hand-computed in tests/cli/test_tables_and_gate.py
    assert found["sub/second"]["summary"] == "sub/second.json" and found["sub/second"]["report"] is None
    assert found["plain"]["kind"] == "scored file" and found["plain"]["summary"] is None
    assert found["plain"]["n_items"] == 4 and found["plain"]["judge"] is None
    assert [stem(n) for n in ("x.scored.jsonl", "x.summary.json", "x.report.html", "x.jsonl", "x.json")] == ["x"] * 5


def test_the_static_page_lists_the_runs_and_shows_the_compare_command(
    runs: Path, open_report: Any, tmp_path: Path
) -> None:
    page_path = tmp_path / "elsewhere" / "index.html"
    page_path.parent.mkdir()
    assert main(["view", str(runs), "-o", str(page_path), "-q"]) == 0
    page = open_report(page_path, ready="body[data-ready=ready]")
    assert page.locator("tr.run-row").count() == 3
    row = page.locator('tr.run-row[data-key="first"]')
    assert row.locator('td[data-field="n_items"]').inner_text() == "2"
    assert row.locator('td[data-field="cs_c"]').get_attribute("data-value") == "0.25"
    assert row.locator('td[data-field="judge"]').inner_text() == "none (labels given)"
    report = row.locator('a[data-link="report"]')
    href = report.get_attribute("href")
    assert (page_path.parent / href).resolve() == (runs / "first.report.html").resolve()  # the link reaches it
    assert page.locator("#compare-box").is_hidden()
    page.check('tr.run-row[data-key="first"] input.pick')
    page.check('tr.run-row[data-key="sub/second"] input.pick')
    shown = page.locator("#compare-command").inner_text()
    recs = {r.key: r.record() for r in find_runs(runs)}
    assert shown == compare_command(recs["first"], recs["sub/second"], where=str(Path(href).parent))
    up = os.path.relpath(runs, page_path.parent)
    assert shown == (
        f"conflictscore compare {up}/first.scored.jsonl {up}/sub/second.jsonl "
        f"--summary-a {up}/first.summary.json --summary-b {up}/sub/second.json --items {up}/items.jsonl "
        "--label-a first --label-b sub/second --report compare.first.sub_second.html"
    )
    # the command works as shown, run from the page's folder
    words = shlex.split(shown)
    assert words[:2] == ["conflictscore", "compare"]
    assert (
        subprocess.run(
            [sys.executable, "-m", "conflictscore_local.cli", *words[1:], "-q"], cwd=page_path.parent, check=False
        ).returncode
        == 0
    )
    assert (page_path.parent / "compare.first.sub_second.html").is_file()
    assert page.locator('tr.run-row[data-key="plain"] input.pick').is_enabled()
    assert all(u.startswith("file:") for u in page.requests)


@pytest.fixture
def served(runs: Path) -> Iterator[str]:
    server = serve(runs, port=0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def test_served_the_compare_action_opens_the_comparison_page(served: str, browser: Any) -> None:
    page = browser.new_page(viewport={"width": 1360, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served)
    page.wait_for_selector("body[data-ready=ready]")
    page.check('tr.run-row[data-key="first"] input.pick')
    page.check('tr.run-row[data-key="plain"] input.pick')
    with page.expect_navigation():
        page.click("#compare-link")
    page.wait_for_selector("body[data-details=ready]", timeout=15000)
    assert page.title() == "ConflictScore comparison: plain against first"
    assert page.url.startswith(served + "compare?a=first&b=plain")
    page.go_back()
    page.wait_for_selector("body[data-ready=ready]")
    page.click('tr.run-row[data-key="first"] a[data-link="report"]')
    page.wait_for_selector("body[data-details=ready]", timeout=15000)
    assert page.locator("#judge-line").get_attribute("data-judge") == "none (labels given)"
    missing = page.goto(served + "compare?a=first&b=nope")
    assert missing.status == 404
    page.close()
    assert not errors, errors
