"""What the report is made of: exact records, the summary it shows, errors on inputs that do not belong together."""

from __future__ import annotations

import base64
import gzip
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conflictscore_local.core.errors import InputError
from conflictscore_local.core.metrics import summarize_metrics
from conflictscore_local.formats.results import read_results
from conflictscore_local.report import load_inputs, render_html
from conflictscore_local.report import plots as plots_mod
from conflictscore_local.report.data import item_records, summary_section

from .conftest import HOSTILE, ITEMS, write_jsonl


def test_item_records_hold_the_exact_cells_spans_and_index(run: dict[str, Path]):
    inputs = load_inputs(run["scored"], items=run["items"], summary=run["summary"])
    index, details = item_records(inputs)
    assert [r["id"] for r in index] == ["mixed", "unsure", "worked", HOSTILE["id"], "empty"]
    known = ("id", "nc", "cc", "cr", "ce", "sr", "nk", "nu")  # a metric added to the table adds a code
    assert {k: index[4][k] for k in known} == {
        "id": "empty",
        "nc": 0,
        "cc": None,
        "cr": None,
        "ce": None,
        "sr": None,
        "nk": 0,
        "nu": 0,
    }
    assert {k: index[0][k] for k in known} == {
        "id": "mixed",
        "nc": 2,
        "cc": 0.5,
        "cr": 0.5,
        "ce": 0.75,
        "sr": 0.5,
        "nk": 1,
        "nu": 0,
    }
    assert {k: index[1][k] for k in known} == {
        "id": "unsure",
        "nc": 1,
        "cc": 0.0,
        "cr": None,
        "ce": 0.0,
        "sr": 1.0,
        "nk": 0,
        "nu": 1,
    }
    assert index[2]["cr"] == round(5 / 12, 6) and index[2]["ce"] == round(5 / 18, 6)
    mixed = details[0]
    assert mixed["docs"] == ["pro", "con", "long"] and mixed["q"] == ITEMS[0]["question"]
    assert mixed["dt"] == [d["text"] for d in ITEMS[0]["documents"]]
    assert mixed["claims"] == [
        {"x": "Sky is blue.", "a": [0, 12], "k": 1, "r": 0.5},
        {"x": "Grass is red.", "a": [13, 26], "k": 0, "r": 1.0},
    ]
    assert mixed["cells"][1] == [
        {"l": "I", "s": "judge", "p": [0.1, 0.1, 0.8]},
        {"l": "I", "s": "judge", "p": [0.1, 0.1, 0.8]},
        {"l": "C", "s": "judge", "p": [0.1, 0.8, 0.1], "k": 3, "n": 4, "a": [96, 124]},
    ]
    assert details[1]["cells"][0][1] == {"l": None, "s": "judge", "t": "unreadable output"}
    worked = details[2]
    assert worked["cells"][1] == [{"l": "S", "s": "given"}, {"l": "S", "s": "given"}, {"l": "C", "s": "given"}]
    # given claims carry no span: each is found in the response after the one before
    assert [c["a"] for c in worked["claims"]] == [[0, 2], [3, 5], [6, 8], [9, 11]]


def test_without_items_columns_come_from_the_judgments_and_no_text_is_shown(run: dict[str, Path]):
    inputs = load_inputs(run["scored"])
    index, details = item_records(inputs)
    assert details[0]["docs"] == ["pro", "con", "long"]
    assert "r" not in details[0] and "dt" not in details[0]
    assert details[2]["claims"][0] == {"x": "c1", "a": None, "k": 1, "r": 0.5}
    page = render_html(inputs)
    assert 'id="no-items-note"' in page and 'id="computed-note"' in page


