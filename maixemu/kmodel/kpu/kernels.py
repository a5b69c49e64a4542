"""Compiled (numba) kernels of the fast KPU paths, all on HWC uint8 maps and exact integers.

* ``epilogue`` — batch-norm, activation and pool of a layer's sums ``G`` ([H, W, C], int32 or
  float holding integers): pools that commute with the activation are taken on ``G`` first,
  then the batch-norm and the activation (``bn_act``), then pools that do not commute.
* ``depthwise`` — a depthwise 1×1/3×3 layer computed and finished row by row (the sums of one
  output row live in a small buffer), the same pools and activation.
* ``depthwise3_f32`` — a 3×3 depthwise layer on exact float32 sums, four conv rows per pass
  from a ring of converted, pad-bordered input rows, finished block by block (no pool) or row
  by row (``kpu.hwc._dw_sums`` chooses it when the weights prove the sums below 2**24);
  ``depthwise3_f32_flat`` the same sums for layers without a pool, from buffers at constant
  strides (``DW_ROW_STRIDE``: fewer registers, no spills on AVX2).
* ``im2col`` — the [P, k·k·C] uint8 (or centred float) matrix of an HWC map for a GEMM, with the
  pad value at the border and only the sampled pixels of a selection pool.
* ``pad_rows`` / ``im2col_patch`` — the GEMM source of a 3×3 layer with at most three input
  channels (the camera image): one row of 16 or 32 bytes per output pixel, its 3×3×C patch as
  three 16-byte copies;
* ``pack_rgbx`` / ``im2col_rgbx`` — the same for four channels: every pixel as one 32-bit word,
  nine words per output pixel.

Why these loops look the way they do: the per-value work (batch-norm, activation) runs over
*flat* runs of an HWC map, ``T`` values at a time, with the per-channel parameters tiled to
``T`` (a multiple of the channel count) — so every loop is one contiguous stream that LLVM
vectorises (AVX2/AVX-512) whatever the channel count, with no branches in the body:

* the batch-norm is ``floor(G·m + c)`` in float64 (exact: ``kpu.hwc._float_bn`` proves it per
  layer at load), or the device's int64 ``((G + C)·mul >> shift) + add`` when it is not;
* ``act_mode`` 4, **linear**: on the clamp range ``[lo, lo+span]`` the activation is one or two
  of its 16 segments (every model here: ReLU-like tables), each with ``y_mul >= 0``, so
  ``round_shift((bn − x)·y_mul, shift) + bias`` is ``rint((bn − x)·(y_mul·2**-shift)) + bias`` —
  exact in float64 (the product is an integer below 2**52 times a power of two, ``rint`` rounds
  half to even as ``round_shift`` does for t ≥ 0). Its plain form (``kpu.hwc._linear``: one
  segment that needs no clamp, x and bias folded into the batch-norm) is two roundings and the
  uint8 clamp per value;
* ``act_mode`` 0 a table lookup, 3 step buckets (one word per bucket), in two passes (vectorised
  index arithmetic, then the gathers); 1/2 the segments themselves, one value at a time (tables
  no model here needs).

Compiled once and cached on disk (``kpu.fast.cache_dir()``), so later processes load them in
milliseconds.

Pool modes (``reduce``): 0 one sample per output pixel (no pool, or a selection pool's kept
pixel via ``s``/``oy0``/``ox0``), 1 max of ``G`` before the activation, 2 max after it, 3 mean
(floor) after it. Window coordinates past the map's edge are clamped (pools 8 and 9).
"""

from __future__ import annotations

import math
from typing import Callable, Literal, TypedDict, cast

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


class _JitOptions(TypedDict, total=False):
    """The ``njit`` keywords these kernels use (typed, so ``njit(**options)`` type-checks)."""

    cache: bool
    nogil: bool
    fastmath: set[str]
    error_model: Literal["python", "numpy"]


_NOGIL: _JitOptions = {"cache": True, "nogil": True}

def _copy16(typingctx, dst, doff, src, soff):
    """``dst[doff : doff+16] = src[soff : soff+16]`` (uint8 arrays with unit stride, both ranges in
    bounds: the caller's duty) as one unaligned 16-byte move. A byte loop does not become one:
    LLVM cannot rule out that the two arrays overlap, and copies byte by byte (8x slower)."""
    if not all(isinstance(a, types.Array) and a.dtype == types.uint8 for a in (dst, src)):
        return None
    sig = types.void(dst, doff, src, soff)

    def codegen(context, builder, signature, args):
        d, d_off, s, s_off = args
        d_arr = context.make_array(signature.args[0])(context, builder, d)
        s_arr = context.make_array(signature.args[2])(context, builder, s)
        vec = ir.VectorType(ir.IntType(8), 16).as_pointer()
        src_ptr = builder.bitcast(builder.gep(s_arr.data, [s_off]), vec)
        dst_ptr = builder.bitcast(builder.gep(d_arr.data, [d_off]), vec)
        builder.store(builder.load(src_ptr, align=1), dst_ptr, align=1)
        return context.get_dummy_value()

    return sig, codegen


#: (typed as what a kernel calls: the intrinsic's first parameter is numba's typing context)
copy16 = cast(Callable[[np.ndarray, int, np.ndarray, int], None], intrinsic(_copy16))

#: act_mode values (see the module docstring)
LUT, SEGMENTS, SEGMENTS_CLAMPED, STEPS, LINEAR = 0, 1, 2, 3, 4


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
def _segment_value(v, bp, sx, sm, ss, sb, clamp_lo, clamp_hi, clamped):
    """The activation of one batch-norm value by its segments: 0..255, or -1 below them all."""
    if clamped:
        v = clamp_lo if v < clamp_lo else v
        v = clamp_hi if v > clamp_hi else v
    top = bp.shape[0] - 1
    if v <= bp[0]:
        return np.int64(-1)
    a = 0
    b = top
    while a < b:  # last breakpoint below v
        mid = (a + b + 1) >> 1
        if bp[mid] < v:
            a = mid
        else:
            b = mid - 1
    r = _round_shift((v - sx[a]) * sm[a], ss[a]) + sb[a]
    if r < 0:
        return np.int64(0)
    if r > 255:
        return np.int64(255)
    return r


#: ``bn_act`` may fuse ``G·m + c`` into one multiply-add: ``kpu.hwc._float_bn`` proves the product
#: and the sum exact in float64, so the fused form rounds nothing either (same bits, one op less)
_CONTRACT: _JitOptions = {**_NOGIL, "fastmath": {"contract"}}


@njit(**_CONTRACT)
def bn_act(g, goff, n, out, ooff, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm, ss, sb, lin):
    """``out[ooff:ooff+n] = activation(batch-norm(g[goff:goff+n]))`` on a flat HWC run starting at
    channel 0; the per-channel parameters (``fm``/``fc`` float64, or ``cc``/``mul``/``sh``/``add``
    int64 when ``fm`` is empty) are tiled to their length ``T``, a multiple of the channel count.
    Returns how many values lie below every activation segment start (``act_mode`` 1 only)."""
    fast_bn = fm.shape[0] > 0
    t = fm.shape[0] if fast_bn else cc.shape[0]
    flo = np.float64(lo)
    fhi = np.float64(lo + span)
    fspan = np.float64(span)
    bad = 0
    idx = np.empty(t if act_mode == LUT or act_mode == STEPS else 1, np.int64)
    for base in range(0, n, t):
        m = min(t, n - base)
        # views, so that every index below is a loop counter LLVM knows to be >= 0 (no
        # negative-index wrap-around, contiguous vector loads and stores)
        gv = g[goff + base : goff + base + m]
        ov = out[ooff + base : ooff + base + m]
        if fast_bn and act_mode == LINEAR and lin[0] == 0.0:
            # the plain form: x_start and bias are in the batch-norm constant, no clamps needed
            k0 = lin[3]
            for k in range(m):
                r = np.int32(np.rint(np.floor(gv[k] * fm[k] + fc[k]) * k0))
                ov[k] = np.uint8(min(max(r, 0), 255))
        elif fast_bn and act_mode == LINEAR:
            bp1, sx0, k0, sb0, sx1, k1, sb1 = lin[1], lin[2], lin[3], np.int32(lin[4]), lin[5], lin[6], np.int32(lin[7])
            for k in range(m):
                y = np.floor(gv[k] * fm[k] + fc[k])
                y = min(max(y, flo), fhi)
                r0 = np.int32(np.rint((y - sx0) * k0)) + sb0
                r1 = np.int32(np.rint((y - sx1) * k1)) + sb1
                r = r1 if y > bp1 else r0
                ov[k] = np.uint8(min(max(r, 0), 255))
        elif fast_bn and (act_mode == LUT or act_mode == STEPS):
            for k in range(m):
                y = np.floor(gv[k] * fm[k] + fc[k]) - flo
                y = min(max(y, 0.0), fspan)
                idx[k] = np.int64(y)
            if act_mode == LUT:
                for k in range(m):
                    ov[k] = lut[idx[k]]
            else:  # step buckets: bp = step << 16 | inc << 8 | first per bucket, ss[0] = log2 of the width
                j = ss[0]
                for k in range(m):
                    v = idx[k]
                    word = bp[v >> j]
                    up = ((word >> 8) & 255) if v >= (word >> 16) else 0
                    ov[k] = np.uint8((word & 255) + up)
        else:
            for k in range(m):
                if fast_bn:
                    v = np.int64(np.floor(gv[k] * fm[k] + fc[k]))
                else:
                    v = ((np.int64(gv[k]) + cc[k]) * mul[k] >> sh[k]) + add[k]
                # (the plan pairs an int64 batch-norm with the segments only)
                r = _segment_value(v, bp, sx, sm, ss, sb, lo, lo + span, act_mode == SEGMENTS_CLAMPED)
                if r < 0:
                    bad += 1
                    r = 0
                ov[k] = r
    return bad


