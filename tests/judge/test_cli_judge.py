"""``conflictscore score`` with ``--judge nli`` on a local checkpoint, end to end: judged,
then read back from the judgment cache; ``--no-cache`` and ``--cache PATH``."""

from __future__ import annotations

import json
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


def score(items: Path, out: Path, judge_dir: Path, *extra: str) -> tuple[list[dict], dict]:
    summary = out.with_suffix(".summary.json")
    code = main(
        [
            "score",
            str(items),
            "-o",
            str(out),
            "--summary",
            str(summary),
            "--quiet",
            "--pruner",
            "none",
            "--judge",
            "nli",
            "--judge-arg",
            f"model={judge_dir}",
            "--judge-arg",
            "batch_size=2",
            *extra,
        ]
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
    code = main(
        [
            "score",
            str(items_file),
            "-o",
            str(tmp_path / "o.jsonl"),
            "--quiet",
            "--pruner",
            "none",
            "--judge",
            "nli",
            "--judge-arg",
            f"model={tiny_nli_dir}",
            "--judge-arg",
            "dtype=fp8",
        ]
    )
    assert code == 2
    assert (
        "judge 'nli': argument 'dtype': 'fp8' is not allowed; allowed: auto, float32, bfloat16, float16"
        in capsys.readouterr().err
    )
    code = main(
        [
            "score",
            str(items_file),
            "-o",
            str(tmp_path / "o.jsonl"),
            "--quiet",
            "--pruner",
            "none",
            "--judge",
            "nli",
            "--judge-arg",
            f"model={tmp_path / 'absent'}",
        ]
    )
    assert code == 2 and "neither a directory nor in the local Hugging Face cache" in capsys.readouterr().err
