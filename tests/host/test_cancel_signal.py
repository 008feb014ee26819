"""`CancelSignal`: a `threading.Event` in every behaviour, and the one seam into its layout."""

from __future__ import annotations

import threading

from strands_middleware.host._cancel_signal import CancelSignal


def test_threading_event_is_laid_out_as_the_signal_assumes() -> None:
    # The seam: CancelSignal sets what Event.__init__ sets. A change here in CPython must
    # fail this test rather than leave the signal half made.
    event = threading.Event()
    assert set(vars(event)) == {"_cond", "_flag"}
    assert isinstance(event._cond, threading.Condition)  # pyright: ignore[reportPrivateUsage]
    assert event._flag is False  # pyright: ignore[reportPrivateUsage]
    assert set(vars(CancelSignal())) == set(vars(event))


def test_a_signal_is_an_event_set_cleared_and_waited_on() -> None:
    signal = CancelSignal()
    assert isinstance(signal, threading.Event)
    assert not signal.is_set()
    assert signal.wait(timeout=0.01) is False
    signal.set()
    assert signal.is_set() and signal.wait(timeout=0) is True
    signal.clear()
    assert not signal.is_set()


def test_a_signal_set_in_one_thread_wakes_a_waiter_in_another() -> None:
    signal = CancelSignal()
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(signal.wait(timeout=5)))
    waiter.start()
    signal.set()
    waiter.join(timeout=5)
    assert woke == [True]
