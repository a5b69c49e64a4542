"""Flood filling as the firmware does it (blob.c ``imlib_flood_fill_int``, draw.c ``imlib_flood_fill``)
and what is built on it: ``flood_fill``, ``cartoon`` (filter.c) and MaixPy's ``find_domain``.

``imlib_flood_fill_int`` is a scan-line fill: a pixel joins when it is within ``seed_threshold`` of
the seed pixel and within ``floating_threshold`` of the neighbour it is reached from (per channel
R5/G6/B5 on RGB565 images, thresholds ``int(t * 31)``, ``int(t * 63)``, ``int(t * 255)``); pixels
already set in the output bitmap (the ``mask`` pixels for ``flood_fill``) are walls. Its region is
the 4-connected component of the seed in that graph, which :func:`component` computes with OpenCV's
floating-range flood fill over the channel planes. ``cartoon`` also hands each finished scan-line
run to a callback that *writes* the image while the fill goes on, so later comparisons see written
pixels: :func:`scanline_fill` follows the C traversal run by run (Python; it is the only exact way).

Masks are read as ``image_get_mask_pixel``: a bitmap's bit, gray > 127, RGB565 luma > -1 (Y of the
YUV table), false outside the mask image.
"""

from __future__ import annotations

import numpy as np

from . import _args, _color, _kinds
from ._core import GRAYSCALE, RGB565, ImageBase

F = np.float32
BINARY = _kinds.BINARY


def mask_pixels(mask, w: int, h: int) -> np.ndarray:
    """(h, w) bool of ``image_get_mask_pixel(mask, x, y)``."""
    out = np.zeros((h, w), bool)
    mh, mw = min(h, mask.height()), min(w, mask.width())
    pix = mask._pix[:mh, :mw]
    if mask._fmt == BINARY:
        bits = pix != 0
    elif mask._fmt == GRAYSCALE:
        bits = _kinds.binary_of_gray(pix) != 0
    else:
        bits = _kinds.binary_of_rgb565(pix) != 0
    out[:mh, :mw] = bits
    return out


def mask_arg(value):
    """``py_helper_keyword_to_image_mutable_mask``: an image (BINARY/GRAYSCALE/RGB565) or None."""
    if value is None:
        return None
    if not isinstance(value, ImageBase):
        raise TypeError(f"Can't convert {type(value).__name__} to Image")
    if value._fmt not in (BINARY, GRAYSCALE, RGB565):
        raise OSError(_kinds.NOT_SUPPORTED)
    return value


def thresholds(fmt: int, seed: float, floating: float) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Per-channel integer thresholds (``fast_roundf`` = truncation of the float32 product)."""
    def t(v: float, m: int) -> int:
        return int(np.trunc(F(v) * F(m)))

    if fmt == RGB565:
        return (t(seed, 31), t(seed, 63), t(seed, 31)), (t(floating, 31), t(floating, 63), t(floating, 31))
    m = 1 if fmt == BINARY else 255
    return (t(seed, m),), (t(floating, m),)


def channels(img) -> np.ndarray:
    """(H, W, C) int planes the thresholds compare: R5/G6/B5, or the gray/bit value."""
    if img._fmt == RGB565:
        return np.stack(_color.split565(img._pix), axis=-1).astype(np.int64)
    return img._pix[..., None].astype(np.int64)


def component(chans: np.ndarray, walls: np.ndarray, x: int, y: int, seed_t, float_t) -> np.ndarray:
    """The scan-line fill's region from (x, y) (bool (H, W)), ``walls`` excluded, seed included."""
    import cv2

    h, w, c = chans.shape
    near_seed = np.all(np.abs(chans - chans[y, x]) <= np.array(seed_t), axis=-1)
    blocked = ~near_seed | walls
    blocked[y, x] = False
    planes = np.zeros((h, w, 3), np.uint8)
    planes[..., :c] = chans.astype(np.uint8)
    ff_mask = np.zeros((h + 2, w + 2), np.uint8)
    ff_mask[1:-1, 1:-1] = blocked
    diff = tuple(float(v) for v in float_t) + (0.0,) * (3 - c)
    cv2.floodFill(planes, ff_mask, (x, y), (0, 0, 0), diff, diff, 4 | cv2.FLOODFILL_MASK_ONLY | (2 << 8))
    return ff_mask[1:-1, 1:-1] == 2


