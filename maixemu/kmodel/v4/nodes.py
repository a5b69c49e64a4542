"""Decoders for every V4 node body; each turns the bytes into a prepared step.

A step holds numpy views of the memory ranges it reads and writes (the arenas live as long as the
model), its constant parameters already converted (weights reshaped, index plans built), and a
``run`` closure that does only numpy work. Decoding also validates every size against the ranges
and memories, and infers output shapes (V4 files record none) so outputs and traces can be shaped.
Kernels are in ``ops/v4_*``; KPU nodes are in ``kpu``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

import numpy as np

from ..errors import KmodelUnsupportedError
from ..kpu import fast
from ..kpu.zeros import lazy_zeros
from .nnil import compile_nnil
from ..ops import v4_float as vf
from ..ops import v4_layout as vl
from ..ops import v4_quant as vq
from ..ops.quantized_conv import QuantizedConv, QuantizedMatmul
from .format import (
    DT_FLOAT32,
    DT_UINT8,
    MAX_ELEMENTS,
    MEM_CONST,
    MEM_KPU,
    BodyReader,
    MemoryRange,
    check_range,
)

if TYPE_CHECKING:
    from .kpu import KpuState

F32 = np.float32
U8 = np.uint8
_NO_INDEX = np.zeros(0, np.int64)
#: uint8 NCHW -> NHWC transposes of maps at least this wide take ``kernels.chw_to_hwc`` (measured
#: on ulffd's heads, process CPU time: 20x30x40 6.9 vs 11.4 us, 4x30x40 1.9 vs 7.4, 48x8x10 2.0
#: vs 2.4; a 512x4x4 map 6.3 vs 3.8, so narrow maps keep numpy's copy)
TRANSPOSE_MIN_WIDTH = 8
#: ``kernels.binary_f32`` op codes
_BINARY_CODES = {"add": 0, "sub": 1, "mul": 2, "div": 3, "min": 4, "max": 5}


def _lookup(table: np.ndarray, index: np.ndarray, out: np.ndarray, warm) -> None:
    """``out[:] = table[index]`` (uint8 ``index``, 1-D): one compiled pass once ``warm`` (the
    ``schedule_kernel_warm_up("lookup", ...)`` of these arrays, made at load) has the kernel in
    memory, else numpy's take."""
    compiled = warm.kernels if warm is not None else None
    if compiled is not None and index.flags.c_contiguous and out.flags.c_contiguous:
        compiled.lookup(table, index, out)
    else:
        np.take(table, index, out=out)


def _warm_float_conv() -> None:
    """A model with float convolutions has the compiled ``conv2d_f32`` made ready in the
    background (``kpu.fast.schedule_warm_up``), like its KPU layers' kernels."""
    if not fast.compiled_available():
        return

    def warm() -> None:
        kn = fast.kernels()
        if kn is not None:
            one = np.zeros((1, 1, 1, 1), F32)
            kn.conv2d_f32(one, one, np.zeros(1, F32), 1, 1, 1, 1, 1, 0, 0, False, F32(0), F32(1), np.empty((1, 1, 1, 1), F32))

    fast.schedule_warm_up(("conv2d_f32",), warm)



def _overlap(out: np.ndarray, *ins: np.ndarray) -> bool:
    """Whether ``out`` shares bytes with an input (then the numpy form, which reads every input
    before it writes, keeps its meaning; a one-pass kernel might read what it wrote)."""
    return any(np.shares_memory(out, x) for x in ins)


def _compiled(name: str, args: tuple, fallback: Callable[[], None]) -> Callable[[], None]:
    """``run()`` for a host op: ``kernels.<name>(*args)`` (arguments bound at load, the output an
    argument) once that kernel is in memory, else ``fallback()`` (the numpy kernel, same bits).
    The kernel is compiled or loaded from the disk cache in the background
    (``kpu.fast.schedule_kernel_warm_up``), like the KPU layers' kernels."""
    warm = fast.schedule_kernel_warm_up(name, args)
    if warm is None:
        return fallback
    bound: list = []

    def run() -> None:
        if bound:
            bound[0](*args)
            return
        kn = warm.kernels
        if kn is None:
            fallback()
            return
        bound.append(getattr(kn, name))
        bound[0](*args)

    run.kernel = name  # type: ignore[attr-defined]  # a function attribute: what tests and ``bench`` ask
    return run


class Memory:
    """The three V4 memories as byte arenas addressed exactly as the kmodel addresses them."""

    def __init__(self, constants: bytes, main_mem: int, kpu: np.ndarray):
        const = np.frombuffer(constants, dtype=U8)
        # (main memory as lazily mapped zeros: only the ranges the nodes write become resident)
        self.arenas: dict[int, np.ndarray] = {0: const, 1: lazy_zeros(main_mem), 2: kpu}

    def view(self, mr: MemoryRange, dtype=None, count: int | None = None) -> np.ndarray:
        """Typed 1-D view of a range (``count`` elements, default: all whole elements)."""
        dt = np.dtype(dtype) if dtype is not None else mr.dtype
        n = mr.size // dt.itemsize if count is None else count
        return self.arenas[mr.memory_type][mr.start : mr.start + n * dt.itemsize].view(dt)


@dataclass
class Node:
    """One prepared V4 node."""

    index: int
    kind: str
    reads: tuple[MemoryRange, ...]
    writes: MemoryRange | None
    in_shapes: tuple[tuple[int, ...], ...]
    out_shape: tuple[int, ...]
    run: Callable[[], None]
    #: returns the node's output as the reference dump shows it (typed copy of its output range)
    result: Callable[[], np.ndarray] | None = None
    on_kpu: bool = False
    param_bytes: int = 0
    macs: int = 0
    out_dtype: np.dtype = field(default_factory=lambda: np.dtype(F32))
    details: dict = field(default_factory=dict)
    #: a node whose every output element is a fixed function of one input byte, as its table
    #: (dequantize: float32 [256]; quantized_binary with a constant byte: uint8 [256]): what
    #: ``v4.fuse`` composes along a chain of such nodes
    byte_table: np.ndarray | None = None
    #: a KPU layer with a main-memory output: ``redirect(sink)`` is a run that hands that map to
    #: ``sink(layout, native map)`` (``kpu.ram`` layouts) instead of writing it — what
    #: ``v4.fuse.head_chains`` gives the head's transpose/dequantize/copy/concat
    redirect: Callable[[Callable[[str, np.ndarray], None]], Callable[[], None]] | None = None


