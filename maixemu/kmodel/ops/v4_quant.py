"""Integer (quantised) kernels of the nncase v0.2 runtime: exact int64 arithmetic with the C
runtime's int32 wrap-around and ``carry_shift`` rounding.

``mul_and_carry_shift(v, mul, shift)`` = ``(int32)carry_shift((int64)v * mul, (uint8)shift)`` with
``carry_shift(x, s) = (x + 2^(s-1)) >> s`` for ``s > 0`` (round half up, arithmetic shift).
"""

from __future__ import annotations

import numpy as np

from ..kpu.blas import blas_threads
from .v4_float import out_size

I64 = np.int64


def wrap_i32(v: np.ndarray) -> np.ndarray:
    """Two's-complement wrap of int64 values to the int32 range (kept as int64)."""
    return ((v + 2**31) & 0xFFFFFFFF) - 2**31


def mul_and_carry_shift(v: np.ndarray, mul: int, shift: int) -> np.ndarray:
    """``(int32)carry_shift((int64)v * mul, shift)``; ``v`` must already be int32-valued."""
    p = v.astype(I64) * I64(mul)
    if shift > 0:
        p = (p + (I64(1) << I64(shift - 1))) >> I64(shift)
    return wrap_i32(p)


def requantize(acc: np.ndarray, mul: int, shift: int, offset: int) -> np.ndarray:
    """``clamp((int32)mul_and_carry_shift(acc) + offset, 0, 255)`` as u8."""
    v = wrap_i32(mul_and_carry_shift(wrap_i32(acc), mul, shift) + offset)
    return np.clip(v, 0, 255).astype(np.uint8)


def quantized_binary(a: np.ndarray, b: np.ndarray, op: str, a_off: int, a_mul: int, a_shift: int,
                     b_off: int, b_mul: int, b_shift: int, out_mul: int, out_shift: int, out_off: int) -> np.ndarray:
    """Per element: rescale both inputs, combine in int32, rescale the result, clamp to u8."""
    av = mul_and_carry_shift(wrap_i32(a.astype(I64) + a_off), a_mul, a_shift)
    bv = mul_and_carry_shift(wrap_i32(b.astype(I64) + b_off), b_mul, b_shift)
    if op == "add":
        r = av + bv
    elif op == "sub":
        r = av - bv
    elif op == "mul":
        r = av * bv
    elif op == "div":
        # (a + b/2) / b with C division (truncating toward zero); b == 0 traps on the device,
        # here it yields 0 (the loader cannot know the data)
        num = wrap_i32(av + _cdiv(bv, np.full_like(bv, 2)))
        r = np.where(bv == 0, 0, _cdiv(num, np.where(bv == 0, 1, bv)))
    elif op == "min":
        r = np.minimum(av, bv)
    elif op == "max":
        r = np.maximum(av, bv)
    else:  # pragma: no cover - validated at load
        raise ValueError(op)
    return requantize(wrap_i32(r), out_mul, out_shift, out_off)


def _cdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """C integer division (truncates toward zero), exact in int64."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) ^ (b < 0), -q, q)


def _exact_gemm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """int64 ``a @ b`` via float64 BLAS when every partial sum is provably below 2^53."""
    bound = float(np.abs(a).max(initial=0)) * float(np.abs(b).max(initial=0)) * max(a.shape[-1], 1)
    with blas_threads(1):  # (as every product of the engine: one BLAS thread)
        if bound < 2.0**53:
            return (a.astype(np.float64) @ b.astype(np.float64)).astype(I64)
        return a.astype(I64) @ b.astype(I64)


def im2col_taps(h: int, w: int, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int,
                pad_h: tuple[int, int], pad_w: tuple[int, int]):
    """Index maps for a windowed op: ``iy[oy, ky]``, ``ix[ox, kx]`` and their validity."""
    oh = out_size(h, kh, sh, dh, pad_h)
    ow = out_size(w, kw, sw, dw, pad_w)
    iy = np.arange(oh)[:, None] * sh - pad_h[0] + np.arange(kh)[None, :] * dh
    ix = np.arange(ow)[:, None] * sw - pad_w[0] + np.arange(kw)[None, :] * dw
    return oh, ow, iy, ix, (iy >= 0) & (iy < h), (ix >= 0) & (ix < w)


def quantized_conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray, groups: int, sh: int, sw: int, dh: int, dw: int,
                     pad_h: tuple[int, int], pad_w: tuple[int, int], in_off: int, w_off: int,
                     out_mul: int, out_shift: int, out_off: int) -> np.ndarray:
    """Integer conv, NCHW u8 in/out, weights ``[oc][ic/groups][kh][kw]`` u8.

    ``acc = bias + Σ (x + in_off)(w + w_off)`` over valid taps only (skipped taps contribute
    nothing, so the offsets cannot be folded into a zero-padded input). Exact in int64; the
    int32 wrap of the reference is applied to the final sum (addition is modular).
    Callers with the cpu_* subtraction convention pass negated offsets.
    """
    n, c, h, wd = x.shape
    oc, gic, kh, kw = w.shape
    goc = oc // groups
    oh, ow, iy, ix, vy, vx = im2col_taps(h, wd, kh, kw, sh, sw, dh, dw, pad_h, pad_w)
    xs = x.astype(I64) + in_off
    iyc = np.clip(iy, 0, h - 1)
    ixc = np.clip(ix, 0, wd - 1)
    out = np.empty((n, oc, oh, ow), dtype=np.uint8)
    wv = w.astype(I64) + w_off
    # im2col over blocks of output rows, so the patch matrix stays below ~2**24 elements
    rows = max(1, (1 << 24) // max(1, n * gic * ow * kh * kw))
    for y0 in range(0, oh, rows):
        y1 = min(oh, y0 + rows)
        mask = vy[y0:y1, :, None, None] & vx[None, None, :, :]
        for g in range(groups):
            # patches [n, gic, oy, kh, ow, kw], invalid taps zeroed
            p = xs[:, g * gic : (g + 1) * gic][:, :, iyc[y0:y1, :, None, None], ixc[None, None, :, :]]
            p = np.where(mask, p, 0)
            p = np.transpose(p, (0, 2, 4, 1, 3, 5)).reshape(n, (y1 - y0) * ow, gic * kh * kw)
            wg = wv[g * goc : (g + 1) * goc].reshape(goc, gic * kh * kw)
            acc = _exact_gemm(p, wg.T) + bias[g * goc : (g + 1) * goc].astype(I64)[None, None, :]
            q = requantize(acc, out_mul, out_shift, out_off)  # [n, rows*ow, goc]
            out[:, g * goc : (g + 1) * goc, y0:y1] = np.transpose(q.reshape(n, y1 - y0, ow, goc), (0, 3, 1, 2))
    return out


def quantized_matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray, a_off: int, b_off: int,
                     out_mul: int, out_shift: int, out_off: int) -> np.ndarray:
    """``clamp(requant(bias[c] + Σ (a+a_off)(b+b_off)))``, exact (float64 GEMM of small ints)."""
    acc = _exact_gemm(a.astype(I64) + a_off, b.astype(I64) + b_off) + bias.astype(I64)[None, :]
    return requantize(acc, out_mul, out_shift, out_off)
