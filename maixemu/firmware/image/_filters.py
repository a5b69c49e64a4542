"""``filter.c`` / ``clahe.c``: neighbourhood filters and histogram equalisation, as the firmware computes them.

Every window filter works on the native channels (gray, or R5/G6/B5 of RGB565) over a
(2*size+1)^2 window whose reads past the border repeat the edge pixel, and always sees the
original image (the firmware buffers ``size + 1`` output rows before writing back). Shared options:

* ``threshold=True``: the pixel becomes white (0xFF / 0xFFFF) when ``(filtered - offset) < original``
  (compared on the YUV table's Y for RGB565; on a bitmap as unsigned 32-bit numbers, so a
  negative difference never passes), else black; ``invert`` flips the test;
* ``mask``: pixels outside the mask keep their value.

Per filter (integer / float32 arithmetic and truncations exactly as in C):

* ``mean``: ``(int)(sum * (1.0f / n))``;
* ``median(percentile=0.5)``: the ``(int)(percentile * (n - 1))``-th smallest value;
* ``mode``: the value whose count first reaches the maximum in the window's scan order;
* ``midpoint(bias=0.5)``: ``(int)(min * (1 - bias) + max * bias)``;
* ``morph(size, kernel, mul=1/sum, add=0)``: ``clamp((int)(sum(k * v) * mul) + (int)add)``;
* ``gaussian(unsharp)`` / ``laplacian(sharpen)``: ``morph`` with the firmware's Pascal-triangle
  kernels (so the Laplacian is scaled by ``1/centre`` and clamps at 0);
* ``bilateral(color_sigma=0.1, space_sigma=1)``: float32 weights from ``fast_expf`` tables,
  accumulated in the window order (the build without fused multiply-add; see the golden notes);
* ``histeq()``: global equalisation of gray / Y (RGB565 re-encoded through ``imlib_yuv_to_rgb``);
  ``histeq(adaptive=True, clip_limit)`` is the firmware's CLAHE port with its tile sizes.
"""

from __future__ import annotations

import numpy as np

from . import _args
from . import _fmath as fm
from ._color import T8TO5, T8TO6, pack565
from ._core import GRAYSCALE
from ..pixformat import BINARY
from ._filter_kernels import bilateral_rows, clahe_interpolate, clip_histogram, morph_channel, rank_filter
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)
from ._pixels import MAXES, Window, binary_max, box_sum, channels, keyword_mask, ksize, mask_pixels, offsets, pack, planes
from ._tables import gray_table, yuv_columns
from ._host import ImageHost

F = np.float32


# ---------------------------------------------------------------------- shared output stage
def _finish(img, new_chans: list[np.ndarray], threshold: bool, offset: int, invert: bool, mask) -> None:
    """Pack the filtered channels, apply the adaptive threshold and the mask, write back."""
    fmt = img._fmt
    orig = img._pix
    new = pack(new_chans, fmt)
    if threshold:
        if fmt == BINARY:
            # IMAGE_GET_BINARY_PIXEL_FAST is a uint32_t, so C compares ``pixel - offset`` unsigned:
            # a negative difference is a huge number, never below the original bit
            diff = new.astype(np.int64) - offset
            test = (diff >= 0) & (diff < orig)
        elif fmt == GRAYSCALE:
            test = (new.astype(np.int64) - offset) < orig
        else:
            y = yuv_columns()[0]  # int8 Y, compared as ints
            test = (np.take(y, new).astype(np.int64) - offset) < np.take(y, orig)
        new = np.where(test ^ invert, binary_max(fmt), 0).astype(orig.dtype)
    if mask is not None:
        new = np.where(mask_pixels(mask, orig.shape), new, orig)
    orig[...] = new
    img._touch()


def _common(args: tuple, kwargs: dict, first: int):
    """threshold, offset, invert, mask at positional indices first..first+3."""
    threshold = bool(_args.to_int(_args.pick(args, first, kwargs, "threshold", False)))
    offset = _args.to_int(_args.pick(args, first + 1, kwargs, "offset", 0))
    invert = bool(_args.to_int(_args.pick(args, first + 2, kwargs, "invert", False)))
    mask = keyword_mask(args, first + 3, kwargs)
    return threshold, offset, invert, mask


