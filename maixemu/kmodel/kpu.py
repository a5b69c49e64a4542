"""The K210 KPU convolution engine, bit-exact, in numpy (shared by kmodel V3 and V4).

Public API (stable; V3's ``K210_CONV``, V4's ``kpu_conv2d`` and the firmware layer use it):

``decode_registers(words) -> KpuRegisters``
    The 12 u64 register words of ``kpu_layer_argument_t`` → every field, sign-extended with the
    widths of kpu-hardware.md §1, reserved bits masked. Raises KmodelUnsupportedError for
    settings no simulation models (``full_add``, ``pad_type``, ``first_stride``, ``bypass_conv``,
    ``coef_*_offset``, kernel types other than 1×1/3×3, pool types 10–15, depthwise with
    IC ≠ OC). ``regs.validate_layout()`` checks the redundant layout fields of words 7/8/11.

``decode_batchnorm(words) -> BatchNorm`` and ``decode_activation(data) -> ActivationTable``
    The per-output-channel BN table (u64 each) and the 144-byte activation table.

``KpuConv.prepare(regs, weights, bn, act, *, weight_bytes=1, fast=True) -> KpuConv``
    Everything that can be done at load time: weights → GEMM-ready float32 (or float64) matrices
    with proven exactness bounds, BN + activation folded into one lookup table per layer when the
    arithmetic allows it (otherwise an exact int64 path). ``bn``/``act`` may be the decoded
    objects or the raw u64 array / 144 bytes.

``conv.run(x) -> uint8``
    ``x``: uint8 ``[IC,IH,IW]`` or ``[N,IC,IH,IW]`` → uint8 ``[OC,OH,OW]`` (or ``[N,...]``), i.e.
    conv → batch-norm → activation → pool exactly as kpu-hardware.md §5–§6.
    ``conv.run_centered(xc, parallel=True)`` is the same on centered values ``x - 128``: in, int8
    or float32 (any numeric dtype holding those integers); out, int8 ``[OC,OH,OW]`` — what chains
    of KPU layers pass along. ``to_centered(u8)`` / ``from_centered(xc)`` convert.
    ``conv.run_reference(x)`` is the plain int64 evaluation of the document (slower; used to
    cross-check the fast path); ``conv.fast`` says which path ``run`` takes, ``conv.notes`` lists
    settings that are unverified on silicon.
    Layers run as independent work items (cache-sized row tiles / channel groups) with
    single-threaded OpenBLAS per item; ``MAIXEMU_THREADS=N`` (N > 1) hands big layers' items to
    a thread pool (``parallel=False`` never does). Results never depend on the split.
    ``conv.in_shape``, ``conv.out_shape``, ``conv.macs``, ``conv.src_addr``/``dst_addr`` (bytes).

``KpuRam()``
    The 2 MiB KPU RAM as a uint8 arena. ``upload(addr_bytes, chw)``, ``download(addr_bytes,
    (C,H,W)) -> uint8 [C,H,W]``, ``view(addr_bytes, (C,H,W))`` (a writable strided view) implement
    the width-dependent row layout of kpu-hardware.md §7. ``row_addr(row) = row*64``.
    ``layout(w)``, ``kpu_bytes(c,h,w)``, ``kpu_rows(c,h,w)`` are module functions.

``plan_kpu_ram(accesses) -> KpuRamPlan``
    Static analysis of a fixed sequence of KPU-RAM reads/writes (a model's layer list) that says
    which conv outputs must really be written into the arena and which reads can take the previous
    conv's array directly — the KPU→KPU fast path, with aliasing behaving as on the chip.

Why the fast path is exact (the proof the tests check numerically):

* With ``arg_x`` a multiple of ``2**shr_x`` (every sample model), ``S + (arg_x*Sx >> shr_x)`` is
  ``Σ x·(w + ax)`` with ``ax = arg_x >> shr_x``; pad taps are ordinary taps with value
  ``pad_value``. Centering the input (``x' = x − 128``) gives ``acc = G + C_o`` with
  ``G = Σ x'·(w + ax)`` and a per-channel constant ``C_o``.
* ``|G| ≤ 128 · Σ|w + ax|`` per output channel. When that is below 2**24 every partial sum in
  any order (BLAS blocking, FMA) is an exactly representable float32 integer; otherwise the K
  dimension is split into chunks that each satisfy it and the chunks are added in float64
  (exact below 2**53). Bounds are computed from the actual weights at load.
* ``bn = floor((G + C_o)·mul / 2**shift) + add`` is evaluated as ``floor(G·m_o + c_o)`` in float64
  where ``m_o = mul·2**-shift``; this is exact when ``(|G|+|C_o|)·|mul| + |add|·2**shift < 2**53``,
  checked per channel at load. Depthwise sums are never chunked (one batched product): if
  they need chunks they run in float64.
* The activation is a function of ``bn`` alone, shared by all channels; it is tabulated over the
  interval outside which it is constant (found by bisection when it is monotone), so
  ``out = LUT[clip(bn, L, U) − L]`` (an int8 table of ``out − 128``). When it is monotone and ``mul ≥ 0`` the whole map G → out is
  non-decreasing, so max-type pools are applied to G before the table (4× fewer lookups).
  Layers with the same table share one read-only array, and a table of 32 KiB–16 MiB is read
  sequentially (a streaming max) right before a big lookup pass, so the random-access ``take``
  finds it in cache. A table of more than ``BUCKET_MIN_ENTRIES`` that only steps up by one, with
  steps at least ``2**j`` apart (the V4 models' 2-8 M entry tables), is looked up in two levels
  instead: ``first[q] + (bn − L >= step[q])`` with ``q = (bn − L) >> j`` — small tables, exact.
* Max pools before the table are computed phase by phase: the input is split once into the
  ``s×s`` phase planes of the pool window, every tap of every phase is then a contiguous slice,
  one GEMM covers all phases and the pool is the element-wise maximum of contiguous phase
  blocks — the same integers the full-resolution sums would give, in a different order.
* Selection pools (left/right-top) keep one pixel per window, so the sums are computed only
  at those pixels (a stride-2/4 convolution): same bytes, 4-16× less work.
* Anything outside these conditions (odd ``arg_x``, huge table, negative ``y_mul`` tails, ...)
  takes the exact int64 path, which is the document's arithmetic verbatim (its float64
  products, exact below 2**53, also run with single-threaded BLAS).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from .blas_threads import blas_threads
from .errors import KmodelFormatError, KmodelRuntimeError, KmodelUnsupportedError

KPU_RAM_BYTES = 2 * 1024 * 1024
KPU_ROW_BYTES = 64
KPU_ROWS = KPU_RAM_BYTES // KPU_ROW_BYTES

#: Largest activation lookup table built for the fast path (entries).
LUT_MAX_ENTRIES = 1 << 22
_F32_EXACT = 1 << 24
_F64_EXACT = 1 << 53

POOL_NAMES = {
    0: "bypass",
    1: "max_2_s2",
    2: "mean_2_s2",
    3: "max_4_s4",
    4: "mean_4_s4",
    5: "left_top_2_s2",
    6: "right_top_2_s2",
    7: "left_top_4_s4",
    8: "mean_2_s1",
    9: "max_2_s1",
}
#: pool_type -> (window, stride)
POOL_GEOMETRY = {0: (1, 1), 1: (2, 2), 2: (2, 2), 3: (4, 4), 4: (4, 4), 5: (2, 2), 6: (2, 2), 7: (4, 4), 8: (2, 1), 9: (2, 1)}
#: Selection pools: pool_type -> (stride, row offset, column offset) of the kept pixel.
_SELECTION_POOLS = {5: (2, 0, 0), 6: (2, 0, 1), 7: (4, 0, 0)}
#: Max pools: pool_type -> stride (= window). With the map G -> out non-decreasing they are
#: computed as the maximum over the ``stride**2`` phase-sampled sums (see ``_sample``).
_MAX_POOLS = {1: 2, 3: 4}
#: Pools that commute with a non-decreasing function (max and selection pools).
_POOL_COMMUTES_MONOTONE = {0, 1, 3, 5, 6, 7, 9}


def signed(value: int, bits: int) -> int:
    """Two's-complement value of the low ``bits`` bits."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value & (1 << (bits - 1)) else value


