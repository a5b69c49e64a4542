"""MaixPy ``time``/``utime`` (``modutime.c``): MicroPython ticks, the RTC (epoch 2000) and OpenMV's clock."""

from typing import Any

class clock:
    """FPS clock from ``time.clock()``: call ``tick()`` at the start of each frame, ``fps()`` at the end."""
    t_start: int
    t_ticks: int
    t_frame: int
    def __init__(self) -> None: ...
    def tick(self) -> None:
        """Remember the frame start (``ticks_ms()``)."""
    def fps(self) -> float:
        """Frames per second averaged over a window of ~2 s (the counters reset once 2000 ms are reached).

        Without a ``tick()`` first the result is tiny (time since boot); a sub-millisecond frame gives inf.
        """
    def avg(self) -> float:
        """Average milliseconds per frame (never resets)."""
    def reset(self) -> None:
        """Zero the counters."""

def sleep(seconds: float, /) -> None:
    """Sleep (float seconds allowed)."""
def sleep_ms(ms: int, /) -> None:
    """Sleep milliseconds."""
def sleep_us(us: int, /) -> None:
    """Sleep microseconds."""
def ticks_ms() -> int:
    """Milliseconds since boot (wraps like a MicroPython small int: use ``ticks_diff``)."""
def ticks_us() -> int:
    """Microseconds since boot."""
def ticks_cpu() -> int:
    """CPU cycles since boot."""
def ticks() -> int:
    """Alias of ``ticks_ms``."""
def ticks_add(ticks_value: int, delta: int, /) -> int:
    """``ticks_value + delta`` with wrap-around."""
def ticks_diff(end: int, start: int, /) -> int:
    """``end - start`` with wrap-around (note the order: the later value first)."""
def time() -> int:
    """RTC seconds since 2000-01-01 (starts near 0 at boot when the RTC is unset)."""
def localtime(secs: int | None = None, /) -> tuple[int, int, int, int, int, int, int, int]:
    """``(year, month, mday, hour, minute, second, weekday, yearday)``, epoch 2000."""
def mktime(t: tuple[int, ...] | list[int], /) -> int:
    """Inverse of ``localtime``."""
def set_time(t: tuple[int, ...] | list[int], /) -> bool:
    """Set the RTC from a ``localtime``-style tuple."""
