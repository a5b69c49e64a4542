"""The firmware's colour tables, entry by entry, from the formulas of the generators that wrote them
(OpenMV's ``tools/gen_rgb2lab.py`` / ``gen_rgb2yuv.py``, documented in ``lab_tab.c`` / ``yuv_tab.c``).

Written out here in plain Python, independent of maixemu's tables, so that a test comparing the
IDE page's numbers with them compares with the firmware, not with the code under test.
"""

from __future__ import annotations

import math


def _rgb888(pixel: int) -> tuple[int, int, int]:
    """The 8-bit channels of one byte-swapped RGB565 value (``(v * 255 + 15.5) / 31``, ``(v * 255 + 31.5) / 63``)."""
    value = ((pixel & 0xFF) << 8) | (pixel >> 8)
    r5, g6, b5 = value >> 11, (value >> 5) & 0x3F, value & 0x1F
    return int((r5 * 255 + 15.5) / 31), int((g6 * 255 + 31.5) / 63), int((b5 * 255 + 15.5) / 31)


def lab_table_value(pixel: int) -> tuple[int, int, int]:
    """L, A, B of one byte-swapped RGB565 value as the firmware's ``lab_tab.c`` holds it.

    Its generator (OpenMV ``gen_rgb2lab.py``, documented in ``lab_tab.c``): 5/6-bit channels
    expanded to 8 bits (``(v * 255 + 15.5) / 31``, ``(v * 255 + 31.5) / 63``), sRGB linearised, XYZ (D65), L*a*b*, each rounded half away from zero.
    Written out here, independent of maixemu's tables.
    """
    r, g, b = _rgb888(pixel)

    def linear(c: int) -> float:
        c /= 255.0
        return 100.0 * (((c + 0.055) / 1.055) ** 2.4 if c > 0.04045 else c / 12.92)

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787037 * t + 0.137931

    def rnd(v: float) -> int:
        return int(math.floor(abs(v) + 0.5)) * (1 if v >= 0 else -1)

    rl, gl, bl = linear(r), linear(g), linear(b)
    x = f((rl * 0.4124 + gl * 0.3576 + bl * 0.1805) / 95.047)
    y = f((rl * 0.2126 + gl * 0.7152 + bl * 0.0722) / 100.0)
    z = f((rl * 0.0193 + gl * 0.1192 + bl * 0.9505) / 108.883)
    return rnd(116 * y) - 16, rnd(500 * (x - y)), rnd(200 * (y - z))


def firmware_yuv(pixel: int) -> tuple[int, int, int]:
    """Y, U, V of one byte-swapped RGB565 value as the firmware's ``yuv_tab.c`` holds them, from its
    generator's formula (OpenMV ``gen_rgb2yuv.py``: 5/6-bit channels to 8 bits, BT.601, Y floored then
    made signed, U/V truncated toward zero), written out here independently of maixemu's tables."""
    r, g, b = _rgb888(pixel)
    y = math.floor(r * 0.299 + g * 0.587 + b * 0.114) - 128
    u = math.trunc(-(r * 0.168736) - (g * 0.331264) + (b * 0.5))
    v = math.trunc((r * 0.5) - (g * 0.418688) - (b * 0.081312))
    return y, u, v
