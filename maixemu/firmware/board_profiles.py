"""The boards MaixPy ships for, as data: pins, LCD, camera mount, keys, LEDs, boot state.

(The power chips and the I2C pins they sit on are :data:`maixemu.firmware.axp.WIRING`, by profile name.)

One :class:`BoardProfile` per board (``--board NAME``, the plugin's ``board=``). Sources:

* pin names: the per-board ``board_info`` (MaixPy-v1 ``projects/maixpy_m5stickv/builtin_py/board.py``
  ``Board_Info``; the ``config.json`` ``board_info`` maps written by ``projects/maixpy_amigo_*/_boot.py``
  and MaixPy-v1_scripts ``board/config_*.py`` for Bit, Dock, Go, Cube, Duino);
* LCD: the panel ``lcd.init()`` gets on that board: the build's ``CONFIG_LCD_DEFAULT_WIDTH/HEIGHT``
  (``projects/maixpy_m5stickv/config_defaults.mk``: 240×135) or the ``config.json`` ``lcd`` size, which
  ``py_lcd.c`` loads for the default type after the arguments (Amigo 480×320, Cube 240×240); the
  rotation its stock boot sets (M5StickV: ``lcd.rotation(2)``, the panel is mounted upside down, and
  the window, recordings and the plugin's frames show it as mounted: upright after that rotation);
* boot state: what a script started from the IDE finds. Every stock ``_boot.py`` in IDE mode runs
  ``lcd.init(color=lcd.PINK)`` before handing over (so ``lcd.width()`` works before the script's own
  ``lcd.init()``); boards without a panel (UnitV) leave it uninitialised.

Keys are active low with pull-ups on every board listed; LEDs on the Maix boards and the M5StickV are
active low (the M5StickV boot: ``led_w.value(1) #RGBW LEDs are Active Low``). The UnitV's RGB LED
is an SK6812 on pin 8 (driven by a protocol, not a GPIO level): it is listed as a pin only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

_BIT = {"BOOT_KEY": 16, "LED_R": 13, "LED_G": 12, "LED_B": 14, "MIC0_WS": 19, "MIC0_DATA": 20, "MIC0_BCK": 18}
_WIFI = {"WIFI_TX": 6, "WIFI_RX": 7, "WIFI_EN": 8}
_I2S_DOCK = {"I2S_WS": 33, "I2S_DA": 34, "I2S_BCK": 35}
_CUBE = {
    "BOOT_KEY": 16, "LED_R": 13, "LED_G": 12, "LED_B": 14, "LED_W": 32, "BACK": 11, "ENTER": 10, "NEXT": 16,
    **_WIFI, "I2S0_MCLK": 19, "I2S0_SCLK": 35, "I2S0_WS": 33, "I2S0_IN_D0": 34, "I2S0_OUT_D2": 18,
    "I2C_SDA": 31, "I2C_SCL": 30, "SPI_SCLK": 21, "SPI_MOSI": 8, "SPI_MISO": 15, "SPI_CS": 20,
}
_AMIGO = {  # projects/maixpy_amigo_ips/builtin_py/_boot.py, config["board_info"]
    "BOOT_KEY": 16, "LED_R": 14, "LED_G": 15, "LED_B": 17, "LED_W": 32, "BACK": 31, "ENTER": 23, "NEXT": 20,
    **_WIFI, "I2S0_MCLK": 13, "I2S0_SCLK": 21, "I2S0_WS": 18, "I2S0_IN_D0": 35, "I2S0_OUT_D2": 34,
    "I2C_SDA": 27, "I2C_SCL": 24, "SPI_SCLK": 11, "SPI_MOSI": 10, "SPI_MISO": 6, "SPI_CS": 12,
}
_M5STICKV = {  # projects/maixpy_m5stickv/builtin_py/board.py, Board_Info
    "ISP_RX": 4, "ISP_TX": 5, "WIFI_TX": 39, "WIFI_RX": 38, "CONNEXT_A": 35, "CONNEXT_B": 34,
    "MPU_SDA": 29, "MPU_SCL": 28, "MPU_INT": 23, "SPK_LRCLK": 14, "SPK_BCLK": 15, "SPK_DIN": 17, "SPK_SD": 25,
    "MIC_LRCLK": 10, "MIC_DAT": 12, "MIC_CLK": 13, "LED_W": 7, "LED_R": 6, "LED_G": 9, "LED_B": 8,
    "BUTTON_A": 36, "BUTTON_B": 37,
}
_UNITV = {"BUTTON_A": 18, "BUTTON_B": 19, "LED_RGB": 8, "CONNEXT_A": 35, "CONNEXT_B": 34, "ISP_RX": 4, "ISP_TX": 5}
_DUINO = {  # Sipeed's config.json writer for the board (MaixPy-v1_scripts board/config_maix_duino.py):
    # the ESP32 co-processor on SPI, the Arduino header's PIN0..PIN13
    "BOOT_KEY": 16, "LED_R": 13, "LED_G": 12, "LED_B": 14, "WIFI_TX": 6, "WIFI_RX": 7, "WIFI_EN": 8,
    "MIC0_WS": 19, "MIC0_DATA": 20, "MIC0_BCK": 18, "I2S_WS": 33, "I2S_DA": 34, "I2S_BCK": 35,
    "ESP32_CS": 25, "ESP32_RST": 8, "ESP32_RDY": 9, "ESP32_MOSI": 28, "ESP32_MISO": 26, "ESP32_SCLK": 27,
    **{f"PIN{i}": pin for i, pin in enumerate((4, 5, 21, 22, 23, 24, 32, 15, 14, 13, 12, 11, 10, 3))},
}

#: key names -> the keyboard key of the LCD window that presses them
KEYBOARD = {"BOOT_KEY": "b", "BUTTON_A": "a", "BUTTON_B": "s", "ENTER": "Return", "BACK": "BackSpace",
            "NEXT": "n"}


@dataclass(frozen=True)
class BoardProfile:
    """One board's device facts (see the module docstring)."""

    name: str
    title: str
    pins: Mapping[str, int]
    #: what ``lcd.init()`` (type 1) makes: the build's ``CONFIG_LCD_DEFAULT_WIDTH/HEIGHT`` or the
    #: ``config.json`` ``lcd`` size; None: the board has no LCD (the boot leaves it uninitialised)
    lcd: tuple[int, int] | None = (320, 240)
    #: the size comes from ``config.json``, which ``py_lcd_load_config`` applies *after* the
    #: arguments: ``lcd.init(width=..., height=...)`` cannot change it on that board
    lcd_from_config: bool = False
    #: the rotation the stock boot leaves
    lcd_rotation: int = 0
    #: how the panel is mounted in the case, in quarter turns clockwise as the user sees it: what the
    #: panel's memory holds at rotation 0 appears turned by this much (the M5StickV's is mounted
    #: upside down, so its boot and scripts draw with ``lcd.rotation(2)`` to look upright)
    panel_mount: int = 0
    #: the camera as mounted: the frames it delivers are mirrored / upside down against the scene
    camera_hmirror: bool = False
    camera_vflip: bool = False
    #: the board's keys (pin names), in the order a window or page shows them
    keys: tuple[str, ...] = ("BOOT_KEY",)
    #: the board's GPIO LEDs (pin names), all active low
    leds: tuple[str, ...] = ("LED_R", "LED_G", "LED_B")
    aliases: tuple[str, ...] = field(default=())

    def key_pins(self) -> dict[str, int]:
        return {key: self.pins[key] for key in self.keys}

    def led_pins(self) -> dict[str, int]:
        return {led: self.pins[led] for led in self.leds}


