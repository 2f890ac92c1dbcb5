"""Ctrl-C held off across a few statements that belong together: a row and its digest (and the count of rows
written), a count of judgments and the cache commit holding them. A Ctrl-C (SIGINT) that arrives inside
:func:`ctrl_c_held` is raised as :class:`KeyboardInterrupt` when the block ends, so what the run says it kept is
what is on disk; a second one is raised at once, so a write stuck on a full pipe still stops (the counts may then
be a row or a call off). A signal Python does not handle (``kill``, ``kill -9``, a closed terminal) cannot be
held: the resumable writer checks each row against its digest."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from types import FrameType
from typing import Iterator


@contextmanager
def ctrl_c_held() -> Iterator[None]:
    """Run the block whole: a Ctrl-C inside it raises :class:`KeyboardInterrupt` at its end, not midway; a second
    Ctrl-C inside it raises at once (the user insists: a write that blocks must not keep the run from stopping).

    Only Python's own Ctrl-C handler is held, and only in the main thread (where Python runs signal handlers):
    elsewhere, or under a handler of the caller's (or inside another held block, whose handler takes it), the
    block runs as it is. An error raised by the block goes on as it is; the held Ctrl-C is then not raised."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        held.append(signum)
        if len(held) > 1:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        raised: BaseException | None = None
        while signal.getsignal(signal.SIGINT) is not previous:
            try:
                signal.signal(signal.SIGINT, previous)
            except BaseException as e:  # a pending signal's handler ran first and raised: change it again
                raised = raised or e
        if raised is not None:
            raise raised
    if held:
        raise KeyboardInterrupt
