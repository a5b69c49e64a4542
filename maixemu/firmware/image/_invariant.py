"""``chrominvar``, ``illuminvar`` and ``remove_shadows`` (MaixPy-v1 ``omv/img/shadow_removal.c``).

All three need an RGB565 image (``py_helper_arg_to_image_color``: others raise ``OSError("Image
format is not supported!")``) and work in place.

* ``chrominvar``: each channel's linear value (``xyz_table``) over their sum, times 255, truncated.
* ``illuminvar``: the Finlayson/Drew log-chromaticity projection the firmware computes per pixel
  (``IMLIB_ENABLE_INVARIANT_TABLE`` is off in this build) with its ``fast_cbrtf``/``fast_log``/
  ``fast_expf``. Both are functions of the 16-bit pixel, so they are computed once per value into a
  65536-entry table, in float32 in the C code's order without fused multiply-adds (a K210 build that
  fuses them may differ in the last bit of a few entries).
* ``remove_shadows(other)`` with another image, a file path (BMP/PPM, read as ``imlib_image_operation``
  reads them) or a colour: in the firmware both the image's and the reference's "cmin" are computed
  with ``IM_MAX`` (so hue and saturation differences are always 0 and every window passes), which
  leaves: a pixel becomes the reference pixel when ``0.3 < V(img) / V(other) < 1.0`` (V = the largest
  8-bit channel, float32 ratio), else it is kept. ``remove_shadows()`` without a reference raises
  ``NotImplementedError``: its last step is ``imlib_median_filter(img, 2, 12, ...)`` with a
  percentile of 12, which indexes entry 288 of a 25-entry window — the board reads whatever memory
  follows, so there is no defined result to reproduce.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _color, _fmath, _kinds, _tables
from ._core import RGB565, ImageBase
from ._host import ImageHost

F = np.float32


def _channels() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r5, g6, b5 = _color.split565(np.arange(65536, dtype=np.uint16))
    return _color.T5TO8[r5], _color.T6TO8[g6], _color.T5TO8[b5]


def _to_565(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``int(clamp(v * 255, 0, 255))`` per channel, then COLOR_R8_G8_B8_TO_RGB565 (rounding tables)."""
    def to8(v):
        return np.clip(np.nan_to_num(v * F(255.0), nan=0.0), 0, 255).astype(F).astype(np.int64)

    return _color.pack565(_color.T8TO5[to8(r)], _color.T8TO6[to8(g)], _color.T8TO5[to8(b)])


@lru_cache(maxsize=1)
def chrominvar_table() -> np.ndarray:
    xyz = _tables.xyz_table()
    r8, g8, b8 = _channels()
    r, g, b = xyz[r8], xyz[g8], xyz[b8]
    total = (r + g + b).astype(F)
    pos = total > 0
    inv = np.where(pos, F(1.0) / np.where(pos, total, F(1)), F(0)).astype(F)
    return _to_565(np.where(pos, r * inv, F(0)), np.where(pos, g * inv, F(0)), np.where(pos, b * inv, F(0)))


@lru_cache(maxsize=1)
def illuminvar_table() -> np.ndarray:
    xyz = _tables.xyz_table()
    r8, g8, b8 = _channels()
    r, g, b = (xyz[c] + F(1.0) for c in (r8, g8, b8))
    rs = (r * F(0.9968) + g * F(0.0228) + b * F(0.0015)).astype(F)
    gs = (r * F(-0.0071) + g * F(0.9933) + b * F(0.0146)).astype(F)
    bs = (r * F(0.0103) + g * F(-0.0161) + b * F(0.9839)).astype(F)
    avg = (rs * gs * bs).astype(F)
    avg = np.where(avg > 0, _fmath.fast_cbrtf(np.where(avg > 0, avg, F(1))), F(0)).astype(F)
    pos = avg > 0
    inv = np.where(pos, F(1.0) / np.where(pos, avg, F(1)), F(0)).astype(F)
    rd, gd, bd = (np.where(pos, c * inv, F(0)).astype(F) for c in (rs, gs, bs))

    def log_or_0(v):
        return np.where(v > 0, _fmath.fast_log(np.where(v > 0, v, F(1))), F(0)).astype(F)

    rl, gl, bl = log_or_0(rd), log_or_0(gd), log_or_0(bd)
    chi_x = (rl * F(0.7071) + gl * F(-0.7071) + bl * F(0.0)).astype(F)
    chi_y = (rl * F(0.4082) + gl * F(0.4082) + bl * F(-0.8164)).astype(F)
    ex, ey = F(0.9326), F(-0.3609)
    p00, p01, p10, p11 = ex * ex, ex * ey, ey * ex, ey * ey
    xx = (p00 * chi_x + p01 * chi_y).astype(F)
    xy = (p10 * chi_x + p11 * chi_y).astype(F)
    rc = (xx * F(0.7071) + xy * F(0.4082)).astype(F)
    gc = (xx * F(-0.7071) + xy * F(0.4082)).astype(F)
    bc = (xx * F(0.0) + xy * F(-0.8164)).astype(F)
    ri, gi, bi = _fmath.fast_expf(rc), _fmath.fast_expf(gc), _fmath.fast_expf(bc)
    total = (ri + gi + bi).astype(F)
    pos = total > 0
    inv = np.where(pos, F(1.0) / np.where(pos, total, F(1)), F(0)).astype(F)
    return _to_565(*(np.where(pos, c * inv, F(0)).astype(F) for c in (ri, gi, bi)))


def _max_channel(p: np.ndarray) -> np.ndarray:
    r, g, b = (c.astype(np.int64) for c in np.moveaxis(_color.rgb565_to_888(p), -1, 0))
    return np.maximum(np.maximum(r, g), b).astype(F)


class InvariantMixin(ImageHost):
    def chrominvar(self):
        """In place: chromaticity (each linear channel over the sum of the three)."""
        self._pix[...] = chrominvar_table()[self._pix]
        self._touch()
        return self

    def illuminvar(self):
        """In place: the illumination-invariant colour of each pixel."""
        self._pix[...] = illuminvar_table()[self._pix]
        self._touch()
        return self

    def remove_shadows(self, *args):
        """``remove_shadows(other)``: see the module docstring (keywords: TypeError, as on the device)."""
        if len(args) > 1:
            raise TypeError(f"function expected at most 2 arguments, got {len(args) + 1}")
        if not args:
            raise NotImplementedError(
                "image.Image.remove_shadows() without a reference image is not emulated: the firmware's "
                "last step (median filter with percentile 12) reads past its window buffer, so its result "
                "is undefined; pass a shadow-free reference image (or path) as the board's other mode does")
        other = args[0]
        if isinstance(other, str):
            from ._imageio import read_operand

            ref = read_operand(other, self)
        elif isinstance(other, ImageBase):
            if other._fmt != RGB565:
                raise OSError(_kinds.NOT_SUPPORTED)
            if other.width() != self.width() or other.height() != self.height():
                raise OSError("Images not equal!")
            ref = other._pix
        else:  # py_helper_keyword_color: an int is the raw value, else an (r, g, b) tuple
            ref = np.full(self._pix.shape, _color.color_value(other, RGB565), np.uint16)
        img_v, other_v = _max_channel(self._pix), _max_channel(ref)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = (img_v / other_v).astype(F)
        take = (ratio > F(0.3)) & (ratio < F(1.0))
        self._pix[...] = np.where(take, ref, self._pix)
        self._touch()
        return self
