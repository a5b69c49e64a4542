"""Compiled (numba) kernels of the fast KPU paths, all on HWC uint8 maps and exact integers.

* ``epilogue`` — batch-norm, activation and pool of a layer's sums ``G`` ([H, W, C], int32 or
  float holding integers) in one pass per output pixel: pools that commute with the activation
  are taken on ``G`` first, the batch-norm is the device's int64 ``((G + C)·mul >> shift) + add``
  and the activation is a table lookup or, when the table would be too big, the 16-segment
  formula itself (``act_mode`` 1) — both exactly ``kpu.activation.activate``.
* ``depthwise`` — a depthwise 1×1/3×3 layer computed and finished per output pixel (the sums
  never leave registers), the same pools and activation.
* ``im2col`` — the [P, k·k·C] uint8 (or centred float) matrix of an HWC map for a GEMM, with the
  pad value at the border and only the sampled pixels of a selection pool.

Why numba: every one of these is a per-pixel loop that numpy can only express as several full
passes over int64/float64 temporaries (the profile of issue 14: 45 % of the time in batch-norm +
table lookups, 50 % in the depthwise layers). Compiled once and cached on disk
(``kpu.fast.cache_dir()``), so later processes load them in milliseconds.

Pool modes (``reduce``): 0 one sample per output pixel (no pool, or a selection pool's kept
pixel via ``s``/``oy0``/``ox0``), 1 max of ``G`` before the activation, 2 max after it, 3 mean
(floor) after it. Window coordinates past the map's edge are clamped (pools 8 and 9).
"""

from __future__ import annotations

import numpy as np
from numba import njit

_NOGIL = dict(cache=True, nogil=True)


@njit(**_NOGIL)
def _round_shift(t, s):
    # nncase's round_shift (kpu-hardware.md §5.3), as kpu.activation._round_shift_int
    if s == 0:
        return t
    q = t >> s
    f = t & ((np.int64(1) << s) - 1)
    half = np.int64(1) << (s - 1)
    if f < half:
        return q
    sign = np.int64(-1) if t < 0 else np.int64(1)
    if f > half:
        return q + sign
    if q & 1:
        return q + sign
    return q


