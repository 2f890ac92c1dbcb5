"""Issue 47 (review reliability-4: RT-choice-onnx, RT-choice-bogus, RT-choice-serve, RT-choice-fifo,
I-resume-cache-folder2): ``runtime=auto`` trusts nothing in ``runtime-choice.json`` but a runtime it may choose
(``torch`` or ``native``, torch's output bit for bit), names the file when it cannot read it, and a resume
whose cache folder (hence stored choice) changed is not refused for it. Met through ``score`` in real
subprocesses over a tiny real checkpoint, the resume after a real ``kill -9``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import conflictscore_local
from conflictscore_local.judge.nli.calibrate import CHOICE_FILE, CHOICE_FORMAT, choice_key

pytestmark = pytest.mark.slow  # each case loads a (tiny) model in a subprocess
PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]


def items(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"i{i}",
            "response": f"Claim {i}.",
            "claims": [f"The bridge opened in {1900 + i}."],
            "documents": [f"The bridge opened in {1900 + i}.", "Bananas grow in tropical climates."],
        }
        for i in range(n)
    ]


def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if k != "CONFLICTSCORE_NLI_RUNTIME"}  # runtime=auto as a user has it
    out.update(
        PYTHONPATH=str(PACKAGE_ROOT),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
        CONFLICTSCORE_CACHE=str(tmp_path / "default" / "j.sqlite"),
    )
    return out


def score(
    tmp_path: Path, model: Path, *flags: str, inp: str = "in.jsonl", timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    args = [
        sys.executable,
        "-m",
        "conflictscore_local.cli",
        "score",
        inp,
        "-q",
        "--judge",
        "nli",
        "--judge-arg",
        f"model={model}",
        "--pruner",
        "none",
        *flags,
    ]
    return subprocess.run(
        args, cwd=tmp_path, env=env(tmp_path), capture_output=True, text=True, timeout=timeout, check=False
    )


def choice_file(folder: Path, model: Path, runtime: str, reason: str = "measured: native, by hand") -> Path:
    """``folder/runtime-choice.json`` holding ``runtime`` under this machine's key for ``model``."""
    key = choice_key(json.loads((model / "config.json").read_text()), "cpu", "float32")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CHOICE_FILE).write_text(
        json.dumps({"format": CHOICE_FORMAT, "choices": {key: {"runtime": runtime, "reason": reason, "trials": []}}})
    )
    return folder / CHOICE_FILE


def resolved(summary: Path) -> dict[str, Any]:
    return json.loads(summary.read_text())["config"]["backends"]["judge"]["resolved"]


@pytest.mark.parametrize("runtime", ["onnx", "serve"])
def test_a_stored_choice_auto_never_takes_is_measured_again(tmp_path: Path, tiny_nli_dir: Path, runtime: str) -> None:
    """Before: an entry edited to ``onnx`` made ``runtime=auto`` run ONNX Runtime (exit 0, its reason still
    "measured: native"); ``bogus`` / ``serve`` failed with exit 2 naming a runtime the user never gave."""
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items(2)))
    file = choice_file(tmp_path / "c", tiny_nli_dir, runtime)
    done = score(tmp_path, tiny_nli_dir, "-o", "o.jsonl", "--summary", "s.json", "--cache", "c/j.sqlite")
    assert done.returncode == 0, done.stderr
    assert (
        f"runtime=auto: c/{CHOICE_FILE}: the choice stored as " in done.stderr
        and f"names runtime {runtime!r}, which auto never takes (only torch or native" in done.stderr
    )
    got = resolved(tmp_path / "s.json")
    assert got["runtime"] in ("torch", "native") and got["runtime_reason"].startswith("auto: calibrated now")
    assert not (tmp_path / "c" / "onnx").exists()  # nothing exported for ONNX Runtime
    stored = json.loads(file.read_text())["choices"]
    assert [c["runtime"] for c in stored.values()] == [got["runtime"]]  # the bad entry replaced by the measured one


def test_a_fifo_in_place_of_the_choice_is_named_at_once(tmp_path: Path, tiny_nli_dir: Path) -> None:
    """Before: ``score`` waited for a writer forever (killed by timeout after 120 s), no message."""
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items(1)))
    (tmp_path / "c").mkdir()
    os.mkfifo(tmp_path / "c" / CHOICE_FILE)
    started = time.monotonic()
    done = score(tmp_path, tiny_nli_dir, "-o", "o.jsonl", "--cache", "c/j.sqlite", timeout=120)
    assert time.monotonic() - started < 100
    assert done.returncode == 2, done.stderr
    assert (
        f"runtime=auto: the stored choice c/{CHOICE_FILE} is not a regular file (a FIFO, a device or a "
        "socket); remove it"
    ) in done.stderr
    assert "Traceback" not in done.stderr


def test_resume_with_another_cache_folder_whose_choice_differs_is_accepted(tmp_path: Path, tiny_nli_dir: Path) -> None:
    """Before: a --no-cache run killed partway, resumed with --cache in a folder whose stored choice says torch,
    was refused: "backends differ: judge.runtime: 'native' then, 'torch' now", though docs/reliability.md lists
    --cache as free to change on resume (torch and native give the same output at float32)."""
    (tmp_path / "in.jsonl").write_text("".join(json.dumps(r) + "\n" for r in items(3000)))
    choice_file(tmp_path / "xdg" / "conflictscore", tiny_nli_dir, "native")  # what --no-cache reads
    choice_file(tmp_path / "other", tiny_nli_dir, "torch")  # the folder of the --cache given on resume
    whole = score(tmp_path, tiny_nli_dir, "-o", "whole.jsonl", "--no-cache", timeout=900)
    assert whole.returncode == 0, whole.stderr
    args = [
        sys.executable,
        "-m",
        "conflictscore_local.cli",
        "score",
        "in.jsonl",
        "-q",
        "--judge",
        "nli",
        "--judge-arg",
        f"model={tiny_nli_dir}",
        "--pruner",
        "none",
        "-o",
        "out.jsonl",
        "--no-cache",
        "--set",
        "engine.step_items=10",
    ]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env(tmp_path), stderr=subprocess.PIPE)
    partial = tmp_path / "out.jsonl.partial"
    deadline = time.monotonic() + 300
    while (
        proc.poll() is None
        and time.monotonic() < deadline
        and (not partial.exists() or partial.read_bytes().count(b"\n") < 20)
    ):
        time.sleep(0.02)
    assert proc.poll() is None, proc.stderr.read().decode()  # type: ignore[union-attr]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    done = score(
        tmp_path,
        tiny_nli_dir,
        "-o",
        "out.jsonl",
        "--resume",
        "--cache",
        "other/j.sqlite",
        "--summary",
        "s.json",
        timeout=900,
    )
    assert done.returncode == 0, done.stderr
    assert resolved(tmp_path / "s.json")["runtime"] == "torch"  # the other folder's choice ran the rest
    assert (tmp_path / "out.jsonl").read_bytes() == (tmp_path / "whole.jsonl").read_bytes()
    shutil.rmtree(tmp_path / "xdg")
