"""Scripted key presses: a board's buttons pressed and released at given camera frames.

For tests of scripts that wait for a key (``maixpy.run(..., keys={5: "BOOT_KEY"})``): the press
happens when camera frame N is taken, on the thread that took it, through
:func:`maixemu.firmware.Maix.gpio.set_input`, so the script's GPIO IRQ handlers run and
``key.value()`` reads as on the board.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Union

from ..firmware.state import BoardState
from .budget import FrameBudget

#: What ``keys=`` accepts: ``{camera frame: key}`` with a key being a ``board_info`` name
#: (``"BOOT_KEY"``; ``"BOOT"`` works too), a physical pin number, or ``(key, frames_held)``.
KeySpec = Union[str, int, tuple]


class KeyPresses:
    """Scripted key presses at camera frames: pressed when frame N is taken, released ``held`` frames later.

    Keys are the board's active-low buttons: "pressed" drives the pin to 0 and "released" back to 1,
    through :func:`maixemu.firmware.Maix.gpio.set_input`, so a script's GPIO IRQ handlers run (falling
    edge at the press, rising edge at the release) and ``key.value()`` reads 0 in between, exactly
    as if someone pressed the key while that frame was on screen.
    """

    def __init__(self, keys: Mapping[int, KeySpec]):
        self.events: dict[int, list[tuple[str | int, int]]] = {}
        for frame, spec in sorted(keys.items()):
            key, held = (spec if isinstance(spec, tuple) else (spec, 1))
            if int(frame) < 1 or int(held) < 1:
                raise ValueError(f"keys={{{frame}: {spec!r}}}: frames count from 1 and a press lasts at least 1 frame")
            self.events.setdefault(int(frame), []).append((key, 0))
            self.events.setdefault(int(frame) + int(held), []).append((key, 1))
        self.pressed: list[tuple[int, str | int]] = []

    @staticmethod
    def _pin(key: str | int) -> str | int:
        if isinstance(key, str):
            from ..firmware import board

            if not hasattr(board.board_info, key) and hasattr(board.board_info, key + "_KEY"):
                return key + "_KEY"
        return key

    def on_frame(self, frame: int) -> None:
        from ..firmware.Maix import gpio

        for key, level in self.events.get(frame, ()):
            gpio.set_input(self._pin(key), level)
            if level == 0:
                self.pressed.append((frame, key))

    def attach(self, board: BoardState, budget: FrameBudget) -> None:
        """Press on ``board``'s camera frames as ``budget`` counts them (attach after the budget)."""
        board.events.snapshot.append(lambda: self.on_frame(budget.snapshots))


__all__ = ["KeyPresses", "KeySpec"]
