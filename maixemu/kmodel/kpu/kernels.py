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
def _bn_vector(g, cc, mul, shift, add, out):
    for c in range(out.shape[0]):
        out[c] = ((np.int64(g[c]) + cc[c]) * mul[c] >> shift[c]) + add[c]


@njit(**_NOGIL)
def _act_vector(bn, dst, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    bad = 0
    if act_mode == 0:
        for c in range(bn.shape[0]):
            i = bn[c] - lo
            if i < 0:
                i = 0
            elif i > span:
                i = span
            dst[c] = lut[i]
        return bad
    for c in range(bn.shape[0]):
        v = _act_one(bn[c], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
        if v < 0:
            bad += 1
            v = 0
        dst[c] = v
    return bad


@njit(**_NOGIL)
def epilogue(g, out, cc, mul, shift, add, k, s, oy0, ox0, reduce, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    """``out[oy, ox, c]`` (uint8 [OH, OW, C]) from the sums ``g`` [H, W, C]; returns the count of
    values below every activation segment start (the caller raises the reference's error)."""
    h, w, ch = g.shape
    oh, ow = out.shape[0], out.shape[1]
    bn = np.empty(ch, np.int64)
    m = np.empty(ch, g.dtype)
    acc = np.empty(ch, np.int64)
    tmp = np.empty(ch, np.uint8)
    bad = 0
    for oy in range(oh):
        for ox in range(ow):
            y0 = oy * s + oy0
            x0 = ox * s + ox0
            if reduce == 0:
                _bn_vector(g[y0, x0], cc, mul, shift, add, bn)
                bad += _act_vector(bn, out[oy, ox], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
            elif reduce == 1:
                m[:] = g[y0, x0]
                for dy in range(k):
                    y = min(y0 + dy, h - 1)
                    for dx in range(k):
                        x = min(x0 + dx, w - 1)
                        row = g[y, x]
                        for c in range(ch):
                            if row[c] > m[c]:
                                m[c] = row[c]
                _bn_vector(m, cc, mul, shift, add, bn)
                bad += _act_vector(bn, out[oy, ox], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
            else:
                acc[:] = 0
                for dy in range(k):
                    y = min(y0 + dy, h - 1)
                    for dx in range(k):
                        x = min(x0 + dx, w - 1)
                        _bn_vector(g[y, x], cc, mul, shift, add, bn)
                        bad += _act_vector(bn, tmp, act_mode, lo, span, lut, bp, sx, sm, ss, sb)
                        if reduce == 2:
                            for c in range(ch):
                                if tmp[c] > acc[c]:
                                    acc[c] = tmp[c]
                        else:
                            for c in range(ch):
                                acc[c] += tmp[c]
                dst = out[oy, ox]
                if reduce == 2:
                    for c in range(ch):
                        dst[c] = acc[c]
                else:
                    for c in range(ch):
                        dst[c] = acc[c] // (k * k)
    return bad


@njit(**_NOGIL)
def _dw_sums(x, wt, kk, pad, y, xx, out):
    """Depthwise sums ``Σ (x−128)·w'`` at conv pixel (y, xx) for every channel (int64: exact for any w')."""
    h, w, ch = x.shape
    for c in range(ch):
        out[c] = 0
    if kk == 1:
        row = x[y, xx]
        for c in range(ch):
            out[c] = (np.int64(row[c]) - 128) * wt[0, c]
        return
    t = 0
    for ky in range(3):
        yy = y + ky - 1
        for kx in range(3):
            xi = xx + kx - 1
            wrow = wt[t]
            t += 1
            if yy < 0 or yy >= h or xi < 0 or xi >= w:
                pv = np.int64(pad) - 128
                for c in range(ch):
                    out[c] += pv * wrow[c]
            else:
                row = x[yy, xi]
                for c in range(ch):
                    out[c] += (np.int64(row[c]) - 128) * wrow[c]


@njit(**_NOGIL)
def depthwise(x, wt, kk, pad, out, cc, mul, shift, add, k, s, oy0, ox0, reduce, act_mode, lo, span, lut, bp, sx, sm, ss, sb):
    """A whole depthwise layer: x uint8 [H, W, C], wt int64 [k·k, C] (= w + arg_x >> shr_x), out uint8 [OH, OW, C]."""
    h, w, ch = x.shape
    oh, ow = out.shape[0], out.shape[1]
    g = np.empty(ch, np.int64)
    m = np.empty(ch, np.int64)
    bn = np.empty(ch, np.int64)
    acc = np.empty(ch, np.int64)
    tmp = np.empty(ch, np.uint8)
    bad = 0
    for oy in range(oh):
        for ox in range(ow):
            y0 = oy * s + oy0
            x0 = ox * s + ox0
            if reduce == 0:
                _dw_sums(x, wt, kk, pad, y0, x0, g)
                _bn_vector(g, cc, mul, shift, add, bn)
                bad += _act_vector(bn, out[oy, ox], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
            elif reduce == 1:
                first = True
                for dy in range(k):
                    y = min(y0 + dy, h - 1)
                    for dx in range(k):
                        xx = min(x0 + dx, w - 1)
                        _dw_sums(x, wt, kk, pad, y, xx, g)
                        if first:
                            m[:] = g
                            first = False
                        else:
                            for c in range(ch):
                                if g[c] > m[c]:
                                    m[c] = g[c]
                _bn_vector(m, cc, mul, shift, add, bn)
                bad += _act_vector(bn, out[oy, ox], act_mode, lo, span, lut, bp, sx, sm, ss, sb)
            else:
                acc[:] = 0
                for dy in range(k):
                    y = min(y0 + dy, h - 1)
                    for dx in range(k):
                        xx = min(x0 + dx, w - 1)
                        _dw_sums(x, wt, kk, pad, y, xx, g)
                        _bn_vector(g, cc, mul, shift, add, bn)
                        bad += _act_vector(bn, tmp, act_mode, lo, span, lut, bp, sx, sm, ss, sb)
                        if reduce == 2:
                            for c in range(ch):
                                if tmp[c] > acc[c]:
                                    acc[c] = tmp[c]
                        else:
                            for c in range(ch):
                                acc[c] += tmp[c]
                dst = out[oy, ox]
                if reduce == 2:
                    for c in range(ch):
                        dst[c] = acc[c]
                else:
                    for c in range(ch):
                        dst[c] = acc[c] // (k * k)
    return bad


@njit(**_NOGIL)
def im2col(x, kk, pad, s, oy0, ox0, oh, ow, out, center):
    """Rows of the GEMM source: ``out[i*OW + j, t*C + c]`` = tap t of sampled pixel (i, j).

    ``out`` is uint8 (device values, ``center`` 0) or float (``x − 128``, ``center`` 128); the
    sampled pixel of row i, column j is (i·s + oy0, j·s + ox0); taps outside the map read ``pad``.
    """
    h, w, ch = x.shape
    for i in range(oh):
        y = i * s + oy0
        for j in range(ow):
            xx = j * s + ox0
            dst = out[i * ow + j]
            if kk == 1:
                src = x[y, xx]
                for c in range(ch):
                    dst[c] = src[c] - center
                continue
            t = 0
            for ky in range(3):
                yy = y + ky - 1
                for kx in range(3):
                    xi = xx + kx - 1
                    base = t * ch
                    t += 1
                    if yy < 0 or yy >= h or xi < 0 or xi >= w:
                        for c in range(ch):
                            dst[base + c] = pad - center
                    else:
                        src = x[yy, xi]
                        for c in range(ch):
                            dst[base + c] = src[c] - center