@njit(**_NOGIL)
def _max_window(g, ys, nrows, s, ox0, k, ow, dst):
    """``dst[ox*C + c]`` = max of ``g[ys[dy], min(ox*s + ox0 + dx, W-1), c]`` over the window."""
    w = g.shape[1]
    ch = g.shape[2]
    for ox in range(ow):
        x0 = ox * s + ox0
        d = ox * ch
        src = g[ys[0], x0]
        for c in range(ch):
            dst[d + c] = src[c]
        for dy in range(nrows):
            for dx in range(k):
                if dy == 0 and dx == 0:
                    continue
                src = g[ys[dy], min(x0 + dx, w - 1)]
                for c in range(ch):
                    v = src[c]
                    if v > dst[d + c]:
                        dst[d + c] = v


@njit(**_NOGIL)
def _max_blocks(g, ys, k, ow, dst):
    """``_max_window`` for windows that tile the row (k == s, no clamping): 1-D channel-vector
    slices of the flat map per window pixel (numba's strided 2-D views cost more than the
    maxima)."""
    ch = g.shape[2]
    rowlen = g.shape[1] * ch
    gf = g.reshape(-1)
    r0 = ys[0] * rowlen
    if k == 2:
        r1 = ys[1] * rowlen
        for ox in range(ow):
            d = dst[ox * ch : ox * ch + ch]
            b = 2 * ox * ch
            a0, a1 = gf[r0 + b : r0 + b + ch], gf[r0 + b + ch : r0 + b + 2 * ch]
            b0, b1 = gf[r1 + b : r1 + b + ch], gf[r1 + b + ch : r1 + b + 2 * ch]
            for c in range(ch):
                d[c] = max(max(a0[c], a1[c]), max(b0[c], b1[c]))
        return
    for ox in range(ow):
        d = dst[ox * ch : ox * ch + ch]
        b = ox * k * ch
        first = gf[r0 + b : r0 + b + ch]
        for c in range(ch):
            d[c] = first[c]
        for dy in range(k):
            rb = ys[dy] * rowlen + b
            for dx in range(k):
                src = gf[rb + dx * ch : rb + dx * ch + ch]
                for c in range(ch):
                    d[c] = max(d[c], src[c])


@njit(**_NOGIL)
def _finish_row(g, ys, s, ox0, k, reduce, out, oy, prow, trow, fm, fc, cc, mul, sh, add,
                act_mode, lo, span, lut, bp, sx, sm, ss, sb, lin):
    """Output row ``oy`` of ``out`` [OH, OW, C] from the sums ``g`` [rows, W, C]: window rows
    ``ys`` (k of them, clamped), output column ``ox`` reads columns ``ox·s + ox0 + dx`` (clamped).
    ``prow`` (g's dtype) and ``trow`` (uint8, [k, W·C]) are scratch rows.

    (One ``bn_act`` call site: LLVM inlines it at every site, and each copy costs seconds of
    first-run compilation.)"""
    w = g.shape[1]
    ch = g.shape[2]
    ow = out.shape[1]
    n = ow * ch
    wc = w * ch
    of = out.reshape(-1)
    gf = g.reshape(-1)
    ob = oy * n
    flat = reduce == 0 and s == 1 and ox0 == 0 and ow == w
    if reduce == 0 and not flat:
        src = g[ys[0]]
        for ox in range(ow):
            x = ox * s + ox0
            for c in range(ch):
                prow[ox * ch + c] = src[x, c]
    elif reduce == 1:
        if k == s and ox0 == 0 and ow * s <= w:
            _max_blocks(g, ys, k, ow, prow)
        else:
            _max_window(g, ys, k, s, ox0, k, ow, prow)
    # pools after the activation: every window row through bn_act, then max or floor-mean
    after = reduce >= 2
    bad = 0
    for dy in range(k if after else 1):
        if after:
            src_, off, cnt, dst, doff = gf, ys[dy] * wc, wc, trow[dy], 0
        elif flat:
            src_, off, cnt, dst, doff = gf, ys[0] * wc, n, of, ob
        else:
            src_, off, cnt, dst, doff = prow, 0, n, of, ob
        bad += bn_act(src_, off, cnt, dst, doff, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm, ss, sb, lin)
    if not after:
        return bad
    div = k * k
    for ox in range(ow):
        x0 = ox * s + ox0
        for c in range(ch):
            if reduce == 2:
                best = np.int64(0)
                for dy in range(k):
                    for dx in range(k):
                        v = np.int64(trow[dy, min(x0 + dx, w - 1) * ch + c])
                        if v > best:
                            best = v
                of[ob + ox * ch + c] = best
            else:
                acc = np.int64(0)
                for dy in range(k):
                    for dx in range(k):
                        acc += trow[dy, min(x0 + dx, w - 1) * ch + c]
                of[ob + ox * ch + c] = acc // div
    return bad


@njit(**_NOGIL)
def epilogue(g, out, k, s, oy0, ox0, reduce, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm, ss, sb, lin):
    """``out[oy, ox, c]`` (uint8 [OH, OW, C]) from the sums ``g`` [H, W, C]; returns the count of
    values below every activation segment start (the caller raises the reference's error)."""
    h, w, ch = g.shape
    oh, ow = out.shape[0], out.shape[1]
    kk = max(k, 1)
    ys = np.zeros(kk, np.int64)
    whole = reduce == 0 and s == 1 and ox0 == 0 and oy0 == 0 and ow == w and oh == h
    if whole:  # no pool: the whole map is one flat run
        rows, g3, out3 = 1, g.reshape(1, h * w, ch), out.reshape(1, h * w, ch)
    else:
        rows, g3, out3 = oh, g, out
    prow = np.empty(max(ow, w) * ch, g.dtype)
    trow = np.empty((kk, w * ch), np.uint8)
    bad = 0
    for oy in range(rows):
        if not whole:
            for dy in range(kk):
                ys[dy] = min(oy * s + oy0 + dy, h - 1)
        bad += _finish_row(g3, ys, s, ox0, k, reduce, out3, oy, prow, trow, fm, fc, cc, mul, sh, add, act_mode, lo, span,
                           lut, bp, sx, sm, ss, sb, lin)
    return bad


@njit(**_NOGIL)
def _dw_row(xf, rowlen, ch, kk, y, wt, grow):
    """Depthwise sums of conv row ``y`` (every column) into ``grow`` ([W·C] flat).

    ``xf`` is the centred input (x − 128) flattened, rows of ``rowlen`` values, with a one-pixel
    border of ``pad − 128`` when kk == 3; ``wt`` [kk·kk, T] holds each tap's weights tiled to T.
    (Views per run, indexed by the loop counter: contiguous vector loads, no wrap-around checks.)"""
    n = grow.shape[0]
    t = wt.shape[1]
    c2 = 2 * ch
    for base in range(0, n, t):
        m = min(t, n - base)
        gv = grow[base : base + m]
        if kk == 1:
            p = y * rowlen + base
            a0 = xf[p : p + m]
            w0 = wt[0]
            for k in range(m):
                gv[k] = a0[k] * w0[k]
        else:
            p0 = y * rowlen + base
            p1 = p0 + rowlen
            p2 = p1 + rowlen
            # one view per tap: an index k + offset would need a wrap-around check per value
            a0, a1, a2 = xf[p0 : p0 + m], xf[p0 + ch : p0 + ch + m], xf[p0 + c2 : p0 + c2 + m]
            b0, b1, b2 = xf[p1 : p1 + m], xf[p1 + ch : p1 + ch + m], xf[p1 + c2 : p1 + c2 + m]
            d0, d1, d2 = xf[p2 : p2 + m], xf[p2 + ch : p2 + ch + m], xf[p2 + c2 : p2 + c2 + m]
            w0, w1, w2, w3, w4, w5, w6, w7, w8 = wt[0], wt[1], wt[2], wt[3], wt[4], wt[5], wt[6], wt[7], wt[8]
            if wt.itemsize == 2:
                # int16 weights |w| <= 255 and |x − 128| <= 128: every product fits int16
                # (16-bit multiplies, twice the lanes), their sum int32
                for k in range(m):
                    gv[k] = (np.int32(np.int16(a0[k] * w0[k])) + np.int32(np.int16(a1[k] * w1[k]))
                             + np.int32(np.int16(a2[k] * w2[k])) + np.int32(np.int16(b0[k] * w3[k]))
                             + np.int32(np.int16(b1[k] * w4[k])) + np.int32(np.int16(b2[k] * w5[k]))
                             + np.int32(np.int16(d0[k] * w6[k])) + np.int32(np.int16(d1[k] * w7[k]))
                             + np.int32(np.int16(d2[k] * w8[k])))
            else:
                for k in range(m):
                    gv[k] = (a0[k] * w0[k] + a1[k] * w1[k] + a2[k] * w2[k]
                             + b0[k] * w3[k] + b1[k] * w4[k] + b2[k] * w5[k]
                             + d0[k] * w6[k] + d1[k] * w7[k] + d2[k] * w8[k])


