"""OpenMV filters of ``image.Image`` (maixpy-api.md §2.8): ``binary`` and ``mean`` as the
firmware's filter.c/binary.c compute them, the others as numpy/OpenCV approximations.

All work in place on the pixel buffer (the AI buffer goes stale) and return the image. The channel
helpers here (``_fields``/``_set_fields``/``_store8``) are shared by the other mixins.
"""

from __future__ import annotations

import numpy as np

from . import _args, _color, _lab
from ._core import GRAYSCALE


class FilterMixin:
    # ------------------------------------------------------------------ channel helpers
    def _fields(self) -> list[np.ndarray]:
        """Native channels: [R5, G6, B5] (RGB565) or [gray], as int arrays."""
        if self._fmt == GRAYSCALE:
            return [self._pix.astype(np.int64)]
        return [f.astype(np.int64) for f in _color.split565(self._pix)]

    def _field_max(self) -> list[int]:
        return [255] if self._fmt == GRAYSCALE else [31, 63, 31]

    def _set_fields(self, fields: list[np.ndarray]) -> None:
        if self._fmt == GRAYSCALE:
            self._pix[...] = np.clip(fields[0], 0, 255).astype(np.uint8)
        else:
            r, g, b = (np.clip(f, 0, m) for f, m in zip(fields, (31, 63, 31)))
            self._pix[...] = _color.pack565(r, g, b)
        self._touch()

    def _rgb8_or_gray(self) -> np.ndarray:
        return self._pix.copy() if self._fmt == GRAYSCALE else self._rgb888()

    def _store8(self, arr: np.ndarray) -> None:
        """Store an 8-bit gray or (H, W, 3) RGB array back through the firmware's tables."""
        arr = np.clip(arr, 0, 255).astype(np.uint8)
        if self._fmt == GRAYSCALE:
            self._pix[...] = arr if arr.ndim == 2 else _color.rgb888_to_gray(arr)
        else:
            self._pix[...] = _color.rgb888_to_565(arr if arr.ndim == 3 else np.repeat(arr[..., None], 3, 2))
        self._touch()

    def binary(self, thresholds, *args, **kwargs):
        """Pixels inside any threshold -> white, others -> black (``zero=True``: pixels inside are
        set to 0 and the others kept); ``invert`` flips the test; ``copy=True`` returns a new image."""
        invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
        zero = bool(_args.to_int(_args.pick(args, 1, kwargs, "zero", False)))
        mask_img = _args.pick(args, 2, kwargs, "mask", None)
        to_bitmap = bool(_args.to_int(kwargs.pop("to_bitmap", False)))
        copy = bool(_args.to_int(kwargs.pop("copy", False)))
        if to_bitmap:
            raise NotImplementedError("image.Image.binary(to_bitmap=True) is not emulated yet")
        ths = _lab.parse_thresholds(thresholds, self._fmt)
        inside = np.zeros(self._pix.shape, bool)
        for th in ths:
            inside |= _lab.threshold_mask(self._pix, self._fmt, th)
        inside ^= invert
        target = self.copy() if copy else self
        white = 255 if self._fmt == GRAYSCALE else 0xFFFF
        sel = np.ones_like(inside) if mask_img is None else _mask_of(mask_img, inside.shape)
        if zero:  # binary.c: pixels that pass are zeroed, the others kept
            target._pix[sel & inside] = 0
        else:
            target._pix[sel] = np.where(inside, white, 0)[sel]
        target._touch()
        return target

    def mean(self, size, *args, **kwargs):
        """Box mean over (2*size+1)^2 per native channel (filter.c: edges replicated, result
        ``int(sum * (1.0f/n))``); ``threshold=True``: white where ``mean - offset < pixel``
        (``^ invert``), black elsewhere (compared on luminance for RGB565)."""
        r = _args.to_int(size)
        threshold = bool(_args.to_int(_args.pick(args, 0, kwargs, "threshold", False)))
        offset = _args.to_int(_args.pick(args, 1, kwargs, "offset", 0))
        invert = bool(_args.to_int(_args.pick(args, 2, kwargs, "invert", False)))
        n = (2 * r + 1) ** 2
        over_n = np.float32(1.0) / np.float32(n)
        fields = self._fields()
        means = []
        for f in fields:
            p = np.pad(f, r, mode="edge")
            c = np.zeros((p.shape[0] + 1, p.shape[1] + 1), np.int64)
            c[1:, 1:] = p.cumsum(0).cumsum(1)
            k = 2 * r + 1
            s_ = c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]
            means.append(np.trunc(s_.astype(np.float32) * over_n).astype(np.int64))
        if threshold:
            self._adaptive(fields, means, offset, invert)
        else:
            self._set_fields(means)
        return self

    def _adaptive(self, fields, filtered, offset, invert) -> None:
        """filter.c's adaptive threshold: white where ``(filtered - offset) < pixel`` (^ invert)."""
        if self._fmt == GRAYSCALE:
            g, m = fields[0], filtered[0]
        else:
            g = _color.rgb565_to_gray(self._pix).astype(np.int64)
            m = _color.rgb565_to_gray(_color.pack565(*(np.clip(f, 0, mx) for f, mx in
                                                        zip(filtered, (31, 63, 31))))).astype(np.int64)
        on = ((m - offset) < g) ^ invert
        self._pix[...] = np.where(on, 255 if self._fmt == GRAYSCALE else 0xFFFF, 0)
        self._touch()

    def _window_op(self, size: int, fn) -> list[np.ndarray]:
        from numpy.lib.stride_tricks import sliding_window_view

        k = 2 * size + 1
        out = []
        for f in self._fields():
            padded = np.pad(f, size, mode="edge")
            win = sliding_window_view(padded, (k, k))
            out.append(fn(win.reshape(win.shape[0], win.shape[1], -1)))
        return out

    def median(self, size, *args, **kwargs):
        """Percentile filter (default median) per native channel; edges replicated (approx.)."""
        size = _args.to_int(size)
        pct = _args.to_float(_args.pick(args, 0, kwargs, "percentile", 0.5))
        threshold = bool(_args.to_int(_args.pick(args, 1, kwargs, "threshold", False)))
        offset = _args.to_int(_args.pick(args, 2, kwargs, "offset", 0))
        invert = bool(_args.to_int(_args.pick(args, 3, kwargs, "invert", False)))
        n = (2 * size + 1) ** 2
        idx = min(n - 1, max(0, int(pct * (n - 1) + 0.5)))
        res = self._window_op(size, lambda win: np.partition(win, idx, axis=2)[:, :, idx])
        if threshold:
            self._adaptive(self._fields(), res, offset, invert)
        else:
            self._set_fields(res)
        return self

    def mode(self, size, *args, **kwargs):
        """Most frequent value in the window per native channel (approx. edges)."""
        size = _args.to_int(size)

        def _mode(win):
            s = np.sort(win, axis=2)
            best = s[:, :, 0].copy()
            best_n = np.ones(best.shape, np.int64)
            run = np.ones(best.shape, np.int64)
            for i in range(1, s.shape[2]):
                same = s[:, :, i] == s[:, :, i - 1]
                run = np.where(same, run + 1, 1)
                better = run > best_n
                best = np.where(better, s[:, :, i], best)
                best_n = np.where(better, run, best_n)
            return best

        self._set_fields(self._window_op(size, _mode))
        return self

    def midpoint(self, size, *args, **kwargs):
        """``bias*max + (1-bias)*min`` over the window per native channel."""
        size = _args.to_int(size)
        bias = _args.to_float(_args.pick(args, 0, kwargs, "bias", 0.5))
        res = self._window_op(size, lambda win: (win.max(axis=2) * bias + win.min(axis=2) * (1 - bias)).astype(np.int64))
        self._set_fields(res)
        return self

    def gaussian(self, size, *args, **kwargs):
        """Gaussian blur with a (2*size+1) binomial-like kernel (OpenCV, approx.)."""
        import cv2

        size = _args.to_int(size)
        unsharp = bool(_args.to_int(_args.pick(args, 0, kwargs, "unsharp", False)))
        k = 2 * size + 1
        src = self._rgb8_or_gray().astype(np.float32)
        blur = cv2.GaussianBlur(src, (k, k), 0)
        self._store8(np.rint(2 * src - blur if unsharp else blur))
        return self

    def laplacian(self, size, *args, **kwargs):
        """Laplacian edge filter (``sharpen=True`` adds it back to the image) (OpenCV, approx.)."""
        import cv2

        size = _args.to_int(size)
        sharpen = bool(_args.to_int(_args.pick(args, 0, kwargs, "sharpen", False)))
        k = min(31, 2 * size + 1)
        src = self._rgb8_or_gray().astype(np.float32)
        lap = cv2.Laplacian(src, cv2.CV_32F, ksize=k if k > 1 else 1)
        self._store8(np.rint(src - lap if sharpen else np.abs(lap)))
        return self

    def bilateral(self, size, *args, **kwargs):
        import cv2

        size = _args.to_int(size)
        color_sigma = _args.to_float(_args.pick(args, 0, kwargs, "color_sigma", 0.1))
        space_sigma = _args.to_float(_args.pick(args, 1, kwargs, "space_sigma", 1.0))
        src = self._rgb8_or_gray()
        self._store8(cv2.bilateralFilter(src, 2 * size + 1, color_sigma * 255, space_sigma))
        return self

    def histeq(self, *args, **kwargs):
        """Histogram equalisation (of the luminance for RGB565) (OpenCV, approx.)."""
        import cv2

        adaptive = bool(_args.to_int(_args.pick(args, 0, kwargs, "adaptive", False)))
        clip = _args.to_float(_args.pick(args, 1, kwargs, "clip_limit", -1))
        src = self._rgb8_or_gray()

        def eq(ch):
            if adaptive:
                return cv2.createCLAHE(clipLimit=clip if clip > 0 else 40.0, tileGridSize=(8, 8)).apply(ch)
            return cv2.equalizeHist(ch)

        if src.ndim == 2:
            self._store8(eq(src))
        else:
            ycc = cv2.cvtColor(src, cv2.COLOR_RGB2YCrCb)
            ycc[:, :, 0] = eq(ycc[:, :, 0])
            self._store8(cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB))
        return self

    def gamma_corr(self, *args, **kwargs):
        """``v' = (v/max)^(1/gamma) * contrast + brightness`` per native channel (OpenMV formula)."""
        gamma = _args.to_float(_args.pick(args, 0, kwargs, "gamma", 1.0))
        contrast = _args.to_float(_args.pick(args, 1, kwargs, "contrast", 1.0))
        brightness = _args.to_float(_args.pick(args, 2, kwargs, "brightness", 0.0))
        g = 1.0 / gamma if gamma else 0.0
        out = []
        for f, mx in zip(self._fields(), self._field_max()):
            v = np.power(f / mx, g) * contrast + brightness
            out.append(np.rint(np.clip(v, 0, 1) * mx).astype(np.int64))
        self._set_fields(out)
        return self

    def negate(self):
        """``max - v`` per native channel (5/6-bit fields): a bitwise NOT of the stored pixel."""
        return self.invert()

    def difference(self, other, *args, **kwargs):
        """Per-channel absolute difference with another image (or a path) of the same size."""
        from ._core import ImageBase

        if isinstance(other, str):
            other = type(self)(other)
        if not isinstance(other, ImageBase):
            raise TypeError("Image expected")
        if other.width() != self.width() or other.height() != self.height():
            raise OSError("Images must be the same size!")
        if other._fmt != self._fmt:
            other = other.to_grayscale(True) if self._fmt == GRAYSCALE else other.to_rgb565(True)
        self._set_fields([np.abs(a - b) for a, b in zip(self._fields(), other._fields())])
        return self

