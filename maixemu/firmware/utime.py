"""MaixPy ``time``/``utime``: MicroPython ticks, the board's RTC (epoch 2000) and OpenMV's ``clock``.

Device semantics (maixpy-api.md §5, firmware ``modutime.c``):

* ``ticks_ms/us/cpu`` count from "boot": the power-on of the board (:class:`ClockState`).
  The K210 port is 64-bit, so MicroPython's ticks period is the small-int range, ``2**62``:
  ``ticks_*`` are masked to ``TICKS_PERIOD - 1`` and ``ticks_diff``/``ticks_add`` wrap with that
  period (in practice they never wrap, but the arithmetic is the device's).
* ``time()`` is the RTC in whole seconds since 2000-01-01; an unset RTC starts at 0 at boot (the
  MaixPy demo prints ``74`` a minute after boot). ``set_time`` sets it; it keeps ticking.
* ``localtime(secs)`` / ``mktime`` use epoch 2000, weekday Monday = 0, yearday from 1.
  ``localtime()`` *without* an argument reads the RTC like the firmware does, and the K210 SDK's
  RTC weekday counts Sunday = 0 — a real device quirk, kept.
* ``clock()`` objects compute ``fps``/``avg`` in float32 with uint32 counters exactly like the
  firmware (see :class:`clock`).

All time comes from :func:`_now_ns` (nanoseconds since boot) and all waiting goes through
:func:`_sleep_ns` (the script sleeps) or :func:`_hardware_wait_ns` (it waits for the hardware), on the board's clock (``current().clock``); tests install a virtual clock with
``current().clock.use(now_ns, sleep_ns)`` (or monkeypatch the two functions) to pin values exactly.
Names this module does not define (``perf_counter``, ``monotonic``, ``gmtime``, ...) are CPython's.
"""

from __future__ import annotations

import datetime as _dt
import math as _math
import struct as _struct
import time as _time
from typing import Any, Callable

from . import state as _state
from .mp_args import int_arg as _as_int

TICKS_PERIOD = 1 << 62  # MP_SMALL_INT_POSITIVE_MASK + 1 on a 64-bit MicroPython port
TICKS_MAX = TICKS_PERIOD - 1
_TICKS_HALF = TICKS_PERIOD // 2
CPU_HZ = 400_000_000  # ticks_cpu counts CPU cycles (mcycle); the default clock is 400 MHz

_EPOCH = _dt.date(2000, 1, 1)
_U32 = 0xFFFFFFFF

#: Longest stretch a sleep goes without a soft-IRQ point (a window stays responsive at 50 Hz).
IDLE_SLICE_NS = 20_000_000


#: Milliseconds from power-on to ``main.py`` on MaixPy: ``_boot.py`` waits ``200 x sleep_ms(1)`` for
#: the IDE first. So a script's first ``ticks_ms()`` is never 0 (scripts divide by tick differences).
BOOT_TO_MAIN_MS = 200


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


def _until_alarm_ns(board: Any) -> int:
    """Nanoseconds to the board's next alarm (a timer, the watchdog): a sleep wakes there to run it."""
    irq = board.__dict__.get("irq")
    due = None if irq is None else irq.next_due_ns()
    return IDLE_SLICE_NS if due is None else max(0, due - board.clock.now_ns())


def _now_ns() -> int:
    """Nanoseconds since the board's boot (its clock: real or virtual)."""
    return _state.current().clock.now_ns()


def _sleep_ns(ns: int) -> None:
    """The script sleeps ``ns`` nanoseconds on the board's clock (the run's end interrupts it); the
    ``sleep`` event tells the frame budget that the script is idle."""
    board = _state.current()
    board.checkpoint()
    if board.events.sleep:
        board.events.fire(board.events.sleep, ns)
    _wait_on_clock(board, ns)


def _hardware_wait_ns(ns: int) -> None:
    """Wait ``ns`` nanoseconds for the hardware (a DMA transfer, a video frame's time): the board's
    clock runs as in a sleep, but the script is busy, not sleeping (no ``sleep`` event: a WAV that
    plays for a second is not thirty idle frames of the frame budget)."""
    board = _state.current()
    board.checkpoint()
    _wait_on_clock(board, ns)


