"""kmodel V4 (nncase v0.2): load a file into a prepared :class:`V4Model` and run it.

Layout of the file and of every node body: ``shared/docs/kmodel-v4.md``. Loading parses and
validates the header, input/output ranges and every node (``format``), allocates the memories
once (main memory zeroed and kept between runs, as on the device; the 2 MiB KPU RAM), and turns
each node into a prepared step (``nodes``, ``kpu``). ``run`` feeds input 0 as the device
glue does (``kpu_upload`` into KPU RAM, or a plain copy into main memory), runs the steps and copies
the output ranges out.

Float outputs follow the nncase *host* kernels by default (``float_mode="host"``: dequantize
``(q - zp) * (1/scale)``, quantize ``roundf``), which is what the golden vectors were made with;
``float_mode="device"`` models the runtime's RISC-V kernels instead (fused multiply-add,
round-half-to-even quantize).
"""

from __future__ import annotations

import time
from typing import Callable, Iterator

import numpy as np

from ..errors import KmodelFormatError, KmodelUnsupportedError
from ..kpu.warmup import metered
from ..model import (
    LayerInfo,
    MemoryUsage,
    Model,
    TensorSpec,
    TraceStep,
    sequence_of_inputs,
)
from ..ops.v4_layout import shape_size
from ..reader import BinaryReader
from .format import (
    MEM_CONST,
    MEM_KPU,
    NODE_HEADER_BYTES,
    OPCODE_NAMES,
    BodyReader,
    Header,
    MemoryRange,
    NodeHeader,
    arena_sizes,
    check_range,
    read_header,
    read_range,
)
from .fuse import Fused, byte_chains, head_chains, shared_uploads
from .nodes import DECODERS, DecodeContext, Memory, Node

FLOAT_MODES = ("host", "device")


def _skip() -> None:
    """A node of a fused chain (``v4.fuse``) whose work the chain's lookups do."""


