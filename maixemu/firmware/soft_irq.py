"""MicroPython's scheduler on the board: IRQ callbacks run at the device's soft-IRQ points.

On the K210 an interrupt (a timer channel expiring, a GPIOHS edge, the watchdog's first timeout)
never runs Python code itself: its ISR calls ``mp_sched_schedule(callback, obj)`` and the VM runs the
callback at its next pending check, between two bytecodes of the script. maixemu has no bytecode
loop, so the soft-IRQ points are the firmware calls a script makes in its loops — the
:meth:`~maixemu.firmware.state.BoardState.checkpoint` of ``snapshot()``, ``lcd.display()``, every
sleep, ``ticks_ms()``, ``print`` on the IDE page. One :class:`SoftIrq` per board
(``current().irq``) holds

* the **schedule queue** (``MICROPY_SCHEDULER_DEPTH`` = 8 in MaixPy's ``mpconfigport.h``; a full
  queue drops the callback as the ISR does, ``micropython.schedule`` raises
  ``RuntimeError: schedule queue full``), and
* the **alarms**: hardware that expires on the board clock (``machine.Timer`` channels, ``WDT``),
  polled at every soft-IRQ point and by the sleeps, which wake at the next alarm. With a virtual
  clock a sleep is cut at every alarm, so a 1 ms periodic timer fires exactly 1000 times in a
  ``time.sleep(1)`` and tests stay fast.

Callbacks run as ``mp_call_function_1_protected`` runs them: an exception inside one is printed as
a traceback on the console and the script goes on; the run's end (``RunEnded``, a reset) passes.
While a callback runs the scheduler is locked (no other callback starts inside it).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

#: ``MICROPY_SCHEDULER_DEPTH`` of MaixPy's port
DEPTH = 8


class Alarm(Protocol):
    """Hardware that expires on the board clock (a timer channel, a watchdog)."""

    #: board-clock nanoseconds of the next expiry (None: not running)
    deadline_ns: int | None

    def _expire(self, now_ns: int) -> None:
        """The deadline passed: schedule what the ISR schedules (may raise a reset), set the next one."""


class SoftIrq:
    """The schedule queue and the alarms of one board (see the module docstring)."""

    def __init__(self, now_ns: Callable[[], int]):
        self._now_ns = now_ns
        self._queue: deque[tuple[Callable[[Any], Any], Any]] = deque()
        self._lock = threading.Lock()
        self._locked = threading.Lock()  # held while callbacks run (MP_SCHED_LOCKED)
        self.alarms: list[Alarm] = []
        #: callbacks dropped because the queue was full (the ISR's silent loss, counted for tests)
        self.dropped = 0
        #: callbacks run so far
        self.delivered = 0
        #: ``printer(exc)`` for an exception raised inside a callback (set by the board: its console)
        self.report: Callable[[BaseException], None] | None = None

    # -- the queue ---------------------------------------------------------------------------
    def schedule(self, func: Callable[[Any], Any], arg: Any) -> bool:
        """``mp_sched_schedule``: queue ``func(arg)`` for the next soft-IRQ point; False when full."""
        with self._lock:
            if len(self._queue) >= DEPTH:
                self.dropped += 1
                return False
            self._queue.append((func, arg))
            return True

    def pending(self) -> int:
        return len(self._queue)

    # -- alarms ------------------------------------------------------------------------------
    def add_alarm(self, alarm: Alarm) -> None:
        with self._lock:
            if alarm not in self.alarms:
                self.alarms.append(alarm)

    def remove_alarm(self, alarm: Alarm) -> None:
        with self._lock:
            if alarm in self.alarms:
                self.alarms.remove(alarm)

    def next_due_ns(self) -> int | None:
        """The earliest alarm deadline on the board clock (None: no alarm is running)."""
        deadlines = [a.deadline_ns for a in list(self.alarms) if a.deadline_ns is not None]
        return min(deadlines) if deadlines else None

    def poll_alarms(self) -> None:
        """Let every alarm whose deadline has passed expire (in deadline order)."""
        if not self.alarms:
            return
        now = self._now_ns()
        while True:
            due = [(a.deadline_ns, a) for a in list(self.alarms) if a.deadline_ns is not None and a.deadline_ns <= now]
            if not due:
                return
            first = min(due, key=lambda d: d[0])[1]
            first._expire(now)

    # -- the soft-IRQ point ------------------------------------------------------------------
    def run_pending(self) -> None:
        """Expire due alarms, then run the queued callbacks (unless one is running already)."""
        self.poll_alarms()
        if not self._queue or not self._locked.acquire(blocking=False):
            return
        try:
            while True:
                with self._lock:
                    if not self._queue:
                        return
                    func, arg = self._queue.popleft()
                self.delivered += 1
                try:
                    func(arg)
                except Exception as exc:  # noqa: BLE001 - mp_call_function_1_protected prints and goes on
                    if self.report is not None:
                        self.report(exc)
        finally:
            self._locked.release()


__all__ = ["Alarm", "DEPTH", "SoftIrq"]
