"""Files that appear whole or not at all: written beside their target, fsynced, renamed into place."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from .target import OutputTarget, file_mode


def dumps(obj: Any, *, indent: int | None = None) -> str:
    """JSON as every output file holds it: UTF-8 text, and never NaN or Infinity (not JSON)."""
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=indent)


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_json_atomic(path: str | os.PathLike[str], obj: Any, *, what: str = "file") -> None:
    """Write JSON (indented, UTF-8, never NaN) atomically: see :func:`write_text_atomic`."""
    text = dumps(obj, indent=2) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a path given in bytes that are not UTF-8: kept as its \u escape
        text = json.dumps(obj, ensure_ascii=True, allow_nan=False, indent=2) + "\n"
    write_text_atomic(path, text, what=what)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, what: str = "file") -> None:
    """Write UTF-8 text to a temporary file beside ``path`` and rename it into place.

    A symlink is written through to its target; a device or FIFO is written to directly.
    The file gets :func:`file_mode` (0666 less the umask, or the mode of the file it replaces).
    """
    target = OutputTarget.of(path, what=what)
    if target.stream:
        with open(target.path, "a", encoding="utf-8") as fh:
            fh.write(text)
        return
    target.real.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.real.parent, prefix=f".{target.real.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, file_mode(target.real))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target.real)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
