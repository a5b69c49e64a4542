"""Compiled forms of the per-frame colour conversions (camera snapshot, ``pix_to_ai``, the LCD):
every frame of every script pays them, three to six numpy gathers of a QVGA frame (about 1 ms)
where one compiled pass per conversion costs a few tens of microseconds.

Each kernel reads the same tables as :mod:`._color`'s numpy forms (``rgb2rgb_tab.c``'s 5/6<->8-bit
rounding, not shifts), so both give the same bytes; ``_color`` asks ``attempt()`` and takes its
numpy form while a kernel is not served (``_jit``: no frame waits for numba).
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel


@kernel
def pack_rgb888(rgb, t_r, t_g, t_b, out):
    """``out[i] = t_r[R] | t_g[G] | t_b[B]`` of each (R, G, B) row of ``rgb`` ((N, 3) uint8): the
    8-bit values' byte-swapped RGB565 fields OR-ed (``COLOR_R8_G8_B8_TO_RGB565``)."""
    for i in range(out.size):
        out[i] = t_r[rgb[i, 0]] | t_g[rgb[i, 1]] | t_b[rgb[i, 2]]


@kernel
def planes_of_565(pix, out):
    """(3, N) planar RGB888 of the flat byte-swapped RGB565 ``pix`` (``COLOR_RGB565_TO_R8/G8/B8``,
    the AI buffer's layout): ``T5TO8[R5]``, ``T6TO8[G6]``, ``T5TO8[B5]`` computed by the formulas
    the tables are made of (``_rgb565``: ``(510·v + 31) // 62``, ``(510·v + 63) // 126``), in
    uint32. Three planes of one value each vectorise, 16 pixels at a time: 8x faster than a
    table gather per value (76 → 9 µs a QVGA frame, every snapshot). (The interleaved forms below
    keep their gathers: their three-byte strides do not vectorise, and the formulas there were
    2-4x slower than the tables.)"""
    o0, o1, o2 = out[0], out[1], out[2]
    for i in range(pix.size):
        p = np.uint32(pix[i])
        r = (p >> np.uint32(3)) & np.uint32(31)
        g = ((p & np.uint32(7)) << np.uint32(3)) | (p >> np.uint32(13))
        b = (p >> np.uint32(8)) & np.uint32(31)
        o0[i] = np.uint8((r * np.uint32(510) + np.uint32(31)) // np.uint32(62))
        o1[i] = np.uint8((g * np.uint32(510) + np.uint32(63)) // np.uint32(126))
        o2[i] = np.uint8((b * np.uint32(510) + np.uint32(31)) // np.uint32(62))


@kernel
def rgb_of_565(pix, t5, t6, out):
    """(N, 3) interleaved RGB888 of the flat byte-swapped RGB565 ``pix`` (the display's form)."""
    for i in range(pix.size):
        p = np.int64(pix[i])
        out[i, 0] = t5[(p >> 3) & 31]
        out[i, 1] = t6[((p & 7) << 3) | (p >> 13)]
        out[i, 2] = t5[(p >> 8) & 31]
