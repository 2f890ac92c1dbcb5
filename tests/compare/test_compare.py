"""`conflictscore compare`: paired differences, their tests and intervals, claims that changed, the files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import pytest

from conflictscore_local.cli import main
from conflictscore_local.compare import ComparisonSettings, compare_results, permutation_test, sign_test
from conflictscore_local.compare.core import EXACT_PERMUTATION_MAX, describe_difference
from conflictscore_local.core.aggregate import claim_verdict
from conflictscore_local.core.metrics import item_metrics
from conflictscore_local.core.types import Claim, DocJudgment, ItemResult

S, C, I = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def result(item_id: str, rows: Sequence[tuple[str, Sequence[str]]]) -> ItemResult:
    """An item's result from (claim text, labels against d1, d2, ...) rows."""
    verdicts = tuple(
        claim_verdict(
            Claim(item_id, i, text),
            [
                DocJudgment(f"d{j + 1}", lab, None, "given")  # type: ignore[arg-type]
                for j, lab in enumerate(labels)
            ],
        )
        for i, (text, labels) in enumerate(rows)
    )
    return ItemResult(item_id, verdicts, item_metrics(verdicts))


# Run A and run B on the same three questions plus one each of their own.
A = [
    result("q1", [("x", [S, C]), ("y", [S, I])]),  # CS-C 1/2
    result("q2", [("z", [S, I])]),  # CS-C 0
    result("q3", [("w", [S, C]), ("v", [I, I])]),  # CS-C 1/2
    result("only-a", [("u", [S, C])]),
]
B = [
    result("q1", [("x", [S, I]), ("y", [S, C])]),  # x no longer conflicted, y newly: CS-C 1/2
    result("q2", [("z", [S, C]), ("t", [C, S])]),  # z newly conflicted; t only in B: CS-C 1
    result("q3", [("w", [I, C]), ("v", [S, C])]),  # w support lost (no longer conflicted), v newly
    result("only-b", [("u", [S, S])]),
]


def test_sign_test_is_exact_binomial() -> None:
    assert sign_test([1, 2, -1]) == 1.0  # 2 up, 1 down: 2 × (C(3,0) + C(3,1)) / 8
    assert sign_test([0.5] * 6) == pytest.approx(2 / 64)
    assert sign_test([0.5] * 6 + [0.0] * 4) == pytest.approx(2 / 64)  # ties leave the test
    assert sign_test([]) == sign_test([0.0, 0.0]) == 1.0


def test_permutation_test_enumerates_every_sign_pattern() -> None:
    # |±1 ±2 ±1| ≥ |1 + 2 − 1| = 2 for 6 of the 8 patterns
    assert permutation_test([1, 2, -1]) == 0.75
    assert permutation_test([0.5] * 6) == pytest.approx(2 / 64)
    assert permutation_test([0.0, 0.0]) == 1.0
    # past the exact limit: seeded draws, (1 + hits) / (1 + draws), the same for the same seed
    many = [1.0] * (EXACT_PERMUTATION_MAX + 4)
    p = permutation_test(many, permutations=2000, seed=3)
    assert p == permutation_test(many, permutations=2000, seed=3)
    assert 1 / 2001 <= p < 0.01


def test_items_pair_by_id_and_mismatches_are_counted() -> None:
    out = compare_results(A, B, ComparisonSettings(bootstrap=200))
    assert out["items"] == {
        "a": 4,
        "b": 4,
        "matched": 3,
        "only_a": 1,
        "only_b": 1,
        "only_a_ids": ["only-a"],
        "only_b_ids": ["only-b"],
    }
    cs_c = out["metrics"]["cs_c"]
    # per item B − A: q1 0, q2 +1, q3 0
    assert (cs_c["n"], cs_c["a"], cs_c["b"], cs_c["diff"]) == (
        3,
        pytest.approx(1 / 3),
        pytest.approx(2 / 3),
        pytest.approx(1 / 3),
    )
    assert (cs_c["b_higher"], cs_c["a_higher"], cs_c["ties"]) == (1, 0, 2)
    assert cs_c["p_sign"] == 1.0 and cs_c["p_permutation"] == 1.0  # one differing item: both patterns reach it
    assert cs_c["ci95"] == [0.0, 1.0] and cs_c["verdict"] == "no detectable difference"
    # CS-R is paired only where both define it: q1 (1/2 vs 1/2), q3 (1/2 vs 1/2); q2 has no conflict in A
    assert out["metrics"]["cs_r"]["n"] == 2 and out["metrics"]["cs_r"]["diff"] == 0.0


def test_claims_match_by_text_and_changes_name_their_documents() -> None:
    out = compare_results(A, B, ComparisonSettings(bootstrap=0))
    claims = out["claims"]
    assert (claims["a"], claims["b"], claims["matched"], claims["only_a"], claims["only_b"]) == (5, 6, 5, 0, 1)
    assert claims["changes"] == {
        "newly_conflicted": 3,
        "no_longer_conflicted": 2,
        "support_gained": 1,
        "support_lost": 1,
        "contradiction_gained": 3,
        "contradiction_lost": 1,
        "labels_changed": 5,
    }
    # conflicted in A and B: none of the five; newly 3 (y, z, v), no longer 2 (x, w)
    assert claims["conflicted"] == {"both": 0, "a_only": 2, "b_only": 3, "neither": 0, "p_mcnemar": 1.0}
    w = next(c for c in out["changed_claims"] if c["text"] == "w")
    assert w["changes"] == ["no_longer_conflicted", "support_lost", "labels_changed"]
    assert w["documents"] == [{"doc_id": "d1", "a": S, "b": I}]
    assert (w["a"]["support"], w["b"]["support"], w["b"]["contradict"]) == (["d1"], [], ["d2"])
    q2 = next(r for r in out["per_item"] if r["id"] == "q2")
    assert (q2["claims_a"], q2["claims_b"], q2["claims_matched"]) == (1, 2, 1)
    assert q2["changes"] == {"newly_conflicted": 1, "contradiction_gained": 1, "labels_changed": 1}


