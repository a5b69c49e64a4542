"""``mathop.c``: per-pixel arithmetic with another image, a file or a colour, plus gamma and negate.

The other operand (see ``_pixels.operand``) is a path, an image of the same size and format, or a
colour (int raw value / (r, g, b)). Every op works on the native channels (gray or R5/G6/B5):

* ``add``: saturating sum; ``sub(reverse)``: difference clamped at 0; ``min``/``max``/``difference``;
* ``mul(invert)``: ``(int)(a * b * (1/MAX))`` in float32 (screen blend when ``invert``);
* ``div(invert, mod)``: ``a * MAX / b`` (0 when dividing by 0), clamped; ``mod`` takes the remainder;
* ``blend(alpha=128)``: ``(int)(a * (alpha/256) + b * (1 - alpha/256))`` in float32;
* ``replace``/``set``/``assign(hmirror, vflip, transpose, mask)``: copy the operand in, optionally
  mirrored/flipped/transposed (the image's width and height swap for ``transpose``);
* ``gamma_corr(gamma, contrast, brightness)``: a per-channel table built with the firmware's
  ``fast_powf`` (a bit-pattern approximation, not ``pow``);
* ``negate``: ``MAX - value`` per channel.

``mask`` (an image, any format) limits every op to its white pixels, as ``image_get_mask_pixel``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from . import _args
from . import _fmath as fm
from ..pixformat import GRAYSCALE, RGB565
from ._channel_tables import ChannelOp, pairwise, pointwise565
from ._pixels import MAXES, channels, keyword_mask, mask_pixels, operand, pack, planes
from ._host import ImageHost

F = np.float32


# ---------------------------------------------------------------------- the channel functions
def _add(x, y, m):
    return np.minimum(x + y, m)


def _sub(x, y, m):
    return np.maximum(x - y, 0)


def _rsub(x, y, m):
    return np.maximum(y - x, 0)


def _mul(x, y, m):
    return fm.to_int((x * y).astype(F) * (F(1) / F(m)))


def _screen(x, y, m):
    # -ffast-math reassociates the C's ((S - a) * (S - b)) * (1/S) into (S - a) * ((S - b) * (1/S))
    scale, div = F(m), F(1) / F(m)
    return fm.to_int(scale - ((scale - x.astype(F)) * ((scale - y.astype(F)) * div)))


@lru_cache(maxsize=4)
def _divider(invert: bool, mod: bool) -> ChannelOp:
    def div(x, y, m):
        num, den = ((y, x) if invert else (x, y))
        num = num * m
        safe = np.where(den == 0, 1, den)
        v = np.where(den == 0, 0, (num % safe) if mod else (num // safe))  # both non-negative
        return np.minimum(v, m)

    return div


def _min(x, y, m):
    return np.minimum(x, y)


def _max(x, y, m):
    return np.maximum(x, y)


@lru_cache(maxsize=257)
def _blender(alpha: np.float32) -> ChannelOp:
    beta = F(1) - alpha

    def blend(x, y, m):
        return fm.to_int(x.astype(F) * alpha + y.astype(F) * beta)

    return blend


def _gamma_luts(fmt: int, g: np.float32, contrast: np.float32, brightness: np.float32) -> list[np.ndarray]:
    """``imlib_gamma_corr``'s per-channel tables, ``fast_powf`` as the firmware's."""
    luts = []
    for m in MAXES[fmt]:
        scale = F(m)
        div = F(1) / scale
        i = np.arange(m + 1).astype(F)
        with np.errstate(invalid="ignore", over="ignore"):
            p = fm.to_int(((fm.fast_powf(i * div, g) * contrast) + brightness) * scale)
        luts.append(np.clip(p, 0, m))
    return luts


@lru_cache(maxsize=8)
def _gamma_table565(g: np.float32, contrast: np.float32, brightness: np.float32) -> np.ndarray:
    """Every RGB565 pixel's ``gamma_corr`` (the channel tables applied to all 65536 values), kept
    per parameters: a frame is then one gather."""
    table = pointwise565(np.arange(65536, dtype=np.uint16), _gamma_luts(RGB565, g, contrast, brightness))
    table.setflags(write=False)
    return table


class MathOpsMixin(ImageHost):
    if TYPE_CHECKING:  # what the image (``_core.ImageBase``) provides to its mixins
        _pix: np.ndarray
        _fmt: int

        def _touch(self) -> None: ...

        def _mutable(self) -> None: ...

        def _replace(self, fmt: int, pix: np.ndarray, *, keep_ai: bool) -> None: ...

    # ------------------------------------------------------------------ plumbing
    def _apply(self, new_chans: list[np.ndarray], mask) -> None:
        self._store(pack(new_chans, self._fmt), mask)

    def _store(self, new: np.ndarray, mask) -> None:
        if mask is not None:
            new = np.where(mask_pixels(mask, self._pix.shape), new, self._pix)
        self._pix[...] = new
        self._touch()

    def _pairwise(self, other, mask, op: ChannelOp) -> None:
        """This image's pixels become ``op`` of theirs and the operand's, channel by channel."""
        self._mutable()
        b = operand(self, other)
        self._store(pairwise(self._pix, b, self._fmt, op), mask)  # tables of op: by_channels' bits

    # ------------------------------------------------------------------ arithmetic
    def add(self, other, *args, **kwargs):
        """``add(image|path|color, mask=None)``: saturating per-channel sum."""
        self._pairwise(other, keyword_mask(args, 0, kwargs), _add)
        return self

    def sub(self, other, *args, **kwargs):
        """``sub(image|path|color, reverse=False, mask=None)``: difference clamped at 0."""
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        self._pairwise(other, keyword_mask(args, 1, kwargs), _rsub if reverse else _sub)
        return self

    def mul(self, other, *args, **kwargs):
        """``mul(image|path|color, invert=False, mask=None)``."""
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        self._pairwise(other, keyword_mask(args, 1, kwargs), _screen if invert else _mul)
        return self

    def div(self, other, *args, **kwargs):
        """``div(image|path|color, invert=False, mod=False, mask=None)``: 0 where the divisor is 0."""
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        mod = bool(_args.to_int(_args.pick(args, 1, kwargs, "mod", False)))
        self._pairwise(other, keyword_mask(args, 2, kwargs), _divider(invert, mod))
        return self

    def min(self, other, *args, **kwargs):
        """``min(image|path|color, mask=None)``: per-channel minimum."""
        self._pairwise(other, keyword_mask(args, 0, kwargs), _min)
        return self

    def max(self, other, *args, **kwargs):
        """``max(image|path|color, mask=None)``: per-channel maximum."""
        self._pairwise(other, keyword_mask(args, 0, kwargs), _max)
        return self

    def difference(self, other, *args, **kwargs):
        """``difference(image|path|color, mask=None)``: per-channel absolute difference."""
        mask = keyword_mask(args, 0, kwargs)
        self._mutable()
        self._difference_with(operand(self, other), mask)
        return self

    def _difference_with(self, other_pix: np.ndarray, mask) -> None:
        a = planes(self._pix, self._fmt)
        b = planes(other_pix, self._fmt)
        # |a - b| of two uint8 fields is a uint8 again (max - min, no widening needed)
        self._apply([np.maximum(x, y) - np.minimum(x, y) for x, y in zip(a, b)], mask)

    def blend(self, other, *args, **kwargs):
        """``blend(image|path|color, alpha=128, mask=None)``: ``alpha/256`` of this image."""
        alpha = F(_args.to_int(_args.pick(args, 0, kwargs, "alpha", 128))) / F(256.0)
        if not (F(0) <= alpha <= F(1)):
            raise OSError("Error: 0 <= alpha <= 256!")
        self._pairwise(other, keyword_mask(args, 1, kwargs), _blender(alpha))
        return self

    # ------------------------------------------------------------------ replace / set / assign
    def replace(self, *args, **kwargs):
        """``replace(image|path|color=self, hmirror=False, vflip=False, transpose=False, mask=None)``."""
        self._mutable()
        other = args[0] if args else self
        rest = args[1:]
        hmirror = bool(_args.to_int(_args.pick(rest, 0, kwargs, "hmirror", False)))
        vflip = bool(_args.to_int(_args.pick(rest, 1, kwargs, "vflip", False)))
        transpose = bool(_args.to_int(_args.pick(rest, 2, kwargs, "transpose", False)))
        mask = keyword_mask(rest, 3, kwargs)
        src = operand(self, other).copy()  # a copy: replacing an image with itself reads the old pixels
        h, w = src.shape
        sel = np.ones((h, w), bool) if mask is None else mask_pixels(mask, (h, w))
        # output row r, column i <- source row (h-1-r if vflip else r), column (w-1-i if hmirror else i),
        # where the mask is read at (output row r, that source column)
        if vflip:
            src = src[::-1]
        if hmirror:
            src, sel = src[:, ::-1], sel[:, ::-1]
        if transpose:
            out = self._pix.reshape(-1)[: w * h].reshape(w, h).copy()
            out[sel.T] = src.T[sel.T]
            self._replace(self._fmt, out, keep_ai=True)
        else:
            self._pix[sel] = src[sel]
            self._touch()
        return self

    set = replace
    assign = replace

    # ------------------------------------------------------------------ point ops
    def gamma_corr(self, *args, **kwargs):
        """``gamma_corr(gamma=1.0, contrast=1.0, brightness=0.0)`` with the firmware's ``fast_powf``."""
        self._mutable()
        gamma = F(_args.to_float(_args.pick(args, 0, kwargs, "gamma", 1.0)))
        contrast = F(_args.to_float(_args.pick(args, 1, kwargs, "contrast", 1.0)))
        brightness = F(_args.to_float(_args.pick(args, 2, kwargs, "brightness", 0.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            g = F(1.0) / gamma if gamma != 0 else F(0)  # IM_DIV(1.0, gamma)
        if self._fmt == RGB565:
            self._store(_gamma_table565(g, contrast, brightness)[self._pix], None)
        else:
            luts = _gamma_luts(self._fmt, g, contrast, brightness)
            self._apply([lut[c] for lut, c in zip(luts, channels(self._pix, self._fmt))], None)
        return self

    def negate(self):
        """``MAX - value`` per native channel."""
        self._mutable()
        if self._fmt in (RGB565, GRAYSCALE):  # every bit belongs to a field: MAX - v = v ^ MAX in each
            np.bitwise_xor(self._pix, self._pix.dtype.type(0xFFFF if self._fmt == RGB565 else 0xFF), out=self._pix)
            self._touch()
        else:
            self._apply([m - c for c, m in zip(channels(self._pix, self._fmt), MAXES[self._fmt])], None)
        return self

