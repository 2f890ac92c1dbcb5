"""No hand-copied figure: every number a docs figure row quotes is in the results file it cites.

``docs/figures.md`` lists measured figures, one row each, with the recorded files in its last
column. The default judge's rows are filled from its results when the site is built
(``{{ result(...) }}``, docs/_tools/macros.py); for every other row each decimal figure of its result
cell must occur in one of the files the row names (or the ``.json`` beside a cited ``.md``), so a
rerun that changes a figure fails here until the page is updated. The same holds for every paragraph
of the other pages that cites a file of ``benchmarks/results/``.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "figures.md"
# a figure: a decimal number (0.991, 27.0, 1.6), optionally a percentage or a ratio (×)
NUMBER = re.compile(r"(?<![\w.])\d+\.\d+(?![\w.])")
# a version bound (rich >= 14.2, transformers < 4.58) is no figure
VERSION_BOUND = re.compile(r"(?:≥|≤|>=|<=|<|>)\s*$")


def _as_percentages(text: str, decimals: int) -> set[str]:
    """Every share (0.9911) of ``text`` as the percentage a page would round it to (99.1)."""
    return {f"{float(x) * 100:.{decimals}f}" for x in re.findall(r"(?<![\w.])0\.\d+", text)}


def absent_figures(block: str, text: str) -> list[str]:
    """The figures of ``block`` that ``text`` does not hold (a percentage may be recorded as a share)."""
    absent = []
    for m in NUMBER.finditer(block):
        n = m.group()
        if n in text or VERSION_BOUND.search(block[max(0, m.start() - 4):m.start()]):
            continue
        if block[m.end():m.end() + 1] == "%" and n in _as_percentages(text, len(n.split(".")[1])):
            continue
        absent.append(n)
    return absent
CITED = re.compile(r"`((?:benchmarks|models)/[^`]+\.(?:md|json))`")


def rows() -> list[tuple[str, str, list[Path]]]:
    found = []
    for line in FIGURES.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("what", "---") or set(cells[0]) <= {"-"}:
            continue
        what, result, where = cells
        if "{{" in result:
            continue
        found.append((what, result, [ROOT / p for p in CITED.findall(where)]))
    return found


def recorded_text(paths: list[Path]) -> str:
    texts = []
    for path in paths:
        for candidate in (path, path.with_suffix(".json")):
            if candidate.is_file():
                texts.append(candidate.read_text(encoding="utf-8"))
    return "\n".join(texts)


def test_figures_page_has_rows() -> None:
    assert len(rows()) >= 10


@pytest.mark.parametrize(("what", "result", "paths"), rows(), ids=lambda v: v[:40] if isinstance(v, str) else "")
def test_each_figure_is_in_its_results_file(what: str, result: str, paths: list[Path]) -> None:
    assert paths, f"row {what!r} cites no results file"
    missing = [p for p in paths if not p.is_file()]
    assert not missing, f"row {what!r} cites files that do not exist: {missing}"
    text = recorded_text(paths)
    absent = absent_figures(result, text)
    assert not absent, f"row {what!r}: {absent} appear in none of {[str(p.relative_to(ROOT)) for p in paths]}"


def test_default_judge_figures_resolve() -> None:
    """The files mkdocs.yml names for the default judge hold every path the pages read."""
    spec = importlib.util.spec_from_file_location("macros", ROOT / "docs" / "_tools" / "macros.py")
    macros = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(macros)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    names = dict(re.findall(r"^\s+(conflictbench|checklist): (\S+)$", config, re.M))
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    calls = re.findall(r'result\(config\.extra\.default_judge\.(\w+), "([^"]+)"\)', pages)
    assert calls
    for key, path in calls:
        assert isinstance(macros.lookup(names[key], path), (int, float)), (key, path)
    with pytest.raises(KeyError, match="has no 'detection.nope'"):
        macros.lookup(names["conflictbench"], "detection.nope")


def test_no_default_judge_figure_is_hand_written() -> None:
    """Pages quote the default judge's ConflictBench figures only through the results file."""
    name = re.search(r"^\s+conflictbench: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M).group(1)
    data = json.loads((ROOT / "benchmarks" / "results" / name).read_text())
    overall = data["detection"]["overall"]
    figures = {f"{overall[k]:.3f}" for k in ("precision", "recall", "f1")} | {"P 0.83 / R 0.57"}
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = page.read_text(encoding="utf-8")
        quoted = [f for f in figures if re.search(rf"(?<![\d.]){re.escape(f)}(?!\d)", text)]
        assert not quoted, f"{page.name} quotes the default judge's figures {quoted} by hand"


def paragraphs() -> list[tuple[str, str, list[Path]]]:
    """Every paragraph (or list item) of a docs page that cites results files, outside code blocks."""
    found = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name == "figures.md":
            continue
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for block in re.split(r"\n\s*\n|\n(?=- )", text):
            cited = [ROOT / p for p in CITED.findall(block) if p.startswith("benchmarks/results/")]
            if cited and "{{" not in block:
                found.append((f"{page.name}: {block.strip()[:50]}", block, cited))
    return found


@pytest.mark.parametrize(("where", "block", "paths"), paragraphs(), ids=lambda v: v[:60] if isinstance(v, str) else "")
def test_each_figure_in_the_prose_is_in_the_file_it_cites(where: str, block: str, paths: list[Path]) -> None:
    text = recorded_text(paths)
    absent = absent_figures(block, text)
    assert not absent, f"{where}: {absent} appear in none of {[str(p.relative_to(ROOT)) for p in paths]}"


def test_absent_figures() -> None:
    assert absent_figures("kept 99.1% and 98.4%, rich >= 14.2, 1.6x", "0.9911 0.9839 1.6") == []
    assert absent_figures("kept 97.0% at 2.5 s", "0.9911 2.4") == ["97.0", "2.5"]