def test_two_judges_on_the_same_claims_compare_every_claim() -> None:
    a = [result(f"q{i}", [("c", [S, I])]) for i in range(8)]
    b = [result(f"q{i}", [("c", [S, C])]) for i in range(8)]
    out = compare_results(a, b, ComparisonSettings(bootstrap=500))
    assert out["claims"]["matched"] == 8 and out["claims"]["conflicted"]["b_only"] == 8
    assert out["claims"]["conflicted"]["p_mcnemar"] == pytest.approx(2 / 256)
    cs_c = out["metrics"]["cs_c"]
    assert cs_c["diff"] == 1.0 and cs_c["ci95"] == [1.0, 1.0]
    assert cs_c["p_permutation"] == pytest.approx(2 / 256) and cs_c["verdict"] == "B higher"
    line = describe_difference("cs_c", cs_c)
    assert line.startswith("CS-C: A 0.000, B 1.000, B − A +1.000 [+1.000, +1.000] over 8 items")
    assert line.endswith("B higher (B worse)")  # more conflicted claims: lower is better


def write(path: Path, results: Sequence[ItemResult], nested: bool = False) -> Path:
    rows = [{"id": r.item_id, "scored": r.to_json()} if nested else r.to_json() for r in results]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_the_command_writes_the_comparison_and_the_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = write(tmp_path / "a.jsonl", A), write(tmp_path / "b.jsonl", B, nested=True)  # benchmark rows: "scored"
    out, page = tmp_path / "compare.json", tmp_path / "compare.html"
    assert (
        main(
            [
                "compare",
                str(a),
                str(b),
                "-o",
                str(out),
                "--report",
                str(page),
                "--label-a",
                "standard",
                "--label-b",
                "balanced",
                "--bootstrap",
                "200",
            ]
        )
        == 0
    )
    written = json.loads(out.read_text())
    assert written == json.loads(
        json.dumps(
            compare_results(A, B, ComparisonSettings(bootstrap=200))
            | {"a": written["a"], "b": written["b"], "config_differences": []}
        )
    )
    assert written["a"] == {
        "label": "standard",
        "file": "a.jsonl",
        "sha256": written["a"]["sha256"],
        "items": 4,
        "claims": 6,
    }
    text = capsys.readouterr().out
    assert text.splitlines()[0] == (
        "B = balanced (b.jsonl) against A = standard (a.jsonl): 3 items matched, 1 only in A, 1 only in B"
    )
    assert "changed claims: newly conflicted 3, no longer conflicted 2" in text
    html = page.read_text()
    assert "Content-Security-Policy" in html and '<tr data-metric="cs_c"' in html


def test_summaries_add_where_the_configurations_differ(tmp_path: Path) -> None:
    a, b = write(tmp_path / "a.jsonl", A), write(tmp_path / "b.jsonl", B)
    sa, sb = tmp_path / "sa.json", tmp_path / "sb.json"
    base_a = {"n_items": 4, "n_claims": sum(len(r.verdicts) for r in A), "macro": {}, "micro": {}}
    base = {"n_items": 4, "n_claims": sum(len(r.verdicts) for r in B), "macro": {}, "micro": {}}
    sa.write_text(json.dumps({**base_a, "config": {"run": {"judge": {"name": "nli"}, "chunk": {"overlap": 1}}}}))
    sb.write_text(
        json.dumps({**base, "config": {"run": {"judge": {"name": "nli", "model": "v2"}, "chunk": {"overlap": 1}}}})
    )
    out = tmp_path / "c.json"
    assert main(["compare", str(a), str(b), "--summary-a", str(sa), "--summary-b", str(sb), "-o", str(out), "-q"]) == 0
    assert json.loads(out.read_text())["config_differences"] == [{"path": "run.judge.model", "a": None, "b": "v2"}]
    sb.write_text(json.dumps({**base, "n_items": 7}))
    assert main(["compare", str(a), str(b), "--summary-b", str(sb), "-o", str(out), "-q"]) == 2


def test_bad_input_and_destinations_are_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = write(tmp_path / "a.jsonl", A), write(tmp_path / "b.jsonl", B)
    assert main(["compare", str(a), str(b), "-o", str(a)]) == 2
    assert "-o" in capsys.readouterr().err and len(a.read_text().splitlines()) == 4  # untouched
    assert main(["compare", str(a), str(b), "-o", str(tmp_path / "x.json"), "--report", str(tmp_path / "x.json")]) == 2
    assert "--report" in capsys.readouterr().err
    dup = tmp_path / "dup.jsonl"
    dup.write_text(a.read_text() + a.read_text().splitlines()[0] + "\n")
    assert main(["compare", str(dup), str(b), "-o", str(tmp_path / "y.json")]) == 2
    err = capsys.readouterr().err
    assert f"{dup}:5: field 'id': duplicate id 'q1' (first on line 1)" in err
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "q1"}\n')
    assert main(["compare", str(a), str(bad), "-o", str(tmp_path / "y.json")]) == 2
    assert (
        f"{bad}:1: field 'claims': not a scored result line: expected a list of claim verdicts"
        in capsys.readouterr().err
    )
    assert main(["compare", str(a), str(b), "-q"]) == 2
    assert "nothing to write or print: -q with no -o COMPARE.json" in capsys.readouterr().err
    assert not (tmp_path / "y.json").exists()
