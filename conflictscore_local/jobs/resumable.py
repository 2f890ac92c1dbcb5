"""JSONL output that is never half-written, has one writer at a time and can resume.

Rows go to ``OUTPUT.partial`` (flushed per row) under its exclusive lock (:mod:`.locks`); the
partial file is renamed onto OUTPUT when the run finishes. A fingerprint of what decides the
rows is kept beside it (``OUTPUT.partial.meta.json``), so a resume that would mix results is
refused, and so is one whose fingerprint is gone or damaged. Each row's digest goes to
``OUTPUT.partial.digests`` as it is written (a chain: each digest covers the fingerprint and
every row before it), so a resume keeps only the rows that are as they were written, in the
order they were written: a row duplicated, edited, swapped or cut since is written again.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Callable, Mapping, Sequence

from ..core.errors import ConfigError, InputError, WriteFailed
from ..util.interrupts import ctrl_c_held
from ..util.jsonl import json_type_name
from .atomic import commit, dumps, write_json_atomic
from .locks import close_quietly, hold, release
from .redaction import scrub
from .target import OutputTarget, file_mode, os_reason, read_regular

log = logging.getLogger(__name__)

STDOUT = "-"
"""An OUTPUT meaning standard output (``-o -``): rows streamed there, nothing to resume."""
DIGEST_HEX = 32
"""Hex digits kept of each row's chained SHA-256 (128 bits) in ``OUTPUT.partial.digests``."""


def _chain_start(stored: Mapping[str, Any]) -> bytes:
    """The digest the chain starts from: the stored fingerprint's, so rows of another fingerprint never match."""
    return hashlib.sha256(b"conflictscore rows\0" + json.dumps(stored, sort_keys=True).encode("utf-8")).digest()


def _chain(previous: bytes, line: str) -> bytes:
    return hashlib.sha256(previous + line.encode("utf-8", "surrogatepass")).digest()


