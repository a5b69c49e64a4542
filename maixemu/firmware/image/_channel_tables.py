"""Per-channel pixel maths as table lookups (``mathop.c``'s per-pixel loops).

``mathop.c`` computes each native channel of a pixel (gray, or R5, G6 and B5) from the same channel
of the other operand. A channel has 32, 64 or 256 values, so every pair's answer fits a table of
1024, 4096 or 65536 entries, made once per operation by the very channel function
(``op(x, y, max)``, vectorised) that the plain form (:func:`by_channels`) applies to whole channel
planes. A frame then costs a gather per channel instead of unpacking both images into int64 planes
and packing the result (RGB565 ``add`` at QVGA: 3.6 ms -> 0.2 ms); the gather runs as a compiled
loop (``_lookup_pairs``) where kernels are served compiled, as numpy otherwise.

RGB565 entries hold the result already in its byte-swapped bit positions (``_pixels.pack`` of one
channel); ``pack`` ORs independent terms under a 16-bit mask, so OR-ing the three entries is
``pack`` of the three results, bit for bit (values outside a channel's range included).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from ..pixformat import GRAYSCALE, RGB565
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (the vectorised form until kernels are served compiled)
from ._pixels import MAXES, channels, pack

#: ``op(x, y, max)``: the channel values of ``x op y`` (int64 arrays of one channel of each operand)
ChannelOp = Callable[[np.ndarray, np.ndarray, int], np.ndarray]


def by_channels(a: np.ndarray, b: np.ndarray, fmt: int, op: ChannelOp) -> np.ndarray:
    """``op`` applied to the native channel planes of ``a`` and ``b`` (the plain form: any format)."""
    return pack([op(x, y, m) for x, y, m in zip(channels(a, fmt), channels(b, fmt), MAXES[fmt])], fmt)


@lru_cache(maxsize=64)
def tables(op: ChannelOp, fmt: int) -> tuple[np.ndarray, ...]:
    """Per channel ``table[(x << bits) | y]`` = ``op(x, y, max)`` packed into its bits (RGB565: R,
    G, B; gray: one). Kept per ``op``: the callers make one function object per operation and
    parameters."""
    out = []
    maxes = MAXES[fmt]
    for k, m in enumerate(maxes):
        n = m + 1
        x, y = (v.ravel() for v in np.meshgrid(np.arange(n, dtype=np.int64), np.arange(n, dtype=np.int64),
                                               indexing="ij"))
        chans: list[np.ndarray] = [np.zeros(x.size, np.int64)] * len(maxes)
        chans[k] = np.asarray(op(x, y, m), np.int64)
        table = pack(chans, fmt).astype(np.uint16)
        table.setflags(write=False)
        out.append(table)
    return tuple(out)


def pairwise(a: np.ndarray, b: np.ndarray, fmt: int, op: ChannelOp) -> np.ndarray:
    """``op`` of every channel of the pixels ``a`` and ``b`` (same shape, RGB565 or gray; a bitmap
    takes :func:`by_channels`): the packed pixels."""
    if fmt not in (RGB565, GRAYSCALE):
        return by_channels(a, b, fmt, op)
    dtype = np.uint16 if fmt == RGB565 else np.uint8
    t = tables(op, fmt)
    t_r, t_g, t_b = t if fmt == RGB565 else (t[0], t[0], t[0])
    if compiled():
        out = np.empty(a.shape, dtype)
        if _lookup_pairs.attempt(np.ascontiguousarray(a, dtype).reshape(-1), np.ascontiguousarray(b, dtype).reshape(-1),
                                 fmt == RGB565, t_r, t_g, t_b, out.reshape(-1)) is not NOT_SERVED:
            return out
    if fmt == GRAYSCALE:
        return t_r[(a.astype(np.uint16) << 8) | b].astype(np.uint8)
    r, g, bl = _pair_indices(a, b)
    return t_r[r] | t_g[g] | t_b[bl]


def _pair_indices(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x << bits) | y`` of the R5, G6 and B5 fields (``_color.split565``) of two byte-swapped
    RGB565 pixel arrays, shifted straight out of their bit positions in uint16 (no widening)."""
    a = np.asarray(a, np.uint16)
    b = np.asarray(b, np.uint16)
    r = ((a & 0xF8) << 2) | ((b >> 3) & 31)
    g = ((a & 7) << 9) | ((a >> 7) & 0x1C0) | ((b & 7) << 3) | (b >> 13)
    bl = ((a >> 3) & 0x3E0) | ((b >> 8) & 31)
    return r, g, bl


@kernel
def _lookup_pairs(a, b, rgb565, t_r, t_g, t_b, out):
    """``out[i]`` from pixel pair ``a[i]``, ``b[i]`` (flat arrays): the three tables' entries
    OR-ed as :func:`_pair_indices` indexes them (RGB565), else ``t_r[(a << 8) | b]`` (gray)."""
    if rgb565:
        for i in range(a.size):
            p = np.int64(a[i])
            q = np.int64(b[i])
            r = ((p & 0xF8) << 2) | ((q >> 3) & 31)
            g = ((p & 7) << 9) | ((p >> 7) & 0x1C0) | ((q & 7) << 3) | (q >> 13)
            bl = ((p >> 3) & 0x3E0) | ((q >> 8) & 31)
            out[i] = t_r[r] | t_g[g] | t_b[bl]
    else:
        for i in range(a.size):
            out[i] = t_r[(np.int64(a[i]) << 8) | np.int64(b[i])]


def pointwise565(a: np.ndarray, luts: list[np.ndarray]) -> np.ndarray:
    """``luts[k][channel k]`` of every RGB565 pixel of ``a`` (one table per channel, indexed by
    its value): packed uint16."""
    t_r, t_g, t_b = (pack([lut if k == j else np.zeros(lut.size, np.int64) for j in range(3)], RGB565)
                     for k, lut in enumerate(luts))
    p = np.asarray(a, np.uint16)
    return t_r[(p >> 3) & 31] | t_g[((p & 7) << 3) | (p >> 13)] | t_b[(p >> 8) & 31]
