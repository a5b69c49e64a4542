"""V4's K210 nodes (``kpu_upload``, ``kpu_conv2d``) as a thin adapter over the shared KPU engine.

The convolution itself is ``kpu.KpuConv`` (the same engine V3 uses); this module only decodes the
V4 body (tables reached by relative skip counts, ``batches``, the optional dense copy to main
memory) and keeps the KPU RAM state:

* ``KpuState.ram`` is the 2 MiB arena that memory ranges of type KPU address in bytes;
* every access to KPU RAM a model makes is recorded at load time and ``kpu.plan_kpu_ram`` decides
  which conv outputs really have to be written into the arena in row layout and which conv inputs
  may take the previous conv's (centred float32) array directly. Reads that are not provably
  served by the cache go to the arena, so aliasing behaves as on the chip.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .. import kpu as kpu_engine
from ..kpu.fast import loaded_kernels
from ..errors import KmodelFormatError
from ..model import K210_KPU_RAM_BYTES
from .format import BodyReader, MEM_KPU, check_range
from .nodes import TRANSPOSE_MIN_WIDTH, DecodeContext, Node

#: where a redirected layer's main-memory map goes: ``sink(layout, native map)``
Sink = Callable[[str, np.ndarray], None]

#: Activation lookup-table limit for V4 layers. nncase v0.2 quantises layer inputs with wider
#: batch-norm ranges than v0.1 (yolo_20class V4: 5.7M and 8.3M possible values in two layers),
#: which the engine's default limit sends to the slow exact int64 path (60 ms for one layer).
#: A table of up to 16M float32 entries (64 MB) keeps them on the exact fast path.
V4_LUT_MAX_ENTRIES = 1 << 24
#: ... but all such enlarged tables of one model together stay below 32M entries (128 MB), so a
#: corrupt or hostile file cannot make the loader allocate without bound.
V4_LUT_BUDGET_ENTRIES = 1 << 25
#: All tables of one model, enlarged or not (ulffd_landmark: 95M entries in 43 layers). Beyond it
#: layers take the exact int64 path: slower, but a file of thousands of wide-range layers cannot
#: make the loader hold gigabytes of tables.
V4_LUT_TOTAL_ENTRIES = 1 << 27


def kpu_map_bytes(shape_nchw) -> int:
    """Bytes a dense ``[N,C,H,W]`` map takes in KPU RAM with the row layout (all batches)."""
    n, c, h, w = (int(v) for v in shape_nchw)
    return n * kpu_engine.kpu_bytes(c, h, w)


class KpuState:
    """The KPU RAM of one model plus the cache of conv outputs that the RAM plan allows."""

    #: step numbers: model inputs first, then nodes, then the final output reads
    INPUT_STEP = 0
    NODE_STEP0 = 1 << 16
    OUTPUT_STEP = 1 << 30

    def __init__(self) -> None:
        self.kram = kpu_engine.KpuRam(K210_KPU_RAM_BYTES)
        self.ram = self.kram.arena
        self.accesses: list[kpu_engine.KpuAccess] = []
        #: step -> (layout, map) of a cached conv output ("U8" for a map the CPU placed)
        self.cache: dict[int, tuple[str, np.ndarray]] = {}
        self.plan = kpu_engine.KpuRamPlan()
        self.lut_budget = V4_LUT_BUDGET_ENTRIES
        self.lut_total_left = V4_LUT_TOTAL_ENTRIES
        self.drops: dict[int, list[int]] = {}
        #: set by ``V4Model.trace``: maps placed by the CPU go into the arena even when cached
        self.tracing = False
        #: ``kpu_upload`` steps that take an earlier upload's map of the same, unchanged bytes
        #: (``v4.fuse.shared_uploads``: ulffd uploads one 48x30x40 map three times), the steps
        #: whose map they take, and those maps as the latest run made them
        self.same_as: dict[int, int] = {}
        self.keep: set[int] = set()
        self.kept: dict[int, tuple[str, np.ndarray]] = {}

    def prepare_conv(self, regs, weights, bn_words, act) -> "kpu_engine.KpuConv":
        """``KpuConv.prepare`` with a larger activation-table limit while the model's budget lasts."""
        default = kpu_engine.LUT_MAX_ENTRIES
        limit = max(default, min(V4_LUT_MAX_ENTRIES, self.lut_budget))
        limit = max(0, min(limit, self.lut_total_left))
        conv = kpu_engine.KpuConv.prepare(regs, weights, bn_words, act, weight_bytes=1, lut_max_entries=limit)
        used = conv.table_entries
        if used > default:
            self.lut_budget -= used
        self.lut_total_left -= used
        return conv

    # --- load time -----------------------------------------------------------------------------

    def record(self, kind: str, addr: int, shape: Sequence[int], step: int, conv: bool = False) -> None:
        c, h, w = (int(v) for v in shape)  # [C, H, W]
        self.accesses.append(kpu_engine.KpuAccess(kind, int(addr), (c, h, w), step, conv))

    def record_bytes(self, kind: str, addr: int, nbytes: int, step: int) -> None:
        """A plain byte range (a non-KPU node or an output touching KPU memory)."""
        if nbytes > 0:
            self.record(kind, addr, (1, 1, nbytes), step)

    def finalize(self) -> None:
        self.plan = kpu_engine.plan_kpu_ram(self.accesses, K210_KPU_RAM_BYTES)
        # a run forgets each cached conv output once the last conv that takes it has run
        last: dict[int, int] = {}
        for reader, writer in self.plan.reuse.items():
            last[writer] = max(last.get(writer, reader), reader)
        writers = {a.step for a in self.accesses if a.kind == "w" and a.conv}
        self.drops = {}
        for writer in writers:
            self.drops.setdefault(last.get(writer, writer), []).append(writer)

    def forget_after(self, step: int) -> None:
        for key in self.drops.get(step, ()):
            self.cache.pop(key, None)

    # --- run time ------------------------------------------------------------------------------

    def upload(self, x: np.ndarray, start: int) -> None:
        """Write a dense NCHW u8 tensor at byte ``start`` in row layout (batch n at n*map bytes)."""
        x = np.asarray(x, dtype=np.uint8)
        if x.ndim == 3:
            x = x[None]
        n, c, h, w = x.shape
        step = kpu_engine.kpu_bytes(c, h, w)
        for i in range(n):
            self.kram.upload(start + i * step, x[i])

    def download(self, start: int, shape_nchw) -> np.ndarray:
        n, c, h, w = shape_nchw
        step = kpu_engine.kpu_bytes(c, h, w)
        return np.stack([self.kram.download(start + i * step, (c, h, w)) for i in range(n)])


