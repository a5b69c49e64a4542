"""Geometric corrections of ``image.Image``: ``lens_corr`` ported from the firmware's arithmetic
(``rotation_corr``: ``_rotation``; ``linpolar``/``logpolar``: ``_polar``). In place; returns the image.
"""

from __future__ import annotations

import numpy as np

from . import _args
from ._polar import cached_map, flat_sources, remap_flat
from ._host import ImageHost


class GeometryMixin(ImageHost):
    def lens_corr(self, *args, **kwargs):
        """Barrel correction as ``imlib_lens_corr``: ``r = strength/diag * |p - c|``,
        ``theta = atan(r)/r`` (the firmware's polynomial atan), source ``c + int(theta * (p - c)/zoom)``,
        nearest, black outside."""
        F = np.float32
        strength = F(_args.to_float(_args.pick(args, 0, kwargs, "strength", 1.8)))
        if not strength > F(0):
            raise OSError("Strength must be > 0!")
        zoom = F(_args.to_float(_args.pick(args, 1, kwargs, "zoom", 1.0)))
        if not zoom > F(0):
            raise OSError("Zoom must be > 0!")
        return remap_flat(self, _lens_sources(self.width(), self.height(), float(strength), float(F(1.0) / zoom)))


@cached_map
def _lens_sources(w: int, h: int, strength: float, zoom: float) -> np.ndarray:
    """The flat source map of ``imlib_lens_corr`` (``zoom`` already inverted, float32 values)."""
    from . import _fmath

    F = np.float32
    hw, hh = w // 2, h // 2
    radius = F(strength) / np.sqrt(F(w * w + h * h))
    yy, xx = np.mgrid[0:h, 0:w]
    nx, ny = xx - hw, yy - hh
    r = radius * np.sqrt((nx * nx + ny * ny).astype(F))
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = np.where(r < F(1e-7), F(1.0), _fmath.fast_atanf(r) / np.where(r == 0, F(1), r)).astype(F)
    sx = hw + np.trunc(theta * (nx.astype(F) * F(zoom))).astype(np.int64)
    sy = hh + np.trunc(theta * (ny.astype(F) * F(zoom))).astype(np.int64)
    return flat_sources(sx, sy, w, h)
