"""Ctrl-C loses no judgment: a real `score` process (the `nli` judge on a tiny real checkpoint, one progress
line, one ETA) gets SIGINT while a judge call is half done; every judgment it finished is in the cache when it
exits, the line it ends with says what it kept, and ``--resume`` says what it kept and what is left before it judges.
``view --serve``, which has no --resume, does not advise one."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a judge in a process of its own, judged until interrupted

N_ITEMS, CLAIMS, DOCS = 150, 2, 4
PAIRS = N_ITEMS * CLAIMS * DOCS  # 1,200 claim × document pairs, each a passage pair of its own, no two alike


def items(path: Path) -> Path:
    rows = [
        {
            "id": f"q{i:03d}",
            "response": "x",
            "claims": [f"Item {i} claim {k}: the river {i * 7 + k} is long." for k in range(CLAIMS)],
            "documents": [
                f"Document {j} of item {i}: river {i * 7 + j} is {'long' if j % 2 else 'short'}." for j in range(DOCS)
            ],
        }
        for i in range(N_ITEMS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        "CONFLICTSCORE_PROGRESS_S": "0.1",
        "HF_HUB_OFFLINE": "1",
        "CONFLICTSCORE_NLI_RUNTIME": "torch",
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "conflictscore_local.cli", *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # a terminal's Ctrl-C


def cached(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT count(*) FROM judgments").fetchone()[0]


def test_ctrl_c_in_a_judge_call_keeps_every_judgment_and_resume_says_what_is_left(
    tmp_path: Path, tiny_nli_dir: Path
) -> None:
    src = items(tmp_path / "in.jsonl")
    run = [
        "score",
        src.name,
        "-o",
        "out.jsonl",
        "--summary",
        "s.json",
        "--cache",
        "c.sqlite",
        "--pruner",
        "none",
        "--judge",
        "nli",
        "--judge-arg",
        f"model={tiny_nli_dir}",
    ]
    proc = start([*run, "--judge-arg", "batch_size=2"], tmp_path)  # small batches: a call long enough to stop in
    assert proc.stderr is not None
    seen: list[str] = []
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line.rstrip("\n"))
        m = re.match(r"scoring: (\d+)/150 items, ([\d,]+)/1,200 pairs", line)
        # one display, in the summary's vocabulary: the items, the claim × document pairs (never passage pairs)
        if m and 64 + 16 <= int(m.group(2).replace(",", "")) < PAIRS - 64:
            break  # the first call (64 pairs) is in and the next one is on its way: Ctrl-C now
    else:
        pytest.fail(f"no progress line to interrupt at: {seen[-5:]}")
    shown = int(m.group(2).replace(",", ""))
    proc.send_signal(signal.SIGINT)
    try:
        rest = proc.communicate(timeout=300)[1]
    finally:
        proc.kill()
    assert proc.returncode == 130, rest
    end = rest.strip().splitlines()[-1]
    said = re.fullmatch(
        r"conflictscore score: interrupted; kept (\d+) items in (.+) and (\d+) judgments in the "
        r"judgment cache: rerun with --resume to continue",
        end,
    )
    assert said is not None, end
    kept, judgments = int(said.group(1)), int(said.group(3))
    assert said.group(2).endswith("out.jsonl.partial")
    assert len((tmp_path / "out.jsonl.partial").read_text().splitlines()) == kept
    assert cached(tmp_path / "c.sqlite") == judgments >= shown > 64  # what the call finished is in the cache too
    assert "ETA" in "\n".join(seen) and not any("passage pairs" in s for s in seen)

    resumed = start([*run, "--resume"], tmp_path)  # the batch size changes no label: the resume goes on with its own
    try:
        out, err = resumed.communicate(timeout=900)
    finally:
        resumed.kill()
    assert resumed.returncode == 0, err
    left = judgments - kept * CLAIMS * DOCS
    assert f"--resume: kept {kept} items and {left} judgments; {N_ITEMS - kept} items to go" in err.splitlines()
    assert len((tmp_path / "out.jsonl").read_text().splitlines()) == N_ITEMS
    assert cached(tmp_path / "c.sqlite") == PAIRS
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["stages"]["resumed_items"] == kept and summary["pairs"]["total"] == PAIRS
    assert summary["pairs"]["cached"] == judgments - kept * CLAIMS * DOCS  # none judged twice
    assert out.splitlines()[0] == f"items {N_ITEMS}   claims {N_ITEMS * CLAIMS}"


def test_view_serve_stopped_by_ctrl_c_does_not_advise_resume(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    proc = start(["view", "runs", "--serve", "--port", "0"], tmp_path)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert line.startswith("serving 0 runs of runs on http://127.0.0.1:"), line
    proc.send_signal(signal.SIGINT)
    try:
        err = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert err.strip().splitlines()[-1] == "conflictscore view: interrupted" and "--resume" not in err
