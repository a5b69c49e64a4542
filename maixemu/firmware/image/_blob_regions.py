"""The regions ``find_blobs`` grows for one threshold: blob.c's scan-line flood fill, compiled.

``imlib_find_blobs`` visits seeds in scan order (``y`` from ``roi.y`` by ``y_stride``, ``x`` from
``roi.x + y % x_stride`` by ``x_stride``); an unclaimed seed inside the threshold grows its
4-connected region with a span fill (the row above first, then the row below, one span at a time
on an explicit stack) and claims its pixels in a bitmap shared by all thresholds. Per region it
sums what the blob needs: the pixel extent, the count and the first and second moments.

Two forms give the same regions in the same order:

* :func:`grow_regions` with numba: :func:`_grow` follows the C statement by statement over a
  per-threshold lookup table (65536 entries for RGB565 pixels, 256 for gray and bitmap), so one
  pass touches each pixel of a region a few times and nothing else (no label image);
* without numba (``MAIXEMU_NO_JIT=1``), OpenCV's 4-connected labelling of the threshold mask,
  ordered by each label's first seed: the same regions, because the fill reaches exactly the
  4-connected unclaimed pixels inside the threshold (the firmware's fill only stops early when its
  stack memory runs out, which a QVGA frame cannot make happen).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ._core import RGB565
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)
from ._lab import Threshold, threshold_mask

#: columns of a region row: extent, pixel count, sums of x, y, x*x, x*y, y*y (absolute coordinates)
X1, Y1, X2, Y2, COUNT, SX, SY, SXX, SXY, SYY = range(10)


@lru_cache(maxsize=64)
def threshold_lut(fmt: int, th: Threshold, invert: bool) -> np.ndarray:
    """uint8 table, 1 where ``COLOR_THRESHOLD_*(pixel, th, invert)`` passes: indexed by the
    byte-swapped RGB565 value (65536 entries) or by the gray/bit value (256). Read-only, cached:
    a tracking loop asks for the same few thresholds every frame."""
    if fmt == RGB565:
        values = np.arange(65536, dtype=np.uint16)
    else:
        values = np.arange(256, dtype=np.uint8)
    lut = threshold_mask(values, fmt, th, invert).astype(np.uint8)
    lut.flags.writeable = False
    return lut


@kernel
def _grow(pix, lut, claimed, rx, ry, rw, rh, x_stride, y_stride, out, stack):
    """blob.c's seed scan and span fill for one threshold; one row of ``out`` per region, in the
    order the seeds find them; returns the number of regions. ``claimed`` is updated."""
    n = 0
    x_end = rx + rw
    y_end = ry + rh
    for sy in range(ry, y_end, y_stride):
        sx = rx + sy % x_stride
        while sx < x_end:
            if claimed[sy, sx] == 0 and lut[pix[sy, sx]] != 0:
                x = sx
                y = sy
                x1 = x
                y1 = y
                x2 = x
                y2 = y
                count = 0
                s_x = 0
                s_y = 0
                s_xx = 0
                s_xy = 0
                s_yy = 0
                depth = 0
                while True:
                    left = x
                    right = x
                    while left > rx and claimed[y, left - 1] == 0 and lut[pix[y, left - 1]] != 0:
                        left -= 1
                    while right < x_end - 1 and claimed[y, right + 1] == 0 and lut[pix[y, right + 1]] != 0:
                        right += 1
                    x1 = min(x1, left)
                    y1 = min(y1, y)
                    x2 = max(x2, right)
                    y2 = max(y2, y)
                    for i in range(left, right + 1):
                        claimed[y, i] = 1
                        count += 1
                        s_x += i
                        s_y += y
                        s_xx += i * i
                        s_xy += i * y
                        s_yy += y * y
                    done = False
                    while True:
                        recurse = False
                        for step in (-1, 1):  # the row above first, then the row below
                            ny = y + step
                            if ny < ry or ny >= y_end:
                                continue
                            for i in range(left, right + 1):
                                if claimed[ny, i] == 0 and lut[pix[ny, i]] != 0:
                                    stack[depth, 0] = x
                                    stack[depth, 1] = y
                                    stack[depth, 2] = left
                                    stack[depth, 3] = right
                                    depth += 1
                                    x = i
                                    y = ny
                                    recurse = True
                                    break
                            if recurse:
                                break
                        if recurse:
                            break
                        if depth == 0:
                            done = True
                            break
                        depth -= 1
                        x = stack[depth, 0]
                        y = stack[depth, 1]
                        left = stack[depth, 2]
                        right = stack[depth, 3]
                    if done:
                        break
                out[n, 0] = x1
                out[n, 1] = y1
                out[n, 2] = x2
                out[n, 3] = y2
                out[n, 4] = count
                out[n, 5] = s_x
                out[n, 6] = s_y
                out[n, 7] = s_xx
                out[n, 8] = s_xy
                out[n, 9] = s_yy
                n += 1
            sx += x_stride
    return n


class RegionGrower:
    """The regions of one ``find_blobs`` call, threshold after threshold, over one claim bitmap."""

    def __init__(self, pix: np.ndarray, fmt: int, roi: tuple[int, int, int, int], x_stride: int,
                 y_stride: int, invert: bool, use_kernel: bool | None = None):
        self.pix, self.fmt, self.roi = pix, fmt, roi
        self.x_stride, self.y_stride, self.invert = x_stride, y_stride, invert
        self.use_kernel = compiled() if use_kernel is None else use_kernel
        h, w = pix.shape
        self.claimed = np.zeros((h, w), np.uint8)
        if self.use_kernel:
            # one specialisation of the kernel: uint16 pixels (gray and bitmap values widened)
            self._pix16 = np.ascontiguousarray(pix, np.uint16)
            rx, ry, rw, rh = roi
            seeds = -(-rh // y_stride) * (-(-rw // x_stride) + 1)
            self._out = np.empty((max(min(seeds, rw * rh), 1), 10), np.int64)
            self._stack = np.empty((rw * rh + 1, 4), np.int64)  # a stacked span is a filled one

    def grow(self, th: Threshold) -> np.ndarray:
        """(n, 10) int64 rows (see the column names above) of the regions ``th`` grows."""
        if self.use_kernel:
            rx, ry, rw, rh = self.roi
            lut = threshold_lut(self.fmt, th, self.invert)
            n = _grow.attempt(self._pix16, lut, self.claimed, rx, ry, rw, rh, self.x_stride, self.y_stride,
                              self._out, self._stack)
            if n is not NOT_SERVED:  # (else the labelling below: both mark the claims with 1)
                return self._out[:n].copy()
        return self._labelled(th)

    def _labelled(self, th: Threshold) -> np.ndarray:
        import cv2

        x0, y0, w, h = self.roi
        pix = self.pix[y0:y0 + h, x0:x0 + w]
        claimed = self.claimed[y0:y0 + h, x0:x0 + w]
        mask = threshold_mask(pix, self.fmt, th, self.invert) & (claimed == 0)
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
        seed = np.zeros((h, w), bool)
        for yy in range(0, h, self.y_stride):
            seed[yy, ((yy + y0) % self.x_stride)::self.x_stride] = True
        seeded = labels[seed]
        seeded = seeded[seeded > 0]
        if seeded.size == 0:
            return np.zeros((0, 10), np.int64)
        found, first = np.unique(seeded, return_index=True)
        order = found[np.argsort(first, kind="stable")]
        taken = np.zeros(n, bool)
        taken[found] = True
        claimed |= taken[labels].astype(np.uint8)
        rows = np.zeros((order.size, 10), np.int64)
        rows[:, X1] = stats[order, 0] + x0
        rows[:, Y1] = stats[order, 1] + y0
        rows[:, X2] = rows[:, X1] + stats[order, 2] - 1
        rows[:, Y2] = rows[:, Y1] + stats[order, 3] - 1
        for col, v in zip(range(COUNT, SYY + 1), _region_sums(labels, n, x0, y0)):
            rows[:, col] = v[order]
        return rows


def _region_sums(labels: np.ndarray, n: int, x0: int, y0: int) -> list[np.ndarray]:
    """Per-label pixel count and moment sums (absolute coordinates), exact: every partial sum stays
    far below 2**53, so ``bincount``'s float64 accumulation is exact."""
    h, w = labels.shape
    lab = labels.ravel()
    xs = np.tile(np.arange(x0, x0 + w, dtype=np.float64), h)
    ys = np.repeat(np.arange(y0, y0 + h, dtype=np.float64), w)
    out = [np.bincount(lab, minlength=n).astype(np.int64)]
    for v in (xs, ys, xs * xs, xs * ys, ys * ys):
        out.append(np.rint(np.bincount(lab, weights=v, minlength=n)).astype(np.int64))
    return out
