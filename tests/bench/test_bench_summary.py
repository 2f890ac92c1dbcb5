"""``bench run`` writes ``score``'s summary plus its ``bench`` and ``evaluation`` sections; shards recorded by
an earlier release (the results-file schema) still merge."""

from __future__ import annotations

import json
from pathlib import Path

from conflictscore_local import Summary
from conflictscore_local.cli import main


def earlier_schema(new: dict) -> dict:
    """A ``bench run`` summary written as releases before this one wrote it."""
    stages = dict(new["stages"])
    bench = {**new["bench"], "n_items": new["n_items"], "n_claims": new["n_claims"]}
    if "shard" in stages:
        bench["shard"] = stages.pop("shard")
    return {
        "bench": bench,
        **new["evaluation"],
        "engine_pairs": new["pairs"],
        "conflictscore": {"macro": new["macro"], "micro": new["micro"]},
        "timing": new["timing"],
        "config": new["config"],
        "versions": new["versions"],
        "stages": stages,
    }


def test_bench_run_writes_the_score_summary_plus_bench_and_evaluation(bench_file: Path, tmp_path: Path) -> None:
    assert (
        main(
            [
                "bench",
                "run",
                str(bench_file),
                "--split",
                "test",
                "--given-labels",
                "-q",
                "--limit",
                "5",
                "-o",
                str(tmp_path / "p.jsonl"),
                "--summary",
                str(tmp_path / "s.json"),
            ]
        )
        == 0
    )
    s = json.loads((tmp_path / "s.json").read_text())
    score_keys = set(Summary.reductions()) - {"sampling", "bench", "evaluation"}
    assert set(s) == score_keys | {"bench", "evaluation"}
    assert set(s["evaluation"]) == {"pairs", "detection", "unscored", "pruning"}
    assert (
        s["evaluation"]["detection"]["overall"]["f1"] == 1.0
        and s["pairs"]["given"] == s["evaluation"]["pairs"]["n_pairs"]
    )
    assert Summary.from_json(s).to_json() == s


def test_earlier_bench_shards_merge_as_this_release_s(bench_file: Path, tmp_path: Path) -> None:
    common = ["--split", "test", "--given-labels", "-q"]
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
        old = earlier_schema(json.loads((tmp_path / f"r{i}.json").read_text()))
        (tmp_path / f"old{i}.json").write_text(json.dumps(old))
    outputs = [str(tmp_path / "p1.jsonl"), str(tmp_path / "p2.jsonl")]
    for tag in ("r", "old"):
        assert (
            main(
                [
                    "merge",
                    str(bench_file),
                    "--outputs",
                    *outputs,
                    "--summaries",
                    str(tmp_path / f"{tag}1.json"),
                    str(tmp_path / f"{tag}2.json"),
                    "-q",
                    "-o",
                    str(tmp_path / f"m-{tag}.jsonl"),
                    "--summary",
                    str(tmp_path / f"m-{tag}.json"),
                ]
            )
            == 0
        )
    new, old = (json.loads((tmp_path / f"m-{t}.json").read_text()) for t in ("r", "old"))
    for s in (new, old):
        del s["bench"]["created"]
    # shards of an earlier release record no start and finish, so their merge has none either
    assert {k: v for k, v in new.items() if k not in ("started", "finished")} | {"warnings": []} == old
    assert new["stages"]["shard"]["merged"] is True and "started" in new and "started" not in old
