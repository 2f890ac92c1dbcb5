"""The default judge's card quotes no figure by hand: its tables are exactly what
``benchmarks/judge/judge_card.py`` renders from ``benchmarks/results/`` (a retrained judge whose
results change fails here until the card is refilled)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def card() -> Any:
    from benchmarks.judge import judge_card

    return judge_card


def test_the_committed_card_is_what_its_results_render(card: Any) -> None:
    text = (ROOT / "models" / "default-judge" / "README.md").read_text(encoding="utf-8")
    names = [m.group("name") for m in card.BLOCK.finditer(text)]
    assert sorted(names) == sorted(card.TABLES)  # every table is in the card, once
    assert card.render(text) == text, "run: python -m benchmarks.judge.judge_card"


def test_the_v4_card_is_what_its_results_render(card: Any) -> None:
    text = card.V4_CARD.read_text(encoding="utf-8")
    assert sorted(m.group("name") for m in card.BLOCK.finditer(text)) == sorted(card.V4_TABLES)
    assert card.render(text, tables=card.V4_TABLES) == text, (
        "run: python -m benchmarks.judge.judge_card --card models/default-judge-base/README.md"
    )


def test_every_claim_conflicted_baseline_is_hand_computed() -> None:
    from conflictscore_local.core.detection import all_conflicted_f1

    # 229 gold conflicted of 585 claims: precision 229/585, recall 1, F1 = 2*229/(585+229)
    assert all_conflicted_f1({"n_claims": 585, "n_gold_conflicted": 229}) == pytest.approx(0.56265, abs=1e-5)
    assert all_conflicted_f1({"n_claims": 0, "n_gold_conflicted": 0}) is None


def test_a_block_is_refilled_and_an_unknown_one_refused(card: Any, tmp_path: Path) -> None:
    results = tmp_path
    (results / "judge_checklist_v3.json").write_text(
        json.dumps({"capabilities": {"negation": {"n": 10, "pass_rate": 0.4}}, "macro_pass_rate": 0.4})
    )
    (results / "judge_checklist_v5.json").write_text(
        json.dumps(
            {
                "capabilities": {"negation": {"n": 10, "pass_rate": 0.9}, "paraphrase": {"n": 5, "pass_rate": 0.6}},
                "macro_pass_rate": 0.75,
            }
        )
    )
    text = "intro\n<!-- card:checklist -->\nstale 0.1\n<!-- /card:checklist -->\nend\n"
    assert card.render(text, results) == (
        "intro\n<!-- card:checklist -->\n"
        "| capability | probes | v3 | v5 |\n|---|---:|---:|---:|\n"
        "| negation | 10 | 0.400 | **0.900** |\n"
        "| paraphrase | 5 | – | **0.600** |\n"
        "| mean | | 0.400 | **0.750** |\n"
        "<!-- /card:checklist -->\nend\n"
    )
    with pytest.raises(SystemExit, match="unknown block card:nope; allowed: targets, ship, decision"):
        card.render("<!-- card:nope -->\n<!-- /card:nope -->", results)


def test_three_columns_render_oldest_first_and_bold_only_the_cards_judge(
    card: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tag, rate in (("v3", 0.4), ("v5", 0.5), ("v51", 0.6)):
        (tmp_path / f"judge_checklist_{tag}.json").write_text(
            json.dumps({"capabilities": {"negation": {"n": 10, "pass_rate": rate}}, "macro_pass_rate": rate})
        )
    monkeypatch.setattr(card, "COLUMNS", ("v3", "v5", "v51"))
    monkeypatch.setattr(card, "NEW", "v51")
    text = "<!-- card:checklist -->\n<!-- /card:checklist -->\n"
    assert card.render(text, tmp_path) == (
        "<!-- card:checklist -->\n"
        "| capability | probes | v3 | v5 | v51 |\n|---|---:|---:|---:|---:|\n"
        "| negation | 10 | 0.400 | 0.500 | **0.600** |\n"
        "| mean | | 0.400 | 0.500 | **0.600** |\n"
        "<!-- /card:checklist -->\n"
    )


def test_the_card_of_a_checkpoint_trained_by_another_build_is_refused(
    card: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    results, folder = tmp_path / "results", tmp_path / "judge"
    results.mkdir()
    folder.mkdir()
    (results / "default-judge-v5_training.json").write_text('{"best_epoch": 1.0}')
    (results / "default-judge-v51_training.json").write_text('{"best_epoch": 0.5}')
    (folder / "training.json").write_text('{"best_epoch": 0.5}')
    monkeypatch.setattr(card, "COLUMNS", ("v3", "v5"))
    monkeypatch.setattr(card, "NEW", "v5")
    with pytest.raises(
        SystemExit, match=r"not default-judge-v5_training.json.*\(tags with a training record: v5, v51\)"
    ):
        card.shipped_is_new(folder, results)
    monkeypatch.setattr(card, "NEW", "v51")
    card.shipped_is_new(folder, results)  # the shipped checkpoint is v51's: nothing raised


def test_the_training_table_marks_the_exported_evaluation_of_both_stages(card: Any, tmp_path: Path) -> None:
    def record(best: float, history: list[tuple[float, float, float, float]], lr: float) -> dict[str, Any]:
        return {
            "best_epoch": best,
            "train_pairs_per_s": 20.84,
            "threads": 2,
            "device": "cpu",
            "train_labels": {"SUPPORT": 3, "CONTRADICT": 2, "IRRELEVANT": 1},
            "options": {"epochs": 1, "lr": lr, "batch_size": 32, "max_length": 192, "int8_embeddings": True},
            "eval_files": [{"path": "data/lingnli_dev.jsonl"}],
            "history": [{"epoch": e, "train_s": t, "eval_s": v, "eval": {"macro_f1": m}} for e, m, t, v in history],
        }

    (tmp_path / "default-judge-v5-stage1_training.json").write_text(
        json.dumps(record(0.5, [(0.5, 0.57114, 1032.4, 36.2), (1, 0.5924, 990.0, 32.0)], 4e-5))
    )
    (tmp_path / "default-judge-v5_training.json").write_text(json.dumps(record(1, [(1, 0.53641, 1961.0, 253.4)], 3e-5)))
    stage = (
        "6 pairs, 1 epoch at lr {lr}, batch 32, window 192, int8 embeddings frozen yes; 20.84 training pairs/s, "
        "2 threads, device cpu; eval sets: lingnli_dev"
    )
    assert card.training_table(tmp_path) == (
        "| stage | epoch | mean eval macro-F1 | training s | evaluation s | exported |\n|---|---:|---:|---:|---:|---|\n"
        "| 1 | 0.5 | 0.5711 | 1,032 | 36 | **yes** (best) |\n"
        "| 1 | 1 | 0.5924 | 990 | 32 |  |\n"
        "| 2 | 1 | 0.5364 | 1,961 | 253 | **yes** (best) |\n\n"
        f"- stage 1: {stage.format(lr='4e-05')}\n- stage 2: {stage.format(lr='3e-05')}"
    )
