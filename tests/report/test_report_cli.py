"""`conflictscore report`: the command writes the page, and refuses bad input with exit 2 and a message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main


def test_report_command_writes_the_page(run: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture):
    out = tmp_path / "sub" / "r.html"
    assert (
        main(
            [
                "report",
                str(run["scored"]),
                "--items",
                str(run["items"]),
                "--summary",
                str(run["summary"]),
                "-o",
                str(out),
                "--title",
                "Sweep <7>",
            ]
        )
        == 0
    )
    page = out.read_text(encoding="utf-8")
    assert "<title>Sweep &lt;7&gt;</title>" in page
    assert capsys.readouterr().out.startswith(f"wrote {out} (")
    assert 'id="no-items-note"' not in page and 'id="computed-note"' not in page
    assert 'data-summary="n_items" data-value="5"' in page


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.jsonl"], "missing.jsonl: no such file"),
        (["{scored}", "--items", "{summary}"], "summary.json:1: invalid JSON"),
        (["{scored}", "--summary", "{items}"], "items.jsonl: not JSON"),
        (["{items}"], "items.jsonl:1: field 'claims[0]': not a scored result line"),
    ],
)
def test_bad_inputs_exit_2_naming_the_file(
    run: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture, args: list[str], message: str
):
    argv = ["report", *(a.format(**{k: str(v) for k, v in run.items()}) for a in args), "-o", str(tmp_path / "r.html")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("conflictscore report: error: ") and message in err
    assert not (tmp_path / "r.html").exists()


def test_a_report_that_cannot_be_written_exits_2_naming_it(
    run: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture
):
    (tmp_path / "a-file").write_text("x")
    for target in (tmp_path, tmp_path / "a-file" / "r.html"):  # a folder; below a file
        assert main(["report", str(run["scored"]), "-o", str(target)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("conflictscore report: error: ") and str(target) in err and "report" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]  # no temporary file left


def test_score_report_equals_the_report_command(run: dict[str, Path], tmp_path: Path):
    """`score --report` and `report` on the same files show the same numbers and records."""
    import re

    again = tmp_path / "again.html"
    assert (
        main(
            [
                "report",
                str(run["scored"]),
                "--items",
                str(run["items"]),
                "--summary",
                str(run["summary"]),
                "-o",
                str(again),
            ]
        )
        == 0
    )

    def body(p: Path) -> str:
        text = p.read_text(encoding="utf-8")
        text = re.sub(r"written [^ ]+ by", "written by", text)
        return re.sub(r"<b>scored</b> [^<]*", "", text)

    assert body(again) == body(run["report"])
    assert json.loads(run["summary"].read_text())["n_items"] == 5


def test_no_event_loop_is_left_running_after_the_browser_tests():
    """Playwright's sync API runs an event loop in this thread while its browser is open; the browser
    fixture closes it with its module, so later tests (this file runs after test_report_browser.py;
    tests/integrations' batcher tests) can start their own with asyncio.run."""
    import asyncio

    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"
