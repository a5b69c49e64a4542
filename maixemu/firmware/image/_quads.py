"""The AprilTag quad detector of the firmware (``apriltag.c``: ``apriltag_quad_thresh``,
``fit_quad``, ``refine_edges``), shared by ``find_rects`` and ``find_apriltags``.

OpenMV's port runs AprilTag 2 in single precision (``#define double float``) with the fast
approximations of ``fmath.c`` for sqrt/atan2/exp/log, a table sine/cosine for ``sin``/``cos`` and
libm's ``cosf``/``sinf``; every step below keeps that float32 arithmetic and its order of operations
(no fused multiply-add: the golden cases accept the non-contracted build).

Device facts reproduced because they change answers:

* the union-find keeps 16-bit node ids (``uint16_t``): in an image of more than 65536 pixels the
  pixel ``i`` and ``i + 65536`` share one node;
* clusters come out of a hash table of ``OMV_FB_ALLOC_SIZE / sizeof(void *)`` = 89600 buckets (the
  K210 full build's ``fb_alloc_all`` gives 700 KiB), bucket by bucket, newest cluster first.

Not reproduced: the firmware's heap for cluster points is sized from the free frame-buffer memory,
and on a busy, large image it can run out and drop points silently; here no point is dropped.
"""

from __future__ import annotations

import math

import numpy as np

from . import _fmath as fm
from ._fmath import F, fast_atan2f, fsqrt
from ._jit import kernel

FB_ALLOC_SIZE = 700 * 1024
N_CLUSTER_BUCKETS = FB_ALLOC_SIZE // 8  # sizeof(struct uint32_zarray_entry *) on the 64-bit K210
MAX_NMAXIMA = 10
MIN_CLUSTER_PIXELS = 5
MAX_LINE_FIT_MSE = F(10.0)
CRITICAL_RAD = F(10) * F(math.pi) / F(180)
MIN_WHITE_BLACK_DIFF = 5
PI = F(math.pi)


# ---------------------------------------------------------------------- float helpers
def _sincos(x) -> tuple[np.ndarray, np.ndarray]:
    """libm ``cosf``/``sinf`` (the build turns the pair into ``sincosf``), elementwise."""
    flat = np.atleast_1d(np.asarray(x, F))
    c = np.array([fm.cosf(v) for v in flat], F).reshape(np.shape(x))
    s = np.array([fm.sinf(v) for v in flat], F).reshape(np.shape(x))
    return c, s


def cosf(x) -> np.float32:
    return fm.cosf(x)


def sinf(x) -> np.float32:
    return fm.sinf(x)


_SIN_TABLE = None


def _sin_table() -> np.ndarray:
    global _SIN_TABLE
    if _SIN_TABLE is None:
        # sinTable_f32: sin(2*pi*i/512) to 8 decimals (the CMSIS table), 513 entries
        _SIN_TABLE = np.round(np.sin(2 * np.pi * np.arange(513) / 512), 8).astype(F)
    return _SIN_TABLE


def table_sin(x) -> np.float32:
    """``riscv_sin_f32`` (the ``sin`` macro of apriltag.c): the same table, floor of ``x / 2pi`` by the
    sign of ``x``, and an index wrap at 512."""
    x = F(x)
    t = _sin_table()
    inp = x * F(0.159154943092)
    n = int(np.trunc(inp))
    if x < 0:
        n -= 1
    inp = inp - F(n)
    findex = F(512) * inp
    if findex >= F(512):
        findex = findex - F(512)
    index = int(findex) & 0x1FF
    fract = findex - F(index)
    return F((F(1.0) - fract) * t[index] + fract * t[index + 1])


def table_cos(x) -> np.float32:
    """``riscv_cos_f32`` (the ``cos`` macro): 512-entry sine table with linear interpolation."""
    x = F(x)
    t = _sin_table()
    inp = x * F(0.159154943092) + F(0.25)
    n = int(np.trunc(inp))
    if inp < 0:
        n -= 1
    inp = inp - F(n)
    findex = F(512) * inp
    index = int(findex) & 0x1FF
    fract = findex - F(index)
    return (F(1.0) - fract) * t[index] + fract * t[index + 1]


