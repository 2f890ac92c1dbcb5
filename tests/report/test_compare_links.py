"""The compare page links each run's own report when one sits beside its scored file (same stem, as
``conflictscore view`` pairs files), relative to the page."""

from __future__ import annotations

import re
from pathlib import Path

from conflictscore_local.cli import main
from conflictscore_local.report.runs import report_beside

LABELED = Path(__file__).resolve().parents[2] / "examples" / "labeled.jsonl"


def test_each_runs_report_is_linked_relative_to_the_page(tmp_path: Path) -> None:
    runs, pages = tmp_path / "runs", tmp_path / "pages"
    runs.mkdir()
    pages.mkdir()
    inp = runs / "labeled.jsonl"
    inp.write_bytes(LABELED.read_bytes())
    a, b = runs / "a.scored.jsonl", runs / "b.jsonl"
    assert main(["score", str(inp), "-o", str(a), "--report", str(runs / "a.report.html"), "-q"]) == 0
    assert main(["score", str(inp), "-o", str(b), "--set", "aggregate.threshold=0.6", "-q"]) == 0
    page = pages / "cmp.html"
    assert main(["compare", str(a), str(b), "--report", str(page), "-q"]) == 0
    links = re.findall(r'<a class="run-report" data-side="(\w)" href="([^"]+)">its report</a>', page.read_text())
    assert links == [("A", "../runs/a.report.html")]  # B has no report beside it
    assert (page.parent / links[0][1]).resolve() == (runs / "a.report.html").resolve()

    (runs / "b.html").write_text("<html></html>")  # a report named x.html pairs with x.jsonl too
    assert main(["compare", str(a), str(b), "--report", str(page), "-q"]) == 0
    assert re.findall(r'data-side="(\w)" href="([^"]+)">its report', page.read_text()) == [
        ("A", "../runs/a.report.html"),
        ("B", "../runs/b.html"),
    ]


def test_report_beside_pairs_by_stem_and_never_names_the_page_itself(tmp_path: Path) -> None:
    for name in ("x.jsonl", "x.report.html", "y.jsonl", "xy.html", "z.jsonl", "z.html"):
        (tmp_path / name).write_text("")
    assert report_beside(tmp_path / "x.jsonl") == tmp_path / "x.report.html"
    assert report_beside(tmp_path / "y.jsonl") is None
    assert report_beside(tmp_path / "z.jsonl", besides=tmp_path / "z.html") is None
    assert report_beside(tmp_path / "missing" / "q.jsonl") is None
