"""The compiled fast path of one KPU layer, on HWC uint8 maps (the device's bytes, channels last).

Chosen per layer at load (``HwcPath.prepare``), each piece exact:

* products — depthwise layers: one numba kernel that computes, pools and finishes every output
  pixel (``dw``); other layers: an im2col matrix and a GEMM, ``int8`` (onnxruntime
  ``MatMulInteger`` u8×s8 with the weights prepacked, proven exact for these weights at load, see
  ``kpu.int8``), else ``f32`` (BLAS sgemm, K split so that every partial sum stays below 2**24)
  or ``f64`` (below 2**53);
* batch-norm + activation + pool — one numba pass (``kernels.epilogue``): the device's int64
  batch-norm, then a table lookup (``lut``) or, when the table would be too big or a value may
  lie below every segment start, the 16 segments themselves (``segments``);
* selection pools (left/right-top) compute the sums only at the pixels they keep.

HWC because a GEMM over [pixels, taps·channels] writes [pixels, out channels]: a 1×1 layer reads
its input as is, the next layer's im2col copies whole channel vectors, and the numba loops run
over contiguous channels.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KmodelRuntimeError
from .activation import activation_lut, segment_table, step_buckets
from .int8 import MAX_POOLS, Int8Conv3x3, Int8Gemm, int8_enabled
from .parallel import _scratch

_F32_EXACT = 1 << 24
_F64_EXACT = 1 << 53
#: Largest activation table the compiled path builds (uint8 entries). Beyond it the segments
#: are evaluated directly: a multi-MiB table misses the cache on every lookup and costs load time.
HWC_LUT_MAX_ENTRIES = 1 << 20

#: 3×3 layers with at most this many input channels use ``ConvInteger`` (no im2col matrix)
CONV_INTEGER_MAX_CHANNELS = 4

#: pool_type -> (window k, stride s, row offset, column offset, kind) of the epilogue:
#: kind "max" (pre- or post-activation), "mean", or "pick" (one kept pixel, a selection pool)
_POOLS = {
    0: (1, 1, 0, 0, "pick"),
    1: (2, 2, 0, 0, "max"),
    2: (2, 2, 0, 0, "mean"),
    3: (4, 4, 0, 0, "max"),
    4: (4, 4, 0, 0, "mean"),
    5: (1, 2, 0, 0, "pick"),
    6: (1, 2, 0, 1, "pick"),
    7: (1, 4, 0, 0, "pick"),
    8: (2, 1, 0, 0, "mean"),
    9: (2, 1, 0, 0, "max"),
}


@dataclass
class _Act:
    """Activation arguments of the kernels: mode 0 a table ``lut`` over ``lo..lo+span``; 1 the
    segments (``bp``, ``sx``, ``sm``, ``ss``, ``sb``), unclamped, counting values below them; 2 the
    segments that meet ``[lo, lo+span]``, clamped; 3 step buckets (``lut`` = first value of each
    bucket, ``bp`` = its step, ``sx`` = the step's increment, ``ss[0]`` = log2 of the width)."""

    mode: int
    lo: int
    span: int
    lut: np.ndarray
    bp: np.ndarray
    sx: np.ndarray
    sm: np.ndarray
    ss: np.ndarray
    sb: np.ndarray

    def args(self) -> tuple:
        return (self.mode, self.lo, self.span, self.lut, self.bp, self.sx, self.sm, self.ss, self.sb)


_NO_ARRAY = np.zeros(1, np.int64)


def _act_plan(conv, bounds, lut_limit: int, lut_budget: int) -> _Act:
    """A table when it is small, else step buckets (monotone activations), else the segments;
    tables and buckets count against the model's budget ``lut_budget``."""
    lo, hi = bounds.lo, bounds.hi
    if bounds.valid and hi - lo + 1 <= lut_limit:
        return _Act(0, lo, hi - lo, activation_lut(conv.act, lo, hi), _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY)
    if bounds.monotone:
        buckets = step_buckets(conv.act, lo, hi)
        if buckets is not None and buckets[1].size <= lut_budget:
            j, first, inc, at = buckets
            return _Act(3, lo, hi - lo, first, at, inc, _NO_ARRAY, np.array([j], np.int64), _NO_ARRAY)
    if bounds.valid:
        # every bn lies in [bmin, bmax]; clamped to [lo, hi] (the activation is constant beyond
        # in the monotone case, lo/hi are bmin/bmax otherwise) only a few segments remain
        t = segment_table(conv.act, lo, hi)
        return _Act(2, lo, hi - lo, np.zeros(1, np.uint8), t.bp, t.sx, t.sm, t.ss, t.sb)
    t = segment_table(conv.act)
    return _Act(1, 0, 0, np.zeros(1, np.uint8), t.bp, t.sx, t.sm, t.ss, t.sb)


def _float_bn(bounds, mul: np.ndarray, shift: np.ndarray, add: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(m, c)`` with ``bn = floor(G·m + c)`` exactly in float64 — ``m = mul·2**-shift`` and
    ``c = (C·mul + add·2**shift)·2**-shift`` are dyadic and every sum stays below 2**53 (checked
    per channel with the sums' bounds) — or two empty arrays (the kernels then use int64)."""
    C = bounds.C
    gabs = np.maximum(np.abs(bounds.gmin), np.abs(bounds.gmax))
    scale = np.left_shift(np.int64(1), shift)
    bound = (gabs.astype(np.float64) + np.abs(C)) * np.abs(mul) + np.abs(add).astype(np.float64) * scale + scale
    if (bound >= 2.0**52).any():
        return np.zeros(0), np.zeros(0)
    num = C * mul + add * scale
    return mul.astype(np.float64) / scale, num.astype(np.float64) / scale


class HwcPath:
    """A prepared layer on the compiled path; ``run(x)``: uint8 [H, W, IC] → uint8 [OH, OW, OC]."""

    def __init__(self) -> None:  # use prepare()
        self.products = ""
        self.activation = ""

    @classmethod
    def prepare(cls, conv, bounds, kernels, *, lut_max_entries: int, threads: int = 1) -> "HwcPath":
        self = cls()
        self.kernels = kernels
        self.conv = conv
        ic, h, w = conv.in_shape
        oc, oh, ow = conv.out_shape
        self.in_hw = (h, w)
        self.out_shape_hwc = (oh, ow, oc)
        self.kk = conv.k
        self.pad = int(conv.pad_value)
        k, s, oy0, ox0, kind = _POOLS[conv.pool_type]
        self.act = _act_plan(conv, bounds, min(lut_max_entries, HWC_LUT_MAX_ENTRIES), lut_max_entries)
        self.activation = ("lut", "segments", "segments", "steps")[self.act.mode]
        reduce = {"pick": 0, "max": 1 if bounds.pool_first else 2, "mean": 3}[kind]
        mul, shift, add = conv.bn.mul, conv.bn.shift, conv.bn.add
        self.bn = (np.ascontiguousarray(bounds.C, np.int64), np.ascontiguousarray(mul, np.int64),
                   np.ascontiguousarray(shift, np.int64), np.ascontiguousarray(add, np.int64)) + _float_bn(bounds, mul, shift, add)
        wf = bounds.wf  # int64 [OC, taps] in [ic][ky][kx] order
        taps = self.kk * self.kk
        if conv.depthwise:
            self.products = "dw"
            # int32 sums when they cannot overflow (|G| <= 128·Σ|w'| per channel), else int64
            narrow = 128 * int(np.abs(wf).sum(axis=1).max(initial=0)) < 1 << 31
            self.wt = np.ascontiguousarray(wf.reshape(oc, taps).T, dtype=np.int32 if narrow else np.int64)  # [k*k, C]
            self.pool = (k, s, oy0, ox0, reduce)
            return self
        # the GEMM grid: every conv pixel, or only the kept pixels of a selection pool
        if kind == "pick" and s > 1:
            self.grid = (s, oy0, ox0, oh, ow)
            self.pool = (1, 1, 0, 0, 0)
        else:
            self.grid = (1, 0, 0, h, w)
            self.pool = (k, s, oy0, ox0, reduce)
        w_kn = wf.reshape(oc, ic, taps).transpose(2, 1, 0).reshape(taps * ic, oc)  # rows t*IC + c
        raw = conv.weights.reshape(oc, ic, taps).transpose(2, 1, 0).reshape(taps * ic, oc)
        ax = conv.regs.arg_x >> conv.regs.shr_x
        self.gemm = None
        self.conv3 = None
        int8_ok = int8_enabled() and raw.min(initial=0) >= 0 and raw.max(initial=0) <= 255 and -255 <= ax <= 0
        pooled = self.pool[4] == 1 and conv.pool_type in MAX_POOLS
        small_sums = 128 * int(np.abs(wf).sum(axis=1).max(initial=0)) < _F32_EXACT
        if int8_ok and self.kk == 3 and ic <= CONV_INTEGER_MAX_CHANNELS and (self.pool[4] == 0 or (pooled and small_sums)):
            stride = self.grid[0]
            self.conv3 = Int8Conv3x3.build(conv.weights.reshape(oc, ic, 3, 3).astype(np.uint8), -ax, stride,
                                           conv.pool_type if pooled else 0, threads)
            if self.conv3 is not None:
                self.products = "int8conv"
                self.conv3_pool = (1, 1, 0, 0, 0)
                return self
        if int8_ok:
            self.gemm = Int8Gemm.build(np.ascontiguousarray(raw, dtype=np.uint8), -ax, threads)
        if self.gemm is not None:
            self.products = "int8"
            return self
        absw = np.abs(w_kn)
        bound = int(absw.sum(axis=0).max(initial=0)) * 128
        if bound < _F32_EXACT:
            self.dtype, self.chunks = np.float32, [(0, w_kn.shape[0])]
        else:
            from .conv import _chunks_for_bound

            chunks = _chunks_for_bound(absw.T, 128, _F32_EXACT)
            if chunks is not None and len(chunks) <= 4:
                self.dtype, self.chunks = np.float32, chunks
            elif bound < _F64_EXACT:
                self.dtype, self.chunks = np.float64, [(0, w_kn.shape[0])]
            else:
                raise ValueError("sums exceed float64's exact range")
        self.products = "f32" if self.dtype == np.float32 else "f64"
        self.wmat = np.ascontiguousarray(w_kn, dtype=self.dtype)
        return self

    # ------------------------------------------------------------------------------------------
    def run(self, x: np.ndarray) -> np.ndarray:
        kn = self.kernels
        out = np.empty(self.out_shape_hwc, dtype=np.uint8)
        if self.products == "dw":
            bad = kn.depthwise(x, self.wt, self.kk, self.pad, out, *self.bn, *self.pool, *self.act.args())
        elif self.conv3 is not None:
            s, oy0, ox0, gh, gw = self.grid
            h, w = self.in_hw
            xp = _scratch("hwc_pad", x.shape[2] * (h + 2 - oy0) * (w + 2 - ox0), np.uint8).reshape(1, x.shape[2], h + 2 - oy0, w + 2 - ox0)
            kn.pad_chw(x, self.pad, oy0, ox0, xp[0])
            g = self.conv3(xp)  # [OH, OW, OC] after its max pool, or the grid's sums
            oh, ow = self.out_shape_hwc[:2]
            if g.shape[0] != oh or g.shape[1] != ow:
                g = np.ascontiguousarray(g[:oh, :ow])
            bad = kn.epilogue(g, out, *self.bn, *self.conv3_pool, *self.act.args())
        else:
            g = self._sums(x)
            bad = kn.epilogue(g, out, *self.bn, *self.pool, *self.act.args())
        if bad:
            offset, fld = self.conv.act_where
            raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start", offset=offset, field=fld)
        return out

    def _sums(self, x: np.ndarray) -> np.ndarray:
        """``G`` on the grid, [rows, cols, OC] (int32 from int8 products, else float)."""
        s, oy0, ox0, gh, gw = self.grid
        ic = x.shape[2]
        kcols = self.kk * self.kk * ic
        p = gh * gw
        if self.gemm is not None:
            if self.kk == 1 and s == 1:
                a = x.reshape(p, ic)
            else:
                a = _scratch("hwc_cols", p * kcols, np.uint8).reshape(p, kcols)
                self.kernels.im2col(x, self.kk, self.pad, s, oy0, ox0, gh, gw, a, 0)
            return self.gemm(a).reshape(gh, gw, -1)
        a = _scratch("hwc_cols", p * kcols, self.dtype).reshape(p, kcols)
        self.kernels.im2col(x, self.kk, self.pad, s, oy0, ox0, gh, gw, a, 128)
        if len(self.chunks) == 1:
            g = a @ self.wmat
        else:
            g = np.zeros((p, self.wmat.shape[1]), dtype=np.float64)
            for k0, k1 in self.chunks:
                g += a[:, k0:k1] @ self.wmat[k0:k1]
        return g.reshape(gh, gw, -1)
