"""Progress: one kind, on stderr, shown only when the caller asks (the CLI: unless ``-q``).

On a terminal it is a tqdm bar (imported when one is shown). Anywhere else (a log file, CI, a
pipe) a bar would fill the log with carriage returns, so the same calls write one log line every
``$CONFLICTSCORE_PROGRESS_S`` seconds (default 30) instead: count, total, rate and ETA. A disabled
bar is a no-op object, so long work reports progress the same way whether anyone watches.
Messages (warnings, notes) never go through a bar: they go to ``logging`` (see
:mod:`conflictscore_local.cli`)."""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, Callable

log = logging.getLogger(__name__)

INTERVAL_ENV = "CONFLICTSCORE_PROGRESS_S"
DEFAULT_INTERVAL_S = 30.0


class NoBar:
    """A progress bar that shows nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "NoBar":
        return self

    def __exit__(self, *_: Any) -> None:
        pass


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class LogBar(NoBar):
    """Progress without a terminal: a log line (``INFO``) at most every ``interval_s`` seconds."""

    def __init__(self, total: int | None, unit: str, desc: str | None = None, *, interval_s: float | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.unit, self.desc = total, unit, desc or unit
        self.interval_s = interval_s if interval_s is not None else _interval()
        self.clock, self.n = clock, 0
        self.start = self.last = clock()
        self.logged = False

    def line(self) -> str:
        elapsed = self.clock() - self.start
        rate = self.n / elapsed if elapsed > 0 else 0.0
        done = f"{self.n}/{self.total} {self.unit}" if self.total else f"{self.n} {self.unit}"
        text = f"{self.desc}: {done}"
        if self.total:
            text += f" ({self.n / self.total:.0%})"
        text += f", {rate:.3g} {self.unit}/s"
        if self.total and rate > 0 and self.n < self.total:
            text += f", ETA {_duration((self.total - self.n) / rate)}"
        return text + f", {_duration(elapsed)} so far"

    def update(self, n: int = 1) -> None:
        self.n += n
        now = self.clock()
        if now - self.last >= self.interval_s:
            self.last, self.logged = now, True
            log.info(self.line())

    def close(self) -> None:
        if self.logged:  # a long piece of work: say that it ended
            log.info(self.line().replace(" so far", ""))
            self.logged = False


def _interval() -> float:
    try:
        value = float(os.environ.get(INTERVAL_ENV, DEFAULT_INTERVAL_S))
    except ValueError:
        return DEFAULT_INTERVAL_S
    return value if value > 0 else DEFAULT_INTERVAL_S


def bar(total: int | None, unit: str, *, enabled: bool, desc: str | None = None, **tqdm_args: Any) -> Any:
    """A tqdm bar on stderr counting ``unit`` up to ``total`` when stderr is a terminal, a
    :class:`LogBar` when it is not, and a :class:`NoBar` unless ``enabled``."""
    if not enabled:
        return NoBar()
    if not sys.stderr.isatty():
        return LogBar(total, unit, desc)
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc or unit, file=sys.stderr, dynamic_ncols=True, leave=False,
                **tqdm_args)
