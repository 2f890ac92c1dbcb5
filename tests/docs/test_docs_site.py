"""The documentation site builds strictly and reads offline: no page loads anything from the network."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="the docs extra (pip install -e '.[docs]') builds the site")

ROOT = Path(__file__).resolve().parents[2]
# what a browser fetches by itself: scripts, styles, images, fonts, frames (a plain <a href> is a link, not a fetch)
FETCHED = re.compile(
    r"<(?:script|img|iframe|source)\b[^>]*\bsrc=\"(https?:)?//|<link\b[^>]*\bhref=\"(https?:)?//"
    r"|@import\s+url\(\s*['\"]?(https?:)?//|url\(\s*['\"]?https?://"
)


@pytest.mark.slow
def test_the_site_builds_strictly_and_fetches_nothing(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    pages = sorted(site.glob("*.html"))
    assert {"index.html", "quickstart.html", "cli.html", "api.html", "figures.html"} <= {p.name for p in pages}
    for page in [*pages, *site.glob("assets/**/*.css")]:
        text = page.read_text(encoding="utf-8")
        found = FETCHED.search(text)
        assert found is None, f"{page.relative_to(site)} fetches {text[found.start() : found.start() + 120]!r}"
    assert 'href="quickstart.html"' in (site / "index.html").read_text(encoding="utf-8")  # no directory URLs
    assert 'class="doc doc-heading"' in (site / "api.html").read_text(encoding="utf-8")  # from the docstrings
    assert (site / "search" / "search_index.js").is_file()  # the offline plugin's search, from file:// too


def test_the_readme_is_short_and_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.split()) <= 1500
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert [line.split()[:2] for line in first_block.splitlines()] == [["make", "run"], ["make", "test"]]
    assert (ROOT / "docs" / "report.jpg").stat().st_size <= 300 * 1024
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), f"README links to {link}, which does not exist"