@njit(**_NOGIL)
def _act_one(bn, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    """The activation of one batch-norm value: 0..255, or -1 below every segment start."""
    if act_mode == 0:
        i = bn - lo
        if i < 0:
            i = 0
        elif i > span:
            i = span
        return np.int64(lut[i])
    n = bp.shape[0]
    if bn <= bp[0]:
        return np.int64(-1)
    a = 0
    b = n - 1
    while a < b:  # last breakpoint below bn
        mid = (a + b + 1) >> 1
        if bp[mid] < bn:
            a = mid
        else:
            b = mid - 1
    r = _round_shift((bn - sx[a]) * sm[a], ss[a]) + sb[a]
    if r < 0:
        return np.int64(0)
    if r > 255:
        return np.int64(255)
    return r


@njit(**_NOGIL)
def _bn_value(v, c, cc, mul, shift, add, fm, fc):
    """The device's batch-norm ``((G + C)·mul >> shift) + add``: as ``floor(G·m + c)`` in float64
    when the layer's bounds make that exact (``fm``/``fc`` given, checked at load), else in int64."""
    if fm.shape[0]:
        return np.int64(np.floor(v * fm[c] + fc[c]))
    return ((np.int64(v) + cc[c]) * mul[c] >> shift[c]) + add[c]


@njit(**_NOGIL)
def _act_block(bn, dst, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    """``dst[i, c] = activation(bn[i, c])`` for a block of batch-norm values; returns how many lie
    below every segment start. Table mode runs in two passes (index arithmetic, then the gather)
    so the first one vectorises."""
    n, ch = bn.shape
    bad = 0
    if act_mode == 0:
        for i in range(n):
            for c in range(ch):
                v = bn[i, c] - lo
                v = 0 if v < 0 else v
                bn[i, c] = span if v > span else v
        for i in range(n):
            for c in range(ch):
                dst[i, c] = lut[bn[i, c]]
        return bad
    if act_mode == 3:
        # step buckets (``activation.step_buckets``): lut = first, bp = at, sx = inc, ss[0] = j
        j = ss[0]
        for i in range(n):
            for c in range(ch):
                v = bn[i, c] - lo
                v = 0 if v < 0 else v
                v = span if v > span else v
                q = v >> j
                dst[i, c] = lut[q] + (sx[q] if v >= bp[q] else 0)
        return bad
    if act_mode == 2:
        # clamped to [lo, lo + span], where the few segments of ``bp`` cover every value
        top = bp.shape[0] - 1
        hi = lo + span
        first = 1
        while first * 2 <= top:
            first *= 2
        for i in range(n):
            row = bn[i]
            out = dst[i]
            for c in range(ch):
                v = row[c]
                v = lo if v < lo else v
                v = hi if v > hi else v
                # the last breakpoint below v, by halving steps (a fixed few for 16 segments)
                j = 0
                step = first if top > 0 and v > bp[1] else 0  # most values: the first interval
                while step > 0:
                    k = j + step
                    if k <= top and bp[k] < v:
                        j = k
                    step >>= 1
                r = _round_shift((v - sx[j]) * sm[j], ss[j]) + sb[j]
                out[c] = 0 if r < 0 else (255 if r > 255 else r)
        return bad
    for i in range(n):
        for c in range(ch):
            v = _act_one(bn[i, c], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
            if v < 0:
                bad += 1
                v = 0
            dst[i, c] = v
    return bad


@njit(**_NOGIL)
def _finish_row(g, ys, s, ox0, k, reduce, out_row, cc, mul, shift, add, fm, fc, act_mode, lo, span, lut, bp, sx, sm, ss, sb,
                bn, m, tmp, acc):
    """One output row from the sums ``g`` [rows, W, C]: window rows ``ys`` (k of them, already
    clamped), output column ``ox`` reads columns ``ox·s + ox0 + dx`` (clamped)."""
    w = g.shape[1]
    ch = g.shape[2]
    ow = out_row.shape[0]
    bad = 0
    if reduce == 0:
        y = ys[0]
        for ox in range(ow):
            x = ox * s + ox0
            for c in range(ch):
                bn[ox, c] = _bn_value(g[y, x, c], c, cc, mul, shift, add, fm, fc)
        return _act_block(bn[:ow], out_row, act_mode, lo, span, lut, bp, sx, sm, ss, sb)
    if reduce == 1:
        for ox in range(ow):
            x0 = ox * s + ox0
            y0 = ys[0]
            for c in range(ch):
                m[ox, c] = g[y0, x0, c]
            for dy in range(k):
                y = ys[dy]
                for dx in range(k):
                    x = min(x0 + dx, w - 1)
                    for c in range(ch):
                        v = g[y, x, c]
                        if v > m[ox, c]:
                            m[ox, c] = v
            for c in range(ch):
                bn[ox, c] = _bn_value(m[ox, c], c, cc, mul, shift, add, fm, fc)
        return _act_block(bn[:ow], out_row, act_mode, lo, span, lut, bp, sx, sm, ss, sb)
    acc[:ow] = 0
    for dy in range(k):
        for dx in range(k):
            for ox in range(ow):
                src = g[ys[dy], min(ox * s + ox0 + dx, w - 1)]
                dst = bn[ox]
                for c in range(ch):
                    dst[c] = _bn_value(src[c], c, cc, mul, shift, add, fm, fc)
            bad += _act_block(bn[:ow], tmp[:ow], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
            for ox in range(ow):
                arow = acc[ox]
                trow = tmp[ox]
                if reduce == 2:
                    for c in range(ch):
                        if trow[c] > arow[c]:
                            arow[c] = trow[c]
                else:
                    for c in range(ch):
                        arow[c] += trow[c]
    div = k * k
    for ox in range(ow):
        arow = acc[ox]
        orow = out_row[ox]
        if reduce == 2:
            for c in range(ch):
                orow[c] = arow[c]
        else:
            for c in range(ch):
                orow[c] = arow[c] // div
    return bad


@njit(**_NOGIL)
def epilogue(g, out, cc, mul, shift, add, fm, fc, k, s, oy0, ox0, reduce, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    """``out[oy, ox, c]`` (uint8 [OH, OW, C]) from the sums ``g`` [H, W, C]; returns the count of
    values below every activation segment start (the caller raises the reference's error)."""
    h, w, ch = g.shape
    oh, ow = out.shape[0], out.shape[1]
    bn = np.empty((ow, ch), np.int64)
    m = np.empty((ow, ch), g.dtype)
    tmp = np.empty((ow, ch), np.uint8)
    acc = np.empty((ow, ch), np.int64)
    ys = np.empty(max(k, 1), np.int64)
    bad = 0
    for oy in range(oh):
        for dy in range(k):
            ys[dy] = min(oy * s + oy0 + dy, h - 1)
        bad += _finish_row(g, ys, s, ox0, k, reduce, out[oy], cc, mul, shift, add, fm, fc, act_mode, lo, span, lut, bp, sx, sm, ss,
                           sb, bn, m, tmp, acc)
    return bad


@njit(**_NOGIL)
def _dw_row(xp, wt, kk, y, cs, cx0, grow):
    """Depthwise sums of conv row ``y`` at columns ``j·cs + cx0`` into ``grow`` [cols, C].

    ``xp`` is the centred input (x − 128) with a one-pixel border of ``pad − 128`` when kk == 3."""
    cols, ch = grow.shape
    for j in range(cols):
        for c in range(ch):
            grow[j, c] = 0
    for ky in range(kk):
        yy = y + ky
        for kx in range(kk):
            t = ky * kk + kx
            for j in range(cols):
                xx = j * cs + cx0 + kx
                for c in range(ch):
                    grow[j, c] += xp[yy, xx, c] * wt[t, c]


@njit(**_NOGIL)
def depthwise(x, wt, kk, pad, out, cc, mul, shift, add, fm, fc, k, s, oy0, ox0, reduce, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    """A whole depthwise layer: x uint8 [H, W, C], wt [k·k, C] (= w + arg_x >> shr_x; int32 when
    the sums fit, else int64), out uint8 [OH, OW, C]. The sums of the rows one output row needs
    are made in a small buffer and finished at once."""
    h, w, ch = x.shape
    oh, ow = out.shape[0], out.shape[1]
    border = 1 if kk == 3 else 0
    xp = np.empty((h + 2 * border, w + 2 * border, ch), np.int16)  # x − 128 (and pad − 128) fit int16
    if border:
        pv = pad - 128
        xp[0] = pv
        xp[h + 1] = pv
        xp[:, 0] = pv
        xp[:, w + 1] = pv
    for yy in range(h):
        for xx in range(w):
            src = x[yy, xx]
            dst = xp[yy + border, xx + border]
            for c in range(ch):
                dst[c] = np.int64(src[c]) - 128
    # columns the window reads: selection pools only their kept pixel, other pools every column
    if reduce == 0:
        cols, cs, cx0, rs, rk = ow, s, ox0, s, 1
    else:
        cols, cs, cx0, rs, rk = w, 1, 0, s, k
    grows = np.empty((rk, cols, ch), wt.dtype)
    ys = np.empty(rk, np.int64)
    bn = np.empty((ow, ch), np.int64)
    m = np.empty((ow, ch), wt.dtype)
    tmp = np.empty((ow, ch), np.uint8)
    acc = np.empty((ow, ch), np.int64)
    bad = 0
    for oy in range(oh):
        for dy in range(rk):
            _dw_row(xp, wt, kk, min(oy * rs + oy0 + dy, h - 1), cs, cx0, grows[dy])
            ys[dy] = dy
        if reduce == 0:
            bad += _finish_row(grows, ys, 1, 0, 1, 0, out[oy], cc, mul, shift, add, fm, fc, act_mode, lo, span, lut, bp, sx, sm, ss,
                               sb, bn, m, tmp, acc)
        else:
            bad += _finish_row(grows, ys, s, ox0, k, reduce, out[oy], cc, mul, shift, add, fm, fc, act_mode, lo, span, lut, bp, sx, sm,
                               ss, sb, bn, m, tmp, acc)
    return bad


@njit(**_NOGIL)
def im2col(x, kk, pad, s, oy0, ox0, oh, ow, out, center):
    """Rows of the GEMM source: ``out[i*OW + j, t*C + c]`` = tap t of sampled pixel (i, j).

    ``out`` is uint8 (device values, ``center`` 0) or float (``x − 128``, ``center`` 128); the
    sampled pixel of row i, column j is (i·s + oy0, j·s + ox0); taps outside the map read ``pad``.
    """
    h, w, ch = x.shape
    pv = pad - center
    for i in range(oh):
        y = i * s + oy0
        for j in range(ow):
            xx = j * s + ox0
            r = i * ow + j
            if kk == 1:
                for c in range(ch):
                    out[r, c] = x[y, xx, c] - center
                continue
            for ky in range(3):
                yy = y + ky - 1
                for kx in range(3):
                    xi = xx + kx - 1
                    base = (ky * 3 + kx) * ch
                    if yy < 0 or yy >= h or xi < 0 or xi >= w:
                        for c in range(ch):
                            out[r, base + c] = pv
                    else:
                        for c in range(ch):
                            out[r, base + c] = x[yy, xi, c] - center


@njit(**_NOGIL)
def pad_chw(x, pad, oy0, ox0, out):
    """``out[c, y, x]`` = the HWC map ``x`` with a one-pixel ``pad`` border, shifted by (oy0, ox0)."""
    h, w, ch = x.shape
    oc, ph, pw = out.shape
    for c in range(oc):
        for y in range(ph):
            yy = y + oy0 - 1
            for xx in range(pw):
                xi = xx + ox0 - 1
                if yy < 0 or yy >= h or xi < 0 or xi >= w:
                    out[c, y, xx] = pad
                else:
                    out[c, y, xx] = x[yy, xi, c]
