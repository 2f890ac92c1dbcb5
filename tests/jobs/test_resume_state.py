"""Issue 47 (review reliability-4: R-partial-meta-garbage/-list/-null/-emptyobj, R-generate-meta-garbage,
R-bench-meta-list, R-partial-dup-row, R-partial-row-edited, R-partial-swapped-rows, R-bench-resume-other-split):
``--resume`` trusts no state file as written. Each case is a real run killed with ``kill -9`` partway
(``OUT.partial``, its fingerprint and its row digests left as a crash leaves them), the state then damaged as
the review damaged it, and the real command resumed in a subprocess: a damaged fingerprint is one line naming
the file and the way out (exit 2), rows that are not as they were written (duplicated, edited, swapped) are
scored again and the output is byte for byte the uninterrupted run's."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

import conflictscore_local
from conflictscore_local.bench import make_item
from conflictscore_local.core.types import CONTRADICT, IRRELEVANT, SUPPORT

from .test_hostile import item, write_jsonl

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]
N_ITEMS = 20000


def command(*args: str) -> list[str]:
    return [sys.executable, "-m", "conflictscore_local.cli", *args]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)}


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command(*args), cwd=cwd, env=env(), capture_output=True, text=True, timeout=600, check=False)


def rows_in(path: Path) -> int:
    try:
        with open(path, "rb") as fh:
            return fh.read().count(b"\n")
    except FileNotFoundError:
        return 0


def killed_partway(args: list[str], cwd: Path, partial: Path, rows: int) -> None:
    """Start the command, ``kill -9`` it once ``partial`` holds ``rows`` rows; its state stays as a crash leaves it."""
    proc = subprocess.Popen(command(*args), cwd=cwd, env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while rows_in(partial) < rows and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.fail(
            f"the run ended (exit {proc.returncode}) before it could be killed: {proc.stderr.read().decode()[-400:]}"
        )  # type: ignore[union-attr]
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    assert partial.with_name(partial.name + ".meta.json").is_file()


def one_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


# == score ===========================================================================================


@pytest.fixture(scope="module")
def killed_score(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A labelled input of 20,000 items, its uninterrupted output, and a run of it killed with kill -9 partway."""
    d = tmp_path_factory.mktemp("killed-score")
    write_jsonl(d / "in.jsonl", [item(i, [SUPPORT, CONTRADICT if i % 2 else IRRELEVANT]) for i in range(N_ITEMS)])
    args = ["score", "in.jsonl", "-q", "--no-cache", "--set", "engine.step_items=100"]
    done = run(*args, "-o", "whole.jsonl", cwd=d)
    assert done.returncode == 0, done.stderr
    (d / "killed").mkdir()
    shutil.copy(d / "in.jsonl", d / "killed" / "in.jsonl")
    killed_partway(args + ["-o", "out.jsonl"], d / "killed", d / "killed" / "out.jsonl.partial", 1000)
    return {"dir": d, "args": args, "whole": (d / "whole.jsonl").read_bytes()}


def variant(
    killed: dict[str, Any], tmp_path: Path, change: Callable[[list[bytes], Any], tuple[list[bytes], Any]]
) -> Path:
    """A copy of the killed run's folder with its partial rows and fingerprint changed by ``change``."""
    d = tmp_path / "v"
    shutil.copytree(killed["dir"] / "killed", d)
    partial, meta = d / "out.jsonl.partial", d / "out.jsonl.partial.meta.json"
    lines = partial.read_bytes().splitlines(keepends=True)
    lines = [ln for ln in lines if ln.endswith(b"\n")]  # the rows a crash left whole
    lines, fingerprint = change(lines, json.loads(meta.read_text()))
    partial.write_bytes(b"".join(lines))
    meta.write_text(json.dumps(fingerprint))
    return d