@njit(**_NOGIL)
def _dw_row_pair(xf, rowlen, ch, y, wt, g0, g1):
    """3×3 depthwise sums of conv rows ``y`` and ``y + 1`` at once (``_dw_row`` twice, same
    integers): the two rows share four of their six input rows and all nine weight vectors, so
    each loaded vector serves two outputs (measured: ~20 % less time than two single rows)."""
    if wt.itemsize != 2:
        _dw_row(xf, rowlen, ch, 3, y, wt, g0)
        _dw_row(xf, rowlen, ch, 3, y + 1, wt, g1)
        return
    n = g0.shape[0]
    t = wt.shape[1]
    c2 = 2 * ch
    for base in range(0, n, t):
        m = min(t, n - base)
        u = g0[base : base + m]
        v = g1[base : base + m]
        p0 = y * rowlen + base
        p1 = p0 + rowlen
        p2 = p1 + rowlen
        p3 = p2 + rowlen
        a0, a1, a2 = xf[p0 : p0 + m], xf[p0 + ch : p0 + ch + m], xf[p0 + c2 : p0 + c2 + m]
        b0, b1, b2 = xf[p1 : p1 + m], xf[p1 + ch : p1 + ch + m], xf[p1 + c2 : p1 + c2 + m]
        d0, d1, d2 = xf[p2 : p2 + m], xf[p2 + ch : p2 + ch + m], xf[p2 + c2 : p2 + c2 + m]
        e0, e1, e2 = xf[p3 : p3 + m], xf[p3 + ch : p3 + ch + m], xf[p3 + c2 : p3 + c2 + m]
        w0, w1, w2, w3, w4, w5, w6, w7, w8 = wt[0], wt[1], wt[2], wt[3], wt[4], wt[5], wt[6], wt[7], wt[8]
        for k in range(m):
            # (int16 products of |w| <= 255 and |x − 128| <= 128, int32 sums, as in _dw_row)
            q0, q1, q2, q3, q4, q5, q6, q7, q8 = w0[k], w1[k], w2[k], w3[k], w4[k], w5[k], w6[k], w7[k], w8[k]
            r0, r1, r2, s0, s1, s2 = b0[k], b1[k], b2[k], d0[k], d1[k], d2[k]
            u[k] = (np.int32(np.int16(a0[k] * q0)) + np.int32(np.int16(a1[k] * q1)) + np.int32(np.int16(a2[k] * q2))
                    + np.int32(np.int16(r0 * q3)) + np.int32(np.int16(r1 * q4)) + np.int32(np.int16(r2 * q5))
                    + np.int32(np.int16(s0 * q6)) + np.int32(np.int16(s1 * q7)) + np.int32(np.int16(s2 * q8)))
            v[k] = (np.int32(np.int16(r0 * q0)) + np.int32(np.int16(r1 * q1)) + np.int32(np.int16(r2 * q2))
                    + np.int32(np.int16(s0 * q3)) + np.int32(np.int16(s1 * q4)) + np.int32(np.int16(s2 * q5))
                    + np.int32(np.int16(e0[k] * q6)) + np.int32(np.int16(e1[k] * q7)) + np.int32(np.int16(e2[k] * q8)))


@njit(**_NOGIL)
def _dw_row_sampled(xf, rowlen, ch, kk, y, cs, cx0, wt, grow):
    """As ``_dw_row`` at columns ``j·cs + cx0`` only (a selection pool's kept pixels)."""
    cols = grow.shape[0] // ch
    for j in range(cols):
        xx = j * cs + cx0
        for c in range(ch):
            acc = np.int64(0)
            for ky in range(kk):
                p = (y + ky) * rowlen + xx * ch + c
                for kx in range(kk):
                    acc += np.int64(xf[p + kx * ch]) * wt[ky * kk + kx, c]
            grow[j * ch + c] = acc


@njit(**_NOGIL)
def center_pad(x, pad, border, xp):
    """``xp`` (int16, [(H+2b)·(W+2b)·C] flat) = the HWC map ``x`` − 128 with a ``border``-pixel
    frame of ``pad − 128``."""
    h, w, ch = x.shape
    rowlen = (w + 2 * border) * ch
    pv = np.int16(pad - 128)
    xf = x.reshape(-1)
    if border:
        xp[:rowlen] = pv
        xp[(h + 1) * rowlen : (h + 2) * rowlen] = pv
    n = w * ch
    for yy in range(h):
        d = (yy + border) * rowlen
        if border:
            xp[d : d + ch] = pv
            xp[d + rowlen - ch : d + rowlen] = pv
        dst = xp[d + border * ch : d + border * ch + n]
        src = xf[yy * n : yy * n + n]
        for i in range(n):
            dst[i] = np.int16(src[i]) - np.int16(128)


@njit(**_NOGIL)
def depthwise(x, wt, acc, kk, pad, out, k, s, oy0, ox0, reduce, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm, ss,
              sb, lin):
    """A whole depthwise layer: x uint8 [H, W, C], ``wt`` [k·k, T] (= w + arg_x >> shr_x per tap,
    tiled to T like the batch-norm parameters; int16 when every |w| <= 255, else int64), ``acc``
    an empty array of the sums' dtype (int32, or int64 for wide weights), out uint8 [OH, OW, C].
    The sums of the rows one output row needs are made in a small buffer and finished at once."""
    h, w, ch = x.shape
    oh, ow = out.shape[0], out.shape[1]
    border = 1 if kk == 3 else 0
    rowlen = (w + 2 * border) * ch
    xp = np.empty((h + 2 * border) * rowlen, np.int16)
    center_pad(x, pad, border, xp)
    sampled = reduce == 0 and (s != 1 or ox0 != 0 or ow != w)
    if sampled:
        cols, rs, rk = ow, s, 1
    else:
        cols, rs, rk = w, s, max(k, 1)
    grows = np.empty((max(rk, 2), cols, ch), acc.dtype)
    ys = np.empty(rk, np.int64)
    prow = np.empty(max(ow, w) * ch, acc.dtype)
    trow = np.empty((rk, cols * ch), np.uint8)
    # 3×3 rows in pairs (``_dw_row_pair``): two consecutive output rows of a layer without
    # pool (the second one's sums made with the first), or the two rows of a 2-row window
    pairs = kk == 3 and not sampled and rk == 1 and s == 1 and oy0 == 0
    bad = 0
    for oy in range(oh):
        if pairs:
            if oy % 2 == 0:
                if oy + 1 < oh and oy + 1 < h:
                    _dw_row_pair(xp, rowlen, ch, oy, wt, grows[0].reshape(-1), grows[1].reshape(-1))
                else:
                    _dw_row(xp, rowlen, ch, kk, min(oy, h - 1), wt, grows[0].reshape(-1))
            ys[0] = oy % 2
        else:
            dy = 0
            while dy < rk:
                y = min(oy * rs + oy0 + dy, h - 1)
                ys[dy] = dy
                if not sampled and kk == 3 and dy + 1 < rk and y + 1 == oy * rs + oy0 + dy + 1 and y + 1 < h:
                    _dw_row_pair(xp, rowlen, ch, y, wt, grows[dy].reshape(-1), grows[dy + 1].reshape(-1))
                    ys[dy + 1] = dy + 1
                    dy += 2
                    continue
                gr = grows[dy].reshape(-1)
                if sampled:
                    _dw_row_sampled(xp, rowlen, ch, kk, y, s, ox0, wt, gr)
                else:
                    _dw_row(xp, rowlen, ch, kk, y, wt, gr)
                dy += 1
        # (sampled rows hold only the kept columns: finished as they are; one call site)
        fs, fx, fk, fr = (1, 0, 1, 0) if sampled else (s, ox0, k, reduce)
        bad += _finish_row(grows, ys, fs, fx, fk, fr, out, oy, prow, trow, fm, fc, cc, mul, sh, add, act_mode, lo, span,
                           lut, bp, sx, sm, ss, sb, lin)
    return bad