def _mask_of(mask_img, shape) -> np.ndarray:
    m = mask_img._pix
    if m.shape != shape:
        raise OSError("Mask is not the same size as the image!")
    g = m if mask_img._fmt == GRAYSCALE else _color.rgb565_to_gray(m)
    return g > 127


def _pool_divs(img, x_div, y_div) -> tuple[int, int]:
    x_div, y_div = _args.to_int(x_div), _args.to_int(y_div)
    if x_div < 1:
        raise OSError("Width divisor must be greater than >= 1")
    if x_div > img.width():
        raise OSError("Width divisor must be less than <= img width")
    if y_div < 1:
        raise OSError("Height divisor must be greater than >= 1")
    if y_div > img.height():
        raise OSError("Height divisor must be less than <= img height")
    return x_div, y_div


class PoolMixin:
    """``mean_pool``/``midpoint_pool`` (in place, the image shrinks) and their ``*_pooled`` copies,
    per native channel over ``x_div`` x ``y_div`` blocks as in the firmware's pool.c."""

    def _pooled(self, x_div: int, y_div: int, fn) -> np.ndarray:
        ow, oh = self.width() // x_div, self.height() // y_div
        out = []
        for f in self._fields():
            blocks = f[: oh * y_div, : ow * x_div].reshape(oh, y_div, ow, x_div).transpose(0, 2, 1, 3)
            out.append(fn(blocks.reshape(oh, ow, -1)))
        if self._fmt == GRAYSCALE:
            return out[0].astype(np.uint8)
        return _color.pack565(*(np.clip(o, 0, m) for o, m in zip(out, (31, 63, 31))))

    def _mean_pool_pix(self, x_div, y_div):
        x_div, y_div = _pool_divs(self, x_div, y_div)
        return self._pooled(x_div, y_div, lambda b: b.sum(axis=2) // (x_div * y_div))

    def _midpoint_pool_pix(self, args, kwargs):
        x_div, y_div = _pool_divs(self, args[0], args[1])
        bias = int(max(min(_args.to_float(_args.pick(args, 2, kwargs, "bias", 0.5)) * 256, 256), 0))
        return self._pooled(x_div, y_div,
                            lambda b: (b.min(axis=2) * (256 - bias) + b.max(axis=2) * bias) >> 8)

    def mean_pool(self, x_div, y_div):
        self._replace(self._fmt, self._mean_pool_pix(x_div, y_div), keep_ai=True)
        return self

    def mean_pooled(self, x_div, y_div):
        return type(self)._wrap(self._fmt, self._mean_pool_pix(x_div, y_div))

    def midpoint_pool(self, *args, **kwargs):
        self._replace(self._fmt, self._midpoint_pool_pix(args, kwargs), keep_ai=True)
        return self

    def midpoint_pooled(self, *args, **kwargs):
        return type(self)._wrap(self._fmt, self._midpoint_pool_pix(args, kwargs))
