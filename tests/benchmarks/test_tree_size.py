"""The checkout's tracked files stay under 40 MiB (issue 49: what travels to an air-gapped GPU box is at most
64 MiB, wheels and data included), measured by ``benchmarks/tools/tree_size.py`` as the GPU check measures it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_the_tracked_files_stay_under_40_mib() -> None:
    from benchmarks.tools import tree_size as tree

    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [n for n in listed.decode("utf-8", "surrogateescape").split("\0") if n]
    files = tree.git_files(ROOT)
    assert len(files) == len(names) and tree.size(files) == sum(
        (ROOT / n).lstat().st_size for n in names if (ROOT / n).is_symlink() or (ROOT / n).is_file()
    )
    assert tree.size(files) < tree.TRACKED_TARGET == 40 * 2**20, (
        f"tracked files are {tree.size(files) / 2**20:.2f} MiB; keep them under 40 MiB (docs/gpu.md)"
    )