class ResumableJsonlWriter:
    """JSONL output that is never half-written, has one writer at a time and can resume.

    Rows go to ``OUTPUT.partial`` beside the real target (flushed per row); ``close()``
    renames it onto the target. The partial file is held under an exclusive lock from start
    to rename, so a second writer of the same OUTPUT is refused (:class:`OutputBusy`). After
    a crash the partial file holds every finished row; with ``resume=True`` those rows (minus
    a truncated last line) are read back as :attr:`done`, written to a new file beside the
    partial one and renamed over it, so a crash while resuming loses nothing (``resumed`` says
    whether there was a partial file; a finished OUTPUT is never resumed from).
    ``fingerprint`` (what decides the rows) is stored beside the partial file; resuming with
    another one is refused, ``explain(old, new)`` saying what differs (and ``fresh`` what starting over
    costs), and so is resuming a
    partial file whose stored fingerprint is missing. ``keep`` filters recovered rows (those
    left out are :attr:`dropped_ids`). A write that fails (a full disk) is :class:`WriteFailed`
    and keeps the rows written so far. An OUTPUT that is a device, a FIFO or ``/dev/stdout``
    is streamed to directly (no partial file, no lock, no resume), and so is :data:`STDOUT` (``-``:
    ``sys.stdout``, flushed per row and left open). ``verbatim``: the rows are the user's data (items and
    their results), written as they are; else every secret the run holds is redacted in them.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        resume: bool = False,
        fingerprint: Mapping[str, Any] | None = None,
        keep: Callable[[Mapping[str, Any]], bool] | None = None,
        explain: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None = None,
        fresh: str = "the judgment cache keeps a fresh run cheap",
        verbatim: bool = False,
    ):
        self.target = OutputTarget.of(path)
        self.path = self.target.path
        self.partial = self.target.sibling(".partial")
        self.meta_path = self.target.sibling(".partial.meta.json")
        self.digests_path = self.target.sibling(".partial.digests")
        self.done: list[dict[str, Any]] = []
        self.redone = 0
        """How many rows of the interrupted run's partial file did not match their digests (written again)."""
        self._digests: IO[str] | None = None
        self._last = b""
        self.dropped_ids: list[Any] = []
        self.resumed = False
        self.closed = False
        self.written = 0
        self._resumable = fingerprint is not None
        self._fresh = fresh
        self._verbatim = verbatim
        self._stdout = str(path) == STDOUT
        if self._stdout:
            if resume:
                raise ConfigError(
                    "--resume: -o - writes the rows to stdout, which keeps nothing to resume from; "
                    "write -o OUT.jsonl to resume an interrupted run"
                )
            self._hold = None
            self._fh: IO[str] = sys.stdout
            return
        if self.target.stream:
            if resume:
                raise ConfigError(
                    f"--resume: output {self.path} is not a regular file (a device, a pipe or a terminal), "
                    "so there is nothing to resume from; rerun without --resume"
                )
            self._hold = None
            try:
                self._fh = open(self.path, "a", encoding="utf-8")
            except OSError as e:
                raise WriteFailed(f"cannot write output {self.path}: {os_reason(e)}") from None
            return
        try:
            self.target.real.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigError(f"output {self.path}: cannot create {self.target.real.parent}: {os_reason(e)}") from None
        self._hold = hold(self.partial, output=self.path)
        self._fh = self._hold.fh
        stored = json.loads(json.dumps(scrub(dict(fingerprint)))) if fingerprint is not None else None
        try:
            if resume and not self._hold.created:
                self.resumed = True
                rows = self._recover(stored, explain)
                self.done = [r for r in rows if keep is None or keep(r)]
                self.dropped_ids = [r.get("id") for r in rows if keep is not None and not keep(r)]
                self._rewrite(self.done, stored)
            else:
                self._fh.seek(0)
                self._fh.truncate(0)
                if stored is not None:
                    self._open_digests(stored, [])
            if fingerprint is not None:
                write_json_atomic(self.meta_path, dict(fingerprint), what="resume fingerprint")
            else:
                self.meta_path.unlink(missing_ok=True)
                self.digests_path.unlink(missing_ok=True)
        except BaseException:
            self.abort()
            raise

    @property
    def dropped(self) -> int:
        """How many recovered rows ``keep`` left out."""
        return len(self.dropped_ids)

    def _recover(
        self,
        stored: Mapping[str, Any] | None,
        explain: Callable[[Mapping[str, Any], Mapping[str, Any]], str] | None,
    ) -> list[dict[str, Any]]:
        """The rows of the partial file that are as they were written (their digests match), in order."""
        digests: list[str] | None = None
        if stored is not None:
            if not self.meta_path.exists():
                raise ConfigError(
                    f"--resume: refusing to continue {self.partial}: its fingerprint ({self.meta_path.name}, what "
                    "says which input, settings and models wrote its rows) is missing, so nothing shows they "
                    "match this run; rerun without --resume to start over (the judgment cache keeps it cheap)"
                )
            old = self._stored_fingerprint("format" in stored)
            if old != stored:
                why = explain(old, stored) if explain is not None else "it was written with another configuration"
                raise ConfigError(
                    f"--resume: refusing to continue {self.partial}: {why}; rerun with what the interrupted run "
                    f"used, or without --resume to start over ({self._fresh})"
                )
            digests = self._stored_digests()
        rows: list[dict[str, Any]] = []
        last = _chain_start(stored) if stored is not None else b""
        cut = None  # the line from which rows do not match their digests
        self._fh.seek(0)
        try:
            for n, raw in enumerate(self._fh, 1):
                if not raw.endswith("\n"):
                    break  # the line a crash cut off
                if digests is not None:
                    last = _chain(last, raw[:-1])
                    if n > len(digests) or digests[n - 1] != last.hex()[:DIGEST_HEX]:
                        cut = n
                        break
                try:
                    row = json.loads(raw)
                except (ValueError, RecursionError):
                    break
                if not isinstance(row, dict):
                    raise InputError(
                        f"--resume: not a scored result (a JSON {json_type_name(row)})", path=str(self.partial), line=n
                    )
                rows.append(row)
            if cut is not None:
                self.redone = 1 + sum(1 for raw in self._fh if raw.endswith("\n"))
        except UnicodeDecodeError as e:
            raise InputError(
                f"--resume: not UTF-8 text ({e.reason}); rerun without --resume", path=str(self.partial)
            ) from None
        if cut is not None and (cut <= len(digests or ()) or self.redone > 1):  # not just the row a crash left
            log.warning(
                f"--resume: {self.partial}: {self.redone} rows from line {cut} on do not match the digests "
                f"written with them ({self.digests_path.name}: edited, duplicated, moved or cut since); "
                f"the {len(rows)} rows before are kept, the rest are done again"
            )
        return rows

    def _stored_fingerprint(self, with_format: bool) -> dict[str, Any]:
        """The fingerprint stored beside the partial file; :class:`ConfigError` naming the file and the way
        out when it cannot be read or is not one (damaged: valid JSON but not an object, or no ``format``
        where fingerprints have one)."""
        try:
            old = json.loads(
                read_regular(
                    self.meta_path, what="--resume: the fingerprint", way_out="rerun without --resume to start over"
                )
            )
        except (OSError, ValueError) as e:
            raise ConfigError(f"--resume: cannot read {self.meta_path}: {e}; rerun without --resume") from None
        if not isinstance(old, dict) or (with_format and "format" not in old):
            got = f"a JSON {json_type_name(old)}" if not isinstance(old, dict) else "an object without 'format'"
            raise ConfigError(
                f"--resume: {self.meta_path} is damaged: {got}, not the fingerprint of a run, so "
                f"nothing shows the rows of {self.partial.name} match this run; rerun without "
                f"--resume to start over ({self._fresh})"
            )
        return old

    def _stored_digests(self) -> list[str]:
        """The rows' digests stored beside the partial file (one hex line a row); :class:`ConfigError` when gone."""
        try:
            text = read_regular(
                self.digests_path, what="--resume: the row digests", way_out="rerun without --resume to start over"
            )
            return [line for line in text.split("\n")[:-1]]
        except UnicodeDecodeError:
            return []  # damaged: no row matches, every row is done again
        except FileNotFoundError:
            raise ConfigError(
                f"--resume: refusing to continue {self.partial}: its rows' digests ({self.digests_path.name}) are "
                "missing (an earlier version wrote it, or it was deleted), so nothing shows its rows are as they "
                f"were written; rerun without --resume to start over ({self._fresh})"
            ) from None
        except OSError as e:
            raise ConfigError(
                f"--resume: cannot read {self.digests_path}: {os_reason(e)}; rerun without --resume"
            ) from None

    def _open_digests(self, stored: Mapping[str, Any], rows: Sequence[str]) -> None:
        """Start ``OUTPUT.partial.digests`` afresh with the digests of ``rows`` (the lines of the partial file)."""
        last = _chain_start(stored)
        lines = []
        for line in rows:
            last = _chain(last, line)
            lines.append(last.hex()[:DIGEST_HEX] + "\n")
        fd, tmp = tempfile.mkstemp(dir=self.partial.parent, prefix=f".{self.digests_path.name}.", suffix=".tmp")
        try:
            os.fchmod(fd, file_mode(self.digests_path))
            fh = os.fdopen(fd, "w", encoding="ascii")
            fh.writelines(lines)
            fh.flush()
            os.replace(tmp, self.digests_path)
        except OSError as e:
            Path(tmp).unlink(missing_ok=True)
            raise WriteFailed(f"cannot write {self.digests_path}: {os_reason(e)}") from None
        self._digests, self._last = fh, last

    def _rewrite(self, rows: Sequence[Mapping[str, Any]], stored: Mapping[str, Any] | None) -> None:
        """Write ``rows`` to a new locked file beside the partial one, then rename it over it (and their
        digests beside it)."""
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
            lines = [dumps(row, verbatim=self._verbatim) for row in rows]
            for line in lines:
                fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())
            if stored is not None:  # the digests first: a crash in between leaves rows that do not match, redone
                self._open_digests(stored, lines)
            os.replace(tmp, self.partial)
        except OSError as e:
            close_quietly(fh)
            Path(tmp).unlink(missing_ok=True)
            raise WriteFailed(
                f"--resume: cannot write {self.partial}: {os_reason(e)}; its rows are as they were, "
                "make room and rerun with --resume"
            ) from None
        except BaseException:
            close_quietly(fh)
            Path(tmp).unlink(missing_ok=True)
            raise
        close_quietly(self._fh)  # the old partial's lock: the new file already holds its own
        assert self._hold is not None
        self._hold.fh = self._fh = fh

    def write(self, row: Mapping[str, Any]) -> None:
        with ctrl_c_held():  # the row, its digest and the count together: a Ctrl-C in between is raised after
            try:
                line = dumps(row, verbatim=self._verbatim)
                self._fh.write(line + "\n")
                self._fh.flush()
                if self._digests is not None:  # after the row: a crash (kill -9) in between leaves one row without
                    self._last = _chain(self._last, line)
                    self._digests.write(self._last.hex()[:DIGEST_HEX] + "\n")
                    self._digests.flush()
            except BrokenPipeError:
                if self._stdout:
                    raise  # stdout closed by its reader (| head): the command's exit status 141
                raise WriteFailed(self._failed(BrokenPipeError())) from None
            except OSError as e:
                raise WriteFailed(self._failed(e)) from None
            self.written += 1

    def _failed(self, e: OSError) -> str:
        if self._hold is None:
            return f"cannot write output {self.path}: {os_reason(e)}"
        kept = len(self.done) + self.written
        then = "make room, then rerun the same command with --resume" if self._resumable else "make room and rerun"
        return f"cannot write {self.partial}: {os_reason(e)}; the {kept} rows written so far are kept there: {then}"

    def close(self) -> None:
        """Finish: fsync and rename the partial file onto the output's real target."""
        if self.closed:
            return
        self.closed = True
        if self._hold is None:
            try:
                self._fh.flush() if self._stdout else self._fh.close()
            except OSError as e:
                raise WriteFailed(self._failed(e)) from None
            return
        if self._digests is not None:
            close_quietly(self._digests)
        try:
            commit(self._hold, self.target)
        except OSError as e:
            raise WriteFailed(self._failed(e)) from None
        finally:
            release(self._hold)

    def abort(self) -> None:
        """Stop without finishing: the partial file stays for ``--resume``."""
        if self.closed:
            return
        self.closed = True
        if self._digests is not None:
            close_quietly(self._digests)
        if self._hold is None:
            if not self._stdout:
                close_quietly(self._fh)
        else:
            release(self._hold)

    def __enter__(self) -> "ResumableJsonlWriter":
        return self

    def __exit__(self, exc_type: Any, *_: Any) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
