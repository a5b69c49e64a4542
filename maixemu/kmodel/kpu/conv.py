"""One prepared KPU convolution layer (``KpuConv``): load-time preparation of weights, batch-norm
and activation into an exact fast plan, and the conv → batch-norm → activation → pool run."""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import KmodelFormatError, KmodelRuntimeError
from .activation import (
    _LUT_PREFETCH_MAX,
    _LUT_PREFETCH_MIN,
    _LUT_PREFETCH_PER,
    BUCKET_MIN_ENTRIES,
    ActivationTable,
    BatchNorm,
    _activate_scalar,
    _centered_lut,
    activate,
    centered_step_buckets,
    decode_activation,
    SegmentTable,
    activate_segments,
    decode_batchnorm,
    segment_table,
    unit_step_buckets,
)
from .blas import blas_threads
from . import warmup
from .fast import compiled_available
from .hwc import HwcPath
from .small import SmallConv
from . import parallel as _parallel
from .parallel import _pool, plain_scratch
from .products import ProductsInexact, chunks_for_bound
from .pool import _MAX_POOLS, _POOL_COMMUTES_MONOTONE, _SELECTION_POOLS, POOL_GEOMETRY, POOL_NAMES, pool
from .ram import from_centered, from_native, row_addr, to_centered, to_native, warm_transposes
from .registers import KpuRegisters

#: Largest activation lookup table built for the fast path (entries).
LUT_MAX_ENTRIES = 1 << 22
_F32_EXACT = 1 << 24
_F64_EXACT = 1 << 53


