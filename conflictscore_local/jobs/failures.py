"""What a command that failed says and exits with: one line, never a traceback, for what a user
can meet (bad input, a full disk, a closed pipe); a traceback is left for bugs alone.

| exit | what |
|---|---|
| 2 | a :class:`~..core.errors.ConflictScoreError` (bad input, configuration or destination), text that is not UTF-8 |
| 1 | an I/O failure (``OSError``, SQLite's: a full disk, a read error), :class:`~..core.errors.WriteFailed` |
| 141 | stdout closed by its reader (``| head``): 128 + SIGPIPE, as a Unix tool killed by it, and nothing said |
"""

from __future__ import annotations

import errno
import sqlite3

from ..core.errors import ConflictScoreError
from ..util.extras import EXTRA_OF, missing_extra  # noqa: F401  (EXTRA_OF: its old place, for one release)
from .redaction import scrub_text
from .target import os_reason

EXIT_BROKEN_PIPE = 128 + 13


def failure(e: BaseException) -> tuple[int, str | None] | None:
    """``(exit status, the line to show)`` for an exception a user can meet (``None`` as the line:
    say nothing), or ``None`` for one that is a bug."""
    if isinstance(e, ConflictScoreError):
        return e.exit_status, scrub_text(str(e))
    extra = missing_extra(e)
    if extra is not None:
        return 2, extra
    if isinstance(e, BrokenPipeError):
        return EXIT_BROKEN_PIPE, None
    if isinstance(e, UnicodeDecodeError):
        return 2, f"not UTF-8 text: {e.reason} at byte {e.start + 1}; every text input is UTF-8"
    if isinstance(e, MemoryError):
        return 1, "out of memory: use fewer items per step (--set engine.step_items=N) or a smaller batch"
    if isinstance(e, sqlite3.OperationalError) and _sqlite_io(e):
        return 1, (
            f"the judgment cache (SQLite): {scrub_text(str(e))} (a full disk, a file-size limit?); every row "
            "finished so far is kept: make room, then rerun the command (`score` with --resume)"
        )
    if isinstance(e, OSError):
        where = f"{e.filename}: " if e.filename else ""
        what = "no space left on device" if e.errno == errno.ENOSPC else os_reason(e)
        return 1, scrub_text(f"{where}{what}")
    return None


_SQLITE_IO = {
    5: "SQLITE_BUSY",
    6: "SQLITE_LOCKED",
    8: "SQLITE_READONLY",
    10: "SQLITE_IOERR",
    13: "SQLITE_FULL",
    14: "SQLITE_CANTOPEN",
}


def _sqlite_io(e: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused for the machine's sake (a full disk, an I/O error, a lock, a read-only
    file), not for a statement of ours (a bug: its traceback stays)."""
    code = getattr(e, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) in _SQLITE_IO
