"""The board's time: the instant it booted, its RTC, where time comes from, and how the board waits.

Every firmware clock reads here — ``time.ticks_ms()``, ``machine.Timer``, the I2S DMA, ``video``'s
frame pacing — so one virtual clock (``board.part(ClockState).use(now_ns, sleep_ns)``, tests and
``maixemu.testing``) moves all of them. Waiting passes the board's soft-IRQ points: a sleep wakes at
the run's end and at the board's next alarm (timers, the watchdog), and a virtual sleep is cut at
every alarm so that timers fire at their own instants.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import Protocol

from .. import state as _state

#: Longest stretch a sleep goes without a soft-IRQ point (a window stays responsive at 50 Hz).
IDLE_SLICE_NS = 20_000_000


#: Milliseconds from power-on to ``main.py`` on MaixPy: ``_boot.py`` waits ``200 x sleep_ms(1)`` for
#: the IDE first. So a script's first ``ticks_ms()`` is never 0 (scripts divide by tick differences).
BOOT_TO_MAIN_MS = 200


class _Alarms(Protocol):
    """What a wait needs of the board's scheduler (``soft_irq.SoftIrq``): its next alarm."""

    def next_due_ns(self) -> int | None: ...


@_state.board_part("clock", make=lambda board: ClockState(board.powered_on_ns))
class ClockState:
    """The board's time: the boot instant, the RTC, and where time comes from.

    Ticks count from the board's power-on (its creation, :data:`BOOT_TO_MAIN_MS` before the script
    starts). A virtual clock (tests, ``maixemu.testing``) replaces both the time source and the
    waiting: :meth:`use`.
    """

    def __init__(self, powered_on_ns: int | None = None) -> None:
        started = _time.perf_counter_ns() if powered_on_ns is None else powered_on_ns
        self.boot_ns = started - BOOT_TO_MAIN_MS * 1_000_000
        self.rtc_base = 0  # RTC seconds since 2000 at the moment rtc_set_at (ns since boot)
        self.rtc_set_at = 0
        self._now: Callable[[], int] | None = None
        self._sleep: Callable[[int], None] | None = None

    def use(self, now_ns: Callable[[], int] | None = None, sleep_ns: Callable[[int], None] | None = None) -> None:
        """Install a virtual clock (``now_ns()`` since boot, ``sleep_ns(ns)``); no arguments: real time."""
        self._now, self._sleep = now_ns, sleep_ns

    @property
    def virtual(self) -> bool:
        """Time comes from a virtual clock (:meth:`use`)."""
        return self._now is not None

    def now_ns(self) -> int:
        return self._now() if self._now is not None else _time.perf_counter_ns() - self.boot_ns

    def sleep_ns(self, ns: int) -> None:
        if self._sleep is not None:
            self._sleep(ns)
        else:
            _real_sleep(ns)


def _clock(board: _state.BoardState) -> ClockState:
    return board.part(ClockState)


def _alarms(board: _state.BoardState) -> _Alarms | None:
    """The board's scheduler if a firmware call made one (no timer, no GPIO IRQ: none)."""
    alarms: _Alarms | None = board.__dict__.get("irq")
    return alarms


def _real_sleep(ns: int) -> None:
    """Wait ``ns``, passing a soft-IRQ point at least every 20 ms: the run's end wakes the sleep (it
    raises there), a window processes its events (ESC, the close button) and IRQ callbacks run."""
    board = _state.current()
    deadline = _time.perf_counter_ns() + max(ns, 0)
    while True:
        board.checkpoint()
        if board.events.idle and ns >= 1_000_000:  # pumping a window takes ~1 ms: not for µs sleeps
            board.events.fire(board.events.idle)
        left = deadline - _time.perf_counter_ns()
        if left <= 0:
            return
        board.run.wait(min(left, IDLE_SLICE_NS, _until_alarm_ns(board)) / 1e9)


def _until_alarm_ns(board: _state.BoardState) -> int:
    """Nanoseconds to the board's next alarm (a timer, the watchdog): a sleep wakes there to run it."""
    alarms = _alarms(board)
    due = None if alarms is None else alarms.next_due_ns()
    return IDLE_SLICE_NS if due is None else max(0, due - _clock(board).now_ns())


def now_ns() -> int:
    """Nanoseconds since the board's boot (its clock: real or virtual)."""
    return _clock(_state.current()).now_ns()


def sleep_ns(ns: int) -> None:
    """The script sleeps ``ns`` nanoseconds on the board's clock (the run's end interrupts it); the
    ``sleep`` event tells the frame budget that the script is idle."""
    board = _state.current()
    board.checkpoint()
    if board.events.sleep:
        board.events.fire(board.events.sleep, ns)
    _wait_on_clock(board, ns)


def hardware_wait_ns(ns: int) -> None:
    """Wait ``ns`` nanoseconds for the hardware (a DMA transfer, a video frame's time): the board's
    clock runs as in a sleep, but the script is busy, not sleeping (no ``sleep`` event: a WAV that
    plays for a second is not thirty idle frames of the frame budget)."""
    board = _state.current()
    board.checkpoint()
    _wait_on_clock(board, ns)


def _wait_on_clock(board: _state.BoardState, ns: int) -> None:
    """Let ``ns`` nanoseconds pass on ``board``'s clock, running alarms (timers) on the way."""
    clock = _clock(board)
    alarms = _alarms(board)
    if not clock.virtual or alarms is None:
        clock.sleep_ns(ns)  # real time: the sleep itself wakes at alarms
        return
    end = clock.now_ns() + max(ns, 0)
    while True:  # a virtual sleep is cut at every alarm, so timers fire at their own instants
        due = alarms.next_due_ns()
        now = clock.now_ns()
        if due is None or due > end:
            clock.sleep_ns(end - now)
            board.checkpoint()
            return
        clock.sleep_ns(max(0, due - now))
        if clock.now_ns() < due:  # a virtual clock that does not follow its sleeps: no cutting
            clock.sleep_ns(end - clock.now_ns())
            board.checkpoint()
            return
        board.checkpoint()


__all__ = ["BOOT_TO_MAIN_MS", "IDLE_SLICE_NS", "ClockState", "hardware_wait_ns", "now_ns", "sleep_ns"]
