"""``conflictscore score --judge vllm`` on real vLLM on the CPU (SmolLM2-135M-Instruct): a whole run,
the same run killed with SIGKILL right after its first row in a process of its own (as a crash
would: the engine dies with it) and resumed (byte-identical output), and a rerun answered from the
judgment cache without starting an engine. The whole run and the resume run in this process on the
session's SmolLM2 engine (conftest); the killed run loads its own.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.cli import main

from .conftest import SKIP_NO_VLLM, SMOLLM2

pytest.importorskip("vllm", reason=SKIP_NO_VLLM)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ITEMS = [
    {
        "id": "bridge",
        "response": "",
        "claims": ["The bridge opened in 1932."],
        "documents": [
            {"id": "d1", "text": "The bridge over the river opened in 1932 after four years of work."},
            {"id": "d2", "text": "Local papers reported that the bridge opened in 1934."},
        ],
    },
    {
        "id": "tea",
        "response": "",
        "claims": ["Green tea lowers blood pressure."],
        "documents": [
            {"id": "d1", "text": "Green tea lowers blood pressure in adults."},
            {"id": "d2", "text": "Cats purr when they are content."},
        ],
    },
    {
        "id": "cats",
        "response": "",
        "claims": ["Cats purr.", "Cats bark."],
        "documents": [{"id": "d1", "text": "Cats purr when they are content."}],
    },
]
RUNNER = '''\
"""conflictscore's command line; SIGKILL to itself (and so to its engine) right after the row of
item argv[1] is written, as a crash would."""
import os
import signal
import sys

from conflictscore_local.cli import main
from conflictscore_local.jobs import ResumableJsonlWriter

_write = ResumableJsonlWriter.write


def write(self, row):
    _write(self, row)
    if row["id"] == sys.argv[1]:
        os.killpg(os.getpgrp(), signal.SIGKILL)


ResumableJsonlWriter.write = write

if __name__ == "__main__":  # vLLM spawns its engine core: the module is imported again there
    sys.exit(main(sys.argv[2:]))
'''


def score_args(model: Path, tmp_path: Path, out: Path, cache: Path, *extra: str) -> list[str]:
    """``score`` of ``tmp_path/items.jsonl`` (written here) with SmolLM2 as the vllm judge."""
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ITEMS))
    judge = {"model": str(model), "min_label_mass": 0, **SMOLLM2}
    args = [
        "score",
        str(tmp_path / "items.jsonl"),
        "-o",
        str(out),
        "--summary",
        str(out.with_suffix(".summary.json")),
        "--judge",
        "vllm",
        "--pruner",
        "none",
        "--cache",
        str(cache),
        "--set",
        "engine.step_items=1",
        "--set",
        "engine.max_unscored_share=1",
        "-q",
        *extra,
    ]
    for k, v in judge.items():
        args += ["--judge-arg", f"{k}={json.dumps(v) if isinstance(v, dict) else v}"]
    return args


def run_killed(model: Path, tmp_path: Path, out: Path, cache: Path, kill_after: str) -> subprocess.CompletedProcess:
    """The runner in a process group of its own (killed whole at the end), SIGKILLed after ``kill_after``'s row."""
    runner = tmp_path / "runner.py"
    runner.write_text(RUNNER)
    args = [sys.executable, str(runner), kill_after, *score_args(model, tmp_path, out, cache)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "VLLM_CPU_KVCACHE_SPACE": "1"}
    proc = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True
    )
    try:
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever of the engine outlived the run
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(args, proc.returncode, stdout, stderr)


@pytest.fixture(scope="module")
def whole(vllm_cpu: Any, smollm2_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One uninterrupted run: its output and its cache."""
    tmp = tmp_path_factory.mktemp("whole")
    out, cache = tmp / "whole.jsonl", tmp / "cache.sqlite"
    assert main(score_args(smollm2_dir, tmp, out, cache)) == 0
    return out, cache


def test_the_whole_run_reads_labels_from_logprobs(whole: tuple[Path, Path]) -> None:
    out, _ = whole
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    summary = json.loads(out.with_suffix(".summary.json").read_text())
    judgments = [j for r in rows for c in r["claims"] for j in c["judgments"]]
    assert [r["id"] for r in rows] == ["bridge", "tea", "cats"] and len(judgments) == 6
    stats = summary["stages"]["judge"]
    assert stats["pairs"] == 6 and stats.get("from_logprobs", 0) + stats.get("unscored", 0) == 6
    judge = summary["config"]["backends"]["judge"]
    assert judge["resolved"]["label_short_tokens"] == {"S": "SUPPORT"}
    assert judge["generator"]["engine_args"]["enable_prefix_caching"] is True
    for j in judgments:
        assert (j["probs"] is not None and j["label"] is not None) or (j["label"] is None and j["note"])


def test_killed_with_sigkill_mid_run_then_resumed_gives_the_same_bytes(
    whole: tuple[Path, Path], smollm2_dir: Path, tmp_path: Path
) -> None:
    out, cache = tmp_path / "cut.jsonl", tmp_path / "cut.sqlite"
    killed = run_killed(smollm2_dir, tmp_path, out, cache, kill_after="bridge")
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert not out.exists()  # the output appears only when a run finishes; its rows wait in the partial file
    assert [json.loads(line)["id"] for line in out.with_name(out.name + ".partial").read_text().splitlines()] == [
        "bridge"
    ]
    assert main(score_args(smollm2_dir, tmp_path, out, cache, "--resume")) == 0
    assert out.read_bytes() == whole[0].read_bytes()


def test_a_rerun_is_answered_from_the_cache_without_an_engine(
    whole: tuple[Path, Path], smollm2_dir: Path, tmp_path: Path
) -> None:
    out, cache = whole
    again = tmp_path / "again.jsonl"
    assert main(score_args(smollm2_dir, tmp_path, again, cache)) == 0
    summary = json.loads(again.with_suffix(".summary.json").read_text())
    scored = sum(
        j["label"] is not None
        for line in out.read_text().splitlines()
        for c in json.loads(line)["claims"]
        for j in c["judgments"]
    )
    assert summary["pairs"]["cached"] == scored
    judge = summary["config"]["backends"]["judge"]
    assert judge["generator"]["model_path"] == str(smollm2_dir)  # resolved, but no engine started:
    assert "engine_args" not in judge["generator"] and "vllm" not in judge["generator"]
    assert again.read_text().replace('"source": "cache"', '"source": "judge"') == out.read_text()
