"""The metric table is open: a new per-item metric is one entry, and every reader of metrics
(item metrics, summary, CLI text, HTML report, integrations) shows it without another edit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local import Engine
from conflictscore_local.cli import main
from conflictscore_local.cli.text import format_report
from conflictscore_local.core.metrics import METRICS, Metric, standard_keys
from conflictscore_local.formats.inputs import parse_item
from conflictscore_local.formats.results import read_results
from conflictscore_local.integrations._common import explain, metric_values
from conflictscore_local.report import ReportInputs, render_html
from conflictscore_local.report.data import item_records, summary_section

from ..cli.test_cli_score import EMPTY, NINE_TO_ONE, WORKED, write_jsonl

# the share of a response's claims that no document takes a side on: 1/4 in the worked example
# (c4 is IRRELEVANT everywhere), 0 for the nine-to-one item, undefined without claims
UNSIDED = Metric(
    key="unsided",
    label="unsided share",
    column="unsided",
    code="us",
    help="share of claims that no document supports or contradicts",
    higher_is_better=False,
    compute=lambda vs: sum(1 for v in vs if not v.evidenced) / len(vs) if vs else None,
)


@pytest.fixture
def unsided(monkeypatch: pytest.MonkeyPatch) -> Metric:
    monkeypatch.setitem(METRICS, UNSIDED.key, UNSIDED)
    return UNSIDED


def test_the_table_lists_the_four_conflictscore_metrics_in_output_order() -> None:
    assert list(METRICS)[:4] == ["cs_c", "cs_r", "cs_r_evidenced", "support_rate"]
    assert [m.higher_is_better for m in list(METRICS.values())[:4]] == [False, False, False, True]
    assert len({m.code for m in METRICS.values()}) == len(METRICS)


def test_one_entry_reaches_every_reader(unsided: Metric, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [parse_item(x) for x in (WORKED, NINE_TO_ONE, EMPTY)]
    with Engine(pruner="none") as engine:
        results, report = engine.score_all(items)
    # item metrics and the output line
    assert [r.metrics.unsided for r in results] == [0.25, 0.0, None]
    out = results[0].to_json()["metrics"]
    assert list(out) == ["n_claims", *standard_keys()] and list(out)[-1] == "unsided" and out["unsided"] == 0.25
    # the summary: macro over the two items with claims, micro over their five claims, an interval
    assert report.macro["unsided"] == 0.125 and report.micro["unsided"] == 0.2
    assert report.to_json()["ci95"]["unsided"] == [0.0, 0.25]
    # the CLI's text
    line = next(x for x in format_report(report).splitlines() if x.startswith("unsided"))
    assert line.split()[:3] == ["unsided", "0.125", "0.200"]
    # the HTML report: summary row, item table column, item index
    inputs = ReportInputs(results, {it.id: it for it in items}, report.to_json())
    row = next(m for m in summary_section(inputs)["metrics"] if m["key"] == "unsided")
    assert (row["label"], row["macro"], row["micro"]) == ("unsided share", 0.125, 0.2)
    index, _ = item_records(inputs)
    assert [r["us"] for r in index] == [0.25, 0.0, None]
    page = render_html(inputs)
    assert '<tr data-metric="unsided">' in page and 'data-sort="us">unsided</button>' in page
    # the integrations
    assert metric_values(results[0])["unsided"] == 0.25
    assert "unsided share 0.250" in explain(results[0])
    # a scored file read back recomputes it; the command line writes it
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED, NINE_TO_ONE, EMPTY])
    assert (
        main(
            [
                "score",
                str(inp),
                "-o",
                str(tmp_path / "o.jsonl"),
                "--summary",
                str(tmp_path / "s.json"),
                "--no-cache",
                "-q",
            ]
        )
        == 0
    )
    assert [r.metrics.unsided for r in read_results(tmp_path / "o.jsonl")] == [0.25, 0.0, None]
    assert json.loads((tmp_path / "s.json").read_text())["macro"]["unsided"] == 0.125
