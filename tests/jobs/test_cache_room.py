"""Issue 47 (review reliability-4: N-disk-cache, rerun of O-disk-cache): the judgment cache on a file system
without room is refused before any work (exit 2, one line with the advice), as every other destination is,
not found out after the model loaded and calibrated. The full file system is the job layer's view of it
(``shutil.disk_usage`` reporting 50 KiB free under the cache's folder only)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from conflictscore_local.jobs import job as job_module

from .test_hostile import cli, labelled


def test_a_cache_on_a_full_file_system_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    full = tmp_path / "full"
    full.mkdir()
    real = shutil.disk_usage

    def usage(path: Any) -> Any:
        got = real(path)
        if Path(path).resolve() == full.resolve():
            return type(got)(got.total, got.total - 50_000, 50_000)
        return got

    monkeypatch.setattr(job_module.shutil, "disk_usage", usage)
    inp = labelled(tmp_path / "in.jsonl")
    rc, _, err = cli(
        capsys, "score", str(inp), "-q", "-o", str(tmp_path / "o.jsonl"), "--cache", str(full / "c.sqlite")
    )
    assert rc == 2
    assert (
        f"judgment cache {full / 'c.sqlite'}: only 50000 bytes free on the file system of {full}, at least "
        "1.0 MiB needed; make room or choose another with --cache PATH"
    ) in err
    assert not (tmp_path / "o.jsonl").exists() and not (tmp_path / "o.jsonl.partial").exists()
    assert list(full.iterdir()) == []  # no c.sqlite, -wal, -shm nor runtime-choice.json left there