def scanline_fill(vals: list[list[int]], near, out: np.ndarray, x: int, y: int, cb=None) -> int:
    """``imlib_flood_fill_int`` over ``vals`` (rows of raw pixels, which ``cb`` may change).

    ``near(a, b, seed)``: the COLOR_BOUND test (``seed=True`` with the seed threshold). ``out``:
    the output bitmap as rows of bytearrays (set in place). ``cb(y, left, right)`` is called once
    per run when the fill leaves it, as in the C code. Returns the number of pixels set.
    """
    h = len(vals)
    w = len(vals[0])
    seed = vals[y][x]
    count = 0
    stack: list[tuple[int, int, int, int]] = []
    while True:
        row, orow = vals[y], out[y]
        left = right = x
        while left > 0 and not orow[left - 1] and near(row[left - 1], seed, True) and near(row[left - 1], row[left], False):
            left -= 1
        while right < w - 1 and not orow[right + 1] and near(row[right + 1], seed, True) and near(row[right + 1], row[right], False):
            right += 1
        orow[left:right + 1] = b"\x01" * (right - left + 1)
        count += right - left + 1
        while True:
            old = vals[y]
            found = None
            for ny in (y - 1, y + 1):
                if not 0 <= ny < h:
                    continue
                nrow, norow = vals[ny], out[ny]
                for i in range(left, right + 1):
                    if not norow[i] and near(nrow[i], seed, True) and near(nrow[i], old[i], False):
                        found = (i, ny)
                        break
                if found:
                    break
            if found:
                stack.append((x, y, left, right))
                x, y = found
                break
            if cb is not None:
                cb(y, left, right)
            if not stack:
                return count
            x, y, left, right = stack.pop()


def _near_function(fmt: int, seed_t, float_t):
    if fmt == RGB565:
        sr, sg, sb = seed_t
        fr, fg, fb = float_t

        def near(a: int, b: int, seed: bool) -> bool:
            tr, tg, tb = (sr, sg, sb) if seed else (fr, fg, fb)
            return (abs(((a >> 3) & 31) - ((b >> 3) & 31)) <= tr
                    and abs((((a & 7) << 3) | (a >> 13)) - (((b & 7) << 3) | (b >> 13))) <= tg
                    and abs(((a >> 8) & 31) - ((b >> 8) & 31)) <= tb)
    else:
        s0, f0 = seed_t[0], float_t[0]

        def near(a: int, b: int, seed: bool) -> bool:
            return abs(a - b) <= (s0 if seed else f0)

    return near


def fill_thresholds(rest, kwargs, index: int) -> tuple[float, float]:
    """``seed_threshold``/``floating_threshold`` (default 0.05 each, float32, 0..1) at ``index``."""
    values = []
    for i, name in enumerate(("seed_threshold", "floating_threshold")):
        v = float(F(_args.to_float(_args.pick(rest, index + i, kwargs, name, 0.05))))
        if not 0.0 <= v <= 1.0:
            raise OSError(f"Error: 0.0 <= {name} <= 1.0!")
        values.append(v)
    return values[0], values[1]