# --- the 3×3 depthwise layer on float32 sums (``depthwise3_f32``) --------------------------------
# Why float32: every product |x − 128|·|w'| and every partial sum of a channel's nine taps is an
# integer of at most 128·Σ|w'| < 2**24 (``kpu.hwc`` proves it from the weights at load), so FMA
# lanes compute them exactly, in any order, with one instruction per tap — where the int16 form
# needs a multiply, a widening and an add. Four output rows share one pass: their six input rows
# are loaded once per vector and each weight vector serves four outputs (measured here: ~1.7x
# the sums of single rows).

#: input rows a ``_dw_f32_input`` ring holds: a 4-row block reads 6 consecutive rows, which
#: take 6 distinct slots ``(y + 1) % 6``, and the next block reuses the last two
DW_RING = 6


@njit(**_NOGIL)
def _dw_f32_fill(x, y, pad, dst):
    """``dst`` = input row ``y`` (−1 ≤ y ≤ H) as ``x[y] − 128`` in float32 with a one-pixel
    border of ``pad − 128`` (a whole row of it above and below the map) — the padding folded into
    the row, no padded copy of the map."""
    h, w, ch = x.shape
    pv = np.float32(pad - 128)
    if y < 0 or y >= h:
        for i in range((w + 2) * ch):
            dst[i] = pv
        return
    for i in range(ch):
        dst[i] = pv
        dst[(w + 1) * ch + i] = pv
    n = w * ch
    src = x[y].reshape(-1)
    d = dst[ch : ch + n]
    # (in float32 from the byte: ``np.int32(v) - 128`` is int64 arithmetic in numba — 128 is an
    # int64 — which LLVM vectorised 8 lanes wide through 64-bit integers; this is 16 lanes of
    # uint8 → float32 and one subtraction, the same exact values: 2.5x faster, 20-30 % of a
    # depthwise layer)
    c128 = np.float32(128.0)
    for i in range(n):
        d[i] = np.float32(src[i]) - c128


@njit(**_NOGIL)
def _dw_f32_input(x, y, pad, ring, tags):
    """The ring slot of input row ``y`` (−1 ≤ y ≤ H), made on first use (``_dw_f32_fill``)."""
    slot = (y + 1) % DW_RING
    dst = ring[slot]
    if tags[slot] != y:
        tags[slot] = y
        _dw_f32_fill(x, y, pad, dst)
    return dst


@njit(**_CONTRACT)
def _dw_f32_row(r0, r1, r2, ch, wt, g):
    """One conv row's sums ``g`` ([W·C] float32) from its three padded input rows (tiled weights
    ``wt`` [9, T], one view per tap: contiguous vector loads, as ``_dw_row``)."""
    n = g.shape[0]
    t = wt.shape[1]
    c2 = 2 * ch
    for base in range(0, n, t):
        m = min(t, n - base)
        o = g[base : base + m]
        a0, a1, a2 = r0[base : base + m], r0[base + ch : base + ch + m], r0[base + c2 : base + c2 + m]
        b0, b1, b2 = r1[base : base + m], r1[base + ch : base + ch + m], r1[base + c2 : base + c2 + m]
        d0, d1, d2 = r2[base : base + m], r2[base + ch : base + ch + m], r2[base + c2 : base + c2 + m]
        w0, w1, w2, w3, w4, w5, w6, w7, w8 = wt[0], wt[1], wt[2], wt[3], wt[4], wt[5], wt[6], wt[7], wt[8]
        for k in range(m):
            o[k] = (a0[k] * w0[k] + a1[k] * w1[k] + a2[k] * w2[k] + b0[k] * w3[k] + b1[k] * w4[k] + b2[k] * w5[k]
                    + d0[k] * w6[k] + d1[k] * w7[k] + d2[k] * w8[k])


@njit(**_CONTRACT)
def _dw_f32_rows4(r0, r1, r2, r3, r4, r5, ch, wt, g):
    """Four consecutive conv rows' sums ``g[0:4]`` ([4, W·C]) from their six input rows."""
    n = g.shape[1]
    t = wt.shape[1]
    c2 = 2 * ch
    g0, g1, g2, g3 = g[0], g[1], g[2], g[3]
    for base in range(0, n, t):
        m = min(t, n - base)
        o0, o1, o2, o3 = g0[base : base + m], g1[base : base + m], g2[base : base + m], g3[base : base + m]
        a0, a1, a2 = r0[base : base + m], r0[base + ch : base + ch + m], r0[base + c2 : base + c2 + m]
        b0, b1, b2 = r1[base : base + m], r1[base + ch : base + ch + m], r1[base + c2 : base + c2 + m]
        d0, d1, d2 = r2[base : base + m], r2[base + ch : base + ch + m], r2[base + c2 : base + c2 + m]
        e0, e1, e2 = r3[base : base + m], r3[base + ch : base + ch + m], r3[base + c2 : base + c2 + m]
        f0, f1, f2 = r4[base : base + m], r4[base + ch : base + ch + m], r4[base + c2 : base + c2 + m]
        h0, h1, h2 = r5[base : base + m], r5[base + ch : base + ch + m], r5[base + c2 : base + c2 + m]
        w0, w1, w2, w3, w4, w5, w6, w7, w8 = wt[0], wt[1], wt[2], wt[3], wt[4], wt[5], wt[6], wt[7], wt[8]
        for k in range(m):
            q0, q1, q2, q3, q4, q5, q6, q7, q8 = w0[k], w1[k], w2[k], w3[k], w4[k], w5[k], w6[k], w7[k], w8[k]
            B0, B1, B2, D0, D1, D2 = b0[k], b1[k], b2[k], d0[k], d1[k], d2[k]
            E0, E1, E2, F0, F1, F2 = e0[k], e1[k], e2[k], f0[k], f1[k], f2[k]
            o0[k] = a0[k] * q0 + a1[k] * q1 + a2[k] * q2 + B0 * q3 + B1 * q4 + B2 * q5 + D0 * q6 + D1 * q7 + D2 * q8
            o1[k] = B0 * q0 + B1 * q1 + B2 * q2 + D0 * q3 + D1 * q4 + D2 * q5 + E0 * q6 + E1 * q7 + E2 * q8
            o2[k] = D0 * q0 + D1 * q1 + D2 * q2 + E0 * q3 + E1 * q4 + E2 * q5 + F0 * q6 + F1 * q7 + F2 * q8
            o3[k] = E0 * q0 + E1 * q1 + E2 * q2 + F0 * q3 + F1 * q4 + F2 * q5 + h0[k] * q6 + h1[k] * q7 + h2[k] * q8


@njit(**_NOGIL)
def _dw_f32_block(x, g0, gn, pad, ring, tags, ch, wt, grows):
    """Conv rows ``g0 .. g0 + gn − 1`` (gn <= 4) into ``grows[0:gn]``: four at once when gn >= 3
    (a block costs ~2.4 single rows; rows past the map read pad rows, their sums go unused),
    else one by one."""
    if gn >= 3:
        r0 = _dw_f32_input(x, g0 - 1, pad, ring, tags)
        r1 = _dw_f32_input(x, g0, pad, ring, tags)
        r2 = _dw_f32_input(x, g0 + 1, pad, ring, tags)
        r3 = _dw_f32_input(x, g0 + 2, pad, ring, tags)
        r4 = _dw_f32_input(x, g0 + 3, pad, ring, tags)
        r5 = _dw_f32_input(x, g0 + 4, pad, ring, tags)
        _dw_f32_rows4(r0, r1, r2, r3, r4, r5, ch, wt, grows)
        return
    for i in range(gn):
        r0 = _dw_f32_input(x, g0 + i - 1, pad, ring, tags)
        r1 = _dw_f32_input(x, g0 + i, pad, ring, tags)
        r2 = _dw_f32_input(x, g0 + i + 1, pad, ring, tags)
        _dw_f32_row(r0, r1, r2, ch, wt, grows[i])


