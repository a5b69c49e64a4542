"""``Image.resize`` with the K210 firmware's own algorithms (maixpy-api.md §2.6), vectorised.

The firmware computes in C ``float`` (IEEE single precision); so do we (numpy float32), because
models are sensitive to which source pixel is picked when ``x * sx`` lands on an integer.

RGB565
  * same size: copy.
  * ``w0 >= w or h0 > h``: nearest neighbour, source ``(int(x*sx), int(y*sy))``.
  * else (enlarging both ways): bilinear with half-pixel centres on the 5/6-bit fields; the left /
    top edge extrapolates (``x_src`` in (-0.5, 0) truncates to 0), results are cast to ``uint8``
    (truncation, modulo 256) and packed *without masking* as the firmware's macro does.
Grayscale
  * ``w >= w0 or h >= h0``: bilinear, half-pixel centres, right/bottom neighbour clamped,
    result cast to uint8 (truncation, modulo 256); the float32 terms are grouped as the
    firmware's ``-ffast-math`` build groups them (checked against the compiled C).
  * else box average over inclusive ranges ``[int(y*sy), int((y+1)*sy)]`` for rows **and columns**
    (the firmware uses ``sy`` for the columns), indexing the flat buffer ``row*w0 + col`` — columns
    past the row end wrap into the next row, reads past the end of the buffer see 0.
"""

from __future__ import annotations

import numpy as np

from . import _color
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)

_F = np.float32


@kernel
def _box_means(flat, w0, r0, r1, c0, c1, out):
    """The shrinking gray resize's loops: for output (y, x) the integer mean of rows r0[y]..r1[y]
    and columns c0[x]..c1[x] (inclusive) read as ``in[row * w0 + col]``, 0 past the buffer's end
    (summed through an integral image of the rows and columns the boxes cover)."""
    n = flat.shape[0]
    rows = r1[out.shape[0] - 1] + 1
    cols = c1[out.shape[1] - 1] + 1
    integ = np.zeros((rows + 1, cols + 1), np.int64)
    for yy in range(rows):
        run = 0
        base = yy * w0
        for xx in range(cols):
            i = base + xx
            if i < n:
                run += flat[i]
            integ[yy + 1, xx + 1] = integ[yy, xx + 1] + run
    for y in range(out.shape[0]):
        a, b = r0[y], r1[y] + 1
        for x in range(out.shape[1]):
            c, d = c0[x], c1[x] + 1
            total = integ[b, d] - integ[a, d] - integ[b, c] + integ[a, c]
            out[y, x] = total // ((b - a) * (d - c))


def _c_uint8(v: np.ndarray) -> np.ndarray:
    """C ``(uint8_t)float``: truncate toward zero, keep the low 8 bits."""
    return (np.trunc(v).astype(np.int64) & 0xFF).astype(np.uint8)


def resize_rgb565(src: np.ndarray, w: int, h: int) -> np.ndarray:
    h0, w0 = src.shape
    if w0 == w and h0 == h:
        return src.copy()
    sx = _F(w0) / _F(w)
    sy = _F(h0) / _F(h)
    if w0 >= w or h0 > h:
        xs = (np.arange(w, dtype=_F) * sx).astype(np.int64)
        ys = (np.arange(h, dtype=_F) * sy).astype(np.int64)
        return np.take(np.take(src, ys, axis=0), xs, axis=1)
    # enlarging in both directions: bilinear on the 5/6-bit fields
    x_src = (np.arange(w, dtype=_F) + _F(0.5)) * sx - _F(0.5)
    y_src = (np.arange(h, dtype=_F) + _F(0.5)) * sy - _F(0.5)
    x1 = np.trunc(x_src).astype(np.int64)  # (uint16_t) of a value > -0.5 -> 0 at the edge
    y1 = np.trunc(y_src).astype(np.int64)
    x2 = x1 + 1
    y2 = y1 + 1
    edge = (x2[None, :] >= w0) | (y2[:, None] >= h0)
    x2c = np.minimum(x2, w0 - 1)
    y2c = np.minimum(y2, h0 - 1)
    wx2 = (x2.astype(_F) - x_src)[None, :]
    wx1 = (x_src - x1.astype(_F))[None, :]
    wy2 = (y2.astype(_F) - y_src)[:, None]
    wy1 = (y_src - y1.astype(_F))[:, None]
    fields = _color.split565(src)
    out_fields = []
    for f in fields:
        f = f.astype(_F)
        p11 = f[y1[:, None], x1[None, :]]
        p21 = f[y1[:, None], x2c[None, :]]
        p12 = f[y2c[:, None], x1[None, :]]
        p22 = f[y2c[:, None], x2c[None, :]]
        t1 = wx2 * p11 + wx1 * p21
        t2 = wx2 * p12 + wx1 * p22
        out_fields.append(_c_uint8(wy2 * t1 + wy1 * t2).astype(np.uint32))
    r, g, b = out_fields
    packed = ((r << 3) | (g >> 3) | ((g & 7) << 13) | (b << 8)) & 0xFFFF
    out = packed.astype(np.uint16)
    nearest = src[y1[:, None], np.minimum(x1, w0 - 1)[None, :]]
    return np.where(edge, nearest, out)


