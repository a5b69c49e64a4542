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

import numpy as np

from . import _args
from . import _fmath as fm
from ._pixels import MAXES, channels, keyword_mask, mask_pixels, operand, pack, planes
from ._host import ImageHost

F = np.float32


class MathOpsMixin(ImageHost):
    # ------------------------------------------------------------------ plumbing
    def _apply(self, new_chans: list[np.ndarray], mask) -> None:
        new = pack(new_chans, self._fmt)
        if mask is not None:
            new = np.where(mask_pixels(mask, self._pix.shape), new, self._pix)
        self._pix[...] = new
        self._touch()

    def _op_channels(self, other):
        self._mutable()
        return channels(self._pix, self._fmt), channels(operand(self, other), self._fmt)

    # ------------------------------------------------------------------ arithmetic
    def add(self, other, *args, **kwargs):
        """``add(image|path|color, mask=None)``: saturating per-channel sum."""
        mask = keyword_mask(args, 0, kwargs)
        a, b = self._op_channels(other)
        self._apply([np.minimum(x + y, m) for x, y, m in zip(a, b, MAXES[self._fmt])], mask)
        return self

    def sub(self, other, *args, **kwargs):
        """``sub(image|path|color, reverse=False, mask=None)``: difference clamped at 0."""
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        mask = keyword_mask(args, 1, kwargs)
        a, b = self._op_channels(other)
        self._apply([np.maximum((y - x) if reverse else (x - y), 0) for x, y in zip(a, b)], mask)
        return self

    def mul(self, other, *args, **kwargs):
        """``mul(image|path|color, invert=False, mask=None)``."""
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        mask = keyword_mask(args, 1, kwargs)
        a, b = self._op_channels(other)
        out = []
        for x, y, m in zip(a, b, MAXES[self._fmt]):
            scale, div = F(m), F(1) / F(m)
            if invert:
                # -ffast-math reassociates the C's ((S - a) * (S - b)) * (1/S) into (S - a) * ((S - b) * (1/S))
                v = scale - ((scale - x.astype(F)) * ((scale - y.astype(F)) * div))
            else:
                v = (x * y).astype(F) * div
            out.append(fm.to_int(v))
        self._apply(out, mask)
        return self

    def div(self, other, *args, **kwargs):
        """``div(image|path|color, invert=False, mod=False, mask=None)``: 0 where the divisor is 0."""
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        mod = bool(_args.to_int(_args.pick(args, 1, kwargs, "mod", False)))
        mask = keyword_mask(args, 2, kwargs)
        a, b = self._op_channels(other)
        out = []
        for x, y, m in zip(a, b, MAXES[self._fmt]):
            num, den = ((y, x) if invert else (x, y))
            num = num * m
            safe = np.where(den == 0, 1, den)
            v = np.where(den == 0, 0, (num % safe) if mod else (num // safe))  # both non-negative
            out.append(np.minimum(v, m))
        self._apply(out, mask)
        return self

    def min(self, other, *args, **kwargs):
        """``min(image|path|color, mask=None)``: per-channel minimum."""
        mask = keyword_mask(args, 0, kwargs)
        a, b = self._op_channels(other)
        self._apply([np.minimum(x, y) for x, y in zip(a, b)], mask)
        return self

    def max(self, other, *args, **kwargs):
        """``max(image|path|color, mask=None)``: per-channel maximum."""
        mask = keyword_mask(args, 0, kwargs)
        a, b = self._op_channels(other)
        self._apply([np.maximum(x, y) for x, y in zip(a, b)], mask)
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
        mask = keyword_mask(args, 1, kwargs)
        a, b = self._op_channels(other)
        beta = F(1) - alpha
        self._apply([fm.to_int(x.astype(F) * alpha + y.astype(F) * beta) for x, y in zip(a, b)], mask)
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
        luts = []
        for m in MAXES[self._fmt]:
            scale = F(m)
            div = F(1) / scale
            i = np.arange(m + 1).astype(F)
            with np.errstate(invalid="ignore", over="ignore"):
                p = fm.to_int(((fm.fast_powf(i * div, g) * contrast) + brightness) * scale)
            luts.append(np.clip(p, 0, m))
        chans = channels(self._pix, self._fmt)
        self._apply([lut[c] for lut, c in zip(luts, chans)], None)
        return self

    def negate(self):
        """``MAX - value`` per native channel."""
        self._mutable()
        self._apply([m - c for c, m in zip(channels(self._pix, self._fmt), MAXES[self._fmt])], None)
        return self