@dataclass
class DecodeContext:
    """What every decoder needs: memories, their sizes, known shapes, options."""

    memory: Memory
    sizes: dict[int, int]
    #: (memory_type, start, size) -> shape of the tensor last written there
    shapes: dict[tuple[int, int, int], tuple[int, ...]]
    float_mode: str = "host"
    kpu: KpuState | None = None  # set by the loader
    #: CPU multiply-adds and Python loop steps of the nodes decoded so far (see ``_check_work``)
    work: int = 0
    loops: int = 0

    def shape_of(self, mr: MemoryRange) -> tuple[int, ...] | None:
        return self.shapes.get((mr.memory_type, mr.start, mr.size))


class _Builder:
    """Small helper shared by the decoders: validated views and the default trace result."""

    def __init__(self, r: BodyReader, ctx: DecodeContext):
        self.r, self.ctx, self.node = r, ctx, r.node

    def fail(self, msg: str, fld: str):
        return self.r.fail(msg, fld)

    def src(self, mr: MemoryRange, fld: str, nbytes: int, dtype=None) -> np.ndarray:
        check_range(mr, self.ctx.sizes, fld, node=self.node)
        if nbytes > mr.size:
            raise self.fail(f"{fld} {mr} holds {mr.size} bytes, the node reads {nbytes}", fld)
        dt = np.dtype(dtype) if dtype is not None else mr.dtype
        self._record("r", mr, nbytes)
        return self.ctx.memory.view(mr, dt, nbytes // dt.itemsize)

    def _record(self, kind: str, mr: MemoryRange, nbytes: int) -> None:
        """Tell the KPU RAM planner about a plain access to KPU memory by a CPU node."""
        if mr.memory_type == MEM_KPU and self.ctx.kpu is not None:
            self.ctx.kpu.record_bytes(kind, mr.start, nbytes, self.ctx.kpu.NODE_STEP0 + self.node.index)

    def dst(self, mr: MemoryRange, fld: str, nbytes: int, dtype=None) -> np.ndarray:
        check_range(mr, self.ctx.sizes, fld, writable=True, node=self.node)
        if nbytes > mr.size:
            raise self.fail(f"{fld} {mr} holds {mr.size} bytes, the node writes {nbytes}", fld)
        dt = np.dtype(dtype) if dtype is not None else mr.dtype
        self._record("w", mr, nbytes)
        return self.ctx.memory.view(mr, dt, nbytes // dt.itemsize)

    def make(self, reads, writes: MemoryRange, in_shapes, out_shape, run, out_dtype=None, **kw) -> Node:
        out_shape = tuple(int(d) for d in out_shape)
        dt = np.dtype(out_dtype) if out_dtype is not None else writes.dtype
        mem = self.ctx.memory

        def result() -> np.ndarray:
            flat = mem.view(writes, dt).copy()
            n = vl.shape_size(out_shape)
            return flat.reshape(out_shape) if flat.size == n else flat

        self.ctx.shapes[(writes.memory_type, writes.start, writes.size)] = out_shape
        return Node(self.node.index, self.node.name, tuple(reads), writes, tuple(tuple(s) for s in in_shapes),
                    out_shape, run, result, out_dtype=dt, **kw)


def _known_shape(ctx: DecodeContext, mr: MemoryRange, count: int) -> tuple[int, ...]:
    s = ctx.shape_of(mr)
    return s if s is not None and vl.shape_size(s) == count else (count,)


def _op_name(r: BodyReader, table, value: int, fld: str) -> str:
    if not 0 <= value < len(table):
        raise r.fail(f"{fld} {value} is not one of {', '.join(f'{i} {n}' for i, n in enumerate(table))}", fld)
    return table[value]


# --- neutral float ops -----------------------------------------------------------------------


def decode_binary(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ra, rb, ro = r.memory_range("input_a"), r.memory_range("input_b"), r.memory_range("output")
    op = _op_name(r, vf.BINARY_OPS, r.u32("binary_op"), "binary_op")
    sa, sb, so = r.shape("in_a_shape"), r.shape("in_b_shape"), r.shape("out_shape")
    lo, hi = r.value_range("fused_activation")
    if sa == sb:  # the runtime's linear path: out_shape is not used
        n = vl.shape_size(sa)
        a, bb, o = b.src(ra, "input_a", 4 * n, F32), b.src(rb, "input_b", 4 * n, F32), b.dst(ro, "output", 4 * n, F32)

        def numpy_run():
            o[:] = vf.binary(a, bb, op, lo, hi)

        # the same buffer read and written element by element is fine; another overlap is not
        same_place = all(not np.shares_memory(o, x) or x.ctypes.data == o.ctypes.data for x in (a, bb))
        run = _compiled("binary_f32", (a, _NO_INDEX, bb, _NO_INDEX, _BINARY_CODES[op], F32(lo), F32(hi), o),
                        numpy_run) if same_place else numpy_run
        out_shape = sa
    else:
        a = b.src(ra, "input_a", 4 * vl.shape_size(sa), F32).reshape(sa)
        bb = b.src(rb, "input_b", 4 * vl.shape_size(sb), F32).reshape(sb)
        o = b.dst(ro, "output", 4 * vl.shape_size(so), F32).reshape(so)
        ia, ib = vl.broadcast_index(sa, so), vl.broadcast_index(sb, so)

        def run():
            o[...] = vf.binary(vl.read_broadcast(a, ia, so), vl.read_broadcast(bb, ib, so), op, lo, hi)

        if not _overlap(o, a, bb):
            # flat source indices of every output element under the broadcast rule
            fa = vl.read_broadcast(np.arange(a.size, dtype=np.int64).reshape(sa), ia, so).reshape(-1).copy()
            fb = vl.read_broadcast(np.arange(bb.size, dtype=np.int64).reshape(sb), ib, so).reshape(-1).copy()
            run = _compiled("binary_f32", (a.reshape(-1), fa, bb.reshape(-1), fb, _BINARY_CODES[op], F32(lo), F32(hi),
                                           o.reshape(-1)), run)
        out_shape = so
    return b.make((ra, rb), ro, (sa, sb), out_shape, run, F32, details={"op": op, "activation": (lo, hi)})


def decode_concat(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ro = r.memory_range("output")
    inner, outer, n = r.u32("inner_size"), r.u32("outer_size"), r.u32("inputs_count")
    if n == 0 or n > 4096:
        raise r.fail(f"inputs_count {n} is not plausible", "inputs_count")
    ins = [r.memory_range(f"inputs[{i}]") for i in range(n)]
    dims = [r.i32(f"dims[{i}]") for i in range(n)]
    if any(d < 0 for d in dims):
        raise r.fail(f"negative concat dims {dims}", "dims")
    total = sum(dims)
    if inner * total * outer > ctx.sizes[ro.memory_type]:
        raise r.fail(f"concat of {outer}x{inner}x{total} bytes exceeds the {ro.memory} memory", "inner_size")
    srcs = [b.src(mr, f"inputs[{i}]", outer * inner * d, U8).reshape(outer, inner * d) for i, (mr, d) in enumerate(zip(ins, dims))]
    o = b.dst(ro, "output", outer * inner * total, U8).reshape(outer, inner * total)

    def run():
        o[...] = np.concatenate(srcs, axis=1)

    # shape: the axis of input 0 that the sizes describe, else the [outer, concat, inner] view
    # the sizes themselves define (e.g. SSD heads: [1, 4420, 4])
    es = ro.dtype.itemsize
    out_shape: tuple[int, ...] = (outer * inner * total // es,)
    if inner % es == 0:
        out_shape = (outer, total, inner // es)
    s0 = ctx.shape_of(ins[0])
    if s0 is not None and inner % es == 0:
        for axis in range(len(s0)):
            if (vl.shape_size(s0[:axis]) == outer and s0[axis] == dims[0]
                    and vl.shape_size(s0[axis + 1 :]) * es == inner):
                out_shape = tuple(s0[:axis]) + (total,) + tuple(s0[axis + 1 :])
                break
    in_shapes = tuple(ctx.shape_of(mr) or (mr.count,) for mr in ins)
    return b.make(ins, ro, in_shapes, out_shape, run, ro.dtype,
                  details={"inner_bytes": inner, "outer": outer, "dims": dims})


def _conv_geometry(r: BodyReader):
    pad_h, pad_w = r.padding("padding_h"), r.padding("padding_w")
    kh, kw = r.i32("filter_h"), r.i32("filter_w")
    sh, sw = r.i32("stride_h"), r.i32("stride_w")
    dh, dw = r.i32("dilation_h"), r.i32("dilation_w")
    if min(kh, kw, sh, sw, dh, dw) <= 0 or max(kh, kw) > 1024:
        raise r.fail(f"filter {kh}x{kw}, stride {sh}x{sw}, dilation {dh}x{dw} must be positive", "filter_h")
    return pad_h, pad_w, kh, kw, sh, sw, dh, dw


#: Limits of what the emulator agrees to run. A node's Python-level loop steps and its
#: multiply-adds (numpy does ~2**31 of them per second here); and the same summed over a model, so
#: a file of many heavy nodes cannot make one run take minutes. Real K210 models stay far below:
#: their CPU nodes are small, and 2**31 float multiply-adds take the K210's CPU half a minute.
MAX_LOOP_STEPS = 1 << 16
MAX_NODE_WORK = 1 << 30
MAX_MODEL_LOOP_STEPS = 1 << 18
MAX_MODEL_WORK = 1 << 31


def _check_work(r: BodyReader, ctx: "DecodeContext", out_elems: int, steps: int, loops: int | None = None) -> None:
    """Refuse nodes whose geometry would make the emulator loop or allocate without bound (a
    corrupt file, or a layer far beyond anything a K210 runs). ``loops`` (default ``steps``) is the
    kernel's Python-level iteration count when it differs from the taps per output."""
    loops = steps if loops is None else loops
    work = out_elems * max(steps, 1)
    fld = f"node[{r.node.index}].filter"
    if loops > MAX_LOOP_STEPS or work > MAX_NODE_WORK:
        raise KmodelUnsupportedError(
            f"node {r.node.index} ({r.node.name}): {out_elems} outputs x {steps} taps is beyond what a K210 model needs",
            offset=r.node.body_offset, field=fld)
    ctx.work += work
    ctx.loops += loops
    if ctx.work > MAX_MODEL_WORK or ctx.loops > MAX_MODEL_LOOP_STEPS:
        raise KmodelUnsupportedError(
            f"node {r.node.index} ({r.node.name}) brings the model's CPU work to {ctx.work} multiply-adds in "
            f"{ctx.loops} loop steps, beyond what a K210 model needs (limits {MAX_MODEL_WORK}, {MAX_MODEL_LOOP_STEPS})",
            offset=r.node.body_offset, field=fld)


#: ``ops.v4_quant.quantized_conv2d`` builds int64 patch matrices of at least one output row:
#: ``n * gic * ow * kh * kw`` elements, a few copies alive at once. Bounded to keep a node's peak
#: allocation well under 256 MB (real models: under 2**20).
MAX_QCONV_ROW_PATCH = 1 << 22


def _qconv_loops(r: BodyReader, n: int, gic: int, groups: int, oh: int, ow: int, kh: int, kw: int) -> int:
    """Python loop steps of ``quantized_conv2d`` (row blocks x groups), after checking that one
    output row's patch matrix is of bounded size."""
    row_patch = n * gic * ow * kh * kw
    if row_patch > MAX_QCONV_ROW_PATCH:
        raise KmodelUnsupportedError(
            f"node {r.node.index} ({r.node.name}): one output row needs a {row_patch}-element patch matrix "
            f"({n}x{gic}x{ow}x{kh}x{kw}), beyond what a K210 model needs", offset=r.node.body_offset,
            field=f"node[{r.node.index}].in_shape")
    rows = max(1, (1 << 24) // max(1, row_patch))
    return groups * -(-oh // rows)


def _check_out(r: BodyReader, oh: int, ow: int) -> None:
    if oh <= 0 or ow <= 0:
        raise r.fail(f"output size {oh}x{ow} is empty", "padding_h")


def decode_conv2d(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    groups, oc = r.i32("groups"), r.i32("out_channels")
    pad_h, pad_w, kh, kw, sh, sw, dh, dw = _conv_geometry(r)
    lo, hi = r.value_range("fused_activation")
    if groups <= 0 or s[1] % groups or oc <= 0 or oc % groups:
        raise r.fail(f"groups {groups} does not divide in {s[1]} / out {oc} channels", "groups")
    gic = s[1] // groups
    w = r.array(np.float32, oc * gic * kh * kw, "weights").reshape(oc, gic, kh, kw)
    bias = r.array(np.float32, oc, "bias")
    oh, ow = vf.out_size(s[2], kh, sh, dh, pad_h), vf.out_size(s[3], kw, sw, dw, pad_w)
    _check_out(r, oh, ow)
    out_shape = (s[0], oc, oh, ow)
    _check_work(r, ctx, vl.shape_size(out_shape), gic * kh * kw, loops=groups * gic * kh * kw)
    x = b.src(ri, "input", 4 * vl.shape_size(s), F32).reshape(s)
    o = b.dst(ro, "output", 4 * vl.shape_size(out_shape), F32).reshape(out_shape)

    def run():
        o[...] = vf.conv2d(x, w, bias, groups, sh, sw, dh, dw, pad_h, pad_w, lo, hi, "ckk")

    _warm_float_conv()

    return b.make((ri,), ro, (s,), out_shape, run, F32, param_bytes=4 * (w.size + oc),
                  macs=vl.shape_size(out_shape) * gic * kh * kw,
                  details={"kernel": (kh, kw), "stride": (sh, sw), "groups": groups})


def decode_dequantize(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    zp, scale = r.i32("zero_point"), r.f32("scale")
    n = ri.size  # u8 elements
    q = b.src(ri, "input", n, U8)
    o = b.dst(ro, "output", 4 * n, F32)
    # a function of one byte: the 256 results of the exact kernel, looked up (same bits)
    table = vf.dequantize(np.arange(256, dtype=U8), zp, scale, ctx.float_mode)
    warm = fast.schedule_kernel_warm_up("lookup", (table, q, o))

    def run():
        _lookup(table, q, o, warm)

    shape = _known_shape(ctx, ri, n)
    return b.make((ri,), ro, (shape,), shape, run, F32, details={"zero_point": zp, "scale": scale}, byte_table=table)


def decode_quantize(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    zp, scale = r.i32("zero_point"), r.f32("scale")
    n = ri.size // 4
    x = b.src(ri, "input", 4 * n, F32)
    o = b.dst(ro, "output", n, U8)
    mode = ctx.float_mode
    scale32, zero32 = F32(scale), F32(zp)
    warm = fast.schedule_kernel_warm_up("quantize_host", (x, scale32, zero32, o)) if mode == "host" else None

    def run():
        # one compiled pass once the kernel is in memory (same bytes as the numpy kernel)
        compiled = warm.kernels if warm is not None else None
        if compiled is not None:
            compiled.quantize_host(x, scale32, zero32, o)
        else:
            o[:] = vf.quantize(x, zp, scale, mode)

    shape = _known_shape(ctx, ri, n)
    return b.make((ri,), ro, (shape,), shape, run, U8, details={"zero_point": zp, "scale": scale})


def decode_matmul(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ra, rb, ro = r.memory_range("input_a"), r.memory_range("input_b"), r.memory_range("output")
    rows, cols, bcols = r.i32("a_rows"), r.i32("a_cols"), r.i32("b_cols")
    if min(rows, cols, bcols) <= 0:
        raise r.fail(f"matmul {rows}x{cols} @ {cols}x{bcols} has an empty dimension", "a_rows")
    lo, hi = r.value_range("fused_activation")
    _check_work(r, ctx, rows * bcols, cols)
    bias = r.array(np.float32, bcols, "bias")
    a = b.src(ra, "input_a", 4 * rows * cols, F32).reshape(rows, cols)
    bm = b.src(rb, "input_b", 4 * cols * bcols, F32).reshape(cols, bcols)
    o = b.dst(ro, "output", 4 * rows * bcols, F32).reshape(rows, bcols)

    def run():
        o[...] = vf.matmul(a, bm, bias, lo, hi)

    if not _overlap(o, a, bm):
        run = _compiled("matmul_f32", (a, bm, np.ascontiguousarray(bias, dtype=F32), F32(lo), F32(hi), o), run)

    return b.make((ra, rb), ro, ((rows, cols), (cols, bcols)), (rows, bcols), run, F32,
                  param_bytes=4 * bcols + (rb.size if rb.memory_type == 0 else 0), macs=rows * cols * bcols)


def decode_pad(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    pads = [r.padding(f"paddings[{i}]") for i in range(4)]
    r.u32("pad_value.datatype")  # the runtime reads the value as the input's element type
    raw = r.bytes(4, "pad_value.storage")
    dt = ri.dtype
    pad_value = np.frombuffer(raw, dtype=dt, count=1)[0] if dt.itemsize == 4 else np.uint8(raw[0])
    try:
        plan = vl.plan_pad(s, pads)
    except ValueError as exc:
        raise r.fail(str(exc), "paddings") from None
    es = dt.itemsize
    x = b.src(ri, "input", es * vl.shape_size(s), dt).reshape(s)
    o = b.dst(ro, "output", es * vl.shape_size(plan.out_shape), dt).reshape(plan.out_shape)

    def run():
        o[...] = vl.run_pad(x, plan, pad_value)

    if not _overlap(o, x):
        fill, out_region, in_region = dt.type(pad_value), plan.out_region, plan.in_region

        def run():  # noqa: F811 - the same bytes without the temporary map
            o[...] = fill
            o[out_region] = x[in_region]

        if all(r.start == 0 and r.stop == d for r, d in zip(out_region, plan.out_shape)):
            def run():  # noqa: F811 - a crop (every output element comes from the input)
                o[...] = x[in_region]

    return b.make((ri,), ro, (s,), plan.out_shape, run, dt, details={"paddings": pads})


def decode_reduce(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    op = _op_name(r, vf.REDUCE_OPS, r.u32("reduce_op"), "reduce_op")
    s, so = r.shape("in_shape"), r.shape("out_shape")
    init = r.f32("init_value")
    if any(o != i and o != 1 for i, o in zip(s, so)):
        raise r.fail(f"out_shape {list(so)} is not in_shape {list(s)} with reduced axes set to 1", "out_shape")
    if op in ("min", "max"):  # folded with a Python loop over the reduced elements
        _check_work(r, ctx, vl.shape_size(so), vl.shape_size(s) // max(1, vl.shape_size(so)))
    x = b.src(ri, "input", 4 * vl.shape_size(s), F32).reshape(s)
    o = b.dst(ro, "output", 4 * vl.shape_size(so), F32).reshape(so)

    def run():
        o[...] = vf.reduce(x, so, op, init)

    # the reduced axes last: rows of the kept elements (a view when they already are last)
    axes = [i for i in range(4) if so[i] != s[i]]
    perm = [i for i in range(4) if i not in axes] + axes
    rows = x.transpose(perm).reshape(vl.shape_size(so), -1)
    if np.shares_memory(rows, x) and not _overlap(o, x):
        code = {"mean": 0, "sum": 0, "min": 4, "max": 5}[op]
        mul = F32(F32(vl.shape_size(so)) / F32(vl.shape_size(s)))
        run = _compiled("reduce_rows_f32", (rows, code, F32(init), op == "mean", mul, o.reshape(-1)), run)

    return b.make((ri,), ro, (s,), so, run, F32, details={"op": op})


def _reduce_window(r: BodyReader, ctx: DecodeContext, layout: str) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    ops = vf.REDUCE_OPS if layout == "NCHW" else ("mean", "min", "max")
    op = _op_name(r, ops, r.u32("reduce_op"), "reduce_op")
    s = r.shape("in_shape")
    pad_h, pad_w, kh, kw, sh, sw, dh, dw = _conv_geometry(r)
    init = r.f32("init_value")
    lo, hi = r.value_range("fused_activation")
    H, W = (s[2], s[3]) if layout == "NCHW" else (s[1], s[2])
    oh, ow = vf.out_size(H, kh, sh, dh, pad_h), vf.out_size(W, kw, sw, dw, pad_w)
    _check_out(r, oh, ow)
    out_shape = (s[0], s[1], oh, ow) if layout == "NCHW" else (s[0], oh, ow, s[3])
    _check_work(r, ctx, vl.shape_size(out_shape), kh * kw)
    x = b.src(ri, "input", 4 * vl.shape_size(s), F32).reshape(s)
    o = b.dst(ro, "output", 4 * vl.shape_size(out_shape), F32).reshape(out_shape)

    def run():
        o[...] = vf.reduce_window2d(x, op, init, kh, kw, sh, sw, dh, dw, pad_h, pad_w, lo, hi, layout)

    if layout == "NCHW" and not _overlap(o, x):
        if (op in ("max", "min") and (kh, kw, sh, sw, dh, dw) == (2, 2, 2, 2, 1, 1) and pad_h[0] == 0 and pad_w[0] == 0
                and 2 * oh <= H and 2 * ow <= W):
            # the common 2x2 / stride-2 pool, every window inside the map: one pass per row
            # (the same folds in the same order; measured 4.4 vs 24 us on mask_detect's 16x30x30)
            run = _compiled("pool2_f32", (x, op == "max", F32(init), F32(lo), F32(hi), o), run)
        else:
            code = {"mean": 0, "sum": 0, "min": 4, "max": 5}[op]
            run = _compiled("reduce_window_f32", (x, code, F32(init), op == "mean", kh, kw, sh, sw, dh, dw, int(pad_h[0]),
                                                  int(pad_w[0]), F32(lo), F32(hi), o), run)

    return b.make((ri,), ro, (s,), out_shape, run, F32,
                  details={"op": op, "kernel": (kh, kw), "stride": (sh, sw), "padding": (pad_h, pad_w)})


def decode_reduce_window2d(r: BodyReader, ctx: DecodeContext) -> Node:
    return _reduce_window(r, ctx, "NCHW")


def decode_cpu_reduce_window2d(r: BodyReader, ctx: DecodeContext) -> Node:
    return _reduce_window(r, ctx, "NHWC")


def decode_memory_copy(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    n = ri.size // 4
    x = b.src(ri, "input", 4 * n, U8)
    o = b.dst(ro, "output", 4 * n, U8)

    def run():
        o[:] = x

    shape = _known_shape(ctx, ri, n if ri.datatype == DT_FLOAT32 else ri.size)
    return b.make((ri,), ro, (shape,), shape, run, ri.dtype)


def decode_resize_image(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    oh, ow = r.i32("out_h"), r.i32("out_w")
    mode = _op_name(r, ("bilinear", "nearest"), r.u32("mode"), "mode")
    align = bool(r.u8("align_corners"))
    if oh <= 0 or ow <= 0 or vl.shape_size((s[0], s[1], oh, ow)) > MAX_ELEMENTS:
        raise r.fail(f"output size {oh}x{ow} is not valid", "out_h")
    dt = ri.dtype
    out_shape = (s[0], s[1], oh, ow)
    x = b.src(ri, "input", dt.itemsize * vl.shape_size(s), dt).reshape(s)
    o = b.dst(ro, "output", dt.itemsize * vl.shape_size(out_shape), dt).reshape(out_shape)

    def run():
        o[...] = vf.resize(x, oh, ow, mode, align)

    return b.make((ri,), ro, (s,), out_shape, run, dt, details={"mode": mode, "align_corners": align})


def decode_softmax(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    inner, outer, beta = r.i32("inner_size"), r.i32("outer_size"), r.f32("beta")
    if inner <= 0 or outer <= 0:
        raise r.fail(f"softmax {outer}x{inner} is empty", "inner_size")
    _check_work(r, ctx, outer, inner)
    x = b.src(ri, "input", 4 * inner * outer, F32).reshape(outer, inner)
    o = b.dst(ro, "output", 4 * inner * outer, F32).reshape(outer, inner)

    def run():
        o[...] = vf.softmax(x, beta)

    shape = _known_shape(ctx, ri, inner * outer)
    return b.make((ri,), ro, (shape,), shape, run, F32, details={"beta": beta})


def decode_transpose(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    try:
        perm = vl.check_perm(r.struct("4i", "perm"))
    except ValueError as exc:
        raise r.fail(str(exc), "perm") from None
    dt = ri.dtype
    out_shape = vl.transpose_shape(s, perm)
    x = b.src(ri, "input", dt.itemsize * vl.shape_size(s), dt).reshape(s)
    o = b.dst(ro, "output", dt.itemsize * vl.shape_size(s), dt).reshape(out_shape)

    def run():
        o[...] = np.transpose(x, perm)

    if (tuple(perm) == (0, 2, 3, 1) and dt == np.uint8 and s[0] == 1 and s[3] >= TRANSPOSE_MIN_WIDTH
            and not _overlap(o, x)):
        # NCHW -> NHWC of one uint8 map (the heads after a KPU layer): the compiled HWC copy,
        # 1.5-3x numpy's strided one on these maps (the same bytes)
        run = _compiled("chw_to_hwc", (x[0], o[0]), run)
    return b.make((ri,), ro, (s,), out_shape, run, dt, details={"perm": perm})


def decode_strided_slice(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    begin = r.shape("begin", allow_negative=True)
    end = r.shape("end", allow_negative=True)
    strides = r.shape("strides", allow_negative=True)
    r.struct("5i", "masks")  # folded into begin/end by the compiler, ignored at run time
    try:
        out_shape, index = vl.plan_strided_slice(s, begin, end, strides)
    except ValueError as exc:
        raise r.fail(str(exc), "begin") from None
    dt = ri.dtype
    x = b.src(ri, "input", dt.itemsize * vl.shape_size(s), dt).reshape(s)
    o = b.dst(ro, "output", dt.itemsize * vl.shape_size(out_shape), dt).reshape(out_shape)

    def run():
        o[...] = x[index]

    return b.make((ri,), ro, (s,), out_shape, run, dt, details={"begin": begin, "end": end, "strides": strides})


def decode_unary(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    op = _op_name(r, vf.UNARY_OPS, r.u32("unary_op"), "unary_op")
    n = ri.size // 4
    x = b.src(ri, "input", 4 * n, F32)
    o = b.dst(ro, "output", 4 * n, F32)
    fn = vf.UNARY_FUNCS[op]

    def run():
        with np.errstate(all="ignore"):
            o[:] = fn(x)

    shape = _known_shape(ctx, ri, n)
    return b.make((ri,), ro, (shape,), shape, run, F32, details={"op": op})


def decode_nnil_unary_method(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    code_at = r.offset
    prog = compile_nnil(r.remaining_bytes(), r.node.body_offset + code_at)
    n = ri.size // 4
    x = b.src(ri, "input", 4 * n, F32)
    o = b.dst(ro, "output", 4 * n, F32)

    def run():
        o[:] = prog(x)

    shape = _known_shape(ctx, ri, n)
    return b.make((ri,), ro, (shape,), shape, run, F32, details={"nnil": list(prog.listing)})


# --- quantised ops -----------------------------------------------------------------------------


def _check_shift(r: BodyReader, value: int, fld: str) -> int:
    shift = value & 0xFF  # the runtime passes it as uint8_t
    if shift > 62:
        raise r.fail(f"shift {value} is outside 0..62 (undefined in the runtime)", fld)
    return shift


def decode_quantized_conv2d(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    groups, oc = r.i32("groups"), r.i32("out_channels")
    pad_h, pad_w, kh, kw, sh, sw, dh, dw = _conv_geometry(r)
    in_off, w_off, mul = r.i32("input_offset"), r.i32("filter_offset"), r.i32("output_mul")
    shift = _check_shift(r, r.i32("output_shift"), "output_shift")
    out_off = r.i32("output_offset")
    if groups <= 0 or s[1] % groups or oc <= 0 or oc % groups:
        raise r.fail(f"groups {groups} does not divide in {s[1]} / out {oc} channels", "groups")
    gic = s[1] // groups
    bias = r.array(np.int32, oc, "bias")
    w = r.array(np.uint8, oc * gic * kh * kw, "weights").reshape(oc, gic, kh, kw)
    oh, ow = vf.out_size(s[2], kh, sh, dh, pad_h), vf.out_size(s[3], kw, sw, dw, pad_w)
    _check_out(r, oh, ow)
    out_shape = (s[0], oc, oh, ow)
    _check_work(r, ctx, vl.shape_size(out_shape), gic * kh * kw, loops=_qconv_loops(r, s[0], gic, groups, oh, ow, kh, kw))
    x = b.src(ri, "input", vl.shape_size(s), U8).reshape(s)
    o = b.dst(ro, "output", vl.shape_size(out_shape), U8).reshape(out_shape)

    conv = QuantizedConv(w, bias, groups, (sh, sw), (dh, dw), (pad_h, pad_w), in_off, w_off, mul, shift, out_off, s, "NCHW")

    def run():
        conv.run(x, o)

    return b.make((ri,), ro, (s,), out_shape, run, U8, param_bytes=w.size + 4 * oc,
                  macs=vl.shape_size(out_shape) * gic * kh * kw,
                  details={"kernel": (kh, kw), "groups": groups, "path": conv.path, "refused": conv.refused})


def decode_quantized_matmul(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ra, rb, ro = r.memory_range("input_a"), r.memory_range("input_b"), r.memory_range("output")
    rows, cols, bcols = r.i32("a_rows"), r.i32("a_cols"), r.i32("b_cols")
    a_off, b_off, mul = r.i32("input_a_offset"), r.i32("input_b_offset"), r.i32("output_mul")
    shift = _check_shift(r, r.i32("output_shift"), "output_shift")
    out_off = r.i32("output_offset")
    if min(rows, cols, bcols) <= 0:
        raise r.fail(f"matmul {rows}x{cols} @ {cols}x{bcols} has an empty dimension", "a_rows")
    bias = r.array(np.int32, bcols, "bias")
    a = b.src(ra, "input_a", rows * cols, U8).reshape(rows, cols)
    bm = b.src(rb, "input_b", cols * bcols, U8).reshape(cols, bcols)
    o = b.dst(ro, "output", rows * bcols, U8).reshape(rows, bcols)

    mm = QuantizedMatmul(bm, rb.memory_type == MEM_CONST, bias, a_off, b_off, mul, shift, out_off)

    def run():
        mm.run(a, o)

    return b.make((ra, rb), ro, ((rows, cols), (cols, bcols)), (rows, bcols), run, U8,
                  param_bytes=4 * bcols, macs=rows * cols * bcols, details={"path": mm.path, "refused": mm.refused})


def decode_quantized_binary(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ra, rb, ro = r.memory_range("input_a"), r.memory_range("input_b"), r.memory_range("output")
    op = _op_name(r, vf.BINARY_OPS, r.u32("binary_op"), "binary_op")
    sa, sb, so = r.shape("in_a_shape"), r.shape("in_b_shape"), r.shape("out_shape")
    a_off, a_mul = r.i32("input_a_offset"), r.i32("input_a_mul")
    a_shift = _check_shift(r, r.i32("input_a_shift"), "input_a_shift")
    b_off, b_mul = r.i32("input_b_offset"), r.i32("input_b_mul")
    b_shift = _check_shift(r, r.i32("input_b_shift"), "input_b_shift")
    out_off, out_mul = r.i32("output_offset"), r.i32("output_mul")
    out_shift = _check_shift(r, r.i32("output_shift"), "output_shift")
    params = (a_off, a_mul, a_shift, b_off, b_mul, b_shift, out_mul, out_shift, out_off)
    # a function of two bytes: all 65536 results of the exact kernel as a table (same bits)
    table = vq.quantized_binary(np.arange(256, dtype=U8)[:, None], np.arange(256, dtype=U8)[None, :], op, *params)
    flat_table = table.reshape(-1)
    column: np.ndarray | None = None
    if sa == sb:
        n = vl.shape_size(sa)
        a, bb, o = b.src(ra, "input_a", n, U8), b.src(rb, "input_b", n, U8), b.dst(ro, "output", n, U8)

        def run():
            np.take(flat_table, (a.astype(np.intp) << 8) | bb, out=o)

        out_shape = sa
    else:
        a = b.src(ra, "input_a", vl.shape_size(sa), U8).reshape(sa)
        bb = b.src(rb, "input_b", vl.shape_size(sb), U8).reshape(sb)
        o = b.dst(ro, "output", vl.shape_size(so), U8).reshape(so)
        ia, ib = vl.broadcast_index(sa, so), vl.broadcast_index(sb, so)
        if ia is None and sa == so and vl.shape_size(sb) == 1:
            # a tensor and one byte (a scale or offset): one column of the table

            columns = np.ascontiguousarray(table.T)
            warm = fast.schedule_kernel_warm_up("lookup", (columns[0], a.reshape(-1), o.reshape(-1)))

            def run():
                _lookup(columns[int(bb.reshape(-1)[0])], a.reshape(-1), o.reshape(-1), warm)

            if rb.memory_type == MEM_CONST:  # a fixed byte: the node is one table (``v4.fuse``)
                column = columns[int(bb.reshape(-1)[0])].copy()
        else:

            def run():
                av, bv = vl.read_broadcast(a, ia, so), vl.read_broadcast(bb, ib, so)
                o[...] = table[av, bv]

        out_shape = so
    return b.make((ra, rb), ro, (sa, sb), out_shape, run, U8, details={"op": op}, byte_table=column)


def decode_table_lookup1d(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, rt, ro = r.memory_range("input"), r.memory_range("table"), r.memory_range("output")
    if ri.datatype != DT_UINT8:
        raise r.fail("input must be uint8 (the runtime rejects other types)", "input.datatype")
    n = ri.size
    x = b.src(ri, "input", n, U8)
    table = b.src(rt, "table", 256, U8)
    o = b.dst(ro, "output", n, U8)

    def run():
        o[:] = table[x]

    shape = _known_shape(ctx, ri, n)
    return b.make((ri, rt), ro, (shape, (256,)), shape, run, U8)


def decode_conv2d_transpose(r: BodyReader, ctx: DecodeContext) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s, so = r.shape("in_shape"), r.shape("out_shape")
    groups = r.i32("groups")
    pad_h, pad_w, kh, kw, sh, sw, dh, dw = _conv_geometry(r)
    lo, hi = r.value_range("fused_activation")
    if groups <= 0 or s[1] % groups or so[1] % groups or so[0] != s[0]:
        raise r.fail(f"groups {groups} does not divide in {s[1]} / out {so[1]} channels", "groups")
    gic = s[1] // groups
    w = r.array(np.float32, so[1] * gic * kh * kw, "weights").reshape(so[1], gic, kh, kw)
    r.array(np.float32, so[1], "bias")  # read but never applied by nncase v0.2
    _check_work(r, ctx, vl.shape_size(s) * (so[1] // groups), gic * kh * kw, loops=groups * gic * kh * kw)
    x = b.src(ri, "input", 4 * vl.shape_size(s), F32).reshape(s)
    o = b.dst(ro, "output", 4 * vl.shape_size(so), F32).reshape(so)

    def run():
        o[...] = vf.conv2d_transpose(x, w, so, groups, sh, sw, dh, dw, pad_h, pad_w, lo, hi)

    return b.make((ri,), ro, (s,), so, run, F32, param_bytes=4 * (w.size + so[1]),
                  macs=vl.shape_size(s) * (so[1] // groups) * kh * kw, details={"kernel": (kh, kw), "stride": (sh, sw)})


# --- cpu_* ops (NHWC) -----------------------------------------------------------------------


def _cpu_conv(r: BodyReader, ctx: DecodeContext, depthwise: bool, quantized: bool) -> Node:
    b = _Builder(r, ctx)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")  # NHWC
    n, h, wd, c = s
    oc = c if depthwise else r.i32("out_channels")
    pad_h, pad_w, kh, kw, sh, sw, dh, dw = _conv_geometry(r)
    if oc <= 0:
        raise r.fail(f"out_channels {oc} is not positive", "out_channels")
    if quantized:
        in_off, w_off, mul = r.i32("input_offset"), r.i32("filter_offset"), r.i32("output_mul")
        shift = _check_shift(r, r.i32("output_shift"), "output_shift")
        out_off = r.i32("output_offset")
        wcount = oc * kh * kw * (1 if depthwise else c)
        w_raw = r.array(np.uint8, wcount, "weights")
        bias = r.array(np.int32, oc, "bias")
    else:
        lo, hi = r.value_range("fused_activation")
        wcount = oc * kh * kw * (1 if depthwise else c)
        w_raw = r.array(np.float32, wcount, "weights")
        bias = r.array(np.float32, oc, "bias")
    # weights [oc][kh][kw][ic] -> [oc][ic][kh][kw] (depthwise: groups = c, one input per group)
    if depthwise:
        w = w_raw.reshape(oc, 1, kh, kw)
        groups = c
    else:
        w = np.ascontiguousarray(w_raw.reshape(oc, kh, kw, c).transpose(0, 3, 1, 2))
        groups = 1
    oh, ow = vf.out_size(h, kh, sh, dh, pad_h), vf.out_size(wd, kw, sw, dw, pad_w)
    _check_out(r, oh, ow)
    out_shape = (n, oh, ow, oc)
    taps = kh * kw * (1 if depthwise else c)
    # vf.conv2d loops over groups x taps = c*kh*kw; quantized_conv2d over groups x row blocks
    loops = _qconv_loops(r, n, 1 if depthwise else c, groups, oh, ow, kh, kw) if quantized else c * kh * kw
    _check_work(r, ctx, vl.shape_size(out_shape), taps, loops=loops)
    es = 1 if quantized else 4
    dt = U8 if quantized else F32
    x = b.src(ri, "input", es * vl.shape_size(s), dt).reshape(s)
    o = b.dst(ro, "output", es * vl.shape_size(out_shape), dt).reshape(out_shape)

    details = {"kernel": (kh, kw), "stride": (sh, sw), "layout": "NHWC", "depthwise": depthwise}
    if quantized:
        # cpu ops subtract their offsets: (x - in_off)(w - w_off)
        conv = QuantizedConv(w, bias, groups, (sh, sw), (dh, dw), (pad_h, pad_w), -in_off, -w_off, mul, shift, out_off,
                             (n, c, h, wd), "NHWC")
        details.update(path=conv.path, refused=conv.refused)

        def run():
            conv.run(x, o)
    else:
        def run():
            xc = np.transpose(x, (0, 3, 1, 2))
            y = vf.conv2d(xc, w, bias, groups, sh, sw, dh, dw, pad_h, pad_w, lo, hi, "kkc")
            o[...] = np.transpose(y, (0, 2, 3, 1))

        _warm_float_conv()

    return b.make((ri,), ro, (s,), out_shape, run, dt, param_bytes=w_raw.nbytes + bias.nbytes,
                  macs=vl.shape_size(out_shape) * kh * kw * (1 if depthwise else c), details=details)


def decode_cpu_conv2d(r, ctx):
    return _cpu_conv(r, ctx, depthwise=False, quantized=False)


def decode_cpu_depthwise_conv2d(r, ctx):
    return _cpu_conv(r, ctx, depthwise=True, quantized=False)


def decode_cpu_quantized_conv2d(r, ctx):
    return _cpu_conv(r, ctx, depthwise=False, quantized=True)


def decode_cpu_quantized_depthwise_conv2d(r, ctx):
    return _cpu_conv(r, ctx, depthwise=True, quantized=True)


DECODERS: dict[int, Callable[[BodyReader, DecodeContext], Node]] = {
    0x00: decode_binary, 0x01: decode_concat, 0x02: decode_conv2d, 0x03: decode_dequantize,
    0x04: decode_matmul, 0x05: decode_pad, 0x06: decode_quantize, 0x07: decode_reduce,
    0x08: decode_reduce_window2d, 0x09: decode_memory_copy, 0x0A: decode_resize_image,
    0x0B: decode_softmax, 0x0C: decode_transpose, 0x0D: decode_strided_slice, 0x0E: decode_unary,
    0x0F: decode_quantized_conv2d, 0x10: decode_quantized_matmul, 0x11: decode_quantized_binary,
    0x12: decode_table_lookup1d, 0x13: decode_conv2d_transpose, 0x14: decode_nnil_unary_method,
    0x1001: decode_cpu_conv2d, 0x1002: decode_cpu_depthwise_conv2d,
    0x1003: decode_cpu_reduce_window2d, 0x1004: decode_cpu_quantized_conv2d,
    0x1005: decode_cpu_quantized_depthwise_conv2d,
}

__all__ = ["DECODERS", "DecodeContext", "Memory", "Node"]