class V4Model(Model):
    """A loaded V4 kmodel. Public attributes as in :class:`Model`, plus:

    ``input_is_kpu`` -- input 0 lives in KPU RAM (an image fed with ``kpu_upload``);
    ``input_chw`` -- ``(C, H, W)`` of input 0 from its NCHW ``input_shapes`` entry (what MaixPy
    checks images against); ``output_sizes`` -- element count of every output (what
    ``kpu.set_outputs(task, idx, w, h, ch)`` must match with ``w*h*ch``).
    """

    version = 4

    def __init__(self, data: bytes, header: Header, in_ranges: list[MemoryRange], in_shapes: list[tuple[int, ...]],
                 out_ranges: list[MemoryRange], nodes: list[Node], mem: Memory, kpu_state, float_mode: str,
                 shapes: dict[tuple[int, int, int], tuple[int, ...]], fused: list[Fused] | None = None):
        self.header = header
        self._final_shapes = shapes
        self.float_mode = float_mode
        self._in_ranges = in_ranges
        self._in_shapes = in_shapes
        self._out_ranges = out_ranges
        self._nodes = nodes
        #: chains of glue a plain run does in one pass (``v4.fuse``); ``trace`` runs every node
        self._fused = list(fused or [])
        self._mem = mem
        self._kpu = kpu_state
        self.notes = [f"float outputs follow the nncase v0.2 {float_mode} kernels (float_mode={float_mode!r})"]
        for n in nodes:
            for note in n.details.get("notes", ()):
                self.notes.append(f"node {n.index} ({n.kind}): {note}")
        self.inputs = [self._input_spec(i) for i in range(len(in_ranges))]
        self.outputs = [self._output_spec(i) for i in range(len(out_ranges))]
        self.layers = [self._layer_info(n) for n in nodes]
        self.memory = self._memory_usage(len(data))
        self._feeders = [self._input_feeder(i) for i in range(len(in_ranges))]
        self._output_views = [mem.view(r) for r in out_ranges]

    # --- public helpers -----------------------------------------------------------------------

    @property
    def input_is_kpu(self) -> bool:
        return self._in_ranges[0].memory_type == MEM_KPU

    @property
    def input_chw(self) -> tuple[int, int, int]:
        s = self._in_shapes[0]
        return (int(s[1]), int(s[2]), int(s[3]))

    @property
    def output_sizes(self) -> list[int]:
        return [o.size for o in self.outputs]

    @property
    def nodes(self) -> list[Node]:
        return list(self._nodes)

    # --- running --------------------------------------------------------------------------------

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        self._feed(inputs)
        cache = self._kpu.cache
        with metered():  # the numpy forms' time decides when the compiled engine starts (kpu.warmup)
            for run, drops in self._schedule():
                run()
                for key in drops:  # a cached conv output no later node takes
                    cache.pop(key, None)
        return self._fetch()

    def layer_times(self, *inputs: np.ndarray, clock: Callable[[], float] = time.process_time) -> list[tuple[int, float]]:
        self._feed(inputs)
        cache = self._kpu.cache
        times = []
        for node, (run, drops) in zip(self._nodes, self._schedule()):
            start = clock()
            run()
            times.append((node.index, clock() - start))
            for key in drops:
                cache.pop(key, None)
        return times

    def _schedule(self) -> list:
        """(run, cache keys to drop after it) per node, made once (the plan is fixed at load):
        ``node.run``, or a fused chain's part (``v4.fuse``) at its nodes."""
        schedule = getattr(self, "_run_schedule", None)
        if schedule is None:
            kpu = self._kpu
            runs: dict[int, Callable[[], None]] = {}
            for chain in self._fused:
                runs.update(chain.runs)
                runs.update((i, _skip) for i in chain.skipped)
            schedule = self._run_schedule = [(runs.get(n.index, n.run), tuple(kpu.drops.get(kpu.NODE_STEP0 + n.index, ())))
                                             for n in self._nodes]
        return schedule

    def trace(self, *inputs: np.ndarray, limit: int | None = None) -> Iterator[TraceStep]:
        # while tracing, every map placed in KPU RAM is really written there (a trace shows and
        # leaves the device's memories, however far it goes)
        self._kpu.tracing = True
        try:
            self._feed(inputs)
            nodes = self._nodes if limit is None else self._nodes[: max(0, limit)]
            for node in nodes:
                node.run()
                out = node.result() if node.result is not None else np.empty(0, np.uint8)
                yield TraceStep(node.index, node.kind, out, node.on_kpu, f"{node.index:03d}_{node.kind}")
        finally:
            self._kpu.tracing = False

    def _feed(self, inputs) -> None:
        arrays = sequence_of_inputs(self.inputs, inputs)
        for i, x in enumerate(arrays):
            self._feeders[i](x)

    def _fetch(self) -> list[np.ndarray]:
        outs = []
        for spec, view in zip(self.outputs, self._output_views):
            outs.append(view[: spec.size].copy().reshape(spec.shape))
        return outs

    # --- construction helpers -------------------------------------------------------------------

    def _input_spec(self, i: int) -> TensorSpec:
        mr, shape = self._in_ranges[i], self._in_shapes[i]
        if mr.memory_type == MEM_KPU:
            return TensorSpec(tuple(shape), np.dtype(np.uint8), "NCHW", "kpu", f"input{i}", mr.start)
        count = mr.count
        s = tuple(shape) if shape_size(shape) == count else (count,)
        return TensorSpec(s, mr.dtype, "NCHW" if len(s) == 4 else "flat", "main", f"input{i}", mr.start)

    def _input_feeder(self, i: int):
        mr, spec = self._in_ranges[i], self.inputs[i]
        if mr.memory_type == MEM_KPU:
            kpu, start = self._kpu, mr.start
            step = kpu.INPUT_STEP + i
            single = self._in_shapes[i][0] == 1

            def feed(x: np.ndarray) -> None:
                if single:  # kept for the conv that reads it (plan_kpu_ram), in KPU RAM if needed
                    kpu.cache[step] = ("U8", np.array(np.asarray(x).reshape(self._in_shapes[i][1:]), dtype=np.uint8))
                    if step not in kpu.plan.materialize and not kpu.tracing:
                        return
                kpu.upload(x, start)

            return feed
        view = self._mem.view(mr)[: spec.size]

        def feed_memory(x: np.ndarray) -> None:
            view[:] = x.reshape(-1)

        return feed_memory

    def _output_spec(self, i: int) -> TensorSpec:
        mr = self._out_ranges[i]
        count = mr.count
        shape = self._final_shapes.get((mr.memory_type, mr.start, mr.size))
        if shape is None or shape_size(shape) != count:
            shape = (count,)
        layout = "NCHW" if len(shape) == 4 else "flat"
        return TensorSpec(tuple(int(d) for d in shape), mr.dtype, layout, mr.memory, f"output{i}", mr.start)

    def _layer_info(self, n: Node) -> LayerInfo:
        return LayerInfo(
            index=n.index,
            kind=n.kind,
            on_kpu=n.on_kpu,
            input_shapes=n.in_shapes,
            output_shapes=(n.out_shape,),
            param_bytes=n.param_bytes,
            macs=n.macs,
            name=f"{n.index:03d}_{n.kind}",
            output_dtype=np.dtype(n.out_dtype).name,
            details=n.details,  # shared: a KPU layer's "path" changes when its compiled path takes over
        )

    def _memory_usage(self, file_bytes: int) -> MemoryUsage:
        kpu_end = 0
        for r in [*self._in_ranges, *self._out_ranges]:
            if r.memory_type == MEM_KPU:
                kpu_end = max(kpu_end, r.end)
        for n in self._nodes:
            kpu_end = max(kpu_end, int(n.details.get("kpu_end", 0)))
            for access in (*n.reads, n.writes):
                if access is not None and access.memory_type == MEM_KPU:
                    kpu_end = max(kpu_end, access.end)
        params = self.header.constants + sum(n.param_bytes for n in self._nodes)
        return MemoryUsage(file_bytes=file_bytes, param_bytes=params, main_memory_bytes=self.header.main_mem,
                           kpu_ram_bytes=kpu_end)

    def describe(self) -> str:
        kinds: dict[str, int] = {}
        for n in self._nodes:
            kinds[n.kind] = kinds.get(n.kind, 0) + 1
        ops = ", ".join(f"{k}x{v}" for k, v in kinds.items())
        return (f"kmodel V4: {len(self._nodes)} nodes ({ops}); input {self.inputs[0].shape} in {self.inputs[0].memory} "
                f"memory; outputs {[o.shape for o in self.outputs]}")