@pytest.mark.slow
@pytest.mark.parametrize(
    "meta, says",
    [
        ("garbage", "is damaged: a JSON string, not the fingerprint of a run"),
        ([1, 2], "is damaged: a JSON array, not the fingerprint of a run"),
        (None, "is damaged: a JSON null, not the fingerprint of a run"),
        ({}, "is damaged: an object without 'format', not the fingerprint of a run"),
    ],
    ids=["string", "list", "null", "empty object"],
)
def test_score_resume_with_a_fingerprint_that_is_not_one_is_one_line(killed_score, tmp_path, meta, says):
    """Before: AttributeError at jobs/fingerprint.py:22 (a traceback, exit 1); {} said "another version"."""
    d = variant(killed_score, tmp_path, lambda lines, _: (lines, meta))
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    done = run(*killed_score["args"], "-o", "out.jsonl", "--resume", cwd=d)
    assert done.returncode == 2, done.stderr
    line = one_line(done.stderr)
    assert f"--resume: {d / 'out.jsonl.partial.meta.json'} {says}" in line
    assert "rerun without --resume to start over" in line
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before  # nothing touched


@pytest.mark.slow
def test_score_resume_of_an_untouched_kill_is_the_uninterrupted_output(killed_score, tmp_path):
    d = variant(killed_score, tmp_path, lambda lines, meta: (lines, meta))
    done = run(*killed_score["args"], "-o", "out.jsonl", "--resume", cwd=d)
    assert done.returncode == 0, done.stderr
    assert "do not match" not in done.stderr
    assert (d / "out.jsonl").read_bytes() == killed_score["whole"]
    assert sorted(p.name for p in d.iterdir()) == ["in.jsonl", "out.jsonl"]  # no partial, fingerprint nor digests


def dup(lines: list[bytes], meta: Any) -> tuple[list[bytes], Any]:
    lines.insert(5, lines[3])
    return lines, meta


def edited(lines: list[bytes], meta: Any) -> tuple[list[bytes], Any]:
    row = json.loads(lines[3])
    label = row["claims"][0]["judgments"][0]["label"]
    row["claims"][0]["judgments"][0]["label"] = CONTRADICT if label == SUPPORT else SUPPORT
    lines[3] = (json.dumps(row) + "\n").encode()
    return lines, meta


def swapped(lines: list[bytes], meta: Any) -> tuple[list[bytes], Any]:
    lines[3], lines[4] = lines[4], lines[3]
    return lines, meta


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, line", [(dup, 6), (edited, 4), (swapped, 4)], ids=["duplicated row", "edited row", "swapped rows"]
)
def test_score_resume_redoes_rows_that_are_not_as_written(killed_score, tmp_path, change, line):
    """Before: a duplicated row gave 20,001 rows (an id twice), an edited or swapped row was kept as it was,
    exit 0, no word."""
    d = variant(killed_score, tmp_path, change)
    rows = rows_in(d / "out.jsonl.partial")
    done = run(*killed_score["args"], "-o", "out.jsonl", "--resume", cwd=d)
    assert done.returncode == 0, done.stderr
    assert (
        f"warning: --resume: {d / 'out.jsonl.partial'}: {rows - line + 1} rows from line {line} on do not match "
        "the digests written with them (out.jsonl.partial.digests: edited, duplicated, moved or cut since); the "
        f"{line - 1} rows before are kept, the rest are done again"
    ) in done.stderr
    assert (d / "out.jsonl").read_bytes() == killed_score["whole"]  # N rows, each id once, in input order


@pytest.mark.slow
def test_score_resume_after_the_digests_are_gone_is_refused(killed_score, tmp_path):
    d = variant(killed_score, tmp_path, lambda lines, meta: (lines, meta))
    (d / "out.jsonl.partial.digests").unlink()
    done = run(*killed_score["args"], "-o", "out.jsonl", "--resume", cwd=d)
    assert done.returncode == 2
    assert "its rows' digests (out.jsonl.partial.digests) are missing" in one_line(done.stderr)


# == generate ========================================================================================


