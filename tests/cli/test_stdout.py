"""Issue 47 (review reliability-4: OUT-csv-stdout-closed and its 50k / -q / pairs / compare variants,
OUT-compare-o-stdout-closed, OUT-csv-stdout-json, OUT-csv-and-pairs-stdout): what goes to stdout goes whole,
or the command says it could not. Met in a real shell pipeline (``| head -c 10``), with and without
``PYTHONUNBUFFERED`` (CI images set it; it made Python drop the rest of a large write without a word)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import conflictscore_local

pytestmark = pytest.mark.slow  # a few dozen CLI runs over 3,000 items

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]
ITEM = {
    "response": "c.",
    "claims": ["c1", "c2"],
    "documents": ["a", "b"],
    "labels": [["SUPPORT", "CONTRADICT"], ["IRRELEVANT", "SUPPORT"]],
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 labelled items (their tables are larger than a pipe's 64 KiB) and their scored file."""
    d = tmp_path_factory.mktemp("stdout")
    (d / "in.jsonl").write_text("".join(json.dumps({"id": f"it{i}", **ITEM}) + "\n" for i in range(3000)))
    assert shell(f"{cs()} score in.jsonl --no-cache -q -o z.jsonl", d).returncode == 0
    return d


def cs() -> str:
    return f"{sys.executable} -m conflictscore_local.cli"


def shell(line: str, cwd: Path, unbuffered: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    env["PYTHONPATH"] = str(PACKAGE_ROOT)
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.parametrize("unbuffered", [True, False], ids=["PYTHONUNBUFFERED=1", "buffered"])
@pytest.mark.parametrize(
    "command",
    [
        "score in.jsonl --no-cache -q -o o1.jsonl --csv -",
        "score in.jsonl --no-cache -o o2.jsonl --csv -",
        "score in.jsonl --no-cache -q -o o3.jsonl --csv-pairs -",
        "compare z.jsonl z.jsonl --csv - -q --bootstrap 10",
        "compare z.jsonl z.jsonl -o - -q --bootstrap 10",
        "score in.jsonl --no-cache -q -o - ",
    ],
)
def test_a_table_on_a_closed_stdout_exits_141(runs: Path, command: str, unbuffered: bool) -> None:
    """Before: exit 0 for every table (141 only for -o -), and ``compare -o - -q`` was refused."""
    done = shell(f"{cs()} {command} | head -c 10 >/dev/null; echo ${{PIPESTATUS[0]}}", runs, unbuffered)
    assert done.stdout.strip() == "141", done.stderr
    assert done.stderr == ""  # nothing said: as a Unix tool killed by SIGPIPE


@pytest.mark.parametrize("unbuffered", [True, False], ids=["PYTHONUNBUFFERED=1", "buffered"])
def test_a_table_on_an_open_stdout_is_whole(runs: Path, unbuffered: bool) -> None:
    done = shell(f"{cs()} score in.jsonl --no-cache -q -o o4.jsonl --csv - | wc -l", runs, unbuffered)
    assert done.stdout.strip() == "3001", done.stderr


@pytest.mark.parametrize(
    "flags, says",
    [
        ("--csv - --json", "--csv - and --json both print on stdout; write the table to a file, or leave out --json"),
        ("--csv-pairs - --json", "--csv-pairs - and --json both print on stdout"),
        (
            "--csv - --csv-pairs -",
            "--csv - and --csv-pairs -: two tables on stdout would run into each other; write one of them to a file",
        ),
    ],
)
def test_two_things_on_stdout_are_refused(runs: Path, flags: str, says: str) -> None:
    """Before: ``--csv - --json`` printed the CSV alone (the JSON silently left out), ``--csv - --csv-pairs -``
    two tables one after the other, exit 0."""
    done = shell(f"{cs()} score in.jsonl --no-cache -q -o o5.jsonl {flags}", runs)
    assert done.returncode == 2 and done.stdout == ""
    assert says in done.stderr and done.stderr.count("\n") == 1
    assert not (runs / "o5.jsonl").exists()
    done = shell(f"{cs()} compare z.jsonl z.jsonl --csv - --json", runs)
    assert done.returncode == 2 and "--csv - and --json both print on stdout" in done.stderr
