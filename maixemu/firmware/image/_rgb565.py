"""Byte-swapped RGB565 and the firmware's 5/6<->8-bit tables: the leaf the colour modules share.

The tables are the firmware's (``rgb2rgb_tab.c``): "round half up" of the linear rescale, *not* bit
replication or shifts. ``_color`` (the conversions) and ``_tables`` (the YUV/LAB tables, which
``_color``'s gray conversions read) both build on these, so they live below both.
"""

from __future__ import annotations

import numpy as np

# --- conversion tables (maixpy-api.md §2.2); floor(a/b + 1/2) == (2a + b) // 2b for integers ---
T5TO8 = np.array([(2 * v * 255 + 31) // 62 for v in range(32)], dtype=np.uint8)
T6TO8 = np.array([(2 * v * 255 + 63) // 126 for v in range(64)], dtype=np.uint8)
T8TO5 = np.array([(2 * v * 31 + 255) // 510 for v in range(256)], dtype=np.uint8)
T8TO6 = np.array([(2 * v * 63 + 255) // 510 for v in range(256)], dtype=np.uint8)


def split565(p: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(R5, G6, B5) of byte-swapped RGB565 values (uint16 as read little-endian from memory)."""
    p = np.asarray(p, dtype=np.uint16)
    r5 = (p >> 3) & 31
    g6 = ((p & 7) << 3) | (p >> 13)
    b5 = (p >> 8) & 31
    return r5, g6, b5


def pack565(r5, g6, b5) -> np.ndarray:
    """Byte-swapped RGB565 value(s) from 5/6/5-bit fields."""
    r5 = np.asarray(r5, dtype=np.uint16)
    g6 = np.asarray(g6, dtype=np.uint16)
    b5 = np.asarray(b5, dtype=np.uint16)
    return ((r5 << 3) | (g6 >> 3) | ((g6 & 7) << 13) | (b5 << 8)).astype(np.uint16)


__all__ = ["T5TO8", "T6TO8", "T8TO5", "T8TO6", "pack565", "split565"]
