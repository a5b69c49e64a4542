"""MaixPy ``board``: ``board_info``, the pin names of the board a script was written for.

On a board the names come from ``/flash/config.json`` (written by MaixPy-v1_scripts
``board/config_*.py``). The emulated default is a Maix Bit/Dock-style board (``LED_R=13``,
``LED_G=12``, ``LED_B=14``, ``BOOT_KEY=16``) that also answers the names other boards' scripts use
— Maix Cube keys (``ENTER=10``, ``BACK=11``, ``NEXT=16``), M5StickV buttons (``BUTTON_A=36``,
``BUTTON_B=37``), WiFi pins — plus ``PIN0..PIN47``. Names on different boards that collide with
these defaults (the Dock's LEDs, the M5StickV's) are available through :func:`use_profile`.
``board_info`` belongs to the board (``current().pins``): what a script sets on it ends with the run.
"""

from __future__ import annotations

from typing import Any

_BIT = {"BOOT_KEY": 16, "LED_R": 13, "LED_G": 12, "LED_B": 14, "MIC0_WS": 19, "MIC0_DATA": 20, "MIC0_BCK": 18}
_WIFI = {"WIFI_TX": 6, "WIFI_RX": 7, "WIFI_EN": 8}
_I2S_DOCK = {"I2S_WS": 33, "I2S_DA": 34, "I2S_BCK": 35}
_CUBE = {
    "BOOT_KEY": 16, "LED_R": 13, "LED_G": 12, "LED_B": 14, "LED_W": 32, "BACK": 11, "ENTER": 10, "NEXT": 16,
    **_WIFI, "I2S0_MCLK": 19, "I2S0_SCLK": 35, "I2S0_WS": 33, "I2S0_IN_D0": 34, "I2S0_OUT_D2": 18,
    "I2C_SDA": 31, "I2C_SCL": 30, "SPI_SCLK": 21, "SPI_MOSI": 8, "SPI_MISO": 15, "SPI_CS": 20,
}
_M5STICKV = {
    "BUTTON_A": 36, "BUTTON_B": 37, "LED_W": 7, "LED_R": 6, "LED_G": 9, "LED_B": 8,
    "CONNEXT_A": 35, "CONNEXT_B": 34, "MPU_SDA": 29, "MPU_SCL": 28, "MPU_INT": 23,
}

#: Board profiles: name -> pin names (PIN0..PIN47 are added to every profile).
PROFILES: dict[str, dict[str, int]] = {
    "default": {**_BIT, **_WIFI, "ENTER": 10, "BACK": 11, "NEXT": 16, "LED_W": 32, "BUTTON_A": 36, "BUTTON_B": 37},
    "bit": dict(_BIT),
    "dock": {"BOOT_KEY": 16, "LED_R": 14, "LED_G": 13, "LED_B": 12, **_WIFI,
             "MIC0_WS": 30, "MIC0_DATA": 31, "MIC0_BCK": 32, **_I2S_DOCK},
    "go": {"BOOT_KEY": 16, "LED_R": 14, "LED_G": 12, "LED_B": 13, **_WIFI,
           "MIC0_WS": 19, "MIC0_DATA": 20, "MIC0_BCK": 18, **_I2S_DOCK},
    "cube": dict(_CUBE),
    "amigo": {
        "BOOT_KEY": 23, "LED_R": 14, "LED_G": 15, "LED_B": 17, "LED_W": 32, "BACK": 31, "ENTER": 23, "NEXT": 20,
        **_WIFI, "I2S0_MCLK": 13, "I2S0_SCLK": 21, "I2S0_WS": 18, "I2S0_IN_D0": 35, "I2S0_OUT_D2": 34,
        "I2C_SDA": 27, "I2C_SCL": 24, "SPI_SCLK": 11, "SPI_MOSI": 10, "SPI_MISO": 6, "SPI_CS": 12,
    },
    "m5stickv": dict(_M5STICKV),
}
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
    """Switch ``board_info`` to a board: one of :data:`PROFILES` (``default``, ``dock``, ``m5stickv``, ...)."""
    if name not in PROFILES:
        raise ValueError(f"unknown board profile {name!r}; known: {', '.join(sorted(PROFILES))}")
    _load_profile(_pins(), name)


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
