"""types.py is the leaf of the package; results read back from JSON are the results written."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

import pytest

import conflictscore_local.types as types_module
from conflictscore_local.aggregate import claim_verdict
from conflictscore_local.metrics import item_metrics
from conflictscore_local.results import read_results, result_from_json
from conflictscore_local.types import Claim, DocJudgment, ItemResult

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
        djs = [DocJudgment(f"d{j + 1}", lab, probs if lab == S else None, "judge")  # type: ignore[arg-type]
               for j, lab in enumerate(row)]
        verdicts.append(claim_verdict(Claim("x", i, f"c{i + 1}", (i * 10, i * 10 + 9)), djs))
    extra = [
        DocJudgment("d1", C, {S: 0.3, C: 0.6, I: 0.1}, "cache", passage=2, n_passages=3, note="also SUPPORT",
                    both=True),
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
