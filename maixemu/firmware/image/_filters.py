"""Filters and statistics (maixpy-api.md §2.8): K210 additions from the firmware source (``conv3``,
``strech_char``, ``stretch``) and OpenMV filters as numpy/OpenCV approximations.

All work in place on the pixel buffer (the AI buffer goes stale) and return the image, except where
the firmware returns ``None`` (``conv3``, ``strech_char``, ``stretch``).
"""

from __future__ import annotations

import math

import numpy as np

from . import _args, _color, _lab
from ._core import GRAYSCALE, RGB565


def _box_sum(a: np.ndarray, r: int) -> np.ndarray:
    """Sum over the (2r+1)^2 window, counting only in-image pixels (exact integers)."""
    h, w = a.shape
    p = np.zeros((h + 1, w + 1), np.int64)
    p[1:, 1:] = a.astype(np.int64).cumsum(0).cumsum(1)
    y0 = np.clip(np.arange(h) - r, 0, h)
    y1 = np.clip(np.arange(h) + r + 1, 0, h)
    x0 = np.clip(np.arange(w) - r, 0, w)
    x1 = np.clip(np.arange(w) + r + 1, 0, w)
    return p[y1][:, x1] - p[y0][:, x1] - p[y1][:, x0] + p[y0][:, x0]


