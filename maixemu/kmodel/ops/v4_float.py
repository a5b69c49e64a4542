"""Float32 kernels of the nncase v0.2 runtime (kmodel V4), reproduced operation by operation.

The reference (nncase v0.2.0-beta4 host build, x86-64 SSE, no FMA contraction, glibc libm) computes
every float op in IEEE single precision, one rounding per C operator, in a fixed loop order. The
kernels below keep exactly that sequence but vectorise over the dimensions whose order does not
matter (independent output elements); only the accumulation axes stay as short Python loops. Every
intermediate is float32: numpy's float64 defaults would change the last bits.

``std::min``/``std::max``/``std::clamp`` are spelled with comparisons (not ``np.minimum``) because
they differ from numpy for NaN and signed zeros.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

F32 = np.float32
FLT_MAX = float(np.finfo(np.float32).max)

BINARY_OPS = ("add", "sub", "mul", "div", "min", "max")
UNARY_OPS = ("abs", "ceil", "cos", "exp", "floor", "log", "neg", "rsqrt", "sin", "square")
REDUCE_OPS = ("mean", "min", "max", "sum")


# --- C library semantics -------------------------------------------------------------------


def std_min(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``std::min(a, b)`` = ``b < a ? b : a``."""
    return np.where(b < a, b, a)


