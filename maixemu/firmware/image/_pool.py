"""``pool.c``: ``mean_pool``/``midpoint_pool`` (in place, the image shrinks) and their ``*_pooled`` copies.

Each output pixel covers an ``x_div`` x ``y_div`` block (the remainder columns/rows are dropped):
the mean is ``sum // n`` per native channel; the midpoint is ``(min * (256 - bias) + max * bias) >> 8``
with ``bias = (int) clamp(bias * 256, 0, 256)`` (float32 product).
"""

from __future__ import annotations

import numpy as np

from . import _args
from . import _fmath as fm
from ._pixels import channels, pack

F = np.float32


def _divisors(img, x_div, y_div) -> tuple[int, int]:
    x_div = _args.to_int(x_div)
    if x_div < 1:
        raise OSError("Width divisor must be greater than >= 1")
    if x_div > img.width():
        raise OSError("Width divisor must be less than <= img width")
    y_div = _args.to_int(y_div)
    if y_div < 1:
        raise OSError("Height divisor must be greater than >= 1")
    if y_div > img.height():
        raise OSError("Height divisor must be less than <= img height")
    return x_div, y_div


def _blocks(img, x_div: int, y_div: int) -> list[np.ndarray]:
    ow, oh = img.width() // x_div, img.height() // y_div
    out = []
    for c in channels(img._pix, img._fmt):
        b = c[: oh * y_div, : ow * x_div].reshape(oh, y_div, ow, x_div).transpose(0, 2, 1, 3)
        out.append(b.reshape(oh, ow, -1))
    return out


class PoolMixin:
    def _mean_pool_pix(self, x_div, y_div) -> np.ndarray:
        self._mutable()
        x_div, y_div = _divisors(self, x_div, y_div)
        n = x_div * y_div
        return pack([b.sum(axis=2) // n for b in _blocks(self, x_div, y_div)], self._fmt)

    def _midpoint_pool_pix(self, args, kwargs) -> np.ndarray:
        self._mutable()
        if len(args) < 2:
            raise TypeError("function missing required positional arguments")
        x_div, y_div = _divisors(self, args[0], args[1])
        b = F(_args.to_float(_args.pick(args, 2, kwargs, "bias", 0.5))) * F(256)
        bias = int(fm.to_int(max(min(b, F(256)), F(0))))
        return pack([(blk.min(axis=2) * (256 - bias) + blk.max(axis=2) * bias) >> 8
                     for blk in _blocks(self, x_div, y_div)], self._fmt)

    def mean_pool(self, x_div, y_div):
        """In place: the image becomes (w // x_div) x (h // y_div) block means."""
        self._replace(self._fmt, self._mean_pool_pix(x_div, y_div), keep_ai=True)
        return self

    def mean_pooled(self, x_div, y_div):
        """A new image of the block means."""
        return type(self)._wrap(self._fmt, self._mean_pool_pix(x_div, y_div))

    def midpoint_pool(self, *args, **kwargs):
        """``midpoint_pool(x_div, y_div, bias=0.5)`` in place."""
        self._replace(self._fmt, self._midpoint_pool_pix(args, kwargs), keep_ai=True)
        return self

    def midpoint_pooled(self, *args, **kwargs):
        """``midpoint_pooled(x_div, y_div, bias=0.5)``: a new image."""
        return type(self)._wrap(self._fmt, self._midpoint_pool_pix(args, kwargs))
