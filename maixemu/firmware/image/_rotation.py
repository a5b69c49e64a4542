"""``rotation_corr`` as ``imlib_rotation_corr`` (apriltag.c) computes it: float32 matrices.

The OpenMV apriltag port compiles its ``matd`` code with ``#define double float``: the 4x4 model
``A2 * (T * ((RX * RY * RZ) * A1))`` is built and multiplied in float32 (``acc += a * b``), inverted
by ``matd_plu`` + ``matd_plu_solve`` (partial pivoting; a pivot below 1e-8 makes the matrix singular
and the image stays black), and every output pixel samples ``trunc(x' / z')``, ``trunc(y' / z')``
of the original (nearest, black outside), ``x' = fma(m00, x, fma(m01, y, m02))``. The K210 build
fuses ``a * b + c`` into ``fmadd.s`` (in ``matd_multiply``'s ``acc += a * b``, the PLU steps and the
per-pixel affine terms, whose order is the one -ffast-math reassociation gives); the float32 fused
multiply-add is reproduced by rounding the float64 result once. Measured against host
builds of the C code with the firmware's flags: 4 of 420 000 pixels differ (both with the C
library's ``cosf``/``sinf``/``tanf``, ``_fmath``). The board's newlib versions can differ by an ulp,
and an ulp of ``tanf(fov / 2)`` moves pixels whose source lands on an integer (even
``rotation_corr()`` with its defaults shifts some pixels by one).

``corners=`` multiplies T4 by ``homography_compute`` of the image corners (0, 0), (w-1, 0),
(w-1, h-1), (0, h-1) onto the four given points (``_matd``: float32 normal matrix, the port's SVD
that stops after 32 Jacobi rotations). That computation is dominated by rounding: the 9x9 matrix of
unnormalised coordinates has a condition number far beyond float32's precision, so two host builds
of the same C code (with and without FMA) already disagree on 31% of the output pixels of the
measured cases, by one pixel each, and on QVGA-sized perturbed corners their homographies can differ
by many pixels. The port disagrees with the FMA build on as many pixels as the builds disagree with
each other (1-pixel shifts; identical on most small images). The device's own result depends on its
exact instruction sequence and is not reproducible bit for bit.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from . import _args, _fmath
from ._matd import homography_compute, inverse, matmul
from ._host import ImageHost

F = np.float32


def _cdiv2(v: int) -> int:
    return int(v / 2) if v < 0 else v // 2  # C integer division by 2 (toward zero)


def transform(w: int, h: int, xr: float | np.floating, yr: float | np.floating, zr: float | np.floating,
              xt: float | np.floating, yt: float | np.floating, zoom: float | np.floating,
              fov: float | np.floating) -> np.ndarray | None:
    """T4 of imlib_rotation_corr (angles in radians, float32), or None for a singular model."""
    z = F(F(np.sqrt(F(w * w + h * h))) / F(2)) / _fmath.tanf(F(fov / F(2)))
    z_z = F(z * F(zoom))
    c, s = _fmath.cosf, _fmath.sinf
    A1 = np.array([[1, 0, _cdiv2(-w)], [0, 1, _cdiv2(-h)], [0, 0, 0], [0, 0, 1]], F)
    RX = np.array([[1, 0, 0, 0], [0, c(xr), -s(xr), 0], [0, s(xr), c(xr), 0], [0, 0, 0, 1]], F)
    RY = np.array([[c(yr), 0, -s(yr), 0], [0, 1, 0, 0], [s(yr), 0, c(yr), 0], [0, 0, 0, 1]], F)
    RZ = np.array([[c(zr), -s(zr), 0, 0], [s(zr), c(zr), 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], F)
    T = np.array([[1, 0, 0, xt], [0, 1, 0, yt], [0, 0, 1, z], [0, 0, 0, 1]], F)
    A2 = np.array([[z_z, 0, w // 2, 0], [0, z_z, h // 2, 0], [0, 0, 1, 0]], F)
    R = matmul(matmul(RX, RY), RZ)
    T3 = matmul(A2, matmul(T, matmul(R, A1)))
    return inverse(T3)


def source_map(T4: np.ndarray, w: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Source (x, y) of every output pixel: ``trunc(fma(m0, x, fma(m1, y, m2)) / z')``."""
    ys, xs = np.mgrid[0:h, 0:w]
    xf, yf = xs.astype(np.float64), ys.astype(np.float64)
    m = T4.astype(np.float64)

    def row(r):
        inner = (m[r, 1] * yf + m[r, 2]).astype(F).astype(np.float64)
        return (m[r, 0] * xf + inner).astype(F)

    X, Y, Z = row(0), row(1), row(2)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        sx, sy = np.trunc((X / Z).astype(F)), np.trunc((Y / Z).astype(F))
    big = float(2**31)
    return (np.clip(np.nan_to_num(sx, nan=-big), -big, big - 1).astype(np.int64),
            np.clip(np.nan_to_num(sy, nan=-big), -big, big - 1).astype(np.int64))


class RotationMixin(ImageHost):
    def rotation_corr(self, *args, **kwargs):
        """In place: 3D rotation (degrees), translation and zoom with perspective (``fov``)."""
        names = ("x_rotation", "y_rotation", "z_rotation", "x_translation", "y_translation", "zoom", "fov")
        defaults = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 60.0)
        xr, yr, zr, xt, yt, zoom, fov = (F(_args.to_float(_args.pick(args, i, kwargs, n, d)))
                                        for i, (n, d) in enumerate(zip(names, defaults)))
        xr, yr, zr = (F(F(v * F(math.pi)) / F(180)) for v in (xr, yr, zr))  # IM_DEG2RAD
        if not zoom > 0:
            raise OSError("Zoom must be > 0!")
        fov = F(F(fov * F(math.pi)) / F(180))
        if not (0 < fov < 180):
            raise OSError("FOV must be > 0 and < 180!")
        corners = None
        if "corners" in kwargs or len(args) > 7:  # py_helper_keyword_corner_array: 4 (x, y) points
            raw = kwargs["corners"] if "corners" in kwargs else args[7]
            corners = [[_args.to_float(v) for v in _args.fixed_array(p, 2)] for p in _args.fixed_array(raw, 4)]
        from ._polar import remap_flat

        key = tuple(float(v) for v in (xr, yr, zr, xt, yt, zoom, fov))
        index = _sources(self.width(), self.height(), key, None if corners is None else tuple(map(tuple, corners)))
        if index is None:  # singular model: the image is cleared and nothing is pulled back
            self._pix[...] = 0
            self._touch()
            return self
        return remap_flat(self, index)


@lru_cache(maxsize=8)
def _sources(w: int, h: int, params: tuple[float, ...], corners: tuple | None) -> np.ndarray | None:
    """The flat source map of one ``rotation_corr`` call (None: singular), kept for the last few
    argument tuples: a script that corrects every frame the same way builds it once."""
    from ._polar import flat_sources

    xr, yr, zr, xt, yt, zoom, fov = (F(v) for v in params)
    T4 = transform(w, h, xr, yr, zr, xt, yt, zoom, fov)
    if corners is not None:  # the source corners (0, 0), (w-1, 0), (w-1, h-1), (0, h-1) -> corners
        world = ((0, 0), (w - 1, 0), (w - 1, h - 1), (0, h - 1))
        H = homography_compute([(*wp, *cp) for wp, cp in zip(world, corners)])
        if T4 is not None:
            T4 = matmul(H, T4)
    if T4 is None:
        return None
    return flat_sources(*source_map(T4, w, h), w, h)