def fast_expf(x) -> np.float32:
    """``fast_expf``: the double-layout bit trick repacked as a float (fmath.c)."""
    v = F(1512775) * F(x) + F(1072632447)
    bits = int(v) & 0xFFFFFFFF if v >= 0 else 0
    m = bits & 0xFFFFF
    e = (bits >> 20) & 0x7FF
    s = bits >> 31
    e = (e - 1023 + 127) & 0xFF
    packed = (s << 31) | (e << 23) | (m << 3)
    return np.array([packed], np.uint32).view(F)[0]


def fast_log2(x) -> np.float32:
    vx = int(np.array([F(x)], F).view(np.uint32)[0])
    mx = np.array([(vx & 0x007FFFFF) | 0x3F000000], np.uint32).view(F)[0]
    y = F(vx) * F(1.1920928955078125e-7)
    return y - F(124.22551499) - F(1.498030302) * mx - F(1.72587999) / (F(0.3520887068) + mx)


def fast_log(x) -> np.float32:
    return F(0.69314718) * fast_log2(x)


def _atan2(y, x) -> np.float32:
    return fm.fast_atan2f_1(y, x)


# ---------------------------------------------------------------------- threshold
def threshold(im: np.ndarray) -> np.ndarray:
    """``threshold()``: 4x4 tiles, 3x3 max/min spread, 127 where max - min < 5, else 0/255 at
    ``min + (max - min) / 2``; the partial tiles at the right/bottom reuse the last full tile
    without the low-contrast test."""
    h, w = im.shape
    ts = 4
    tw, th = w // ts, h // ts
    full = im[:th * ts, :tw * ts].reshape(th, ts, tw, ts)
    tmax = full.max(axis=(1, 3)).astype(np.int32)
    tmin = full.min(axis=(1, 3)).astype(np.int32)
    pmax = np.pad(tmax, 1, constant_values=0)
    pmin = np.pad(tmin, 1, constant_values=255)
    smax = np.zeros_like(tmax)
    smin = np.full_like(tmin, 255)
    for dy in (0, 1, 2):
        for dx in (0, 1, 2):
            smax = np.maximum(smax, pmax[dy:dy + th, dx:dx + tw])
            smin = np.minimum(smin, pmin[dy:dy + th, dx:dx + tw])
    out = np.zeros((h, w), np.uint8)
    ty = np.minimum(np.arange(h) // ts, th - 1)
    tx = np.minimum(np.arange(w) // ts, tw - 1)
    mx = smax[np.ix_(ty, tx)]
    mn = smin[np.ix_(ty, tx)]
    thresh = mn + (mx - mn) // 2
    out[...] = np.where(im.astype(np.int32) > thresh, 255, 0)
    low = np.repeat(np.repeat((smax - smin) < MIN_WHITE_BLACK_DIFF, ts, 0), ts, 1)
    out[:th * ts, :tw * ts][low] = 127
    return out


# ---------------------------------------------------------------------- union-find (sequential)
@kernel
def _union_find(t, parent):
    """``do_unionfind_line`` over rows 0..h-2 with 16-bit node ids; ``parent`` is updated in place."""
    h, w = t.shape
    for y in range(h - 1):
        for x in range(1, w - 1):
            v = t[y, x]
            if v == 127:
                continue
            a = (y * w + x) & 0xFFFF
            for k in range(4):
                if k == 0:
                    yy, xx = y, x + 1
                elif k == 1:
                    yy, xx = y + 1, x
                elif v == 255:
                    yy, xx = y + 1, x - 1 if k == 2 else x + 1
                else:
                    break
                if t[yy, xx] != v:
                    continue
                b = (yy * w + xx) & 0xFFFF
                # unionfind_get_representative (with path compression) of a, then of b
                ra = rb = 0
                for which in range(2):
                    node = a if which == 0 else b
                    root = node
                    while parent[root] != root:
                        root = parent[root]
                    while parent[node] != root:
                        nxt = parent[node]
                        parent[node] = root
                        node = nxt
                    if which == 0:
                        ra = root
                    else:
                        rb = root
                if ra != rb:
                    parent[rb] = ra
    return parent


def _roots(parent: np.ndarray) -> np.ndarray:
    root = parent.astype(np.int64)
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt


def clusters(t: np.ndarray) -> list[dict]:
    """The boundary clusters of the thresholded image, in the firmware's hash-table order.

    Each cluster: arrays ``x, y`` (twice the pixel coordinates, the point half-way between a white
    and a black pixel) and ``gx, gy`` (towards the white pixel, +-255), in scan order.
    """
    h, w = t.shape
    parent = _union_find(t, np.arange(min(w * h + 1, 65536), dtype=np.int64))
    root = _roots(parent)
    ti = t.astype(np.int32)
    ys, xs = np.mgrid[1:h - 1, 1:w - 1]
    ys, xs = ys.ravel(), xs.ravel()
    v0 = ti[ys, xs]
    ok0 = v0 != 127
    parts = []
    for k, (dx, dy) in enumerate(((1, 0), (0, 1))):
        v1 = ti[ys + dy, xs + dx]
        sel = ok0 & (v0 + v1 == 255)
        y0, x0 = ys[sel], xs[sel]
        r0 = root[(y0 * w + x0) & 0xFFFF]
        r1 = root[((y0 + dy) * w + x0 + dx) & 0xFFFF]
        cid = np.where(r0 < r1, (r1 << 16) + r0, (r0 << 16) + r1)
        d = (v1[sel] - v0[sel])
        order = (y0 * w + x0) * 2 + k  # scan order: pixel, then (1,0) before (0,1)
        parts.append((order, cid, 2 * x0 + dx, 2 * y0 + dy, dx * d, dy * d))
    order = np.concatenate([p[0] for p in parts])
    srt = np.argsort(order, kind="stable")
    cid, px, py, gx, gy = (np.concatenate([p[i] for p in parts])[srt] for i in range(1, 6))
    if cid.size == 0:
        return []
    ids, first, inverse = np.unique(cid, return_index=True, return_inverse=True)
    bucket = ((np.uint64(2654435761) * ids.astype(np.uint64)) >> np.uint64(32)) % np.uint64(N_CLUSTER_BUCKETS)
    # buckets ascending; inside a bucket the newest (latest first point) first
    cluster_order = np.lexsort((-first, bucket.astype(np.int64)))
    by_cluster = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[by_cluster], np.arange(ids.size + 1))
    out = []
    for c in cluster_order:
        idx = by_cluster[bounds[c]:bounds[c + 1]]
        out.append(dict(x=px[idx], y=py[idx], gx=gx[idx], gy=gy[idx]))
    return out


# ---------------------------------------------------------------------- sorting as ptsort does it
def _ptsort(theta: np.ndarray) -> np.ndarray:
    """The permutation ``ptsort`` applies (sorting networks up to 5, then a merge that takes the
    second half on ties). Without ties among the values any sort gives it."""
    order = np.argsort(theta, kind="stable")
    st = theta[order]
    if not np.any(st[1:] == st[:-1]):
        return order
    return np.array(_ptsort_exact(list(theta), list(range(theta.size))), np.int64)


def _ptsort_exact(th: list, idx: list) -> list:
    sz = len(idx)
    if sz <= 1:
        return idx
    a = list(idx)

    def swap(i, j):
        if th[a[i]] > th[a[j]]:
            a[i], a[j] = a[j], a[i]

    nets = {2: ((0, 1),), 3: ((0, 1), (1, 2), (0, 1)),
            4: ((0, 1), (2, 3), (0, 2), (1, 3), (1, 2)),
            5: ((0, 1), (3, 4), (1, 2), (0, 1), (0, 3), (2, 4), (1, 2), (2, 3), (1, 2))}
    if sz <= 5:
        for i, j in nets[sz]:
            swap(i, j)
        return a
    asz = sz // 2
    left = _ptsort_exact(th, a[:asz])
    right = _ptsort_exact(th, a[asz:])
    out = []
    i = j = 0
    while i < len(left) and j < len(right):
        if th[left[i]] < th[right[j]]:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


# ---------------------------------------------------------------------- line fits
class _Moments:
    """Cumulative weighted moments of the sorted cluster points (``struct line_fit_pt``)."""

    def __init__(self, Mx, My, Mxx, Myy, Mxy, W):
        self.M = (Mx, My, Mxx, Myy, Mxy, W)
        self.sz = Mx.size

    def span(self, i0, i1):
        """Moment sums and N of points [i0, i1] (wrapping when i1 < i0); arrays allowed."""
        i0 = np.asarray(i0)
        i1 = np.asarray(i1)
        sz = self.sz
        wrap = i0 >= i1
        out = []
        for m in self.M:
            direct = m[i1] - np.where(i0 > 0, m[np.maximum(i0 - 1, 0)], F(0))
            direct = np.where(i0 > 0, direct, m[i1])
            # the source reads ``M = M[sz-1] - M[i0-1]; M += M[i1]``; -ffast-math reassociates it
            wrapped = (m[sz - 1] + m[i1]) - m[np.maximum(i0 - 1, 0)]
            out.append(np.where(wrap, wrapped, direct).astype(F))
        n = np.where(wrap, sz - i0 + i1 + 1, i1 - i0 + 1)
        return out, n


def fit_line(mom: _Moments, i0, i1):
    """``fit_line``: (Ex, Ey, nx, ny), err, mse — vectorised over index arrays."""
    (Mx, My, Mxx, Myy, Mxy, W), n = mom.span(i0, i1)
    Ex = Mx / W
    Ey = My / W
    Cxx = Mxx / W - Ex * Ex
    Cxy = Mxy / W - Ex * Ey
    Cyy = Myy / W - Ey * Ey
    normal_theta = F(0.5) * fast_atan2f(F(-2) * Cxy, Cyy - Cxx)
    nx, ny = _sincos(normal_theta)
    N = np.asarray(n).astype(F)
    # as the -ffast-math build evaluates ``nx*nx*N*Cxx + 2*nx*ny*N*Cxy + ny*ny*N*Cyy`` (and the
    # same without N): one shared sum, N factored out
    mse = Cyy * (ny * ny) + nx * (Cxx * nx + Cxy * (ny + ny))
    err = N * mse
    return (Ex, Ey, nx, ny), err, mse


def fit_line_1(mom: _Moments, i0: int, i1: int):
    """:func:`fit_line` of one index pair, in scalars: the same float32 operations in the same
    order (a test compares the two), without the array machinery the per-quad fits pay for."""
    sz = mom.sz
    vals = []
    for m in mom.M:
        if i0 >= i1:  # wrapping
            vals.append(F((m[sz - 1] + m[i1]) - m[i0 - 1 if i0 > 0 else 0]))
        elif i0 > 0:
            vals.append(F(m[i1] - m[i0 - 1]))
        else:
            vals.append(F(m[i1]))
    Mx, My, Mxx, Myy, Mxy, W = vals
    n = sz - i0 + i1 + 1 if i0 >= i1 else i1 - i0 + 1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        Ex = Mx / W
        Ey = My / W
        Cxx = Mxx / W - Ex * Ex
        Cxy = Mxy / W - Ex * Ey
        Cyy = Myy / W - Ey * Ey
        normal_theta = F(0.5) * fm.fast_atan2f_1(F(-2) * Cxy, Cyy - Cxx)
        nx, ny = fm.cosf(normal_theta), fm.sinf(normal_theta)
        mse = Cyy * (ny * ny) + nx * (Cxx * nx + Cxy * (ny + ny))
        err = F(n) * mse
    return (Ex, Ey, nx, ny), err, mse


def _filter_taps() -> np.ndarray:
    sigma = F(1)
    cutoff = F(0.05)
    fsz = int(fsqrt(-fast_log(cutoff) * F(2) * sigma * sigma)) + 1
    fsz = 2 * fsz + 1
    return np.array([fast_expf(F(-(j * j)) / (F(2) * sigma * sigma)) for j in range(-(fsz // 2), fsz - fsz // 2)], F)


def segment_maxima(mom: _Moments) -> list[int] | None:
    """``quad_segment_maxima``: the 4 corner indices, or None."""
    sz = mom.sz
    ksz = min(20, sz // 12)
    if ksz < 2:
        return None
    i = np.arange(sz)
    _, errs, _ = fit_line(mom, (i + sz - ksz) % sz, (i + ksz) % sz)
    taps = _filter_taps()
    fsz = taps.size
    acc = np.zeros(sz, F)
    for k in range(fsz):
        acc = acc + errs[(i + k - fsz // 2 + sz) % sz] * taps[k]
    errs = acc
    is_max = (errs > errs[(i + 1) % sz]) & (errs > errs[(i + sz - 1) % sz])
    maxima = np.flatnonzero(is_max)
    if maxima.size < 4:
        return None
    if maxima.size > MAX_NMAXIMA:
        thresh = np.sort(errs[maxima])[::-1][MAX_NMAXIMA]
        maxima = maxima[errs[maxima] > thresh]
    max_dot = table_cos(CRITICAL_RAD)
    nm = int(maxima.size)
    best = None
    best_error = F(np.inf)
    cache: dict = {}

    def fit(a, b):
        key = (a, b)
        if key not in cache:
            cache[key] = fit_line_1(mom, int(a), int(b))
        return cache[key]

    for m0 in range(nm - 3):
        i0 = int(maxima[m0])
        for m1 in range(m0 + 1, nm - 2):
            i1 = int(maxima[m1])
            p01, e01, s01 = fit(i0, i1)
            if s01 > MAX_LINE_FIT_MSE:
                continue
            for m2 in range(m1 + 1, nm - 1):
                i2 = int(maxima[m2])
                p12, e12, s12 = fit(i1, i2)
                if s12 > MAX_LINE_FIT_MSE:
                    continue
                dot = p01[2] * p12[2] + p01[3] * p12[3]
                if abs(dot) > max_dot:
                    continue
                for m3 in range(m2 + 1, nm):
                    i3 = int(maxima[m3])
                    p23, e23, s23 = fit(i2, i3)
                    if s23 > MAX_LINE_FIT_MSE:
                        continue
                    p30, e30, s30 = fit(i3, i0)
                    if s30 > MAX_LINE_FIT_MSE:
                        continue
                    err = e01 + e12 + e23 + e30
                    if err < best_error:
                        best_error = err
                        best = [i0, i1, i2, i3]
    if best is None:
        return None
    if best_error / F(sz) < MAX_LINE_FIT_MSE:
        return best
    return None


def _intersect(lines, i):
    """Corner i = intersection of lines i and (i+1)&3 (``fit_quad``/``refine_edges``); None if det ~ 0."""
    a, b = lines[i], lines[(i + 1) & 3]
    A00, A01 = a[3], -b[3]
    A10, A11 = -a[2], b[2]
    B0 = -a[0] + b[0]
    B1 = -a[1] + b[1]
    det = A00 * A11 - A10 * A01
    W00 = A11 / det if det != 0 else F(np.inf)
    W01 = -A01 / det if det != 0 else F(np.inf)
    return det, (W00, W01, B0, B1, A00, A10, a)


def _corner(parts):
    W00, W01, B0, B1, A00, A10, a = parts
    L0 = W00 * B0 + W01 * B1
    return [a[0] + L0 * A00, a[1] + L0 * A10]


def fit_quad(im: np.ndarray, cl: dict, override_mode: bool) -> list | None:
    """``fit_quad``: the 4 corners (float32 pixel coordinates) or None."""
    x, y = cl["x"], cl["y"]
    sz = x.size
    if sz < 4:
        return None
    xmax, xmin, ymax, ymin = max(0, int(x.max())), int(x.min()), max(0, int(y.max())), int(y.min())
    cx = F(xmin + xmax) * F(0.5) + F(0.05118)
    cy = F(ymin + ymax) * F(0.5) + F(-0.028581)
    dx = x.astype(F) - cx
    dy = y.astype(F) - cy
    theta = fast_atan2f(dy, dx)
    terms = dx * cl["gx"].astype(F) + dy * cl["gy"].astype(F)
    dot = np.cumsum(terms, dtype=F)[-1]
    if not override_mode and dot < 0:
        return None
    order = _ptsort(theta)
    xs, ys = x[order], y[order]
    keep = np.ones(sz, bool)
    keep[1:] = (xs[1:] != xs[:-1]) | (ys[1:] != ys[:-1])
    xs, ys = xs[keep], ys[keep]
    sz = xs.size
    if sz < 4:
        return None
    fx = xs.astype(F) * F(0.5) + F(0.5)
    fy = ys.astype(F) * F(0.5) + F(0.5)
    ix, iy = fx.astype(np.int64), fy.astype(np.int64)
    h, w = im.shape
    inside = (ix > 0) & (ix + 1 < w) & (iy > 0) & (iy + 1 < h)
    g = im.astype(np.int64)
    cxi, cyi = np.clip(ix, 1, w - 2), np.clip(iy, 1, h - 2)
    gxv = g[cyi, cxi + 1] - g[cyi, cxi - 1]
    gyv = g[cyi + 1, cxi] - g[cyi - 1, cxi]
    W = np.where(inside, np.sqrt((gxv * gxv + gyv * gyv).astype(F)) + F(1), F(1)).astype(F)
    Wfx, Wfy = W * fx, W * fy
    mom = _Moments(np.cumsum(Wfx, dtype=F), np.cumsum(Wfy, dtype=F), np.cumsum(Wfx * fx, dtype=F),
                   np.cumsum(Wfy * fy, dtype=F), np.cumsum(Wfx * fy, dtype=F), np.cumsum(W, dtype=F))
    indices = segment_maxima(mom)
    if indices is None:
        return None
    lines = []
    for i in range(4):
        p, _, mse = fit_line_1(mom, int(indices[i]), int(indices[(i + 1) & 3]))
        if mse > MAX_LINE_FIT_MSE:
            return None
        lines.append([F(v) for v in p])
    quad = []
    for i in range(4):
        det, parts = _intersect(lines, i)
        if abs(det) < F(0.001):
            return None
        quad.append(_corner(parts))
    if not _quad_plausible(quad):
        return None
    return quad


def _quad_plausible(q) -> bool:
    """Area >= 64 (two Heron triangles) and the turning angles summing to about 2*pi."""
    area = F(0)
    for idxs in ((0, 1, 2, 0), (2, 3, 0, 2)):
        ln = []
        for i in range(3):
            a, b = q[idxs[i]], q[idxs[i + 1]]
            ddx, ddy = b[0] - a[0], b[1] - a[1]
            ln.append(fsqrt(ddx * ddx + ddy * ddy))
        p = (ln[0] + ln[1] + ln[2]) / F(2)
        with np.errstate(invalid="ignore"):
            area = area + fsqrt(p * (p - ln[0]) * (p - ln[1]) * (p - ln[2]))
    if area < F(64):
        return False
    total = F(0)
    ok = True
    for i in range(4):
        i0, i1, i2 = i, (i + 1) & 3, (i + 2) & 3
        t0 = _atan2(q[i0][1] - q[i1][1], q[i0][0] - q[i1][0])
        t1 = _atan2(q[i2][1] - q[i1][1], q[i2][0] - q[i1][0])
        dtheta = t0 - t1
        if dtheta < 0:
            dtheta = dtheta + F(2) * PI
        if dtheta < CRITICAL_RAD or dtheta > (PI - CRITICAL_RAD):
            ok = False
        total = total + dtheta
    if total < F(6.2) or total > F(6.4):
        return False
    return ok


def refine_edges(im: np.ndarray, quad: list) -> list:
    """``refine_edges``: refit each edge to the strongest gradients across it, re-intersect."""
    h, w = im.shape
    lines = []
    for edge in range(4):
        a, b = edge, (edge + 1) & 3
        nx = quad[b][1] - quad[a][1]
        ny = -quad[b][0] + quad[a][0]
        mag = fsqrt(nx * nx + ny * ny)
        nx = nx / mag
        ny = ny / mag
        nsamples = max(16, int(mag / F(8)))
        Mx = My = Mxx = Mxy = Myy = N = F(0)
        inv_n = F(1.0) / F(nsamples + 1)
        for s in range(nsamples):
            alpha = (F(s) + F(1.0)) * inv_n  # the build multiplies by 1/(nsamples + 1)
            x0 = alpha * quad[a][0] + (F(1) - alpha) * quad[b][0]
            y0 = alpha * quad[a][1] + (F(1) - alpha) * quad[b][1]
            Mn = F(0)
            Mcount = F(0)
            n = F(-2.0)
            while n <= F(2.0):
                x1 = int(x0 + (n + F(1)) * nx)
                y1 = int(y0 + (n + F(1)) * ny)
                if 0 <= x1 < w and 0 <= y1 < h:
                    x2 = int(x0 + (n - F(1)) * nx)
                    y2 = int(y0 + (n - F(1)) * ny)
                    if 0 <= x2 < w and 0 <= y2 < h:
                        g1, g2 = int(im[y1, x1]), int(im[y2, x2])
                        if g1 >= g2:
                            weight = F((g2 - g1) * (g2 - g1))
                            Mn = Mn + weight * n
                            Mcount = Mcount + weight
                n = n + F(0.25)
            if Mcount == 0:
                continue
            n0 = Mn / Mcount
            bestx = x0 + n0 * nx
            besty = y0 + n0 * ny
            Mx = Mx + bestx
            My = My + besty
            Mxx = Mxx + bestx * bestx
            Mxy = Mxy + bestx * besty
            Myy = Myy + besty * besty
            N = N + F(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            Ex, Ey = Mx / N, My / N
            Cxx = Mxx / N - Ex * Ex
            Cxy = Mxy / N - Ex * Ey
            Cyy = Myy / N - Ey * Ey
        if N == 0:
            # 0/0 everywhere: the build's fast_atan2f gives NaN for NaN input, so this line's normal
            # is NaN and its two corners keep their old place (the det test fails)
            lines.append([F(np.nan)] * 4)
            continue
        # ``Cyy - Cxx`` as the build evaluates it: (Myy/N + (Ex*Ex - Mxx/N)) - Ey*Ey
        with np.errstate(invalid="ignore", divide="ignore"):
            x_arg = (Myy / N + (Ex * Ex - Mxx / N)) - Ey * Ey
        normal_theta = F(0.5) * _atan2(F(-2) * Cxy, x_arg)
        lines.append([Ex, Ey, cosf(normal_theta), sinf(normal_theta)])
    out = [list(p) for p in quad]
    for i in range(4):
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            det, parts = _intersect(lines, i)
            if abs(det) > F(0.001):
                out[i] = _corner(parts)
    return out


def detect_quads(im: np.ndarray, override_mode: bool) -> list[list]:
    """``apriltag_quad_thresh``: every plausible quad, in the firmware's order."""
    h, w = im.shape
    if w < 8 or h < 8:
        return []
    t = threshold(im)
    quads = []
    limit = 3 * (2 * w + 2 * h)
    for cl in clusters(t):
        n = cl["x"].size
        if n < MIN_CLUSTER_PIXELS or n > limit:
            continue
        q = fit_quad(im, cl, override_mode)
        if q is not None:
            quads.append(q)
    return quads


# ---------------------------------------------------------------------- polygon overlap (g2d)
def _seg(p0, p1):
    ux, uy = p1[0] - p0[0], p1[1] - p0[1]
    mag = fsqrt(ux * ux + uy * uy)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (p0[0], p0[1], ux / mag, uy / mag, p1)


def _coord(line, q):
    return (q[0] - line[0]) * line[2] + (q[1] - line[1]) * line[3]


def _segments_intersect(sa, sb) -> bool:
    m00, m01 = sa[2], -sb[2]
    m10, m11 = sa[3], -sb[3]
    det = m00 * m11 - m01 * m10
    if abs(det) < F(0.00000001):  # a NaN det goes on, and NaN fails every test below: "intersects"
        return False
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        i00 = m11 / det
        i01 = -m01 / det
        b00 = sb[0] - sa[0]
        b10 = sb[1] - sa[1]
        x00 = i00 * b00 + i01 * b10
        tmp = (sa[2] * x00 + sa[0], sa[3] * x00 + sa[1])
        for s in (sa, sb):
            a = _coord(s, (s[0], s[1]))
            b = _coord(s, s[4])
            c = _coord(s, tmp)
            if (c < a and c < b) or (c > a and c > b):
                return False
    return True


def _contains(poly, q) -> bool:
    last = 0
    acc = 0
    n = len(poly)
    for i in range(n + 1):
        p = poly[i % n]
        if p[0] < q[0]:
            quadrant = 2 if p[1] < q[1] else 1
        else:
            quadrant = 3 if p[1] < q[1] else 0
        if i > 0:
            dq = quadrant - last
            if dq in (-3, 1):
                acc += 1
            elif dq in (-1, 3):
                acc -= 1
            elif dq in (-2, 2):
                p0 = poly[i - 1]
                nx = p[1] - q[1]
                ny = -p[0] + q[0]
                d = nx * (p0[0] - q[0]) + ny * (p0[1] - q[1])
                acc += -2 if d < 0 else 2
        last = quadrant
    return acc >= 2 or acc <= -2


def polygons_overlap(pa, pb) -> bool:
    """``g2d_polygon_overlaps_polygon``."""
    for ia in range(len(pa)):
        sa = _seg(pa[ia], pa[(ia + 1) % len(pa)])
        for ib in range(len(pb)):
            if _segments_intersect(sa, _seg(pb[ib], pb[(ib + 1) % len(pb)])):
                return True
    for a, b in ((pa, pb), (pb, pa)):
        p = ((b[0][0] + b[1][0] + b[2][0]) / F(3), (b[0][1] + b[1][1] + b[2][1]) / F(3))
        if _contains(a, p):
            return True
    return False


def _prefer_smaller(pref: int, q0, q1) -> int:
    if pref:
        return pref
    if q0 < q1:
        return -1
    if q1 < q0:
        return 1
    return 0


def drop_overlapping(dets: list, corners_of=lambda d: d) -> list:
    """The firmware's reconciliation: of two overlapping quads keep the one whose corner
    coordinates compare smaller first (the exact loop, with its index retries)."""
    dets = list(dets)
    i0 = 0
    while i0 < len(dets):
        p0 = corners_of(dets[i0])
        i1 = i0 + 1
        restart = False
        while i1 < len(dets):
            p1 = corners_of(dets[i1])
            if polygons_overlap(p0, p1):
                pref = 0
                for i in range(4):
                    pref = _prefer_smaller(pref, p0[i][0], p1[i][0])
                    pref = _prefer_smaller(pref, p0[i][1], p1[i][1])
                if pref < 0:
                    del dets[i1]
                    continue  # retry the same index (i1-- then the loop's i1++)
                del dets[i0]
                restart = True  # i0-- then the loop's i0++: the same i0 again
                break
            i1 += 1
        if restart:
            continue
        i0 += 1
    return dets
