"""The K210 KPU convolution engine, bit-exact (shared by kmodel V3 and V4).

Modules: ``registers`` (the 12 register words), ``activation`` (batch-norm/activation tables, the
exact activation, lookup tables, segment and step tables), ``ram`` (KPU RAM layout, arena, the
KPU→KPU plan, native map forms), ``pool``, ``conv`` (``KpuConv``: preparation, the numpy path and
the int64 reference), ``hwc`` (the compiled path of one layer), ``kernels`` (its numba kernels),
``int8`` (onnxruntime int8 products with their load-time proof), ``products`` (which product a
layer takes on this machine, ``MAIXEMU_KPU_PRODUCTS``), ``machine`` (the CPU facts ``maixemu
bench`` prints), ``fast`` (which engine, the kernel cache), ``warmup`` and ``compile_worker``
(compiled kernels brought in without a run waiting), ``parallel`` (scratch buffers, thread pool),
``blas`` (OpenBLAS's thread count around the products — process-wide, OpenBLAS has no per-thread one —
and the commands' BLAS limit).

Each layer chooses its path at load: the numpy path described below, and with the ``fast``
extra the compiled HWC path of ``hwc`` (u8s8 / u8u8 / depthwise kernel / float products, then a
table, step buckets or the segments), which ``warmup`` prepares and puts in place in the
background once its kernels are in memory (``MAIXEMU_KERNELS=wait``: from the first run).
``conv.path`` names the path in place, ``conv.refused`` why faster products were refused,
``conv.native()`` gives its map form and runner in one read (``conv.layout`` / ``run_native`` the
same, separately). Every path is held to
``run_reference`` by the tests.

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
* A table that would be too big (or bn values that may lie below every segment start) is not
  built: bn is computed exactly and the 16 segments are evaluated directly (``segment_table``).
* Only an ``arg_x`` that is not a multiple of ``2**shr_x`` (no compiler emits one) or sums beyond
  int64/float64 take the exact int64 path, the document's arithmetic verbatim (its float64
  products, exact below 2**53, also run with single-threaded BLAS).
"""

from __future__ import annotations

from .activation import (
    BUCKET_MIN_ENTRIES,
    ActivationTable,
    BatchNorm,
    activate,
    activation_lut,
    decode_activation,
    decode_batchnorm,
    round_shift,
    unit_step_buckets,
)
from .conv import LUT_MAX_ENTRIES, KpuConv
from .pool import POOL_GEOMETRY, POOL_NAMES, pool
from .ram import (
    KPU_RAM_BYTES,
    KPU_ROW_BYTES,
    KPU_ROWS,
    LAYOUTS,
    PLAN_WORK_LIMIT,
    KpuAccess,
    KpuRam,
    KpuRamPlan,
    convert_native,
    from_centered,
    from_native,
    kpu_bytes,
    kpu_rows,
    layout,
    layout_indices,
    layout_view,
    plan_kpu_ram,
    row_addr,
    to_centered,
    to_native,
)
from .registers import KpuRegisters, decode_registers, signed

__all__ = [
    "ActivationTable", "BatchNorm", "BUCKET_MIN_ENTRIES", "KPU_RAM_BYTES", "KPU_ROW_BYTES", "KPU_ROWS",
    "KpuAccess", "LAYOUTS", "convert_native", "from_native", "to_native", "KpuConv", "KpuRam", "KpuRamPlan", "KpuRegisters", "LUT_MAX_ENTRIES", "PLAN_WORK_LIMIT",
    "POOL_GEOMETRY", "POOL_NAMES", "activate", "activation_lut", "decode_activation", "decode_batchnorm",
    "decode_registers", "from_centered", "kpu_bytes", "kpu_rows", "layout", "layout_indices", "layout_view",
    "plan_kpu_ram", "pool", "round_shift", "row_addr", "signed", "to_centered", "unit_step_buckets",
]
