"""Scripted key presses (a board's buttons pressed and released at given camera frames) and the
LED levels a run leaves (:class:`LedWatch`).

For tests of scripts that wait for a key (``maixpy.run(..., keys={5: "BOOT_KEY"})``): the press
happens when camera frame N is taken, on the thread that took it, through
:func:`maixemu.firmware.Maix.gpio.set_input`, so the script's GPIO IRQ handlers run and
``key.value()`` reads as on the board.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Union

from ..host.display import BoardControls
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
        """A ``board_info`` name (``"BUTTON_A"``), its short form (``"BOOT"``, ``"A"``) or a pin number."""
        if isinstance(key, str):
            from ..firmware import board

            for name in (key, key + "_KEY", "BUTTON_" + key, key.upper(), key.upper() + "_KEY",
                         "BUTTON_" + key.upper()):
                if hasattr(board.board_info, name):
                    return name
            keys = ", ".join(board.profile().keys)
            raise ValueError(f"keys=: the {board.current_profile()} board has no key {key!r} (its keys: {keys})")
        return key

    def on_frame(self, frame: int) -> None:
        from ..firmware.Maix import gpio

        for key, level in self.events.get(frame, ()):
            gpio.set_input(self._pin(key), level)
            if level == 0:
                self.pressed.append((frame, key))

    def attach(self, board: BoardState, budget: FrameBudget) -> None:
        """Press on ``board``'s camera frames as ``budget`` counts them (attach after the budget)."""
        from ..firmware import state as state_mod

        with state_mod.bind(board):  # a key the board does not have is the test's mistake: say so now
            for events in self.events.values():
                for key, _ in events:
                    self._pin(key)
        board.events.snapshot.append(lambda: self.on_frame(budget.snapshots))


class LedWatch:
    """The board's LEDs during a run: every write to an LED pin, by the profile's LED names."""

    def __init__(self, state: BoardState, budget: FrameBudget):
        from ..firmware import board as board_mod, state as state_mod

        with state_mod.bind(state):
            self._names = {pin: name for name, pin in board_mod.profile().led_pins().items()}
        self._state, self._budget = state, budget
        self.changes: list[tuple[int, str, int]] = []
        state.events.gpio_output.append(self._on_write)

    def _on_write(self, pin: int, level: int) -> None:
        name = self._names.get(pin)
        if name is not None:
            self.changes.append((self._budget.snapshots, name, int(level)))

    def levels(self) -> dict[str, int | None]:
        written = self._state.pins.output_levels
        return {name: written.get(pin) for pin, name in self._names.items()}


#: keyboard names of :data:`maixemu.firmware.chip.board_profiles.KEYBOARD` -> ``cv2.waitKey`` codes
_KEY_CODES = {"Return": 13, "BackSpace": 8}


def window_controls(state: BoardState) -> BoardControls:
    """The LCD window's keys and LED strip for ``state``'s board profile (the title says which keys)."""
    from ..firmware import board as board_mod, state as state_mod
    from ..firmware.Maix import gpio

    with state_mod.bind(state):
        controls = board_mod.profile_controls()
        profile = board_mod.current_profile()
    keys: dict[int, tuple[str, Callable[[bool], None]]] = {}
    shown = []
    for button in controls["buttons"]:
        name = button.get("keyboard")
        if not name:
            continue
        code = _KEY_CODES.get(name, ord(name[0]) if len(name) == 1 else None)
        if code is None:
            continue
        pin = int(button["pin"])

        def press(down: bool, pin: int = pin) -> None:
            with state_mod.bind(state):
                gpio.set_input(pin, 0 if down else 1)

        keys[code] = (button["label"], press)
        shown.append(f"{name}={button['name']}")
    leds = [(led["name"], int(led["pin"]), _rgb(led["colour"])) for led in controls["leds"]]

    def levels() -> list[tuple[str, tuple[int, int, int], bool]]:
        """The strip shows once the script drove an LED (a script without LEDs keeps its window size)."""
        written = state.pins.output_levels
        if not any(pin in written for _, pin, _ in leds):
            return []
        return [(name, colour, written.get(pin) == 0) for name, pin, colour in leds]  # active low

    help_line = f"{profile}: " + (" ".join(shown) if shown else "no keys") + ", ESC ends"
    return BoardControls(keys=keys, leds=levels if leds else None, help=help_line)


def _rgb(colour: str) -> tuple[int, int, int]:
    value = int(colour.lstrip("#"), 16)
    return (value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF


__all__ = ["KeyPresses", "KeySpec", "LedWatch", "window_controls"]