def _wait_on_clock(board: Any, ns: int) -> None:
    """Let ``ns`` nanoseconds pass on ``board``'s clock, running alarms (timers) on the way."""
    clock = board.clock
    if not clock.virtual or "irq" not in board.__dict__:
        clock.sleep_ns(ns)  # real time: the sleep itself wakes at alarms
        return
    end = clock.now_ns() + max(ns, 0)
    while True:  # a virtual sleep is cut at every alarm, so timers fire at their own instants
        due = board.irq.next_due_ns()
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


def _millis() -> int:
    """``mp_hal_ticks_ms()``: unmasked milliseconds since boot (what the clock object reads)."""
    return _now_ns() // 1_000_000


# -- sleeping and ticks --------------------------------------------------------------------------

def sleep(seconds: float) -> None:
    """Sleep ``seconds`` (float allowed); negative values do not sleep."""
    if isinstance(seconds, (int, float)) and not isinstance(seconds, bool):
        _sleep_ns(int(max(0.0, float(seconds)) * 1e9))
        return
    raise TypeError(f"can't convert {type(seconds).__name__} to float")


def sleep_ms(ms: int) -> None:
    """Sleep ``ms`` milliseconds (an int, as on the device)."""
    value = _as_int(ms)
    if value > 0:
        _sleep_ns(value * 1_000_000)


def sleep_us(us: int) -> None:
    """Sleep ``us`` microseconds (an int, as on the device)."""
    value = _as_int(us)
    if value > 0:
        _sleep_ns(value * 1_000)


def _ticks_ns() -> int:
    """Now, at a soft-IRQ point (scripts busy-wait on ticks: the run's end reaches them there)."""
    _state.current().checkpoint()
    return _now_ns()


