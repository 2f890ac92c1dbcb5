"""Report fixtures: one small scored run made through the real CLI, and the system Chromium.

The run uses the rule judge of ``tests/pipeline/test_engine.py`` ("yes: <claim>" supports, "no:
<claim>" contradicts, "???" is unreadable) with a tiny passage budget, so it has every
kind of cell: support, contradict, irrelevant, unscored, given labels and a deciding
passage inside a multi-passage document.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from conflictscore_local.backends import registry
from conflictscore_local.cli import main

from ..pipeline.test_engine import RuleJudge
from ..support.browser import CHROMIUM, launch

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("CONFLICTSCORE_ARTIFACTS", REPO / "test-artifacts")) / "report"

LONG = (
    "Cats purr loudly at night. Dogs bark at the mailman every day. Birds sing in the early morning. "
    "No: grass is red. Fish swim."
)
MIXED = {
    "id": "mixed",
    "question": "What colour are the sky and the grass?",
    "response": "Sky is blue. Grass is red.",
    "claims": ["Sky is blue.", "Grass is red."],
    "documents": [
        {"id": "pro", "text": "yes: sky is blue"},
        {"id": "con", "text": "no: sky is blue"},
        {"id": "long", "text": LONG},
    ],
}
UNSURE = {
    "id": "unsure",
    "response": "Water is wet.",
    "claims": ["Water is wet."],
    "documents": [{"id": "pro", "text": "yes: water is wet"}, {"id": "odd", "text": "??? the judge cannot read this"}],
}
WORKED = {
    "id": "worked",
    "response": "c1 c2 c3 c4",
    "claims": ["c1", "c2", "c3", "c4"],
    "documents": [{"id": "d1", "text": "a"}, {"id": "d2", "text": "b"}, {"id": "d3", "text": "c"}],
    "labels": [
        ["SUPPORT", "CONTRADICT", "IRRELEVANT"],
        ["SUPPORT", "SUPPORT", "CONTRADICT"],
        ["SUPPORT", "IRRELEVANT", "IRRELEVANT"],
        ["IRRELEVANT", "IRRELEVANT", "IRRELEVANT"],
    ],
}
HOSTILE = {
    "id": "x</script><b>bold</b>",
    "response": "<img src=x onerror=\"document.title='pwned'\">",
    "claims": ["<img src=x onerror=\"document.title='pwned'\">"],
    "documents": [{"id": "<i>d</i>", "text": "</script><script>document.title='pwned'</script>"}],
    "labels": [["SUPPORT"]],
}
EMPTY = {"id": "empty", "response": "", "documents": [], "claims": [], "labels": []}
ITEMS = [MIXED, UNSURE, WORKED, HOSTILE, EMPTY]


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def rule_judge(register_backend: Any) -> None:
    """The rule judge registered as ``rule`` for one test."""
    register_backend("judge", "rule", RuleJudge)


@pytest.fixture(scope="session")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``score ... --report`` on ITEMS: the input, scored output, summary and report paths."""
    d = tmp_path_factory.mktemp("report-run")
    paths = {
        "items": write_jsonl(d / "items.jsonl", ITEMS),
        "scored": d / "scored.jsonl",
        "summary": d / "summary.json",
        "report": d / "report.html",
    }
    with registry.registered("judge", "rule", RuleJudge):  # while this run is made, not for later tests
        code = main(
            [
                "score",
                str(paths["items"]),
                "-o",
                str(paths["scored"]),
                "--summary",
                str(paths["summary"]),
                "--report",
                str(paths["report"]),
                "--judge",
                "rule",
                "--pruner",
                "none",
                "--no-cache",
                "--set",
                "chunk.max_tokens=8",
                "-q",
            ]
        )
    assert code == 3  # one of 8 judgments is unscored on purpose: above engine.max_unscored_share, still written
    assert paths["report"].is_file()
    return paths


def _chromium_problem() -> str | None:
    """Why the system Chromium cannot be used (after trying to install it), or None."""
    if os.path.exists(CHROMIUM):
        return None
    if shutil.which("apt-get") and hasattr(os, "geteuid") and os.geteuid() == 0:
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        r = subprocess.run(
            "apt-get update -qq && apt-get install -y -qq chromium",
            shell=True,
            env=env,
            capture_output=True,
            text=True,
            timeout=1200,
        )
        if os.path.exists(CHROMIUM):
            return None
        return f"`apt-get install -y chromium` failed (exit {r.returncode}): {r.stderr.strip()[-400:]}"
    return f"{CHROMIUM} is missing and cannot be installed here (needs root and apt-get): apt-get install -y chromium"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless system Chromium through Playwright; skips with the reason where it cannot run (fails under CI).

    Module-scoped: while it is open, Playwright's sync API keeps an event loop running in this thread,
    and any later test calling ``asyncio.run`` would fail."""
    give_up = pytest.fail if os.environ.get("CI") else pytest.skip
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        give_up("playwright is not installed: pip install 'conflictscore-local[dev]'")
    problem = _chromium_problem()
    if problem:
        give_up(problem)
    with sync_playwright() as p:
        b = launch(p)
        yield b
        b.close()


@pytest.fixture
def open_report(browser: Any) -> Iterator[Any]:
    """``open_report(path)`` → a page with the report loaded and its item details unpacked.

    Every request the page makes is recorded in ``page.requests``; page errors fail the test.
    """
    pages = []
    errors: list[str] = []

    def open_(path: Path, *, width: int = 1360, fragment: str = "", ready: str = "body[data-details=ready]") -> Any:
        page = browser.new_page(viewport={"width": width, "height": 900})
        page.requests = []
        page.on("request", lambda r: page.requests.append(r.url))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(path.resolve().as_uri() + fragment)
        page.wait_for_selector(ready, timeout=15000)
        pages.append(page)
        return page

    yield open_
    for p in pages:
        p.close()
    assert not errors, errors


def artifact(name: str) -> Path:
    """A path for a test artifact (screenshots) under test-artifacts/report/ or $CONFLICTSCORE_ARTIFACTS."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / name