@pytest.mark.slow
def test_generate_resume_with_a_fingerprint_that_is_not_one_is_one_line(tmp_path, openai_server, openai_stub):
    """Before: the same AttributeError from ``generate --resume`` (meta ``"garbage"``)."""
    openai_server.respond = lambda r: openai_stub.Reply(body=openai_stub.chat_reply("An answer."), delay_s=0.02)
    write_jsonl(tmp_path / "in.jsonl", [{"id": f"g{i}", "question": f"Q{i}?", "documents": ["d"]} for i in range(2000)])
    args = [
        "generate",
        "in.jsonl",
        "-o",
        "g.jsonl",
        "--strategy",
        "standard",
        "-q",
        "--generator",
        "openai",
        "--generator-arg",
        f"base_url={openai_server.url}",
        "--generator-arg",
        "max_retries=0",
        "--generator-arg",
        "max_concurrency=2",
    ]
    killed_partway(args, tmp_path, tmp_path / "g.jsonl.partial", 20)
    (tmp_path / "g.jsonl.partial.meta.json").write_text('"garbage"')
    done = run(*args, "--resume", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = one_line(done.stderr)
    assert f"{tmp_path / 'g.jsonl.partial.meta.json'} is damaged: a JSON string" in line
    assert "rerun without --resume to start over (a fresh run asks every item again)" in line


# == bench run =======================================================================================


def bench_items(n: int) -> list[dict[str, Any]]:
    splits = ("train", "dev", "test")
    return [
        make_item(
            source="synthetic",
            id=f"b{i}",
            question=None,
            claims=[f"claim {i}"],
            documents=[{"id": "d0", "text": "yes"}, {"id": "d1", "text": "no"}],
            gold_labels=[[SUPPORT, CONTRADICT if i % 2 else IRRELEVANT]],
            conflict_type="contradiction",
            split_key=f"claim {i}",
            split=splits[i % 3],
        )
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def killed_bench(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    d = tmp_path_factory.mktemp("killed-bench")
    write_jsonl(d / "cb.jsonl", bench_items(N_ITEMS))
    args = ["bench", "run", "cb.jsonl", "--given-labels", "-q", "--no-cache", "--set", "engine.step_items=100"]
    killed_partway(args + ["-o", "out.jsonl", "--summary", "s.json"], d, d / "out.jsonl.partial", 600)
    return {"dir": d, "args": args}


@pytest.mark.slow
def test_bench_run_resume_with_a_fingerprint_that_is_not_one_is_one_line(killed_bench, tmp_path):
    """Before: AttributeError from ``bench run --resume`` (meta ``[1, 2]``)."""
    d = tmp_path / "v"
    shutil.copytree(killed_bench["dir"], d)
    (d / "out.jsonl.partial.meta.json").write_text("[1, 2]")
    done = run(*killed_bench["args"], "-o", "out.jsonl", "--summary", "s.json", "--resume", cwd=d)
    assert done.returncode == 2, done.stderr
    assert f"{d / 'out.jsonl.partial.meta.json'} is damaged: a JSON array" in one_line(done.stderr)


@pytest.mark.slow
def test_bench_run_resume_of_one_split_says_the_other_splits_rows_are_outside_it(killed_bench, tmp_path):
    """Before: "dropped 313 finished rows whose ids are not in cb.jsonl", though they are, in other splits."""
    d = tmp_path / "v"
    shutil.copytree(killed_bench["dir"], d)
    # only the rows with their digest are kept: a kill between a row and its digest (or within the row) leaves one
    # row without, which is scored again, not dropped
    n = rows_in(d / "out.jsonl.partial.digests")
    kept = [json.loads(x)["id"] for x in (d / "out.jsonl.partial").read_bytes().split(b"\n")[:n]]
    others = sum(1 for i in kept if int(i[1:]) % 3 != 2)
    done = run(*killed_bench["args"], "-o", "out.jsonl", "--summary", "s.json", "--resume", "--split", "test", cwd=d)
    assert done.returncode == 0, done.stderr
    assert (
        f"--resume: dropped {others} finished rows of items of cb.jsonl outside this run's selection (the "
        "interrupted run selected others: another --split, --source or --limit)"
    ) in done.stderr
    assert "not in cb.jsonl" not in done.stderr
    ids = [json.loads(x)["id"] for x in (d / "out.jsonl").read_text().splitlines()]
    assert ids == [f"b{i}" for i in range(N_ITEMS) if i % 3 == 2]
