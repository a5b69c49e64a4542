"""Flood filling as the firmware does it (blob.c ``imlib_flood_fill_int``, draw.c ``imlib_flood_fill``)
and what is built on it: ``flood_fill``, ``cartoon`` (filter.c) and MaixPy's ``find_domain``.

``imlib_flood_fill_int`` is a scan-line fill: a pixel joins when it is within ``seed_threshold`` of
the seed pixel and within ``floating_threshold`` of the neighbour it is reached from (per channel
R5/G6/B5 on RGB565 images, thresholds ``int(t * 31)``, ``int(t * 63)``, ``int(t * 255)``); pixels
already set in the output bitmap (the ``mask`` pixels for ``flood_fill``) are walls. Its region is
the 4-connected component of the seed in that graph, which :func:`component` computes with OpenCV's
floating-range flood fill over the channel planes. ``cartoon`` also *writes* each finished scan-line
run while the fill goes on, so later comparisons see written pixels: :func:`_cartoon_kernel` follows
the C traversal run by run (one compiled kernel, ``_jit``; the same statements in Python without numba).

Masks are read as ``image_get_mask_pixel``: a bitmap's bit, gray > 127, RGB565 luma > -1 (Y of the
YUV table), false outside the mask image.
"""

from __future__ import annotations

import numpy as np

from . import _args, _color, _kinds
from ._core import GRAYSCALE, RGB565, ImageBase
from ._jit import kernel
from ._host import ImageHost

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
    """(H, W, C) uint8 planes the thresholds compare: R5/G6/B5, or the gray/bit value."""
    if img._fmt == RGB565:
        return np.stack(_color.split565(img._pix), axis=-1).astype(np.uint8)
    return img._pix[..., None].astype(np.uint8)


def component(chans: np.ndarray, walls: np.ndarray, x: int, y: int, seed_t, float_t) -> np.ndarray:
    """The scan-line fill's region from (x, y) (bool (H, W)), ``walls`` excluded, seed included.

    Two OpenCV fills, each touching only the region it grows: first the 4-connected pixels within
    ``seed_t`` of the seed (a fixed-range fill), then, inside that, the floating-range fill. A
    pixel of the firmware's region is near the seed and reached through such pixels, so the first
    fill holds the whole region and the second grows exactly it.
    """
    import cv2

    h, w, c = chans.shape
    planes = np.ascontiguousarray(chans[..., 0]) if c == 1 else np.ascontiguousarray(chans)
    ff_mask = np.zeros((h + 2, w + 2), np.uint8)
    ff_mask[1:-1, 1:-1] = walls
    ff_mask[y + 1, x + 1] = 0  # the seed joins even on a wall
    near = tuple(float(v) for v in seed_t)
    cv2.floodFill(planes, ff_mask, (x, y), 0, near, near,
                  4 | cv2.FLOODFILL_MASK_ONLY | cv2.FLOODFILL_FIXED_RANGE | (2 << 8))
    inside = (ff_mask != 2).view(np.uint8)  # everything but the near-seed region blocks the second fill
    step = tuple(float(v) for v in float_t)
    cv2.floodFill(planes, inside, (x, y), 0, step, step, 4 | cv2.FLOODFILL_MASK_ONLY | (2 << 8))
    return inside[1:-1, 1:-1] == 2


def fill_thresholds(rest, kwargs, index: int) -> tuple[float, float]:
    """``seed_threshold``/``floating_threshold`` (default 0.05 each, float32, 0..1) at ``index``."""
    values = []
    for i, name in enumerate(("seed_threshold", "floating_threshold")):
        v = float(F(_args.to_float(_args.pick(rest, index + i, kwargs, name, 0.05))))
        if not 0.0 <= v <= 1.0:
            raise OSError(f"Error: 0.0 <= {name} <= 1.0!")
        values.append(v)
    return values[0], values[1]


