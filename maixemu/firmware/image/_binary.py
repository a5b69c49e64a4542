"""``binary.c``: binary thresholding, invert, the ``b_*`` logic ops and binary morphology.

* ``binary(thresholds, invert, zero, mask, to_bitmap, copy)``: a pixel is "in" when *any*
  threshold's test passes, each test inverted on its own when ``invert`` (so with several
  thresholds ``invert`` is not the complement of the union). "In" pixels become white (0xFF /
  0xFFFF) and the others black, or with ``zero`` the "in" pixels are zeroed and the rest kept;
  ``mask`` limits the change (outside the mask ``zero=False`` keeps the old pixel). A BINARY image
  compares its 0/1 bits with the L bounds; ``to_bitmap`` returns the result as a BINARY image (in
  place unless ``copy``; in place needs ``w >= 4`` gray / ``w >= 2`` RGB565).
* ``b_and``/``b_nand``/``b_or``/``b_nor``/``b_xor``/``b_xnor`` (and their ``and``... aliases): in
  MaixPy-v1 the work function of every one of them is commented out (``imlib_b_and`` calls
  nothing), so the device parses the arguments, raises the same errors and leaves the image
  unchanged. The emulator does exactly that. (On BINARY images ``min``/``max``/``difference``
  compute AND/OR/XOR on the device: mathop.c's BINARY cases are built.)
* ``erode(size, threshold, mask)`` / ``dilate``: a set pixel (erode) or a clear pixel (dilate) of the
  binary view (gray > 127, RGB565 gray >= 128) counts the set pixels of its (2k+1)^2 window (edge
  pixels repeated; erode leaves the centre out) and becomes black when fewer than ``threshold`` are
  set (erode, default n-1) or white when more than ``threshold`` are (dilate, default 0). Reads
  always see the original image.
* ``open``/``close``/``top_hat``/``black_hat`` compose these with ``difference``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _args, _color
from ._core import GRAYSCALE, RGB565
from ..pixformat import BINARY
from ._lab import Threshold, any_threshold, parse_thresholds
from ._pixels import binary_max, box_sum, keyword_mask, ksize, mask_pixels, operand, to_binary
from ._host import ImageHost


def _lookup(pix: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[pix]`` (a 256-entry table for 8-bit pixels, 65536 for RGB565)."""
    return _color.lut16(pix, table) if pix.dtype == np.uint16 else _color.lut8(pix, table)


@lru_cache(maxsize=32)
def _inside_table(fmt: int, thresholds: tuple[Threshold, ...], invert: bool) -> np.ndarray:
    """uint8 0/1 of :func:`any_threshold` for every pixel value of ``fmt``: a script's thresholds
    rarely change between frames, so each pixel then costs one table lookup."""
    values = np.arange(65536 if fmt == RGB565 else 256).astype(np.uint16 if fmt == RGB565 else np.uint8)
    table = any_threshold(values, fmt, list(thresholds), invert).astype(np.uint8)
    table.flags.writeable = False
    return table


@lru_cache(maxsize=32)
def _binary_table(fmt: int, thresholds: tuple[Threshold, ...], invert: bool) -> np.ndarray:
    """What ``binary`` writes for every pixel value (no mask, no ``zero``): white inside, else black."""
    dtype = np.uint16 if fmt == RGB565 else np.uint8
    table = np.where(_inside_table(fmt, thresholds, invert) != 0, binary_max(fmt), 0).astype(dtype)
    table.flags.writeable = False
    return table


