"""``conflictscore score`` with ``--judge nli`` on a local checkpoint, end to end: judged,
then read back from the judgment cache; ``--no-cache`` and ``--cache PATH``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main

ITEMS = [
    {
        "id": "q1",
        "response": "The bridge opened in 1932. It is red.",
        "claims": ["The bridge opened in 1932.", "The bridge is red."],
        "documents": [
            {"id": "d1", "text": "The bridge opened in 1932."},
            {"id": "d2", "text": "Local papers said the bridge opened in 1934. " * 3, "url": "http://x"},
        ],
    },
    {
        "id": "q2",
        "response": "Rome is old.",
        "claims": ["Rome is old."],
        "documents": [{"id": "d1", "text": "Rome was founded in 753 BC."}],
    },
]


@pytest.fixture
def items_file(tmp_path: Path) -> Path:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(it) + "\n" for it in ITEMS))
    return path


def run_score(items: Path, out: Path, *extra: str) -> int:
    """``conflictscore score`` of ``items`` with the nli judge and no pruner, quietly."""
    return main(["score", str(items), "-o", str(out), "--quiet", "--pruner", "none", "--judge", "nli", *extra])


def score(items: Path, out: Path, judge_dir: Path, *extra: str) -> tuple[list[dict], dict]:
    """A run that must succeed with the checkpoint ``judge_dir``: its rows and summary."""
    summary = out.with_suffix(".summary.json")
    code = run_score(
        items,
        out,
        "--summary",
        str(summary),
        "--judge-arg",
        f"model={judge_dir}",
        "--judge-arg",
        "batch_size=2",
        *extra,
    )
    assert code == 0
    return [json.loads(line) for line in out.read_text().splitlines()], json.loads(summary.read_text())


def sources(rows: list[dict]) -> set[str]:
    return {j["source"] for r in rows for c in r["claims"] for j in c["judgments"]}


def labels(rows: list[dict]) -> list[Any]:
    return [(j["label"], j["probs"]) for r in rows for c in r["claims"] for j in c["judgments"]]


def test_score_judges_then_reads_the_cache(
    items_file: Path, tmp_path: Path, tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "judgments.sqlite"
    monkeypatch.setenv("CONFLICTSCORE_CACHE", str(cache))
    first, s1 = score(items_file, tmp_path / "a.jsonl", tiny_nli_dir)
    assert sources(first) == {"judge"} and s1["pairs"]["judged"] == 5 and cache.is_file()
    assert all(
        j["label"] in ("SUPPORT", "CONTRADICT", "IRRELEVANT")
        and set(j["probs"]) == {"SUPPORT", "CONTRADICT", "IRRELEVANT"}
        for r in first
        for c in r["claims"]
        for j in c["judgments"]
    )
    judge = s1["config"]["backends"]["judge"]
    assert judge["name"] == "nli" and judge["resolved"]["model_path"] == str(tiny_nli_dir.resolve())
    assert len(judge["resolved"]["model_fingerprint"]["weights_sha256"]) == 64
    assert s1["stages"]["judge"]["pairs"] == 5

    second, s2 = score(items_file, tmp_path / "b.jsonl", tiny_nli_dir)
    assert sources(second) == {"cache"} and s2["pairs"]["cached"] == 5 and s2["pairs"]["judged"] == 0
    assert labels(second) == labels(first)
    assert s2["stages"]["judge"] == {} and "device" not in s2["config"]["backends"]["judge"]["resolved"]  # not loaded


def test_no_cache_and_cache_path(
    items_file: Path, tmp_path: Path, tiny_nli_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = tmp_path / "default.sqlite"
    monkeypatch.setenv("CONFLICTSCORE_CACHE", str(default))
    for name in ("a", "b"):
        rows, _ = score(items_file, tmp_path / f"{name}.jsonl", tiny_nli_dir, "--no-cache")
        assert sources(rows) == {"judge"}
    assert not default.exists()
    chosen = tmp_path / "chosen" / "cache.sqlite"
    score(items_file, tmp_path / "c.jsonl", tiny_nli_dir, "--cache", str(chosen))
    rows, _ = score(items_file, tmp_path / "d.jsonl", tiny_nli_dir, "--cache", str(chosen))
    assert chosen.is_file() and not default.exists() and sources(rows) == {"cache"}


def test_bad_judge_arguments_exit_2(
    items_file: Path, tmp_path: Path, tiny_nli_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o.jsonl"
    assert run_score(items_file, out, "--judge-arg", f"model={tiny_nli_dir}", "--judge-arg", "dtype=fp8") == 2
    assert (
        "judge 'nli': argument 'dtype': 'fp8' is not allowed; allowed: auto, float32, bfloat16, float16"
        in capsys.readouterr().err
    )
    code = run_score(items_file, out, "--judge-arg", f"model={tmp_path / 'absent'}")
    assert code == 2 and "neither a directory nor in the local Hugging Face cache" in capsys.readouterr().err


def test_incomplete_default_judge_exits_2_saying_how_to_build_it(
    items_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "default-judge"
    (folder / "last").mkdir(parents=True)  # what an unfinished training run leaves behind
    monkeypatch.setenv("CONFLICTSCORE_DEFAULT_JUDGE", str(folder))
    assert run_score(items_file, tmp_path / "o.jsonl") == 2
    err = capsys.readouterr().err
    assert f"default judge at {folder.resolve()} is incomplete: no config.json" in err
    assert "models/build_default_judge.sh" in err and "--judge-arg model=PATH" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "damage, what",
    [
        (lambda p: (p / "config.json").unlink(), "is not a complete checkpoint: no config.json"),
        (lambda p: (p / "tokenizer.json").write_text("{not json"), "cannot load the tokenizer of"),
        (lambda p: (p / "model.safetensors").write_bytes(b"\0" * 64), "cannot load the model in"),
    ],
    ids=["no-config", "bad-tokenizer", "bad-weights"],
)
def test_damaged_checkpoint_exits_2_naming_it(
    items_file: Path,
    tmp_path: Path,
    tiny_nli_dir: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Any,
    what: str,
) -> None:
    ckpt = tmp_path / "ckpt"
    shutil.copytree(tiny_nli_dir, ckpt)
    damage(ckpt)
    assert run_score(items_file, tmp_path / "o.jsonl", "--judge-arg", f"model={ckpt}", "--no-cache") == 2
    err = capsys.readouterr().err
    assert what in err and str(ckpt.resolve()) in err and "Traceback" not in err
