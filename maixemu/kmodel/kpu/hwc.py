"""The compiled fast path of one KPU layer, on HWC uint8 maps (the device's bytes, channels last).

Chosen per layer at load (``HwcPath.prepare``), each piece exact:

* products — depthwise layers: one numba kernel that computes, pools and finishes the layer row
  by row (``dw``; 3×3 on float32 sums four rows at a time when the weights prove them exact —
  without a pool from constant-stride buffers, ``_dw_flat_weights`` —, else int16 or int64
  sums, see ``_dw_sums``); 3×3 layers with at most three input channels (the camera image):
  one GEMM row of 16 or 32 bytes per output pixel, its patch padded to a width the int8 GEMM
  runs at full speed (``u8s8-patch`` / ``u8u8-patch``); four channels: each pixel one 32-bit
  word and one GEMM row per pair of output pixels (``u8s8-rgbx`` / ``u8u8-rgbx``); other
  layers: an im2col matrix in uint8 (none for 1×1) and a GEMM — the first product
  ``kpu.products`` proves exact for the layer's weights on this CPU: ``u8s8`` or ``u8u8``
  (onnxruntime ``MatMulInteger``, weights prepacked, see ``kpu.int8``), else ``f32`` (BLAS
  sgemm, K split so that every partial sum stays below 2**24) or ``f64`` (below 2**53) —, row
  tile by row tile (``TILE_BYTES``) under one BLAS thread;
* batch-norm + activation + pool — ``kernels.epilogue``: pools that commute with the activation
  on the sums first, then a float64 batch-norm (exact per layer, else int64) and the activation:
  ``linear`` (one or two ReLU-like segments, arithmetic), a table (``lut``), step buckets
  (``steps``) or, when no table fits or a value may lie below every segment start, the 16
  segments themselves (``segments``);
* selection pools (left/right-top) compute the sums only at the pixels they keep.

HWC because a GEMM over [pixels, taps·channels] writes [pixels, out channels]: a 1×1 layer reads
its input as is, the next layer's im2col copies whole channel vectors, and the numba loops run
over contiguous runs of the map.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, Literal

import numpy as np

from ..errors import KmodelRuntimeError
from .activation import _activate_scalar, activation_lut, segment_table, step_buckets
from . import fast, warmup
from .blas import blas_threads
from .parallel import _pool, scratch_array, work_views
from .int8 import Int8Gemm
from .products import choose, choose_int8, product_order, switched_off

_F32_EXACT = 1 << 24
_F64_EXACT = 1 << 53
#: Largest activation table the compiled path builds (uint8 entries). Beyond it the segments
#: are evaluated directly: a multi-MiB table misses the cache on every lookup and costs load time.
HWC_LUT_MAX_ENTRIES = 1 << 20
#: Largest table taken *before* step buckets for a monotone activation. Measured on yolo_20class
#: V3 (14-segment leaky tables of 340–680 k entries, 6.8 MiB for its 15 layers) on an AVX-512
#: VNNI core, one process, the two forms interleaved: the buckets (5–10 KiB a layer) ran the model
#: 0.85–0.90x the tables' time — a table of several hundred KiB misses L2 as a map's values
#: spread — and its working memory fell by the tables' 6.8 MiB. Tables up to this size stay
#: (a few L2-resident KiB, one lookup a value); larger ones serve only activations the buckets
#: cannot (not monotone).
HWC_SMALL_LUT_ENTRIES = 1 << 16

#: Layers of at least this many MACs hand their row tiles to the thread pool when
#: ``MAIXEMU_THREADS`` > 1 (below it a hand-off costs more than the work; as ``KpuConv``)
PARALLEL_MIN_MACS = 4_000_000

#: 3×3 layers with at most this many input channels (the camera image) take one GEMM row per
#: output pixel of ``PATCH_WIDTHS`` bytes: the 9·C patch bytes and padding (``kernels.im2col_patch``)
PATCH_MAX_CHANNELS = 3
#: The row widths (K) of a patch GEMM: the first that holds 9·C. onnxruntime's int8 GEMM runs
#: these at full speed and others far below (measured on AVX2, [76800, K] × [K, 16] u8u8: K=27
#: 1067 µs, 28 1017, 32 770, 36 1236; 16 483)
PATCH_WIDTHS = (16, 32)
#: 3×3 layers with at most this many input channels and more than ``PATCH_MAX_CHANNELS`` take
#: their GEMM rows from 32-bit pixel words (``kernels.pack_rgbx``): nine word copies per output
#: pixel instead of 36 byte copies, two output pixels per row (K = 48)
RGBX_MAX_CHANNELS = 4

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


#: Values per run of the flat per-value loops (``kernels.bn_act``): the per-channel parameters are
#: tiled to the multiple of the channel count nearest above it, a few KiB that stay in L1.
TILE_VALUES = 512
#: Most segments the linear activation mode evaluates arithmetically (``kernels.bn_act``).
LINEAR_MAX_SEGMENTS = 2


@dataclass
class _Act:
    """Activation arguments of the kernels (``kernels.bn_act``): mode 0 a table ``lut`` over
    ``lo..lo+span``; 1 the segments (``bp``, ``sx``, ``sm``, ``ss``, ``sb``), unclamped, counting
    values below them; 2 the segments that meet ``[lo, lo+span]``, clamped; 3 step buckets
    (``bp`` = one word per bucket, ``step << 16 | increment << 8 | first value``, ``ss[0]`` =
    log2 of the width); 4 linear: one or two segments evaluated in float64 (``lin``,
    see ``_linear``)."""

    mode: int
    lo: int
    span: int
    lut: np.ndarray
    bp: np.ndarray
    sx: np.ndarray
    sm: np.ndarray
    ss: np.ndarray
    sb: np.ndarray
    lin: np.ndarray
    #: added to the batch-norm's ``add`` before it is folded into float64 (the plain linear form)
    bn_add: int = 0

    def args(self) -> tuple:
        return (self.mode, self.lo, self.span, self.lut, self.bp, self.sx, self.sm, self.ss, self.sb, self.lin)


_NO_ARRAY = np.zeros(1, np.int64)
_NO_FLOATS = np.zeros(0, np.float64)
_NO_INTS = np.zeros(0, np.int64)


def _rint_shift(t: int, s: int) -> int:
    """``rint(t / 2**s)`` (half to even) of an integer, exactly: what the float64 kernel computes."""
    q, r = divmod(t, 1 << s)
    twice = 2 * r
    if twice > 1 << s or (twice == 1 << s and q & 1):
        return q + 1
    return q


def _linear(conv, bounds, t, fold: bool) -> tuple[np.ndarray, int] | None:
    """``(lin, bn_add)`` of mode 4 when the clamped segments ``t`` allow it (``kernels.bn_act``).

    ``lin[0]`` 0, the plain form: one segment, no clamps, ``x_start`` and ``bias`` folded into the
    batch-norm's ``add`` (``bn_add`` is added to it: ``−x + bias·2**shift / y_mul``, an integer;
    only an even bias, as half-to-even rounding is invariant under even shifts alone),
    so a value costs a multiply-add, two roundings and the uint8 clamp. It applies when the
    segment's own formula gives the device's bytes on the layer's whole batch-norm range
    ``[bmin, bmax]`` — checked at both ends (both sides are non-decreasing, and on ``[lo, hi]``
    it *is* the activation). ``lin[0]`` 1, the general form: one or two segments after a clamp
    to ``[lo, hi]``, ``lin[1]`` the second interval's start. Every product of the formula is an
    integer below 2**52 times a power of two (checked), so float64 computes it exactly."""
    lo, hi = bounds.lo, bounds.hi
    n = t.bp.size
    if not 1 <= n <= LINEAR_MAX_SEGMENTS or (t.sm < 0).any():
        return None
    reach = np.maximum(np.abs(bounds.bmin - t.sx), np.abs(bounds.bmax - t.sx)).astype(np.float64) * t.sm.astype(np.float64)
    if (reach >= 2.0**52).any() or max(abs(bounds.bmin), abs(bounds.bmax)) >= 1 << 52:
        return None
    sx, sm, ss, sb = (int(v) for v in (t.sx[0], t.sm[0], t.ss[0], t.sb[0]))
    lin = np.zeros(8, np.float64)
    # (an odd bias cannot move under the rounding: rint(v + 1) != rint(v) + 1 at ties)
    if fold and n == 1 and sm > 0 and (sb << ss) % sm == 0 and sb % 2 == 0:
        def value(y: int) -> int:
            return min(max(_rint_shift((y - sx) * sm, ss) + sb, 0), 255)

        act = conv.act
        if value(bounds.bmin) == _activate_scalar(bounds.bmin, act) and value(bounds.bmax) == _activate_scalar(bounds.bmax, act):
            lin[3] = sm * 2.0**-ss
            return lin, -sx + (sb << ss) // sm
    lin[0] = 1
    lin[1] = float(t.bp[1]) if n > 1 else np.inf
    for i in range(n):
        lin[2 + 3 * i] = float(t.sx[i])
        lin[3 + 3 * i] = float(t.sm[i]) * 2.0 ** -int(t.ss[i])
        lin[4 + 3 * i] = float(t.sb[i])
    return lin, 0


def _act_plan(conv, bounds, lut_limit: int, lut_budget: int, float_bn: bool, fold: bool = True) -> _Act:
    """Linear segments when they apply, else a small table, else step buckets (monotone
    activations), else a table up to ``lut_limit``, else the segments; tables and buckets count against the model's
    budget ``lut_budget``. Without an exact float64 batch-norm only the segments are used.
    A table larger than ``HWC_SMALL_LUT_ENTRIES`` comes after the buckets (see there)."""
    lo, hi = bounds.lo, bounds.hi
    empty = np.zeros(1, np.uint8)
    if bounds.valid:
        # every bn lies in [bmin, bmax]; clamped to [lo, hi] (the activation is constant beyond
        # in the monotone case, lo/hi are bmin/bmax otherwise) only a few segments remain
        t = segment_table(conv.act, lo, hi)
        linear = _linear(conv, bounds, t, fold) if float_bn else None
        if linear is not None:
            lin, bn_add = linear
            return _Act(4, lo, hi - lo, empty, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, lin, bn_add)
        table = float_bn and hi - lo + 1 <= lut_limit
        if table and hi - lo + 1 <= HWC_SMALL_LUT_ENTRIES:
            return _table_act(conv, lo, hi)
        if float_bn and bounds.monotone:
            buckets = step_buckets(conv.act, lo, hi)
            if buckets is not None and buckets[1].size <= lut_budget:
                j, first, inc, at = buckets
                # one word per bucket, so a value costs one lookup: the step's index (none: past
                # the range), its increment and the bucket's first value
                words = (np.minimum(at, hi - lo + 1) << 16) | (inc << 8) | first.astype(np.int64)
                return _Act(3, lo, hi - lo, empty, words, _NO_ARRAY, _NO_ARRAY, np.array([j], np.int64), _NO_ARRAY, _NO_FLOATS)
        if table:
            return _table_act(conv, lo, hi)
        return _Act(2, lo, hi - lo, empty, t.bp, t.sx, t.sm, t.ss, t.sb, _NO_FLOATS)
    t = segment_table(conv.act)
    return _Act(1, 0, 0, empty, t.bp, t.sx, t.sm, t.ss, t.sb, _NO_FLOATS)


def _table_act(conv, lo: int, hi: int) -> _Act:
    """Mode 0: the activation's table over ``lo..hi``."""
    return _Act(0, lo, hi - lo, activation_lut(conv.act, lo, hi), _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY, _NO_ARRAY,
                _NO_FLOATS)