def _pascal_kernel(k: int) -> list[int]:
    """The outer product of a row of Pascal's triangle (py_image.c's gaussian/laplacian kernels)."""
    k2 = 2 * k
    row = [1]
    for i in range(k2):
        row.append(row[i] * (k2 - i) // (i + 1))
    return [a * b for a in row for b in row]


def _morph_channels(chans, k: int, krn: list[int], mul: np.float32, add: int, fmt: int):
    """``clamp((int)(acc * m) + b)`` per channel, ``acc`` the kernel's exact integer sum (the
    compiled kernel, or one shifted view per tap)."""
    out = []
    weights = np.array(krn, np.int64)
    for ch, hi in zip(chans, MAXES[fmt]):
        res = np.empty(ch.shape, np.uint8)
        if compiled() and morph_channel.attempt(np.pad(ch, k, mode="edge"), weights, k, F(mul), int(add), hi,
                                                res) is not NOT_SERVED:
            out.append(res)
            continue
        acc = np.zeros(ch.shape, np.int64)
        win = Window(ch.astype(np.int64), k)
        for w, (dy, dx) in zip(krn, offsets(k)):
            if w:
                acc += w * win.at(dy, dx)
        v = fm.to_int(acc.astype(F) * mul) + add
        out.append(np.clip(v, 0, hi).astype(np.uint8))
    return out


def _rank_filter(chan: np.ndarray, k: int, idx: int) -> np.ndarray:
    """The ``idx``-th smallest value of each pixel's clamp-to-edge (2k+1)^2 window (uint8 channel).

    The middle rank is OpenCV's median filter (its border repeats the edge pixel, as the firmware's
    reads do; exact on uint8); other ranks partition the stacked window.
    """
    n = 2 * k + 1
    if k == 0:
        return chan.copy()
    if idx == (n * n - 1) // 2:
        import cv2

        return cv2.medianBlur(np.ascontiguousarray(chan), n)
    out = np.empty(chan.shape, np.uint8)
    if compiled() and rank_filter.attempt(np.pad(chan, k, mode="edge"), k, idx, out) is not NOT_SERVED:
        return out
    return np.partition(Window(chan, k).stack(), idx, axis=2)[:, :, idx]


def _window_min_max(chan: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Minimum and maximum of each pixel's clamp-to-edge (2k+1)^2 window (OpenCV erode/dilate with
    the edge repeated: exact)."""
    if k == 0:
        return chan, chan
    import cv2

    square = np.ones((2 * k + 1, 2 * k + 1), np.uint8)
    chan = np.ascontiguousarray(chan)
    return (cv2.erode(chan, square, borderType=cv2.BORDER_REPLICATE),
            cv2.dilate(chan, square, borderType=cv2.BORDER_REPLICATE))


def _mode_filter(chan: np.ndarray, k: int) -> np.ndarray:
    """``mode`` of a uint8 channel: the compiled per-pixel histogram when numba is there, else the
    vectorised running counts (the same answer)."""
    if k == 0:
        return chan.copy()
    win = Window(chan, k)
    out = np.empty(chan.shape, np.uint8)
    if compiled() and _mode_kernel.attempt(win.padded, k, out) is not NOT_SERVED:
        return out
    return _mode(win)


@kernel
def _mode_kernel(padded, k, out):
    """Per pixel, a 256-bin histogram of the window filled in scan order; the value whose count
    first exceeds the best so far wins (ties keep the earlier leader), as :func:`_mode`."""
    h, w = out.shape
    n = 2 * k + 1
    counts = np.zeros(256, np.int32)
    for y in range(h):
        for x in range(w):
            best = padded[y, x]
            best_count = 0
            for j in range(n):
                for i in range(n):
                    v = padded[y + j, x + i]
                    counts[v] += 1
                    if counts[v] > best_count:
                        best_count = counts[v]
                        best = v
            for j in range(n):
                for i in range(n):
                    counts[padded[y + j, x + i]] = 0
            out[y, x] = best


def _mode(win: Window) -> np.ndarray:
    """For each pixel: the value whose running count first reaches the window's maximum count."""
    vals = [win.at(dy, dx) for dy, dx in offsets(win.k)]
    best = vals[0].copy()
    best_count = np.ones(best.shape, np.int16)
    for p in range(1, len(vals)):
        v = vals[p]
        count = np.ones(v.shape, np.int16)
        for q in range(p):
            count += vals[q] == v
        better = count > best_count
        best = np.where(better, v, best)
        best_count = np.where(better, count, best_count)
    return best


def _gaussian_f32(x, sigma: np.float32) -> np.ndarray:
    """bilateral's ``gaussian()``: ``fast_expf((x*x) / (-2*sigma*sigma)) / (|sigma| * 2.506628)``.

    The firmware's ``-ffast-math`` build folds ``1 / 2.506628`` into a constant and divides by
    ``|sigma|`` last: ``(fast_expf(...) * 0.39894232) / |sigma|`` (found by compiling filter.c with
    the firmware's flags; the textbook order differs in the last bit of some table entries and so
    in a few pixels).
    """
    x = np.asarray(x, F)
    s = F(sigma)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e = fm.fast_expf((x * x) / (F(-2.0) * s * s))
        return ((e * (F(1.0) / F(2.506628))) / F(abs(s))).astype(F)


# ---------------------------------------------------------------------- the mixin
class FilterMixin(ImageHost):
    def mean(self, size, *args, **kwargs):
        """``mean(size, threshold=False, offset=0, invert=False, mask=None)``: box mean, truncated."""
        self._mutable()
        k = ksize(size)
        th, off, inv, mask = _common(args, kwargs, 0)
        over_n = F(1.0) / F((2 * k + 1) ** 2)
        out = [fm.to_int(box_sum(c, k).astype(F) * over_n).astype(np.uint8) for c in planes(self._pix, self._fmt)]
        _finish(self, out, th, off, inv, mask)
        return self

    def median(self, size, *args, **kwargs):
        """``median(size, percentile=0.5, threshold, offset, invert, mask)``."""
        self._mutable()
        k = ksize(size)
        p = F(_args.to_float(_args.pick(args, 0, kwargs, "percentile", 0.5)))
        if not (F(0) <= p <= F(1)):
            raise OSError("Error: 0 <= percentile <= 1!")
        th, off, inv, mask = _common(args, kwargs, 1)
        n = (2 * k + 1) ** 2
        idx = int(fm.to_int(p * F(n - 1)))
        out = [_rank_filter(c, k, idx) for c in planes(self._pix, self._fmt)]
        _finish(self, out, th, off, inv, mask)
        return self

    def mode(self, size, *args, **kwargs):
        """``mode(size, threshold, offset, invert, mask)``: most frequent value (first to lead wins)."""
        self._mutable()
        k = ksize(size)
        th, off, inv, mask = _common(args, kwargs, 0)
        out = [_mode_filter(c, k) for c in planes(self._pix, self._fmt)]
        _finish(self, out, th, off, inv, mask)
        return self

    def midpoint(self, size, *args, **kwargs):
        """``midpoint(size, bias=0.5, threshold, offset, invert, mask)``."""
        self._mutable()
        k = ksize(size)
        bias = F(_args.to_float(_args.pick(args, 0, kwargs, "bias", 0.5)))
        if not (F(0) <= bias <= F(1)):
            raise OSError("Error: 0 <= bias <= 1!")
        th, off, inv, mask = _common(args, kwargs, 1)
        min_bias = F(1.0) - bias
        out = []
        for c in planes(self._pix, self._fmt):
            lo, hi = _window_min_max(c, k)
            out.append(fm.to_int(lo.astype(F) * min_bias + hi.astype(F) * bias))
        _finish(self, out, th, off, inv, mask)
        return self

    def _morph(self, k: int, krn: list[int], m_default: float, args, kwargs, first: int):
        mul = F(_args.to_float(_args.pick(args, first, kwargs, "mul", m_default)))
        add = _args.to_float(_args.pick(args, first + 1, kwargs, "add", 0.0))
        th, off, inv, mask = _common(args, kwargs, first + 2)
        out = _morph_channels(planes(self._pix, self._fmt), k, krn, mul, int(fm.to_int(F(add))), self._fmt)
        _finish(self, out, th, off, inv, mask)
        return self

    def morph(self, size, kernel, *args, **kwargs):
        """``morph(size, kernel, mul=1/sum(kernel), add=0, threshold, offset, invert, mask)``."""
        self._mutable()
        k = ksize(size)
        n = (2 * k + 1) ** 2
        krn = [_args.to_int(v) for v in _args.fixed_array(kernel, n)]
        m = sum(krn) or 1
        return self._morph(k, krn, float(F(1.0) / F(m)), args, kwargs, 0)

    def gaussian(self, size, *args, **kwargs):
        """``gaussian(size, unsharp=False, mul, add, threshold, offset, invert, mask)`` (binomial kernel)."""
        self._mutable()
        k = ksize(size)
        krn = _pascal_kernel(k)
        m = sum(krn)
        if _args.to_int(_args.pick(args, 0, kwargs, "unsharp", False)):
            n = 2 * k + 1
            krn[(n // 2) * n + n // 2] -= m * 2
            m = -m
        return self._morph(k, krn, float(F(1.0) / F(m)), args, kwargs, 1)

    def laplacian(self, size, *args, **kwargs):
        """``laplacian(size, sharpen=False, mul, add, threshold, offset, invert, mask)``."""
        self._mutable()
        k = ksize(size)
        n = 2 * k + 1
        krn = [-v for v in _pascal_kernel(k)]
        centre = (n // 2) * n + n // 2
        krn[centre] += -sum(krn)
        m = krn[centre]
        if _args.to_int(_args.pick(args, 0, kwargs, "sharpen", False)):
            krn[centre] += m
        return self._morph(k, krn, float(F(1.0) / F(m)), args, kwargs, 1)

    def bilateral(self, size, *args, **kwargs):
        """``bilateral(size, color_sigma=0.1, space_sigma=1, threshold, offset, invert, mask)``."""
        self._mutable()
        k = ksize(size)
        color_sigma = F(_args.to_float(_args.pick(args, 0, kwargs, "color_sigma", 0.1)))
        space_sigma = F(_args.to_float(_args.pick(args, 1, kwargs, "space_sigma", 1.0)))
        th, off, inv, mask = _common(args, kwargs, 2)
        n = 2 * k + 1
        dist = fm.fast_sqrtf(F(k * k + k * k))
        max_space = F(1.0) / dist if dist != 0 else F(0)
        ys, xs = np.mgrid[-k:k + 1, -k:k + 1]
        gs = _gaussian_f32(fm.fast_sqrtf((xs * xs + ys * ys).astype(F)) * max_space, space_sigma).reshape(n * n)
        out = []
        for c, hi in zip(channels(self._pix, self._fmt), MAXES[self._fmt]):
            gi = _gaussian_f32(np.arange(hi + 1).astype(F) * (F(1.0) / F(hi)), color_sigma)
            win = Window(c, k)
            filtered = np.empty(c.shape, np.int64)
            if compiled() and bilateral_rows.attempt(win.padded, k, gi, gs, hi, filtered) is not NOT_SERVED:
                out.append(filtered)
                continue
            i_acc = np.zeros(c.shape, F)
            w_acc = np.zeros(c.shape, F)
            for t, (dy, dx) in enumerate(offsets(k)):
                v = win.at(dy, dx)
                w = (gi[np.abs(c - v)] * gs[t]).astype(F)
                i_acc = (i_acc + (v.astype(F) * w)).astype(F)
                w_acc = (w_acc + w).astype(F)
            with np.errstate(divide="ignore", invalid="ignore"):
                q = np.where(w_acc != 0, i_acc / np.where(w_acc != 0, w_acc, F(1)), F(0)).astype(F)
            out.append(fm.to_int(np.minimum(q, F(hi))))
        _finish(self, out, th, off, inv, mask)
        return self

    # ------------------------------------------------------------------ histogram equalisation
    def histeq(self, *args, **kwargs):
        """``histeq(adaptive=False, clip_limit=-1, mask=None)``: global, or CLAHE when ``adaptive``."""
        self._mutable()
        adaptive = bool(_args.to_int(_args.pick(args, 0, kwargs, "adaptive", False)))
        clip_limit = F(_args.to_float(_args.pick(args, 1, kwargs, "clip_limit", -1)))
        mask = keyword_mask(args, 2, kwargs)
        pix = self._pix
        if adaptive and self._fmt == BINARY:
            # clahe.c: the bits go in as 0/255 (COLOR_BINARY_TO_GRAYSCALE), come out as gray > 127
            new = (_clahe((pix * 255).astype(np.uint8), clip_limit) > 127).astype(np.uint8)
        elif adaptive:
            gray = pix if self._fmt == GRAYSCALE else gray_table()[pix]  # Y + 128
            new_gray = _clahe(gray, clip_limit)
            new = new_gray if self._fmt == GRAYSCALE else yuv_to_rgb565(new_gray, pix)
        elif self._fmt == BINARY:
            # filter.c's BINARY case: the 2-bin cumulative histogram scaled by (1 - 0) / area, truncated
            hist = np.cumsum(np.bincount(pix.ravel(), minlength=2)).astype(np.int64)
            s = F(1) / F(pix.size)
            new = (fm.to_int(s * hist[pix].astype(F)) & 1).astype(np.uint8)
        elif self._fmt == GRAYSCALE:
            hist = np.cumsum(np.bincount(pix.ravel(), minlength=256)).astype(np.int64)
            s = F(255) / F(pix.size)
            new = (fm.to_int(s * hist[pix].astype(F)) & 0xFF).astype(np.uint8)
        else:
            gray = np.take(gray_table(), pix)  # Y + 128
            hist = np.cumsum(np.bincount(gray.ravel(), minlength=256)).astype(np.int64)
            s = F(255) / F(pix.size)
            ynew = fm.to_int(s * np.take(hist, gray).astype(F)) & 0xFF
            new = yuv_to_rgb565(ynew, pix)
        if mask is not None:
            new = np.where(mask_pixels(mask, pix.shape), new, pix)
        pix[...] = new
        self._touch()
        return self


def yuv_to_rgb565(y8: np.ndarray, pix565: np.ndarray) -> np.ndarray:
    """``imlib_yuv_to_rgb(y, U(pixel), V(pixel))`` for every pixel (integer BT.601 inverse)."""
    _, u_table, v_table = yuv_columns()
    u = np.take(u_table, pix565).astype(np.int32)
    v = np.take(v_table, pix565).astype(np.int32)
    y = np.asarray(y8).astype(np.int32) & 0xFF
    r = np.clip(y + ((91881 * v) >> 16), 0, 255).astype(np.uint8)
    g = np.clip(y - (((22554 * u) + (46802 * v)) >> 16), 0, 255).astype(np.uint8)
    b = np.clip(y + ((116130 * u) >> 16), 0, 255).astype(np.uint8)
    return pack565(np.take(T8TO5, r), np.take(T8TO6, g), np.take(T8TO5, b))


# ---------------------------------------------------------------------- CLAHE (clahe.c)
def _bit_length(x: int) -> int:
    """``IM_LOG2_32``: despite its name, the number of bits of ``x`` (1 for 0 and 1)."""
    return max(int(x).bit_length(), 1)


def _clahe(gray: np.ndarray, clip_limit: np.float32) -> np.ndarray:
    h, w = gray.shape
    x_tiles = max(16 >> (10 - min(_bit_length(w), 10)), 2)
    y_tiles = max(16 >> (10 - min(_bit_length(h), 10)), 2)
    pw = w + ((x_tiles - w % x_tiles) if w % x_tiles else 0)
    ph = h + ((y_tiles - h % y_tiles) if h % y_tiles else 0)
    x_off, y_off = (pw - w) // 2, (ph - h) // 2
    flat = np.zeros(pw * ph, np.int64)
    # the firmware addresses its padded buffer with the image's own width as the row stride
    rows = (np.arange(h)[:, None] + y_off) * w + np.arange(w)[None, :] + x_off
    flat[rows] = gray
    buf = flat.reshape(ph, pw)
    if clip_limit != F(1.0):
        buf = _clahe_core(buf, x_tiles, y_tiles, clip_limit)
    return (buf.reshape(-1)[rows] & 0xFF).astype(np.uint8)


def _interpolation_band(g: int, n: int, size: int) -> tuple[int, int, int]:
    """(band length, first region, second region) of CLAHE's g-th interpolation band: half
    regions at the borders (the far one rounds up), mapping pairs of neighbouring regions inside."""
    if g == 0:
        return size >> 1, 0, 0
    if g == n:
        return (size + 1) >> 1, n - 1, n - 1
    return size, g - 1, g


def _clahe_core(img: np.ndarray, nx: int, ny: int, clip: np.float32) -> np.ndarray:
    ph, pw = img.shape
    if nx > 16 or ny > 16 or pw % nx or ph % ny:
        return img
    bins = 256
    xs, ys = pw // nx, ph // ny
    npix = xs * ys
    if clip > F(0):
        limit = max(int(fm.to_uint32(clip * F(xs * ys) / F(bins))), 1)
    else:
        limit = 1 << 14
    scale = F(255) / F(npix)
    maps = np.zeros((ny, nx, bins), np.int64)
    for ty in range(ny):
        for tx in range(nx):
            tile = img[ty * ys:(ty + 1) * ys, tx * xs:(tx + 1) * xs]
            hist = np.bincount(tile.ravel(), minlength=bins)[:bins].astype(np.int64)
            if not clip_histogram(hist, limit):
                raise OSError(f"histeq(adaptive=True, clip_limit={float(clip):g}) never returns on the device: clahe.c "
                              f"cannot place a {xs}x{ys} tile's excess pixels below its clip limit ({limit} per bin) and "
                              f"loops forever. Use a larger clip_limit (about 256 * {limit + 1} / {npix} or more) or -1")
            m = fm.to_uint32(np.cumsum(hist).astype(F) * scale + F(0))
            maps[ty, tx] = np.minimum(m, 255)
    if compiled():
        out = np.empty_like(img)
        bands_y = np.array([_interpolation_band(g, ny, ys) for g in range(ny + 1)], np.int64)
        bands_x = np.array([_interpolation_band(g, nx, xs) for g in range(nx + 1)], np.int64)
        if clahe_interpolate.attempt(img, maps, bands_y, bands_x, out) is not NOT_SERVED:
            return out
    out = img.copy()
    y = 0
    for gy in range(ny + 1):
        sub_y, yu, yb = _interpolation_band(gy, ny, ys)
        x = 0
        for gx in range(nx + 1):
            sub_x, xl, xr = _interpolation_band(gx, nx, xs)
            block = img[y:y + sub_y, x:x + sub_x]
            if block.size:
                num = sub_x * sub_y
                xc = np.arange(sub_x)[None, :]
                yc = np.arange(sub_y)[:, None]
                xi, yi = sub_x - xc, sub_y - yc
                lu, ru, lb, rb = maps[yu, xl][block], maps[yu, xr][block], maps[yb, xl][block], maps[yb, xr][block]
                val = (yi * (xi * lu + xc * ru) + yc * (xi * lb + xc * rb)) // num
                out[y:y + sub_y, x:x + sub_x] = val & 0xFF
            x += sub_x
        y += sub_y
    return out
