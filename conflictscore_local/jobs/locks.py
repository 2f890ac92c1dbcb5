"""Exclusive locks on ``OUTPUT.partial``: one writer of an output at a time, across processes.

Every output file is written as ``OUTPUT.partial`` beside its real target and renamed onto it
when whole (:mod:`.atomic`, :mod:`.resumable`), and the partial file is held under an exclusive
``flock`` from the moment a job takes it to that rename. Another process asking for it is refused
(:class:`~..core.errors.OutputBusy`); the lock goes with the process, so a killed run leaves none
behind. Within one job a hold is shared (:func:`hold` counts its users): a job takes its outputs'
locks before any work (it is their *owner* while it runs, :func:`owner`) and its writers write
through the same holds; anyone else, in this process or another, is refused.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeGuard

from ..core.errors import ConfigError, OutputBusy
from .target import FILE_MODE, os_reason


@dataclass
class Hold:
    """This process's lock on one partial file: ``fh`` is the file, open for reading and writing.

    ``created``: the file did not exist before this process took it (so an empty one is removed
    when the hold is released unused). ``spent``: renamed onto its target; the lock went with it.
    """

    path: Path
    fh: IO[str]
    created: bool
    owner: Any = None
    users: int = 1
    spent: bool = False


_HELD: dict[Path, Hold] = {}

BESIDE_PARTIAL = (".meta.json", ".digests")
"""The files that belong to a partial file ``OUTPUT.partial``: its resume fingerprint and its rows' digests
(:mod:`.resumable`); they go when it goes."""


def remove_beside(partial: Path) -> None:
    """Remove the files that belong to ``partial`` (:data:`BESIDE_PARTIAL`)."""
    for suffix in BESIDE_PARTIAL:
        partial.with_name(partial.name + suffix).unlink(missing_ok=True)


_OWNER: ContextVar[Any] = ContextVar("conflictscore_job_owner", default=None)


def owner() -> ContextVar[Any]:
    """The job whose holds are shared in this context (``owner().set(job)``; None: no job)."""
    return _OWNER


def held(path: Path) -> Hold | None:
    """This process's hold on ``path``, if it has one."""
    h = _HELD.get(Path(os.path.realpath(path)))
    return h if h is not None and not h.spent else None


def _mine(h: Hold | None) -> TypeGuard[Hold]:
    return h is not None and h.owner is not None and h.owner is _OWNER.get()


def hold(path: Path, *, output: Path) -> Hold:
    """The exclusive lock on partial file ``path`` of ``output`` (created if missing, never truncated).

    :class:`OutputBusy` when anyone else holds it (another process, or in this one another
    job). Taken again within the job that holds it, the same hold is returned with one more user.
    """
    import fcntl

    key = Path(os.path.realpath(path))
    mine = held(key)
    if _mine(mine):
        mine.users += 1
        return mine
    while True:
        existed = key.exists()
        try:
            fd = os.open(key, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
        except OSError as e:
            raise ConfigError(f"output {output}: cannot create {path}: {os_reason(e)}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise OutputBusy(
                f"output {output} is being written by another run (it holds the lock on {path}); "
                "wait for that run to finish, or choose another path"
            ) from None
        except OSError as e:
            os.close(fd)
            raise ConfigError(f"output {output}: cannot lock {path}: {os_reason(e)}") from None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(key)):
                h = Hold(key, os.fdopen(fd, "r+", encoding="utf-8"), created=not existed, owner=_OWNER.get())
                _HELD[key] = h
                return h
        except FileNotFoundError:
            pass
        os.close(fd)  # a finishing run renamed it away between open and lock: take the new one


def spend(h: Hold) -> None:
    """``h``'s file was renamed onto its target: the hold ends with it (the file stays open for its owner)."""
    h.spent = True
    if _HELD.get(h.path) is h:
        del _HELD[h.path]


def release(h: Hold, *, remove_empty: bool = True) -> None:
    """One user less; the last one closes the file (removing it when this process created it and
    wrote nothing into it, with the files beside it)."""
    h.users -= 1
    if h.users > 0:
        return
    if not h.spent:
        if remove_empty and h.created and _empty(h):
            h.path.unlink(missing_ok=True)
            remove_beside(h.path)
        spend(h)
    close_quietly(h.fh)


def release_owned(job: Any) -> None:
    """Release every hold ``job`` still has (its writers' too): a job leaves no lock behind."""
    for h in [h for h in _HELD.values() if h.owner is job and not h.spent]:
        h.users = 1
        release(h)


def locked_elsewhere(path: Path) -> bool:
    """Whether anyone but this job holds the lock on ``path`` now (a run writing it)."""
    import fcntl

    h = held(path)
    if h is not None:
        return not _mine(h)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing the descriptor drops a lock taken here
    return False


def _empty(h: Hold) -> bool:
    try:
        return os.fstat(h.fh.fileno()).st_size == 0
    except (OSError, ValueError):
        return False


def close_quietly(fh: IO[str]) -> None:
    """Close ``fh``; a flush that fails again (the disk is still full) loses only what had failed already."""
    try:
        fh.close()  # the descriptor is closed even when the last flush fails
    except OSError:
        pass
