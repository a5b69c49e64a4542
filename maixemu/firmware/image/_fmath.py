"""The firmware's fast math (``omv/img/fmath.c``) and float tables (``sincos_tab.c``, ``xyz_tab.c``),
vectorised over float32 arrays with the same bit tricks.

* ``fast_expf``: Schraudolph's exponential on the *double* layout — ``(uint32)(1512775 x +
  1072632447)`` read as the high word (20-bit mantissa, 11-bit exponent) and repacked into a float.
* ``fast_log2``: the mantissa/exponent approximation ``y - 124.22551499 - 1.498030302 m - 1.72587999
  / (0.3520887068 + m)``; ``fast_log = 0.69314718 * fast_log2``.
* ``fast_cbrtf``: the integer-division initial guess only (no Newton step).
* ``sin_table``/``cos_table`` (one entry per degree) and ``xyz_table`` (sRGB -> linear * 100) are
  the printed 6-decimal values of the formulas, as in the C tables (digests in test_image_tables.py).

Evaluated without fused multiply-add; where the K210 build fuses (``fmadd.s``) a last bit can differ.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

F = np.float32


def fast_expf(x) -> np.ndarray:
    x = np.asarray(x, F)
    v = (F(1512775) * x + F(1072632447)).astype(np.float64)  # 1072632447 becomes 1072632448.0f
    # (uint32_t) of a float: RISC-V fcvt.wu.s truncates and saturates (negative -> 0, NaN -> max)
    bits = np.clip(np.nan_to_num(np.trunc(v), nan=4294967295.0), 0, 4294967295).astype(np.uint64)
    m = bits & 0xFFFFF
    e = (((bits >> 20) & 0x7FF).astype(np.int64) - 1023 + 127) & 0xFF
    s = (bits >> 31) & 1
    packed = ((s << 31) | (e.astype(np.uint64) << 23) | (m << 3)).astype(np.uint32)
    return packed.view(F)


def fast_log2(x) -> np.ndarray:
    x = np.asarray(x, F)
    i = x.view(np.uint32)
    mx = ((i & 0x007FFFFF) | 0x3F000000).astype(np.uint32).view(F)
    y = i.astype(F) * F(1.1920928955078125e-7)
    return (y - F(124.22551499) - F(1.498030302) * mx - F(1.72587999) / (F(0.3520887068) + mx)).astype(F)


def fast_log(x) -> np.ndarray:
    return (F(0.69314718) * fast_log2(x)).astype(F)


def fast_cbrtf(x) -> np.ndarray:
    ix = np.asarray(x, F).view(np.int32).astype(np.int64)

    def cdiv(a, b):  # C integer division (toward zero)
        return np.sign(a) * (np.abs(a) // b)

    ix = cdiv(ix, 4) + cdiv(ix, 16)
    ix = ix + cdiv(ix, 16)
    ix = ix + cdiv(ix, 256)
    ix = (ix + 0x2A511CD0 + 2**31) % 2**32 - 2**31
    return ix.astype(np.int32).view(F)


def _printed(values) -> np.ndarray:
    return np.array([float(f"{v:.6f}") for v in values], F)


@lru_cache(maxsize=1)
def sin_table() -> np.ndarray:
    return _printed(math.sin(math.radians(i)) for i in range(360))


@lru_cache(maxsize=1)
def cos_table() -> np.ndarray:
    return _printed(math.cos(math.radians(i)) for i in range(360))


@lru_cache(maxsize=1)
def xyz_table() -> np.ndarray:
    """``xyz_table[256]``: the sRGB transfer function inverted, times 100."""
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    return _printed(linear(i / 255) * 100 for i in range(256))
