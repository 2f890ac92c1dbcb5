"""Figures where people read them: the committed Markdown (docs pages, README, model cards) carries each
figure's value, rendered from ``benchmarks/results/`` by ``benchmarks/tools/render_docs.py``; a file whose value
differs from its results fails here and fails the site build (``docs/_tools/hooks.py``)."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def render() -> Any:
    from benchmarks.tools import render_docs

    return render_docs


def test_no_template_call_is_left_where_people_read(render: Any) -> None:
    files = render.pages()
    assert ROOT / "README.md" in files and ROOT / "docs" / "speed.md" in files
    assert ROOT / "models" / "default-judge" / "README.md" in files
    left = [
        f"{p.relative_to(ROOT)}:{n}"
        for p in files
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\{\{\s*(result|config)", line)
    ]
    assert left == []


def test_every_committed_figure_is_what_its_results_give(render: Any) -> None:
    extra = render.site_extra()
    counted = 0
    for path in render.pages():
        text = path.read_text(encoding="utf-8")
        counted += sum(1 for _ in render.figures(text))
        fix = f"{path.relative_to(ROOT)}: run python -m benchmarks.tools.render_docs"
        assert render.stale(text, extra) == [], fix
        assert render.render_file(path, extra) == text, fix
    assert counted >= 100  # speed.md alone holds about 90
    assert render.main(["--check"]) == 0


def test_a_value_that_differs_is_named_and_rendered_again(render: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    (results / "run.json").write_text(
        json.dumps({"a": {"f1": 0.69504, "n": 443, "rows": [0.5, 0.25]}, "name": "fp32-torch"})
    )
    extra = {"default_judge": {"name": "v9", "bench": "run.json"}}
    page = (
        'F1 <!-- fig result(config.extra.default_judge.bench, "a.f1") -->0.700<!-- /fig --> of\n'
        '<!-- fig result("run.json", "a.n", "d") -->443<!-- /fig --> inputs, judge '
        "<!-- fig config.extra.default_judge.name -->v9<!-- /fig --> (<!-- fig "
        "path(config.extra.default_judge.bench) -->`benchmarks/results/run.json`<!-- /fig -->), second row "
        '<!-- fig result("run.json", "a.rows.1", ".2f") -->0.25<!-- /fig -->, variant '
        '<!-- fig result("run.json", "name") -->fp32-torch<!-- /fig -->\n'
    )
    assert render.stale(page, extra, results) == [
        (1, 'result(config.extra.default_judge.bench, "a.f1")', "0.700", "0.695")
    ]
    fixed = render.render(page, extra, results)
    assert fixed == page.replace("-->0.700<", "-->0.695<")
    assert render.stale(fixed, extra, results) == []
    # a key or a file that is not there, an expression of another kind: named, never rendered as something
    missing = '<!-- fig result("run.json", "a.f2") -->1<!-- /fig -->\n<!-- fig open("x") -->1<!-- /fig -->'
    assert [(line, want) for line, _, _, want in render.stale(missing, extra, results)] == [
        (1, "error: benchmarks/results/run.json has no 'a.f2' (stopped at 'f2')"),
        (
            2,
            "error: cannot read open('x') in open(\"x\"): allowed: result(FILE, PATH[, FORMAT]), "
            "result_table(FILE[, PATH]), path(FILE), config.extra.KEY and quoted strings",
        ),
    ]
    with pytest.raises(KeyError, match="has no 'a.f2'"):
        render.render(missing, extra, results)


def test_a_model_card_gets_its_figures_and_its_tables_in_one_pass(render: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    (results / "judge").mkdir(parents=True)
    for tag, rate in (("v3", 0.4), ("v5", 0.9)):
        (results / "judge" / f"judge_checklist_{tag}.json").write_text(
            json.dumps({"capabilities": {"negation": {"n": 10, "pass_rate": rate}}, "macro_pass_rate": rate})
        )
    card = tmp_path / "models" / "my-judge" / "README.md"
    card.parent.mkdir(parents=True)
    card.write_text(
        'mean <!-- fig result("judge/judge_checklist_v5.json", "macro_pass_rate") -->0.1<!-- /fig -->\n'
        "<!-- card:checklist -->\nstale\n<!-- /card:checklist -->\n"
    )
    assert render.render_file(card, {}, results) == (
        'mean <!-- fig result("judge/judge_checklist_v5.json", "macro_pass_rate") -->0.900<!-- /fig -->\n'
        "<!-- card:checklist -->\n| capability | probes | v3 | v5 |\n|---|---:|---:|---:|\n"
        "| negation | 10 | 0.400 | **0.900** |\n| mean | | 0.400 | **0.900** |\n<!-- /card:checklist -->\n"
    )


def test_the_site_build_fails_on_a_figure_that_differs() -> None:
    """The hook ``mkdocs build --strict`` runs on every page (``make docs``), on a page whose figure was edited."""
    from mkdocs.exceptions import PluginError

    spec = importlib.util.spec_from_file_location("hooks", ROOT / "docs" / "_tools" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    config = {"extra": {"default_judge": {"conflictbench": "judge/conflictbench_default-judge-v5.json"}}}
    page = SimpleNamespace(file=SimpleNamespace(src_uri="pipeline.md"))
    text = (ROOT / "docs" / "pipeline.md").read_text(encoding="utf-8")
    assert hooks.on_page_markdown(text, page, config, None) is not None  # as committed: builds
    m = re.search(
        r'(<!-- fig result\(config\.extra\.default_judge\.conflictbench, "evaluation\.detection\.overall\.f1"\) -->)'
        r"([0-9.]+)(<!-- /fig -->)",
        text,
    )
    assert m is not None
    edited = text.replace(m.group(), m.group(1) + "0.999" + m.group(3))
    line = text.count("\n", 0, m.start()) + 1
    with pytest.raises(
        PluginError,
        match=rf"docs/pipeline\.md:{line}: .* reads '0\.999', its results give "
        rf"'{re.escape(m.group(2))}'\nrun: python -m benchmarks\.tools\.render_docs",
    ):
        hooks.on_page_markdown(edited, page, config, None)


def test_a_recorded_table_and_the_template_calls_of_before_convert_and_render(render: Any, tmp_path: Path) -> None:
    results = tmp_path / "results"
    results.mkdir()
    table = {
        "columns": ["workload", "peer", "median s"],
        "rows": [["rag", "st-onnx", "7.191"], ["long", "vllm", "2.5"]],
    }
    (results / "peers.json").write_text(json.dumps({"table": table, "f1": 0.5}))
    assert render.markdown_table(table, "x.json table") == (
        "| workload | peer | median s |\n|---|---|---|\n| rag | st-onnx | 7.191 |\n| long | vllm | 2.5 |"
    )
    with pytest.raises(ValueError, match=r"x.json table: row 1 has 2 cells for 3 columns"):
        short = {"columns": table["columns"], "rows": [table["rows"][0], ["rag", "vllm"]]}
        render.markdown_table(short, "x.json table")
    page = (
        '---\nrender_macros: true\n---\n\n# Peers\n\nF1 {{ result("peers.json", "f1") }} '
        '(`benchmarks/results/{{ config.extra.judge.bench }}`)\n\n{{ result_table("peers.json") }}\n'
    )
    converted = render.convert(page)
    assert "{{" not in converted and converted.startswith("# Peers")
    assert render.render(converted, {"judge": {"bench": "peers.json"}}, results) == (
        '# Peers\n\nF1 <!-- fig result("peers.json", "f1") -->0.500<!-- /fig --> (<!-- fig '
        "path(config.extra.judge.bench) -->`benchmarks/results/peers.json`<!-- /fig -->)\n\n"
        '<!-- fig result_table("peers.json") -->\n\n| workload | peer | median s |\n|---|---|---|\n'
        "| rag | st-onnx | 7.191 |\n| long | vllm | 2.5 |\n\n<!-- /fig -->\n"
    )