@njit(**_NOGIL)
def depthwise3_f32(x, wt, pad, out, ring_buf, rows_buf, k, s, oy0, ox0, reduce, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut,
                   bp, sx, sm, ss, sb, lin):
    """A whole 3×3 depthwise layer on float32 sums (exact: see above): x uint8 [H, W, C], ``wt``
    [9, T] float32 (= w + arg_x >> shr_x per tap, tiled to T), out uint8 [OH, OW, C]; the pool,
    batch-norm and activation arguments as ``depthwise``; ``ring_buf`` (float32, at least
    ``DW_RING·(W+2)·C``) and ``rows_buf`` (float32, ``4·W·C``) are the caller's scratch (a
    layer's few hundred KiB allocated per call cost page faults). Conv rows are made in blocks of four
    (one for selection pools of stride 4) into a 4-row buffer and each output row is finished
    (``_finish_row``) as soon as the rows of its window are there: the sums never leave L1/L2,
    a selection pool's columns are picked by ``_finish_row`` from the full rows."""
    h, w, ch = x.shape
    oh, ow = out.shape[0], out.shape[1]
    rk = max(k, 1)
    rl = (w + 2) * ch
    ring = ring_buf[: DW_RING * rl].reshape(DW_RING, rl)
    tags = np.full(DW_RING, -9, np.int64)
    grows = rows_buf[: 4 * w * ch].reshape(4, w * ch)
    g3 = grows.reshape(4, w, ch)
    ys = np.empty(rk, np.int64)
    prow = np.empty(max(ow, w) * ch, np.float32)
    trow = np.empty((rk, w * ch), np.uint8)
    block = 1 if rk == 1 and s > 2 else 4  # (stride-4 picks use one row of four)
    g0 = -1  # the conv row in grows[0]; grows holds rows g0 .. g0 + gn − 1
    gn = 0
    bad = 0
    if reduce == 0 and s == 1 and oy0 == 0 and ox0 == 0 and ow == w and oh == h:
        # no pool: a block's rows are consecutive output rows, finished in one flat run
        of = out.reshape(-1)
        n = w * ch
        for g0 in range(0, h, 4):
            gn = min(4, h - g0)
            _dw_f32_block(x, g0, gn, pad, ring, tags, ch, wt, grows)
            bad += bn_act(grows.reshape(-1), 0, gn * n, of, g0 * n, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx,
                          sm, ss, sb, lin)
        return bad
    for oy in range(oh):
        first = min(oy * s + oy0, h - 1)
        last = min(oy * s + oy0 + rk - 1, h - 1)
        if first < g0 or last >= g0 + gn:
            g0 = first
            gn = min(block, h - first)
            _dw_f32_block(x, g0, gn, pad, ring, tags, ch, wt, grows)
        for dy in range(rk):
            ys[dy] = min(oy * s + oy0 + dy, h - 1) - g0
        bad += _finish_row(g3, ys, s, ox0, k, reduce, out, oy, prow, trow, fm, fc, cc, mul, sh, add, act_mode, lo, span,
                           lut, bp, sx, sm, ss, sb, lin)
    return bad


#: The no-pool layers' kernel (``depthwise3_f32_flat``) keeps its six input rows, its nine weight
#: taps and its four sum rows at these *constant* strides (float32 values) in three flat buffers,
#: so that LLVM addresses all 31 streams of the 4-row loop from three base registers with constant
#: displacements. With ``_dw_f32_rows4``'s run-time strides each stream needs a pointer of its
#: own, and on AVX2 (16 ymm, 15 usable general registers) the loop spills pointers and vectors:
#: measured there, the constant strides make the sums 1.3–1.5x faster. The odd extra values
#: keep rows out of each other's L1 sets. Rows longer than ``DW_ROW_STRIDE`` use ``depthwise3_f32``.
DW_ROW_STRIDE = 8192 + 80
DW_SUM_STRIDE = 8192 + 48
#: (at least the tile length ``T`` of every layer: ``kpu.hwc.TILE_VALUES`` values, C <= 512)
DW_TAP_STRIDE = 512


@njit(**_CONTRACT)
def _dw_f32_rows4c(ring, ch, wf, gf, n, t):
    """``_dw_f32_rows4`` on the constant strides: four sum rows ``gf[r·DW_SUM_STRIDE + i]`` from the
    six input rows ``ring[r·DW_ROW_STRIDE + i]`` and the taps ``wf[tap·DW_TAP_STRIDE + i mod t]``.
    (Indices are uint64: numba then adds no negative-index wrap-around, which would stop the
    vectoriser.)"""
    c1 = np.uint64(ch)
    c2 = np.uint64(2 * ch)
    # (every offset uint64: an int64 literal times a uint64 would be a float64)
    r1 = np.uint64(DW_ROW_STRIDE)
    r2, s1, w1 = r1 + r1, np.uint64(DW_SUM_STRIDE), np.uint64(DW_TAP_STRIDE)
    r3, r4, r5, s2, s3 = r2 + r1, r2 + r2, r2 + r2 + r1, s1 + s1, s1 + s1 + s1
    w2, w3, w4 = w1 + w1, w1 + w1 + w1, w1 + w1 + w1 + w1
    w5, w6, w7, w8 = w4 + w1, w4 + w2, w4 + w3, w4 + w4
    for base in range(0, n, t):
        m = min(t, n - base)
        ub = np.uint64(base)
        for kk in range(m):
            k = np.uint64(kk)
            i0 = ub + k
            i1 = i0 + c1
            i2 = i0 + c2
            q0, q1, q2 = wf[k], wf[k + w1], wf[k + w2]
            q3, q4, q5 = wf[k + w3], wf[k + w4], wf[k + w5]
            q6, q7, q8 = wf[k + w6], wf[k + w7], wf[k + w8]
            A0, A1, A2 = ring[i0], ring[i1], ring[i2]
            B0, B1, B2 = ring[i0 + r1], ring[i1 + r1], ring[i2 + r1]
            D0, D1, D2 = ring[i0 + r2], ring[i1 + r2], ring[i2 + r2]
            E0, E1, E2 = ring[i0 + r3], ring[i1 + r3], ring[i2 + r3]
            F0, F1, F2 = ring[i0 + r4], ring[i1 + r4], ring[i2 + r4]
            H0, H1, H2 = ring[i0 + r5], ring[i1 + r5], ring[i2 + r5]
            gf[i0] = A0 * q0 + A1 * q1 + A2 * q2 + B0 * q3 + B1 * q4 + B2 * q5 + D0 * q6 + D1 * q7 + D2 * q8
            gf[i0 + s1] = B0 * q0 + B1 * q1 + B2 * q2 + D0 * q3 + D1 * q4 + D2 * q5 + E0 * q6 + E1 * q7 + E2 * q8
            gf[i0 + s2] = D0 * q0 + D1 * q1 + D2 * q2 + E0 * q3 + E1 * q4 + E2 * q5 + F0 * q6 + F1 * q7 + F2 * q8
            gf[i0 + s3] = E0 * q0 + E1 * q1 + E2 * q2 + F0 * q3 + F1 * q4 + F2 * q5 + H0 * q6 + H1 * q7 + H2 * q8


@njit(**_NOGIL)
def depthwise3_f32_flat(x, wf, t, pad, out, ring_buf, sums_buf, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm,
                        ss, sb, lin):
    """``depthwise3_f32`` for a layer without pool whose padded rows fit ``DW_ROW_STRIDE``: ``wf``
    [9·DW_TAP_STRIDE] float32, tap ``j``'s weights tiled to ``t`` at ``j·DW_TAP_STRIDE``;
    ``ring_buf`` (float32, ``6·DW_ROW_STRIDE``) and ``sums_buf`` (``4·DW_SUM_STRIDE``) the caller's
    scratch. Every 4-row block converts its six input rows (rows past the map are pad rows, their
    sums go unused) and finishes its rows one ``bn_act`` run each."""
    h, w, ch = x.shape
    n = w * ch
    of = out.reshape(-1)
    bad = 0
    for y0 in range(0, h, 4):
        for r in range(6):
            o = r * DW_ROW_STRIDE
            _dw_f32_fill(x, y0 - 1 + r, pad, ring_buf[o : o + (w + 2) * ch])
        _dw_f32_rows4c(ring_buf, ch, wf, sums_buf, n, t)
        for r in range(min(4, h - y0)):
            bad += bn_act(sums_buf, r * DW_SUM_STRIDE, n, of, (y0 + r) * n, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut,
                          bp, sx, sm, ss, sb, lin)
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
def pack_rgbx(x, pad, border, xp):
    """``xp`` (uint32, [H+2b, W+2b]) = the HWC map ``x`` (C ≤ 4 channels) one word per pixel, the
    bytes in channel order (little-endian) and padded with 128; a ``border``-pixel frame of
    ``pad`` (unused lanes 128)."""
    h, w, ch = x.shape
    fill = np.uint32(0)
    for c in range(4):
        fill |= np.uint32(pad if c < ch else 128) << np.uint32(8 * c)
    hp, wp = xp.shape
    for yy in range(hp):
        for xx in range(wp):
            xp[yy, xx] = fill
    for yy in range(h):
        row = xp[yy + border]
        for xx in range(w):
            word = np.uint32(0)
            for c in range(4):
                v = np.uint32(x[yy, xx, c]) if c < ch else np.uint32(128)
                word |= v << np.uint32(8 * c)
            row[xx + border] = word


@njit(**_NOGIL)
def im2col_rgbx(xp, group, s, oy0, ox0, oh, ow, out):
    """GEMM rows of a 3×3 layer over ``pack_rgbx`` words: row ``i*(OW/group) + j`` holds the
    (group+2) × 3 padded pixels under ``group`` horizontally adjacent output pixels
    ``(i·s + oy0, (j·group + q)·s + ox0)``, column by column (``[x][ky]``, uint32 words);
    ``group`` > 1 needs s == 1. Each output row first interleaves its three input rows into
    column triples, so that every GEMM row is one contiguous run of them."""
    span = group + 2
    per_row = ow // group
    step = group if group > 1 else s
    kw = 3 * span
    wp = xp.shape[1]
    trip = np.empty(3 * wp, np.uint32)
    of = out.reshape(-1)
    for i in range(oh):
        y = i * s + oy0
        s0, s1, s2 = xp[y], xp[y + 1], xp[y + 2]
        for x in range(wp):
            trip[3 * x] = s0[x]
            trip[3 * x + 1] = s1[x]
            trip[3 * x + 2] = s2[x]
        base = i * per_row * kw
        for j in range(per_row):
            x0 = 3 * (j * step + ox0)
            src = trip[x0 : x0 + kw]
            d = of[base + j * kw : base + j * kw + kw]
            for q in range(kw):
                d[q] = src[q]