def test_the_summary_shown_is_the_file_or_else_computed_from_the_results(run: dict[str, Path]):
    s = json.loads(run["summary"].read_text())
    shown = summary_section(load_inputs(run["scored"], summary=run["summary"]))
    assert shown["computed"] == [] and shown["kind"] == "score"
    assert {m["key"]: (m["macro"], m["micro"], m["ci"]) for m in shown["metrics"]} == {
        k: (s["macro"][k], s["micro"][k], s["ci95"][k]) for k in s["macro"]
    }
    assert {p["key"]: p["value"] for p in shown["pairs"]} == s["pairs"]
    computed = summary_section(load_inputs(run["scored"]))
    m = summarize_metrics(read_results(run["scored"]))
    assert computed["computed"] == ["all"] and computed["config"] == {}
    assert {x["key"]: x["macro"] for x in computed["metrics"]} == m["macro"] == s["macro"]
    assert {x["key"]: x["ci"] for x in computed["metrics"]} == {k: list(v) for k, v in m["ci95"].items()} == s["ci95"]
    partial = summary_section(
        load_inputs(run["scored"], summary={k: v for k, v in s.items() if k not in ("ci95", "pairs")})
    )
    assert partial["computed"] == ["ci95", "pairs"]
    assert {x["key"]: x["ci"] for x in partial["metrics"]} == s["ci95"]
    assert {p["key"]: p["value"] for p in partial["pairs"]} == s["pairs"]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda t, items, summ: {"items": write_jsonl(t / "other.jsonl", items[1:])},
            r"other\.jsonl: no item with id 'mixed' \(scored in .*scored\.jsonl\): give the input file of this run",
        ),
        (
            lambda t, items, summ: {"summary": _write(t / "s.json", {**summ, "n_items": 3})},
            r"s\.json: describes 3 items but .*scored\.jsonl holds 5: not the summary of that run",
        ),
        (
            lambda t, items, summ: {"summary": _write(t / "s.json", {"accuracy": 1})},
            r"s\.json: neither a score summary .* nor a bench run results file",
        ),
        (
            lambda t, items, summ: {"summary": _write(t / "s.json", {"bench": {}, "detection": {}})},
            r"s\.json: field 'conflictscore.macro': missing",
        ),
        (
            lambda t, items, summ: {"summary": _write(t / "s.json", {**summ, "macro": []})},
            r"s\.json: field 'macro': expected an object, got list",
        ),
        (
            lambda t, items, summ: {"summary": _write(t / "s.json", {**summ, "pairs": 18})},
            r"s\.json: field 'pairs': expected an object, got int",
        ),
        (
            lambda t, items, summ: {"summary": _write(t / "s.json", {**summ, "n_items": "5"})},
            r"s\.json: field 'n_items': expected a whole number, got str",
        ),
        (
            lambda t, items, summ: {
                "items": write_jsonl(
                    t / "other.jsonl",
                    [
                        {**it, "documents": [{"id": "x", "text": "t"}] * 1} if it["id"] == "mixed" else it
                        for it in items
                    ],
                )
            },
            r"item 'mixed': claim 0 is judged against document 'pro', which the item does not have \(documents: x\)",
        ),
        (
            lambda t, items, summ: {
                "items": write_jsonl(
                    t / "other.jsonl", [{**it, "response": "short"} if it["id"] == "mixed" else it for it in items]
                )
            },
            None,
        ),
        (lambda t, items, summ: {"items": t / "missing.jsonl"}, r"missing\.jsonl: no such file"),
    ],
)
def test_inputs_that_do_not_belong_together_are_refused(run: dict[str, Path], tmp_path: Path, change, message):
    items = [json.loads(x) for x in run["items"].read_text().splitlines()]
    args = {
        "items": run["items"],
        "summary": run["summary"],
        **change(tmp_path, items, json.loads(run["summary"].read_text())),
    }
    if message is None:  # a response that no longer holds the claims: shown without marks, not an error
        _, details = item_records(load_inputs(run["scored"], **args))
        assert [c["a"] for c in details[0]["claims"]] == [None, None]
        return
    with pytest.raises(InputError, match=message):
        inputs = load_inputs(run["scored"], **args)
        item_records(inputs)
        summary_section(inputs)


def test_a_recorded_span_outside_the_response_is_refused(run: dict[str, Path], tmp_path: Path):
    rows = [json.loads(x) for x in run["scored"].read_text().splitlines()]
    rows[0]["claims"][0]["span"] = [0, 99]
    scored = write_jsonl(tmp_path / "scored.jsonl", rows)
    with pytest.raises(
        InputError, match=r"item 'mixed': claim 0 has span \[0, 99\] outside its response of 26 characters"
    ):
        item_records(load_inputs(scored, items=run["items"]))


def _write(path: Path, obj: object) -> Path:
    path.write_text(json.dumps(obj))
    return path


def test_the_page_is_self_contained_and_carries_its_records(run: dict[str, Path]):
    page = run["report"].read_text(encoding="utf-8")
    assert "default-src 'none'" in page  # the browser itself refuses any request
    assert not re.search(r"<link|@import|url\(|(src|href)=\"(?!data:|#)", page)
    assert all(m.startswith("data:image/svg+xml;base64,") for m in re.findall(r'src="([^"]*)"', page))
    assert HOSTILE["id"] not in page  # every "<" of the data is escaped or compressed
    packed = re.search(r'<script id="cs-details"[^>]*>([^<]*)</script>', page).group(1)  # type: ignore[union-attr]
    details = json.loads(gzip.decompress(base64.b64decode(packed)))
    _, expected = item_records(load_inputs(run["scored"], items=run["items"], summary=run["summary"]))
    assert details == expected


