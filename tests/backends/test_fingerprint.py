"""Checkpoint fingerprints (the judge cache keys' model part) come from content, never from
a folder's name; large weights fall back to file stats and say so."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from conflictscore_local.backends import checkpoints
from conflictscore_local.backends.checkpoints import model_fingerprint, tokenizer_fingerprint

COMMIT = "0123456789abcdef0123456789abcdef01234567"


def checkpoint(path: Path, weights: bytes = b"weights-1", config: str = '{"hidden_size": 8}') -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text(config)
    (path / "model.safetensors").write_bytes(weights)
    (path / "tokenizer.json").write_text('{"vocab": 1}')
    return path


def test_a_folder_named_like_a_snapshot_is_still_hashed(tmp_path: Path) -> None:
    # two different checkpoints copied to .../snapshots/<same name>: before, both were {"commit": name}
    a = checkpoint(tmp_path / "a" / "snapshots" / COMMIT, weights=b"weights-1")
    b = checkpoint(tmp_path / "b" / "snapshots" / COMMIT, weights=b"weights-2")
    assert model_fingerprint(a) != model_fingerprint(b)
    assert "commit" not in model_fingerprint(a)
    (b / "tokenizer.json").write_text('{"vocab": 2}')
    assert tokenizer_fingerprint(a) != tokenizer_fingerprint(b)


def test_config_json_is_part_of_the_fingerprint(tmp_path: Path) -> None:
    base = checkpoint(tmp_path / "base")
    same = checkpoint(tmp_path / "same")
    eps = checkpoint(tmp_path / "eps", config='{"hidden_size": 8, "layer_norm_eps": 1e-5}')
    assert model_fingerprint(base) == model_fingerprint(same)
    assert model_fingerprint(eps)["weights_sha256"] == model_fingerprint(base)["weights_sha256"]
    assert model_fingerprint(eps) != model_fingerprint(base)  # same weights, another computation
    (same / "generation_config.json").write_text('{"repetition_penalty": 1.3}')
    assert model_fingerprint(same) != model_fingerprint(base)


def hub_snapshot(root: Path, blob_of: dict[str, bytes]) -> Path:
    """A Hugging Face cache layout: snapshots/<commit>/<file> → ../../blobs/<sha256 of its bytes>."""
    blobs = root / "blobs"
    blobs.mkdir(parents=True, exist_ok=True)
    snap = root / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    for name, data in blob_of.items():
        digest = hashlib.sha256(data).hexdigest()
        (blobs / digest).write_bytes(data)
        (snap / name).symlink_to(Path("..") / ".." / "blobs" / digest)
    return snap


def test_large_weights_in_the_hub_cache_are_named_by_their_blobs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(checkpoints, "FULL_HASH_LIMIT", 4)
    a = hub_snapshot(tmp_path / "models--org--a", {"model.safetensors": b"weights-1", "config.json": b"{}"})
    b = hub_snapshot(tmp_path / "models--org--b", {"model.safetensors": b"weights-2", "config.json": b"{}"})
    fa, fb = model_fingerprint(a), model_fingerprint(b)
    assert set(fa) == {"weights_blobs_sha256", "config_sha256"} and "hash" not in fa
    assert fa != fb  # the blob names are the content hashes the hub computed
    again = hub_snapshot(tmp_path / "models--org--copy", {"model.safetensors": b"weights-1", "config.json": b"{}"})
    assert model_fingerprint(again) == fa


def test_skipped_hash_is_said_in_the_fingerprint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(checkpoints, "FULL_HASH_LIMIT", 4)
    path = checkpoint(tmp_path / "big")
    fp = model_fingerprint(path)
    assert fp["hash"] == (
        "skipped (9 bytes of weights > FULL_HASH_LIMIT 4): identified by path, file sizes and modification times"
    )
    assert fp["path"] == str(path) and "weights_sha256" not in fp
    copy = tmp_path / "copy"
    shutil.copytree(path, copy)
    assert model_fingerprint(copy) != fp  # another path: another key (no content to compare)