def _profile(name: str, title: str, pins: dict[str, int], **facts) -> BoardProfile:
    return BoardProfile(name, title, MappingProxyType(dict(pins)), **facts)


PROFILES: dict[str, BoardProfile] = {p.name: p for p in (
    _profile("default", "generic K210 board (Maix Bit/Dock pins, other boards' key names too)",
             {**_BIT, **_WIFI, "ENTER": 10, "BACK": 11, "NEXT": 16, "LED_W": 32, "BUTTON_A": 36, "BUTTON_B": 37},
             aliases=("generic",)),
    _profile("bit", "Sipeed Maix Bit", _BIT, aliases=("maix_bit", "maixbit")),
    _profile("dock", "Sipeed Maix Dock", {"BOOT_KEY": 16, "LED_R": 14, "LED_G": 13, "LED_B": 12, **_WIFI,
                                          "MIC0_WS": 30, "MIC0_DATA": 31, "MIC0_BCK": 32, **_I2S_DOCK},
             aliases=("maix_dock", "dan_dock")),
    _profile("go", "Sipeed Maix Go", {"BOOT_KEY": 16, "LED_R": 14, "LED_G": 12, "LED_B": 13, **_WIFI,
                                      "MIC0_WS": 19, "MIC0_DATA": 20, "MIC0_BCK": 18, **_I2S_DOCK},
             aliases=("maix_go",)),
    _profile("duino", "Sipeed Maixduino", _DUINO, aliases=("maixduino", "maix_duino")),
    _profile("cube", "Sipeed Maix Cube", _CUBE, lcd=(240, 240), lcd_from_config=True, keys=("ENTER", "BACK", "NEXT"),
             leds=("LED_R", "LED_G", "LED_B", "LED_W"), aliases=("maix_cube",)),
    _profile("amigo", "Sipeed Maix Amigo", _AMIGO, lcd=(480, 320), lcd_from_config=True, keys=("ENTER", "BACK", "NEXT", "BOOT_KEY"),
             leds=("LED_R", "LED_G", "LED_B", "LED_W"), aliases=("maix_amigo", "amigo_ips",
                                                                                 "amigo_tft")),
    _profile("m5stickv", "M5Stack M5StickV", _M5STICKV, lcd=(240, 135), lcd_rotation=2, panel_mount=2,
             keys=("BUTTON_A", "BUTTON_B"), leds=("LED_R", "LED_G", "LED_B", "LED_W"),
             aliases=("m5stick_v", "stickv")),
    _profile("unitv", "M5Stack UnitV", _UNITV, lcd=None, keys=("BUTTON_A", "BUTTON_B"), leds=(),
             aliases=("unit_v",)),
)}

_ALIASES = {alias: p.name for p in PROFILES.values() for alias in (p.name, *p.aliases)}


def profile_name(name: str) -> str:
    """The profile a ``--board`` value names (case and ``-``/space insensitive, aliases allowed)."""
    key = str(name).strip().lower().replace("-", "_").replace(" ", "_")
    if key not in _ALIASES and key.startswith("maix_") and key[5:] in _ALIASES:
        key = key[5:]
    if key not in _ALIASES:
        raise ValueError(f"unknown board {name!r}; known boards: {', '.join(PROFILES)}")
    return _ALIASES[key]


def get(name: str) -> BoardProfile:
    return PROFILES[profile_name(name)]


__all__ = ["BoardProfile", "KEYBOARD", "PROFILES", "get", "profile_name"]
