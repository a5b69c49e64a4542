"""MaixPy ``board``: ``board_info``, the pin names of the board a script was written for.

On a board the names come from ``/flash/config.json`` (written by MaixPy-v1_scripts
``board/config_*.py``). The emulated default is a Maix Bit/Dock-style board (``LED_R=13``,
``LED_G=12``, ``LED_B=14``, ``BOOT_KEY=16``) that also answers the names other boards' scripts use
— Maix Cube keys (``ENTER=10``, ``BACK=11``, ``NEXT=16``), M5StickV buttons (``BUTTON_A=36``,
``BUTTON_B=37``), WiFi pins — plus ``PIN0..PIN47``. Names on different boards that collide with
these defaults (the Dock's LEDs, the M5StickV's) are available through :func:`use_profile`.
``board_info`` belongs to the board (``current().pins``): what a script sets on it ends with the run.
The boards' other facts (LCD, camera mount, keys, LEDs, power chip) are in
:mod:`~maixemu.firmware.chip.board_profiles`; :func:`profile` gives the current one.
"""

from __future__ import annotations

from typing import Any

from .chip import board_profiles
from .chip.board_profiles import BoardProfile

#: Board profiles: name -> pin names (PIN0..PIN47 are added to every profile); the full facts of each
#: board (LCD, keys, LEDs, power chip) are :data:`maixemu.firmware.chip.board_profiles.PROFILES`.
PROFILES: dict[str, dict[str, int]] = {name: dict(p.pins) for name, p in board_profiles.PROFILES.items()}
_PIN_NAMES = {f"PIN{i}": i for i in range(48)}
_METHODS = frozenset({"set", "all", "get", "load"})

__all__ = ["board_info"]


def _new_board_info() -> type:
    """A fresh ``board_info``: a class whose attributes are the pin names, with the firmware's
    ``set/get/all/load`` (``builtin_py/board.py``). Every board gets its own."""

    class board_info:  # noqa: N801 - the firmware's name
        """Pin names as class attributes (``board_info.LED_R``); ``set/get/all/load`` as in the firmware."""

        @staticmethod
        def set(key: str, value: Any = None) -> None:
            setattr(board_info, key, value)

        @staticmethod
        def all() -> list[str]:
            return dir(board_info)

        @staticmethod
        def get(key: str) -> Any:
            return getattr(board_info, key)

        @staticmethod
        def load(mapping: dict[str, Any] | None = None) -> None:
            for key, value in (mapping or {}).items():
                board_info.set(key, value)

    return board_info


def _pins():
    from .state import current

    pins = current().pins
    if pins.board_info is None:
        pins.board_info = _new_board_info()
        _load_profile(pins, pins.profile)
    return pins


def _load_profile(pins, name: str) -> None:
    info = pins.board_info
    for key in [n for n in vars(info) if not n.startswith("_") and n not in _METHODS]:
        delattr(info, key)
    info.load(_PIN_NAMES)
    info.load(PROFILES[name])
    pins.profile = name


def use_profile(name: str) -> None:
    """Switch ``board_info`` to a board: one of :data:`PROFILES` (``default``, ``dock``, ``m5stickv``, ...;
    aliases such as ``maixduino`` or ``M5StickV`` too)."""
    _load_profile(_pins(), board_profiles.profile_name(name))


def profile() -> BoardProfile:
    """The current board's facts: LCD, camera mount, keys, LEDs, power chip (``board_profiles``)."""
    return board_profiles.PROFILES[_pins().profile]


def profile_controls() -> dict[str, list]:
    """The board pane's buttons and LEDs (the IDE page, the LCD window): the profile's keys and LEDs.

    Names that share a key's pin on this board (the Cube's ``NEXT`` is ``BOOT_KEY``) join its label.
    """
    facts = profile()
    pins = dict(facts.pins)
    buttons = []
    for key in facts.keys:
        pin = pins[key]
        others = [n for n in pins if pins[n] == pin and n != key and n in board_profiles.KEYBOARD]
        buttons.append({"name": key, "pin": pin, "label": " / ".join([key, *others]), "active_low": True,
                        "keyboard": board_profiles.KEYBOARD.get(key)})
    leds = [{"name": led, "pin": pins[led], "colour": _LED_COLOURS.get(led[4:5], "#ffd000"), "active_low": True}
            for led in facts.leds]
    return {"buttons": buttons, "leds": leds}


_LED_COLOURS = {"R": "#ff3030", "G": "#30ff50", "B": "#3080ff", "W": "#ffffff"}


def current_profile() -> str:
    return _pins().profile


def profile_pins() -> dict[str, int]:
    """The named pins of the current profile (what the firmware's config.json would hold)."""
    return dict(PROFILES[_pins().profile])


def __getattr__(name: str) -> Any:
    """``board.board_info`` is the active board's own (a power-on gives the profile's names again)."""
    if name == "board_info":
        return _pins().board_info
    raise AttributeError(f"module 'board' has no attribute '{name}'")
