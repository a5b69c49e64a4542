"""The firmware's RGB565 -> YUV table (``yuv_tab.c``, 65536 x 3 int8, full build).

MaixPy's default configuration (``CONFIG_MAIXPY_OMV_CONV_YUV_FAST=y``) links the full 196608-entry
``yuv_table``; its entries are the BT.601 formulas of OpenMV's ``gen_rgb2yuv.py`` on the 5/6->8
expansion ``(v * 255 + 15.5) / 31`` (``+ 31.5) / 63`` for green), each truncated toward zero::

    Y = int(0.299 R + 0.587 G + 0.114 B) - 128
    U = int(-0.168736 R - 0.331264 G + 0.5 B)
    V = int(0.5 R - 0.418688 G - 0.081312 B)

(checked against the firmware's table in ``tests/firmware/test_image_tables.py``). The JPEG
encoder reads Y/U/V from it; ``COLOR_RGB565_TO_GRAYSCALE`` is ``Y + 128``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np


@lru_cache(maxsize=1)
def yuv_table() -> np.ndarray:
    """(65536, 3) int8: Y, U, V of every byte-swapped RGB565 value (read-only)."""
    p = np.arange(65536, dtype=np.int64)
    r5, g6, b5 = (p >> 3) & 31, ((p & 7) << 3) | (p >> 13), (p >> 8) & 31
    r = np.floor((r5 * 255 + 15.5) / 31)
    g = np.floor((g6 * 255 + 31.5) / 63)
    b = np.floor((b5 * 255 + 15.5) / 31)
    y = np.trunc(r * 0.299 + g * 0.587 + b * 0.114) - 128
    u = np.trunc(-(r * 0.168736) - g * 0.331264 + b * 0.5)
    v = np.trunc(r * 0.5 - g * 0.418688 - b * 0.081312)
    table = np.stack([y, u, v], axis=1).astype(np.int8)
    table.flags.writeable = False
    return table


def yuv_of(pix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(Y, U, V) int8 arrays of byte-swapped RGB565 pixels."""
    t = yuv_table()[np.asarray(pix, dtype=np.uint16)]
    return t[..., 0], t[..., 1], t[..., 2]