def ticks_ms() -> int:
    return (_ticks_ns() // 1_000_000) & TICKS_MAX


def ticks_us() -> int:
    return (_ticks_ns() // 1_000) & TICKS_MAX


def ticks_cpu() -> int:
    return (_ticks_ns() * (CPU_HZ // 1_000_000) // 1_000) & TICKS_MAX


ticks = ticks_ms  # OpenMV-compatible alias


def ticks_diff(end: int, start: int) -> int:
    """Signed ``end - start`` modulo the ticks period (valid for differences below half a period)."""
    return ((_as_int(end) - _as_int(start) + _TICKS_HALF) & TICKS_MAX) - _TICKS_HALF


def ticks_add(ticks_value: int, delta: int) -> int:
    """``ticks_value + delta`` wrapped to the ticks period."""
    return (_as_int(ticks_value) + _as_int(delta)) & TICKS_MAX


# -- calendar (epoch 2000) and the RTC -----------------------------------------------------------

def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        leap = (year % 4 == 0 and year % 100 != 0) or year % 400 == 0
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _seconds_since_2000(year: int, month: int, mday: int, hour: int, minute: int, second: int) -> int:
    """Linear in every field, so out-of-range fields carry over exactly like ``timeutils_mktime``."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    days = (_dt.date(year, month, 1) - _EPOCH).days + (mday - 1)
    return days * 86400 + hour * 3600 + minute * 60 + second


def _struct_time(seconds: int) -> tuple[int, int, int, int, int, int, int, int]:
    days, rem = divmod(seconds, 86400)
    day = _EPOCH + _dt.timedelta(days=days)
    hour, rem = divmod(rem, 3600)
    minute, second = divmod(rem, 60)
    return (day.year, day.month, day.day, hour, minute, second, day.weekday(), day.timetuple().tm_yday)


def time() -> int:
    """The RTC in whole seconds since 2000-01-01 (starts at 0 at boot until ``set_time``)."""
    clock = _state.current().clock
    return clock.rtc_base + (_now_ns() - clock.rtc_set_at) // 1_000_000_000


def localtime(secs: int | None = None) -> tuple[int, int, int, int, int, int, int, int]:
    """``(year, month, mday, hour, minute, second, weekday, yearday)``; epoch 2000.

    With ``secs``: weekday Monday = 0. Without: read from the RTC, whose weekday is Sunday = 0.
    """
    if secs is None:
        year, month, mday, hour, minute, second, wday, yday = _struct_time(time())
        sunday_based = (wday + 1) % 7
        return (year, month, mday, hour, minute, second, sunday_based, yday)
    return _struct_time(_as_int(secs))


def mktime(t: Any) -> int:
    """Inverse of ``localtime``: seconds since 2000 of an 8- or 9-tuple (fields may overflow)."""
    items = list(t)
    if not 8 <= len(items) <= 9:
        raise TypeError(f"mktime needs a tuple of length 8 or 9 ({len(items)} given)")
    year, month, mday, hour, minute, second = (_as_int(v) for v in items[:6])
    return _seconds_since_2000(year, month, mday, hour, minute, second)


def set_time(t: Any) -> bool:
    """Set the RTC from ``(year, month, mday, hour, minute, second, ...)``; False if a field is invalid."""
    items = list(t)
    year, month, mday, hour, minute, second = (_as_int(v) for v in items[:6])
    valid = (
        1900 <= year <= 2099
        and 1 <= month <= 12
        and 1 <= mday <= _days_in_month(year, month)
        and 0 <= hour <= 23
        and 0 <= minute <= 59
        and 0 <= second <= 59
    )
    if not valid:
        return False
    clock = _state.current().clock
    clock.rtc_set_at = _now_ns()
    clock.rtc_base = _seconds_since_2000(year, month, mday, hour, minute, second)
    return True


def strftime(fmt: str, t: Any = None) -> str:
    """Not on the device; CPython's, accepting the device's 8-tuples (and the RTC when ``t`` is None)."""
    items = list(localtime(time()) if t is None else t)
    if len(items) == 8:
        items.append(-1)
    return _time.strftime(fmt, tuple(items))


# -- OpenMV clock ----------------------------------------------------------------------------------

def _f32(value: float) -> float:
    return _struct.unpack("<f", _struct.pack("<f", value))[0]


def _f32_div(a: float, b: float) -> float:
    """float32 ``a / b``: the double quotient of two float32 values rounds to the float32 quotient."""
    if b == 0.0:
        return _math.inf if a > 0 else (-_math.inf if a < 0 else _math.nan)
    return _f32(a / b)


def _i32(value: int) -> int:
    """How ``%d`` prints a uint32 field."""
    return value - (1 << 32) if value & 0x80000000 else value


class clock:
    """``time.clock()``: frame timer with the firmware's arithmetic.

    Fields are uint32 milliseconds/frames. ``tick()`` stores ``start = ticks``; ``fps()`` and
    ``avg()`` add one frame and ``now - start`` ms, then return ``1000 / (ticks / frames)`` resp.
    ``ticks / frames`` computed in float32 (the K210 port's float). ``fps()`` zeroes ticks and frames
    once ``ticks >= 2000`` (a ~2 s window); ``avg()`` never resets. Without ``tick()`` the start is 0,
    so the result reflects time since boot (tiny fps); a sub-millisecond frame gives ``inf``.
    """

    __slots__ = ("t_start", "t_ticks", "t_frame")

    def __init__(self) -> None:
        self.t_start = 0
        self.t_ticks = 0
        self.t_frame = 0

    def _accumulate(self) -> None:
        self.t_frame = (self.t_frame + 1) & _U32
        self.t_ticks = (self.t_ticks + _millis() - self.t_start) & _U32

    def tick(self) -> None:
        self.t_start = _millis() & _U32

    def fps(self) -> float:
        self._accumulate()
        value = _f32_div(1000.0, _f32_div(_f32(float(self.t_ticks)), _f32(float(self.t_frame))))
        if self.t_ticks >= 2000:
            self.t_frame = 0
            self.t_ticks = 0
        from . import ide_events

        ide_events.clock_fps(value)
        return value

    def avg(self) -> float:
        self._accumulate()
        return _f32_div(_f32(float(self.t_ticks)), _f32(float(self.t_frame)))

    def reset(self) -> None:
        self.t_start = 0
        self.t_ticks = 0
        self.t_frame = 0

    def __str__(self) -> str:
        return f"t_start:{_i32(self.t_start)} t_ticks:{_i32(self.t_ticks)} t_frame:{_i32(self.t_frame)}\n"

    __repr__ = __str__


def __getattr__(name: str) -> Any:
    """Everything else (``perf_counter``, ``monotonic``, ``gmtime``, ...) is CPython's ``time``."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_time, name)
    except AttributeError:
        raise AttributeError(f"module 'time' has no attribute '{name}'") from None
