"""Where a write really goes (:class:`OutputTarget`: a symlink followed, a device streamed to), with
which mode, and whether it can happen: checked before a run starts."""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import ConfigError

FILE_MODE = 0o666
"""Every file this package writes (OUTPUT, its ``.partial`` and ``.partial.meta.json``, the
summary, the judgment cache) is created with this mode less the process umask, as the shell
creates files (0644 under the usual umask 022); a file that is replaced keeps its mode."""


def _umask() -> int:
    try:  # Linux says it without changing it (os.umask would, for every thread at once)
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def file_mode(replacing: Path | None = None) -> int:
    """The mode of a file written to ``replacing``: its current one, else :data:`FILE_MODE` less the umask."""
    if replacing is not None:
        try:
            st = os.stat(replacing)
            if stat.S_ISREG(st.st_mode):
                return stat.S_IMODE(st.st_mode)
        except OSError:
            pass
    return FILE_MODE & ~_umask()


@dataclass(frozen=True)
class OutputTarget:
    """Where writing to a path really goes.

    ``real`` is the file the bytes land in: a symlink is followed, so it keeps pointing at
    its target and the target gets the new content. ``stream`` marks an existing file that is
    not a regular one (a device such as ``/dev/null``, a FIFO, ``/dev/stdout``): it is
    written to directly, never renamed onto or replaced, and cannot be resumed.
    """

    path: Path
    real: Path
    stream: bool

    @classmethod
    def of(cls, path: str | os.PathLike[str], *, what: str = "output") -> "OutputTarget":
        """The target of ``path``; :class:`ConfigError` when it names a directory or cannot be a file."""
        p = Path(path)
        if _is_fd_alias(p):
            return cls(p, p, True)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise ConfigError(f"{what} {p}: {os_reason(e)}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise ConfigError(f"{what} {p} is a directory; name a file")
        if st is not None and not stat.S_ISREG(st.st_mode):
            return cls(p, p, True)
        return cls(p, Path(os.path.realpath(p)), False)

    def sibling(self, suffix: str) -> Path:
        """A file beside the real target: ``OUTPUT.partial``, ``OUTPUT.partial.meta.json``."""
        return self.real.with_name(self.real.name + suffix)

    def check_writable(self, *, what: str = "output") -> None:
        """:class:`ConfigError` unless the file can be created (or replaced) where it goes.

        Checked before a run starts, so a summary that cannot be written is known before
        hours of scoring, not after. Creates nothing that stays.
        """
        if self.stream:
            if not os.access(self.path, os.W_OK):
                raise ConfigError(f"{what} {self.path}: not writable")
            return
        if self.real.exists() and not os.access(self.real, os.W_OK):
            raise ConfigError(f"{what} {self.path}: the file is read-only")
        folder = self.real.parent
        while not folder.exists():
            folder = folder.parent
        if not folder.is_dir():
            raise ConfigError(f"{what} {self.path}: {folder} is not a directory")
        if folder != self.real.parent:
            if not os.access(folder, os.W_OK | os.X_OK):
                raise ConfigError(f"{what} {self.path}: cannot create folders in {folder}")
            return
        try:
            fd, probe = tempfile.mkstemp(dir=folder, prefix=f".{self.real.name}.", suffix=".probe")
            os.close(fd)
            os.unlink(probe)
        except OSError as e:
            raise ConfigError(f"{what} {self.path}: cannot write in {folder}: {os_reason(e)}") from None


def _is_fd_alias(p: Path) -> bool:
    """``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``: names of an open file, streamed to."""
    names = (os.path.abspath(p), os.path.realpath(p))
    return any(n in ("/dev/stdout", "/dev/stderr") or n.startswith(("/dev/fd/", "/proc/")) for n in names)


def os_reason(e: OSError) -> str:
    """What an ``OSError`` says to a user: its ``strerror``, else its type."""
    return e.strerror or type(e).__name__


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (hard links and symlinks included; a missing file by its resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def read_regular(path: str | os.PathLike[str], *, what: str, way_out: str) -> str:
    """The UTF-8 text of ``path``, a state file the program reads of its own (a resume fingerprint, a
    runtime choice, a hash memo): opened without waiting, so a FIFO, a device or a socket in its place is
    :class:`ConfigError` naming ``what``, the file and ``way_out`` at once, never a read that waits forever
    for a writer. ``FileNotFoundError`` (and any other ``OSError``) is the caller's; text that is not UTF-8
    is ``UnicodeDecodeError``."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ConfigError(f"{what} {path} is not a regular file (a FIFO, a device or a socket); {way_out}")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    finally:
        os.close(fd)
    return data.decode("utf-8")
