"""``bench run --shard I/N`` + ``conflictscore merge``: the results of one run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conflictscore_local.cli import main
from conflictscore_local.pipeline import shard_of

from ..support.rows import row_differences

VOLATILE = ("created",)  # the bench record's own time stamp


def _results(path: Path) -> dict:
    res = json.loads(path.read_text())
    for k in VOLATILE:
        res["bench"].pop(k)
    res["stages"].pop("shard", None)
    return res


def test_real_test_split_in_three_shards_merges_to_one_run(bench_file: Path, tmp_path: Path, capsys) -> None:
    common = ["--split", "test", "--given-labels", "-q"]
    assert (
        main(
            [
                "bench",
                "run",
                str(bench_file),
                *common,
                "-o",
                str(tmp_path / "one.jsonl"),
                "--summary",
                str(tmp_path / "one.json"),
            ]
        )
        == 0
    )
    for i in (1, 2, 3):
        assert (
            main(
                [
                    "bench",
                    "run",
                    str(bench_file),
                    *common,
                    "--shard",
                    f"{i}/3",
                    "-o",
                    str(tmp_path / f"p{i}.jsonl"),
                    "--summary",
                    str(tmp_path / f"r{i}.json"),
                ]
            )
            == 0
        )
        rec = json.loads((tmp_path / f"r{i}.json").read_text())["stages"]["shard"]
        ids = [json.loads(x)["id"] for x in (tmp_path / f"p{i}.jsonl").read_text().splitlines()]
        assert rec["index"] == i and rec["items"] == len(ids) > 0 and {shard_of(x, 3) for x in ids} == {i}
    capsys.readouterr()
    assert (
        main(
            [
                "merge",
                str(bench_file),
                "--outputs",
                *(str(tmp_path / f"p{i}.jsonl") for i in (3, 1, 2)),
                "--summaries",
                *(str(tmp_path / f"r{i}.json") for i in (1, 2, 3)),
                "-o",
                str(tmp_path / "m.jsonl"),
                "--summary",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    assert "ConflictBench" in capsys.readouterr().out
    assert (tmp_path / "m.jsonl").read_bytes() == (tmp_path / "one.jsonl").read_bytes()
    one, merged = _results(tmp_path / "one.json"), _results(tmp_path / "m.json")
    for key in ("n_items", "n_claims", "bench", "evaluation", "pairs", "macro", "micro", "ci95", "config"):
        assert merged[key] == one[key], key
    assert merged["evaluation"]["detection"]["overall"]["f1"] == 1.0
    assert merged["stages"]["labels"] == one["stages"]["labels"]
    assert json.loads((tmp_path / "m.json").read_text())["stages"]["shard"]["merged"] is True


@pytest.mark.slow  # the nli judge over three shards and one run
def test_judged_shards_with_the_nli_judge(bench_file: Path, tmp_path: Path, tiny_nli_dir: Path) -> None:
    common = [
        "--split",
        "dev",
        "--limit",
        "16",
        "--judge",
        "nli",
        "--judge-arg",
        f"model={tiny_nli_dir}",
        "--pruner",
        "none",
        "--no-cache",
        "-q",
    ]
    assert (
        main(
            [
                "bench",
                "run",
                str(bench_file),
                *common,
                "-o",
                str(tmp_path / "one.jsonl"),
                "--summary",
                str(tmp_path / "one.json"),
            ]
        )
        == 0
    )
    for i in (1, 2):
        assert (
            main(
                [
                    "bench",
                    "run",
                    str(bench_file),
                    *common,
                    "--shard",
                    f"{i}/2",
                    "-o",
                    str(tmp_path / f"p{i}.jsonl"),
                    "--summary",
                    str(tmp_path / f"r{i}.json"),
                ]
            )
            == 0
        )
    assert (
        main(
            [
                "merge",
                str(bench_file),
                "--outputs",
                str(tmp_path / "p1.jsonl"),
                str(tmp_path / "p2.jsonl"),
                "--summaries",
                str(tmp_path / "r1.json"),
                str(tmp_path / "r2.json"),
                "-q",
                "-o",
                str(tmp_path / "m.jsonl"),
                "--summary",
                str(tmp_path / "m.json"),
            ]
        )
        == 0
    )
    rows = [[json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("one.jsonl", "m.jsonl")]
    assert row_differences(rows[0], rows[1], prob_tol=1e-5) == []  # probabilities: a batch's float noise
    one, merged = _results(tmp_path / "one.json"), _results(tmp_path / "m.json")
    assert merged["pairs"]["judged"] == one["pairs"]["judged"] > 0
    for key in ("bench", "evaluation", "macro", "micro", "ci95"):
        assert merged[key] == one[key], key


def test_shard_needs_both_outputs_and_other_selections_are_refused(bench_file: Path, tmp_path: Path, capsys) -> None:
    needs = (
        "conflictscore bench: error: --shard 1/2 needs the per-item output (-o) and the summary (--summary): "
        "`conflictscore merge` combines the shards' per-item results with their summaries"
    )
    for old in ("r.json", "r.jsonl"):  # the old -o RESULTS.json (no per-item output), or -o alone
        assert (
            main(
                [
                    "bench",
                    "run",
                    str(bench_file),
                    "--given-labels",
                    "--split",
                    "test",
                    "--shard",
                    "1/2",
                    "-o",
                    str(tmp_path / old),
                ]
            )
            == 2
        )
        assert capsys.readouterr().err.splitlines()[-1] == needs
    assert list(tmp_path.iterdir()) == []
    for i, split in ((1, "test"), (2, "dev")):
        assert (
            main(
                [
                    "bench",
                    "run",
                    str(bench_file),
                    "--given-labels",
                    "--split",
                    split,
                    "--shard",
                    f"{i}/2",
                    "-q",
                    "-o",
                    str(tmp_path / f"p{i}.jsonl"),
                    "--summary",
                    str(tmp_path / f"r{i}.json"),
                ]
            )
            == 0
        )
    code = main(
        [
            "merge",
            str(bench_file),
            "--outputs",
            str(tmp_path / "p1.jsonl"),
            str(tmp_path / "p2.jsonl"),
            "--summaries",
            str(tmp_path / "r1.json"),
            str(tmp_path / "r2.json"),
            "-o",
            str(tmp_path / "m.jsonl"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "was run with another configuration than shard 1/2" in err and 'bench.split: "test" vs "dev"' in err


def test_one_shard_is_the_whole_run(bench_file: Path, tmp_path: Path, capsys) -> None:
    assert (
        main(
            [
                "bench",
                "run",
                str(bench_file),
                "--given-labels",
                "--split",
                "test",
                "--shard",
                "1/1",
                "-q",
                "-o",
                str(tmp_path / "p.jsonl"),
                "--summary",
                str(tmp_path / "r.json"),
            ]
        )
        == 0
    )
    rec = json.loads((tmp_path / "r.json").read_text())["stages"]["shard"]
    assert rec["items"] == rec["input_items"] > 100
    # the old spelling of this release (-o RESULTS.json --predictions P.jsonl) writes the same two files
    assert (
        main(
            [
                "bench",
                "run",
                str(bench_file),
                "--given-labels",
                "--split",
                "test",
                "--shard",
                "1/1",
                "-q",
                "-o",
                str(tmp_path / "old.json"),
                "--predictions",
                str(tmp_path / "old.jsonl"),
            ]
        )
        == 0
    )
    assert "warning: --predictions is deprecated" in capsys.readouterr().err
    assert (tmp_path / "old.jsonl").read_bytes() == (tmp_path / "p.jsonl").read_bytes()
    assert _results(tmp_path / "old.json")["bench"] == _results(tmp_path / "r.json")["bench"]
