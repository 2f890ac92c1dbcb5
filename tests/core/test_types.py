"""types.py is the leaf of the package; results read back from JSON are the results written."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

import conflictscore_local.core.types as types_module
from conflictscore_local.core.aggregate import claim_verdict
from conflictscore_local.core.metrics import item_metrics
from conflictscore_local.core.types import Claim, DocJudgment, ItemResult
from conflictscore_local.formats.results import read_results, result_from_json

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def test_types_imports_only_the_standard_library() -> None:
    tree = ast.parse(Path(types_module.__file__).read_text(encoding="utf-8"))
    imported = []
    for node in ast.walk(tree):  # function bodies included: a deferred import is still a cycle
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"types.py line {node.lineno}: relative import from {node.module!r}"
            imported.append(node.module or "")
        elif isinstance(node, ast.Import):
            imported.extend(a.name for a in node.names)
    top = {name.split(".")[0] for name in imported}
    assert top <= set(sys.stdlib_module_names) | {"__future__"}, top
    assert "conflictscore_local" not in top


def _result() -> ItemResult:
    """The DESIGN worked example, with every optional DocJudgment field used somewhere."""
    rows = [[S, C, I], [S, S, C], [S, I, I], [I, I, I]]
    verdicts = []
    for i, row in enumerate(rows):
        probs = {S: 0.8, C: 0.1, I: 0.1}
        djs = [
            DocJudgment(f"d{j + 1}", lab, probs if lab == S else None, "judge")  # type: ignore[arg-type]
            for j, lab in enumerate(row)
        ]
        verdicts.append(claim_verdict(Claim("x", i, f"c{i + 1}", (i * 10, i * 10 + 9)), djs))
    extra = [
        DocJudgment(
            "d1", C, {S: 0.3, C: 0.6, I: 0.1}, "cache", passage=2, n_passages=3, note="also SUPPORT", both=True
        ),
        DocJudgment("d2", None, None, "judge", note="no answer: timeout"),
        DocJudgment("d3", I, None, "pruned", similarity=0.0312),
    ]
    verdicts.append(claim_verdict(Claim("x", 4, "c5"), extra))
    vs = tuple(verdicts)
    return ItemResult("x", vs, item_metrics(vs))


def test_results_read_back_equal_what_was_written(tmp_path: Path) -> None:
    res = _result()
    out = tmp_path / "scored.jsonl"
    out.write_text(json.dumps(res.to_json()) + "\n", encoding="utf-8")
    (back,) = read_results(out)
    assert back == res
    assert back.verdicts[4].support == ("d1",) and back.verdicts[4].contradict == ("d1",)
    assert back.verdicts[4].unscored == ("d2",)
    # recomputed, not read: c1 (ratio 1/2) and c2 (1/3) are conflicted; c5's one sided document
    # d1 is on both sides (ratio 1/2) but one document does not conflict with itself
    m = back.metrics
    assert m.n_claims == 5 and m.cs_c == pytest.approx(2 / 5) and m.cs_r == pytest.approx(5 / 12)
    assert m.cs_r_evidenced == pytest.approx((1 / 2 + 1 / 3 + 0 + 1 / 2) / 4)
    assert m.support_rate == pytest.approx(4 / 5)


def test_metrics_in_the_file_are_not_trusted() -> None:
    row = _result().to_json()
    row["metrics"] = {"n_claims": 99, "cs_c": 1.0, "cs_r": 1.0, "cs_r_evidenced": 1.0, "support_rate": 0.0}
    assert result_from_json(row).metrics == _result().metrics


def _sampled_weighted_cascade_row() -> dict:
    """A row of a sampled (claims 1 and 3 of 4), weighted, cascade-judged run."""
    djs = [
        DocJudgment("d1", S, None, "judge", decided_by="first"),
        DocJudgment("d2", C, None, "judge", decided_by="second"),
    ]
    verdicts = tuple(
        claim_verdict(Claim("x", i, f"c{i}"), djs, weights={"d1": 0.9, "d2": 0.2}, min_side_weight=0.5) for i in (1, 3)
    )
    return ItemResult("x", verdicts, item_metrics(verdicts), claims_total=4).to_json()


def test_a_sampled_weighted_cascade_row_reads_back() -> None:
    back = result_from_json(_sampled_weighted_cascade_row())
    assert back.claims_total == 4 and [v.claim.index for v in back.verdicts] == [1, 3]
    v = back.verdicts[0]
    assert [j.decided_by for j in v.judgments] == ["first", "second"] and v.min_side_weight == 0.5
    # d2's side weighs 0.2 < 0.5: conflicted, not weighted conflicted; ratio 0.2 / 1.1
    assert back.metrics.cs_c == 1.0 and back.metrics.cs_c_weighted == 0.0
    assert back.metrics.cs_r_weighted == pytest.approx(0.2 / 1.1)


@pytest.mark.parametrize(
    "path, value, message",
    [
        (
            ("claims_total",),
            1,
            "field 'claims_total': not a scored result line: expected a whole number >= the 2 claims",
        ),
        (("claims_total",), "4", "field 'claims_total'"),
        (("claims", 1, "index"), -1, "field 'claims[1].index': not a scored result line: expected the claim's index"),
        (("claims", 0, "min_side_weight"), "0.5", "field 'claims[0].min_side_weight'"),
        (("claims", 0, "judgments", 1, "weight"), 1.5, "field 'claims[0].judgments[1].weight': not a scored result"),
        (("claims", 0, "judgments", 0, "decided_by"), 2, "field 'claims[0].judgments[0].decided_by'"),
    ],
)
def test_the_fields_of_sampled_weighted_and_cascade_rows_are_checked(path: tuple, value: object, message: str) -> None:
    from conflictscore_local.core.errors import InputError

    row = _sampled_weighted_cascade_row()
    at = row
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    with pytest.raises(InputError) as e:
        result_from_json(row, path="scored.jsonl", line=3)
    assert str(e.value).startswith(f"scored.jsonl:3: {message}"), str(e.value)
