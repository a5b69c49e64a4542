"""MaixPy's ``touchscreen`` (port/src/touchscreen/py_touchscreen.c): the resistive/capacitive touch
panel over the LCD (NS2009 on the Maix Amigo/Cube kits, FT62XX).

The PC's touch is the mouse in the LCD window (the left button is the finger; coordinates are LCD
pixels), or touches a test scripts on the board (``current().touch.touch(x, y)`` /
``.release()``). ``read()`` returns ``(status, x, y)`` as the driver reports a touch's life:
``STATUS_PRESS`` on first contact, ``STATUS_MOVE`` while held, one ``STATUS_RELEASE`` after the
finger lifts (at its last position), then ``STATUS_IDLE``. ``init(cal=)`` checks the calibration
tuple as the firmware does; ``calibrate()`` returns the calibration the panel uses (the driver's
default: the emulated panel needs none).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .state import board_part, current

STATUS_IDLE, STATUS_RELEASE, STATUS_PRESS, STATUS_MOVE = 0, 1, 2, 3  # touchscreen.h
NS2009, FT62XX = 0, 1
CALIBRATION_SIZE = 7
#: py_touchscreen.c's calibration when init() gets none
DEFAULT_CALIBRATION = (-6, -5941, 22203576, 4232, -8, -700369, 65536)


@board_part("touch")
@dataclass
class TouchState:
    """The finger on the panel: where it is (None: lifted) and what ``read()`` reported last."""

    position: tuple[int, int] | None = None
    last: tuple[int, int] = (0, 0)
    down: bool = False  # what read() last saw
    initialised: bool = False
    calibration: tuple[int, ...] = DEFAULT_CALIBRATION

    def touch(self, x: int, y: int) -> None:
        """Put the finger at LCD pixel (x, y) (a test's scripted touch)."""
        self.position = (int(x), int(y))

    def release(self) -> None:
        self.position = None

    def read(self) -> tuple[int, int, int]:
        position = self.position
        pointer = _window_pointer()
        if pointer is not None:
            position = pointer
        if position is None:
            if self.down:
                self.down = False
                return (STATUS_RELEASE, *self.last)
            return (STATUS_IDLE, *self.last)
        status = STATUS_MOVE if self.down else STATUS_PRESS
        self.down, self.last = True, position
        return (status, *position)


def _window_pointer() -> tuple[int, int] | None:
    """Where the left mouse button holds the LCD window down (None: not pressed, or no window)."""
    pointer = getattr(current().display, "pointer", None)
    return pointer() if callable(pointer) else None


def _state() -> TouchState:
    return current().part(TouchState)


def init(i2c: Any = None, type: Any = None, cal: Any = None) -> None:  # noqa: A002 - the firmware's keyword
    if type is not None and int(type) not in (NS2009, FT62XX):
        type = None  # the firmware falls back to its default driver
    if cal is not None and (type is None or int(type) != FT62XX):
        values = tuple(cal)
        if len(values) != CALIBRATION_SIZE:
            raise ValueError("tuple size must be 7")
        _state().calibration = tuple(int(v) for v in values)
    _state().initialised = True


def read() -> tuple[int, int, int]:
    """``(status, x, y)`` of the finger (see the module docstring)."""
    current().checkpoint()
    return _state().read()


def calibrate() -> tuple[int, ...]:
    """Run the panel's calibration (on the device: touch the crosses); returns the 7 values."""
    return _state().calibration


__all__ = ["FT62XX", "NS2009", "STATUS_IDLE", "STATUS_MOVE", "STATUS_PRESS", "STATUS_RELEASE",
           "calibrate", "init", "read"]
