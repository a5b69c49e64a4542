"""OpenMV per-pixel math and binary-morphology methods (add/sub/mul/div/min/max, b_and...,
erode/dilate/open/close), numpy versions of ``imlib`` ``mathop.c``/``binary.c`` semantics.

The other operand may be an image of the same size, a device path of one, or a colour (int raw
value or (r, g, b)). Arithmetic works per native channel (5/6/5 bits or gray) with saturation;
the ``b_*`` operations are bitwise on the stored pixel values.
"""

from __future__ import annotations

import numpy as np

from . import _args, _color
from ._core import GRAYSCALE, ImageBase


class MathOpsMixin:
    def _operand_fields(self, other) -> list[np.ndarray]:
        if isinstance(other, str):
            other = type(self)(other)
        if isinstance(other, ImageBase):
            if other.width() != self.width() or other.height() != self.height():
                raise OSError("Image is not the same size!")
            if other._fmt != self._fmt:
                other = other.to_grayscale(True) if self._fmt == GRAYSCALE else other.to_rgb565(True)
            return other._fields()
        c = _color.color_value(other, self._fmt)
        if self._fmt == GRAYSCALE:
            return [np.full(self._pix.shape, c, np.int64)]
        return [np.full(self._pix.shape, int(f), np.int64) for f in _color.split565(np.uint16(c))]

    def _operand_raw(self, other) -> np.ndarray:
        if isinstance(other, str):
            other = type(self)(other)
        if isinstance(other, ImageBase):
            if other.width() != self.width() or other.height() != self.height():
                raise OSError("Image is not the same size!")
            if other._fmt != self._fmt:
                other = other.to_grayscale(True) if self._fmt == GRAYSCALE else other.to_rgb565(True)
            return other._pix
        return np.full(self._pix.shape, _color.color_value(other, self._fmt), self._pix.dtype)

    def _masked_set(self, fields, mask) -> None:
        if mask is None:
            self._set_fields(fields)
            return
        keep = ~_mask_bool(mask, self._pix.shape)
        old = self._fields()
        self._set_fields([np.where(keep, o, n) for o, n in zip(old, fields)])

    def add(self, other, *args, **kwargs):
        mask = _args.pick(args, 0, kwargs, "mask", None)
        b = self._operand_fields(other)
        self._masked_set([np.minimum(a + o, m) for a, o, m in zip(self._fields(), b, self._field_max())], mask)
        return self

    def sub(self, other, *args, **kwargs):
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        mask = _args.pick(args, 1, kwargs, "mask", None)
        b = self._operand_fields(other)
        self._masked_set([np.maximum((o - a) if reverse else (a - o), 0) for a, o in zip(self._fields(), b)], mask)
        return self

    def mul(self, other, *args, **kwargs):
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        mask = _args.pick(args, 1, kwargs, "mask", None)
        b = self._operand_fields(other)
        out = []
        for a, o, m in zip(self._fields(), b, self._field_max()):
            out.append(m - ((m - a) * (m - o)) // m if invert else (a * o) // m)
        self._masked_set(out, mask)
        return self

    def div(self, other, *args, **kwargs):
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        mask = _args.pick(args, 1, kwargs, "mask", None)
        b = self._operand_fields(other)
        out = []
        for a, o, m in zip(self._fields(), b, self._field_max()):
            num, den = (o, a) if invert else (a, o)
            out.append(np.where(den == 0, m, np.minimum((num * m) // np.where(den == 0, 1, den), m)))
        self._masked_set(out, mask)
        return self

    def min(self, other, *args, **kwargs):
        mask = _args.pick(args, 0, kwargs, "mask", None)
        self._masked_set([np.minimum(a, o) for a, o in zip(self._fields(), self._operand_fields(other))], mask)
        return self

    def max(self, other, *args, **kwargs):
        mask = _args.pick(args, 0, kwargs, "mask", None)
        self._masked_set([np.maximum(a, o) for a, o in zip(self._fields(), self._operand_fields(other))], mask)
        return self

    def _bitwise(self, other, args, kwargs, fn):
        mask = _args.pick(args, 0, kwargs, "mask", None)
        res = fn(self._pix, self._operand_raw(other)).astype(self._pix.dtype)
        if mask is not None:
            res = np.where(_mask_bool(mask, self._pix.shape), res, self._pix)
        self._pix[...] = res
        self._touch()
        return self

    def b_and(self, other, *args, **kwargs):
        return self._bitwise(other, args, kwargs, lambda a, b: a & b)

    def b_nand(self, other, *args, **kwargs):
        return self._bitwise(other, args, kwargs, lambda a, b: ~(a & b))

    def b_or(self, other, *args, **kwargs):
        return self._bitwise(other, args, kwargs, lambda a, b: a | b)

    def b_nor(self, other, *args, **kwargs):
        return self._bitwise(other, args, kwargs, lambda a, b: ~(a | b))

    def b_xor(self, other, *args, **kwargs):
        return self._bitwise(other, args, kwargs, lambda a, b: a ^ b)

    def b_xnor(self, other, *args, **kwargs):
        return self._bitwise(other, args, kwargs, lambda a, b: ~(a ^ b))

    # ------------------------------------------------------------------ morphology
    def _on_mask(self) -> np.ndarray:
        g = self._pix if self._fmt == GRAYSCALE else _color.rgb565_to_gray(self._pix)
        return g > 127

    def _erode_dilate(self, ksize: int, threshold: int, dilate: bool, mask) -> None:
        on = self._on_mask().astype(np.int64)
        k = 2 * ksize + 1
        p = np.pad(on, ksize, mode="edge")
        c = np.zeros((p.shape[0] + 1, p.shape[1] + 1), np.int64)
        c[1:, 1:] = p.cumsum(0).cumsum(1)
        acc = c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]
        sel = np.ones(on.shape, bool) if mask is None else _mask_bool(mask, on.shape)
        if dilate:
            hit = sel & (acc > threshold)
            self._pix[hit] = 255 if self._fmt == GRAYSCALE else 0xFFFF
        else:
            hit = sel & ((acc - 1) < threshold)  # the centre pixel is not counted
            self._pix[hit] = 0
        self._touch()

    def erode(self, size, *args, **kwargs):
        """Clear pixels with fewer than ``threshold`` set neighbours (default: all must be set)."""
        ksize = _args.to_int(size)
        n = (2 * ksize + 1) ** 2
        threshold = _args.to_int(_args.pick(args, 0, kwargs, "threshold", n - 1))
        self._erode_dilate(ksize, threshold, False, _args.pick(args, 1, kwargs, "mask", None))
        return self

    def dilate(self, size, *args, **kwargs):
        """Set pixels with more than ``threshold`` set pixels in their window (default 0)."""
        ksize = _args.to_int(size)
        threshold = _args.to_int(_args.pick(args, 0, kwargs, "threshold", 0))
        self._erode_dilate(ksize, threshold, True, _args.pick(args, 1, kwargs, "mask", None))
        return self

    def open(self, size, *args, **kwargs):
        """Erode then dilate."""
        ksize = _args.to_int(size)
        threshold = _args.to_int(_args.pick(args, 0, kwargs, "threshold", 0))
        mask = _args.pick(args, 1, kwargs, "mask", None)
        self._erode_dilate(ksize, (2 * ksize + 1) ** 2 - 1 - threshold, False, mask)
        self._erode_dilate(ksize, threshold, True, mask)
        return self

    def close(self, size, *args, **kwargs):
        """Morphological closing: dilate then erode (OpenMV's ``close``, not a destructor)."""
        ksize = _args.to_int(size)
        threshold = _args.to_int(_args.pick(args, 0, kwargs, "threshold", 0))
        mask = _args.pick(args, 1, kwargs, "mask", None)
        self._erode_dilate(ksize, threshold, True, mask)
        self._erode_dilate(ksize, (2 * ksize + 1) ** 2 - 1 - threshold, False, mask)
        return self


def _mask_bool(mask, shape) -> np.ndarray:
    if not isinstance(mask, ImageBase):
        raise TypeError("Image expected")
    if mask._pix.shape != shape:
        raise OSError("Mask is not the same size as the image!")
    g = mask._pix if mask._fmt == GRAYSCALE else _color.rgb565_to_gray(mask._pix)
    return g > 127