def decode_kpu_upload(r: BodyReader, ctx: DecodeContext) -> Node:
    state = ctx.kpu
    assert state is not None  # (the loader gives every decoder the model's KPU state)
    ri, ro = r.memory_range("input"), r.memory_range("output")
    s = r.shape("in_shape")
    node = r.node
    if ro.memory_type != MEM_KPU:
        raise r.fail(f"output {ro} must be in KPU memory", "output.memory_type")
    if min(s) <= 0:
        raise r.fail(f"in_shape {list(s)} is empty", "in_shape")
    check_range(ri, ctx.sizes, "input", node=node)
    check_range(ro, ctx.sizes, "output", writable=True, node=node)
    count = int(np.prod(s))
    if count > ri.size:
        raise r.fail(f"input {ri} holds {ri.size} bytes, the shape {list(s)} needs {count}", "input.size")
    need = kpu_map_bytes(s)
    if ro.start + need > K210_KPU_RAM_BYTES:
        raise r.fail(f"a {list(s)} map at KPU byte {ro.start} runs past the 2 MiB KPU RAM", "output.start")
    src = ctx.memory.view(ri, np.uint8, count).reshape(s)
    step = KpuState.NODE_STEP0 + node.index
    if ri.memory_type == MEM_KPU:
        state.record_bytes("r", ri.start, count, step)
    single = s[0] == 1
    for i in range(s[0]):
        # one map: a cacheable write (the conv that reads it may take the array, see plan_kpu_ram)
        state.record("w", ro.start + i * kpu_engine.kpu_bytes(*s[1:]), s[1:], step, conv=single)
    start = ro.start
    hwc_shape = (int(s[2]), int(s[3]), int(s[1]))
    narrow = int(s[3]) < TRANSPOSE_MIN_WIDTH

    def run() -> None:
        if single:
            earlier = state.same_as.get(step)
            entry = state.kept.get(earlier) if earlier is not None else None
            if entry is None:
                entry = _placed(src[0])
            state.cache[step] = entry
            if step in state.keep:
                state.kept[step] = entry
            if step not in state.plan.materialize and not state.tracing:
                return
        state.upload(src, start)

    def _placed(x: np.ndarray) -> tuple[str, np.ndarray]:
        """The cache entry of the map: the conv that takes it runs on HWC once its compiled path
        is in place, so the transposing copy is made here, instead of a plain copy the conv then
        transposes (the same bytes in the layout the entry names; a CHW reader converts back)."""
        kn = loaded_kernels()
        if kn is None:
            return ("U8", np.array(x, dtype=np.uint8))
        hwc = np.empty(hwc_shape, np.uint8)
        if narrow:  # (numpy's strided copy is the faster one there: 512x4x4 3.8 vs 6.3 us)
            np.copyto(hwc, x.transpose(1, 2, 0))
        else:
            kn.chw_to_hwc(x, hwc)
        return ("HWC", hwc)

    def result() -> np.ndarray:
        return state.download(start, s)

    ctx.shapes[(ro.memory_type, ro.start, ro.size)] = s
    return Node(node.index, node.name, (ri,), ro, (s,), s, run, result, out_dtype=np.dtype(np.uint8),
                details={"kpu_end": start + need})


