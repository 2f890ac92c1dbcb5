"""JSONL output that is never half-written, has one writer at a time and can resume.

Rows go to ``OUTPUT.partial`` (flushed per row) under an exclusive ``flock``; the partial
file is renamed onto OUTPUT when the run finishes. A fingerprint of what decides the rows is
kept beside it (``OUTPUT.partial.meta.json``), so a resume that would mix results is refused.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Iterable, Mapping, Sequence

from ..errors import ConfigError, InputError, OutputBusy
from ..jsonl import json_type_name
from .atomic import dumps, fsync_dir, write_json_atomic
from .target import FILE_MODE, OutputTarget, file_mode, os_reason


def write_jsonl_atomic(path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]]) -> None:
    """Write JSONL through a temporary file and an atomic rename."""
    with ResumableJsonlWriter(path, resume=False) as w:
        for r in rows:
            w.write(r)


def _lock(path: Path, *, output: Path) -> IO[str]:
    """``path`` opened for writing (created if missing, not truncated) under an exclusive lock.

    :class:`OutputBusy` when another process holds it. The lock is ``flock``: it goes with
    the process, so a killed run leaves nothing stale behind.
    """
    import fcntl

    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        except OSError as e:
            raise ConfigError(f"output {output}: cannot create {path}: {os_reason(e)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputBusy(
                f"output {output} is being written by another run (it holds the lock on {path}); "
                "wait for that run to finish, or choose another -o"
            ) from None
        except OSError as e:
            os.close(fd)
            raise ConfigError(f"output {output}: cannot lock {path}: {os_reason(e)}") from None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                return os.fdopen(fd, "r+", encoding="utf-8")
        except FileNotFoundError:
            pass
        os.close(fd)  # a finishing run renamed it away between open and lock: take the new one


class ResumableJsonlWriter:
    """JSONL output that is never half-written, has one writer at a time and can resume.

    Rows go to ``OUTPUT.partial`` beside the real target (flushed per row); ``close()``
    renames it onto the target. The partial file is held under an exclusive lock from start
    to rename, so a second writer of the same OUTPUT is refused (:class:`OutputBusy`). After
    a crash the partial file holds every finished row; with ``resume=True`` those rows (minus
    a truncated last line) are read back as :attr:`done`, written to a new file beside the
    partial one and renamed over it, so a crash while resuming loses nothing (``resumed`` says
    whether there was a partial file; a finished OUTPUT is never resumed from).
    ``fingerprint`` (what decides the rows) is stored beside the partial file, and resuming
    with another one is refused; ``explain(old, new)`` says what differs. ``keep`` filters
    recovered rows. An OUTPUT that is a device, a FIFO or ``/dev/stdout`` is streamed to
    directly (no partial file, no lock, no resume).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        resume: bool = False,
        fingerprint: Mapping[str, Any] | None = None,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
        explain: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None = None,
    ):
        self.target = OutputTarget.of(path)
        self.path = self.target.path
        self.partial = self.target.sibling(".partial")
        self.meta_path = self.target.sibling(".partial.meta.json")
        self.done: list[dict[str, Any]] = []
        self.dropped = 0
        self.resumed = False
        self.closed = False
        if self.target.stream:
            if resume:
                raise ConfigError(
                    f"--resume: output {self.path} is not a regular file (a device, a pipe or a terminal), "
                    "so there is nothing to resume from; rerun without --resume"
                )
            self._fh: IO[str] = open(self.path, "a", encoding="utf-8")
            return
        self.target.real.parent.mkdir(parents=True, exist_ok=True)
        existed = self.partial.exists()
        self._fh = _lock(self.partial, output=self.path)
        try:
            if resume and existed:
                self.resumed = True
                rows = self._recover(fingerprint, explain)
                self.done = [r for r in rows if keep is None or keep(r)]
                self.dropped = len(rows) - len(self.done)
                self._rewrite(self.done)
            else:
                self._fh.truncate(0)
            if fingerprint is not None:
                write_json_atomic(self.meta_path, dict(fingerprint))
            else:
                self.meta_path.unlink(missing_ok=True)
        except BaseException:
            self._fh.close()
            raise

    def _recover(
        self,
        fingerprint: Mapping[str, Any] | None,
        explain: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None,
    ) -> list[dict[str, Any]]:
        if fingerprint is not None and self.meta_path.exists():
            try:
                old = json.loads(self.meta_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                raise ConfigError(f"--resume: cannot read {self.meta_path}: {e}; rerun without --resume") from None
            new = json.loads(json.dumps(dict(fingerprint)))
            if old != new:
                why = explain(old, new) if explain is not None else "it was written with another configuration"
                raise ConfigError(
                    f"--resume: refusing to continue {self.partial}: {why}; rerun with what the interrupted run "
                    "used, or without --resume to start over (the judgment cache keeps a fresh run cheap)"
                )
        rows: list[dict[str, Any]] = []
        self._fh.seek(0)
        for n, raw in enumerate(self._fh, 1):
            if not raw.endswith("\n"):
                break  # the line a crash cut off
            try:
                row = json.loads(raw)
            except (ValueError, RecursionError):
                break
            if not isinstance(row, dict):
                raise InputError(f"--resume: not a scored result (a JSON {json_type_name(row)})", path=str(self.partial),
                                 line=n)
            rows.append(row)
        return rows

    def _rewrite(self, rows: Sequence[Mapping[str, Any]]) -> None:
        """Write ``rows`` to a new locked file beside the partial one, then rename it over it."""
        import fcntl

        fd, tmp = tempfile.mkstemp(dir=self.partial.parent, prefix=f".{self.partial.name}.", suffix=".tmp")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            os.fchmod(fd, file_mode(self.partial))
            fh = os.fdopen(fd, "r+", encoding="utf-8")
        except BaseException:
            os.close(fd)
            Path(tmp).unlink(missing_ok=True)
            raise
        try:
            for row in rows:
                fh.write(dumps(row) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            os.replace(tmp, self.partial)
        except BaseException:
            fh.close()
            Path(tmp).unlink(missing_ok=True)
            raise
        self._fh.close()  # the old partial's lock: the new file already holds its own
        self._fh = fh

    def write(self, row: Mapping[str, Any]) -> None:
        self._fh.write(dumps(row) + "\n")
        self._fh.flush()

    def close(self) -> None:
        """Finish: fsync and rename the partial file onto the output's real target."""
        if self.closed:
            return
        self.closed = True
        fh = self._fh
        try:
            fh.flush()
            if not self.target.stream:
                os.fsync(fh.fileno())
                os.fchmod(fh.fileno(), file_mode(self.target.real))
                os.replace(self.partial, self.target.real)
                fsync_dir(self.target.real.parent)
                self.meta_path.unlink(missing_ok=True)
        finally:
            fh.close()

    def abort(self) -> None:
        """Stop without finishing: the partial file stays for ``--resume``."""
        if not self.closed:
            self._fh.close()
            self.closed = True

    def __enter__(self) -> "ResumableJsonlWriter":
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