def _bits(word: int, lo: int, hi: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


# --------------------------------------------------------------------------------------------
# Registers and tables
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KpuRegisters:
    """All fields of ``kpu_layer_argument_t`` (kpu-hardware.md §1), decoded and sign-extended."""

    int_en: int
    ram_flag: int
    full_add: int
    depth_wise_layer: int
    image_src_addr: int
    image_dst_addr: int
    i_ch_num: int
    o_ch_num: int
    o_ch_num_coef: int
    i_row_wid: int
    i_col_high: int
    o_row_wid: int
    o_col_high: int
    kernel_type: int
    pad_type: int
    pool_type: int
    first_stride: int
    bypass_conv: int
    load_para: int
    dma_burst_size: int
    pad_value: int
    bwsx_base_addr: int
    load_coor: int
    load_time: int
    para_size: int
    para_start_addr: int
    coef_column_offset: int
    coef_row_offset: int
    channel_switch_addr: int
    row_switch_addr: int
    coef_size: int
    coef_group: int
    load_act: int
    active_addr: int
    wb_channel_switch_addr: int
    wb_row_switch_addr: int
    wb_group: int
    shr_w: int
    shr_x: int
    arg_w: int
    arg_x: int
    arg_add: int
    send_data_out: int
    channel_byte_num: int
    dma_total_byte: int

    # Derived geometry -----------------------------------------------------------------------
    @property
    def in_channels(self) -> int:
        return self.i_ch_num + 1

    @property
    def out_channels(self) -> int:
        return self.o_ch_num + 1

    @property
    def in_shape(self) -> tuple[int, int, int]:
        return (self.i_ch_num + 1, self.i_col_high + 1, self.i_row_wid + 1)

    @property
    def out_shape(self) -> tuple[int, int, int]:
        return (self.o_ch_num + 1, self.o_col_high + 1, self.o_row_wid + 1)

    @property
    def conv_shape(self) -> tuple[int, int, int]:
        """Shape before pooling (the conv runs at full input resolution, stride 1)."""
        return (self.o_ch_num + 1, self.i_col_high + 1, self.i_row_wid + 1)

    @property
    def kernel_size(self) -> int:
        return 3 if self.kernel_type == 1 else 1

    @property
    def depthwise(self) -> bool:
        return bool(self.depth_wise_layer)

    @property
    def weight_count(self) -> int:
        k = self.kernel_size
        return self.out_channels * (1 if self.depthwise else self.in_channels) * k * k

    @property
    def macs(self) -> int:
        _, h, w = self.in_shape
        return self.weight_count * h * w

    def validate_layout(self, *, offset: int | None = None, strict: bool = True) -> list[str]:
        """Check the redundant layout/DMA fields against the sizes (kpu-hardware.md §1, §7).

        Returns the list of mismatches; raises KmodelFormatError for the first one if ``strict``.
        """
        ic, ih, iw = self.in_shape
        oc, oh, ow = self.out_shape
        gi, rli, _ = layout(iw)
        go, rlo, _ = layout(ow)
        checks = [
            ("channel_switch_addr", self.channel_switch_addr, rli * ih),
            ("row_switch_addr", self.row_switch_addr, rli),
            ("coef_group", self.coef_group, gi),
            ("wb_channel_switch_addr", self.wb_channel_switch_addr, rlo * oh),
            ("wb_row_switch_addr", self.wb_row_switch_addr, rlo),
            ("wb_group", self.wb_group, go),
            ("channel_byte_num", self.channel_byte_num, ow * oh - 1),
            ("dma_total_byte", self.dma_total_byte, ow * oh * oc - 1),
        ]
        window, stride = POOL_GEOMETRY[self.pool_type]
        checks.append(("o_row_wid", ow, iw // stride))
        checks.append(("o_col_high", oh, ih // stride))
        problems = [f"register {name} is {got}, expected {want}" for name, got, want in checks if got != want]
        if problems and strict:
            raise KmodelFormatError(
                f"KPU layer registers disagree with its sizes: {problems[0]}", offset=offset, field=problems[0].split()[1]
            )
        return problems


def decode_registers(words: Sequence[int], *, offset: int | None = None) -> KpuRegisters:
    """Decode the 12 register words; reject settings no simulation models."""
    if len(words) != 12:
        raise KmodelFormatError(f"a KPU layer has 12 register words, got {len(words)}", offset=offset, field="layer registers")
    w = [int(v) & 0xFFFFFFFFFFFFFFFF for v in words]
    b = _bits
    regs = KpuRegisters(
        int_en=b(w[0], 0, 0),
        ram_flag=b(w[0], 1, 1),
        full_add=b(w[0], 2, 2),
        depth_wise_layer=b(w[0], 3, 3),
        image_src_addr=b(w[1], 0, 14),
        image_dst_addr=b(w[1], 32, 46),
        i_ch_num=b(w[2], 0, 9),
        o_ch_num=b(w[2], 32, 41),
        o_ch_num_coef=b(w[2], 48, 57),
        i_row_wid=b(w[3], 0, 9),
        i_col_high=b(w[3], 10, 18),
        o_row_wid=b(w[3], 32, 41),
        o_col_high=b(w[3], 42, 50),
        kernel_type=b(w[4], 0, 2),
        pad_type=b(w[4], 3, 3),
        pool_type=b(w[4], 4, 7),
        first_stride=b(w[4], 8, 8),
        bypass_conv=b(w[4], 9, 9),
        load_para=b(w[4], 10, 10),
        dma_burst_size=b(w[4], 16, 23),
        pad_value=b(w[4], 24, 31),
        bwsx_base_addr=b(w[4], 32, 63),
        load_coor=b(w[5], 0, 0),
        load_time=b(w[5], 1, 6),
        para_size=b(w[5], 15, 31),
        para_start_addr=b(w[5], 32, 63),
        coef_column_offset=b(w[6], 0, 3),
        coef_row_offset=b(w[6], 4, 15),
        channel_switch_addr=b(w[7], 0, 14),
        row_switch_addr=b(w[7], 16, 19),
        coef_size=b(w[7], 20, 27),
        coef_group=b(w[7], 28, 30),
        load_act=b(w[7], 31, 31),
        active_addr=b(w[7], 32, 63),
        wb_channel_switch_addr=b(w[8], 0, 14),
        wb_row_switch_addr=b(w[8], 16, 19),
        wb_group=b(w[8], 20, 22),
        shr_w=b(w[9], 0, 3),
        shr_x=b(w[9], 4, 7),
        arg_w=signed(b(w[9], 8, 31), 24),
        arg_x=signed(b(w[9], 32, 55), 24),
        arg_add=signed(b(w[10], 0, 39), 40),
        send_data_out=b(w[11], 0, 0),
        channel_byte_num=b(w[11], 16, 31),
        dma_total_byte=b(w[11], 32, 63),
    )
    unsupported = [
        ("full_add", regs.full_add, "streams raw sums (SDK helper only)"),
        ("pad_type", regs.pad_type, "unknown padding semantics"),
        ("first_stride", regs.first_stride, "not modelled by any simulation"),
        ("bypass_conv", regs.bypass_conv, "not modelled by any simulation"),
        ("coef_column_offset", regs.coef_column_offset, "not modelled"),
        ("coef_row_offset", regs.coef_row_offset, "not modelled"),
    ]
    for name, value, why in unsupported:
        if value:
            raise KmodelUnsupportedError(f"KPU register {name}={value} is not supported ({why})", offset=offset, field=name)
    if regs.kernel_type not in (0, 1):
        raise KmodelUnsupportedError(f"KPU kernel_type {regs.kernel_type} (only 0=1x1 and 1=3x3 exist)", offset=offset, field="kernel_type")
    if regs.pool_type not in POOL_NAMES:
        raise KmodelUnsupportedError(f"KPU pool_type {regs.pool_type} is undefined", offset=offset, field="pool_type")
    if regs.depthwise and regs.i_ch_num != regs.o_ch_num:
        raise KmodelFormatError(
            f"depthwise KPU layer with {regs.in_channels} input and {regs.out_channels} output channels",
            offset=offset,
            field="depth_wise_layer",
        )
    return regs


@dataclass(frozen=True)
class BatchNorm:
    """Per-output-channel ``norm_mul`` (s24), ``norm_add`` (s32), ``norm_shift`` (u4), int64 arrays."""

    mul: np.ndarray
    add: np.ndarray
    shift: np.ndarray


def decode_batchnorm(words: np.ndarray) -> BatchNorm:
    w = np.asarray(words, dtype=np.uint64)
    mul = (w & np.uint64(0xFFFFFF)).astype(np.int64)
    mul = np.where(mul >= 1 << 23, mul - (1 << 24), mul)
    add = ((w >> np.uint64(24)) & np.uint64(0xFFFFFFFF)).astype(np.int64)
    add = np.where(add >= 1 << 31, add - (1 << 32), add)
    shift = ((w >> np.uint64(56)) & np.uint64(0xF)).astype(np.int64)
    return BatchNorm(mul=mul, add=add, shift=shift)


@dataclass(frozen=True)
class ActivationTable:
    """16 segments: ``x_start`` (s36), ``y_mul`` (s16), ``shift`` (u8), ``bias`` (u8), int64 arrays."""

    x_start: np.ndarray
    y_mul: np.ndarray
    shift: np.ndarray
    bias: np.ndarray


def decode_activation(data: bytes | np.ndarray) -> ActivationTable:
    """Decode the 144-byte table (18 u64). Segments 8–15 take their bias from the second bias word."""
    raw = np.frombuffer(bytes(data), dtype="<u8") if not isinstance(data, np.ndarray) else np.asarray(data, dtype=np.uint64)
    if raw.size != 18:
        raise KmodelFormatError(f"activation table has {raw.size * 8} bytes, expected 144", field="activation table")
    seg = raw[:16]
    shift = (seg & np.uint64(0xFF)).astype(np.int64)
    y_mul = ((seg >> np.uint64(8)) & np.uint64(0xFFFF)).astype(np.int64)
    y_mul = np.where(y_mul >= 1 << 15, y_mul - (1 << 16), y_mul)
    xs = ((seg >> np.uint64(24)) & np.uint64((1 << 36) - 1)).astype(np.int64)
    xs = np.where(xs >= 1 << 35, xs - (1 << 36), xs)
    bias = np.frombuffer(raw[16:18].astype("<u8").tobytes(), dtype=np.uint8).astype(np.int64)
    return ActivationTable(x_start=xs, y_mul=y_mul, shift=shift, bias=bias)


def round_shift(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """nncase's banker-style ``round_shift`` (kpu-hardware.md §5.3), int64, vectorised.

    ``s`` is clamped to 60; for the |t| < 2**59 the KPU can produce that changes nothing.
    """
    t = np.asarray(t, dtype=np.int64)
    s = np.minimum(np.asarray(s, dtype=np.int64), 60)
    s1 = np.maximum(s, 1)
    q = t >> s1
    f = t & ((np.int64(1) << s1) - 1)
    half = np.int64(1) << (s1 - 1)
    sign = np.where(t < 0, -1, 1)
    r = np.where(f < half, q, np.where(f > half, q + sign, np.where(q & 1, q + sign, q)))
    return np.where(s == 0, t, r)


def activate(bn: np.ndarray, act: ActivationTable) -> np.ndarray:
    """Exact activation (kpu-hardware.md §5.3) of an int64 array → int64 values 0..255.

    Raises KmodelRuntimeError if some value lies at or below every ``x_start``.
    """
    bn = np.asarray(bn, dtype=np.int64)
    idx = np.full(bn.shape, -1, dtype=np.int64)
    for i in range(16):
        idx[bn > act.x_start[i]] = i
    if (idx < 0).any():
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start")
    t = (bn - act.x_start[idx]) * act.y_mul[idx]
    r = round_shift(t, act.shift[idx]) + act.bias[idx]
    return np.clip(r, 0, 255)


def _round_shift_int(t: int, s: int) -> int:
    if s == 0:
        return t
    q = t >> s
    f = t & ((1 << s) - 1)
    half = 1 << (s - 1)
    sign = -1 if t < 0 else 1
    if f < half:
        return q
    if f > half:
        return q + sign
    return q + sign if q & 1 else q


def _activate_scalar(bn: int, act: ActivationTable) -> int:
    """Python-int version of :func:`activate` for one value (used for bisection at load time)."""
    xs = act.x_start
    idx = -1
    for i in range(16):
        if bn > int(xs[i]):
            idx = i
    if idx < 0:
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start")
    t = (bn - int(xs[idx])) * int(act.y_mul[idx])
    r = _round_shift_int(t, min(int(act.shift[idx]), 60)) + int(act.bias[idx])
    return min(max(r, 0), 255)


_LUT_CACHE: dict[tuple, np.ndarray] = {}
#: The cache outlives models: bound its bytes, not only its entry count (V4 tables reach 16 MB).
_LUT_CACHE_MAX_BYTES = 64 << 20
_LUT_CACHE_BYTES = 0
#: Table entries computed per numpy pass (bounds the int64 temporaries to a few MB).
_LUT_PIECE = 1 << 18


#: Tables between these sizes (bytes) are streamed into cache before a lookup pass that makes
#: at least ``size / _LUT_PREFETCH_PER`` lookups. Measured: the 254 KiB tables of the V3
#: models and the 0.5-8 MiB tables of the V4 ones (which then come from L3, not DRAM) both gain.
_LUT_PREFETCH_MIN = 32 << 10
_LUT_PREFETCH_MAX = 16 << 20
_LUT_PREFETCH_PER = 64
_CENTERED_CACHE: dict[tuple, np.ndarray] = {}
_CENTERED_CACHE_BYTES = 0


def _centered_lut(act: ActivationTable, lo: int, hi: int) -> np.ndarray:
    """``to_centered(activation_lut(...))``, one shared read-only array per table: layers with
    the same activation and range (most of a model's) then look up in the same cached memory
    instead of each evicting the other's copy. Bounded like the ``activation_lut`` cache."""
    global _CENTERED_CACHE_BYTES
    key = (act.x_start.tobytes(), act.y_mul.tobytes(), act.shift.tobytes(), act.bias.tobytes(), lo, hi)
    hit = _CENTERED_CACHE.get(key)
    if hit is not None:
        return hit
    lut = to_centered(activation_lut(act, lo, hi))
    lut.flags.writeable = False
    if len(_CENTERED_CACHE) > 64 or _CENTERED_CACHE_BYTES + lut.nbytes > _LUT_CACHE_MAX_BYTES:
        _CENTERED_CACHE.clear()
        _CENTERED_CACHE_BYTES = 0
    _CENTERED_CACHE[key] = lut
    _CENTERED_CACHE_BYTES += lut.nbytes
    return lut


def activation_lut(act: ActivationTable, lo: int, hi: int) -> np.ndarray:
    """``activate(arange(lo, hi+1))`` as uint8, computed segment by segment (cached per table)."""
    key = (act.x_start.tobytes(), act.y_mul.tobytes(), act.shift.tobytes(), act.bias.tobytes(), lo, hi)
    hit = _LUT_CACHE.get(key)
    if hit is not None:
        return hit
    out = np.empty(hi - lo + 1, dtype=np.uint8)
    xs = [int(v) for v in act.x_start]
    filled = np.zeros(hi - lo + 1, dtype=bool)
    for i in range(16):
        d_lo = max(xs[i] + 1, lo)
        d_hi = min(min(xs[i + 1 :], default=hi), hi)
        if d_lo > d_hi:
            continue
        sh = min(int(act.shift[i]), 60)
        # in pieces: the int64 temporaries of a 16M-entry table would otherwise take ~1 GB
        for p_lo in range(d_lo, d_hi + 1, _LUT_PIECE):
            p_hi = min(p_lo + _LUT_PIECE - 1, d_hi)
            bn = np.arange(p_lo, p_hi + 1, dtype=np.int64)
            t = (bn - xs[i]) * int(act.y_mul[i])
            r = round_shift(t, np.int64(sh)) + int(act.bias[i])
            out[p_lo - lo : p_hi - lo + 1] = np.clip(r, 0, 255)
        filled[d_lo - lo : d_hi - lo + 1] = True
    if not filled.all():
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start")
    global _LUT_CACHE_BYTES
    if len(_LUT_CACHE) > 64 or _LUT_CACHE_BYTES + out.nbytes > _LUT_CACHE_MAX_BYTES:
        _LUT_CACHE.clear()
        _LUT_CACHE_BYTES = 0
    _LUT_CACHE[key] = out
    _LUT_CACHE_BYTES += out.nbytes
    return out


# --------------------------------------------------------------------------------------------
# KPU RAM layout
# --------------------------------------------------------------------------------------------


def layout(width: int) -> tuple[int, int, int]:
    """(groups, row_len, row_pitch) of a map of this width (kpu-hardware.md §7)."""
    if width <= 16:
        return 4, 1, 16
    if width <= 32:
        return 2, 1, 32
    return 1, (width + 63) // 64, 64


def kpu_rows(c: int, h: int, w: int) -> int:
    groups, row_len, _ = layout(w)
    return row_len * h * ((c + groups - 1) // groups)


def kpu_bytes(c: int, h: int, w: int) -> int:
    return kpu_rows(c, h, w) * KPU_ROW_BYTES


def row_addr(row: int) -> int:
    return row * KPU_ROW_BYTES


def layout_view(arena: np.ndarray, base: int, shape: Sequence[int]) -> "np.ndarray | _ChannelView":
    """Writable no-copy access to a ``[C,H,W]`` map stored at byte ``base`` of ``arena``.

    Width > 32: a plain strided ndarray view. Widths ≤ 32 pack 2 or 4 channels per row, which
    one ndarray view cannot express for a channel count that is not a multiple of the group, so
    a :class:`_ChannelView` with ``read()``/``write()`` is returned instead.
    """
    c, h, w = (int(v) for v in shape)
    groups, row_len, pitch = layout(w)
    blocks = (c + groups - 1) // groups
    size = blocks * row_len * h * KPU_ROW_BYTES
    if base < 0 or base + size > arena.size:
        raise KmodelRuntimeError(f"a {c}x{h}x{w} map at KPU byte {base} runs past the end of the 2 MiB KPU RAM")
    region = arena[base : base + size]
    if groups == 1:
        return region.reshape(blocks, h, row_len * KPU_ROW_BYTES)[:, :, :w]
    strided = np.lib.stride_tricks.as_strided(
        region, shape=(blocks, groups, h, w), strides=(h * KPU_ROW_BYTES, pitch, KPU_ROW_BYTES, 1), writeable=True
    )
    return _ChannelView(strided, c)


class _ChannelView:
    """[C,H,W] access to a (blocks, groups, H, W) strided view without copying."""

    def __init__(self, strided: np.ndarray, channels: int):
        self.strided = strided
        self.channels = channels
        self.shape = (channels,) + strided.shape[2:]

    def read(self) -> np.ndarray:
        b, g, h, w = self.strided.shape
        return np.ascontiguousarray(self.strided).reshape(b * g, h, w)[: self.channels]

    def write(self, chw: np.ndarray) -> None:
        b, g, h, w = self.strided.shape
        full = b * g
        if full == self.channels:
            self.strided[...] = chw.reshape(b, g, h, w)
            return
        whole = self.channels // g
        if whole:
            self.strided[:whole] = chw[: whole * g].reshape(whole, g, h, w)
        rest = self.channels - whole * g
        if rest:
            self.strided[whole, :rest] = chw[whole * g :]


def layout_indices(base: int, shape: Sequence[int]) -> np.ndarray:
    """Flat byte addresses of every element of a ``[C,H,W]`` map (for analysis and tests)."""
    c, h, w = (int(v) for v in shape)
    groups, row_len, pitch = layout(w)
    ci = np.arange(c, dtype=np.int64)[:, None, None]
    yi = np.arange(h, dtype=np.int64)[None, :, None]
    xi = np.arange(w, dtype=np.int64)[None, None, :]
    return base + (ci // groups) * row_len * h * 64 + (ci % groups) * pitch + yi * row_len * 64 + xi


class KpuRam:
    """The 2 MiB KPU RAM: a zeroed uint8 arena with row-layout upload/download."""

    def __init__(self, size: int = KPU_RAM_BYTES):
        self.arena = np.zeros(size, dtype=np.uint8)

    def view(self, addr: int, shape: Sequence[int]) -> "np.ndarray | _ChannelView":
        """No-copy access to the map at byte ``addr`` (see :func:`layout_view`)."""
        return layout_view(self.arena, addr, shape)

    def upload(self, addr: int, chw: np.ndarray) -> None:
        """Store a dense ``[C,H,W]`` uint8 map at byte ``addr`` with the row layout."""
        chw = np.asarray(chw)
        if chw.ndim != 3:
            raise KmodelRuntimeError(f"KPU upload needs a [C,H,W] map, got shape {chw.shape}")
        v = layout_view(self.arena, addr, chw.shape)
        if isinstance(v, _ChannelView):
            v.write(chw.astype(np.uint8, copy=False))
        else:
            v[...] = chw

    def download(self, addr: int, shape: Sequence[int]) -> np.ndarray:
        """Read a ``[C,H,W]`` map stored at byte ``addr`` into a dense uint8 array."""
        v = layout_view(self.arena, addr, shape)
        if isinstance(v, _ChannelView):
            return v.read()
        return np.ascontiguousarray(v)

    def clear(self) -> None:
        self.arena[:] = 0


# --------------------------------------------------------------------------------------------
# Pooling
# --------------------------------------------------------------------------------------------


def _floor_div(s: np.ndarray, d: int) -> np.ndarray:
    if s.dtype.kind == "f":
        return np.floor(s * (1.0 / d)).astype(s.dtype, copy=False)
    return s // d


def to_centered(x: np.ndarray) -> np.ndarray:
    """uint8 → int8 ``x - 128`` (flip the top bit): the engine's inter-layer representation."""
    return (np.asarray(x, dtype=np.uint8) ^ np.uint8(0x80)).view(np.int8)


def from_centered(xc: np.ndarray) -> np.ndarray:
    """Centered values (int8 or float32 holding integers) → uint8 ``x``."""
    xc = np.asarray(xc)
    if xc.dtype == np.int8:
        return (xc.view(np.uint8) ^ np.uint8(0x80))
    return (xc + np.float32(128)).astype(np.uint8)


def pool(a: np.ndarray, pool_type: int) -> np.ndarray:
    """Apply a KPU pool (kpu-hardware.md §6) over the last two axes of ``a`` (any real dtype).

    Integer division floors; for float arrays holding integers the result is the same floor.
    """
    if pool_type == 0:
        return a
    if pool_type in (2, 4, 8) and a.dtype.kind in "iu" and a.dtype.itemsize < 4:
        # mean pools sum up to 16 values: widen, floor-divide, narrow back (values stay in range)
        return pool(a.astype(np.int32), pool_type).astype(a.dtype)
    h, w = a.shape[-2:]
    if pool_type in (1, 2):
        # rows first (two whole-row streams), then the column pairs of half as much data
        oh, ow = h // 2, w // 2
        top, bottom = a[..., 0 : 2 * oh : 2, : 2 * ow], a[..., 1 : 2 * oh : 2, : 2 * ow]
        if pool_type == 1:
            r = np.maximum(top, bottom)
            return np.maximum(r[..., 0::2], r[..., 1::2])
        r = top + bottom
        return _floor_div(r[..., 0::2] + r[..., 1::2], 4)
    if pool_type in (5, 6):
        oh, ow = h // 2, w // 2
        a00 = a[..., 0 : 2 * oh : 2, 0 : 2 * ow : 2]
        if pool_type == 5:
            return np.ascontiguousarray(a00)
        return np.ascontiguousarray(a[..., 0 : 2 * oh : 2, 1 : 2 * ow : 2])
    if pool_type in (3, 4, 7):
        oh, ow = h // 4, w // 4
        if pool_type == 7:
            return np.ascontiguousarray(a[..., 0 : 4 * oh : 4, 0 : 4 * ow : 4])
        blocks = a[..., : 4 * oh, : 4 * ow].reshape(a.shape[:-2] + (oh, 4, ow, 4))
        if pool_type == 3:
            return blocks.max(axis=(-3, -1))
        return _floor_div(blocks.sum(axis=(-3, -1), dtype=a.dtype if a.dtype.kind == "f" else np.int64), 16)
    if pool_type == 8:
        pad = [(0, 0)] * (a.ndim - 2) + [(0, 1), (0, 1)]
        p = np.pad(a, pad, mode="edge")
        s = p[..., :-1, :-1] + p[..., 1:, :-1]
        s += p[..., :-1, 1:]
        s += p[..., 1:, 1:]
        return _floor_div(s, 4)
    if pool_type == 9:
        # max over the 2x2 window at each pixel, the window cut at the bottom/right edge (the
        # same as padding with -inf): rows first, then columns, no padded copy
        r = np.empty_like(a)
        np.maximum(a[..., :-1, :], a[..., 1:, :], out=r[..., :-1, :])
        r[..., -1, :] = a[..., -1, :]
        out = np.empty_like(a)
        np.maximum(r[..., :, :-1], r[..., :, 1:], out=out[..., :, :-1])
        out[..., :, -1] = r[..., :, -1]
        return out
    raise KmodelUnsupportedError(f"KPU pool_type {pool_type} is undefined", field="pool_type")


# --------------------------------------------------------------------------------------------
# The convolution
# --------------------------------------------------------------------------------------------


def _chunks_for_bound(absw: np.ndarray, xmax: int, limit: int) -> list[tuple[int, int]] | None:
    """Split the K axis so that ``xmax * Σ|w|`` over every chunk and row stays below ``limit``."""
    oc, k = absw.shape
    if k == 0:
        return [(0, 0)]
    per_tap = absw.max(axis=0).astype(np.int64) * xmax
    if (per_tap >= limit).any():
        return None
    cs = np.concatenate([np.zeros((oc, 1), dtype=np.int64), np.cumsum(absw.astype(np.int64), axis=1)], axis=1)
    chunks = []
    start = 0
    while start < k:
        # largest end with max_o (cs[o,end]-cs[o,start]) * xmax < limit
        span = (cs[:, start + 1 :] - cs[:, start : start + 1]).max(axis=0) * xmax
        ok = np.nonzero(span < limit)[0]
        end = start + 1 + int(ok[-1])
        chunks.append((start, end))
        start = end
    return chunks


@dataclass
class _FastPlan:
    m: np.ndarray  # float64 [OC,1]: mul * 2**-shift
    c: np.ndarray  # float64 [OC,1]: (C*mul)*2**-shift + add - L
    span: float  # U - L
    lut: np.ndarray  # int8 centered outputs (out - 128), index = bn - L
    pool_first: bool
    #: an int64 view of most of a big table: reading it sequentially (a fast streaming max)
    #: pulls the table into cache before the random-access take (measured: 2x faster take)
    lut_words: np.ndarray | None = None
    #: two-level form of a big unit-step table (see ``unit_step_buckets``): (2**-j, first
    #: value of each bucket (int8), the step inside each bucket (float64, +inf if none))
    buckets: tuple[float, np.ndarray, np.ndarray] | None = None


#: Tables bigger than this (entries) are looked up in two levels when they allow it: a random
#: take from a multi-MiB table costs more than the five passes over small ones.
BUCKET_MIN_ENTRIES = 1 << 20
#: ... and only with buckets at least this wide (smaller ones make the bucket tables big).
_BUCKET_MIN_WIDTH = 1 << 8


def unit_step_buckets(lut: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
    """A table that only ever steps up by one, with steps at least ``2**j`` apart, as buckets.

    Bucket ``q`` covers indices ``[q*2**j, (q+1)*2**j)``; it holds at most one step, so
    ``lut[i] == first[q] + (i >= step[q])`` with ``q = i >> j`` (``step[q]`` the index where the
    value goes up, +inf if it does not in that bucket). Returns ``(2**-j, first, step)`` or None.
    """
    n = lut.size
    d = np.diff(lut.astype(np.int16))
    where = np.flatnonzero(d)
    if where.size == 0 or (d[where] != 1).any():
        return None
    steps = where + 1  # lut[steps[k]] == lut[steps[k] - 1] + 1
    gap = int(np.diff(steps).min()) if steps.size > 1 else n
    j = min(gap, n).bit_length() - 1
    if (1 << j) < _BUCKET_MIN_WIDTH:
        return None
    width = 1 << j
    nb = (n - 1) // width + 1
    first = np.ascontiguousarray(lut[::width][:nb])
    step = np.full(nb, np.inf)
    inner = steps[steps % width != 0]  # a step at a bucket start is already in first[q]
    step[inner >> j] = inner.astype(np.float64)
    return 1.0 / width, first, step


class KpuConv:
    """One prepared KPU convolution layer. See the module docstring for the contract."""

    #: Target size of one row tile's intermediates (bytes); tests lower it to exercise tiling.
    TILE_BYTES = 1 << 22
    #: (file offset, field name) of this layer's activation table, set by the loader, so a run
    #: error from a corrupt table ("below every segment start") names where the table is.
    act_where: tuple[int | None, str] = (None, "KPU activation table")

    def __init__(self) -> None:  # use prepare()
        self.regs: KpuRegisters
        self.notes: list[str] = []

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
        if isinstance(weights, np.ndarray):
            wflat = weights.reshape(-1).astype(np.int64)
        else:
            dt = "<u1" if weight_bytes == 1 else "<u2"
            need = regs.weight_count * weight_bytes
            if len(weights) < need:
                raise KmodelFormatError(f"KPU weights need {need} bytes, got {len(weights)}", field="weights")
            wflat = np.frombuffer(bytes(weights[:need]), dtype=dt).astype(np.int64)
        if wflat.size != regs.weight_count:
            raise KmodelFormatError(f"KPU layer needs {regs.weight_count} weights, got {wflat.size}", field="weights")
        self.weights = wflat.reshape(oc, taps_per_out)  # [oc][ic][ky][kx] flattened per oc
        self.bn = bn if isinstance(bn, BatchNorm) else decode_batchnorm(np.asarray(bn))
        if self.bn.mul.size != oc:
            raise KmodelFormatError(f"batch-norm table has {self.bn.mul.size} entries for {oc} output channels", field="batchnorm")
        self.act = act if isinstance(act, ActivationTable) else decode_activation(act)
        self.n_mult = 1 if regs.depthwise else ic
        self.taps = taps_per_out
        sw = self.weights.sum(axis=1)
        self.sum_w = sw
        # per-channel constant of the literal formula: (arg_w*Sw >> shr_w) + arg_add*n
        self.const_w = (regs.arg_w * sw) >> regs.shr_w
        self.const_w = self.const_w + regs.arg_add * self.n_mult
        # exact reference GEMM operands (float64; exact, |values| tiny vs 2**53)
        self._wref = self.weights.astype(np.float64)
        self._fast: _FastPlan | None = None
        #: (stride, ((dy, dx), ...)): the sums are computed only at these pixel phases of the
        #: pooled grid (selection pools: one phase; max pools: all, then their maximum)
        self._sample: tuple[int, tuple[tuple[int, int], ...]] | None = None
        self._gemm_chunks: list[tuple[int, int]] | None = None
        #: work items per (workers, TILE_BYTES): the split is fixed for a layer
        self._items: dict[tuple[int, int], list[tuple[int, int, int, int]]] = {}
        if fast:
            try:
                self._prepare_fast()
            except _NoFastPath as why:
                self.notes.append(f"exact int64 path: {why}")
        if (self.act.y_mul < 0).any():
            self.notes.append("negative activation y_mul: nncase's rounding quirk for negative products is reproduced (unverified on silicon)")
        if min(regs.in_shape[1:] + regs.out_shape[1:]) < 4:
            self.notes.append("maps smaller than 4x4 (the v0.1 compiler never emits them): not verified on hardware")
        if self.pool_type in (8, 9) or self.pool_type in (2, 4):
            self.notes.append(f"pool {POOL_NAMES[self.pool_type]}: edge handling / rounding follows the simulation, unverified on silicon")
        acc_bound = int(np.abs(self.weights).sum(axis=1).max(initial=0)) * 255 * 2 + int(np.abs(self.const_w).max(initial=0))
        if acc_bound >= 1 << 35:
            self.notes.append("accumulator may exceed 36 bits (silicon behaviour unknown)")
        return self

    def _prepare_fast(self) -> None:
        regs = self.regs
        if regs.arg_x % (1 << regs.shr_x):
            raise _NoFastPath("arg_x is not a multiple of 2**shr_x")
        ax = regs.arg_x >> regs.shr_x
        wf = self.weights + ax  # int64 [OC, taps]
        # acc = Σ x'·(w+ax) + 128·Σ(w+ax) + const_w
        C = 128 * wf.sum(axis=1) + self.const_w  # int64 per channel (python-int safe: small)
        absw = np.abs(wf)
        chunks = _chunks_for_bound(absw, 128, _F32_EXACT)
        if chunks is None or len(chunks) > 4 or (self.depthwise and len(chunks) > 1):
            # (depthwise sums run as one batched product, so they cannot be split into chunks)
            bound64 = int(absw.sum(axis=1).max(initial=0)) * 128
            if bound64 >= _F64_EXACT:
                raise _NoFastPath("sums exceed float64's exact range")
            self._gemm_dtype = np.float64
            self._gemm_chunks = [(0, wf.shape[1])]
        else:
            self._gemm_dtype = np.float32
            self._gemm_chunks = chunks
        self._wfast = wf.astype(self._gemm_dtype)
        # selection pools keep one pixel per window: compute the conv only there (4-16x less work)
        sel = _SELECTION_POOLS.get(self.pool_type)
        self._sample = None if sel is None else (sel[0], ((sel[1], sel[2]),))
        if self.depthwise:
            self._wfast_dw = self._wfast.reshape(wf.shape[0], 1, wf.shape[1]) if self.k == 3 else self._wfast.reshape(-1, 1, 1)
        # G bounds per channel (exact: x' in [-128,127])
        gmax = np.where(wf > 0, 127 * wf, -128 * wf).sum(axis=1)
        gmin = np.where(wf > 0, -128 * wf, 127 * wf).sum(axis=1)
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
        if bmin <= int(act.x_start.min()):
            raise _NoFastPath("batch-norm range reaches below the first activation segment")
        monotone = self._act_monotone(bmin, bmax)
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
        if hi - lo + 1 > self._lut_max_entries:
            raise _NoFastPath(f"activation table would need {hi - lo + 1} entries")
        # int8 "x - 128" entries: a 4x smaller table stays in cache next to the data streams,
        # and layer outputs are 4x smaller (the next layer widens them while copying anyway)
        lut = _centered_lut(act, lo, hi)
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
        pool_first = monotone and bool((mul >= 0).all()) and self.pool_type in _POOL_COMMUTES_MONOTONE
        words = lut[: lut.size // 8 * 8].view(np.int64) if _LUT_PREFETCH_MIN <= lut.size <= _LUT_PREFETCH_MAX else None
        buckets = unit_step_buckets(lut) if lut.size > BUCKET_MIN_ENTRIES else None
        if buckets is not None:
            words = None
        self._fast = _FastPlan(m=m, c=c, span=float(hi - lo), lut=lut, pool_first=pool_first, lut_words=words, buckets=buckets)
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
        return self._fast is not None

    # ---------------------------------------------------------------- execution
    def run(self, x: np.ndarray) -> np.ndarray:
        """uint8 ``[IC,IH,IW]`` (or ``[N,...]``) → uint8 ``[OC,OH,OW]`` (or ``[N,...]``)."""
        x = np.asarray(x)
        if x.ndim == 4:
            return np.stack([self.run(xi) for xi in x])
        self._check_shape(x)
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
        flat = _scratch("pad", ic * ((h + 2) * wp + 2), dtype).reshape(ic, (h + 2) * wp + 2)
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
        cols = _scratch("cols", n_in * 9 * length, self._gemm_dtype).reshape(n_in, 9, length)
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
        stride, ((dy, dx),) = self._sample
        ow = self.out_shape[2]
        rows = y1 - y0
        oc = o1 - o0
        cin = grid[o0:o1] if self.depthwise else grid
        n_in = cin.shape[0]
        k = self.k
        cols = _scratch("cols", n_in * k * k * rows * ow, self._gemm_dtype).reshape(n_in, k * k, rows, ow)
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
        st = self._sample[0]
        ic, h, w = self.in_shape
        oh, ow = self.out_shape[1:]
        if self.k == 1:
            planes = _scratch("pad", ic * oh * st * st * ow, self._gemm_dtype).reshape(ic, oh, st, st, ow)
            view = xc[:, : oh * st, : ow * st].reshape(ic, oh, st, ow, st).transpose(0, 1, 2, 4, 3)
            np.copyto(planes, view, casting="unsafe")
            return planes.reshape(ic, oh, st * st, ow)
        grid = self._padded_flat(xc, self._gemm_dtype)[:, : (h + 2) * (w + 2)].reshape(ic, h + 2, w + 2)
        ph, pw = -(-(h + 2) // st), -(-(w + 2) // st)
        flat = _scratch("planes", ic * st * st * (ph * pw + 2), self._gemm_dtype).reshape(ic, st * st, ph * pw + 2)
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
        cols = _scratch("cols", n_in * 9 * n_ph * length, self._gemm_dtype).reshape(n_in, 9, n_ph, length)
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
        if len(chunks) == 1:
            return np.matmul(wm, mat, out=_scratch("g", wm.shape[0] * mat.shape[1], wm.dtype).reshape(wm.shape[0], mat.shape[1]))
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
        oc, ph, pw = g.shape
        n = oc * ph * pw
        buf = _scratch("bn", n, np.float64).reshape(oc, ph, pw)
        np.multiply(g, plan.m[o0:o1, :, None], out=buf)
        buf += plan.c[o0:o1, :, None]
        np.clip(buf, 0.0, plan.span, out=buf)
        idx = _scratch("idx", n, np.intp).reshape(oc, ph, pw)
        if plan.buckets is not None:
            # i = floor(buf) >= 0; bucket q = floor(buf * 2**-j) (exact: a power of two) and
            # floor(buf) >= step  <=>  buf >= step for the integer steps
            scale, first, step = plan.buckets
            np.multiply(buf, scale, out=idx, casting="unsafe")
            up = np.greater_equal(buf, step.take(idx))
            out = first.take(idx)
            np.add(out, up, out=out, casting="unsafe")
            return out
        np.copyto(idx, buf, casting="unsafe")
        if plan.lut_words is not None and n * _LUT_PREFETCH_PER >= plan.lut.size:
            plan.lut_words.max()
        # (measured in the models: this in-place clip + cast + default-mode take is faster than
        # fusing the add into an integer cast and clipping with take(mode="clip"))
        return plan.lut.take(idx)

    def _run_item(self, src: np.ndarray, item: tuple[int, int, int, int]) -> tuple[tuple[int, int, int, int], np.ndarray]:
        y0, y1, o0, o1 = item
        plan = self._fast
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
        plan = self._fast
        if plan is None:
            # single-threaded BLAS like the fast path: a multi-threaded OpenBLAS call on these
            # small products costs more in thread hand-offs than the product (measured: a
            # 256x4x5 layer took 40 ms instead of well under 1 ms on a busy machine)
            with blas_threads(1):
                return to_centered(self.run_reference(from_centered(xc)))
        src = self._conv_source(xc)
        workers = _workers() if parallel and self._worth_threads() else 1
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


_SCRATCH = threading.local()
_POOL = None
_POOL_LOCK = threading.Lock()


def _workers() -> int:
    """Threads used per layer: ``MAIXEMU_THREADS`` (default 1, at most 8).

    Measured on the 2-core development machine: the layers' numpy work is short calls whose
    Python glue holds the GIL and whose data moves at memory speed, so a second thread made face
    detection 5-25 % slower, not faster (a pure GEMM does scale 2x). Sequential is the default;
    the threaded path stays available (and tested) for machines where it pays.
    """
    env = os.environ.get("MAIXEMU_THREADS", "")
    if env.isdigit() and int(env) > 0:
        return min(int(env), 8)
    return 1


def _pool():
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            from concurrent.futures import ThreadPoolExecutor

            _POOL = ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="maixemu-kpu")
        return _POOL


def _bmm(w: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``w @ cols`` (depthwise: [O,1,9] @ [O,9,N]) into a reused per-thread buffer."""
    shape = (cols.shape[0], 1, cols.shape[2])
    return np.matmul(w, cols, out=_scratch("g", shape[0] * shape[2], cols.dtype).reshape(shape))


def _converted(x: np.ndarray, dtype) -> np.ndarray:
    """``x.astype(dtype)`` into a reused per-thread buffer (a layer's GEMM source)."""
    out = _scratch("src", x.size, dtype).reshape(x.shape)
    np.copyto(out, x, casting="unsafe")
    return out


def _scratch(name: str, size: int, dtype) -> np.ndarray:
    """A per-thread reusable flat buffer (grown on demand) for intermediates never returned."""
    dtype = np.dtype(dtype)
    key = (name, dtype.str)
    pool_ = getattr(_SCRATCH, "buffers", None)
    if pool_ is None:
        pool_ = _SCRATCH.buffers = {}
    buf = pool_.get(key)
    if buf is None or buf.size < size:
        buf = np.empty(max(size, 1), dtype=dtype)
        pool_[key] = buf
    return buf[:size]


# --------------------------------------------------------------------------------------------
# KPU RAM access planning (the KPU→KPU fast path)
# --------------------------------------------------------------------------------------------


@dataclass
class KpuAccess:
    """One access of a layer sequence: ``kind`` 'r' or 'w', byte address, [C,H,W] shape.

    ``conv`` marks conv outputs (writes whose value is a cached array) and conv inputs (reads
    that may take a cached array).
    """

    kind: str
    addr: int
    shape: tuple[int, int, int]
    step: int
    conv: bool = False
    #: explicit flat byte addresses (for writes that do not follow the map layout, e.g. ADD_PADDING)
    indices: np.ndarray | None = None


@dataclass
class KpuRamPlan:
    """Result of :func:`plan_kpu_ram`.

    ``materialize``: steps whose conv output must be written into the arena.
    ``reuse``: read step → write step whose cached array the read may use instead of the arena.
    """

    materialize: set[int] = field(default_factory=set)
    reuse: dict[int, int] = field(default_factory=dict)


#: Total map elements above which :func:`plan_kpu_ram` gives up analysing (fallback: write all).
PLAN_WORK_LIMIT = 200_000_000


def plan_kpu_ram(accesses: Sequence[KpuAccess], size: int = KPU_RAM_BYTES) -> KpuRamPlan:
    """Decide which conv outputs must reach the arena for every read to see device bytes.

    Simulates two passes of the (cyclic: the model runs again and again) access sequence over a
    "last writer" map of the arena. A read whose bytes were all last written by one conv output
    of exactly the same address and shape can reuse that array; any other read forces every writer
    it sees to be materialized. Non-conv writes (input placement, uploads, padding) always go to
    the arena.
    """
    plan = KpuRamPlan()
    work = sum(int(np.prod(a.shape)) if a.indices is None else a.indices.size for a in accesses)
    if work > PLAN_WORK_LIMIT:
        # absurdly many/large maps (a corrupt or adversarial file): skip the analysis and write
        # every conv output, which is always correct, just slower
        plan.materialize = {a.step for a in accesses if a.kind == "w" and a.conv}
        return plan
    owner = np.full(size, -1, dtype=np.int32)
    index_cache: dict[tuple[int, tuple[int, int, int]], np.ndarray] = {}

    def idx(a: KpuAccess) -> np.ndarray:
        if a.indices is not None:
            return a.indices
        key = (a.addr, a.shape)
        if key not in index_cache:
            index_cache[key] = layout_indices(a.addr, a.shape).reshape(-1)
        return index_cache[key]

    by_step = {a.step: a for a in accesses if a.kind == "w"}
    seen_by_read: dict[int, set[int]] = {}
    reusable: dict[int, list[int | None]] = {}
    for _ in range(2):
        for a in accesses:
            ids = idx(a)
            if a.kind == "w":
                owner[ids] = a.step
                continue
            got = owner[ids]
            lo_o, hi_o = (int(got.min()), int(got.max())) if got.size else (-1, -1)
            seen_arr = np.array([lo_o]) if lo_o == hi_o else np.unique(got)
            seen = [int(v) for v in seen_arr if v >= 0]
            seen_by_read.setdefault(a.step, set()).update(seen)
            candidate = None
            if a.conv and len(seen) == 1 and lo_o == hi_o:
                wr = by_step.get(seen[0])
                if wr is not None and wr.conv and wr.step < a.step and wr.addr == a.addr and wr.shape == a.shape:
                    candidate = wr.step
            reusable.setdefault(a.step, []).append(candidate)
    for step, cands in reusable.items():
        if cands[0] is not None and all(c == cands[0] for c in cands):
            plan.reuse[step] = cands[0]
        else:
            for s in seen_by_read[step]:
                w = by_step.get(s)
                if w is not None and w.conv:
                    plan.materialize.add(s)
    return plan
