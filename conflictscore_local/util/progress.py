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

    def __init__(
        self,
        total: int | None,
        unit: str,
        desc: str | None = None,
        *,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
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

    return tqdm(
        total=total, unit=unit, desc=desc or unit, file=sys.stderr, dynamic_ncols=True, leave=False, **tqdm_args
    )


class RunProgress:
    """The one progress display of a scoring run: items written of the items to score, claim × document
    pairs decided of those known so far (the summary's ``pairs``: its ``total`` at the end), and one ETA, from
    the judging rate (the cost that dominates): the passage pairs left to judge over the passage pairs judged
    per second since the first batch came back (a model's load is not in the rate). Pairs decided without the
    judge (cache, pruner, given labels) count at once; a judge call's pairs as its passages come back, exactly
    when the call ends. A run of several steps (``engine.step_items``) expects the items of the steps not yet
    split to need the judging of those so far.

    On a terminal, one tqdm line; elsewhere a log line every ``$CONFLICTSCORE_PROGRESS_S`` seconds (as
    :class:`LogBar`); nothing unless ``enabled``. ``clock``: seconds (tests move it by hand)."""

    def __init__(
        self,
        items: int | None,
        *,
        enabled: bool,
        desc: str = "scoring",
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        tty: bool | None = None,
    ) -> None:
        self.enabled, self.desc, self.clock = enabled, desc, clock
        self.items_total, self.items_done = items, 0
        self.pairs_total, self.pairs_done = 0, 0
        self.items_known = 0  # items whose pairs are counted in pairs_total (split so far)
        self.to_judge, self.judged = 0, 0  # passage pairs
        self._call: tuple[int, int, int] | None = None  # (pairs, passages, passages judged) of the call running
        self._first: tuple[float, int] | None = None  # when the first batch came back, and the count then
        self.start = self.last = clock()
        self.interval_s = interval_s if interval_s is not None else _interval()
        self.logged = False
        self._tqdm: Any = None
        if enabled and (sys.stderr.isatty() if tty is None else tty):
            from tqdm import tqdm

            self._tqdm = tqdm(
                total=0,
                desc=desc,
                unit="pairs",
                file=sys.stderr,
                dynamic_ncols=True,
                leave=False,
                bar_format="{desc}: {percentage:3.0f}%|{bar}| {postfix} [{elapsed}]",
            )

    # -- what the engine reports ------------------------------------------------------------
    def step(self, items: int, pairs: int, decided: int, to_judge: int) -> None:
        """A step split: ``items`` items holding ``pairs`` pairs, ``decided`` of them without the judge, the rest
        waiting on ``to_judge`` passage pairs."""
        self.items_known += items
        self.pairs_total += pairs
        self.pairs_done += decided
        self.to_judge += to_judge
        self._show()

    def call(self, pairs: int, passages: int) -> None:
        """A judge call starts: ``pairs`` pairs decided by its ``passages`` passage pairs."""
        self._call = (pairs, passages, 0)
        self._show()

    def passages(self, n: int = 1) -> None:
        """``n`` passage pairs judged (the judge's ``on_progress``)."""
        now = self.clock()
        if self._first is None:
            self._first = (now, self.judged + n)
        self.judged += n
        if self._call is not None:
            pairs, total, done = self._call
            self._call = (pairs, total, done + n)
        self._show()

    def call_done(self) -> None:
        """The judge call running returned: its pairs are decided."""
        if self._call is not None:
            self.pairs_done += self._call[0]
            self.judged += max(0, self._call[1] - self._call[2])  # a judge that reported fewer than it judged
            self._call = None
        self._show()

    def item(self, n: int = 1) -> None:
        self.items_done += n
        self._show()

    # -- what it shows ---------------------------------------------------------------------
    def shown_pairs(self) -> int:
        """Pairs decided, a running call's counted by the share of its passages judged (never all until it ends)."""
        if self._call is None:
            return self.pairs_done
        pairs, total, done = self._call
        return self.pairs_done + min(pairs - 1, pairs * done // total) if total and pairs else self.pairs_done

    def eta_s(self) -> float | None:
        """Seconds left by the judging rate, or None before it is known (or with nothing left to judge)."""
        if self._first is None:
            return None
        t0, n0 = self._first
        elapsed, judged = self.clock() - t0, self.judged - n0
        if elapsed <= 0 or judged <= 0:
            return None
        left: float = max(0, self.to_judge - self.judged)
        if self.items_total and self.items_known and self.items_known < self.items_total:
            left += self.to_judge * (self.items_total - self.items_known) / self.items_known  # steps not split yet
        return left / (judged / elapsed) if left else None

    def line(self) -> str:
        """``6/150 items, 174/1,098 pairs, ETA 54s`` (what the terminal line and the log line say)."""
        items = (
            f"{self.items_done}/{self.items_total} items"
            if self.items_total is not None
            else f"{self.items_done} items"
        )
        text = f"{items}, {self.shown_pairs():,}/{self.pairs_total:,} pairs"
        eta = self.eta_s()
        return text + (f", ETA {_duration(eta)}" if eta is not None else "")

    def _show(self) -> None:
        if not self.enabled:
            return
        if self._tqdm is not None:
            self._tqdm.total = self.pairs_total
            self._tqdm.n = self.shown_pairs()
            self._tqdm.set_postfix_str(self.line(), refresh=True)
            return
        now = self.clock()
        if now - self.last >= self.interval_s:
            self.last, self.logged = now, True
            log.info(f"{self.desc}: {self.line()}, {_duration(now - self.start)} so far")

    def close(self) -> None:
        if self._tqdm is not None:
            self._tqdm.close()
            self._tqdm = None
        elif self.enabled and self.logged:  # a long run: say that it ended
            log.info(f"{self.desc}: {self.line()}, {_duration(self.clock() - self.start)}")
            self.logged = False

    def __enter__(self) -> "RunProgress":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()
