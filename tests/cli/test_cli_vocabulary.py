"""Issue 38 §6, one vocabulary: ``--summary SUMMARY.json`` everywhere (``bench build --stats`` kept one
release), ``--seed N`` on ``score`` / ``bench run`` (``engine.seed``), real metavars on every flag,
``bench run --resume`` through the one scoring runner."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import build_parser, leaf_parsers, main
from conflictscore_local.jobs import write_jsonl_atomic

from ..bench.test_bench_run import RuleJudge, _item
from ..jobs.test_hostile import RAMDOCS_ROW

S, C, IR = "SUPPORT", "CONTRADICT", "IRRELEVANT"


def test_every_summary_flag_is_summary_json() -> None:
    seen = {}
    for path, parser, _ in leaf_parsers(build_parser()):
        for a in parser._actions:
            if "--summary" in a.option_strings:
                seen[" ".join(path)] = a.metavar
    assert seen == {c: "SUMMARY.json" for c in ("score", "bench build", "bench run", "report", "regenerate", "merge")}


def test_every_flag_with_a_value_has_a_real_metavar() -> None:
    """No DEST-in-capitals metavar (argparse's default): a value's kind (N, RATE, TOKENS, FILE, ...) or its choices."""
    missing = [
        (" ".join(path), a.option_strings[-1])
        for path, parser, _ in leaf_parsers(build_parser())
        for a in parser._actions
        if a.option_strings and a.nargs != 0 and a.help != argparse.SUPPRESS and a.metavar is None and a.choices is None
    ]
    assert missing == []
    usage = next(p for path, p, _ in leaf_parsers(build_parser()) if path == ("train-judge", "fit")).format_usage()
    assert "[--epochs N] [--lr RATE]" in usage and "[--max-length TOKENS]" in usage and "EPOCHS" not in usage


def _labeled(tmp_path: Path) -> Path:
    src = Path(__file__).resolve().parents[2] / "examples" / "labeled.jsonl"
    dst = tmp_path / "labeled.jsonl"
    dst.write_bytes(src.read_bytes())
    return dst


def test_score_seed_is_engine_seed_and_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inp = _labeled(tmp_path)
    s7, s0 = tmp_path / "s7.json", tmp_path / "s0.json"
    assert main(["score", str(inp), "-o", str(tmp_path / "o7.jsonl"), "--summary", str(s7), "--seed", "7", "-q"]) == 0
    assert main(["score", str(inp), "-o", str(tmp_path / "o0.jsonl"), "--summary", str(s0), "-q"]) == 0
    assert json.loads(s7.read_text())["config"]["run"]["engine"]["seed"] == 7
    assert json.loads(s0.read_text())["config"]["run"]["engine"]["seed"] == 0
    # the same seed twice (the flag and --set) is one seed; two different ones are refused before any work
    assert (
        main(["score", str(inp), "-o", str(tmp_path / "o.jsonl"), "--seed", "7", "--set", "engine.seed=7", "-q"]) == 0
    )
    capsys.readouterr()
    assert main(["score", str(inp), "-o", str(tmp_path / "x.jsonl"), "--seed", "7", "--set", "engine.seed=3"]) == 2
    assert capsys.readouterr().err == (
        "conflictscore score: error: --seed 7 and --set engine.seed=3: two seeds; give one of them\n"
    )
    assert not (tmp_path / "x.jsonl").exists()
    with pytest.raises(SystemExit) as e:
        main(["score", str(inp), "-o", str(tmp_path / "x.jsonl"), "--seed", "-1"])
    assert e.value.code == 2
    assert capsys.readouterr().err.endswith(
        "conflictscore score: error: argument --seed: must be an integer in [0, 9223372036854775807], got -1\n"
    )


def test_bench_build_stats_is_an_old_spelling_of_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "ramdocs.jsonl"
    src.write_text(json.dumps(RAMDOCS_ROW) + "\n")
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    argv = ["bench", "build", "--source", "ramdocs", "--source", f"ramdocs={src}", "--data-dir", str(tmp_path), "-q"]
    rc_old = main([*argv, "-o", str(tmp_path / "a.jsonl"), "--stats", str(old)])
    err = capsys.readouterr().err
    rc_new = main([*argv, "-o", str(tmp_path / "b.jsonl"), "--summary", str(new)])
    assert (rc_old, rc_new) == (0, 0), err
    assert "warning: --stats is deprecated and will be removed in the next release: use --summary\n" in err
    assert json.loads(old.read_text()) == json.loads(new.read_text())
    assert "warning" not in capsys.readouterr().err


class CrashingJudge(RuleJudge):
    seen: list[str] = []
    fail_on: str | None = None

    def judge(self, pairs: Any, on_progress: Any = None) -> Any:
        ids = {p.claim.item_id for p in pairs}
        if CrashingJudge.fail_on in ids:
            raise RuntimeError("power cut")
        CrashingJudge.seen.extend(sorted(ids))
        return super().judge(pairs, on_progress)


def test_bench_run_resume_keeps_finished_rows_and_refuses_a_mismatch(
    tmp_path: Path, register_backend: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    register_backend("judge", "bench-crash", CrashingJudge)
    bench = tmp_path / "bench.jsonl"
    write_jsonl_atomic(bench, [_item(k, ["yes one", "no two"], [S, C]) for k in "abcd"])
    out, summary = tmp_path / "pred.jsonl", tmp_path / "summary.json"
    argv = [
        "bench",
        "run",
        str(bench),
        "--judge",
        "bench-crash",
        "--pruner",
        "none",
        "--no-cache",
        "--set",
        "engine.step_items=1",
        "-o",
        str(out),
        "--summary",
        str(summary),
        "-q",
    ]
    CrashingJudge.seen, CrashingJudge.fail_on = [], "c"
    with pytest.raises(RuntimeError, match="power cut"):
        main(argv)
    assert not out.exists() and not summary.exists()
    assert [json.loads(x)["id"] for x in (tmp_path / "pred.jsonl.partial").read_text().splitlines()] == ["a", "b"]

    capsys.readouterr()
    assert main([*argv, "--set", "aggregate.threshold=0.6", "--resume"]) == 2
    assert capsys.readouterr().err == (
        f"conflictscore bench: error: --resume: refusing to continue {tmp_path / 'pred.jsonl.partial'}: settings "
        "differ: aggregate.threshold: 0.0 then, 0.6 now; rerun with what the interrupted run used, or without "
        "--resume to start over (the judgment cache keeps a fresh run cheap)\n"
    )

    CrashingJudge.seen, CrashingJudge.fail_on = [], None
    assert main([*argv, "--resume"]) == 0
    assert CrashingJudge.seen == ["c", "d"]
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "b", "c", "d"]
    s = json.loads(summary.read_text())
    assert s["n_items"] == 4 and s["stages"]["resumed_items"] == 2
    assert s["evaluation"]["detection"]["overall"]["tp"] == 4
    assert not (tmp_path / "pred.jsonl.partial").exists()


def test_bench_run_resume_needs_the_per_item_rows(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "bench.jsonl"
    write_jsonl_atomic(bench, [_item("a", ["yes"], [S])])
    assert main(["bench", "run", str(bench), "--given-labels", "-o", str(tmp_path / "p.csv"), "--resume"]) == 2
    assert capsys.readouterr().err == (
        "conflictscore bench: error: --resume needs the per-item output to resume from: write -o OUT.jsonl "
        "--summary SUMMARY.json (an -o ending in .csv or .json writes no per-item rows)\n"
    )


def test_score_o_dash_streams_the_rows_and_refuses_resume_and_shard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    inp, summary = _labeled(tmp_path), tmp_path / "s.json"
    assert main(["score", str(inp), "-o", "-", "--summary", str(summary)]) == 0
    out = capsys.readouterr().out
    rows = [json.loads(x) for x in out.splitlines()]
    assert [r["id"] for r in rows] == ["annotated-1"] and json.loads(summary.read_text())["n_items"] == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["labeled.jsonl", "s.json"]
    for extra, why in (
        (
            ["--resume"],
            "--resume needs the per-item JSONL in a file: -o - streams the rows to stdout, "
            "which keeps nothing to resume from; write -o OUT.jsonl",
        ),
        (
            ["--shard", "1/2", "--summary", str(tmp_path / "x.json")],
            "--shard 1/2 needs the per-item JSONL in a file: -o - streams the rows to stdout, which keeps "
            "nothing to merge; write -o OUT.jsonl",
        ),
        (
            ["--json"],
            "-o - and --json both print on stdout; write the rows to a file (-o OUT.jsonl) "
            "or the summary to --summary SUMMARY.json",
        ),
        (
            ["--csv", "-"],
            "-o - and a table on stdout (--csv - or --csv-pairs -) would interleave; write one of them to a file",
        ),
    ):
        assert main(["score", str(inp), "-o", "-", *extra]) == 2
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", f"conflictscore score: error: {why}\n")
