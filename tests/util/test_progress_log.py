"""Progress without a terminal: a log line every interval (count, total, rate, ETA), never a bar."""

from __future__ import annotations

import io
import logging

import pytest

from conflictscore_local.util import progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_line_every_interval_with_rate_and_eta(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    caplog.set_level(logging.INFO, logger="conflictscore_local.util.progress")
    bar = progress.LogBar(400, "pairs", interval_s=30, clock=clock)
    clock.now += 10
    bar.update(50)  # 10 s: under the interval, nothing said
    assert caplog.messages == []
    clock.now += 20
    bar.update(70)  # 30 s, 120 of 400: 4 pairs/s, 280 left → 70 s
    clock.now += 5
    bar.update(10)  # 5 s after the last line: nothing
    assert caplog.messages == ["pairs: 120/400 pairs (30%), 4 pairs/s, ETA 1m10s, 30s so far"]
    clock.now += 65
    bar.update(270)
    bar.close()
    assert caplog.messages[1:] == [
        "pairs: 400/400 pairs (100%), 4 pairs/s, 1m40s so far",
        "pairs: 400/400 pairs (100%), 4 pairs/s, 1m40s",
    ]


def test_short_work_says_nothing_and_no_total_shows_the_count(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    caplog.set_level(logging.INFO, logger="conflictscore_local.util.progress")
    quick = progress.LogBar(10, "items", interval_s=30, clock=clock)
    quick.update(10)
    quick.close()
    assert caplog.messages == []
    open_ended = progress.LogBar(None, "items", desc="generate", interval_s=1, clock=clock)
    clock.now += 2
    open_ended.update(3)
    assert caplog.messages == ["generate: 3 items, 1.5 items/s, 2s so far"]


def test_bar_is_a_log_bar_off_a_terminal_and_nothing_when_disabled(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr", io.StringIO())
    assert isinstance(progress.bar(5, "items", enabled=True), progress.LogBar)
    assert type(progress.bar(5, "items", enabled=False)) is progress.NoBar
    monkeypatch.setenv(progress.INTERVAL_ENV, "2.5")
    assert progress.bar(5, "items", enabled=True).interval_s == 2.5
    monkeypatch.setenv(progress.INTERVAL_ENV, "soon")
    assert progress.bar(5, "items", enabled=True).interval_s == progress.DEFAULT_INTERVAL_S
