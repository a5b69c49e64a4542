"""Small feature extractors of the firmware: ``find_lbp`` (lbp.c) with its descriptor matching and
files, ``find_hog`` (hog.c), ``find_eye`` (eye.c) and ``get_similarity`` (stats.c's block SSIM).

Each keeps the firmware's arithmetic and its quirks (they change answers):

* LBP histograms are ``uint8`` bins (they wrap at 256); the scan covers the roi's origin to the
  *image's* size minus 3 (not the roi's), so a roi smaller than the image spills into the next
  region's bins (a spill past the last region is not kept: on the device it overwrites the heap).
* HOG normalises each 2x2-cell block by the root of its squared magnitudes (a flat block gives
  0/0, which the K210 turns into 255); the cell index inside a block uses 8 whatever the cell size;
  the picture is drawn from the image origin, not the roi's.
* ``find_eye`` drops every gradient whose magnitude is more than 100 from the mean, but skips the
  one after each dropped gradient (``array_erase`` inside the loop).
* ``get_similarity`` sums each 8x8 block from the columns ``block_index + i`` (not
  ``8 * block_index + i``) and starts its maximum at ``FLT_MIN``.
"""

from __future__ import annotations

import math
import struct

import numpy as np

from . import _args
from ._core import GRAYSCALE, ImageBase
from ..pixformat import BINARY
from ._fmath import COS, SIN, F, fast_sqrtf, fsqrt, ftoi
from ._gradient_angle import degree_table, truncated_degrees
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)
from ._host import ImageHost

LBP_HIST_SIZE = 59
LBP_NUM_REGIONS = 7
LBP_DESC_SIZE = LBP_NUM_REGIONS * LBP_NUM_REGIONS * LBP_HIST_SIZE
DESC_LBP, DESC_ORB = 0, 1
#: lbp.c ``lbp_weights``: region weights of the distance (tuned for faces)
LBP_WEIGHTS = np.array([
    2, 1, 1, 1, 1, 1, 2,
    2, 4, 4, 1, 4, 4, 2,
    1, 1, 1, 0, 1, 1, 1,
    0, 1, 1, 0, 1, 1, 0,
    0, 1, 1, 1, 1, 1, 0,
    0, 1, 1, 2, 1, 1, 0,
    0, 1, 1, 1, 1, 1, 0], np.int64)


def _uniform_table() -> np.ndarray:
    """``uniform_tbl``: the 58 uniform 8-bit patterns (at most 2 circular 0/1 transitions) numbered
    in increasing order, every other pattern 58."""
    out = np.full(256, 58, np.uint8)
    n = 0
    for p in range(256):
        bits = [(p >> i) & 1 for i in range(8)]
        if sum(bits[i] != bits[(i + 1) % 8] for i in range(8)) <= 2:
            out[p] = n
            n += 1
    return out


_UNIFORM = _uniform_table()


class LBPDescriptor:
    """``lbp_desc``: 7x7 regions of 59-bin uniform LBP histograms (uint8 bins)."""

    __slots__ = ("hist",)

    def __init__(self, hist: np.ndarray):
        self.hist = hist

    def __repr__(self) -> str:
        return "{}"


