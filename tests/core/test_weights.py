"""Source-reliability weights: the input field, cs_c_weighted and cs_r_weighted on hand-computed cases,
and where they show (summary, CLI text, HTML report, integrations); unweighted runs are unchanged."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from conflictscore_local import Engine
from conflictscore_local.cli import main
from conflictscore_local.cli.text import format_report
from conflictscore_local.core.aggregate import claim_verdict
from conflictscore_local.core.metrics import METRICS, item_metrics, standard_keys
from conflictscore_local.core.types import Claim, DocJudgment
from conflictscore_local.formats.inputs import item_to_json, parse_item
from conflictscore_local.formats.results import read_results
from conflictscore_local.integrations._common import explain, metric_values
from conflictscore_local.report import ReportInputs, render_html
from conflictscore_local.report.data import item_records, summary_section

from ..cli.test_cli_score import WORKED, write_jsonl

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"
RELIABILITY = {"d1": 0.9, "d2": 0.2, "d3": 0.6}


def weighted(row: dict, weights: dict[str, float] = RELIABILITY) -> dict:
    out = copy.deepcopy(row)
    for d in out["documents"]:
        if d["id"] in weights:
            d["reliability"] = weights[d["id"]]
    return out


WORKED_W = weighted(WORKED)
# The DESIGN worked example (c1: d1 S, d2 C; c2: d1 d2 S, d3 C; c3: d1 S; c4 nothing) with d1 0.9, d2 0.2,
# d3 0.6 and aggregate.min_side_weight 0.5:
#   c1 conflicted, but its contradicting side weighs 0.2 < 0.5: not conflicted weighted; ratio 0.2 / 1.1
#   c2 conflicted, sides 1.1 and 0.6: conflicted weighted; ratio 0.6 / 1.7
# cs_c_weighted = 1/4; cs_r_weighted = (0.2/1.1 + 0.6/1.7) / 2 (over CS-R's claims, c1 and c2)
CS_R_W = (0.2 / 1.1 + 0.6 / 1.7) / 2


def test_worked_example_weighted_by_hand() -> None:
    with Engine() as engine:
        (r,), report = engine.score_all([parse_item(WORKED_W)])
    m = r.metrics
    assert (m.cs_c, m.cs_r) == (0.5, pytest.approx(5 / 12))  # the standard metrics do not read the weights
    assert m.cs_c_weighted == 0.25 and m.cs_r_weighted == pytest.approx(CS_R_W)
    c1, c2 = r.verdicts[0], r.verdicts[1]
    assert (c1.side_weight(c1.support), c1.side_weight(c1.contradict)) == (0.9, 0.2)
    assert c1.weighted_conflicted is False and c2.weighted_conflicted is True
    assert c1.weighted_ratio == pytest.approx(0.2 / 1.1) and c2.weighted_ratio == pytest.approx(0.6 / 1.7)
    assert report.macro["cs_c_weighted"] == 0.25 and report.micro["cs_r_weighted"] == pytest.approx(CS_R_W)
    assert list(report.macro) == list(METRICS)  # every metric, the weighted ones included: documents have weights


def test_min_side_weight_moves_only_the_weighted_share(tmp_path: Path) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED_W])
    for msw, expected in ((0.2, 0.5), (0.5, 0.25), (0.7, 0.0)):  # c1's lighter side weighs 0.2, c2's 0.6
        out = tmp_path / f"o{msw}.jsonl"
        assert main(["score", str(inp), "-o", str(out), "--set", f"aggregate.min_side_weight={msw}", "-q"]) == 0
        (row,) = [json.loads(x) for x in out.read_text().splitlines()]
        assert row["metrics"]["cs_c_weighted"] == expected and row["metrics"]["cs_c"] == 0.5
        assert row["claims"][0]["min_side_weight"] == msw
        assert row["claims"][0]["judgments"][1] == {
            "doc_id": "d2",
            "label": C,
            "probs": None,
            "source": "given",
            "weight": 0.2,
        }


def test_equal_weights_give_the_standard_values() -> None:
    ones = weighted(WORKED, {"d1": 1.0, "d2": 1.0, "d3": 1.0})
    with Engine() as engine:
        (r,), _ = engine.score_all([parse_item(ones)])
    assert r.metrics.cs_c_weighted == r.metrics.cs_c and r.metrics.cs_r_weighted == pytest.approx(r.metrics.cs_r)


def test_a_document_without_reliability_counts_one_in_a_weighted_item() -> None:
    some = weighted(WORKED, {"d2": 0.2})  # d1 and d3 count 1.0
    with Engine() as engine:
        (r,), _ = engine.score_all([parse_item(some)])
    assert [j.weight for j in r.verdicts[0].judgments] == [1.0, 0.2, 1.0]
    assert r.metrics.cs_c_weighted == 0.25  # c1: 1.0 against 0.2; c2: 1.2 against 1.0
    assert r.metrics.cs_r_weighted == pytest.approx((0.2 / 1.2 + 1.0 / 2.2) / 2)


def test_keep_both_counts_a_document_on_both_sides_as_cs_r_does() -> None:
    both = DocJudgment("d1", C, None, "judge", both=True)
    v = claim_verdict(
        Claim("x", 0, "c"),
        [both, DocJudgment("d2", S, None, "judge")],
        weights={"d1": 0.5, "d2": 1.0},
        min_side_weight=0.5,
    )
    assert (v.support, v.contradict, v.ratio) == (("d1", "d2"), ("d1",), 1 / 3)
    assert v.weighted_ratio == pytest.approx(0.5 / 2.0) and v.weighted_conflicted is True


def test_unweighted_output_is_unchanged(tmp_path: Path) -> None:
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED])
    out, summ = tmp_path / "o.jsonl", tmp_path / "s.json"
    assert main(["score", str(inp), "-o", str(out), "--summary", str(summ), "-q"]) == 0
    text = out.read_text()
    assert "weight" not in text and list(json.loads(text)["metrics"]) == ["n_claims", *standard_keys()]
    s = json.loads(summ.read_text())
    assert list(s["macro"]) == list(s["ci95"]) == standard_keys()


def test_weighted_values_reach_every_reader(tmp_path: Path) -> None:
    plain = {**copy.deepcopy(WORKED), "id": "plain"}
    items = [parse_item(WORKED_W), parse_item(plain)]
    with Engine() as engine:
        results, report = engine.score_all(items)
    # the unweighted item has no weighted values: the macro is over the weighted item only
    assert "cs_c_weighted" not in results[1].metrics.values and report.macro["cs_c_weighted"] == 0.25
    assert "cs_c_weighted  " in format_report(report) and "0.250" in format_report(report).split("cs_c_weighted")[1]
    inputs = ReportInputs(results, {it.id: it for it in items}, report.to_json())
    row = next(m for m in summary_section(inputs)["metrics"] if m["key"] == "cs_c_weighted")
    assert (row["label"], row["macro"]) == ("CS-C weighted", 0.25)
    index, details = item_records(inputs)
    assert (index[0]["cw"], index[1]["cw"]) == (0.25, None)
    assert details[0]["dw"] == [0.9, 0.2, 0.6] and "dw" not in details[1]
    assert details[0]["claims"][0]["wk"] == 0 and details[0]["claims"][1]["wk"] == 1
    page = render_html(inputs)
    assert '<tr data-metric="cs_r_weighted">' in page and 'data-sort="cw">CS-C w.</button>' in page
    assert metric_values(results[0])["cs_c_weighted"] == 0.25 and "cs_c_weighted" not in metric_values(results[1])
    text = explain(results[0])
    assert "CS-C weighted 0.250, CS-R weighted 0.267" in text
    assert "(weight 0.9 against 0.2, below aggregate.min_side_weight: not conflicted when weighted)" in text
    # read back, the weighted values are recomputed from the weights the output records
    out = tmp_path / "o.jsonl"
    out.write_text("".join(json.dumps(r.to_json()) + "\n" for r in results))
    back = read_results(out)
    assert back == results and back[0].metrics.cs_r_weighted == pytest.approx(CS_R_W)


@pytest.mark.parametrize("value, shown", [(1.5, "1.5"), (-0.1, "-0.1"), ("0.5", "string"), (True, "boolean")])
def test_reliability_is_a_number_from_0_to_1(
    tmp_path: Path, value: object, shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    row = copy.deepcopy(WORKED)
    row["documents"][2]["reliability"] = value
    inp = write_jsonl(tmp_path / "in.jsonl", [WORKED, row])
    assert main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "-q"]) == 2
    assert (
        f"{inp}:2: field 'documents[2].reliability': expected a number from 0 to 1 (how far the source is "
        f"trusted), got {shown}"
    ) in capsys.readouterr().err


def test_reliability_round_trips_through_the_input_format() -> None:
    item = parse_item(WORKED_W)
    assert [d.reliability for d in item.documents] == [0.9, 0.2, 0.6]
    assert all("reliability" not in d.meta for d in item.documents)
    assert parse_item(item_to_json(item)) == item and item_metrics([]).values.get("cs_c_weighted") is None