class FloodMixin:
    def flood_fill(self, *args, **kwargs):
        """``flood_fill(x, y, seed_threshold=0.05, floating_threshold=0.05, color=white,
        invert=False, clear_background=False, mask=None)``: fill the seed's region in place."""
        (x, y), rest = _args.consume(args, 2)
        seed, floating = fill_thresholds(rest, kwargs, 0)
        color = _args.pick(rest, 2, kwargs, "color", -1)
        if self._fmt == BINARY:
            from ._bitmap import bit_color

            c = bit_color(color)
        else:
            c = _color.color_value(color, self._fmt)
        invert = bool(_args.to_float(_args.pick(rest, 3, kwargs, "invert", False)))  # read as floats (sic)
        clear_bg = bool(_args.to_float(_args.pick(rest, 4, kwargs, "clear_background", False)))
        mask = mask_arg(_args.pick(rest, 5, kwargs, "mask", None))
        w, h = self.width(), self.height()
        if 0 <= x < w and 0 <= y < h:
            self._fill_region(x, y, seed, floating, c, invert, clear_bg, mask)
        return self

    def _fill_region(self, x, y, seed, floating, c, invert, clear_bg, mask) -> int:
        """``imlib_flood_fill``; returns the filled-pixel count the C function returns (gray only)."""
        w, h = self.width(), self.height()
        walls = mask_pixels(mask, w, h) if mask is not None else np.zeros((h, w), bool)
        seed_t, float_t = thresholds(self._fmt, seed, floating)
        region = component(channels(self), walls, x, y, seed_t, float_t)
        painted = (region | walls) ^ invert
        count = int(region.sum())
        if clear_bg:
            self._pix[~painted] = 0
        self._pix[painted] = c
        self._touch()
        return count if self._fmt == GRAYSCALE else 0

    def cartoon(self, *args, **kwargs):
        """``cartoon(seed_threshold=0.05, floating_threshold=0.05, mask=None)``: every region of
        similar pixels becomes its mean colour (filter.c ``imlib_cartoon_filter``), in place."""
        seed, floating = fill_thresholds(args, kwargs, 0)
        mask = mask_arg(_args.pick(args, 2, kwargs, "mask", None))
        fmt, w, h = self._fmt, self.width(), self.height()
        seed_t, float_t = thresholds(fmt, seed, floating)
        near = _near_function(fmt, seed_t, float_t)
        vals = self._pix.astype(np.int64).tolist()
        mean_img = [bytearray(w) for _ in range(h)]
        walls = mask_pixels(mask, w, h) if mask is not None else np.zeros((h, w), bool)
        fill_img = [bytearray(r.astype(np.uint8).tobytes()) for r in walls]
        for y in range(h):
            for x in range(w):
                if mean_img[y][x]:
                    continue
                acc = [0, 0, 0, 0]

                def add(line, left, right, acc=acc):
                    for p in vals[line][left:right + 1]:
                        if fmt == RGB565:
                            acc[0] += (p >> 3) & 31
                            acc[1] += ((p & 7) << 3) | (p >> 13)
                            acc[2] += (p >> 8) & 31
                        else:
                            acc[1] += p
                        acc[3] += 1

                scanline_fill(vals, near, mean_img, x, y, add)
                n = acc[3]
                if fmt == RGB565:
                    mean = int(_color.pack565(acc[0] // n, acc[1] // n, acc[2] // n))
                else:
                    mean = acc[1] // n

                def fill(line, left, right, mean=mean):
                    row = vals[line]
                    for i in range(left, right + 1):
                        row[i] = mean

                scanline_fill(vals, near, fill_img, x, y, fill)
        self._pix[...] = np.array(vals, dtype=self._pix.dtype)
        self._touch()
        return self

    def find_domain(self, edge_gate):
        """MaixPy's ``find_domain(edge_gate)`` on a grayscale image: label bright regions in place
        (region ``i`` gets value ``i + 1``, at most 254), then return the largest one as a BINARY
        image — or, when a second region has at least ``w + h`` pixels, the one of the two that
        looks like a line (its widest border run over its span is below ``edge_gate``), preferring
        the largest. None when nothing was found. Reproduces the firmware's uint8 seed coordinates
        (regions seeded at x >= 256 are looked up at ``x - 256``) and uint16 counts.
        """
        if self._fmt != GRAYSCALE:
            raise ValueError("only support grayscale pic")
        gate = F(_args.to_float(edge_gate))
        w, h = self.width(), self.height()
        pix = self._pix
        counts, seeds = [], []
        label = 0
        for y in range(h):
            if label >= 254:
                break
            row = pix[y]
            x = 0
            while x < w and label < 254:
                candidates = np.nonzero(row[x:] > label)[0]
                if candidates.size == 0:
                    break
                x += int(candidates[0])
                n = self._fill_region(x, y, 0.0, 0.0, label + 1, False, False, None)
                counts.append(n & 0xFFFF)
                seeds.append((x & 0xFF, y & 0xFF))
                label += 1
                x += 1
        counts += [0] * (254 - len(counts))
        maxcnt, maxidx, max2cnt, max2idx = 0, -1, 0, -1
        for i, c in enumerate(counts):
            if c > maxcnt:
                max2cnt, max2idx, maxcnt, maxidx = maxcnt, maxidx, c, i
            elif c > max2cnt:
                max2cnt, max2idx = c, i
        if maxcnt == 0:
            return None
        chans = channels(self)
        walls = np.zeros((h, w), bool)

        def region_of(idx: int) -> np.ndarray:
            sx, sy = seeds[idx]
            if sx >= w or sy >= h:  # the seed byte points outside: nothing is filled
                return np.zeros((h, w), bool)
            return component(chans, walls, sx, sy, (0,), (0,))

        first = region_of(maxidx)
        if max2cnt < w + h:
            return type(self)._wrap(BINARY, first.astype(np.uint8))
        second = region_of(max2idx)
        line0, line1 = (_looks_like_a_line(r, gate) for r in (first, second))
        chosen = second if (not line0 and line1) else first
        return type(self)._wrap(BINARY, chosen.astype(np.uint8))


def _looks_like_a_line(region: np.ndarray, gate) -> bool:
    """``_get_hv_pixel`` + the rate test of py_image_find_domain (uint16 spans, float rates)."""
    h, w = region.shape
    ys, xs = np.nonzero(region)
    minx, miny, maxx, maxy = w, h, 0, 0
    for x, y in zip(xs.tolist(), ys.tolist()):  # the firmware's if / else-if updates, in scan order
        if y < miny:
            miny = y
        elif y > maxy:
            maxy = y
        if x < minx:
            minx = x
        elif x > maxx:
            maxx = x
    h0 = (maxx - minx + 1) & 0xFFFF
    v0 = (maxy - miny + 1) & 0xFFFF
    top, bottom = int(region[0].sum()), int(region[h - 1].sum()) if h > 1 else 0
    left, right = int(region[:, 0].sum()), int(region[:, w - 1].sum()) if w > 1 else 0
    with np.errstate(divide="ignore", invalid="ignore"):
        hrate = F(max(top, bottom)) / F(h0)
        vrate = F(max(left, right)) / F(v0)
    return bool(hrate < gate or vrate < gate)
