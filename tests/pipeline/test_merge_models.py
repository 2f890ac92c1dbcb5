"""merge compares model fingerprints only between shards that loaded the model: a shard whose items
never needed it (given labels only, or no items) records none, and that is no other configuration."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main

ROWS = [
    {
        "id": f"i{k}",
        "response": "x",
        "documents": [{"id": "d", "text": "t"}],
        "claims": ["c"],
        "labels": [["SUPPORT" if k % 2 else "CONTRADICT"]],
    }
    for k in range(6)
]


def shards(tmp_path: Path) -> tuple[Path, list[Path], list[Path]]:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    outs, sums = [], []
    for i in (1, 2):
        outs.append(tmp_path / f"o.{i}.jsonl")
        sums.append(tmp_path / f"s.{i}.json")
        assert (
            main(
                [
                    "score",
                    str(src),
                    "--shard",
                    f"{i}/2",
                    "-o",
                    str(outs[-1]),
                    "--summary",
                    str(sums[-1]),
                    "--no-cache",
                    "-q",
                ]
            )
            == 0
        )
    return src, outs, sums


def fingerprint(summary: Path, weights: str) -> None:
    data = json.loads(summary.read_text())
    data["config"]["backends"]["judge"]["resolved"] = {"model_fingerprint": {"weights_sha256": weights}}
    summary.write_text(json.dumps(data))


def merge(src: Path, outs: list[Path], sums: list[Path], tmp_path: Path) -> int:
    return main(
        [
            "merge",
            str(src),
            "--outputs",
            *map(str, outs),
            "--summaries",
            *map(str, sums),
            "-o",
            str(tmp_path / "m.jsonl"),
            "--summary",
            str(tmp_path / "m.json"),
            "-q",
        ]
    )


def test_a_shard_that_loaded_no_model_merges(tmp_path: Path) -> None:
    src, outs, sums = shards(tmp_path)
    fingerprint(sums[1], "aaa")
    assert merge(src, outs, sums, tmp_path) == 0
    assert len((tmp_path / "m.jsonl").read_text().splitlines()) == len(ROWS)


def test_shards_that_loaded_other_models_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, outs, sums = shards(tmp_path)
    fingerprint(sums[0], "aaa")
    fingerprint(sums[1], "bbb")
    assert merge(src, outs, sums, tmp_path) == 2
    err = capsys.readouterr().err
    assert "was run with another configuration than" in err and "models.judge" in err and '"bbb"' in err
    assert not (tmp_path / "m.jsonl").exists()


def test_merge_q_still_says_what_the_shards_warned_about(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ROWS.append({"id": "empty", "response": "", "documents": [{"id": "d", "text": "t"}]})
    try:
        src, outs, sums = shards(tmp_path)
    finally:
        ROWS.pop()
    capsys.readouterr()
    assert merge(src, outs, sums, tmp_path) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "warning: shard 1/2, 2/2: 1 item(s) have an empty response and no claims, so no claims "
        "and no metrics: 'empty'\n"
    )
