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
:func:`_sleep_ns` (the script sleeps) or :func:`_hardware_wait_ns` (it waits for the hardware), on the board's clock
(:class:`~maixemu.firmware.chip.board_time.ClockState`, ``current().clock``); tests install a virtual clock with
``current().clock.use(now_ns, sleep_ns)`` (or monkeypatch the two functions) to pin values exactly.
Names this module does not define (``perf_counter``, ``monotonic``, ``gmtime``, ...) are CPython's.
"""

from __future__ import annotations

import datetime as _dt
import math as _math
import struct as _struct
import time as _time
from typing import Any

from .chip import board_time
from . import state as _state
from .chip.board_time import BOOT_TO_MAIN_MS, IDLE_SLICE_NS, ClockState  # noqa: F401 - part of time's face
from .mp.mp_args import int_arg as _as_int

TICKS_PERIOD = 1 << 62  # MP_SMALL_INT_POSITIVE_MASK + 1 on a 64-bit MicroPython port
TICKS_MAX = TICKS_PERIOD - 1
_TICKS_HALF = TICKS_PERIOD // 2
CPU_HZ = 400_000_000  # ticks_cpu counts CPU cycles (mcycle); the default clock is 400 MHz

_EPOCH = _dt.date(2000, 1, 1)
_U32 = 0xFFFFFFFF

def _now_ns() -> int:
    """Nanoseconds since the board's boot (its clock: real or virtual)."""
    return board_time.now_ns()


def _sleep_ns(ns: int) -> None:
    """The script sleeps ``ns`` nanoseconds on the board's clock (:func:`.board_time.sleep_ns`)."""
    board_time.sleep_ns(ns)


def _hardware_wait_ns(ns: int) -> None:
    """Wait ``ns`` nanoseconds for the hardware (:func:`.board_time.hardware_wait_ns`)."""
    board_time.hardware_wait_ns(ns)


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
    clock = _state.current().part(ClockState)
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
    clock = _state.current().part(ClockState)
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