class BinaryMixin(ImageHost):
    def binary(self, thresholds, *args, **kwargs):
        """Pixels inside any (individually inverted) threshold -> white, others black (see module doc)."""
        self._mutable()
        ths = parse_thresholds(thresholds)
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        zero = bool(_args.to_int(_args.pick(args, 1, kwargs, "zero", False)))
        mask = keyword_mask(args, 2, kwargs)
        to_bitmap = bool(_args.to_int(_args.pick(args, 3, kwargs, "to_bitmap", False)))
        copy = bool(_args.to_int(_args.pick(args, 4, kwargs, "copy", False)))
        if to_bitmap and not copy and self._fmt != BINARY and self.width() < (4 if self._fmt == GRAYSCALE else 2):
            raise OSError("Can't convert to bitmap in place!")  # the bitmap's 32-bit rows must fit
        pix = self._pix
        if mask is None and not zero:
            out = _lookup(pix, _binary_table(self._fmt, tuple(ths), invert))
        else:
            inside = _lookup(pix, _inside_table(self._fmt, tuple(ths), invert)).view(bool)
            sel = np.ones(pix.shape, bool) if mask is None else mask_pixels(mask, pix.shape)
            if zero:
                out = np.where(sel & inside, 0, pix).astype(pix.dtype)
            else:
                white = np.where(inside, binary_max(self._fmt), 0).astype(pix.dtype)
                out = np.where(sel, white, pix).astype(pix.dtype)
        if to_bitmap:
            # imlib_binary into a BINARY ``out``: the in-mask bits, elsewhere COLOR_*_TO_BINARY of the
            # old pixel (zero: of the old pixel, cleared inside) — i.e. COLOR_*_TO_BINARY of ``out``
            return self._new_kind(BINARY, to_binary(out, self._fmt).astype(np.uint8), copy)
        if copy:
            return type(self)._wrap(self._fmt, out, np.zeros((3,) + out.shape, np.uint8))
        pix[...] = out
        self._touch()
        return self._alias()

    def invert(self):
        """Bitwise NOT of every stored pixel (``imlib_invert``)."""
        self._mutable()
        np.invert(self._pix, out=self._pix)
        self._touch()
        return self

    # ------------------------------------------------------------------ b_* (no-ops in MaixPy-v1)
    def _b_op(self, other, args, kwargs):
        self._mutable()
        keyword_mask(args, 0, kwargs)
        operand(self, other)  # same argument checks and errors as the device
        return self

    def b_and(self, other, *args, **kwargs):
        """Parses like OpenMV's ``b_and`` but changes nothing: MaixPy-v1's ``imlib_b_and`` is empty."""
        return self._b_op(other, args, kwargs)

    def b_nand(self, other, *args, **kwargs):
        """No-op on MaixPy-v1 (``imlib_b_nand`` is empty); arguments are still checked."""
        return self._b_op(other, args, kwargs)

    def b_or(self, other, *args, **kwargs):
        """No-op on MaixPy-v1 (``imlib_b_or`` is empty); arguments are still checked."""
        return self._b_op(other, args, kwargs)

    def b_nor(self, other, *args, **kwargs):
        """No-op on MaixPy-v1 (``imlib_b_nor`` is empty); arguments are still checked."""
        return self._b_op(other, args, kwargs)

    def b_xor(self, other, *args, **kwargs):
        """No-op on MaixPy-v1 (``imlib_b_xor`` is empty); arguments are still checked."""
        return self._b_op(other, args, kwargs)

    def b_xnor(self, other, *args, **kwargs):
        """No-op on MaixPy-v1 (``imlib_b_xnor`` is empty); arguments are still checked."""
        return self._b_op(other, args, kwargs)

    # ------------------------------------------------------------------ morphology
    def _erode_dilate(self, k: int, threshold: int, dilate: bool, mask) -> None:
        pix = self._pix
        on = to_binary(pix, self._fmt)
        acc = box_sum(on.view(np.uint8), k)
        if dilate:
            change = ~on & (acc > threshold)
        else:
            change = on & ((acc - 1) < threshold)
        if mask is not None:
            change &= mask_pixels(mask, pix.shape)
        if change.any():
            pix[change] = binary_max(self._fmt) if dilate else 0
        self._touch()

    def _morph_args(self, size, args, kwargs, default_threshold):
        k = ksize(size)
        threshold = _args.to_int(_args.pick(args, 0, kwargs, "threshold", default_threshold(k)))
        mask = keyword_mask(args, 1, kwargs)
        self._mutable()
        return k, threshold, mask

    def erode(self, size, *args, **kwargs):
        """``erode(size, threshold=(2*size+1)**2 - 1, mask=None)``."""
        k, t, mask = self._morph_args(size, args, kwargs, lambda k: (2 * k + 1) ** 2 - 1)
        self._erode_dilate(k, t, False, mask)
        return self

    def dilate(self, size, *args, **kwargs):
        """``dilate(size, threshold=0, mask=None)``."""
        k, t, mask = self._morph_args(size, args, kwargs, lambda k: 0)
        self._erode_dilate(k, t, True, mask)
        return self

    def _open(self, k, t, mask):
        self._erode_dilate(k, (2 * k + 1) ** 2 - 1 - t, False, mask)
        self._erode_dilate(k, t, True, mask)

    def _close(self, k, t, mask):
        self._erode_dilate(k, t, True, mask)
        self._erode_dilate(k, (2 * k + 1) ** 2 - 1 - t, False, mask)

    def open(self, size, *args, **kwargs):
        """Erode then dilate (``threshold`` shifts both, default 0)."""
        k, t, mask = self._morph_args(size, args, kwargs, lambda k: 0)
        self._open(k, t, mask)
        return self

    def close(self, size, *args, **kwargs):
        """Dilate then erode (``threshold`` shifts both, default 0)."""
        k, t, mask = self._morph_args(size, args, kwargs, lambda k: 0)
        self._close(k, t, mask)
        return self

    def _hat(self, size, args, kwargs, close: bool):
        k, t, mask = self._morph_args(size, args, kwargs, lambda k: 0)
        temp = type(self)._wrap(self._fmt, self._pix.copy())
        (temp._close if close else temp._open)(k, t, mask)
        self._difference_with(temp._pix, mask)
        return self

    def top_hat(self, size, *args, **kwargs):
        """The image minus its opening (``imlib_top_hat``: open a copy, then ``difference``)."""
        return self._hat(size, args, kwargs, close=False)

    def black_hat(self, size, *args, **kwargs):
        """The image minus its closing (``imlib_black_hat``)."""
        return self._hat(size, args, kwargs, close=True)

    def _mutable(self) -> None:
        """``py_helper_arg_to_image_mutable``: BINARY, GRAYSCALE and RGB565 images (always mutable)."""
        if self._fmt not in (BINARY, GRAYSCALE, RGB565):
            raise OSError("Image format is not supported!")
