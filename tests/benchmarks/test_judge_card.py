"""The default judge's card quotes no figure by hand: its tables are exactly what
``benchmarks/judge_card.py`` renders from ``benchmarks/results/`` (a retrained judge whose
results change fails here until the card is refilled)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def card(benchmark_script: Any) -> Any:
    return benchmark_script("judge_card")


def test_the_committed_card_is_what_its_results_render(card: Any) -> None:
    text = (ROOT / "models" / "default-judge" / "README.md").read_text(encoding="utf-8")
    names = [m.group("name") for m in card.BLOCK.finditer(text)]
    assert sorted(names) == sorted(card.TABLES)  # every table is in the card, once
    assert card.render(text) == text, "run: python benchmarks/judge_card.py"


def test_the_v4_card_is_what_its_results_render(card: Any) -> None:
    text = card.V4_CARD.read_text(encoding="utf-8")
    assert sorted(m.group("name") for m in card.BLOCK.finditer(text)) == sorted(card.V4_TABLES)
    assert card.render(text, tables=card.V4_TABLES) == text, "run: python benchmarks/judge_card.py --card " \
        "models/default-judge-base/README.md"


def test_every_claim_conflicted_baseline_is_hand_computed() -> None:
    from conflictscore_local.core.detection import all_conflicted_f1

    # 229 gold conflicted of 585 claims: precision 229/585, recall 1, F1 = 2*229/(585+229)
    assert all_conflicted_f1({"n_claims": 585, "n_gold_conflicted": 229}) == pytest.approx(0.56265, abs=1e-5)
    assert all_conflicted_f1({"n_claims": 0, "n_gold_conflicted": 0}) is None


def test_a_block_is_refilled_and_an_unknown_one_refused(card: Any, tmp_path: Path) -> None:
    results = tmp_path
    (results / "judge_checklist_v2.json").write_text(json.dumps(
        {"capabilities": {"negation": {"n": 10, "pass_rate": 0.4}}, "macro_pass_rate": 0.4}))
    (results / "judge_checklist_v3.json").write_text(json.dumps(
        {"capabilities": {"negation": {"n": 10, "pass_rate": 0.9}, "paraphrase": {"n": 5, "pass_rate": 0.6}},
         "macro_pass_rate": 0.75}))
    text = "intro\n<!-- card:checklist -->\nstale 0.1\n<!-- /card:checklist -->\nend\n"
    assert card.render(text, results) == (
        "intro\n<!-- card:checklist -->\n"
        "| capability | probes | v2 | v3 | target |\n|---|---:|---:|---:|---:|\n"
        "| negation | 10 | 0.400 | **0.900** | ≥ 0.85 |\n"
        "| paraphrase | 5 | – | **0.600** |  |\n"
        "| mean | | 0.400 | **0.750** | |\n"
        "<!-- /card:checklist -->\nend\n")
    with pytest.raises(SystemExit, match="unknown block card:nope; allowed: data, balance"):
        card.render("<!-- card:nope -->\n<!-- /card:nope -->", results)


def test_the_training_table_marks_the_exported_evaluation(card: Any, tmp_path: Path) -> None:
    record = {"best_epoch": 0.5, "train_pairs_per_s": 8.11, "threads": 2, "device": "cpu",
              "options": {"epochs": 1, "stop_after": 1.0},
              "history": [{"epoch": 0.5, "train_s": 2771.4, "eval_s": 764.3, "eval": {"macro_f1": 0.52965}},
                          {"epoch": 1, "train_s": 880.4, "eval_s": 180.7, "eval": {"macro_f1": 0.5252}}]}
    (tmp_path / "default-judge-v3_training.json").write_text(json.dumps(record))
    assert card.training_table(tmp_path) == (
        "| epoch | mean eval macro-F1 | training s | evaluation s | exported |\n|---:|---:|---:|---:|---|\n"
        "| 0.5 | 0.5296 | 2,771 | 764 | **yes** (best) |\n"
        "| 1 | 0.5252 | 880 | 181 |  |\n\n"
        "Schedule: 1 epoch(s), run to epoch 1 (`--stop-after 1`); 8.11 training pairs/s over all sessions, "
        "2 threads, device cpu.")
