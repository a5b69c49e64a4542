"""MaixPy ``touchscreen``: the touch panel over the LCD (the emulator: the LCD window's mouse)."""

from typing import Any

STATUS_IDLE: int
STATUS_RELEASE: int
STATUS_PRESS: int
STATUS_MOVE: int
NS2009: int
FT62XX: int

def init(i2c: Any = None, type: Any = None, cal: Any = None) -> None: ...
def read() -> tuple[int, int, int]:
    """``(status, x, y)``."""
def calibrate() -> tuple[int, ...]: ...