@dataclass
class _FastPlan:
    m: np.ndarray  # float64 [OC,1]: mul * 2**-shift
    c: np.ndarray  # float64 [OC,1]: (C*mul)*2**-shift + add - L
    span: float  # U - L
    lut: np.ndarray | None  # int8 centered outputs (out - 128), index = bn - L; None: segments
    pool_first: bool
    #: an int64 view of most of a big table: reading it sequentially (a fast streaming max)
    #: pulls the table into cache before the random-access take (measured: 2x faster take)
    lut_words: np.ndarray | None = None
    #: two-level form of a big table (``unit_step_buckets``, ``centered_step_buckets``): (2**-j,
    #: first value of each bucket (int8), the step inside each bucket (float64, +inf if none),
    #: the step's increment (int8; None: every step is one level))
    buckets: tuple[float, np.ndarray, np.ndarray, np.ndarray | None] | None = None
    #: no table (too big): ``segment_table`` of the activation, applied to bn itself
    segments: "SegmentTable | None" = None
    #: (activation, L, U) of a table ``lookup_table`` makes when a run first needs it (a layer
    #: whose compiled path takes over first never does); entries: the table's size, made or not
    lazy: "tuple[ActivationTable, int, int] | None" = None
    entries: int = 0

    def lookup_table(self) -> np.ndarray:
        """``lut``, made from ``lazy`` the first time (the same shared array whichever thread
        asks: ``_centered_lut``)."""
        lut = self.lut
        if lut is None:
            assert self.lazy is not None  # (a plan has segments, buckets or a table)
            lut = _centered_lut(*self.lazy)
            self.lut_words = lut[: lut.size // 8 * 8].view(np.int64) if _LUT_PREFETCH_MIN <= lut.size <= _LUT_PREFETCH_MAX else None
            self.lut = lut
        return lut


@dataclass
class _Bounds:
    """See ``KpuConv._bounds``."""

    #: the layer's weights [OC, taps] and ``ax``: ``wf`` is ``weights + ax``
    weights: np.ndarray
    ax: int
    #: Σ|w'| per output channel (int64)
    abs_sum: np.ndarray
    C: np.ndarray
    gmin: np.ndarray
    gmax: np.ndarray
    bmin: int
    bmax: int
    #: every possible bn lies above the first segment start (else a run may raise, as the device's
    #: reference does)
    valid: bool
    monotone: bool
    lo: int
    hi: int
    pool_first: bool

    @property
    def wf(self) -> np.ndarray:
        """``w + ax`` [OC, taps] (int16 / int32 / int64: ``_shifted_weights``), made when a path
        needs the whole matrix (the compiled path's products; the numpy plan only to split its
        sums), once."""
        wf = self.__dict__.get("_wf")
        if wf is None:
            wf = self.__dict__["_wf"] = _shifted_weights(self.weights, self.ax)
        return wf


class KpuConv:
    """One prepared KPU convolution layer. See the module docstring for the contract."""

    #: Target size of one row tile's intermediates (bytes); tests lower it to exercise tiling.
    TILE_BYTES = 1 << 22
    #: (file offset, field name) of this layer's activation table, set by the loader, so a run
    #: error from a corrupt table ("below every segment start") names where the table is.
    act_where: tuple[int | None, str] = (None, "KPU activation table")

    # set by prepare() from the registers and tables (declared here: prepare fills a cls())
    regs: KpuRegisters
    k: int
    depthwise: bool
    in_shape: tuple[int, int, int]
    out_shape: tuple[int, int, int]
    conv_shape: tuple[int, int, int]
    pool_type: int
    pad_value: int
    macs: int
    src_addr: int
    dst_addr: int
    #: [oc][ic][ky][kx] flattened per oc, in the file's integer type
    weights: np.ndarray
    bn: BatchNorm
    act: ActivationTable
    n_mult: int
    taps: int
    sum_w: np.ndarray
    const_w: np.ndarray
    # set by _prepare_fast (the numpy plan)
    _gemm_dtype: type[np.floating]

    def __init__(self) -> None:  # use prepare()
        self.notes: list[str] = []
        #: called after the compiled path takes over (``kpu.warmup``): e.g. the layer table's path
        self.on_switch: list[Callable[[], None]] = []
        #: the compiled HWC path (``kpu.hwc``) once it is in place (when the fast engine is available)
        self._hwc: HwcPath | None = None
        #: a small 1×1 layer's one-call form of the compiled path (``kpu.small``), when it qualifies
        self._small: SmallConv | None = None
        self._lut_max_entries = LUT_MAX_ENTRIES
        self._fast: _FastPlan | None = None
        #: (stride, ((dy, dx), ...)): the sums are computed only at these pixel phases of the
        #: pooled grid (selection pools: one phase; max pools: all, then their maximum)
        self._sample: tuple[int, tuple[tuple[int, int], ...]] | None = None
        self._gemm_chunks: list[tuple[int, int]] | None = None
        #: work items per (workers, TILE_BYTES): the split is fixed for a layer
        self._items: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
        #: the numpy plan's GEMM weights, made by its first run (``_wfast``)
        self._wnumpy: np.ndarray | None = None
        #: numpy-path runs in progress (under ``_plan_lock``): the plan is released after the
        #: switch to the compiled path only when none is (``_release_numpy_plan``)
        self._numpy_runs = 0
        self._plan_lock = threading.Lock()

    # ---------------------------------------------------------------- preparation
    @classmethod
    def prepare(
        cls,
        regs: KpuRegisters,
        weights: bytes | np.ndarray,
        bn: BatchNorm | np.ndarray,
        act: ActivationTable | bytes | np.ndarray,
        *,
        weight_bytes: int = 1,
        fast: bool = True,
        lut_max_entries: int | None = None,
    ) -> "KpuConv":
        self = cls()
        self.regs = regs
        # callers that accept more memory for speed (V4 layers with wide batch-norm ranges) may
        # raise the activation-table limit; the default keeps LUT_MAX_ENTRIES
        self._lut_max_entries = LUT_MAX_ENTRIES if lut_max_entries is None else int(lut_max_entries)
        ic, ih, iw = regs.in_shape
        oc = regs.out_channels
        k = regs.kernel_size
        self.k = k
        self.depthwise = regs.depthwise
        self.in_shape = regs.in_shape
        self.out_shape = regs.out_shape
        self.conv_shape = regs.conv_shape
        self.pool_type = regs.pool_type
        self.pad_value = regs.pad_value
        self.macs = regs.macs
        self.src_addr = row_addr(regs.image_src_addr)
        self.dst_addr = row_addr(regs.image_dst_addr)
        taps_per_out = (1 if regs.depthwise else ic) * k * k
        # the weights stay as the file has them (uint8 / uint16): an int64 copy held for the life
        # of the model was 8x the file; the few load-time sums below widen them as they go
        if isinstance(weights, np.ndarray):
            wflat = weights.reshape(-1) if weights.dtype.kind in "iu" else weights.reshape(-1).astype(np.int64)
        else:
            dt = "<u1" if weight_bytes == 1 else "<u2"
            need = regs.weight_count * weight_bytes
            if len(weights) < need:
                raise KmodelFormatError(f"KPU weights need {need} bytes, got {len(weights)}", field="weights")
            wflat = np.frombuffer(bytes(weights[:need]), dtype=dt)
        if wflat.size != regs.weight_count:
            raise KmodelFormatError(f"KPU layer needs {regs.weight_count} weights, got {wflat.size}", field="weights")
        self.weights = wflat.reshape(oc, taps_per_out)
        self.bn = bn if isinstance(bn, BatchNorm) else decode_batchnorm(np.asarray(bn))
        if self.bn.mul.size != oc:
            raise KmodelFormatError(f"batch-norm table has {self.bn.mul.size} entries for {oc} output channels", field="batchnorm")
        self.act = act if isinstance(act, ActivationTable) else decode_activation(act)
        self.n_mult = 1 if regs.depthwise else ic
        self.taps = taps_per_out
        sw = self.weights.sum(axis=1, dtype=np.int64)
        self.sum_w = sw
        # per-channel constant of the literal formula: (arg_w*Sw >> shr_w) + arg_add*n
        self.const_w = (regs.arg_w * sw) >> regs.shr_w
        self.const_w = self.const_w + regs.arg_add * self.n_mult
        if fast:
            try:
                bounds = self._bounds()
                if compiled_available() and warmup.mode() == "wait":
                    self._hwc = HwcPath.prepare(self, bounds, lut_max_entries=self._lut_max_entries,
                                                threads=_parallel.workers())
                    self._small = SmallConv.attach(self._hwc, bounds)
                else:
                    if compiled_available():
                        # the numpy plan serves until the compiled path is prepared and its kernels
                        # are in memory (kpu.warmup: in the background, never waited for); a layer
                        # dropped before then is not kept alive for it
                        ref = weakref.ref(self)

                        def upgrade() -> None:
                            conv = ref()
                            if conv is not None:
                                conv._upgrade()

                        warmup.schedule(upgrade)
                    self._prepare_fast(bounds)
            except (_NoFastPath, ProductsInexact) as why:
                self.notes.append(f"exact int64 path: {why}")
        if (self.act.y_mul < 0).any():
            self.notes.append("negative activation y_mul: nncase's rounding quirk for negative products is reproduced (unverified on silicon)")
        if min(regs.in_shape[1:] + regs.out_shape[1:]) < 4:
            self.notes.append("maps smaller than 4x4 (the v0.1 compiler never emits them): not verified on hardware")
        if self.pool_type in (8, 9) or self.pool_type in (2, 4):
            self.notes.append(f"pool {POOL_NAMES[self.pool_type]}: edge handling / rounding follows the simulation, unverified on silicon")
        w_abs = self.weights if self.weights.dtype.kind == "u" else np.abs(self.weights.astype(np.int64))
        acc_bound = int(w_abs.sum(axis=1, dtype=np.int64).max(initial=0)) * 255 * 2 + int(np.abs(self.const_w).max(initial=0))
        if acc_bound >= 1 << 35:
            self.notes.append("accumulator may exceed 36 bits (silicon behaviour unknown)")
        return self

    def _upgrade(self) -> None:
        """(``kpu.warmup``'s loader thread) Prepare the compiled HWC path; it takes the layer's
        runs over once its warm-up has run with every kernel in memory."""
        bounds = self._bounds()
        path = HwcPath.prepare(self, bounds, lut_max_entries=self._lut_max_entries, threads=_parallel.workers())
        small = SmallConv.attach(path, bounds)
        warm_transposes()
        if path.warm is not None:
            path.warm.when_ready(lambda: self._switch(path, small))

    def _switch(self, path: HwcPath, small: SmallConv | None = None) -> None:
        with self._plan_lock:
            self._small = small  # (read only behind ``_hwc``, which is set last)
            self._hwc = path  # one reference: a run reads it once (``native``), never half of each
            if self._numpy_runs == 0:
                self._release_numpy_plan()
        for callback in self.on_switch:
            callback()

    def _release_numpy_plan(self) -> None:
        """(under ``_plan_lock``, no numpy-path run in progress, the compiled path in place) Drop
        the numpy plan — its float GEMM weights, 4-8x the file's, and its activation table — which
        no run takes any more: a model on the compiled paths held both forms for its whole life."""
        self._fast = None
        self._wnumpy = None
        self._items.clear()

    @property
    def _wfast(self) -> np.ndarray:
        """The numpy plan's GEMM weights ``w + ax`` [OC, taps] in ``_gemm_dtype`` (exact), made by
        the first numpy-path run: a layer whose compiled path takes over first never makes them."""
        w = self._wnumpy
        if w is None:
            ax = self.regs.arg_x >> self.regs.shr_x
            w = self._wnumpy = _shifted_weights(self.weights, ax).astype(self._gemm_dtype)
        return w

    @property
    def _wfast_dw(self) -> np.ndarray:
        """``_wfast`` as the depthwise batched product's [OC, 1, 9] (3×3) or [OC, 1, 1] (1×1)."""
        w = self._wfast
        return w.reshape(w.shape[0], 1, w.shape[1]) if self.k == 3 else w.reshape(-1, 1, 1)

    def native(self) -> tuple[str, Callable[[np.ndarray], np.ndarray]]:
        """``(layout, run)`` of the path in place now, from one read: a run that converts its input
        to ``layout`` and calls ``run`` cannot straddle a switch to the compiled path."""
        hwc = self._hwc
        if hwc is not None:
            small = self._small
            if small is not None and small.ready:
                return "HWC", small.run
            return "HWC", hwc.run
        return "CHW", self.run_centered

    def _bounds(self) -> "_Bounds":
        """What every exact fast path needs: ``w' = w + ax``, the per-channel constant ``C`` of
        ``acc = G + C`` (``G = Σ x'·w'``, ``x' = x − 128``), the sums' bounds and the batch-norm
        range with the part of it where the activation is not constant."""
        regs = self.regs
        if regs.arg_x % (1 << regs.shr_x):
            raise _NoFastPath("arg_x is not a multiple of 2**shr_x")
        ax = regs.arg_x >> regs.shr_x
        # acc = Σ x'·(w+ax) + 128·Σ(w+ax) + const_w
        total, pos = _row_sums(self.weights, ax)
        C = 128 * total + self.const_w  # int64 per channel (python-int safe: small)
        # G bounds per channel (exact: x' in [-128,127])
        # (the sums of where(w' > 0, 127 w', -128 w') and its mirror, from the positive and
        # negative parts' sums: the same integers with two reductions instead of four temporaries)
        neg = pos - total  # Σ|w'| over the negative weights
        gmax = 127 * pos + 128 * neg
        gmin = -128 * pos - 127 * neg
        mul, add, shift = self.bn.mul, self.bn.add, self.bn.shift
        a_lo, a_hi = gmin + C, gmax + C
        amax = np.maximum(np.abs(a_lo), np.abs(a_hi))
        if (amax.astype(np.float64) * np.abs(mul).astype(np.float64) >= 2.0**61).any():
            raise _NoFastPath("batch-norm product exceeds int64")
        v1 = ((a_lo * mul) >> shift) + add
        v2 = ((a_hi * mul) >> shift) + add
        bn_lo, bn_hi = np.minimum(v1, v2), np.maximum(v1, v2)
        bmin, bmax = int(bn_lo.min()), int(bn_hi.max())
        act = self.act
        valid = bmin > int(act.x_start.min())
        monotone = valid and self._act_monotone(bmin, bmax)
        lo, hi = bmin, bmax
        if monotone:
            v_lo, v_hi = _activate_scalar(bmin, act), _activate_scalar(bmax, act)
            # L = largest bn with act == act(bmin); U = smallest bn with act == act(bmax)
            a, b = bmin, bmax
            while a < b:
                mid = (a + b + 1) // 2
                if _activate_scalar(mid, act) == v_lo:
                    a = mid
                else:
                    b = mid - 1
            lo = a
            a, b = lo, bmax
            while a < b:
                mid = (a + b) // 2
                if _activate_scalar(mid, act) == v_hi:
                    b = mid
                else:
                    a = mid + 1
            hi = max(a, lo)
        pool_first = monotone and bool((mul >= 0).all()) and self.pool_type in _POOL_COMMUTES_MONOTONE
        return _Bounds(self.weights, ax, pos + neg, C, gmin, gmax, bmin, bmax, valid, monotone, lo, hi, pool_first)

    def _prepare_fast(self, b: "_Bounds") -> None:
        """The numpy plan: float32/float64 GEMMs (exact by the sum bounds) and a float64
        batch-norm folded into one table index per value (or the segments when no table fits)."""
        C, gmin, gmax = b.C, b.gmin, b.gmax
        taps = b.weights.shape[1]
        bound64 = int(b.abs_sum.max(initial=0)) * 128
        if bound64 < _F32_EXACT:
            chunks: list[tuple[int, int]] | None = [(0, taps)]  # (what chunks_for_bound gives then)
        else:  # (wf is narrow: its |values| fit its own type, see _shifted_weights)
            chunks = chunks_for_bound(np.abs(b.wf), 128, _F32_EXACT)
        if chunks is None or len(chunks) > 4 or (self.depthwise and len(chunks) > 1):
            # (depthwise sums run as one batched product, so they cannot be split into chunks)
            if bound64 >= _F64_EXACT:
                raise _NoFastPath("sums exceed float64's exact range")
            self._gemm_dtype = np.float64
            self._gemm_chunks = [(0, taps)]
        else:
            self._gemm_dtype = np.float32
            self._gemm_chunks = chunks
        # (the GEMM weights themselves, ``_wfast``, are made by the plan's first run)
        # selection pools keep one pixel per window: compute the conv only there (4-16x less work)
        sel = _SELECTION_POOLS.get(self.pool_type)
        self._sample = None if sel is None else (sel[0], ((sel[1], sel[2]),))
        mul, add, shift = self.bn.mul, self.bn.add, self.bn.shift
        act = self.act
        lo, hi = b.lo, b.hi
        segments = None
        direct = None
        if not b.valid or hi - lo + 1 > self._lut_max_entries:
            # no table: bn itself, then the 16 segments (exact, a few passes more)
            segments = segment_table(act)
            lo = 0
            lut = None
        elif b.monotone and hi - lo + 1 > BUCKET_MIN_ENTRIES and (direct := centered_step_buckets(act, lo, hi)) is not None:
            # a wide table's two-level form straight from the segments: the table is never built
            lut = None
        else:
            # int8 "x - 128" entries: a 4x smaller table stays in cache next to the data streams,
            # and layer outputs are 4x smaller (the next layer widens them while copying anyway);
            # made now only when its buckets are to be looked for, else by the first run
            lut = _centered_lut(act, lo, hi) if hi - lo + 1 > BUCKET_MIN_ENTRIES else _LAZY_TABLE
        # per-channel affine map G -> bn - lo, exactness check
        gabs = np.maximum(np.abs(gmin), np.abs(gmax))
        scale = np.left_shift(np.int64(1), shift)
        # |C| and max(|gmin|,|gmax|) are at most 1x and 2x max|a|, so with the check above every
        # product here is < 3 * 2**61 and this int64 bound is exact
        bound = (gabs + np.abs(C)) * np.abs(mul) + np.abs(add - lo) * scale + scale
        if (bound >= _F64_EXACT).any():
            raise _NoFastPath("batch-norm arithmetic exceeds float64's exact range")
        num = C * mul + (add - lo) * scale  # |num| < 2**53: exact as a float64
        m = (mul.astype(np.float64) / scale.astype(np.float64)).reshape(-1, 1)
        c = (num.astype(np.float64) / scale.astype(np.float64)).reshape(-1, 1)
        pool_first = b.pool_first
        if direct is not None:
            self._fast = _FastPlan(m=m, c=c, span=float(hi - lo), lut=None, pool_first=pool_first, buckets=direct)
        elif lut is None:
            self._fast = _FastPlan(m=m, c=c, span=float(hi - b.lo), lut=None, pool_first=pool_first, segments=segments)
        elif lut is _LAZY_TABLE:
            self._fast = _FastPlan(m=m, c=c, span=float(hi - lo), lut=None, pool_first=pool_first, lazy=(act, lo, hi),
                                   entries=hi - lo + 1)
        else:
            words = lut[: lut.size // 8 * 8].view(np.int64) if _LUT_PREFETCH_MIN <= lut.size <= _LUT_PREFETCH_MAX else None
            unit = unit_step_buckets(lut)
            buckets = None if unit is None else (*unit, None)
            if buckets is not None:  # (the buckets are all a run reads: the table goes)
                self._fast = _FastPlan(m=m, c=c, span=float(hi - lo), lut=None, pool_first=pool_first, buckets=buckets,
                                       entries=int(lut.size))
            else:
                self._fast = _FastPlan(m=m, c=c, span=float(hi - lo), lut=lut, pool_first=pool_first, lut_words=words,
                                       entries=int(lut.size))
        st = _MAX_POOLS.get(self.pool_type, 0)
        if pool_first and st and self.out_shape[1:] == (self.in_shape[1] // st, self.in_shape[2] // st):
            # max pools before the (non-decreasing) table: the sums are computed phase by phase
            # on the pooled grid (one GEMM over all phases) and the pool is a maximum of
            # contiguous blocks instead of a strided pass over the full-resolution map
            self._sample = (st, tuple((dy, dx) for dy in range(st) for dx in range(st)))

    def _act_monotone(self, bmin: int, bmax: int) -> bool:
        """Is the activation non-decreasing on [bmin, bmax]? (segment domains, slopes, joints)."""
        act = self.act
        xs = [int(v) for v in act.x_start]
        points: list[tuple[int, int]] = []
        for i in range(16):
            lo = xs[i] + 1
            hi = min(xs[i + 1 :], default=1 << 40)
            lo, hi = max(lo, bmin), min(hi, bmax)
            if lo > hi:
                continue
            if int(act.y_mul[i]) < 0 and lo < hi:
                # a falling segment (and nncase's rounding of negative products is not even
                # monotone in t): never treat the whole activation as monotone
                return False
            points.append((lo, _activate_scalar(lo, act)))
            points.append((hi, _activate_scalar(hi, act)))
        points.sort()
        return all(points[j][1] <= points[j + 1][1] for j in range(len(points) - 1))

    @property
    def fast(self) -> bool:
        return self._fast is not None or self._hwc is not None

    @property
    def layout(self) -> str:
        """The layer's native maps (``kpu.ram.to_native``): "HWC" (uint8) or "CHW" (centred int8)."""
        return "HWC" if self._hwc is not None else "CHW"

    @property
    def path(self) -> str:
        """How the layer runs, e.g. ``u8s8+linear HWC``, ``u8u8-patch+linear HWC``, ``dw+segments HWC``,
        ``f32+lut CHW``, ``int64`` (products: ``kpu.products``)."""
        if self._hwc is not None:
            products = "i32-1x1" if self._small is not None else self._hwc.products
            return f"{products}+{self._hwc.activation} HWC"
        plan = self._fast
        if plan is None:
            return "int64"
        products = "f32" if self._gemm_dtype == np.float32 else "f64"
        act = "segments" if plan.segments is not None else "buckets" if plan.buckets is not None else "lut"
        return f"{products}+{act} CHW"

    @property
    def refused(self) -> list[str]:
        """Why faster products were refused for this layer (e.g. ``u8s8: not exact on this CPU,
        23 of 640 proof sums``): what ``maixemu bench --layers`` prints next to the path."""
        return list(self._hwc.refused) if self._hwc is not None else []

    @property
    def table_entries(self) -> int:
        """Entries of the activation table this layer holds (0 when it evaluates the segments)."""
        if self._hwc is not None:
            act = self._hwc.act
            return int(act.lut.size) if act.mode == 0 else int(act.bp.size) if act.mode == 3 else 0
        if self._fast is not None and self._fast.entries:
            return self._fast.entries
        if self._fast is not None and self._fast.buckets is not None:
            return int(self._fast.buckets[1].size)  # (buckets built without their table)
        return 0

    def run_native(self, x: np.ndarray) -> np.ndarray:
        """One map in the layer's native layout (``self.layout``) → the output in the same layout.
        A map taken in the numpy path's layout (centred int8) before the compiled path took over
        is still run right (``run_centered`` converts); ``native()`` avoids the conversion."""
        hwc = self._hwc
        if hwc is not None and x.dtype == np.uint8:
            return self.native()[1](x)
        return self.run_centered(x)

    # ---------------------------------------------------------------- execution
    def run(self, x: np.ndarray) -> np.ndarray:
        """uint8 ``[IC,IH,IW]`` (or ``[N,...]``) → uint8 ``[OC,OH,OW]`` (or ``[N,...]``)."""
        x = np.asarray(x)
        if x.ndim == 4:
            return np.stack([self.run(xi) for xi in x])
        self._check_shape(x)
        if self._hwc is not None:
            return from_native(self._hwc.run(to_native(x, "HWC")), "HWC")
        if self._fast is None:
            with blas_threads(1):
                return self.run_reference(x)
        return from_centered(self.run_centered(to_centered(x)))

    def _check_shape(self, x: np.ndarray) -> None:
        if tuple(x.shape) != tuple(self.in_shape):
            raise KmodelRuntimeError(f"KPU layer expects a {self.in_shape} [C,H,W] input, got {tuple(x.shape)}")

    def _padded_flat(self, xc: np.ndarray, dtype) -> np.ndarray:
        """The centered input with its 1-pixel pad_value border, flattened per channel.

        Layout ``[IC, (H+2)*(W+2) + 2]``: tap (ky, kx) of every output on the padded-width grid
        ``[H, W+2]`` is the contiguous slice starting at ``ky*(W+2) + kx`` (the two extra columns
        per row are computed and dropped; the two trailing elements keep the last slice in bounds).
        """
        ic, h, w = self.in_shape
        wp = w + 2
        flat = plain_scratch("pad", ic * ((h + 2) * wp + 2), dtype).reshape(ic, (h + 2) * wp + 2)
        grid = flat[:, : (h + 2) * wp].reshape(ic, h + 2, wp)
        padc = float(self.pad_value) - 128.0
        grid[:, 0, :] = padc
        grid[:, h + 1, :] = padc
        grid[:, 1 : h + 1, 0] = padc
        grid[:, 1 : h + 1, w + 1] = padc
        flat[:, (h + 2) * wp :] = padc
        grid[:, 1 : h + 1, 1 : w + 1] = xc
        return flat

    def _conv_source(self, xc: np.ndarray):
        """What :meth:`_conv_rows` slices: the padded flat input (3×3) or the [IC, H*W] matrix (1×1)."""
        ic, h, w = self.in_shape
        if self._sample is not None and len(self._sample[1]) > 1:
            return self._phase_planes(xc)
        if self.k == 3:
            flat = self._padded_flat(xc, self._gemm_dtype)
            if self._sample is not None:
                return flat[:, : (h + 2) * (w + 2)].reshape(ic, h + 2, w + 2)
            return flat
        if self._sample is not None:
            return xc if xc.dtype == self._gemm_dtype else _converted(xc, self._gemm_dtype)
        mat = xc.reshape(ic, h * w)
        return mat if mat.dtype == self._gemm_dtype else _converted(mat, self._gemm_dtype)

    def _conv_rows(self, src: np.ndarray, y0: int, y1: int, o0: int = 0, o1: int | None = None) -> np.ndarray:
        """``G = Σ x'·(w+ax)`` for output rows ``y0:y1`` and channels ``o0:o1``, [O, y1-y0, W]."""
        ic, h, w = self.in_shape
        o1 = self.conv_shape[0] if o1 is None else o1
        oc = o1 - o0
        rows = y1 - y0
        if self._sample is not None:
            if len(self._sample[1]) > 1:
                return self._conv_rows_maxpool(src, y0, y1, o0, o1)
            return self._conv_rows_sampled(src, y0, y1, o0, o1)
        if self.k == 1:
            if self.depthwise:
                return (src[o0:o1, y0 * w : y1 * w] * self._wfast[o0:o1]).reshape(oc, rows, w)
            return self._gemm(src[:, y0 * w : y1 * w], o0, o1).reshape(oc, rows, w)
        wp = w + 2
        length = rows * wp
        base = y0 * wp
        cin = src[o0:o1] if self.depthwise else src
        n_in = cin.shape[0]
        cols = plain_scratch("cols", n_in * 9 * length, self._gemm_dtype).reshape(n_in, 9, length)
        t = 0
        for ky in range(3):
            for kx in range(3):
                off = base + ky * wp + kx
                cols[:, t] = cin[:, off : off + length]
                t += 1
        if self.depthwise:
            g = _bmm(self._wfast_dw[o0:o1], cols).reshape(oc, rows, wp)
        else:
            g = self._gemm(cols.reshape(n_in * 9, length), o0, o1).reshape(oc, rows, wp)
        return g[:, :, :w]

    def _conv_rows_sampled(self, grid: np.ndarray, y0: int, y1: int, o0: int, o1: int) -> np.ndarray:
        """``G`` only at the pixels a selection pool keeps, for pooled rows ``y0:y1``: [O, rows, OW].

        ``grid`` is the centered input [IC, H, W] (1×1) or its padded grid [IC, H+2, W+2] (3×3).
        """
        assert self._sample is not None  # (called only for a sampled layer)
        stride, ((dy, dx),) = self._sample
        ow = self.out_shape[2]
        rows = y1 - y0
        oc = o1 - o0
        cin = grid[o0:o1] if self.depthwise else grid
        n_in = cin.shape[0]
        k = self.k
        cols = plain_scratch("cols", n_in * k * k * rows * ow, self._gemm_dtype).reshape(n_in, k * k, rows, ow)
        t = 0
        for ky in range(k):
            for kx in range(k):
                r0 = dy + ky + stride * y0
                c0 = dx + kx
                cols[:, t] = cin[:, r0 : r0 + stride * (rows - 1) + 1 : stride, c0 : c0 + stride * (ow - 1) + 1 : stride]
                t += 1
        if self.depthwise:
            if k == 1:
                return cols.reshape(oc, rows, ow) * self._wfast[o0:o1, :, None]
            g = _bmm(self._wfast_dw[o0:o1], cols.reshape(oc, 9, rows * ow))
        else:
            g = self._gemm(cols.reshape(n_in * k * k, rows * ow), o0, o1)
        return g.reshape(oc, rows, ow)

    def _phase_planes(self, xc: np.ndarray):
        """The input split into ``stride**2`` phase planes for a max-pooled layer (see ``_conv_rows_maxpool``).

        1×1: ``[IC, OH, P, OW]`` with ``[c, i, p, j] = x'[c, s*i + dy, s*j + dx]``, ``p = dy*s + dx``.
        3×3: the padded grid's planes ``[IC, P, PH*PW + 2]`` (flat, pitch ``PW``) with plane
        ``p = ry*s + rx`` holding ``grid[c, s*u + ry, s*v + rx]`` at ``u*PW + v``.
        """
        assert self._sample is not None  # (called only for a max-pooled, sampled layer)
        st = self._sample[0]
        ic, h, w = self.in_shape
        oh, ow = self.out_shape[1:]
        if self.k == 1:
            planes = plain_scratch("pad", ic * oh * st * st * ow, self._gemm_dtype).reshape(ic, oh, st, st, ow)
            view = xc[:, : oh * st, : ow * st].reshape(ic, oh, st, ow, st).transpose(0, 1, 2, 4, 3)
            np.copyto(planes, view, casting="unsafe")
            return planes.reshape(ic, oh, st * st, ow)
        grid = self._padded_flat(xc, self._gemm_dtype)[:, : (h + 2) * (w + 2)].reshape(ic, h + 2, w + 2)
        ph, pw = -(-(h + 2) // st), -(-(w + 2) // st)
        flat = plain_scratch("planes", ic * st * st * (ph * pw + 2), self._gemm_dtype).reshape(ic, st * st, ph * pw + 2)
        flat[:, :, ph * pw :] = 0
        planes = flat[:, :, : ph * pw].reshape(ic, st * st, ph, pw)
        for ry in range(st):
            for rx in range(st):
                src = grid[:, ry::st, rx::st]
                plane = planes[:, ry * st + rx]
                plane[:, : src.shape[1], : src.shape[2]] = src
                # cells past the grid's edge only reach junk columns (never a kept output):
                # zeros, so the junk stays finite
                plane[:, src.shape[1] :] = 0
                plane[:, : src.shape[1], src.shape[2] :] = 0
        return flat

    def _conv_rows_maxpool(self, src: np.ndarray, y0: int, y1: int, o0: int, o1: int) -> np.ndarray:
        """Max-pooled ``G`` for pooled rows ``y0:y1``: [O, rows, OW].

        Every phase ``(dy, dx)`` of the pool window is a strided convolution; with the input in
        phase planes each of its taps is a contiguous slice (1×1: the plane itself; 3×3: plane
        ``((dy+ky)%s, (dx+kx)%s)`` shifted by ``((dy+ky)//s, (dx+kx)//s)``, on a grid of pitch
        ``PW`` whose columns past ``OW`` are junk). One GEMM covers all phases (phase-major
        columns) and the pool is the element-wise maximum of the phase blocks. The sums are the
        very integers the full-resolution path pools, so the result is the same bytes.
        """
        assert self._sample is not None  # (called only for a max-pooled, sampled layer)
        st, phases = self._sample
        n_ph = len(phases)
        oh, ow = self.out_shape[1:]
        rows = y1 - y0
        oc = o1 - o0
        if self.k == 1:
            mat = src[:, y0:y1]  # [IC, rows, P, OW], contiguous per channel
            n_in = mat.shape[0]
            if self.depthwise:
                g = mat[o0:o1] * self._wfast[o0:o1, :, None, None]
            else:
                g = self._gemm(mat.reshape(n_in, rows * n_ph * ow), o0, o1).reshape(oc, rows, n_ph, ow)
            out = np.maximum(g[:, :, 0], g[:, :, 1])
            for p in range(2, n_ph):
                np.maximum(out, g[:, :, p], out=out)
            return out
        h, w = self.in_shape[1:]
        pw = -(-(w + 2) // st)
        length = rows * pw
        cin = src[o0:o1] if self.depthwise else src
        n_in = cin.shape[0]
        cols = plain_scratch("cols", n_in * 9 * n_ph * length, self._gemm_dtype).reshape(n_in, 9, n_ph, length)
        t = 0
        for ky in range(3):
            for kx in range(3):
                for p, (dy, dx) in enumerate(phases):
                    a, b = dy + ky, dx + kx
                    off = (y0 + a // st) * pw + b // st
                    cols[:, t, p] = cin[:, (a % st) * st + b % st, off : off + length]
                t += 1
        n = n_ph * length
        if self.depthwise:
            g = _bmm(self._wfast_dw[o0:o1], cols.reshape(oc, 9, n)).reshape(oc, n_ph, length)
        else:
            g = self._gemm(cols.reshape(n_in * 9, n), o0, o1).reshape(oc, n_ph, length)
        out = np.maximum(g[:, 0], g[:, 1])
        for p in range(2, n_ph):
            np.maximum(out, g[:, p], out=out)
        return out.reshape(oc, rows, pw)[:, :, :ow]

    def _conv_sums(self, xc: np.ndarray) -> np.ndarray:
        """``G`` for the whole map, [OC, H, W]."""
        return self._conv_rows(self._conv_source(xc), 0, self.in_shape[1])

    def _gemm(self, mat: np.ndarray, o0: int = 0, o1: int | None = None) -> np.ndarray:
        wm = self._wfast[o0:o1]
        chunks = self._gemm_chunks
        assert chunks is not None  # (the numpy plan is prepared: _prepare_fast set them)
        if len(chunks) == 1:
            return np.matmul(wm, mat, out=plain_scratch("g", wm.shape[0] * mat.shape[1], wm.dtype).reshape(wm.shape[0], mat.shape[1]))
        g = np.zeros((wm.shape[0], mat.shape[1]), dtype=np.float64)
        for k0, k1 in chunks:
            g += wm[:, k0:k1] @ mat[k0:k1]
        return g

    def _tile_rows(self) -> int:
        """Rows per tile so that a tile's intermediates stay cache-sized (``TILE_BYTES``)."""
        ic, h, w = self._g_geometry()
        oc = self.conv_shape[0]
        per_row = (w + 2) * max(oc, ic * self.k * self.k) * 4
        if self._sample is not None:
            per_row *= len(self._sample[1])
        rows = max(1, self.TILE_BYTES // max(per_row, 1))
        if self.pool_type in (8, 9) or rows >= h:
            return h
        if self._sample is not None:
            return rows
        return max(4, rows - rows % 4)

    def _g_geometry(self) -> tuple[int, int, int]:
        """(IC, rows, columns) of the grid the sums are computed on (pooled grid for selection pools)."""
        ic, h, w = self.in_shape
        if self._sample is not None:
            return ic, self.out_shape[1], self.out_shape[2]
        return ic, h, w

    def work_items(self, workers: int) -> list[tuple[int, int, int, int]]:
        """Independent pieces ``(row0, row1, oc0, oc1)`` of the layer for ``workers`` threads.

        Big maps split into row tiles (cache-sized); small maps with many channels split their
        output channels; tiny layers stay whole (a thread hand-off costs more than they do).
        """
        ic, h, w = self._g_geometry()
        oc = self.conv_shape[0]
        if self.depthwise:
            # per-channel work: split channels so each group's im2col block is ~2 MiB and every
            # worker gets something (row tiles would multiply the per-channel BLAS calls)
            per_channel = self.k * self.k * (w + 2) * h * 4 * (1 if self._sample is None else len(self._sample[1]))
            groups = max(1, min(oc, -(-per_channel * oc // (2 << 20))))
            if workers > 1 and self.macs >= 200_000:
                groups = max(groups, min(workers, oc))
            bounds = [round(i * oc / groups) for i in range(groups + 1)]
            return [(0, h, bounds[i], bounds[i + 1]) for i in range(groups)]
        step = self._tile_rows()
        if step < h:
            return [(y0, min(h, y0 + step), 0, oc) for y0 in range(0, h, step)]
        if workers > 1 and oc >= 32 and self.macs >= 1_000_000:
            parts = min(workers, oc // 16)
            bounds = [round(i * oc / parts) for i in range(parts + 1)]
            return [(0, h, bounds[i], bounds[i + 1]) for i in range(parts)]
        return [(0, h, 0, oc)]

    def _worth_threads(self) -> bool:
        """Hand a layer to the thread pool only when it is big enough to repay the hand-offs
        (measured: below ~4 M MACs / 200 k outputs the overhead eats the gain)."""
        oc, h, w = self.conv_shape
        return self.macs >= 4_000_000 or oc * h * w >= 200_000

    def _lut_stage(self, g: np.ndarray, o0: int = 0, o1: int | None = None) -> np.ndarray:
        plan = self._fast
        assert plan is not None  # (the numpy plan's stage)
        oc, ph, pw = g.shape
        n = oc * ph * pw
        buf = plain_scratch("bn", n, np.float64).reshape(oc, ph, pw)
        np.multiply(g, plan.m[o0:o1, :, None], out=buf)
        buf += plan.c[o0:o1, :, None]
        if plan.segments is not None:
            # bn = floor(G·m + c) exactly (checked at load), then the segments themselves
            np.floor(buf, out=buf)
            values, bad = activate_segments(buf.astype(np.int64), plan.segments)
            if bad:
                raise self._below_segments()
            return to_centered(values)
        np.clip(buf, 0.0, plan.span, out=buf)
        idx = plain_scratch("idx", n, np.intp).reshape(oc, ph, pw)
        if plan.buckets is not None:
            # i = floor(buf) >= 0; bucket q = floor(buf * 2**-j) (exact: a power of two) and
            # floor(buf) >= step  <=>  buf >= step for the integer steps
            scale, first, step, inc = plan.buckets
            np.multiply(buf, scale, out=idx, casting="unsafe")
            up = np.greater_equal(buf, step.take(idx))
            out = first.take(idx)
            if inc is not None:
                up = up * inc.take(idx)
            np.add(out, up, out=out, casting="unsafe")
            return out
        np.copyto(idx, buf, casting="unsafe")
        lut = plan.lookup_table()
        if plan.lut_words is not None and n * _LUT_PREFETCH_PER >= lut.size:
            plan.lut_words.max()
        # (measured in the models: this in-place clip + cast + default-mode take is faster than
        # fusing the add into an integer cast and clipping with take(mode="clip"))
        return lut.take(idx)

    def _run_item(self, src: np.ndarray, item: tuple[int, int, int, int]) -> tuple[tuple[int, int, int, int], np.ndarray]:
        y0, y1, o0, o1 = item
        plan = self._fast
        assert plan is not None  # (the numpy plan's work item)
        g = self._conv_rows(src, y0, y1, o0, o1)
        if self._sample is not None:
            return item, self._lut_stage(g, o0, o1)
        if plan.pool_first:
            y = self._lut_stage(pool(g, self.pool_type), o0, o1)
        else:
            y = pool(self._lut_stage(g, o0, o1), self.pool_type)
        return item, y

    def run_centered(self, xc: np.ndarray, *, parallel: bool = True) -> np.ndarray:
        """Centered ``x − 128`` ``[IC,IH,IW]`` (int8 or float32) → int8 ``out − 128`` ``[OC,OH,OW]``.

        The layer is cut into independent work items (row tiles that keep the im2col block, the
        sums and the table lookups in cache, or output-channel groups) that run on a small thread
        pool with single-threaded BLAS each (``parallel=False``: in the calling thread).
        Scratch buffers are per thread, so concurrent runs on different threads are safe.
        """
        with self._plan_lock:  # (the plan and the compiled path read together: see ``_switch``)
            hwc, plan = self._hwc, self._fast
            if hwc is None and plan is not None:
                self._numpy_runs += 1
        if hwc is not None:
            return to_centered(from_native(hwc.run(to_native(from_centered(xc), "HWC")), "HWC"))
        if plan is None:
            # single-threaded BLAS like the fast path: a multi-threaded OpenBLAS call on these
            # small products costs more in thread hand-offs than the product (measured: a
            # 256x4x5 layer took 40 ms instead of well under 1 ms on a busy machine)
            with blas_threads(1):
                return to_centered(self.run_reference(from_centered(xc)))
        try:
            return self._run_numpy(xc, parallel)
        finally:
            with self._plan_lock:
                self._numpy_runs -= 1
                if self._numpy_runs == 0 and self._hwc is not None:
                    self._release_numpy_plan()

    def _run_numpy(self, xc: np.ndarray, parallel: bool) -> np.ndarray:
        """``run_centered`` on the numpy plan (held for the run: see ``_switch``)."""
        src = self._conv_source(xc)
        workers = _parallel.workers() if parallel and self._worth_threads() else 1
        key = (workers, self.TILE_BYTES)
        items = self._items.get(key)
        if items is None:
            items = self._items[key] = self.work_items(workers)
        if workers == 1:
            with blas_threads(1):
                if len(items) == 1:
                    return self._run_item(src, items[0])[1]
                results = [self._run_item(src, item) for item in items]
        else:

            def task(item):
                with blas_threads(1):
                    return self._run_item(src, item)

            results = _pool().map(task, items)
        _, stride = POOL_GEOMETRY[self.pool_type]
        if self._sample is not None:
            stride = 1  # items are already in pooled rows
        out = np.empty(self.out_shape, dtype=np.int8)
        for (y0, y1, o0, o1), y in results:
            r0 = y0 // stride
            out[o0:o1, r0 : r0 + y.shape[1]] = y
        return out

    @property
    def _wref(self) -> np.ndarray:
        """The reference GEMM's weights in float64 (exact, |values| tiny vs 2**53), made when the
        reference first runs: a model on the fast paths never needs them."""
        wref = self.__dict__.get("_wref_cache")
        if wref is None:
            wref = self.__dict__["_wref_cache"] = self.weights.astype(np.float64)
        return wref

    def accumulate_reference(self, x: np.ndarray) -> np.ndarray:
        """The exact int64 ``acc`` of kpu-hardware.md §5.1 at full resolution, [OC, H, W]."""
        regs = self.regs
        ic, h, w = self.in_shape
        oc = self.out_shape[0]
        xf = x.astype(np.float64)
        if self.k == 3:
            xp = np.pad(xf, ((0, 0), (1, 1), (1, 1)), constant_values=float(self.pad_value))
            cols = np.stack([xp[:, ky : ky + h, kx : kx + w] for ky in range(3) for kx in range(3)], axis=1)
        else:
            cols = xf[:, None]
        cols = cols.reshape(ic, self.k * self.k, h * w)
        if self.depthwise:
            s = np.einsum("ck,ckn->cn", self._wref, cols)
            sx = cols.sum(axis=1)
        else:
            mat = cols.reshape(ic * self.k * self.k, h * w)
            s = self._wref @ mat
            sx = np.broadcast_to(mat.sum(axis=0), (oc, h * w))
        s = s.astype(np.int64)
        sx = sx.astype(np.int64)
        acc = s + ((regs.arg_x * sx) >> regs.shr_x) + self.const_w[:, None]
        return acc.reshape(oc, h, w)

    def _below_segments(self) -> KmodelRuntimeError:
        offset, fld = self.act_where
        return KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start", offset=offset, field=fld)

    def run_reference(self, x: np.ndarray) -> np.ndarray:
        """The exact int64 path (document arithmetic verbatim): uint8 in, uint8 out."""
        x = np.asarray(x)
        self._check_shape(x)
        acc = self.accumulate_reference(x)
        bn = self.bn
        y = ((acc * bn.mul[:, None, None]) >> bn.shift[:, None, None]) + bn.add[:, None, None]
        try:
            a = activate(y, self.act)
        except KmodelRuntimeError as exc:
            if exc.field is not None:
                raise
            offset, fld = self.act_where
            raise KmodelRuntimeError(str(exc), offset=offset, field=fld) from exc
        return pool(a, self.pool_type).astype(np.uint8)


class _NoFastPath(Exception):
    pass


#: ``_prepare_fast``'s marker of a table left for the first run to make (``_FastPlan.lazy``)
_LAZY_TABLE = np.zeros(0, np.int8)


#: weights widened at a time by ``_row_sums`` (a bounded temporary)
_ROW_BLOCK = 1 << 16


def _row_sums(weights: np.ndarray, ax: int) -> tuple[np.ndarray, np.ndarray]:
    """Per output channel, ``Σ(w + ax)`` and ``Σ max(w + ax, 0)`` (int64, exact), a block of
    channels at a time: no [OC, taps] copy (the compiled path's ``_Bounds.wf`` makes one only
    when it needs it)."""
    oc, taps = weights.shape
    total = np.empty(oc, np.int64)
    pos = np.empty(oc, np.int64)
    step = max(1, _ROW_BLOCK // max(taps, 1))
    for o0 in range(0, oc, step):
        block = _shifted_weights(weights[o0 : o0 + step], ax)
        total[o0 : o0 + step] = block.sum(axis=1, dtype=np.int64)
        np.maximum(block, 0, out=block)
        pos[o0 : o0 + step] = block.sum(axis=1, dtype=np.int64)
    return total, pos


def _shifted_weights(weights: np.ndarray, ax: int) -> np.ndarray:
    """``weights + ax`` in the narrowest of int16 / int32 / int64 that holds every value and its
    negation exactly (8-bit models: int16). The load-time sums widen to int64 as they reduce, so
    no int64 copy of a layer's weights is made: those copies (8x the file's bytes, in two threads
    at once) were most of a model's peak memory."""
    lo = int(weights.min(initial=0)) + ax
    hi = int(weights.max(initial=0)) + ax
    for dtype in (np.int16, np.int32):
        info = np.iinfo(dtype)
        if -info.max <= lo and hi <= info.max:
            out = weights.astype(dtype)
            out += dtype(ax)
            return out
    return weights.astype(np.int64) + ax


def _bmm(w: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``w @ cols`` (depthwise: [O,1,9] @ [O,9,N]) into a reused per-thread buffer."""
    shape = (cols.shape[0], 1, cols.shape[2])
    return np.matmul(w, cols, out=plain_scratch("g", shape[0] * shape[2], cols.dtype).reshape(shape))


def _converted(x: np.ndarray, dtype) -> np.ndarray:
    """``x.astype(dtype)`` into a reused per-thread buffer (a layer's GEMM source)."""
    out = plain_scratch("src", x.size, dtype).reshape(x.shape)
    np.copyto(out, x, casting="unsafe")
    return out