class FloodMixin(ImageHost):
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
            np.copyto(self._pix, 0, where=~painted)
        np.copyto(self._pix, c, where=painted, casting="unsafe")
        self._touch()
        return count if self._fmt == GRAYSCALE else 0

    def cartoon(self, *args, **kwargs):
        """``cartoon(seed_threshold=0.05, floating_threshold=0.05, mask=None)``: every region of
        similar pixels becomes its mean colour (filter.c ``imlib_cartoon_filter``), in place."""
        seed, floating = fill_thresholds(args, kwargs, 0)
        mask = mask_arg(_args.pick(args, 2, kwargs, "mask", None))
        fmt, w, h = self._fmt, self.width(), self.height()
        seed_t, float_t = thresholds(fmt, seed, floating)
        if fmt == RGB565:
            r, g, b = (c.astype(np.int64).reshape(-1) for c in _color.split565(self._pix))
        else:  # one channel, compared and averaged as the green one (the others stay 0)
            g = self._pix.astype(np.int64).reshape(-1)
            r, b = np.zeros_like(g), np.zeros_like(g)
            seed_t, float_t = (0,) + seed_t + (0,), (0,) + float_t + (0,)
        walls = mask_pixels(mask, w, h) if mask is not None else np.zeros((h, w), bool)
        fill_img = walls.astype(np.uint8).reshape(-1)
        mean_img = np.zeros(w * h, np.uint8)
        stack = np.zeros(4 * w * h, np.int64)
        _cartoon_kernel(r, g, b, mean_img, fill_img, stack, w, h, *seed_t, *float_t)
        if fmt == RGB565:
            out = _color.pack565(r, g, b)
        else:
            out = g
        self._pix[...] = out.reshape(h, w).astype(self._pix.dtype)
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
        # each region is the 4-connected run of pixels equal to its seed (thresholds 0): OpenCV's
        # fill marks it in a shared mask with its own label; earlier regions hold smaller values,
        # so their marks never touch a later region
        import cv2

        marks = np.zeros((h + 2, w + 2), np.uint8)
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
                n, _, _, (rx, ry, rw, rh) = cv2.floodFill(pix, marks, (x, y), 0, 0, 0,
                                                          4 | cv2.FLOODFILL_MASK_ONLY | ((label + 1) << 8))
                block = pix[ry:ry + rh, rx:rx + rw]
                block[marks[ry + 1:ry + rh + 1, rx + 1:rx + rw + 1] == label + 1] = label + 1
                counts.append(n & 0xFFFF)
                seeds.append((x & 0xFF, y & 0xFF))
                label += 1
                x += 1
        self._touch()
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


@kernel(lists=(0, 1, 2, 3, 4, 5), writes=(0, 1, 2))
def _cartoon_kernel(r, g, b, mean_img, fill_img, stack, w, h, sr, sg, sb, fr, fg, fb):  # pragma: no branch
    """``imlib_cartoon_filter``: for each pixel not yet in ``mean_img``, one scan-line fill
    (``imlib_flood_fill_int``) into ``mean_img`` summing each finished run's channels, then a second
    one from the same seed into ``fill_img`` writing the region's integer mean into each run as the
    fill leaves it (later comparisons see the written pixels, as on the device).

    ``r``/``g``/``b``: flat channel planes (R5/G6/B5, or gray in ``g``), changed in place;
    ``s*``/``f*``: the seed and floating thresholds per channel; ``stack``: 4 ints per pending run.
    """
    mr = 0
    mg = 0
    mb = 0
    for y0 in range(h):
        for x0 in range(w):
            if mean_img[y0 * w + x0]:
                continue
            for mode in range(2):
                out = mean_img if mode == 0 else fill_img
                x = x0
                y = y0
                p = y * w + x
                vr = r[p]
                vg = g[p]
                vb = b[p]
                top = 0
                acc_r = 0
                acc_g = 0
                acc_b = 0
                count = 0
                done = False
                while not done:
                    base = y * w
                    left = x
                    right = x
                    while left > 0:
                        q = base + left - 1
                        if (out[q] or abs(r[q] - vr) > sr or abs(g[q] - vg) > sg or abs(b[q] - vb) > sb
                                or abs(r[q] - r[q + 1]) > fr or abs(g[q] - g[q + 1]) > fg or abs(b[q] - b[q + 1]) > fb):
                            break
                        left -= 1
                    while right < w - 1:
                        q = base + right + 1
                        if (out[q] or abs(r[q] - vr) > sr or abs(g[q] - vg) > sg or abs(b[q] - vb) > sb
                                or abs(r[q] - r[q - 1]) > fr or abs(g[q] - g[q - 1]) > fg or abs(b[q] - b[q - 1]) > fb):
                            break
                        right += 1
                    for i in range(base + left, base + right + 1):
                        out[i] = 1
                    while True:
                        base = y * w
                        found = -1
                        for k in range(2):
                            ny = y - 1 + 2 * k
                            if ny < 0 or ny >= h:
                                continue
                            nbase = ny * w
                            for i in range(left, right + 1):
                                q = nbase + i
                                o = base + i
                                if (not out[q] and abs(r[q] - vr) <= sr and abs(g[q] - vg) <= sg and abs(b[q] - vb) <= sb
                                        and abs(r[q] - r[o]) <= fr and abs(g[q] - g[o]) <= fg and abs(b[q] - b[o]) <= fb):
                                    found = q
                                    break
                            if found >= 0:
                                break
                        if found >= 0:
                            stack[top] = x
                            stack[top + 1] = y
                            stack[top + 2] = left
                            stack[top + 3] = right
                            top += 4
                            x = found % w
                            y = found // w
                            break
                        if mode == 0:  # the run is left: sum it
                            for i in range(base + left, base + right + 1):
                                acc_r += r[i]
                                acc_g += g[i]
                                acc_b += b[i]
                                count += 1
                        else:  # ... or paint it with the region's mean
                            for i in range(base + left, base + right + 1):
                                r[i] = mr
                                g[i] = mg
                                b[i] = mb
                        if top == 0:
                            done = True
                            break
                        top -= 4
                        x = stack[top]
                        y = stack[top + 1]
                        left = stack[top + 2]
                        right = stack[top + 3]
                if mode == 0:
                    mr = acc_r // count
                    mg = acc_g // count
                    mb = acc_b // count