@njit(**_NOGIL)
def pad_rows(x, pad, xp):
    """``xp[1 + y, C + i]`` = ``x[y].reshape(-1)[i]``: the HWC map's rows as flat byte rows with a
    one-pixel frame of ``pad`` (``xp`` [H+2, ≥ (W+2)·C]; bytes past the frame are ``pad`` too)."""
    h, w, ch = x.shape
    hp, wp = xp.shape
    for yy in range(hp):
        row = xp[yy]
        if yy == 0 or yy > h:
            for q in range(wp):
                row[q] = pad
            continue
        src = x[yy - 1].reshape(-1)
        inner = row[ch : ch + w * ch]  # (views: LLVM makes the copy one memcpy)
        for q in range(ch):
            row[q] = pad
        for q in range(w * ch):
            inner[q] = src[q]
        for q in range((w + 1) * ch, wp):
            row[q] = pad


@njit(**_NOGIL)
def im2col_patch(xp, ch, s, oy0, ox0, oh, ow, out):
    """GEMM rows of a 3×3 layer of at most three input channels over ``pad_rows`` bytes, one
    per sampled pixel: ``out[r·K : r·K + 9·C]``, r = i·OW + j, is the 3×3×C patch under pixel
    (i·s + oy0, j·s + ox0) in ``[ky][kx][c]`` order, then junk up to the row's width K (16 or
    32: widths at which onnxruntime's int8 GEMM runs at full speed; the weights of the junk
    columns are the zero point, so it adds nothing). ``out`` is flat, 16 bytes longer than the
    rows: each kernel row is one 16-byte copy (three per GEMM row, in order, each overwriting
    the junk of the one before; the last runs into the next row, which overwrites it)."""
    kp = (out.shape[0] - 16) // (oh * ow)
    seg = 3 * ch
    for i in range(oh):
        y = i * s + oy0
        r0, r1, r2 = xp[y], xp[y + 1], xp[y + 2]
        base = i * ow * kp
        for j in range(ow):
            e = (j * s + ox0) * ch
            d = base + j * kp
            copy16(out, d, r0, e)
            copy16(out, d + seg, r1, e)
            copy16(out, d + 2 * seg, r2, e)


@njit(**_NOGIL)
def chw_to_hwc(x, out):
    """``out[y, x, c] = x[c, y, x]`` (uint8): numpy's transpose copy of a 3-channel image walks
    3-byte strides one element at a time (5x slower)."""
    c, h, w = x.shape
    for y in range(h):
        o = out[y].reshape(-1)
        for ch in range(c):
            src = x[ch, y]
            for xx in range(w):
                o[xx * c + ch] = src[xx]


@njit(**_NOGIL)
def hwc_to_chw(y, out):
    """``out[c, y, x] = y[y, x, c]`` (uint8)."""
    h, w, c = y.shape
    for yy in range(h):
        s = y[yy].reshape(-1)
        for ch in range(c):
            d = out[ch, yy]
            for xx in range(w):
                d[xx] = s[xx * c + ch]


@njit(**_NOGIL)
def quantize_host(x, scale, zero, out):
    """nncase's host ``quantize`` (``kmodel.ops.v4_float.quantize``, mode "host") in one pass:
    ``clamp((int32_t)roundf(x·scale + zp), 0, 255)`` with float32 products and sums, x86's
    INT32_MIN for NaN and values past the int32 range (which the clamp makes 0)."""
    for i in range(x.shape[0]):
        t = x[i] * scale + zero
        if not t < np.float32(2147483648.0) or t < np.float32(0.0):
            out[i] = 0
        else:
            r = np.floor(np.float64(t) + 0.5)
            out[i] = np.uint8(255.0 if r > 255.0 else r)


@njit(**_NOGIL)
def lookup(table, index, out):
    """``out[i] = table[index[i]]`` for uint8 indices (V4's dequantize and byte-operand tables):
    numpy's take first widens the indices to intp."""
    for i in range(index.shape[0]):
        out[i] = table[index[i]]


# --- V4 head glue (v4.fuse.head_chains): a KPU head's map → the model's float output ------------


@njit(**_NOGIL)
def _lookup_run(table, x, base, step, out, row, n):
    """``out[row + c] = table[x[base + c·step]]`` for ``c < n``: one output run of
    ``lookup_permuted``, whichever order its two outer loops walk the map in."""
    for c in range(n):
        out[row + c] = table[x[base + c * step]]


@njit(**_NOGIL)
def lookup_permuted(table, x, d0, d1, d2, s0, s1, s2, out):
    """``out[(a·d1 + b)·d2 + c] = table[x[a·s0 + b·s1 + c·s2]]`` (``x`` a flat uint8 map, the
    strides in elements): a KPU head's transpose to NHWC (or none), its dequantize and the copy
    into its concat slice in one pass, in the order the output holds the values. A map already in
    that order is one flat loop (the index arithmetic of the general one costs 2.7x: 36 vs 13 µs
    on 24 000 values)."""
    if s2 == 1 and s1 == d2 and s0 == d1 * d2:
        for i in range(d0 * d1 * d2):
            out[i] = table[x[i]]
        return
    if s0 < s1:  # (an HWC map in CHW order: one input row at a time, 83 -> 41 µs on 7x10x512)
        for b in range(d1):
            for a in range(d0):
                _lookup_run(table, x, a * s0 + b * s1, s2, out, (a * d1 + b) * d2, d2)
        return
    for a in range(d0):
        for b in range(d1):
            _lookup_run(table, x, a * s0 + b * s1, s2, out, (a * d1 + b) * d2, d2)


@njit(**_NOGIL)
def fully_connected(x, w_t, out):
    """``out[o] = p[0, o] + p[1, o] + …`` left to right in float32, ``p[i, o] = w_t[i, o]·x[i]``
    rounded to float32 first (no fused multiply-add): ``kmodel.ops.fully_connected``'s sums,
    vectorised across the outputs instead of walking each weight row."""
    n_in = w_t.shape[0]
    if n_in == 0:
        out[:] = 0
        return
    first = w_t[0]
    x0 = x[0]
    for o in range(out.shape[0]):
        out[o] = first[o] * x0
    for i in range(1, n_in):
        row = w_t[i]
        xi = x[i]
        for o in range(out.shape[0]):
            out[o] = out[o] + row[o] * xi