def std_max(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``std::max(a, b)`` = ``a < b ? b : a``."""
    return np.where(a < b, b, a)


def clamp(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``std::clamp(v, lo, hi)`` in float32 (NaN passes through, -0.0 stays -0.0)."""
    lo32, hi32 = F32(lo), F32(hi)
    return np.where(v < lo32, lo32, np.where(hi32 < v, hi32, v)).astype(F32, copy=False)


def _via_f64(fn: Callable[[np.ndarray], np.ndarray]) -> Callable[[np.ndarray], np.ndarray]:
    """A libm float function evaluated in double and rounded once to float.

    glibc's expf/logf/sinf/cosf compute in double internally and are (almost always) correctly
    rounded; numpy's own float32 SIMD versions are not, so going through float64 is the closer
    model of the reference.
    """

    def f(x: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return fn(np.asarray(x, dtype=np.float64)).astype(F32)

    return f


expf = _via_f64(np.exp)
logf = _via_f64(np.log)
sinf = _via_f64(np.sin)
cosf = _via_f64(np.cos)


def sqrtf(x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.sqrt(x.astype(F32, copy=False))  # IEEE sqrt is correctly rounded in float32


def roundf(x: np.ndarray) -> np.ndarray:
    """C ``roundf`` (half away from zero), exact: float32 + 0.5 is exact in float64."""
    x64 = np.asarray(x, dtype=np.float64)
    return np.copysign(np.floor(np.abs(x64) + 0.5), x64)


def cvt_i32_x86(r: np.ndarray) -> np.ndarray:
    """``(int32_t)`` of an integral float on x86 (cvttss2si): out of range or NaN -> INT32_MIN."""
    bad = ~(np.abs(r) < 2.0**31) | (r == 2.0**31)
    out = np.where(bad, -(2.0**31), np.nan_to_num(r))
    return out.astype(np.int64)


def cvt_i32_riscv(r: np.ndarray) -> np.ndarray:
    """``fcvt.w.s`` on RISC-V: saturating, NaN -> INT32_MAX."""
    out = np.where(np.isnan(r), 2.0**31 - 1, np.clip(r, -(2.0**31), 2.0**31 - 1))
    return out.astype(np.int64)


UNARY_FUNCS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "abs": lambda a: np.abs(a),
    "ceil": lambda a: np.ceil(a),
    "cos": cosf,
    "exp": expf,
    "floor": lambda a: np.floor(a),
    "log": logf,
    "neg": lambda a: np.negative(a),
    "rsqrt": lambda a: F32(1.0) / sqrtf(a),
    "sin": sinf,
    "square": lambda a: a * a,
}

BINARY_FUNCS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / b,
    "min": std_min,
    "max": std_max,
}


# --- quantisation ----------------------------------------------------------------------------


def dequantize(q: np.ndarray, zero_point: int, scale: float, mode: str = "host") -> np.ndarray:
    """u8 -> f32. host: ``(q - zp) * (1/scale)``; device (RISC-V): ``q * (1/scale) + (-zp * (1/scale))``
    with a fused multiply-add (modelled in double, one final rounding)."""
    inv = F32(1.0) / F32(scale)
    if mode == "host":
        return (q.astype(np.int64) - int(zero_point)).astype(F32) * inv
    zero = F32(-int(zero_point)) * inv
    return (q.astype(np.float64) * np.float64(inv) + np.float64(zero)).astype(F32)


def quantize(x: np.ndarray, zero_point: int, scale: float, mode: str = "host") -> np.ndarray:
    """f32 -> u8. host: ``clamp((int)roundf(x*scale + zp), 0, 255)``; device: FMA then
    round-half-to-even for pairs and ``roundf`` for an odd last element (RISC-V kernel)."""
    x = x.astype(F32, copy=False)
    if mode == "host":
        with np.errstate(all="ignore"):
            t = x * F32(scale) + F32(zero_point)
        q = cvt_i32_x86(roundf(t))
    else:
        with np.errstate(all="ignore"):
            t = (x.astype(np.float64) * np.float64(F32(scale)) + np.float64(F32(zero_point))).astype(F32)
        r = np.rint(t.astype(np.float64))
        if t.size % 2:
            r = r.copy()
            r.reshape(-1)[-1] = roundf(t.reshape(-1)[-1:])[0]
        q = cvt_i32_riscv(r)
    return np.clip(q, 0, 255).astype(np.uint8)


# --- element-wise and reductions -------------------------------------------------------------


def binary(a: np.ndarray, b: np.ndarray, op: str, lo: float, hi: float) -> np.ndarray:
    """``clamp(op(a, b))``; ``a``/``b`` are already broadcast to the output shape."""
    with np.errstate(all="ignore"):
        return clamp(BINARY_FUNCS[op](a, b).astype(F32, copy=False), lo, hi)


def matmul(a: np.ndarray, b: np.ndarray, bias: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """``out[r,c] = bias[c] + Σ_i a[r,i]*b[i,c]`` summed in increasing ``i``, one rounding each."""
    rows, cols = a.shape[0], b.shape[1]
    with np.errstate(all="ignore"):
        if rows * a.shape[1] * cols <= 1 << 22:
            # all products at once, then a strictly sequential cumsum starting from the bias
            prods = a[:, :, None].astype(F32) * b[None, :, :].astype(F32)  # [rows, i, cols]
            start = np.broadcast_to(bias.astype(F32), (rows, 1, cols))
            acc = np.cumsum(np.concatenate([start, prods], axis=1), axis=1, dtype=F32)[:, -1]
        else:
            acc = np.broadcast_to(bias.astype(F32), (rows, cols)).copy()
            for i in range(a.shape[1]):
                acc += a[:, i : i + 1] * b[i]
    return clamp(acc, lo, hi)


def sequential_sum(x: np.ndarray, init: float = 0.0) -> np.ndarray:
    """``((init + x0) + x1) + ...`` along the last axis in float32, one rounding per addition.

    ``np.add.accumulate`` (cumsum) is strictly sequential, unlike ``np.sum`` (pairwise).
    """
    start = np.full(x.shape[:-1] + (1,), F32(init), dtype=F32)
    return np.cumsum(np.concatenate([start, x.astype(F32, copy=False)], axis=-1), axis=-1, dtype=F32)[..., -1]


def reduce(x: np.ndarray, out_shape: tuple[int, ...], op: str, init: float) -> np.ndarray:
    """Reduce a 4-D tensor to ``out_shape`` (size-1 axes reduced), folding inputs in row-major
    order; mean multiplies by ``(float)out_count / in_count`` afterwards."""
    axes = [i for i in range(4) if out_shape[i] != x.shape[i]]
    keep = [i for i in range(4) if i not in axes]
    moved = np.transpose(x, keep + axes).reshape([x.shape[i] for i in keep] + [-1])
    with np.errstate(all="ignore"):
        if op in ("mean", "sum"):
            acc = sequential_sum(moved, init)
        else:
            acc = np.full(moved.shape[:-1], F32(init), dtype=F32)
            fold = std_min if op == "min" else std_max
            for k in range(moved.shape[-1]):
                acc = fold(acc, moved[..., k]).astype(F32, copy=False)
        if op == "mean":
            mul = F32(F32(int(np.prod(out_shape))) / F32(x.size))
            acc = acc * mul
    # put the kept axes back into their places, reduced axes as size 1
    return acc.reshape(out_shape)


def tap_slices(in_size: int, out_size: int, k: int, stride: int, dilation: int, before: int):
    """For every kernel tap ``t``: ``(outputs, inputs)`` slices of the outputs whose tap ``t`` falls
    inside the input (``0 <= o*stride - before + t*dilation < in_size``) and the input positions
    they read. The valid outputs of one tap are always a contiguous range, so plain strided slices
    replace fancy indexing. Taps with no valid output are omitted."""
    out = []
    for t in range(k):
        off = t * dilation - before  # input position of output 0
        lo = 0 if off >= 0 else (-off + stride - 1) // stride
        hi = min(out_size, (in_size - off + stride - 1) // stride) if in_size > off else 0
        if hi > lo:
            start = lo * stride + off
            out.append((t, slice(lo, hi), slice(start, start + (hi - lo - 1) * stride + 1, stride)))
    return out


def reduce_window2d(x: np.ndarray, op: str, init: float, kh: int, kw: int, sh: int, sw: int, dh: int, dw: int,
                    pad_h: tuple[int, int], pad_w: tuple[int, int], lo: float, hi: float, layout: str = "NCHW") -> np.ndarray:
    """Windowed reduction; taps outside the input are skipped; mean divides by the valid count.

    Taps are folded in the reference's (ky, kx) order, each over all outputs at once."""
    if layout == "NHWC":
        x = np.transpose(x, (0, 3, 1, 2))
    n, c, h, w = x.shape
    oh = out_size(h, kh, sh, dh, pad_h)
    ow = out_size(w, kw, sw, dw, pad_w)
    acc: np.ndarray = np.full((n, c, oh, ow), F32(init), dtype=F32)
    count = np.zeros((oh, ow), dtype=np.int64)
    folds: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {"mean": np.add, "sum": np.add, "min": std_min, "max": std_max}
    fold = folds[op]
    with np.errstate(all="ignore"):
        for _, oys, iys in tap_slices(h, oh, kh, sh, dh, pad_h[0]):
            for _, oxs, ixs in tap_slices(w, ow, kw, sw, dw, pad_w[0]):
                region = acc[:, :, oys, oxs]
                acc[:, :, oys, oxs] = fold(region, x[:, :, iys, ixs])
                count[oys, oxs] += 1
        if op == "mean":
            acc = acc / count.astype(F32)
    out = clamp(acc, lo, hi)
    if layout == "NHWC":
        out = np.ascontiguousarray(np.transpose(out, (0, 2, 3, 1)))
    return out


def softmax(x: np.ndarray, beta: float) -> np.ndarray:
    """Rows of ``x`` (2-D): ``e = expf((x - max)*beta)``, sequential f32 sum, then ``e / sum``."""
    with np.errstate(all="ignore"):
        # std::max_element differs from np.max only for NaN (every output is NaN either way) and
        # the sign of a zero maximum (exp(+-0) = 1 either way)
        m = np.max(x, axis=1, keepdims=True)
        e = expf((x - m) * F32(beta))
        s = sequential_sum(e)[:, None]
        return (e / s).astype(F32)


# --- convolutions ----------------------------------------------------------------------------


def out_size(size: int, k: int, stride: int, dilation: int, pad: tuple[int, int]) -> int:
    return (size + pad[0] + pad[1] - ((k - 1) * dilation + 1) + stride) // stride


def conv2d(x: np.ndarray, w: np.ndarray, bias: np.ndarray, groups: int, sh: int, sw: int, dh: int, dw: int,
           pad_h: tuple[int, int], pad_w: tuple[int, int], lo: float, hi: float, order: str = "ckk") -> np.ndarray:
    """Float convolution, NCHW in and out, weights ``[oc][ic/groups][kh][kw]``.

    ``order`` is the accumulation order of the reference: ``"ckk"`` = ic, ky, kx (neutral
    conv2d), ``"kkc"`` = ky, kx, ic (cpu_conv2d, NHWC). Taps outside the input are skipped, not
    added as zeros (that matters for -0.0 and inf).
    """
    n, c, h, wd = x.shape
    oc, gic, kh, kw = w.shape
    goc = oc // groups
    oh = out_size(h, kh, sh, dh, pad_h)
    ow = out_size(wd, kw, sw, dw, pad_w)
    out = np.empty((n, oc, oh, ow), dtype=F32)
    from ..kpu.fast import loaded_kernels

    compiled = loaded_kernels()
    if compiled is not None and order in ("ckk", "kkc") and min(oh, ow) > 0:
        # the fast engine's kernel: the same float32 operations in the same order per output
        # (numpy's one pass per tap costs a Python round trip per tap: 9·IC of them)
        compiled.conv2d_f32(np.ascontiguousarray(x, dtype=F32), np.ascontiguousarray(w, dtype=F32),
                            np.ascontiguousarray(bias, dtype=F32), groups, sh, sw, dh, dw, pad_h[0], pad_w[0], order == "kkc",
                            F32(lo), F32(hi), out)
        return out
    ytaps = {t: (o, i) for t, o, i in tap_slices(h, oh, kh, sh, dh, pad_h[0])}
    xtaps = {t: (o, i) for t, o, i in tap_slices(wd, ow, kw, sw, dw, pad_w[0])}
    if order == "ckk":
        seq = [(i, ky, kx) for i in range(gic) for ky in range(kh) for kx in range(kw)]
    else:
        seq = [(i, ky, kx) for ky in range(kh) for kx in range(kw) for i in range(gic)]
    # all groups at once, one numpy pass per tap: every output element still receives its
    # products in the reference's order, so the float32 sums are the same bits
    xg = x.reshape(n, groups, gic, h, wd)
    wg = w.astype(F32).reshape(groups, goc, gic, kh, kw)
    with np.errstate(all="ignore"):
        acc = np.broadcast_to(bias.astype(F32).reshape(1, groups, goc, 1, 1), (n, groups, goc, oh, ow)).copy()
        for i, ky, kx in seq:
            if ky not in ytaps or kx not in xtaps:
                continue  # this tap is outside the input for every output
            (oys, iys), (oxs, ixs) = ytaps[ky], xtaps[kx]
            xv = xg[:, :, i, iys, ixs]  # [n, groups, ys, xs]
            acc[:, :, :, oys, oxs] += xv[:, :, None] * wg[:, :, i, ky, kx][None, :, :, None, None]
        out[...] = acc.reshape(n, oc, oh, ow)
    return clamp(out, lo, hi)


def conv2d_transpose(x: np.ndarray, w: np.ndarray, out_shape: tuple[int, int, int, int], groups: int, sh: int, sw: int,
                     dh: int, dw: int, pad_h: tuple[int, int], pad_w: tuple[int, int], lo: float, hi: float) -> np.ndarray:
    """Scatter-form transposed convolution (bias not applied, as in nncase v0.2).

    For one output element the reference adds contributions in input order (ic, iy, ix); for a
    fixed ic that is kernel order (ky, kx) *descending*, which is the loop order used here.
    """
    n, c, h, wd = x.shape
    oc_total, gic, kh, kw = w.shape
    goc = out_shape[1] // groups
    out = np.zeros(out_shape, dtype=F32)
    with np.errstate(all="ignore"):
        for g in range(groups):
            for i in range(gic):
                xin = x[:, g * gic + i]
                for ky in reversed(range(kh)):
                    oy = np.arange(h) * sh - pad_h[0] + ky * dh
                    ys = np.nonzero((oy >= 0) & (oy < out_shape[2]))[0]
                    for kx in reversed(range(kw)):
                        ox = np.arange(wd) * sw - pad_w[0] + kx * dw
                        xs = np.nonzero((ox >= 0) & (ox < out_shape[3]))[0]
                        if ys.size == 0 or xs.size == 0:
                            continue
                        wv = w[g * goc : (g + 1) * goc, i, ky, kx].astype(F32)
                        idx = (slice(None), slice(g * goc, (g + 1) * goc), oy[ys][:, None], ox[xs][None, :])
                        contrib = xin[:, ys[:, None], xs[None, :]][:, None] * wv[None, :, None, None]
                        out[idx] = out[idx] + contrib
    if not (lo == -FLT_MAX and hi == FLT_MAX):
        out = clamp(out, lo, hi)
    return out


def resize(x: np.ndarray, out_h: int, out_w: int, mode: str, align_corners: bool) -> np.ndarray:
    """resize_image on NCHW f32 or u8; float math in f32, u8 results truncated toward zero."""
    n, c, h, w = x.shape
    hs = F32(F32(h) / F32(out_h))
    ws = F32(F32(w) / F32(out_w))
    if mode == "nearest":
        iy = np.minimum(np.floor(np.arange(out_h, dtype=F32) * hs).astype(np.int64), h - 1)
        ix = np.minimum(np.floor(np.arange(out_w, dtype=F32) * ws).astype(np.int64), w - 1)
        return np.ascontiguousarray(x[:, :, iy[:, None], ix[None, :]])
    if align_corners and out_h > 1:
        hs = F32(F32(h - 1) / F32(out_h - 1))
    if align_corners and out_w > 1:
        ws = F32(F32(w - 1) / F32(out_w - 1))
    fy = np.arange(out_h, dtype=F32) * hs
    fx = np.arange(out_w, dtype=F32) * ws
    y0 = np.floor(fy).astype(np.int64)
    x0 = np.floor(fx).astype(np.int64)
    y1 = np.minimum(y0 + 1, h - 1)
    x1 = np.minimum(x0 + 1, w - 1)
    dy = (fy - y0.astype(F32))[:, None]
    dx = (fx - x0.astype(F32))[None, :]
    one = F32(1.0)
    a0 = (one - dy) * (one - dx)
    a1 = dy * (one - dx)
    a2 = (one - dy) * dx
    a3 = dy * dx
    xf = x.astype(F32)
    v0 = xf[:, :, y0[:, None], x0[None, :]]
    v1 = xf[:, :, y1[:, None], x0[None, :]]
    v2 = xf[:, :, y0[:, None], x1[None, :]]
    v3 = xf[:, :, y1[:, None], x1[None, :]]
    r = ((v0 * a0 + v1 * a1) + v2 * a2) + v3 * a3
    if x.dtype == np.uint8:
        return np.trunc(r).astype(np.int64).astype(np.uint8)
    return r.astype(F32)
