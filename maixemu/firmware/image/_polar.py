"""``linpolar``/``logpolar`` (``imlib_logpolar``, phasecorrelation.c) as the firmware computes them.

Forward: output ``(x, y)`` takes the source pixel at ``trunc(e(rho) * cos[theta] + w/2)``,
``trunc(e(rho) * sin[theta] + h/2)`` with ``rho = y * log(sqrt((w/2)^2 + (h/2)^2)) / h``,
``theta = 630 - trunc(x * 360 / w)`` (mod 360, one degree table entries), ``e`` = ``fast_expf`` (log)
or identity (lin). Reverse: ``theta`` from ``fast_atan2f`` in whole degrees, ``rho`` from
``fast_log(sqrt(...))``; RGB565 images clamp the reverse source to the image, gray and bitmap ones
drop pixels outside. Pixels with no source stay black. ``x * y + z`` terms are evaluated as one
fused multiply-add (the K210's ``fmadd.s``), which is exact here to the float32 rounding.
"""

from __future__ import annotations

import math

import numpy as np

from functools import lru_cache

from . import _args, _fmath, _tables
from ._core import RGB565
from ._host import ImageHost

F = np.float32


@lru_cache(maxsize=1)
def sin_table() -> np.ndarray:
    """``sin_table[360]`` of sincos_tab.c: one entry per degree, written to 6 decimals."""
    return np.array([_tables._nearest_float32(f"{math.sin(math.radians(i)):.6f}") for i in range(360)], F)


@lru_cache(maxsize=1)
def cos_table() -> np.ndarray:
    """``cos_table[360]`` of sincos_tab.c."""
    return np.array([_tables._nearest_float32(f"{math.cos(math.radians(i)):.6f}") for i in range(360)], F)


def _fma(a, b, c) -> np.ndarray:
    """float32 ``a * b + c`` with one rounding (the product is exact in float64)."""
    return (np.asarray(a, np.float64) * np.asarray(b, np.float64) + np.asarray(c, np.float64)).astype(F)


def polar_map(w: int, h: int, linear: bool, reverse: bool, clamp: bool) -> tuple[np.ndarray, np.ndarray]:
    """(source x, source y) int arrays (H, W) of ``imlib_logpolar_int`` over a w x h ROI."""
    w_2, h_2 = F(w) / F(2.0), F(h) / F(2.0)
    radius = np.sqrt(_fma(w_2, w_2, h_2 * h_2))
    rho_scale = ((radius if linear else _fmath.fast_log(radius)) / F(h)).astype(F)
    rho_scale_inv = (F(1.0) / rho_scale).astype(F)
    theta_scale = (F(360.0) / F(w)).astype(F)
    theta_scale_inv = (F(1.0) / theta_scale).astype(F)
    ys, xs = np.mgrid[0:h, 0:w]
    if not reverse:
        rho = (ys.astype(F) * rho_scale).astype(F)
        theta = 630 - np.trunc(xs.astype(F) * theta_scale).astype(np.int64)
        theta = np.where(theta >= 360, theta - 360, theta)
        e = rho if linear else _fmath.fast_expf(rho)
        sx = np.trunc(_fma(e, cos_table()[theta], w_2)).astype(np.int64)
        sy = np.trunc(_fma(e, sin_table()[theta], h_2)).astype(np.int64)
        return sx, sy
    x_2 = (xs.astype(F) - w_2).astype(F)
    y_2 = (ys.astype(F) - h_2).astype(F)
    dist = np.sqrt(_fma(x_2, x_2, y_2 * y_2))
    with np.errstate(divide="ignore"):
        rho = dist if linear else _fmath.fast_log(dist)
    deg = np.trunc((_fmath.fast_atan2f(y_2, x_2) * (F(180) / F(np.pi))).astype(F)).astype(np.int64)
    theta = 630 - np.where(x_2 != 0, deg, np.where(y_2 < 0, 270, 90))
    theta = np.where(theta >= 360, theta - 360, theta)
    with np.errstate(invalid="ignore", over="ignore"):
        sx = np.trunc((theta.astype(F) * theta_scale_inv).astype(F))
        sy = np.trunc((rho * rho_scale_inv).astype(F))
    big = float(2**31)
    sx = np.clip(np.nan_to_num(sx, nan=-big), -big, big - 1).astype(np.int64)
    sy = np.clip(np.nan_to_num(sy, nan=-big), -big, big - 1).astype(np.int64)
    if clamp:
        sx, sy = np.clip(sx, 0, w - 1), np.clip(sy, 0, h - 1)
    return sx, sy


def remap_nearest(img, sx: np.ndarray, sy: np.ndarray):
    """In place: output pixel (x, y) takes source ``(sx, sy)`` of the original, black outside.

    The firmware's geometric corrections all copy the image, clear it and pull pixels back this way.
    """
    h, w = img._pix.shape
    return remap_flat(img, flat_sources(sx, sy, w, h))


def flat_sources(sx: np.ndarray, sy: np.ndarray, w: int, h: int) -> np.ndarray:
    """The (h*w,) flat source index of every output pixel, ``h*w`` (a black pixel) outside; read-only,
    so that a map made from the same arguments can be kept and reused (:func:`cached_map`)."""
    ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
    index = np.where(ok, sy * w + sx, h * w).astype(np.intp).reshape(-1)
    index.flags.writeable = False
    return index


def remap_flat(img, index: np.ndarray):
    """In place: pixel i takes the original's pixel ``index[i]`` (``h*w``: black), one gather."""
    pix = img._pix
    src = np.concatenate([pix.reshape(-1), np.zeros(1, pix.dtype)])
    pix[...] = np.take(src, index).reshape(pix.shape)
    img._touch()
    return img


def cached_map(make):
    """``make(*key) -> flat source index`` kept for the last few argument tuples: a script that
    corrects every frame the same way (same size, same angles) computes its map once."""
    return lru_cache(maxsize=8)(make)


@cached_map
def _polar_sources(w: int, h: int, linear: bool, reverse: bool, clamp: bool) -> np.ndarray:
    return flat_sources(*polar_map(w, h, linear, reverse, clamp), w, h)


class PolarMixin(ImageHost):
    def _polar(self, linear: bool, args, kwargs):
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        index = _polar_sources(self.width(), self.height(), linear, reverse, reverse and self._fmt == RGB565)
        return remap_flat(self, index)

    def linpolar(self, *args, **kwargs):
        """In place: the image unrolled to (angle, radius) linearly (``reverse=True``: rolled back)."""
        return self._polar(True, args, kwargs)

    def logpolar(self, *args, **kwargs):
        """In place: as ``linpolar`` with a logarithmic radius."""
        return self._polar(False, args, kwargs)