def _window_count(h: int, w: int, r: int) -> np.ndarray:
    cy = np.minimum(np.arange(h) + r + 1, h) - np.maximum(np.arange(h) - r, 0)
    cx = np.minimum(np.arange(w) + r + 1, w) - np.maximum(np.arange(w) - r, 0)
    return cy[:, None] * cx[None, :]


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

    # ------------------------------------------------------------------ K210 additions
    def conv3(self, *args, **kwargs):
        """3x3 convolution run by the KPU **on the AI buffer** (MaixPy ``conv.c`` + ``sipeed_conv.c``).

        The 3x3x3x3 kernel (the 9 weights on each channel's own plane, zeros across channels) is
        quantised to 16 bits over its [min, max] range; the KPU sums ``x*w_q``, adds the
        ``arg_x * sum(x) >> shr_x`` offset, and the activation table scales back with
        ``y_mul >> shift_number`` (round half to even), negatives -> 0, clamp to 255 — all in
        integers as in kpu-hardware.md §5. The result replaces the AI planes; pixels are rebuilt
        with plain shifts (``r>>3``, ``g>>2``, ``b>>3``). Without an AI buffer it prints
        ``pix_ai or pixels is NULL!`` and does nothing. Returns ``None``. (On a grayscale image the
        firmware would overrun the buffers; here the single plane is convolved instead.)
        """
        kern = kwargs.pop("kern", None)
        if kern is None and args:
            kern = args[0]
        if kern is None:
            print("please input 9 kern parm!")
            return None
        krn = [_args.to_float(v) for v in _args.fixed_array(kern, 9)]
        ai = self._buf.ai
        if ai is None:
            print("pix_ai or pixels is NULL!")
            return None
        h, w = self.height(), self.width()
        flat = ai.reshape(-1)
        nplanes = 3 if (self._fmt == RGB565 and flat.size >= 3 * w * h) else 1
        planes = flat[: nplanes * w * h].reshape(nplanes, h, w).astype(np.int64)
        out = _kpu_conv3(planes, krn)
        flat[: nplanes * w * h] = out.reshape(-1)
        if self._fmt == RGB565:
            r, g, b = (out[min(i, nplanes - 1)].astype(np.uint16) for i in range(3))
            self._pix[...] = ((r >> 3) << 3) + (g >> 5) + ((b >> 3) << 8) + ((g & 0x1C) << 11)
        else:
            self._pix[...] = out[0]
        self._buf.pix_gen += 1
        self._buf.ai_gen = self._buf.pix_gen
        return None

    def strech_char(self, de_dark):
        """Contrast stretch for character images (MaixPy, grayscale only; sic "strech"); ``None``."""
        de_dark = _args.to_int(de_dark)
        if self._fmt != GRAYSCALE:
            print("only support grayscale now")
            return None
        h, w = self.height(), self.width()
        p = self._pix.astype(np.int64)
        graymax = int(p.max())
        gate = int(p.sum()) // w // h
        d = p - gate
        den = graymax - gate
        if den == 0:
            dat = np.full_like(d, -1)  # RISC-V integer division by zero yields -1
        else:
            num = d * 255
            dat = np.sign(num) * np.sign(den) * (np.abs(num) // abs(den))  # C truncation
        dat = np.clip(dat, 0, 255)
        if de_dark:
            yy, xx = np.mgrid[0:h, 0:w]
            r2 = (xx - w // 2) ** 2 + (yy - h // 2) ** 2
            div = 1.0 + 32.0 * r2 * r2 / w / w / h / h
            dat = np.trunc(dat / div).astype(np.int64)
        self._pix[...] = dat.astype(np.uint8)
        self._touch()
        return None

    def stretch(self, to_min, to_max):
        """Linear stretch of a grayscale image to [to_min, to_max] (integer scale, max 5); ``None``."""
        to_min, to_max = _args.to_int(to_min), _args.to_int(to_max)
        if self._fmt != GRAYSCALE:
            print("only support grayscale now")
            return None
        p = self._pix.astype(np.int64)
        lo, hi = int(p.min()), int(p.max())
        if lo == hi:
            return None
        q = to_max - to_min
        scale = float(int(q / (hi - lo)))  # C int division, then stored in a float
        scale = min(scale, 5.0)
        v = (p - lo).astype(np.float32) * np.float32(scale) + np.float32(to_min)
        self._pix[...] = (np.trunc(v).astype(np.int64) & 0xFF).astype(np.uint8)
        self._touch()
        return None

    # ------------------------------------------------------------------ OpenMV filters
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

    def cartoon(self, *args, **kwargs):
        """Flat colour regions (OpenCV mean-shift style approximation)."""
        import cv2

        src = self._rgb8_or_gray()
        if src.ndim == 2:
            self._store8(cv2.bilateralFilter(src, 7, 60, 5))
        else:
            self._store8(cv2.pyrMeanShiftFiltering(src, 8, 24))
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

    def lens_corr(self, *args, **kwargs):
        """Barrel correction as ``imlib_lens_corr``: ``r = strength/diag * |p - c|``,
        ``theta = atan(r)/r`` (the firmware's polynomial atan), source ``c + int(theta * (p - c)/zoom)``,
        nearest, black outside."""
        from . import _hough

        F = np.float32
        strength = F(_args.to_float(_args.pick(args, 0, kwargs, "strength", 1.8)))
        zoom = F(1.0) / F(_args.to_float(_args.pick(args, 1, kwargs, "zoom", 1.0)))
        w, h = self.width(), self.height()
        hw, hh = w // 2, h // 2
        radius = strength / np.sqrt(F(w * w + h * h))
        yy, xx = np.mgrid[0:h, 0:w]
        nx, ny = xx - hw, yy - hh
        r = radius * np.sqrt((nx * nx + ny * ny).astype(F))
        with np.errstate(divide="ignore", invalid="ignore"):
            theta = np.where(r < F(1e-7), F(1.0), _hough._fast_atanf(r) / np.where(r == 0, F(1), r)).astype(F)
        sx = hw + np.trunc(theta * (nx.astype(F) * zoom)).astype(np.int64)
        sy = hh + np.trunc(theta * (ny.astype(F) * zoom)).astype(np.int64)
        ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
        src = self._pix.copy()
        self._pix[...] = 0
        self._pix[ok] = src[sy[ok], sx[ok]]
        self._touch()
        return self

    def rotation_corr(self, *args, **kwargs):
        """3D rotation / translation / zoom with perspective, as ``imlib_rotation_corr`` does it:
        the 4x4 model ``A2 * T * (RX*RY*RZ) * A1`` (double precision), inverted, then every output
        pixel samples ``int(x'/z'), int(y'/z')`` of the original (nearest, black outside).
        ``corners=`` (4 points) adds the homography that maps the image corners onto them."""
        import math

        names = ("x_rotation", "y_rotation", "z_rotation", "x_translation", "y_translation", "zoom", "fov")
        defaults = (0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 60.0)
        vals = [float(np.float32(_args.to_float(_args.pick(args, i, kwargs, n, d))))
                for i, (n, d) in enumerate(zip(names, defaults))]
        xr, yr, zr, xt, yt, zoom, fov = vals
        corners = _args.pick(args, 7, kwargs, "corners", None)
        xr, yr, zr, fov = (float(np.float32(v * math.pi / 180)) for v in (xr, yr, zr, fov))
        if not zoom > 0:
            raise OSError("Zoom must be > 0!")
        if not (0 < fov < 180):
            raise OSError("FOV must be > 0 and < 180!")
        w, h = self.width(), self.height()
        F = np.float32
        z = float(F(F(np.sqrt(F(w * w + h * h))) / F(2)) / F(math.tan(float(F(fov / 2)))))
        z = float(F(z))
        z_z = float(F(z) * F(zoom))
        A1 = np.array([[1, 0, -(w // 2)], [0, 1, -(h // 2)], [0, 0, 0], [0, 0, 1]], float)
        cx, sx = float(F(math.cos(xr))), float(F(math.sin(xr)))
        cy, sy = float(F(math.cos(yr))), float(F(math.sin(yr)))
        cz, sz = float(F(math.cos(zr))), float(F(math.sin(zr)))
        RX = np.array([[1, 0, 0, 0], [0, cx, -sx, 0], [0, sx, cx, 0], [0, 0, 0, 1]], float)
        RY = np.array([[cy, 0, -sy, 0], [0, 1, 0, 0], [sy, 0, cy, 0], [0, 0, 0, 1]], float)
        RZ = np.array([[cz, -sz, 0, 0], [sz, cz, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], float)
        T = np.array([[1, 0, 0, xt], [0, 1, 0, yt], [0, 0, 1, z], [0, 0, 0, 1]], float)
        A2 = np.array([[z_z, 0, w // 2, 0], [0, z_z, h // 2, 0], [0, 0, 1, 0]], float)
        T3 = A2 @ (T @ ((RX @ RY @ RZ) @ A1))
        src = self._pix.copy()
        self._pix[...] = 0
        try:
            T4 = np.linalg.inv(T3)
        except np.linalg.LinAlgError:
            self._touch()
            return self
        if corners is not None:
            import cv2

            pts = [[_args.to_float(v) for v in _args.fixed_array(p, 2)] for p in _args.fixed_array(corners, 4)]
            Hm = cv2.getPerspectiveTransform(
                np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32), np.array(pts, np.float32))
            T4 = Hm @ T4
        M = T4.astype(F)
        yy, xx = np.mgrid[0:h, 0:w]
        xf, yf = xx.astype(F), yy.astype(F)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            X = M[0, 0] * xf + M[0, 1] * yf + M[0, 2]
            Y = M[1, 0] * xf + M[1, 1] * yf + M[1, 2]
            Z = M[2, 0] * xf + M[2, 1] * yf + M[2, 2]
            sxp = np.trunc(X / Z)
            syp = np.trunc(Y / Z)
        ok = np.isfinite(sxp) & np.isfinite(syp) & (sxp >= 0) & (sxp < w) & (syp >= 0) & (syp < h)
        self._pix[ok] = src[syp[ok].astype(np.int64), sxp[ok].astype(np.int64)]
        self._touch()
        return self

    def _polar(self, log: bool, reverse: bool):
        import cv2

        h, w = self.height(), self.width()
        center = (w / 2.0, h / 2.0)
        radius = math.hypot(w, h) / 2
        flags = cv2.INTER_NEAREST | (cv2.WARP_POLAR_LOG if log else cv2.WARP_POLAR_LINEAR)
        if reverse:
            flags |= cv2.WARP_INVERSE_MAP
        self._pix[...] = cv2.warpPolar(self._pix, (w, h), center, radius, flags)
        self._touch()
        return self

    def linpolar(self, *args, **kwargs):
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        return self._polar(False, reverse)

    def logpolar(self, *args, **kwargs):
        reverse = bool(_args.to_int(_args.pick(args, 0, kwargs, "reverse", False)))
        return self._polar(True, reverse)

    # ------------------------------------------------------------------ statistics
    def _stat_channels(self, args, kwargs) -> list[np.ndarray]:
        thresholds = _args.pick(args, 0, kwargs, "thresholds", None)
        invert = bool(_args.to_int(_args.pick(args, 1, kwargs, "invert", False)))
        x, y, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 2, kwargs, "roi", None))
        pix = self._pix[y:y + h, x:x + w]
        sel = np.ones(pix.shape, bool)
        if thresholds is not None:
            sel = np.zeros(pix.shape, bool)
            for th in _lab.parse_thresholds(thresholds, self._fmt):
                sel |= _lab.threshold_mask(pix, self._fmt, th)
            sel ^= invert
        if self._fmt == GRAYSCALE:
            return [pix[sel].astype(np.int64)]
        L, A, B = _lab.lab_of(pix)
        return [L[sel].astype(np.int64), A[sel].astype(np.int64), B[sel].astype(np.int64)]

    def get_statistics(self, *args, **kwargs):
        """Mean/median/mode/stdev/min/max/quartiles of gray or L, A, B (OpenMV statistics object)."""
        chans = self._stat_channels(args, kwargs)
        return Statistics([_channel_stats(c, lo) for c, lo in zip(chans, (0, -128, -128))] if len(chans) == 3
                          else [_channel_stats(chans[0], 0)])

    def get_stats(self, *args, **kwargs):
        return self.get_statistics(*args, **kwargs)

    def statistics(self, *args, **kwargs):
        return self.get_statistics(*args, **kwargs)

    def get_histogram(self, *args, **kwargs):
        """Normalised histograms (gray: 256 bins; RGB565: L 101, A 256, B 256 bins)."""
        chans = self._stat_channels(args, kwargs)
        if len(chans) == 1:
            return Histogram([(chans[0], 0, 255)])
        return Histogram([(chans[0], 0, 100), (chans[1], -128, 127), (chans[2], -128, 127)])

    def get_hist(self, *args, **kwargs):
        return self.get_histogram(*args, **kwargs)

    def histogram(self, *args, **kwargs):
        return self.get_histogram(*args, **kwargs)


def _round_half_even_shift(t: np.ndarray, s: int) -> np.ndarray:
    """kpu-hardware.md §5.3 round_shift for t >= 0: round half to even of t / 2^s."""
    if s == 0:
        return t
    q = t >> s
    f = t & ((1 << s) - 1)
    half = 1 << (s - 1)
    return np.where(f < half, q, np.where(f > half, q + 1, q + (q & 1)))


def _kpu_conv3(planes: np.ndarray, krn: list[float]) -> np.ndarray:
    """``sipeed_conv``: per-plane 3x3 conv of (C, H, W) uint8 planes on the KPU model, -> uint8."""
    F = np.float32
    C, H, W = planes.shape
    data = np.zeros((C, C, 9), F)  # conv_data[oc][ic][k]: the kernel only on the diagonal
    for c in range(C):
        data[c, c] = np.array(krn, F)
    flat = data.reshape(-1)
    dmin = F(flat.min())
    drange = F(flat.max()) - dmin
    if drange == 0:
        return np.zeros_like(planes, dtype=np.uint8)
    scale = F(65535.0 / float(drange))
    wq = np.trunc((flat - dmin) * scale).astype(np.int64).reshape(C, C, 9)
    a = F(scale * (dmin if dmin >= 0 else -dmin))
    i = 0
    while a < F(0x400000) and a != 0:
        a = F(a * F(2))
        i += 1
    arg_x = int(a) if dmin >= 0 else (0x1000000 - int(a))
    arg_x &= 0xFFFFFF
    if arg_x & 0x800000:
        arg_x -= 0x1000000
    shr_x = i & 0xF
    inv = F(1.0 / float(scale))
    shift = 0
    while inv <= F(16383.0):
        inv = F(inv * F(2))
        shift += 1
    y_mul = int(inv) & 0xFFFF
    padded = np.pad(planes, ((0, 0), (1, 1), (1, 1)))  # pad_value 0
    taps = [(dy, dx) for dy in range(3) for dx in range(3)]
    sx = np.zeros((H, W), np.int64)
    for ic in range(C):
        for dy, dx in taps:
            sx += padded[ic, dy:dy + H, dx:dx + W]
    out = np.empty((C, H, W), np.uint8)
    for oc in range(C):
        acc = np.zeros((H, W), np.int64)
        for ic in range(C):
            for k, (dy, dx) in enumerate(taps):
                if wq[oc, ic, k]:
                    acc += padded[ic, dy:dy + H, dx:dx + W] * wq[oc, ic, k]
        acc += (arg_x * sx) >> shr_x
        pos = acc > 0  # segments 1..15 (x_start 0); segment 0 (y_mul 0) gives 0
        r = _round_half_even_shift(np.where(pos, acc, 0) * y_mul, shift)
        out[oc] = np.clip(np.where(pos, r, 0), 0, 255).astype(np.uint8)
    return out


def _mask_of(mask_img, shape) -> np.ndarray:
    m = mask_img._pix
    if m.shape != shape:
        raise OSError("Mask is not the same size as the image!")
    g = m if mask_img._fmt == GRAYSCALE else _color.rgb565_to_gray(m)
    return g > 127


def _channel_stats(v: np.ndarray, lo: int) -> dict:
    if v.size == 0:
        return dict(mean=0, median=0, mode=0, stdev=0, min=0, max=0, lq=0, uq=0)
    s = np.sort(v)
    n = s.size
    vals, counts = np.unique(s, return_counts=True)
    return dict(mean=int(s.mean()), median=int(s[n // 2]), mode=int(vals[np.argmax(counts)]),
                stdev=int(s.std()), min=int(s[0]), max=int(s[-1]), lq=int(s[n // 4]), uq=int(s[(3 * n) // 4]))


class Statistics:
    """OpenMV ``statistics``: gray images fill the l_* values; tuple order as OpenMV's."""

    _keys = ("mean", "median", "mode", "stdev", "min", "max", "lq", "uq")

    def __init__(self, chans: list[dict]):
        self._c = chans + [dict.fromkeys(self._keys, 0)] * (3 - len(chans))

    def _tuple(self):
        return tuple(c[k] for c in self._c for k in self._keys)

    def __getitem__(self, i):
        return self._tuple()[i]

    def __len__(self):
        return 24

    def __repr__(self):
        parts = []
        for prefix, c in zip(("l_", "a_", "b_"), self._c):
            parts += [f'"{prefix}{k}":{c[k]}' for k in self._keys]
        return "{" + ", ".join(parts) + "}"


for _i, _p in enumerate(("l_", "a_", "b_")):
    for _k in Statistics._keys:
        setattr(Statistics, _p + _k, (lambda i, k: (lambda self: self._c[i][k]))(_i, _k))
for _k in Statistics._keys:
    setattr(Statistics, _k, (lambda k: (lambda self: self._c[0][k]))(_k))


class Histogram:
    def __init__(self, chans: list[tuple[np.ndarray, int, int]]):
        self._raw = chans
        self._bins = []
        for v, lo, hi in chans:
            counts = np.bincount(v - lo, minlength=hi - lo + 1)[: hi - lo + 1].astype(np.float64)
            tot = counts.sum()
            self._bins.append((counts / tot if tot else counts).tolist())

    def bins(self):
        return self._bins[0]

    def l_bins(self):
        return self._bins[0]

    def a_bins(self):
        return self._bins[1] if len(self._bins) > 1 else []

    def b_bins(self):
        return self._bins[2] if len(self._bins) > 2 else []

    def get_percentile(self, percentile):
        p = _args.to_float(percentile)
        vals = []
        for (v, lo, hi), bins in zip(self._raw, self._bins):
            c = np.cumsum(bins)
            idx = int(np.searchsorted(c, p)) if c.size else 0
            vals.append(lo + min(idx, hi - lo))
        return _Percentile(vals)

    def get_threshold(self):
        """Otsu threshold per channel."""
        vals = []
        for (v, lo, hi), bins in zip(self._raw, self._bins):
            b = np.asarray(bins)
            levels = np.arange(b.size)
            best, best_t = -1.0, 0
            for t in range(1, b.size):
                w0, w1 = b[:t].sum(), b[t:].sum()
                if w0 == 0 or w1 == 0:
                    continue
                m0 = (levels[:t] * b[:t]).sum() / w0
                m1 = (levels[t:] * b[t:]).sum() / w1
                var = w0 * w1 * (m0 - m1) ** 2
                if var > best:
                    best, best_t = var, t
            vals.append(lo + best_t)
        return _Percentile(vals)

    def get_statistics(self):
        return Statistics([_channel_stats(v, lo) for v, lo, hi in self._raw])


class _Percentile:
    def __init__(self, vals):
        self._v = list(vals) + [0] * (3 - len(vals))

    def value(self):
        return self._v[0]

    def l_value(self):
        return self._v[0]

    def a_value(self):
        return self._v[1]

    def b_value(self):
        return self._v[2]

    def __getitem__(self, i):
        return tuple(self._v)[i]

    def __repr__(self):
        return f'{{"l_value":{self._v[0]}, "a_value":{self._v[1]}, "b_value":{self._v[2]}}}'
