"""Files that appear whole or not at all: written as ``OUTPUT.partial`` under its lock, fsynced,
renamed into place; what the program writes of its own through the one redaction point (:mod:`.redaction`),
the user's rows (``verbatim=True``) as they are."""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping

from ..core.errors import ConfigError, WriteFailed
from .locks import Hold, hold, release, remove_beside, spend
from .redaction import scrub, scrub_text
from .target import OutputTarget, file_mode, os_reason


def dumps(obj: Any, *, indent: int | None = None, verbatim: bool = False) -> str:
    """JSON as every output file holds it: UTF-8 text, never NaN or Infinity (not JSON), no secret this run
    holds; ``verbatim``: the user's data (rows, items), written as it is (see :mod:`.redaction`)."""
    return json.dumps(obj if verbatim else scrub(obj), ensure_ascii=False, allow_nan=False, indent=indent)


def write_stdout(text: str) -> None:
    """Write ``text`` whole to standard output, or raise ``BrokenPipeError`` when its reader went away
    (``| head``: the command's exit status 141). Under ``PYTHONUNBUFFERED`` (CI images set it),
    ``sys.stdout`` writes straight to the raw file, which takes part of a large text and drops the rest
    without a word when the reader closes midway; so the bytes go out in a loop until all are taken."""
    import sys

    sys.stdout.flush()
    out = sys.stdout.buffer
    view = memoryview(text.encode("utf-8", "replace"))
    while view:
        n = out.write(view)
        view = view[n if n is not None else 0 :]
    out.flush()


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
        text = json.dumps(scrub(obj), ensure_ascii=True, allow_nan=False, indent=2) + "\n"
    write_text_atomic(path, text, what=what)


def write_text_atomic(path: str | os.PathLike[str], text: str, *, what: str = "file", verbatim: bool = False) -> int:
    """Write UTF-8 text (redacted, unless ``verbatim``: the user's rows, a table of them) whole: into
    ``OUTPUT.partial`` under its lock, renamed into place; returns its size in bytes.

    A symlink is written through to its target; a device or FIFO is written to directly.
    The file gets :func:`file_mode` (0666 less the umask, or the mode of the file it replaces).
    A failed write (:class:`WriteFailed`, exit status 1) leaves the old file as it was.
    """
    text = text if verbatim else scrub_text(text)
    write_lines_atomic(path, [text], what=what)
    return len(text.encode("utf-8", "surrogatepass"))  # a lone surrogate is written as U+FFFD: 3 bytes too


def write_jsonl_atomic(
    path: str | os.PathLike[str], rows: Iterable[Mapping[str, Any]], *, what: str = "output", verbatim: bool = False
) -> None:
    """Write JSON Lines whole (one :func:`dumps` row a line), as :func:`write_text_atomic` writes text."""
    write_lines_atomic(path, (dumps(r, verbatim=verbatim) + "\n" for r in rows), what=what)


def write_lines_atomic(path: str | os.PathLike[str], chunks: Iterable[str], *, what: str = "file") -> None:
    """Write ``chunks`` (already redacted) one after the other as one file that appears whole.
    Text that is not Unicode (a file name or a flag given in bytes that are not UTF-8, which
    Python holds as lone surrogates) is written with U+FFFD in their place."""
    target = OutputTarget.of(path, what=what)
    if target.stream:
        try:
            with open(target.path, "a", encoding="utf-8") as fh:
                for chunk in chunks:
                    _write(fh, chunk)
        except OSError as e:
            raise WriteFailed(f"cannot write {what} {target.path}: {os_reason(e)}") from None
        return
    with _partial(target, what) as h:
        for chunk in chunks:
            _write(h.fh, chunk)


_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_text(text: str) -> str:
    """``text`` with every lone surrogate (a byte of a file name or flag that is not UTF-8, as
    Python holds it) replaced by U+FFFD: text that UTF-8 can encode."""
    return _SURROGATE.sub("\ufffd", text)


def _write(fh: Any, chunk: str) -> None:
    try:
        fh.write(chunk)  # encoded whole before anything is written: a refusal writes nothing
    except UnicodeEncodeError:
        fh.write(unicode_text(chunk))


def write_binary_atomic(path: str | os.PathLike[str], write: Callable[[BinaryIO], None], *, what: str = "file") -> None:
    """A binary file (a tar) that appears whole: ``write(fileobj)`` fills ``OUTPUT.partial`` under
    its lock, which is then renamed into place; a failed write leaves the old file as it was."""
    target = OutputTarget.of(path, what=what)
    if target.stream:
        raise ConfigError(f"{what} {target.path} is not a regular file (a device, a pipe or a terminal); name a file")
    with _partial(target, what) as h:
        h.fh.flush()
        with open(h.fh.fileno(), "wb", closefd=False) as raw:
            write(raw)


@contextlib.contextmanager
def _partial(target: OutputTarget, what: str) -> Iterator[Hold]:
    """``OUTPUT.partial`` locked and emptied for the block to fill, then committed onto the target;
    an ``OSError`` on the way is :class:`WriteFailed`, the target as it was."""
    try:
        target.real.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"{what} {target.path}: cannot create {target.real.parent}: {os_reason(e)}") from None
    h = hold(target.sibling(".partial"), output=target.path)
    try:
        refuse_resume_state(h, target.path)
        try:
            h.fh.seek(0)
            h.fh.truncate()
            yield h
            commit(h, target)
        except OSError as e:
            try:
                h.fh.truncate(0)
            except OSError:
                pass
            raise WriteFailed(
                f"cannot write {what} {target.path}: {os_reason(e)}; "
                f"{'the file there is as it was' if target.real.exists() else 'nothing was written'}"
            ) from None
    finally:
        release(h)


def commit(h: Hold, target: OutputTarget) -> None:
    """Make ``h``'s partial file the target: flush, fsync, its mode, rename, fsync the folder."""
    h.fh.flush()
    os.fsync(h.fh.fileno())
    os.fchmod(h.fh.fileno(), file_mode(target.real))
    os.replace(h.path, target.real)
    spend(h)
    fsync_dir(target.real.parent)
    remove_beside(h.path)


def refuse_resume_state(h: Hold, output: Path) -> None:
    """:class:`ConfigError` when ``h``'s partial file holds the rows of an interrupted resumable
    run (it has a ``.meta.json`` beside it and is not empty): rewriting it would lose them."""
    meta = h.path.with_name(h.path.name + ".meta.json")
    if not h.created and meta.exists() and os.fstat(h.fh.fileno()).st_size > 0:
        raise ConfigError(
            f"{h.path} holds the rows of an interrupted run writing {output}: finish that run "
            f"with --resume, or delete {h.path} and {meta.name} to start over"
        )
