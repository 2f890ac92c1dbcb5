"""One progress display for a scoring run, hand-computed: items and claim × document pairs (the summary's
vocabulary, never passage pairs), and one ETA from the judging rate measured after the first batch (a model's
load is not in it), including the steps not split yet."""

from __future__ import annotations

import logging

import pytest

from conflictscore_local.util.progress import RunProgress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pairs_and_one_eta_from_the_judging_rate(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    caplog.set_level(logging.INFO, logger="conflictscore_local.util.progress")
    bar = RunProgress(150, enabled=True, interval_s=30, clock=clock, tty=False)
    # step 1: 100 of the 150 items, 800 claim × document pairs; 160 known from the cache, the other 640 wait on
    # 1,000 passage pairs (long documents split in passages)
    bar.step(100, 800, 160, 1000)
    assert bar.line() == "0/150 items, 160/800 pairs"  # no ETA before a batch came back
    bar.call(40, 64)  # the first call: 40 pairs, 64 passage pairs
    clock.now += 20  # the model loads
    bar.passages(32)  # the first batch: the rate starts here
    assert bar.eta_s() is None and bar.shown_pairs() == 160 + 40 * 32 // 64
    clock.now += 4
    bar.passages(32)  # 32 passage pairs in 4 s: 8 per second
    bar.call_done()
    assert bar.line().startswith("0/150 items, 200/800 pairs")
    # left: 1000 - 64 = 936 passage pairs of this step, and 50 items not split yet at 1000 / 100 per item = 500
    assert bar.eta_s() == pytest.approx((936 + 500) / 8)
    bar.item(8)
    assert bar.line() == "8/150 items, 200/800 pairs, ETA 3m00s"  # 1436 / 8 = 179.5 s, rounded to 180 s
    clock.now += 10
    bar.call(600, 936)  # 34 s in: a log line; the rate is now 32 passage pairs in the 14 s since the first batch
    bar.passages(468)  # half the call's passage pairs: half its pairs, never all before it returns
    assert bar.shown_pairs() == 200 + 300
    bar.passages(468)
    assert bar.shown_pairs() == 200 + 599
    bar.call_done()
    assert bar.shown_pairs() == 800
    # a log line every 30 s, in the same words; the last one when the run ends
    # 1436 passage pairs left at 32 / 14 s: 628.25 s
    assert caplog.messages == ["scoring: 8/150 items, 200/800 pairs, ETA 10m28s, 34s so far"]
    bar.close()
    assert caplog.messages[-1] == "scoring: 8/150 items, 800/800 pairs, ETA 7s, 34s"  # 500 left at 968 / 14 s


def test_a_run_with_nothing_to_judge_counts_items_and_pairs_only() -> None:
    bar = RunProgress(2, enabled=False, clock=Clock())
    bar.step(2, 6, 6, 0)  # given labels: every pair decided at once
    bar.item(2)
    assert bar.line() == "2/2 items, 6/6 pairs" and bar.eta_s() is None