def _tile(values: np.ndarray, channels: int, dtype) -> np.ndarray:
    """Per-channel ``values`` repeated to the tile length of ``TILE_VALUES`` (a multiple of C)."""
    reps = max(1, TILE_VALUES // max(channels, 1))
    return np.ascontiguousarray(np.tile(np.asarray(values, dtype=dtype), reps))


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


def _patch_weights(w: np.ndarray, zp: int, kp: int) -> np.ndarray:
    """[kp, OC] uint8 weights of the patch GEMM (``kernels.im2col_patch``): row ``(ky·3 + kx)·IC + c``
    holds ``w[:, c, ky, kx]``, the rows past 9·IC the zero point ``zp`` (they add nothing)."""
    oc, ic = w.shape[:2]
    out = np.full((kp, oc), zp, np.uint8)
    out[: 9 * ic] = w.transpose(2, 3, 1, 0).reshape(9 * ic, oc)
    return out


def _rgbx_weights(w: np.ndarray, zp: int, group: int) -> np.ndarray:
    """[K, N] uint8 weights of the ``int8rgbx`` GEMM: K = (group+2) columns × 3 rows × 4 bytes of
    ``kernels.im2col_rgbx`` words, N = group output pixels × OC. Taps an output pixel does not
    use, and the unused bytes of a word, hold the zero point ``zp``: they add nothing."""
    oc, ic = w.shape[:2]
    span = group + 2
    out = np.full((3 * span * 4, group * oc), zp, np.uint8)
    for q in range(group):
        for ky in range(3):
            for kx in range(3):
                for c in range(ic):
                    out[((q + kx) * 3 + ky) * 4 + c, q * oc : (q + 1) * oc] = w[:, c, ky, kx]
    return out


#: a depthwise layer's sums (``_dw_sums``) -> the dtype of its tiled weights
_DW_DTYPES = {"f32": np.float32, "int16": np.int16, "int64": np.int64}
#: Widest depthwise layer on float32 sums: past it a pass over one weight tile (C values of six
#: float32 input rows, four sum rows and nine weight rows) no longer fits L1 and the int16
#: kernel is faster (measured: 7×10×1024 0.086 against 0.070 ms, 7×7×768 0.024 against 0.021;
#: 512 channels even, 384 and fewer 5–40 % faster on float32)
DW_F32_MAX_CHANNELS = 512


def _dw_sums(wf: np.ndarray, kk: int) -> str:
    """How a depthwise layer's sums are made, the first that is exact for its weights ``wf``
    ([C, taps], ``w + arg_x >> shr_x``): ``f32`` (3×3, ``kernels.depthwise3_f32``) when every
    channel's ``128·Σ|w|`` — the bound of each product and partial sum, as ``|x − 128| <= 128``
    — stays below 2**24, so float32 lanes hold them exactly (and ``MAIXEMU_KPU_PRODUCTS``
    allows f32); else ``int16`` products and int32 sums when every ``|w| <= 255`` (every
    8-bit model: ``|x − 128|·|w| <= 32640``); else ``int64`` (``kernels.depthwise``). Layers of
    more than ``DW_F32_MAX_CHANNELS`` channels keep the integer kernels (speed, not exactness)."""
    bound = 128 * int(np.abs(wf).sum(axis=1).max(initial=0))
    if kk == 3 and bound < _F32_EXACT and wf.shape[0] <= DW_F32_MAX_CHANNELS and "f32" in product_order():
        return "f32"
    return "int16" if int(np.abs(wf).max(initial=0)) <= 255 else "int64"


#: ``kernels.DW_ROW_STRIDE`` / ``DW_SUM_STRIDE`` / ``DW_TAP_STRIDE`` (the kernels module loads in the
#: background: these must be known at prepare time; ``tests/kmodel`` holds them equal)
DW_ROW_STRIDE, DW_SUM_STRIDE, DW_TAP_STRIDE = 8192 + 80, 8192 + 48, 512


def _dw_flat_weights(wt: np.ndarray, sums: str, pool: tuple, in_hwc: tuple, out_hw: tuple) -> np.ndarray:
    """The flat [9·DW_TAP_STRIDE] float32 taps of ``kernels.depthwise3_f32_flat`` (tap ``j`` at
    ``j·DW_TAP_STRIDE``) when the layer can take it — float32 sums, no pool, its padded rows
    within the constant strides — else an empty array (``depthwise3_f32``). Speed only: both
    kernels compute the same exact float32 sums."""
    h, w, c = in_hwc
    k, s, oy0, ox0, reduce = pool
    flat = reduce == 0 and s == 1 and oy0 == 0 and ox0 == 0 and tuple(out_hw) == (h, w)
    if sums != "f32" or not flat or wt.shape[1] > DW_TAP_STRIDE or (w + 2) * c > DW_ROW_STRIDE or w * c > DW_SUM_STRIDE:
        return np.zeros(0, np.float32)
    wf = np.zeros((9, DW_TAP_STRIDE), np.float32)
    wf[:, : wt.shape[1]] = wt
    return wf.reshape(-1)


class HwcPath:
    """A prepared layer on the compiled path; ``run(x)``: uint8 [H, W, IC] → uint8 [OH, OW, OC]."""

    #: Target size of one row tile's GEMM source and sums (bytes); tests lower it to exercise tiling.
    TILE_BYTES = 1 << 20

    def __init__(self) -> None:  # use prepare()
        #: ``u8s8``, ``u8u8``, ``u8s8-patch``, ``u8u8-patch``, ``u8s8-rgbx``, ``u8u8-rgbx``, ``f32``,
        #: ``f64`` (``kpu.products``) or ``dw``
        self.products = ""
        #: a depthwise layer's sums: ``f32``, ``int16`` or ``int64`` (``_dw_sums``)
        self.dw_sums = ""
        self.activation = ""
        #: why faster products were refused (``kpu.products.ProductPlan.refused``)
        self.refused: list[str] = []
        self._kn: ModuleType | None = None
        #: ``run`` with its choices made (``_direct_run``), False for a layer that has none
        self._direct: Callable[[np.ndarray], np.ndarray] | None | Literal[False] = None
        self.conv: Any = None
        self.gemm: Int8Gemm | None = None
        self.group = 1
        self.dtype: type = np.float64
        self.chunks: list[tuple[int, int]] = []
        self.wmat = np.zeros((0, 0))
        self.wt: np.ndarray = np.zeros((0, 0), np.int16)
        #: the flat taps of ``kernels.depthwise3_f32_flat`` (``_dw_flat_weights``), or empty
        self.wf = np.zeros(0, np.float32)
        self.acc = np.zeros(0, np.int32)
        self.in_hw = (0, 0)
        self.out_shape_hwc = (0, 0, 0)
        self.kk = 1
        self.pad = 0
        self.act: _Act
        self.bn: tuple[np.ndarray, ...] = ()
        #: (s, oy0, ox0, rows, cols) of the GEMM grid; the epilogue's pool (k, s, oy0, ox0, reduce)
        self.grid = (1, 0, 0, 0, 0)
        self.pool = (1, 1, 0, 0, 0)
        #: (g0, g1, o0, o1) row tiles (``_grid_tiles``)
        self.tiles: list[tuple[int, int, int, int]] = []
        #: ``MAIXEMU_THREADS`` when the layer was prepared: big layers' tiles go to the thread pool
        self.threads = 1
        #: the warm-up that brings this path's kernels into memory (``kpu.warmup``)
        self.warm: warmup.WarmUp | None = None

    @classmethod
    def prepare(cls, conv, bounds, *, lut_max_entries: int, threads: int = 1) -> "HwcPath":
        """Choose and prepare every piece; numba is not needed yet (``kpu.warmup`` loads the
        kernels in the background and ``run`` binds them)."""
        self = cls()
        self.conv = conv
        self.threads = max(1, threads)
        ic, h, w = conv.in_shape
        oc, oh, ow = conv.out_shape
        self.in_hw = (h, w)
        self.out_shape_hwc = (oh, ow, oc)
        self.kk = conv.k
        self.pad = int(conv.pad_value)
        k, s, oy0, ox0, kind = _POOLS[conv.pool_type]
        reduce = {"pick": 0, "max": 1 if bounds.pool_first else 2, "mean": 3}[kind]
        mul, shift, add = conv.bn.mul, conv.bn.shift, conv.bn.add
        fm, fc = _float_bn(bounds, mul, shift, add)
        float_bn = fm.size > 0
        self.act = _act_plan(conv, bounds, min(lut_max_entries, HWC_LUT_MAX_ENTRIES), lut_max_entries, float_bn)
        if self.act.bn_add:
            fm, fc = _float_bn(bounds, mul, shift, add + self.act.bn_add)
            if not fm.size:  # the folded constant leaves float64's exact range: the general form
                fm, fc = _float_bn(bounds, mul, shift, add)
                self.act = _act_plan(conv, bounds, min(lut_max_entries, HWC_LUT_MAX_ENTRIES), lut_max_entries, float_bn, fold=False)
        self.activation = ("lut", "segments", "segments", "steps", "linear")[self.act.mode]
        if float_bn:
            self.bn = (_tile(fm, oc, np.float64), _tile(fc, oc, np.float64), _NO_INTS, _NO_INTS, _NO_INTS, _NO_INTS)
        else:
            self.bn = (_NO_FLOATS, _NO_FLOATS) + tuple(_tile(v, oc, np.int64) for v in (bounds.C, mul, shift, add))
        wf = bounds.wf  # [OC, taps] in [ic][ky][kx] order (int16 for 8-bit weights: ``conv._shifted_weights``)
        taps = self.kk * self.kk
        if conv.depthwise:
            self.products = "dw"
            self.dw_sums = _dw_sums(wf, self.kk)
            wt = np.tile(wf.reshape(oc, taps).T, (1, max(1, TILE_VALUES // oc)))  # [k*k, T]
            self.wt = np.ascontiguousarray(wt, dtype=_DW_DTYPES[self.dw_sums])
            self.acc = np.zeros(0, np.int64 if self.dw_sums == "int64" else np.int32)
            self.pool = (k, s, oy0, ox0, reduce)
            self.wf = _dw_flat_weights(self.wt, self.dw_sums, self.pool, (h, w, ic), (oh, ow))
            if self.wf.size:  # the flat taps hold the tiles: ``wt`` becomes a view of them (18 KiB less a layer)
                self.wt = self.wf.reshape(-1, DW_TAP_STRIDE)[:, : self.wt.shape[1]]
            return self._schedule_warm_up()
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
        eight_bit = raw.min(initial=0) >= 0 and raw.max(initial=0) <= 255 and -255 <= ax <= 0
        w_u8 = np.ascontiguousarray(raw, dtype=np.uint8) if eight_bit else None
        order = product_order()
        if w_u8 is not None and self.kk == 3 and ic <= PATCH_MAX_CHANNELS:
            # the camera image: one GEMM row of a full-speed width per output pixel
            kp = next(k for k in PATCH_WIDTHS if k >= 9 * ic)
            gemm, refused = choose_int8(_patch_weights(conv.weights.reshape(oc, ic, 3, 3), -ax, kp), b_zero=-ax, a_zero=128,
                                        order=order)
            self.refused += [f"patch {why}" for why in refused]
            if gemm is not None:
                self.gemm = gemm
                self.products = f"{gemm.kind}-patch"
                self.refused = switched_off(gemm.kind, order) + self.refused
                return self._finish_prepare()
        elif w_u8 is not None and self.kk == 3 and ic <= RGBX_MAX_CHANNELS:
            # the camera image: every pixel one 32-bit word, a GEMM row per pair of output pixels
            group = 2 if self.grid[0] == 1 and self.grid[4] % 2 == 0 else 1
            rgbx = _rgbx_weights(conv.weights.reshape(oc, ic, 3, 3), -ax, group)
            gemm, refused = choose_int8(rgbx, b_zero=-ax, a_zero=128, order=order)
            self.refused += [f"rgbx {why}" for why in refused]
            if gemm is not None:
                self.gemm, self.group = gemm, group
                self.products = f"{gemm.kind}-rgbx"
                self.refused = switched_off(gemm.kind, order) + self.refused
                return self._finish_prepare()
        plan = choose(w_u8, w_kn, b_zero=-ax, a_zero=128, xmax=128, order=order)
        self.refused += plan.refused
        self.products = plan.kind
        self.gemm = plan.gemm
        if plan.gemm is None:
            self.dtype, self.chunks = plan.dtype or np.float64, plan.chunks
            self.wmat = np.ascontiguousarray(w_kn, dtype=self.dtype)
        return self._finish_prepare()

    def _finish_prepare(self) -> "HwcPath":
        """The row tiles of the GEMM grid (``tiles``), then the kernels' warm-up."""
        self.tiles = self._grid_tiles(self.threads if self.conv.macs >= PARALLEL_MIN_MACS else 1)
        return self._schedule_warm_up()

    def _grid_tiles(self, parts: int = 1) -> list[tuple[int, int, int, int]]:
        """``(g0, g1, o0, o1)``: grid rows ``g0:g1`` give output rows ``o0:o1``, each tile's GEMM
        source and sums at most about ``TILE_BYTES`` (the int8 domain: a uint8 source, int32 sums),
        so a layer's scratch is a few hundred KiB whatever its map and the sums are finished
        while they are in cache. Tiles of windowed pools hold every row their windows read
        (pools 8 and 9 overlap by one row; the last tile clamps at the map's edge as the
        whole map does). With ``parts`` > 1 (``MAIXEMU_THREADS``) there are at least that many,
        for the thread pool."""
        s_grid, _, _, gh, gw = self.grid
        oh = self.out_shape_hwc[0]
        k, s, oy0, _, _ = self.pool
        n = self.out_shape_hwc[2]
        group = getattr(self, "group", 1)
        ic = self.conv.in_shape[0]
        if self.products.endswith("-rgbx"):
            a_row = 3 * (group + 2) * 4 // group
        elif self.products.endswith("-patch"):
            a_row = self.gemm.k if self.gemm is not None else 0
        else:
            a_row = self.kk * self.kk * ic * (1 if self.gemm is not None else np.dtype(self.dtype).itemsize)
        g_item = 4 if self.gemm is not None else np.dtype(self.dtype).itemsize
        per_grid_row = gw * (a_row + n * g_item)
        grid_rows = max(1, self.TILE_BYTES // max(per_grid_row, 1))
        step = max(1, grid_rows // max(s, 1))  # output rows per tile
        if parts > 1:
            step = min(step, max(1, -(-oh // parts)))
        # tiles of one size (the same count, none larger): a short last tile paid its calls' fixed
        # costs for a few rows, and its other shape rebound onnxruntime's output twice a run
        # (face's camera layer: 7 tiles of 17 output rows and one of 1 -> 8 of 15, 3-5 % faster)
        count = -(-oh // step)
        step = -(-oh // count)
        tiles = []
        for o0 in range(0, oh, step):
            o1 = min(oh, o0 + step)
            g0 = o0 * s + oy0
            g1 = min(gh, (o1 - 1) * s + oy0 + k)
            tiles.append((g0, g1, o0, o1))
        return tiles

    def _warm_up_key(self) -> tuple:
        """What decides the kernels and argument types ``run`` uses (see ``fast.schedule_warm_up``)."""
        g = "int32" if self.gemm is not None else getattr(self, "dtype", None)
        wt = self.wt.dtype.str if self.products == "dw" else None
        return (self.products, self.act.mode, bool(self.bn[0].size), g, wt, self.pool[4], self.kk, bool(self.wf.size))

    def _schedule_warm_up(self) -> "HwcPath":
        """Queue a run on zeros (``kpu.warmup``), which brings every kernel this layer calls into
        memory; ``self.warm`` says when it has. Shared by layers with the same kernels and types in
        the ``wait`` mode; one per layer in the background mode, where the layer switches to this
        path only once its own run did (nothing a key might miss is left for a frame to compile)."""
        h, w = self.in_hw
        ic = self.conv.in_shape[0]
        key = self._warm_up_key() if warmup.mode() == "wait" else None

        def warm() -> None:
            try:
                self.run(np.zeros((h, w, ic), np.uint8))
            finally:
                if self.gemm is not None:  # (the warm-up thread's output binding: see ``kpu.warmup``)
                    self.gemm.forget_thread()

        self.warm = fast.schedule_warm_up(key, warm)
        return self

    @property
    def kernels(self):
        """The compiled kernels module (waits for the background import the first time)."""
        if self._kn is None:
            kn = fast.kernels()
            if kn is None:
                raise fast.FastEngineUnavailable(f"the compiled KPU kernels cannot be loaded: {fast.unavailable_reason()}")
            self._kn = kn
        return self._kn

    # ------------------------------------------------------------------------------------------
    def run(self, x: np.ndarray) -> np.ndarray:
        direct = self._direct
        if direct:
            return direct(x)
        kn = self._kn if self._kn is not None else self.kernels
        if direct is None:
            chosen = self._direct_run(kn)
            self._direct = chosen if chosen is not None else False
            if chosen is not None:
                return chosen(x)
        out = np.empty(self.out_shape_hwc, dtype=np.uint8)
        if self.products == "dw":  # (a flat one, without pool, is a direct run: ``_direct_run``)
            if self.dw_sums == "f32":
                h, w, c = x.shape
                ring, rows = work_views(((kn.DW_RING * (w + 2) * c,), np.float32), ((4 * w * c,), np.float32))
                bad = kn.depthwise3_f32(x, self.wt, self.pad, out, ring, rows, *self._finish_args)
            else:
                bad = kn.depthwise(x, self.wt, self.acc, self.kk, self.pad, out, *self._finish_args)
        elif len(self.tiles) == 1:  # (most layers: no per-tile bookkeeping)
            g0, g1 = self.tiles[0][:2]
            bad = kn.epilogue(self._sums(x, self._source(x), g0, g1), out, *self._epilogue_args)
        else:
            src = self._source(x)
            args = self._epilogue_args

            def tile(bounds: tuple[int, int, int, int]) -> int:
                g0, g1, o0, o1 = bounds
                return kn.epilogue(self._sums(x, src, g0, g1), out[o0:o1], *args)

            if self.threads > 1:
                # (the kernels release the GIL, onnxruntime too; scratch buffers are per thread)
                bad = sum(_pool().map(tile, self.tiles))
            else:
                bad = sum(tile(t) for t in self.tiles)
        if bad:
            self._below_every_segment()
        return out

    def _below_every_segment(self) -> None:
        offset, fld = self.conv.act_where
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start", offset=offset, field=fld)

    def _direct_run(self, kn: ModuleType) -> "Callable[[np.ndarray], np.ndarray] | None":
        """``run`` of the two commonest layers with every choice made once: a depthwise layer
        without pool on the constant-stride kernel, and a 1×1 stride-1 product in one tile. The
        same calls in the same order as ``run``'s general form; what they skip is its per-call
        branching and attribute lookups (2-4 µs a layer on a slow core, a few per cent of a small
        detector's run, where most layers are that small). None for every other layer."""
        shape = self.out_shape_hwc
        fail = self._below_every_segment
        if self.products == "dw" and self.wf.size:
            depthwise, wf, t, pad = kn.depthwise3_f32_flat, self.wf, self.wt.shape[1], self.pad
            params = (*self.bn, *self.act.args())
            # (sized by the kernel's own strides, which it indexes with)
            buffers = (((6 * kn.DW_ROW_STRIDE,), np.float32), ((4 * kn.DW_SUM_STRIDE,), np.float32))

            def run_dw(x: np.ndarray) -> np.ndarray:
                out = np.empty(shape, np.uint8)
                if depthwise(x, wf, t, pad, out, *work_views(*buffers), *params):
                    fail()
                return out

            return run_dw
        gemm = self.gemm
        if (gemm is None or self.products not in ("u8s8", "u8u8") or self.kk != 1 or self.grid[0] != 1
                or len(self.tiles) != 1):
            return None
        g0, g1 = self.tiles[0][:2]
        gw, ic, n = self.grid[4], gemm.k, shape[2]
        first, last = g0 * gw, g1 * gw
        sums_spec, grid_shape = ((last - first, n), np.int32), (g1 - g0, gw, n)
        epilogue, args = kn.epilogue, self._epilogue_args

        def run_1x1(x: np.ndarray) -> np.ndarray:
            out = np.empty(shape, np.uint8)
            g = gemm(x.reshape(-1, ic)[first:last], work_views(sums_spec)[0])
            if epilogue(g.reshape(grid_shape), out, *args):
                fail()
            return out

        return run_1x1

    @property
    def _finish_args(self) -> tuple:
        """The pool, batch-norm and activation arguments of ``depthwise`` (made once)."""
        args = self.__dict__.get("_finish_args_")
        if args is None:
            args = self.__dict__["_finish_args_"] = (*self.pool, *self.bn, *self.act.args())
        return args

    @property
    def _epilogue_args(self) -> tuple:
        """``epilogue``'s arguments after its two arrays, for a tile (oy0 0: tiles start at a window)."""
        args = self.__dict__.get("_epilogue_args_")
        if args is None:
            k, s, _, ox0, reduce = self.pool
            args = self.__dict__["_epilogue_args_"] = (k, s, 0, ox0, reduce, *self.bn, *self.act.args())
        return args

    def _source(self, x: np.ndarray):
        """What every tile's GEMM source comes from: the padded byte rows (patch), the packed
        pixel words (rgbx), else the map."""
        h, w = self.in_hw
        if self.products.endswith("-patch"):
            ic = x.shape[2]
            xp = scratch_array("hwc_patch", (h + 2, (w + 2) * ic + 16), np.uint8)
            self.kernels.pad_rows(x, self.pad, xp)
            return xp
        if not self.products.endswith("-rgbx"):
            return x
        xp = scratch_array("hwc_rgbx", (h + 2, w + 2), np.uint32)
        self.kernels.pack_rgbx(x, self.pad, 1, xp)
        return xp

    def _sums(self, x: np.ndarray, src, g0: int, g1: int) -> np.ndarray:
        """``G`` on grid rows ``g0:g1``, [rows, cols, OC] (int32 from int8 products, else float),
        in a per-thread scratch buffer."""
        kn = self.kernels
        s, oy0, ox0, _, gw = self.grid
        ic = x.shape[2]
        rows = g1 - g0
        p = rows * gw
        n = self.out_shape_hwc[2]
        kcols = self.kk * self.kk * ic
        if self.gemm is not None:
            if self.products.endswith("-patch"):
                kp = self.gemm.k
                # (16 bytes more for the last row's copy)
                flat, sums = work_views(((p * kp + 16,), np.uint8), ((p, n), np.int32))
                kn.im2col_patch(src, ic, s, g0 * s + oy0, ox0, rows, gw, flat)
                g = self.gemm(flat[: p * kp].reshape(p, kp), sums)
            elif self.products.endswith("-rgbx"):
                group = self.group
                a32, sums = work_views(((p // group, 3 * (group + 2)), np.uint32), ((p // group, group * n), np.int32))
                kn.im2col_rgbx(src, group, s, g0 * s + oy0, ox0, rows, gw, a32)
                g = self.gemm(a32.view(np.uint8), sums)
            elif self.kk == 1 and s == 1:
                g = self.gemm(x.reshape(-1, ic)[g0 * gw : g1 * gw], work_views(((p, n), np.int32))[0])
            else:
                a, sums = work_views(((p, kcols), np.uint8), ((p, n), np.int32))
                kn.im2col(x, self.kk, self.pad, s, g0 * s + oy0, ox0, rows, gw, a, 0)
                g = self.gemm(a, sums)
            return g.reshape(rows, gw, n)
        a, sums = work_views(((p, kcols), self.dtype), ((p, n), self.dtype))
        kn.im2col(x, self.kk, self.pad, s, g0 * s + oy0, ox0, rows, gw, a, 128)
        with blas_threads(1):  # (one BLAS thread per work item)
            if len(self.chunks) == 1:
                g = np.matmul(a, self.wmat, out=sums)
            else:
                g = np.zeros((p, n), dtype=np.float64)
                for k0, k1 in self.chunks:
                    g += a[:, k0:k1] @ self.wmat[k0:k1]
        return g.reshape(rows, gw, n)