def test_without_matplotlib_the_report_has_no_plots_and_says_why(run: dict[str, Path], monkeypatch: pytest.MonkeyPatch):
    import conflictscore_local.report.render as render

    monkeypatch.setattr(render, "matplotlib_available", lambda: False)
    page = render_html(load_inputs(run["scored"], items=run["items"]))
    assert "<img" not in page
    assert plots_mod.MISSING_MATPLOTLIB in page.replace("&#39;", "'")


def test_plots_are_the_same_bytes_for_the_same_data(run: dict[str, Path]):
    index, _ = item_records(load_inputs(run["scored"]))
    a, b = plots_mod.make_plots(index, None), plots_mod.make_plots(index, None)
    assert [p.src for p in a] == [p.src for p in b] and [p.key for p in a] == ["distribution", "support_vs_cs_c"]
    svg = base64.b64decode(a[0].src.split(",", 1)[1]).decode()
    assert "CS-C: 4 items, undefined for 1; CS-R: 2 items, undefined for 3" in a[0].caption and "<svg" in svg


def test_report_help_imports_no_template_engine_or_plotting_library():
    code = (
        "import contextlib, io, sys\n"
        "from conflictscore_local.cli import main\n"
        "import conflictscore_local.report\n"
        "for command in ('report', 'score'):\n"
        "    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "        main([command, '--help'])\n"
        "heavy = [m for m in ('jinja2', 'markupsafe', 'matplotlib', 'playwright', 'numpy', 'torch')\n"
        "         if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_bench_items_give_detection_and_gold_per_item(tmp_path: Path):
    from conflictscore_local.bench import make_item
    from conflictscore_local.bench.gold import gold_evaluation, read_items_checked
    from conflictscore_local.report.data import bench_section

    item = make_item(
        source="synthetic",
        id="b1",
        question=None,
        claims=["Sky is blue."],
        documents=[{"id": "d0", "text": "yes: sky is blue"}, {"id": "d1", "text": "no: sky is blue"}],
        gold_labels=[["SUPPORT", "IRRELEVANT"]],
        conflict_type="contradiction",
        split_key="k",
    )
    judged = [
        {"doc_id": "d0", "label": "SUPPORT", "probs": None, "source": "judge"},
        {"doc_id": "d1", "label": "CONTRADICT", "probs": None, "source": "judge"},
    ]
    row = {
        "id": "b1",
        "claims": [
            {"text": "Sky is blue.", "support": ["d0"], "contradict": ["d1"], "irrelevant": [], "judgments": judged}
        ],
    }
    inputs = load_inputs(
        write_jsonl(tmp_path / "pred.jsonl", [row]),
        items=write_jsonl(tmp_path / "b.jsonl", [item]),
        read=read_items_checked,
        evaluate=gold_evaluation,
    )
    index, details = item_records(inputs)
    assert {k: index[0][k] for k in ("tp", "fp", "fn", "ty", "so")} == {
        "tp": 0,
        "fp": 1,
        "fn": 0,
        "ty": "none",
        "so": "synthetic",
    }
    assert [c["g"] for c in details[0]["cells"][0]] == ["S", "I"] and details[0]["claims"][0]["g"] == 0
    bench = bench_section(inputs)  # no summary: computed with bench run's own evaluate, handed in
    assert bench is not None and bench["computed"]
    assert bench_section(load_inputs(tmp_path / "pred.jsonl", items=tmp_path / "b.jsonl")) is None  # the report alone
    assert bench["detection"]["overall"]["fp"] == 1
    assert bench["pairs"]["confusion"]["IRRELEVANT"]["CONTRADICT"] == 1


def test_a_repeated_claim_without_a_span_is_marked_where_it_recurs(tmp_path: Path):
    """Given claims carry no span: each is looked for after the claim before it, so a sentence the
    response says twice is marked twice, not twice at its first place."""
    item = {
        "id": "twice",
        "response": "It rained. It was cold. It rained.",
        "documents": [{"id": "d", "text": "t"}],
        "claims": ["It rained.", "It was cold.", "It rained."],
        "labels": [["SUPPORT"]] * 3,
    }
    judged = [{"doc_id": "d", "label": "SUPPORT", "probs": None, "source": "given"}]
    row = {
        "id": "twice",
        "claims": [
            {"text": c, "support": ["d"], "contradict": [], "irrelevant": [], "judgments": judged}
            for c in item["claims"]
        ],
    }
    inputs = load_inputs(write_jsonl(tmp_path / "s.jsonl", [row]), items=write_jsonl(tmp_path / "i.jsonl", [item]))
    _, details = item_records(inputs)
    assert [c["a"] for c in details[0]["claims"]] == [[0, 10], [11, 23], [24, 34]]