def resize_gray(src: np.ndarray, w: int, h: int) -> np.ndarray:
    h0, w0 = src.shape
    sx = _F(w0) / _F(w)
    sy = _F(h0) / _F(h)
    if w >= w0 or h >= h0:
        # (x+0.5)*sx-0.5 in float32 (the literals are float under -fsingle-precision-constant).
        # The firmware's -ffast-math build factors the four products per row and rewrites
        # x1 - xf as x1 + (0.5 - (x+0.5)*sx): v = (p00*ax + p01*bx)*ay + (p10*ax + p11*bx)*by
        xprod = (np.arange(w, dtype=_F) + _F(0.5)) * sx
        yprod = (np.arange(h, dtype=_F) + _F(0.5)) * sy
        xf = (xprod - _F(0.5)).astype(_F)
        yf = (yprod - _F(0.5)).astype(_F)
        x0 = np.trunc(xf).astype(np.int64)
        y0 = np.trunc(yf).astype(np.int64)
        x1 = x0 + 1
        y1 = y0 + 1
        vx1 = np.where(x0 < w0 - 1, x1, x0)
        vy1 = np.where(y0 < h0 - 1, y1, y0)
        ax = (x1.astype(_F) + (_F(0.5) - xprod))[None, :]  # weight of column x0
        bx = (xf - x0.astype(_F))[None, :]  # weight of column x0+1
        ay = (y1.astype(_F) + (_F(0.5) - yprod))[:, None]
        by = (yf - y0.astype(_F))[:, None]
        f = src.astype(_F)
        row0 = f[y0[:, None], x0[None, :]] * ax + f[y0[:, None], vx1[None, :]] * bx
        row1 = f[vy1[:, None], x0[None, :]] * ax + f[vy1[:, None], vx1[None, :]] * bx
        v = row0 * ay + row1 * by
        return _c_uint8(v)
    # shrinking both ways: box average, columns ranged with sy (firmware bug), flat indexing
    ys = np.arange(h + 1, dtype=_F) * sy
    xs = np.arange(w + 1, dtype=_F) * sy
    r0 = ys[:-1].astype(np.int64)
    r1 = ys[1:].astype(np.int64)
    c0 = xs[:-1].astype(np.int64)
    c1 = xs[1:].astype(np.int64)
    out = np.empty((h, w), np.uint8)
    if compiled() and _box_means.attempt(np.ascontiguousarray(src).reshape(-1), w0, r0, r1, c0, c1,
                                         out) is not NOT_SERVED:
        return out
    rows = int(r1.max()) + 1
    cols = int(c1.max()) + 1
    flat = src.reshape(-1).astype(np.int64)
    idx = np.arange(rows)[:, None] * w0 + np.arange(cols)[None, :]
    virt = np.where(idx < flat.size, flat[np.minimum(idx, flat.size - 1)], 0)
    integ = np.zeros((rows + 1, cols + 1), dtype=np.int64)
    integ[1:, 1:] = virt.cumsum(0).cumsum(1)
    R0, R1 = r0[:, None], r1[:, None] + 1
    C0, C1 = c0[None, :], c1[None, :] + 1
    total = integ[R1, C1] - integ[R0, C1] - integ[R1, C0] + integ[R0, C0]
    count = (R1 - R0) * (C1 - C0)
    return (total // count).astype(np.uint8)
