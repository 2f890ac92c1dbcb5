"""Issue 47 (review reliability-4: SEC-extra-body-badjson, SEC-arg-wrongtype-echo): a credential inside a
backend argument that fails its check is never echoed on stderr (where CI logs keep it): the error names the
argument and the problem, and the value only by its kind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import conflictscore_local
from conflictscore_local.backends.arguments import given

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]
K3 = "body-token-QQQQ7777"
ITEM = {"id": "a", "response": "c.", "claims": ["c"], "documents": ["d"]}


def score(tmp_path: Path, *judge_args: str, flag: str = "--judge-arg") -> subprocess.CompletedProcess[str]:
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps(ITEM) + "\n", encoding="utf-8")
    args = [
        "score",
        str(inp),
        "-q",
        "-o",
        str(tmp_path / "o.jsonl"),
        "--no-cache",
        "--judge",
        "openai",
        "--judge-arg",
        "base_url=http://127.0.0.1:9/v1",
        "--judge-arg",
        "max_retries=0",
    ]
    for a in judge_args:
        args += [flag, a]
    return subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(PACKAGE_ROOT)},
    )


@pytest.mark.parametrize(
    "arg, says",
    [
        (
            f'extra_body={{"api_key": "{K3}"',
            "argument 'extra_body': expected a JSON object (Expecting ',' delimiter at "
            "character 34), got text of 33 characters (not shown: it may hold a "
            "credential)",
        ),
        (
            f'model_fingerprint={{"api_key": "{K3}"}}',
            "argument 'model_fingerprint': expected a string, got a JSON object (not shown: it may hold a credential)",
        ),
        (f'extra_body=["token", "{K3}"]', "argument 'extra_body': expected dict, got list"),
        (
            f"max_retries=token-{K3}",
            "argument 'max_retries': expected an integer, got text of 25 characters (not shown",
        ),
        (
            f"endpoint=Bearer {K3}",
            "argument 'endpoint': text of 26 characters (not shown: it may hold a credential) is "
            "not allowed; allowed: chat, completions",
        ),
    ],
    ids=[
        "extra_body missing its brace",
        "an object for a string",
        "a list for an object",
        "a token for a number",
        "a bearer for a choice",
    ],
)
def test_a_refused_argument_never_echoes_a_credential(tmp_path: Path, arg: str, says: str) -> None:
    """Before: "argument 'extra_body': expected a JSON object, got '{"api_key": "body-token-QQQQ7777"'"."""
    done = score(tmp_path, arg)
    assert done.returncode == 2, done.stderr
    assert K3 not in done.stderr and K3 not in done.stdout
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert f"judge 'openai': {says}" in done.stderr, done.stderr
    assert not (tmp_path / "o.jsonl").exists()


def test_through_set_the_same(tmp_path: Path) -> None:
    done = score(tmp_path, f'judge.extra_body={{"api_key": "{K3}"', flag="--set")
    assert done.returncode == 2 and K3 not in done.stderr
    assert "'extra_body': expected a JSON object" in done.stderr, done.stderr


def test_a_plain_value_is_still_quoted() -> None:
    """What holds no credential is shown, so the user sees what they typed wrong."""
    assert given("abc") == "'abc'" and given(3.5) == "3.5" and given("chat2") == "'chat2'"
    assert given({"a": 1}) == "a JSON object (not shown: it may hold a credential)"
    assert given("http://alice:pw@host/v1") == "text of 23 characters (not shown: it may hold a credential)"
    assert given("my-api_key-here") == "text of 15 characters (not shown: it may hold a credential)"
