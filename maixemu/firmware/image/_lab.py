"""LAB colour and threshold helpers for the OpenMV vision functions (find_blobs, binary, statistics).

OpenMV converts RGB565 to LAB through a table built from the sRGB -> XYZ -> CIELAB formulas
(``imlib_rgb_to_lab``, integer L 0..100, A/B -128..127, floors). We compute the same table once,
in float32, for all 65536 byte-swapped RGB565 values.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _args, _color
from ._core import GRAYSCALE


def _srgb_linear(v8: np.ndarray) -> np.ndarray:
    c = v8.astype(np.float32) / np.float32(255)
    lin = np.where(c <= 0.04045, c / np.float32(12.92), ((c + np.float32(0.055)) / np.float32(1.055)) ** np.float32(2.4))
    return (lin * 100).astype(np.float32)


def rgb888_to_lab(rgb: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(..., 3) 8-bit RGB -> integer (L, A, B) arrays."""
    r = _srgb_linear(rgb[..., 0])
    g = _srgb_linear(rgb[..., 1])
    b = _srgb_linear(rgb[..., 2])
    x = (r * 0.4124 + g * 0.3576 + b * 0.1805) / 95.047
    y = (r * 0.2126 + g * 0.7152 + b * 0.0722) / 100.0
    z = (r * 0.0193 + g * 0.1192 + b * 0.9505) / 108.883

    def f(t):
        return np.where(t > 0.008856, np.cbrt(t), t * 7.787037 + 0.137931)

    fx, fy, fz = f(x), f(y), f(z)
    L = np.floor(116 * fy).astype(np.int32) - 16
    A = np.floor(500 * (fx - fy)).astype(np.int32)
    B = np.floor(200 * (fy - fz)).astype(np.int32)
    return np.clip(L, 0, 100), np.clip(A, -128, 127), np.clip(B, -128, 127)


@lru_cache(maxsize=1)
def _lab_table() -> np.ndarray:
    allp = np.arange(65536, dtype=np.uint16)
    L, A, B = rgb888_to_lab(_color.rgb565_to_888(allp))
    return np.stack([L, A, B], axis=0).astype(np.int16)


def lab_of(pix565: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    t = _lab_table()
    return t[0][pix565], t[1][pix565], t[2][pix565]


def parse_thresholds(thresholds, fmt: int) -> list[tuple[int, ...]]:
    """OpenMV threshold tuples with defaults for missing values and min/max sorted.

    Grayscale: (lo, hi); RGB565: (Lmin, Lmax, Amin, Amax, Bmin, Bmax).
    """
    if not isinstance(thresholds, (list, tuple)):
        raise TypeError(f"object '{type(thresholds).__name__}' isn't a tuple or list")
    out = []
    for t in thresholds:
        vals = [_args.to_int(v) for v in _args_seq(t)]
        if not vals:
            raise OSError("Threshold tuples must have at least one value!")
        if fmt == GRAYSCALE:
            d = [0, 255]
            for i, v in enumerate(vals[:2]):
                d[i] = v
            lo, hi = min(d[0], d[1]), max(d[0], d[1])
            out.append((lo, hi))
        else:
            d = [0, 100, -128, 127, -128, 127]
            for i, v in enumerate(vals[:6]):
                d[i] = v
            out.append((min(d[0], d[1]), max(d[0], d[1]), min(d[2], d[3]), max(d[2], d[3]),
                        min(d[4], d[5]), max(d[4], d[5])))
    return out


def _args_seq(t):
    if isinstance(t, (list, tuple)):
        return list(t)
    raise TypeError(f"object '{type(t).__name__}' isn't a tuple or list")


def threshold_mask(pix: np.ndarray, fmt: int, th: tuple[int, ...]) -> np.ndarray:
    """Boolean mask of the pixels inside one threshold (bounds inclusive)."""
    if fmt == GRAYSCALE:
        return (pix >= th[0]) & (pix <= th[1])
    L, A, B = lab_of(pix)
    return (L >= th[0]) & (L <= th[1]) & (A >= th[2]) & (A <= th[3]) & (B >= th[4]) & (B <= th[5])