def load_v4(data: bytes, *, float_mode: str = "host") -> V4Model:
    """Parse and prepare a V4 kmodel from its bytes."""
    if float_mode not in FLOAT_MODES:
        raise ValueError(f"float_mode must be one of {FLOAT_MODES}, not {float_mode!r}")
    r = BinaryReader(data)
    header = read_header(r)
    sizes = arena_sizes(header)
    in_ranges = [read_range(r, f"inputs[{i}]") for i in range(header.inputs)]
    in_shapes = []
    for i in range(header.inputs):
        at = r.offset
        s = r.struct("4i", f"input_shapes[{i}]")
        if any(d <= 0 for d in s) or shape_size(s) > (1 << 26):
            raise KmodelFormatError(f"input shape {list(s)} is not a valid NCHW shape", offset=at, field=f"input_shapes[{i}]")
        in_shapes.append(tuple(int(d) for d in s))
    out_ranges = [read_range(r, f"outputs[{i}]") for i in range(header.outputs)]
    constants = r.bytes(header.constants, "constants")
    node_headers: list[NodeHeader] = []
    table_at = r.offset
    body_at = r.offset + header.nodes * NODE_HEADER_BYTES
    for i in range(header.nodes):
        opcode, body_size = r.struct("2I", f"nodes[{i}]")
        node_headers.append(NodeHeader(i, opcode, body_size, body_at))
        body_at += body_size
        if body_at > len(data) + 8:
            raise KmodelFormatError(
                f"node {i} body ({body_size} bytes) ends at {body_at}, beyond the {len(data)}-byte file",
                offset=r.offset - 4, field=f"nodes[{i}].body_size")

    for i, mr in enumerate(in_ranges):
        check_range(mr, sizes, f"inputs[{i}]", writable=True)
        if mr.memory_type == MEM_CONST:
            raise KmodelFormatError("an input cannot live in const memory", offset=mr.offset, field=f"inputs[{i}]")
    for i, mr in enumerate(out_ranges):
        check_range(mr, sizes, f"outputs[{i}]")

    from .kpu import KPU_DECODERS, KpuState, kpu_map_bytes

    kpu_state = KpuState()
    mem = Memory(constants, header.main_mem, kpu_state.ram)
    ctx = DecodeContext(mem, sizes, {}, float_mode, kpu_state)
    for i, (mr, shape) in enumerate(zip(in_ranges, in_shapes)):
        if mr.memory_type == MEM_KPU:
            need = kpu_map_bytes(shape)
            if need > mr.size:
                raise KmodelFormatError(
                    f"input {i} of shape {list(shape)} needs {need} bytes of KPU RAM in row layout, the range has {mr.size}",
                    offset=mr.offset + 12, field=f"inputs[{i}].size")
        ctx.shapes[(mr.memory_type, mr.start, mr.size)] = shape
        if mr.memory_type == MEM_KPU:
            c_h_w = shape[1:]
            for b in range(shape[0]):
                kpu_state.record("w", mr.start + b * kpu_map_bytes((1, *c_h_w)), c_h_w, KpuState.INPUT_STEP + i, conv=shape[0] == 1)
    nodes: list[Node] = []
    decoders = {**DECODERS, **KPU_DECODERS}
    for nh in node_headers:
        decoder = decoders.get(nh.opcode)
        if decoder is None:
            raise KmodelUnsupportedError(
                f"node {nh.index} has opcode 0x{nh.opcode:x}, which kmodel V4 (nncase v0.2) does not define",
                offset=table_at + NODE_HEADER_BYTES * nh.index, field=f"nodes[{nh.index}].opcode")
        body = BodyReader(data, nh, len(data))
        nodes.append(decoder(body, ctx))
    for i, mr in enumerate(out_ranges):
        if mr.memory_type == MEM_KPU:
            kpu_state.record_bytes("r", mr.start, mr.size, KpuState.OUTPUT_STEP + i)
    kpu_state.finalize()
    fused = byte_chains(nodes, mem, out_ranges, float_mode)
    fused += head_chains(nodes, mem, out_ranges, fused)
    steps = KpuState.NODE_STEP0
    same = shared_uploads(nodes, fused)
    kpu_state.same_as = {steps + u: steps + e for u, e in same.items()}
    kpu_state.keep = set(kpu_state.same_as.values())
    return V4Model(data, header, in_ranges, in_shapes, out_ranges, nodes, mem, kpu_state, float_mode, dict(ctx.shapes), fused)


__all__ = ["FLOAT_MODES", "OPCODE_NAMES", "V4Model", "load_v4"]
