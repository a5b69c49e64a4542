"""``pool.c``: ``mean_pool``/``midpoint_pool`` (in place, the image shrinks) and their ``*_pooled`` copies.

Each output pixel covers an ``x_div`` x ``y_div`` block (the remainder columns/rows are dropped):
the mean is ``sum // n`` per native channel; the midpoint is ``(min * (256 - bias) + max * bias) >> 8``
with ``bias = (int) clamp(bias * 256, 0, 256)`` (float32 product).
"""

from __future__ import annotations

import numpy as np

from . import _args
from . import _fmath as fm
from ._filter_kernels import block_pool
from ._jit import NOT_SERVED, compiled_now as compiled  # (the vectorised form until kernels are served compiled)
from ._pixels import pack, planes
from ._host import ImageHost

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
    """Per native channel (uint8), a (oh, y_div, ow, x_div) view of the whole blocks (no copy)."""
    ow, oh = img.width() // x_div, img.height() // y_div
    return [c[: oh * y_div, : ow * x_div].reshape(oh, y_div, ow, x_div) for c in planes(img._pix, img._fmt)]


def _pooled(img, x_div: int, y_div: int, midpoint: bool, bias: int) -> np.ndarray:
    """The pooled pixels: the compiled block loops, or reductions over block views."""
    ow, oh = img.width() // x_div, img.height() // y_div
    chans = []
    for plane, b in zip(planes(img._pix, img._fmt), _blocks(img, x_div, y_div)):
        out = np.empty((oh, ow), np.uint8)
        if not compiled() or block_pool.attempt(np.ascontiguousarray(plane), x_div, y_div, midpoint, bias,
                                                out) is NOT_SERVED:
            if midpoint:
                lo = b.min(axis=(1, 3)).astype(np.int32)
                hi = b.max(axis=(1, 3)).astype(np.int32)
                out = ((lo * (256 - bias) + hi * bias) >> 8).astype(np.uint8)
            else:
                out = (b.sum(axis=(1, 3), dtype=np.int64) // (x_div * y_div)).astype(np.uint8)
        chans.append(out)
    return pack(chans, img._fmt)


class PoolMixin(ImageHost):
    def _mean_pool_pix(self, x_div, y_div) -> np.ndarray:
        self._mutable()
        x_div, y_div = _divisors(self, x_div, y_div)
        return _pooled(self, x_div, y_div, False, 0)

    def _midpoint_pool_pix(self, args, kwargs) -> np.ndarray:
        self._mutable()
        if len(args) < 2:
            raise TypeError("function missing required positional arguments")
        x_div, y_div = _divisors(self, args[0], args[1])
        b = F(_args.to_float(_args.pick(args, 2, kwargs, "bias", 0.5))) * F(256)
        bias = int(fm.to_int(max(min(b, F(256)), F(0))))
        return _pooled(self, x_div, y_div, True, bias)

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
