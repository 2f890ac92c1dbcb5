"""No hand-copied figure: every number a docs figure row quotes is in the results file it cites.

``docs/figures.md`` lists measured figures, one row each, with the recorded files in its last
column. Figures rendered from a results file (``<!-- fig result(...) -->VALUE<!-- /fig -->``,
``benchmarks/tools/render_docs.py``) are checked by ``tests/docs/test_rendered_figures.py`` and left out here;
for every other figure of a row each decimal figure of its result
cell must occur in one of the files the row names (or the ``.json`` beside a cited ``.md``), so a
rerun that changes a figure fails here until the page is updated. The same holds for every paragraph
of the other pages that cites a file of ``benchmarks/results/``. The figures docs/ quotes for sampling,
the cascade and the strategy comparison are formatted from their results files here (the tests at the end).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPO = ROOT
RESULTS = REPO / "benchmarks" / "results"
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
        if n in text or VERSION_BOUND.search(block[max(0, m.start() - 4) : m.start()]):
            continue
        if block[m.end() : m.end() + 1] == "%" and n in _as_percentages(text, len(n.split(".")[1])):
            continue
        absent.append(n)
    return absent


CITED = re.compile(r"`((?:benchmarks|models)/[^`]+\.(?:md|json))`")


RENDERED = re.compile(r"<!-- fig .+? -->.*?<!-- /fig -->", re.S)


def hand_written(text: str) -> str:
    """``text`` without its rendered figures (each checked against its file where it is rendered), keeping
    the results files they cite (``path(...)``)."""
    return RENDERED.sub(lambda m: m.group() if m.group().startswith("<!-- fig path(") else "", text)


def rows() -> list[tuple[str, str, list[Path]]]:
    found = []
    for line in FIGURES.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in hand_written(line).strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("what", "---") or set(cells[0]) <= {"-"}:
            continue
        what, result, where = cells
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
    from benchmarks.tools import render_docs as render

    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    names = dict(re.findall(r"^\s+(conflictbench|checklist): (\S+)$", config, re.M))
    pages = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    calls = re.findall(r'result\(config\.extra\.default_judge\.(\w+), "([^"]+)"\)', pages)
    assert calls
    for key, path in calls:
        assert isinstance(render.lookup(names[key], path), (int, float)), (key, path)
    with pytest.raises(KeyError, match="has no 'evaluation.detection.nope'"):
        render.lookup(names["conflictbench"], "evaluation.detection.nope")


# pages whose every figure the tests at the end of this file format from its results file
FORMATTED_HERE = {"sampling.md", "cascade.md", "compare.md"}


def test_no_default_judge_figure_is_hand_written() -> None:
    """Pages quote the default judge's ConflictBench figures only through the results file."""
    name = re.search(r"^\s+conflictbench: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.M).group(1)
    data = json.loads((ROOT / "benchmarks" / "results" / name).read_text())
    overall = data["evaluation"]["detection"]["overall"]
    figures = {f"{overall[k]:.3f}" for k in ("precision", "recall", "f1")} | {"P 0.83 / R 0.57"}
    for page in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        if page.name in FORMATTED_HERE:
            continue
        text = hand_written(page.read_text(encoding="utf-8"))
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
            if cited and not RENDERED.search(block):  # a paragraph of rendered figures: checked where rendered
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


# --- sampling, cascade, compare: each figure formatted from its results file ---


def load(name: str) -> dict[str, Any]:
    path = RESULTS / name
    if not path.is_file():
        pytest.fail(f"{path} is missing: rerun the benchmark that records it")
    return json.loads(path.read_text(encoding="utf-8"))


def text(name: str) -> str:
    return (REPO / name).read_text(encoding="utf-8")


def sampling_row(result: dict[str, Any], set_prefix: str, rule: str, k: int) -> dict[str, Any]:
    (s,) = [s for s in result["sets"] if s["name"].startswith(set_prefix) and "two claims or more" in s["name"]]
    (row,) = [r for r in s["rows"] if r["rule"] == rule and r["k"] == k]
    return {**row, "saved": row[f"{s['cost']}_saved_share"], "items": s["items"]}


def test_sampling_figures_are_the_recorded_ones() -> None:
    result = load("pipeline/claim_sampling.json")
    doc = text("docs/sampling.md")
    gold = {
        rule: sampling_row(result, "ConflictBench all splits", rule, 1)
        for rule in ("first", "longest", "salient", "random")
    }
    assert f"gold labels ({gold['first']['items']} items): K = 1 leaves out {gold['first']['saved']:.1%}" in doc
    assert (
        f"error is {gold['first']['cs_c']['mean_abs_error']:.3f} (`first`), "
        f"{gold['longest']['cs_c']['mean_abs_error']:.3f} (`longest`), "
        f"{gold['salient']['cs_c']['mean_abs_error']:.3f} (`salient`), "
        f"{gold['random']['cs_c']['mean_abs_error']:.3f} (`random`, mean of 50 seeds;\n"
        f"  largest {gold['random']['cs_c']['max_abs_error']:.3f})"
    ) in doc
    dev = {
        rule: sampling_row(result, "ConflictBench, dev", rule, 1) for rule in ("first", "longest", "salient", "random")
    }
    assert f"default judge ({dev['first']['items']} items): K = 1 saves {dev['first']['saved']:.1%}" in doc
    assert (
        f"CS-C error is {dev['first']['cs_c']['mean_abs_error']:.3f} (`first`), "
        f"{dev['longest']['cs_c']['mean_abs_error']:.3f} (`longest`), "
        f"{dev['salient']['cs_c']['mean_abs_error']:.3f} (`salient`), "
        f"{dev['random']['cs_c']['mean_abs_error']:.3f} (`random`; largest "
        f"{dev['random']['cs_c']['max_abs_error']:.3f})"
    ) in doc
    k2 = sampling_row(result, "ConflictBench, dev", "salient", 2)
    assert f"At K = 2 ({k2['saved']:.1%} saved) `salient` is the closest, {k2['cs_c']['mean_abs_error']:.3f}" in doc
    rg = {
        rule: sampling_row(result, "report generation", rule, 1) for rule in ("first", "longest", "salient", "random")
    }
    assert rg["longest"]["cs_c"]["mean_abs_error"] == rg["salient"]["cs_c"]["mean_abs_error"]
    assert (
        f"({rg['first']['items']} items): CS-C error {rg['first']['cs_c']['mean_abs_error']:.3f} (`first`),\n"
        f"  {rg['longest']['cs_c']['mean_abs_error']:.3f} (`longest` and `salient`), "
        f"{rg['random']['cs_c']['mean_abs_error']:.3f} (`random`; largest "
        f"{rg['random']['cs_c']['max_abs_error']:.3f})"
    ) in doc
    # "At K = 2 the error of every rule (random: its mean) is at most 0.038 on CS-C and 0.025 on CS-R"
    multi = [s for s in result["sets"] if "two claims or more" in s["name"]]
    worst = {
        key: max(r[key]["mean_abs_error"] for s in multi for r in s["rows"] if r["k"] == 2) for key in ("cs_c", "cs_r")
    }
    assert f"at most {worst['cs_c']:.3f} on CS-C and {worst['cs_r']:.3f} on CS-R" in doc


def cascade_row(result: dict[str, Any], second: str, flips: bool, below: float) -> dict[str, Any]:
    (s,) = [s for s in result["sweeps"] if s["second"].startswith(second)]
    (row,) = [r for r in s["rows"] if r["escalate_flips"] is flips and r["escalate_below"] == below]
    return {**row, "share": row["escalated"] / row["pairs"]}


def test_cascade_figures_are_the_recorded_ones() -> None:
    result = load("pipeline/cascade_sweep.json")
    doc = text("docs/cascade.md")
    none, at8, at95 = (cascade_row(result, "gold-oracle", False, b) for b in (0.0, 0.8, 0.95))
    flip0, flip8, flip95 = (cascade_row(result, "gold-oracle", True, b) for b in (0.0, 0.8, 0.95))
    assert (
        f"F1 rises from {none['f1']:.3f} (no\n  escalation) to {at8['f1']:.3f} at `escalate_below` 0.8 "
        f"({at8['share']:.1%} of pairs escalated) and {at95['f1']:.3f} at 0.95 ({at95['share']:.1%})"
    ) in doc
    assert f"The\n  flip rule alone escalates {flip0['share']:.1%} of pairs for the same {flip0['f1']:.3f}" in doc
    assert f"{flip0['f1']:.3f}" == f"{at8['f1']:.3f}"
    assert (
        f"Together: {flip8['f1']:.3f} at 0.8 ({flip8['share']:.1%}), {flip95['f1']:.3f} at 0.95 ({flip95['share']:.1%})"
    ) in doc
    (v1,) = [s for s in result["sweeps"] if s["second"] == "judge-v1"]
    f1s = [r["f1"] for r in v1["rows"]]
    alone = cascade_row(result, "judge-v1", False, 1.0)
    first_alone = cascade_row(result, "judge-v1", False, 0.0)
    assert f"(ConflictBench dev F1 {alone['f1']:.3f} alone)" in doc
    assert f"stays between\n  {min(f1s):.3f} and {max(f1s):.3f}" in doc
    assert f"first judge alone on those scores {first_alone['f1']:.3f} instead of {none['f1']:.3f}" in doc


def test_compare_figures_are_the_recorded_ones() -> None:
    doc = text("docs/compare.md")
    compared = load("experiments/report_generation/smollm2-135m.compare.json")
    cs_c = compared["pairs"]["super-balanced vs standard"]["metrics"]["cs_c"]
    assert (
        f"super-balanced −\nstandard CS-C {cs_c['diff']:+.3f} [{cs_c['ci95'][0]:+.2f}, {cs_c['ci95'][1]:+.2f}], "
        f"permutation p {cs_c['p_permutation']:.2f}"
    ) in doc
    verdicts = {m["verdict"] for pair in compared["pairs"].values() for m in pair["metrics"].values()}
    assert verdicts == {"no detectable difference"}  # "no detectable difference on any metric"
