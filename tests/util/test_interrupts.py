"""``ctrl_c_held``: a Ctrl-C (a real SIGINT to this process, the ``ctrl_c`` fixture) inside the block is raised
when the block ends, with everything in the block done; a second one is raised at once; outside the main thread,
under a handler of the caller's, or nested, the block runs as it is."""

from __future__ import annotations

import signal
import threading
from typing import Any, Callable

import pytest

from conflictscore_local.util.interrupts import ctrl_c_held


def test_without_the_block_a_ctrl_c_stops_the_next_statement(ctrl_c: Callable[[], None]) -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        ctrl_c()
        done.append("after")
    assert done == []


def test_a_ctrl_c_in_the_block_is_raised_at_its_end_with_the_block_done(ctrl_c: Callable[[], None]) -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            ctrl_c()
            done.append("after")
        done.append("past the block")
    assert done == ["after"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_in_the_block_is_raised_at_once(ctrl_c: Callable[[], None]) -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            ctrl_c()
            done.append("after the first")
            ctrl_c()  # a write stuck on a full pipe: the user presses again
            done.append("after the second")
    assert done == ["after the first"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_without_a_ctrl_c_the_block_ends_as_usual_and_the_handler_is_back(ctrl_c: Callable[[], None]) -> None:
    with ctrl_c_held():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler  # held
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_an_error_in_the_block_goes_on_as_it_is(ctrl_c: Callable[[], None]) -> None:
    with pytest.raises(ValueError, match="boom"):
        with ctrl_c_held():
            ctrl_c()
            raise ValueError("boom")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_block_inside_a_held_block_runs_as_it_is_and_the_outer_one_raises(ctrl_c: Callable[[], None]) -> None:
    done: list[str] = []
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            with ctrl_c_held():
                ctrl_c()
                done.append("inner")
            done.append("outer")
    assert done == ["inner", "outer"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_handler_of_the_callers_is_left_to_do_its_work(ctrl_c: Callable[[], None]) -> None:
    seen: list[int] = []

    def mine(signum: int, frame: Any) -> None:
        seen.append(signum)

    signal.signal(signal.SIGINT, mine)
    try:
        with ctrl_c_held():
            assert signal.getsignal(signal.SIGINT) is mine
            ctrl_c()
    except KeyboardInterrupt:
        pytest.fail("the block held (or raised) a Ctrl-C that the caller's handler was installed to take")
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    assert seen == [signal.SIGINT]


def test_outside_the_main_thread_the_handler_is_not_touched(ctrl_c: Callable[[], None]) -> None:
    inside: list[Any] = []

    def work() -> None:
        with ctrl_c_held():
            inside.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert inside == [signal.default_int_handler]


def test_a_pending_ctrl_c_that_raises_as_the_handler_is_put_back_leaves_no_hold_behind(
    ctrl_c: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python runs a pending signal's handler before it changes a handler: a second Ctrl-C pending at the end of
    the block raises from the restore itself, and the restore is made again (else the hold would stay installed and
    swallow every later Ctrl-C)."""
    from conflictscore_local.util import interrupts

    calls: list[Any] = []

    class PendingAtTheRestore:
        def __getattr__(self, name: str) -> Any:
            return getattr(signal, name)

        def signal(self, signum: int, handler: Any) -> Any:
            calls.append(handler)
            if len(calls) == 2:  # the first restore: the pending Ctrl-C's handler runs first, and raises
                raise KeyboardInterrupt
            return signal.signal(signum, handler)

    monkeypatch.setattr(interrupts, "signal", PendingAtTheRestore())
    with pytest.raises(KeyboardInterrupt):
        with ctrl_c_held():
            pass
    assert calls[1:] == [signal.default_int_handler, signal.default_int_handler]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