def lbp_desc(gray: np.ndarray, roi) -> np.ndarray:
    """``imlib_lbp_desc``. Reads go through the flat pixel buffer as on the device (a column past
    the row's end is the next row's first); a read past the buffer's end drops that pixel."""
    rx, ry, rw, rh = roi
    h, w = gray.shape
    RY, RX = rh // LBP_NUM_REGIONS, rw // LBP_NUM_REGIONS
    ys = np.arange(ry, ry + h - 3)
    xs = np.arange(rx, rx + w - 3)
    if ys.size == 0 or xs.size == 0:
        return np.zeros(LBP_DESC_SIZE, np.uint8)
    if RX == 0 or RY == 0:
        raise OSError("find_lbp: the roi must be at least 7x7 (the firmware divides by zero)")
    if compiled():
        counts = np.zeros(LBP_DESC_SIZE, np.int64)
        if _lbp_counts.attempt(np.ascontiguousarray(gray, np.uint8).reshape(-1), w, rx, ry, int(xs[-1]) + 1,
                               int(ys[-1]) + 1, RX, RY, _UNIFORM, counts) is not NOT_SERVED:
            return (counts & 0xFF).astype(np.uint8)
    flat = gray.ravel().astype(np.int16)
    n = flat.size
    base = ys[:, None] * w + xs[None, :]
    ok = base + 2 * w + 2 < n
    base = np.where(ok, base, 0)
    p = flat[base + w + 1]
    code = np.zeros(base.shape, np.int64)
    for bit, (dy, dx) in enumerate(((0, 0), (0, 1), (0, 2), (1, 2), (2, 2), (2, 1), (2, 0), (1, 0))):
        code |= (flat[base + dy * w + dx] >= p).astype(np.int64) << bit
    region = ((ys - ry) // RY * LBP_NUM_REGIONS)[:, None] + ((xs - rx) // RX)[None, :]
    idx = region * LBP_HIST_SIZE + _UNIFORM[code]
    idx = idx[ok & (idx < LBP_DESC_SIZE)]
    desc = np.bincount(idx.ravel(), minlength=LBP_DESC_SIZE)[:LBP_DESC_SIZE]
    return (desc & 0xFF).astype(np.uint8)


@kernel
def _lbp_counts(flat, w, rx, ry, x_end, y_end, rx_size, ry_size, uniform, counts):
    """``imlib_lbp_desc``'s loops: each pixel's 8-neighbour code against its centre, counted in
    its region's uniform-pattern bin; reads through the flat buffer (``w`` per row), a pixel whose
    window runs past the buffer's end is dropped, as is a bin past the descriptor (the C writes
    past its buffer there)."""
    n = flat.size
    size = counts.size
    for y in range(ry, y_end):
        y_idx = (y - ry) // ry_size * 7
        for x in range(rx, x_end):
            base = y * w + x
            if base + 2 * w + 2 >= n:
                continue
            p = flat[base + w + 1]
            code = 0
            if flat[base] >= p:
                code |= 1
            if flat[base + 1] >= p:
                code |= 2
            if flat[base + 2] >= p:
                code |= 4
            if flat[base + w + 2] >= p:
                code |= 8
            if flat[base + 2 * w + 2] >= p:
                code |= 16
            if flat[base + 2 * w + 1] >= p:
                code |= 32
            if flat[base + 2 * w] >= p:
                code |= 64
            if flat[base + w] >= p:
                code |= 128
            at = (y_idx + (x - rx) // rx_size) * 59 + int(uniform[code])
            if at < size:
                counts[at] += 1


def lbp_distance(d0: np.ndarray, d1: np.ndarray) -> int:
    """``imlib_lbp_desc_distance``: weighted chi-square with integer division, as a uint32."""
    a, b = d0.astype(np.int64), d1.astype(np.int64)
    term = ((a - b) * (a - b)) // np.maximum(a + b, 1)
    w = LBP_WEIGHTS[np.arange(LBP_DESC_SIZE) // LBP_HIST_SIZE]
    total = int((w * term).sum()) & 0xFFFFFFFF
    return total - (1 << 32) if total >= 1 << 31 else total


# ---------------------------------------------------------------------- HOG
def hog(gray: np.ndarray, roi, cell_size: int) -> np.ndarray:
    """The lines ``imlib_find_hog`` draws after clearing the image, in drawing order: rows of
    (x1, y1, x2, y2, colour). All blocks at once; the float32 sums run in the C's order."""
    rx, ry, rw, rh = roi
    wl, hl = rx + rw - 1, ry + rh - 1
    block = cell_size * 2
    x_cells, y_cells = rw // cell_size, rh // cell_size
    bys = np.arange(ry, hl, block)
    bxs = np.arange(rx, wl, block)
    n_blocks = bys.size * bxs.size
    per_block = 9 * 4
    span = 9 * (((block - 1) // 8) * 2 + (block - 1) // 8 + 1)
    buf = np.zeros(max(n_blocks * per_block + span, x_cells * y_cells * 9) + per_block, F)
    if not compiled() or _hog_blocks.attempt(np.ascontiguousarray(gray, np.uint8), rx, ry, wl, hl, block,
                                             degree_table(), buf) is NOT_SERVED:
        _hog_arrays(gray, bys, bxs, hl, wl, block, buf)
    # the picture: cells in hog.c's order (2x2 cells per block), each cell's 9 bins by strength
    l = cell_size // 2
    cby, cbx, cyy, cxx = (v.ravel() for v in np.meshgrid(np.arange(0, y_cells, 2), np.arange(0, x_cells, 2),
                                                         np.arange(2), np.arange(2), indexing="ij"))
    n_cells = cby.size
    # cells reading past the histogram buffer (tiny cells) draw the bins that are there, or none:
    # the missing ones get colour 256, sort last and are dropped
    flat_colour = np.full(n_cells * 9, 256, np.int64)
    avail = min(n_cells * 9, buf.size)
    flat_colour[:avail] = np.clip(ftoi(buf[:avail] * F(255)), 0, 255)
    colour = flat_colour.reshape(n_cells, 9)
    order = np.argsort(colour * 16 + np.arange(9), axis=1)  # stable by colour (ties: no matter)
    bins = np.arange(9) * 20
    half_x = ftoi(F(l) * COS[bins])[order]
    half_y = ftoi(F(l) * SIN[bins])[order]
    x1 = ((cxx + cbx) * cell_size + l)[:, None]
    y1 = ((cyy + cby) * cell_size + l)[:, None]
    lines = np.stack([x1 - half_x, y1 + half_y, x1 + half_x, y1 - half_y,
                      np.take_along_axis(colour, order, axis=1)], axis=-1).reshape(-1, 5)
    return lines[lines[:, 4] < 256]


def _hog_arrays(gray: np.ndarray, bys: np.ndarray, bxs: np.ndarray, hl: int, wl: int, block: int,
                buf: np.ndarray) -> None:
    """:func:`_hog_blocks` as array code: all blocks at once, the float32 sums in the C's order."""
    n_blocks = bys.size * bxs.size
    per_block = 9 * 4
    g = gray.astype(np.int64)
    cy, cx = np.mgrid[0:block, 0:block]
    cy, cx = cy.ravel(), cx.ravel()
    # every block's pixels, block by block, then cy-major as hog.c's loops visit them
    by, bx = np.meshgrid(bys, bxs, indexing="ij")
    yy = (by.reshape(-1, 1) + cy).ravel()
    xx = (bx.reshape(-1, 1) + cx).ravel()
    bi = np.repeat(np.arange(n_blocks), cy.size)
    ccy, ccx = np.tile(cy, n_blocks), np.tile(cx, n_blocks)
    ok = (yy > 0) & (yy < hl) & (xx > 0) & (xx < wl)
    yy, xx, bi, ccy, ccx = yy[ok], xx[ok], bi[ok], ccy[ok], ccx[ok]
    vx = g[yy, xx + 1] - g[yy, xx - 1]
    vy = g[yy + 1, xx] - g[yy - 1, xx]
    m = np.sqrt((vx * vx + vy * vy).astype(F))
    strong = m.astype(np.int64) > 1
    vx, vy, m, bi, ccy, ccx = vx[strong], vy[strong], m[strong], bi[strong], ccy[strong], ccx[strong]
    t = truncated_degrees(vx, vy) // 20  # atan2f(vx, vy): swapped in hog.c too; libm's atan2f
    t = np.where(t == 9, 0, t)
    np.add.at(buf, bi * per_block + ((ccy // 8) * 2 + (ccx // 8)) * 9 + t, m)  # unbuffered, in order
    k = np.zeros(n_blocks, F)
    np.add.at(k, bi, m * m)
    k = np.sqrt(k)
    with np.errstate(invalid="ignore", divide="ignore"):
        normed = buf[:n_blocks * per_block].reshape(n_blocks, per_block) / k[:, None]
    buf[:n_blocks * per_block] = normed.ravel()


@kernel
def _hog_blocks(gray, rx, ry, wl, hl, block, degrees, buf):
    """``imlib_find_hog``'s gradient loops block by block into ``buf`` (float32, zeros): per pixel
    the central differences, ``m = sqrtf``, the 20-degree bin of ``atan2f(vx, vy)`` (the C's
    swapped arguments; ``degrees``: ``_gradient_angle``'s table), ``m`` added at
    ``block * 36 + ((cy / 8) * 2 + cx / 8) * 9 + t`` (past the block's 36 bins for cells over 8
    pixels, as the C); then the block's 36 bins divided by ``sqrtf`` of its ``m * m`` sum."""
    limit = (degrees.shape[1] - 1) // 2
    base = 0
    for y in range(ry, hl, block):
        for x in range(rx, wl, block):
            k = np.float32(0.0)
            for cy in range(block):
                yy = y + cy
                if yy <= 0 or yy >= hl:
                    continue
                for cx in range(block):
                    xx = x + cx
                    if xx <= 0 or xx >= wl:
                        continue
                    vx = np.int64(gray[yy, xx + 1]) - np.int64(gray[yy, xx - 1])
                    vy = np.int64(gray[yy + 1, xx]) - np.int64(gray[yy - 1, xx])
                    m = np.sqrt(np.float32(vx * vx + vy * vy))
                    if int(m) > 1:
                        k = np.float32(k + np.float32(m * m))
                        t = int(degrees[vx if vx >= 0 else -vx, vy + limit]) // 20
                        if t == 9:
                            t = 0
                        at = base + ((cy // 8) * 2 + cx // 8) * 9 + t
                        buf[at] = np.float32(buf[at] + m)
            k = np.sqrt(k)
            for i in range(base, base + 36):
                v = buf[i]
                if k != 0:
                    buf[i] = np.float32(v / k)
                elif v == 0:
                    buf[i] = np.nan  # 0/0, as the C's float division gives
                else:
                    buf[i] = np.inf if v > 0 else -np.inf
            base += 36


# ---------------------------------------------------------------------- eye
@kernel
def _iris_votes(px, py, weight, gcx, gcy, gx, gy, total):
    """find_iris's sums: for each gradient in order, each pixel adds ``t * t * weight`` where the
    unit vector from the gradient's centre to the pixel has a positive dot ``t`` with it (float32;
    the centre pixel itself, a 0/0 direction, adds nothing as the NaN test does in numpy)."""
    for i in range(gcx.size):
        cx = gcx[i]
        cy = gcy[i]
        ux = gx[i]
        uy = gy[i]
        for p in range(px.size):
            dx = np.float32(px[p] - cx)
            dy = np.float32(py[p] - cy)
            mag = np.sqrt(dx * dx + dy * dy)
            if mag == 0:
                continue
            t = (dx / mag) * ux + (dy / mag) * uy
            if t > 0:
                total[p] = total[p] + t * t * weight[p]


def _erased(far: np.ndarray) -> np.ndarray:
    """Which gradients ``filter_gradients``' loop erases: it walks the array erasing each ``far``
    one, and an erase moves the next one into the slot the loop then steps past, so in a run of
    consecutive far gradients the first, third, ... go and the second, fourth, ... stay."""
    idx = np.arange(far.size)
    starts = far & ~np.concatenate([[False], far[:-1]])
    run_start = np.maximum.accumulate(np.where(starts, idx, 0))
    return far & ((idx - run_start) % 2 == 0)


def find_iris(gray: np.ndarray, roi) -> tuple[int, int]:
    rx, ry, rw, rh = roi
    box_w = rw - int(F(0.15) * F(rw))
    box_h = rh - int(F(0.40) * F(rh))
    x_off = rx + int(F(0.15) * F(rw))
    y_off = ry + int(F(0.40) * F(rh))
    g = gray.astype(np.int64)
    ys, xs = np.mgrid[y_off:y_off + box_h - 3, x_off:x_off + box_w - 3]
    ys, xs = ys.ravel(), xs.ravel()
    vx = g[ys, xs] - g[ys, xs + 2] + 2 * g[ys + 1, xs] - 2 * g[ys + 1, xs + 2] + g[ys + 2, xs] - g[ys + 2, xs + 2]
    vy = g[ys, xs] + 2 * g[ys, xs + 1] + g[ys, xs + 2] - g[ys + 2, xs] - 2 * g[ys + 2, xs + 1] - g[ys + 2, xs + 2]
    m = np.sqrt((vx * vx + vy * vy).astype(F))
    keep = m > F(200)
    gm, gx, gy = m[keep], vx[keep].astype(F) / m[keep], vy[keep].astype(F) / m[keep]
    gcx, gcy = xs[keep] + 1, ys[keep] + 1
    # filter_gradients, with the element after each erased one skipped
    n = gm.size
    if n:
        avg = np.cumsum(gm, dtype=F)[-1] / F(n)
        sel = np.flatnonzero(~_erased(fast_sqrtf((gm - avg) * (gm - avg)) > F(100)))
        gm, gx, gy, gcx, gcy = gm[sel], gx[sel], gy[sel], gcx[sel], gcy[sel]
    count = gm.size
    py, px = np.mgrid[y_off:y_off + box_h, x_off:x_off + box_w]
    weight = (255 - g[py, px]).astype(F)
    total = np.zeros(py.shape, F)
    with np.errstate(invalid="ignore", divide="ignore"):
        if not compiled() or _iris_votes.attempt(px.ravel(), py.ravel(), weight.ravel(), gcx.astype(np.int64),
                                                 gcy.astype(np.int64), gx.astype(F), gy.astype(F),
                                                 total.reshape(-1)) is NOT_SERVED:
            for i in range(count):
                dx = (px - int(gcx[i])).astype(F)
                dy = (py - int(gcy[i])).astype(F)
                mag = np.sqrt(dx * dx + dy * dy)
                dx, dy = dx / mag, dy / mag
                t = dx * gx[i] + dy * gy[i]
                total = total + np.where(t > F(0.0), t * t * weight, F(0))
        total = total / F(count)
    flat = total.ravel()
    better = flat > F(0.0)  # max_dot starts at 0; the first strict maximum wins
    if not better.any():
        return 0, 0
    best = np.flatnonzero(flat == np.max(flat[better]))[0]
    return int(px.ravel()[best]), int(py.ravel()[best])


# ---------------------------------------------------------------------- similarity
class Similarity:
    """``similarity``: mean, stdev, min and max of the 8x8 blocks' SSIM."""

    __slots__ = ("_v",)

    def __init__(self, avg, std, mn, mx):
        self._v = tuple(float(F(v)) for v in (avg, std, mn, mx))

    def mean(self):
        return self._v[0]

    def stdev(self):
        return self._v[1]

    def min(self):
        return self._v[2]

    def max(self):
        return self._v[3]

    def __getitem__(self, i):
        return self._v[i]

    def __len__(self):
        return 4

    def __repr__(self) -> str:
        return '{"mean":%f, "stdev":%f, "min":%f, "max":%f}' % self._v


def similarity(a: np.ndarray, b: np.ndarray, cmax: int) -> Similarity:
    """``imlib_get_similarity`` on two planes of channel values (gray, or L of RGB565)."""
    h, w = a.shape
    nbx = (w + 7) // 8
    nby = (h + 7) // 8
    c1, c2 = F(cmax) * F(0.01), F(cmax) * F(0.03)
    acc = np.zeros(4, F)
    if compiled() and _similarity_blocks.attempt(np.ascontiguousarray(a, np.int64), np.ascontiguousarray(b, np.int64),
                                                 c1, c2, acc) is not NOT_SERVED:
        s, s2, mn, mx = (F(v) for v in acc)
        blocks = F(nbx * nby)
        avg = s / blocks
        with np.errstate(invalid="ignore"):
            std = fsqrt(s2 / blocks - avg * avg)
        return Similarity(avg, std, mn, mx)
    x = np.arange(nbx)
    cols = [x + i for i in range(8)]
    widths = np.minimum(w - x * 8, 8)
    s = F(0)
    s2 = F(0)
    mn, mx = F(np.finfo(np.float32).max), F(np.finfo(np.float32).tiny)
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    for byi in range(nby):
        rows = slice(byi * 8, min(byi * 8 + 8, h))
        sx = np.zeros(nbx, np.int64)
        sy, sxx, syy, sxy = (np.zeros(nbx, np.int64) for _ in range(4))
        for i in range(8):
            use = i < widths
            c = np.minimum(cols[i], w - 1)
            pa = ai[rows][:, c].sum(axis=0)
            pb = bi[rows][:, c].sum(axis=0)
            sx += np.where(use, pa, 0)
            sy += np.where(use, pb, 0)
            sxx += np.where(use, (ai[rows][:, c] ** 2).sum(axis=0), 0)
            syy += np.where(use, (bi[rows][:, c] ** 2).sum(axis=0), 0)
            sxy += np.where(use, (ai[rows][:, c] * bi[rows][:, c]).sum(axis=0), 0)
        bh = min(h - byi * 8, 8)
        size = widths * bh
        mxv = sx // size
        myv = sy // size
        vx = sxx - 2 * mxv * sx + size * mxv * mxv
        vy = syy - 2 * myv * sy + size * myv * myv
        vxy = sxy - (mxv * sy + myv * sx) + size * mxv * myv
        with np.errstate(invalid="ignore", divide="ignore"):
            ssim = (((2 * mxv * myv).astype(F) + c1) * ((2 * vxy).astype(F) + c2)) / \
                   (((mxv * mxv + myv * myv).astype(F) + c1) * ((vx + vy).astype(F) + c2))
        for v in ssim.astype(F):
            s = s + v
            s2 = s2 + v * v
            mn = mn if mn < v else v  # IM_MIN / IM_MAX: a NaN block wins
            mx = mx if mx > v else v
    blocks = F(nbx * nby)
    avg = s / blocks
    with np.errstate(invalid="ignore"):
        std = fsqrt(s2 / blocks - avg * avg)
    return Similarity(avg, std, mn, mx)


@kernel
def _similarity_blocks(a, b, c1, c2, acc):
    """:func:`similarity`'s blocks (numba), in its order and arithmetic: each 8x8 block's integer
    sums (its columns are ``block + i``, as the firmware indexes them, clamped to the image), the
    SSIM of the block in float32, and the running float32 sum, sum of squares, min and max (a NaN
    block wins them) into ``acc``."""
    f32 = np.float32
    h, w = a.shape
    nbx = (w + 7) // 8
    nby = (h + 7) // 8
    s = f32(0)
    s2 = f32(0)
    mn = f32(3.4028234663852886e38)
    mx = f32(1.1754943508222875e-38)
    for byi in range(nby):
        r0 = byi * 8
        r1 = min(r0 + 8, h)
        bh = min(h - r0, 8)
        for bx in range(nbx):
            width = min(w - bx * 8, 8)
            sx = 0
            sy = 0
            sxx = 0
            syy = 0
            sxy = 0
            for i in range(width):
                c = min(bx + i, w - 1)
                for r in range(r0, r1):
                    pa = a[r, c]
                    pb = b[r, c]
                    sx += pa
                    sy += pb
                    sxx += pa * pa
                    syy += pb * pb
                    sxy += pa * pb
            size = width * bh
            mxv = sx // size
            myv = sy // size
            vx = sxx - 2 * mxv * sx + size * mxv * mxv
            vy = syy - 2 * myv * sy + size * myv * myv
            vxy = sxy - (mxv * sy + myv * sx) + size * mxv * myv
            num = (f32(2 * mxv * myv) + c1) * (f32(2 * vxy) + c2)
            den = (f32(mxv * mxv + myv * myv) + c1) * (f32(vx + vy) + c2)
            if den == f32(0):  # IEEE division (numba would raise)
                if num != num or num == f32(0):
                    v = f32(np.nan)
                elif (num < f32(0)) != (math.copysign(1.0, den) < 0.0):
                    v = f32(-np.inf)
                else:
                    v = f32(np.inf)
            else:
                v = num / den
            s = s + v
            s2 = s2 + v * v
            mn = mn if mn < v else v
            mx = mx if mx > v else v
    acc[0] = s
    acc[1] = s2
    acc[2] = mn
    acc[3] = mx


# ---------------------------------------------------------------------- the mixin
class FeaturesMixin(ImageHost):
    def find_lbp(self, roi, *args, **kwargs):
        """The LBP descriptor of ``roi`` (grayscale images), for ``image.match_descriptor``."""
        if self._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        r = _args.roi(self.width(), self.height(), kwargs.pop("roi", roi))
        return LBPDescriptor(lbp_desc(self._pix, r))

    def find_hog(self, *args, **kwargs):
        """Replace the image by its HOG picture (grayscale): ``roi``, ``size`` (cell size, 8)."""
        if self._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        r = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        size = _args.to_int(_args.pick(args, 1, kwargs, "size", 8))
        if size <= 0:
            raise OSError("size must be > 0 (the firmware divides by it)")
        lines = hog(self._pix, r, size)
        self._pix[...] = 0
        self._thin_lines(*lines.T)  # draw_line(x1, y1, x2, y2, color=c, thickness=1) for each, in order
        self._touch()
        return self

    def find_eye(self, roi, *args, **kwargs):
        """(x, y) of the pupil inside ``roi`` (an eye found by the eye Haar cascade), grayscale."""
        if self._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        r = _args.roi(self.width(), self.height(), kwargs.pop("roi", roi))
        return find_iris(self._pix, r)

    def get_similarity(self, image):
        """Block SSIM against another image, a file path or a colour (``similarity`` object)."""
        from ._pixels import operand

        raw = operand(self, image)
        if self._fmt == GRAYSCALE:
            return similarity(self._pix, raw, 255)
        if self._fmt == BINARY:  # stats.c's BINARY case: the 0/1 values, c1/c2 from COLOR_BINARY_MAX = 1
            return similarity(self._pix, raw, 1)
        from . import _lab

        return similarity(_lab.lab_of(self._pix)[0], _lab.lab_of(raw)[0], 100)


# ---------------------------------------------------------------------- module functions
def match_lbp(d0: LBPDescriptor, d1: LBPDescriptor) -> int:
    return lbp_distance(d0.hist, d1.hist)


def save_lbp(desc: LBPDescriptor, fp) -> None:
    fp.write(struct.pack("<I", DESC_LBP))
    fp.write(desc.hist.astype(np.uint8).tobytes())


def load_lbp(data: bytes) -> LBPDescriptor:
    if len(data) != LBP_DESC_SIZE:
        raise OSError("The file is corrupted.")
    return LBPDescriptor(np.frombuffer(data, np.uint8).copy())


def is_image(obj) -> bool:
    return isinstance(obj, ImageBase)
