"""Lock files: the sha256 and size of every file of a staged model, and what it was pulled as.

``models pull`` writes ``conflictscore-lock.json`` into the model folder; ``models verify``,
``bundle`` and ``unpack`` check the folder against it, offline. The lock's own digest
(``lock_sha256``: the source and the file table, canonical JSON) is what a run records to
say exactly which weights it used.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

from ...core.errors import ConfigError
from ...jobs import write_text_atomic
from ...util.progress import bar as progress_bar
from .manifest import Manifest

LOCK_FILE = "conflictscore-lock.json"
LOCK_FORMAT = 1
SKIPPED_DIRS = frozenset({".cache", "__pycache__"})
"""Folders that are never part of a model: huggingface_hub's download metadata, bytecode."""
_BLOCK = 1 << 23


def model_files(folder: Path) -> Iterator[str]:
    """The model's files under ``folder`` (POSIX paths, sorted), without the lock and skipped folders."""
    found = []
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for f in files:
            rel = (Path(root) / f).relative_to(folder).as_posix()
            if rel != LOCK_FILE:
                found.append(rel)
    yield from sorted(found)


def sha256_file(path: Path, progress: Any = None) -> str:
    """The sha256 of a file, read in 8 MiB blocks (``progress.update(n)`` after each when given)."""
    h = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(_BLOCK):
            h.update(block)
            if progress is not None:
                progress.update(len(block))
    return h.hexdigest()


def hash_files(
    folder: Path, names: list[str], *, progress: bool = False, what: str = "hashing"
) -> dict[str, dict[str, Any]]:
    """``{name: {"size": n, "sha256": h}}`` for the files ``names`` of ``folder``, with a byte progress bar."""
    total = sum((folder / n).stat().st_size for n in names)
    out: dict[str, dict[str, Any]] = {}
    with progress_bar(total, "B", enabled=progress, desc=what, unit_scale=True) as bar:
        for n in names:
            p = folder / n
            out[n] = {"size": p.stat().st_size, "sha256": sha256_file(p, bar)}
    return out


def lock_digest(lock: Mapping[str, Any]) -> str:
    """sha256 of the lock's identity (name, source, revision, files) as canonical JSON."""
    core = {k: lock[k] for k in ("name", "source", "revision", "files")}
    return hashlib.sha256(json.dumps(core, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def make_lock(folder: Path, manifest: Manifest, revision: str | None, *, progress: bool = False) -> dict[str, Any]:
    """The lock of ``folder`` as staged for ``manifest`` at ``revision`` (every file hashed)."""
    from ..._version import __version__

    files = hash_files(folder, list(model_files(folder)), progress=progress, what=f"hashing {manifest.name}")
    if not files:
        raise ConfigError(f"{folder}: no model files to lock")
    lock: dict[str, Any] = {
        "format": LOCK_FORMAT,
        "name": manifest.name,
        "source": manifest.source.ref(),
        "revision": revision,
        "files": files,
        "manifest": manifest.identity(),
        "labels": {"id2label": dict(manifest.labels.id2label), "map": dict(manifest.labels.map)}
        if manifest.labels
        else None,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "tool": f"conflictscore-local {__version__}",
    }
    lock["lock_sha256"] = lock_digest(lock)
    return lock


def write_lock(folder: Path, lock: Mapping[str, Any]) -> Path:
    """Write ``lock`` into ``folder`` atomically."""
    path = folder / LOCK_FILE
    write_text_atomic(path, json.dumps(lock, indent=2, sort_keys=True) + "\n", what="lock file")
    return path


def read_lock(folder: Path) -> dict[str, Any] | None:
    """The lock in ``folder``, or None when there is none; ``ConfigError`` when it cannot be read."""
    path = folder / LOCK_FILE
    if not path.is_file():
        return None
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the lock file: {e}") from None
    if not isinstance(lock, dict) or lock.get("format") != LOCK_FORMAT:
        raise ConfigError(f"{path}: not a lock file of format {LOCK_FORMAT}")
    missing = [k for k in ("name", "source", "revision", "files", "lock_sha256") if k not in lock]
    if missing or not isinstance(lock["files"], dict):
        raise ConfigError(f"{path}: lock file lacks {', '.join(missing) or 'a files table'}")
    for key in ("name", "source", "lock_sha256"):
        if not isinstance(lock[key], str):
            raise ConfigError(f"{path}: field '{key}': expected a string, got {lock[key]!r}")
    if lock["revision"] is not None and not isinstance(lock["revision"], str):
        raise ConfigError(f"{path}: field 'revision': expected a string or null, got {lock['revision']!r}")
    labels = lock.get("labels")
    if labels is not None and not (
        isinstance(labels, dict) and isinstance(labels.get("id2label"), dict) and isinstance(labels.get("map"), dict)
    ):
        raise ConfigError(
            f'{path}: field \'labels\': expected null or {{"id2label": {{...}}, "map": {{...}}}}, got {labels!r}'
        )
    for name, meta in lock["files"].items():
        if not (isinstance(meta, dict) and isinstance(meta.get("size"), int) and isinstance(meta.get("sha256"), str)):
            raise ConfigError(
                f'{path}: field \'files.{name}\': expected {{"size": bytes, "sha256": hex}}, got {meta!r}'
            )
    return lock