@njit(**_NOGIL)
def _conv_tap(row, xrow, wv, sw, off, ow, wd):
    """``row[ox] += xrow[ox·sw + off]·wv`` (float32, product rounded first) for the columns whose
    input lies inside ``xrow`` (the taps outside are skipped, as the reference does)."""
    lo = 0 if off >= 0 else (-off + sw - 1) // sw
    hi = min(ow, (wd - off + sw - 1) // sw) if wd > off else 0
    if sw == 1:  # contiguous views: a vectorised pass
        src = xrow[lo + off : hi + off]
        dst = row[lo:hi]
        for k in range(hi - lo):
            dst[k] = dst[k] + src[k] * wv
    else:
        for ox in range(lo, hi):
            row[ox] = row[ox] + xrow[ox * sw + off] * wv


@njit(**_NOGIL)
def conv2d_f32(x, w, bias, groups, sh, sw, dh, dw, pad_top, pad_left, kkc, lo, hi, out):
    """``kmodel.ops.v4_float.conv2d`` (float32 NCHW, weights [OC, IC/groups, KH, KW]): every
    output starts at its bias and receives ``x·w`` (rounded to float32, then added; no fused
    multiply-add) tap by tap in the reference's order — ``ic, ky, kx``, or ``ky, kx, ic`` when
    ``kkc`` — skipping taps outside the input; one output row at a time, so each tap is one
    contiguous (or strided) pass over the row's valid columns. Then ``std::clamp(v, lo, hi)``
    (float32 ``lo``/``hi``; NaN passes, -0.0 stays), as ``v4_float.clamp``."""
    n, _, h, wd = x.shape
    oc, gic, kh, kw = w.shape
    goc = oc // groups
    oh, ow = out.shape[2], out.shape[3]
    for b in range(n):
        for o in range(oc):
            c0 = (o // goc) * gic
            wo = w[o]
            for oy in range(oh):
                row = out[b, o, oy]
                bo = bias[o]
                for ox in range(ow):
                    row[ox] = bo
                if kkc:
                    for ky in range(kh):
                        iy = oy * sh - pad_top + ky * dh
                        if iy < 0 or iy >= h:
                            continue
                        for kx in range(kw):
                            for i in range(gic):
                                _conv_tap(row, x[b, c0 + i, iy], wo[i, ky, kx], sw, kx * dw - pad_left, ow, wd)
                else:
                    for i in range(gic):
                        xc = x[b, c0 + i]
                        for ky in range(kh):
                            iy = oy * sh - pad_top + ky * dh
                            if iy < 0 or iy >= h:
                                continue
                            xrow = xc[iy]
                            for kx in range(kw):
                                _conv_tap(row, xrow, wo[i, ky, kx], sw, kx * dw - pad_left, ow, wd)
                for ox in range(ow):
                    v = row[ox]
                    row[ox] = lo if v < lo else (hi if hi < v else v)


# --- V4 host float ops (kmodel.ops.v4_float), one compiled pass each --------------------------
# Float32 scalars, one rounding per C operator, no fused multiply-add; ``error_model="numpy"``
# so a division by zero gives inf/NaN as C does instead of raising.

_FLOAT: _JitOptions = {**_NOGIL, "error_model": "numpy"}

#: op codes of ``binary_f32`` / ``fold_f32`` (``v4_float.BINARY_FUNCS`` / ``REDUCE_OPS`` order)
OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MIN, OP_MAX = 0, 1, 2, 3, 4, 5


@njit(**_FLOAT)
def _op_f32(op, a, b):
    if op == OP_ADD:
        return a + b
    if op == OP_SUB:
        return a - b
    if op == OP_MUL:
        return a * b
    if op == OP_DIV:
        return a / b
    if op == OP_MIN:  # std::min: b < a ? b : a
        return b if b < a else a
    return b if a < b else a  # std::max: a < b ? b : a


@njit(**_FLOAT)
def _clamp_f32(v, lo, hi):
    # std::clamp(v, lo, hi) = v < lo ? lo : (hi < v ? hi : v)
    return lo if v < lo else (hi if hi < v else v)


@njit(**_FLOAT)
def binary_f32(a, ia, b, ib, op, lo, hi, out):
    """``out[k] = clamp(op(a[ia[k]], b[ib[k]]))`` on flat float32 arrays; an empty index array
    reads element k itself (the same-shape case)."""
    na, nb = ia.shape[0] > 0, ib.shape[0] > 0
    for k in range(out.shape[0]):
        x = a[ia[k]] if na else a[k]
        y = b[ib[k]] if nb else b[k]
        out[k] = _clamp_f32(_op_f32(op, x, y), lo, hi)


@njit(**_FLOAT)
def matmul_f32(a, b, bias, lo, hi, out):
    """``v4_float.matmul``: ``out[r,c] = clamp(bias[c] + a[r,0]·b[0,c] + …)``, left to right."""
    rows, cols = a.shape
    n = b.shape[1]
    for r in range(rows):
        acc = out[r]
        for c in range(n):
            acc[c] = bias[c]
        for i in range(cols):
            av = a[r, i]
            brow = b[i]
            for c in range(n):
                acc[c] = acc[c] + av * brow[c]
        for c in range(n):
            acc[c] = _clamp_f32(acc[c], lo, hi)


@njit(**_FLOAT)
def reduce_rows_f32(x, op, init, mean, mul, out):
    """``v4_float.reduce`` on [outer, inner] rows: fold each row from ``init`` in order (``op``
    add for sum/mean, min or max), then ``· mul`` for a mean."""
    for r in range(x.shape[0]):
        acc = init
        row = x[r]
        for k in range(row.shape[0]):
            acc = _op_f32(op, acc, row[k])
        out[r] = acc * mul if mean else acc


@njit(**_FLOAT)
def _window_plane(xc, op, init, mean, kh, kw, sh, sw, dh, dw, pad_top, pad_left, lo, hi, oc_, acc, cols):
    """One channel of ``reduce_window_f32``, an output row at a time: for each tap (ky, kx) in
    order, one pass over the outputs whose tap lies inside the input (a contiguous range of
    columns), so every output folds its taps in (ky, kx) order as the reference does."""
    h, w = xc.shape
    oh, ow = oc_.shape
    for oy in range(oh):
        y0 = oy * sh - pad_top
        k0 = 0 if y0 >= 0 else (-y0 + dh - 1) // dh
        k1 = min(kh, (h - y0 + dh - 1) // dh) if h > y0 else 0
        for ox in range(ow):
            acc[ox] = init
        for ky in range(k0, k1):
            xrow = xc[y0 + ky * dh]
            for kx in range(kw):
                off = kx * dw - pad_left
                a = 0 if off >= 0 else (-off + sw - 1) // sw
                b = min(ow, (w - off + sw - 1) // sw) if w > off else 0
                if op == OP_MAX:
                    for ox in range(a, b):
                        v = xrow[ox * sw + off]
                        acc[ox] = v if acc[ox] < v else acc[ox]
                elif op == OP_MIN:
                    for ox in range(a, b):
                        v = xrow[ox * sw + off]
                        acc[ox] = v if v < acc[ox] else acc[ox]
                else:
                    for ox in range(a, b):
                        acc[ox] = acc[ox] + xrow[ox * sw + off]
        rows = max(k1 - k0, 0)
        for ox in range(ow):
            v = acc[ox]
            if mean:
                v = v / np.float32(rows * cols[ox])
            oc_[oy, ox] = _clamp_f32(v, lo, hi)


@njit(**_FLOAT)
def reduce_window_f32(x, op, init, mean, kh, kw, sh, sw, dh, dw, pad_top, pad_left, lo, hi, out):
    """``v4_float.reduce_window2d`` (NCHW float32): each output folds its valid taps from
    ``init`` in (ky, kx) order (taps outside the input are skipped), a mean divides by the valid
    count (float32), then ``clamp``."""
    n, c, _, w = x.shape
    ow = out.shape[3]
    acc = np.empty(ow, np.float32)
    cols = np.zeros(ow, np.int64)  # valid kx taps of each output column
    for ox in range(ow):
        for kx in range(kw):
            ix = ox * sw - pad_left + kx * dw
            if 0 <= ix < w:
                cols[ox] += 1
    for b in range(n):
        for ch in range(c):
            _window_plane(x[b, ch], op, init, mean, kh, kw, sh, sw, dh, dw, pad_top, pad_left, lo, hi, out[b, ch], acc, cols)


# --- V3 host float ops (kmodel.ops.quantize / ops.activation), one compiled pass each ---------


@njit(**_FLOAT)
def quantize_v3(x, bias, inv, out):
    """``ops.quantize.quantize_v3``: ``q = roundf((x - bias)·inv)`` (float32 operations, halves
    away from zero), NaN → 0, clamped to 0..255."""
    for i in range(x.shape[0]):
        t = (x[i] - bias) * inv
        if not t > np.float32(0.0):  # NaN, zero and negatives (roundf of t > -0.5 is -0: 0)
            out[i] = 0
        elif t >= np.float32(255.0):
            out[i] = 255
        else:
            out[i] = np.uint8(np.floor(np.float64(t) + 0.5))


@njit(**_FLOAT)
def expf_scalar(x, tab, c0, c1, c2, invln2n, shift, over, under):
    """``ops.activation.expf`` for one float32 (glibc's table-driven algorithm, every step in
    float64, one final rounding): ``2**(k/32)`` is ``ldexp(tab[k & 31], k >> 5)`` — the same
    double as the reference's exponent-bit arithmetic for every result that is not flushed."""
    xd = np.float64(x)
    if x != x:
        return x
    if xd > over:
        return np.float32(np.inf)
    if xd < under:
        return np.float32(0.0)
    z = invln2n * xd
    kd = (z + shift) - shift
    r = z - kd
    k = np.int64(kd)
    s = math.ldexp(tab[k & 31], k >> 5)
    zz = c0 * r + c1
    r2 = r * r
    y = c2 * r + 1.0
    y = zz * r2 + y
    return np.float32(y * s)


@njit(**_FLOAT)
def softmax_v3(x, tab, c0, c1, c2, invln2n, shift, over, under, out):
    """``ops.activation.softmax_v3``: the max starts at FLT_MIN (a NaN leaves it there), then
    ``expf(x - max)``, their float32 sum left to right from 0, and ``e / sum``."""
    n = x.shape[0]
    m = np.float32(1.1754943508222875e-38)
    if n:
        xmax = x[0]
        for i in range(n):
            v = x[i]
            if v != v:
                xmax = v
                break
            if v > xmax:
                xmax = v
        if xmax > m:
            m = xmax
    total = np.float32(0.0)
    for i in range(n):
        e = expf_scalar(x[i] - m, tab, c0, c1, c2, invln2n, shift, over, under)
        out[i] = e
        total = total + e
    for i in range(n):
        out[i] = out[i] / total


@njit(**_FLOAT)
def fully_connected_v3(x, w_t, bias, act, out):
    """``ops.fully_connected.fully_connected`` whole: the sums of ``fully_connected``, ``+ bias``
    (float32), then ``act`` 1 ``np.maximum(v, 0)`` or 2 ``np.minimum(np.maximum(v, 0), 6)``
    (NaN and -0.0 pass as numpy's maximum/minimum pass them)."""
    fully_connected(x, w_t, out)
    zero, six = np.float32(0.0), np.float32(6.0)
    for o in range(out.shape[0]):
        v = out[o] + bias[o]
        if act >= 1 and not (v >= zero or v != v):
            v = zero
        if act == 2 and not (v <= six or v != v):
            v = six
        out[o] = v


# --- V4 quantized convolutions (kmodel.ops.quantized_conv): the exact int8 fast path -----------
# ``acc = bias + Σ (x + in_add)(w + w_add)`` over the valid taps, then nncase's requantisation;
# the sums come from a GEMM (an int8 product or exact float sums) over the rows ``im2col_taps``
# writes, or from ``qconv_depthwise`` directly.


@njit(**_NOGIL)
def im2col_taps(x, c0, gic, kh, kw, sh, sw, dh, dw, pad_top, pad_left, pad, center, oy0, rows, out):
    """``out[r·OW + j, (ky·KW + kx)·gic + i] = x[iy, ix, c0 + i] − center`` for output pixel
    ``(oy0 + r, j)`` of a general convolution (``iy = oy·sh − pad_top + ky·dh``, likewise ix) on
    an HWC uint8 map; taps outside the map hold ``pad − center`` (the A zero point: they add 0).
    ``out`` is uint8 (``center`` 0) or float (``center`` the zero point, the centred values)."""
    h, w, _ = x.shape
    ow = out.shape[0] // max(rows, 1)
    pv = pad - center
    for r in range(rows):
        oy = oy0 + r
        for j in range(ow):
            row = out[r * ow + j]
            for ky in range(kh):
                iy = oy * sh - pad_top + ky * dh
                for kx in range(kw):
                    ix = j * sw - pad_left + kx * dw
                    base = (ky * kw + kx) * gic
                    dst = row[base : base + gic]
                    if iy < 0 or iy >= h or ix < 0 or ix >= w:
                        for i in range(gic):
                            dst[i] = pv
                    else:
                        src = x[iy, ix, c0 : c0 + gic]
                        for i in range(gic):
                            dst[i] = src[i] - center


@njit(**_NOGIL)
def _wrap32(v):
    return ((v + np.int64(2147483648)) & np.int64(0xFFFFFFFF)) - np.int64(2147483648)


@njit(**_NOGIL)
def _requantize(acc, mul, shift, offset):
    """nncase v0.2: ``clamp((int32)((int32)carry_shift((int64)acc·mul, shift) + offset), 0, 255)``
    for an int32-valued ``acc`` (``ops.v4_quant.requantize``)."""
    p = acc * mul
    if shift > 0:
        p = (p + (np.int64(1) << (shift - 1))) >> shift
    v = _wrap32(_wrap32(p) + offset)
    return 0 if v < 0 else (255 if v > 255 else v)


@njit(**_NOGIL)
def requantize_rows(g, bias, mul, shift, offset, out, row0, col0, channels_first):
    """``g`` [R, N] (int32 sums, or float/int64 holding them exactly) plus ``bias`` [N] (int64),
    wrapped to int32 and requantised into ``out`` (uint8): rows ``row0 + r`` and channels
    ``col0 + n`` of an [P, C] map (``channels_first`` False: HWC) or a [C, P] one (True: CHW)."""
    rows, n = g.shape
    mul64 = np.int64(mul)
    off64 = np.int64(offset)
    for r in range(rows):
        gr = g[r]
        for c in range(n):
            acc = _wrap32(np.int64(gr[c]) + bias[c])
            v = np.uint8(_requantize(acc, mul64, shift, off64))
            if channels_first:
                out[col0 + c, row0 + r] = v
            else:
                out[row0 + r, col0 + c] = v


@njit(**_NOGIL)
def qconv_depthwise(x, wt, in_add, mult, kh, kw, sh, sw, dh, dw, pad_top, pad_left, bias, mul, shift, offset, acc, out):
    """A depthwise quantized convolution on HWC maps: output channel ``o`` reads input channel
    ``o // mult``; ``wt`` [KH·KW, OC] holds ``w + w_add`` (acc's dtype), ``acc`` an empty array of
    the sums' dtype (int32 when every sum fits, else int64); out uint8 [OH, OW, OC]. Each output
    pixel's sums are one vector over the channels, tap by tap (only the valid taps)."""
    h, w, _ = x.shape
    oh, ow, oc = out.shape
    row = np.empty(oc, acc.dtype)
    xv = np.empty(oc, acc.dtype)
    mul64 = np.int64(mul)
    off64 = np.int64(offset)
    for oy in range(oh):
        for ox in range(ow):
            for o in range(oc):
                row[o] = 0
            for ky in range(kh):
                iy = oy * sh - pad_top + ky * dh
                if iy < 0 or iy >= h:
                    continue
                for kx in range(kw):
                    ix = ox * sw - pad_left + kx * dw
                    if ix < 0 or ix >= w:
                        continue
                    src = x[iy, ix]
                    if mult == 1:
                        for o in range(oc):
                            xv[o] = src[o] + in_add
                    else:
                        for o in range(oc):
                            xv[o] = src[o // mult] + in_add
                    wv = wt[ky * kw + kx]
                    for o in range(oc):
                        row[o] += xv[o] * wv[o]
            dst = out[oy, ox]
            for o in range(oc):
                dst[o] = np.uint8(_requantize(_wrap32(np.int64(row[o]) + bias[o]), mul64, shift, off64))


# --- small 1×1 layers (kpu.small): the sums and the epilogue in one call -----------------------
# A layer of a few ten thousand MACs costs more in calls than in work: an onnxruntime product
# (~3 µs a call whatever its size) and the epilogue's own call. Here the sums are exact int32
# dot products (|G| <= 128·Σ|w'| < 2**31, checked per layer at load) and ``epilogue`` finishes
# them inside the same compiled call.


@njit(**_NOGIL)
def small_conv1x1(x, wt, out, k, s, oy0, ox0, reduce, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm, ss, sb,
                  lin):
    """``out`` (uint8 [OH, OW, N]) of a 1×1 layer on the HWC uint8 map ``x`` [H, W, C]:
    ``G[y, x, n] = Σ_c (x[y, x, c] − 128)·wt[n, c]`` (``wt`` the centred weights ``w + ax``,
    int16 [N, C]), then ``epilogue``; returns its count of values below every segment start."""
    h, w, c = x.shape
    n = wt.shape[0]
    g = np.empty((h, w, n), np.int32)
    xc = np.empty(c, np.int16)
    for yy in range(h):
        for xx in range(w):
            px = x[yy, xx]
            for i in range(c):
                xc[i] = np.int16(px[i]) - np.int16(128)
            gp = g[yy, xx]
            for o in range(n):
                wo = wt[o]
                acc = np.int32(0)
                for i in range(c):
                    acc += xc[i] * np.int32(wo[i])
                gp[o] = acc
    return epilogue(g, out, k, s, oy0, ox0, reduce, fm, fc, cc, mul, sh, add, act_mode, lo, span, lut, bp, sx, sm, ss, sb, lin)


# --- V4 2×2 / stride-2 max and min pools (nodes.decode_reduce_window2d) ------------------------


@njit(**_FLOAT)
def _fold_max(acc, v):
    return v if acc < v else acc


@njit(**_FLOAT)
def _fold_min(acc, v):
    return v if v < acc else acc


@njit(**_FLOAT)
def pool2_f32(x, is_max, init, lo, hi, out):
    """``reduce_window_f32`` for a 2×2 window, stride 2, no dilation or padding, max or min, with
    every window inside the map: each output folds its four taps from ``init`` in (ky, kx)
    order with the same comparisons, then ``clamp`` — one pass per output row instead of a pass
    per tap."""
    n, c = x.shape[0], x.shape[1]
    oh, ow = out.shape[2], out.shape[3]
    for b in range(n):
        for ch in range(c):
            xc = x[b, ch]
            oc_ = out[b, ch]
            for oy in range(oh):
                r0 = xc[2 * oy]
                r1 = xc[2 * oy + 1]
                orow = oc_[oy]
                if is_max:
                    for ox in range(ow):
                        acc = _fold_max(init, r0[2 * ox])
                        acc = _fold_max(acc, r0[2 * ox + 1])
                        acc = _fold_max(acc, r1[2 * ox])
                        acc = _fold_max(acc, r1[2 * ox + 1])
                        orow[ox] = _clamp_f32(acc, lo, hi)
                else:
                    for ox in range(ow):
                        acc = _fold_min(init, r0[2 * ox])
                        acc = _fold_min(acc, r0[2 * ox + 1])
                        acc = _fold_min(acc, r1[2 * ox])
                        acc = _fold_min(acc, r1[2 * ox + 1])
                        orow[ox] = _clamp_f32(acc, lo, hi)