def decode_kpu_conv2d(r: BodyReader, ctx: DecodeContext) -> Node:
    state = ctx.kpu
    assert state is not None  # (the loader gives every decoder the model's KPU state)
    node = r.node
    main_out = r.memory_range("main_mem_output")
    batches = r.i32("batches")
    r.i32("reserved0")
    regs_at = r.offset
    words = [r.u64(f"layer[{i}]") for i in range(12)]
    regs = kpu_engine.decode_registers(words, offset=node.body_offset + regs_at)
    regs.validate_layout(offset=node.body_offset + regs_at, strict=True)
    if not 1 <= batches <= 1024:
        raise r.fail(f"batches {batches} is not plausible", "batches")
    oc = regs.out_channels
    r.skip(regs.bwsx_base_addr, "bwsx_base_addr (skip before batch-norm table)")
    bn_words = r.array(np.uint64, oc, "batch_norm")
    r.skip(regs.active_addr, "active_addr (skip before activation table)")
    act_at = r.offset
    act = r.bytes(144, "activation")
    r.skip(regs.para_start_addr, "para_start_addr (skip before weights)")
    weights = r.view(regs.weight_count, "weights")
    conv = state.prepare_conv(regs, weights, bn_words, act)
    conv.act_where = (node.body_offset + act_at, f"node[{node.index}].activation")

    ic, ih, iw = regs.in_shape
    oc, oh, ow = regs.out_shape
    in_shape = (batches, ic, ih, iw)
    out_shape = (batches, oc, oh, ow)
    src, dst = conv.src_addr, conv.dst_addr
    in_step, out_step = kpu_engine.kpu_bytes(ic, ih, iw), kpu_engine.kpu_bytes(oc, oh, ow)
    for what, base, stride in (("input", src, in_step), ("output", dst, out_step)):
        if base + batches * stride > K210_KPU_RAM_BYTES:
            raise KmodelFormatError(
                f"node {node.index} (kpu_conv2d): {what} map of {batches} x {stride} bytes at KPU byte {base} runs past the 2 MiB KPU RAM",
                offset=node.body_offset + regs_at + 8, field=f"node[{node.index}].layer.image_addr")
    main_view = None
    dense = int(np.prod(out_shape))
    if main_out.size:
        if main_out.memory_type == MEM_KPU:
            raise r.fail("main_mem_output must not be in KPU memory", "main_mem_output.memory_type")
        check_range(main_out, ctx.sizes, "main_mem_output", writable=True, node=node)
        if main_out.size < dense:
            raise r.fail(f"main_mem_output {main_out} holds {main_out.size} bytes, the layer writes {dense}", "main_mem_output.size")
        main_view = ctx.memory.view(main_out, np.uint8, dense).reshape(out_shape)
        ctx.shapes[(main_out.memory_type, main_out.start, main_out.size)] = out_shape

    step = KpuState.NODE_STEP0 + node.index
    single = batches == 1
    #: the one map's place in main memory (a view made once, not per run)
    main_map = main_view[0] if main_view is not None else None
    for b in range(batches):
        state.record("r", src + b * in_step, (ic, ih, iw), step, conv=single)
    for b in range(batches):
        state.record("w", dst + b * out_step, (oc, oh, ow), step, conv=single)
    cache = state.cache
    last: dict[str, Any] = {}

    def run() -> None:
        _run(None)

    def _run(sink: Sink | None) -> None:
        """The layer; its main-memory map written there, or handed to ``sink`` (``redirect``)."""
        plan = state.plan
        if single:
            layout, run_native = conv.native()  # the compiled path may take over between two runs
            producer = plan.reuse.get(step)
            cached = cache.get(producer) if producer is not None else None
            if cached is None:
                xn = kpu_engine.to_native(state.kram.download(src, (ic, ih, iw)), layout)
            elif cached[0] == layout:  # (the producer's own layout: most layers on the compiled path)
                xn = cached[1]
            else:
                xn = kpu_engine.convert_native(cached[1], cached[0], layout)
            yn = run_native(xn)
            cache[step] = (layout, yn)
            if step in plan.materialize:
                y = kpu_engine.from_native(yn, layout)
                state.kram.upload(dst, y)
                if sink is not None:
                    sink("U8", y)
                elif main_map is not None:
                    main_map[...] = y
            elif sink is not None:
                sink(layout, yn)
            elif main_map is not None:
                kn = loaded_kernels() if layout == "HWC" else None
                if kn is not None:  # the transpose writes main memory itself
                    kn.hwc_to_chw(yn, main_map)
                else:
                    main_map[...] = kpu_engine.from_native(yn, layout)
            if state.tracing:  # (what ``result`` shows; a plain run holds no layer's map past its readers)
                last["yn"] = (layout, yn)
        else:
            x = state.download(src, in_shape)
            y = conv.run(x)
            state.upload(y, dst)
            if main_view is not None:
                main_view[...] = y
            if state.tracing:
                last["y"] = y

    def redirect(sink: Sink) -> Callable[[], None]:
        def run_into() -> None:
            _run(sink)

        return run_into

    def result() -> np.ndarray:
        if single:
            return kpu_engine.from_native(last["yn"][1], last["yn"][0])[None]
        return last["y"].copy()

    param_bytes = weights.size + 8 * oc + 144
    details = {
        "kernel": conv.k,
        "depthwise": conv.depthwise,
        "pool": kpu_engine.POOL_NAMES.get(regs.pool_type, str(regs.pool_type)),
        "kpu_src": src,
        "kpu_dst": dst,
        "main_output": str(main_out) if main_out.size else None,
        "batches": batches,
        "fast_path": conv.fast,
        "path": conv.path,
        "refused": conv.refused,
        "kpu_end": max(src + batches * in_step, dst + batches * out_step),
        "notes": list(conv.notes),
    }
    conv.on_switch.append(lambda: details.update(path=conv.path))
    writes = main_out if main_out.size else None
    return Node(node.index, node.name, (), writes, (in_shape,), out_shape, run, result, on_kpu=True,
                param_bytes=param_bytes, macs=conv.macs * batches, out_dtype=np.dtype(np.uint8), details=details,
                redirect=redirect if single and main_view is not None else None)


KPU_DECODERS = {0x2001: decode_kpu_upload, 0x2002: decode_kpu_conv2d}

__all__ = ["KPU_DECODERS", "KpuState", "kpu_map_bytes"]
