"""kmodel V3 (nncase v0.1, MaixPy ``kpu.load``): parse once into prepared steps, run as numpy.

The file is decoded layer by layer with each body's struct layout (kmodel-v3.md §3); every
offset, size and count is checked against the file length and the K210's memories before
anything is allocated, so a corrupt file raises KmodelFormatError naming the byte offset and the
field. Execution follows the SDK runner (``kpu_run_kmodel``): main memory is a byte arena of
``main_mem_usage`` bytes, KPU RAM a 2 MiB arena with the row layout, both zeroed at load and kept
between runs as on the device. KPU→KPU chains pass float32 arrays along without touching the
arena unless a later read needs the bytes (``kpu.plan_kpu_ram``).

What a loaded :class:`V3Model` offers beyond :class:`~maixemu.kmodel.model.Model`:

* ``input_chw`` — (C, H, W) of the first K210_CONV's input (what ``kpu.forward`` checks images
  against), or ``None`` when the first layer is FULLY_CONNECTED (float list input);
* ``layers[i].output_dtype`` ("uint8"/"float32"), ``layers[i].output_shapes``,
  ``layers[i].details["typecode"]`` and ``layer_output_typecode(i)`` ('B' or 'f', MaixPy's fmap
  typecode for a run stopped after layer ``i``);
* ``trace(x, limit=n)`` — the first ``n`` layers (``kpu.set_layers``); each step's ``output`` is a
  K210_CONV's pooled map as uint8 ``[C,H,W]`` or the CPU layer's output buffer (typed);
* ``outputs`` typed as the device types them: float32 unless the last layer is a quantised one
  (then uint8), shaped ``[C,H,W]`` when a conv's map can be traced to the output address;
* ``header`` (the seven header fields), ``file_bytes``, ``reset_memory()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np

from . import kpu as K
from .errors import KmodelError, KmodelFormatError, KmodelRuntimeError, KmodelUnsupportedError
from .model import (
    K210_MAIN_MEMORY_BYTES,
    LayerInfo,
    MemoryUsage,
    Model,
    TensorSpec,
    TraceStep,
    check_input,
)
from .ops import activation as act_ops
from .ops import elementwise, fully_connected, layout, pool, quantize
from .reader import BinaryReader

LAYER_NAMES = {
    0: "INVALID",
    1: "ADD",
    2: "QUANTIZED_ADD",
    3: "GLOBAL_MAX_POOL2D",
    4: "QUANTIZED_GLOBAL_MAX_POOL2D",
    5: "GLOBAL_AVERAGE_POOL2D",
    6: "QUANTIZED_GLOBAL_AVERAGE_POOL2D",
    7: "MAX_POOL2D",
    8: "QUANTIZED_MAX_POOL2D",
    9: "AVERAGE_POOL2D",
    10: "QUANTIZED_AVERAGE_POOL2D",
    11: "QUANTIZE",
    12: "DEQUANTIZE",
    13: "REQUANTIZE",
    14: "L2_NORMALIZATION",
    15: "SOFTMAX",
    16: "CONCAT",
    17: "QUANTIZED_CONCAT",
    18: "FULLY_CONNECTED",
    19: "QUANTIZED_FULLY_CONNECTED",
    20: "TENSORFLOW_FLATTEN",
    21: "QUANTIZED_TENSORFLOW_FLATTEN",
    22: "RESIZE_NEAREST_NEIGHBOR",
    23: "QUANTIZED_RESIZE_NEAREST_NEIGHBOR",
    24: "CHANNELWISE_DEQUANTIZE",
    25: "LOGISTIC",
    10240: "K210_CONV",
    10241: "K210_ADD_PADDING",
    10242: "K210_REMOVE_PADDING",
    10243: "K210_UPLOAD",
}
LAYER_CODES = {name: code for code, name in LAYER_NAMES.items()}
UNSUPPORTED_CODES = {0, 3, 4, 6, 7, 10, 19, 21}
#: Layer types whose output MaixPy types as uint8 ('B'); all other non-conv layers are 'f'.
QUANTIZED_OUTPUT = {"QUANTIZED_ADD", "QUANTIZED_MAX_POOL2D", "QUANTIZE", "REQUANTIZE", "QUANTIZED_CONCAT",
                    "QUANTIZED_RESIZE_NEAREST_NEIGHBOR", "K210_CONV", "K210_ADD_PADDING", "K210_REMOVE_PADDING", "K210_UPLOAD"}
HEADER_BYTES = 28
#: Sanity limit on layers_length (real models have tens); keeps a corrupt count from costing minutes.
MAX_LAYERS = 10000
F32 = np.float32


class _State:
    """Memories of one loaded model (persist across runs, like the device's)."""

    def __init__(self, main_bytes: int):
        self.main = np.zeros(main_bytes, dtype=np.uint8)
        self.kpu = K.KpuRam()
        self.cache: dict[int, np.ndarray] = {}
        #: set while tracing: write every conv output into KPU RAM, not only what the plan needs
        self.materialize_all = False
        self.plan = K.KpuRamPlan()

    # typed main-memory access ------------------------------------------------------------
    def read_u8(self, addr: int, count: int) -> np.ndarray:
        return self.main[addr : addr + count]

    def read_f32(self, addr: int, count: int) -> np.ndarray:
        return self.main[addr : addr + 4 * count].view(F32) if addr % 4 == 0 else np.frombuffer(
            self.main[addr : addr + 4 * count].tobytes(), dtype=F32
        )

    def write(self, addr: int, arr: np.ndarray) -> None:
        raw = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        self.main[addr : addr + raw.size] = raw


@dataclass
class _Step:
    """One prepared layer: ``run(state) -> output array`` plus what ``info`` reports."""

    index: int
    code: int
    body_offset: int
    body_size: int
    kind: str = ""
    on_kpu: bool = False
    in_shapes: tuple = ()
    out_shapes: tuple = ()
    param_bytes: int = 0
    macs: int = 0
    out_dtype: str = "float32"
    details: dict = field(default_factory=dict)
    # main-memory ranges (addr, nbytes) read and written, for validation and output shapes
    main_reads: list = field(default_factory=list)
    main_writes: list = field(default_factory=list)
    kpu_reads: list = field(default_factory=list)  # KpuAccess
    kpu_writes: list = field(default_factory=list)
    fn: Callable | None = None
    conv: K.KpuConv | None = None
    flags: int = 0
    main_out_addr: int | None = None

    def __post_init__(self) -> None:
        self.kind = LAYER_NAMES.get(self.code, f"UNKNOWN_{self.code}")


class V3Model(Model):
    """A loaded V3 kmodel. See :func:`load_v3`."""

    version = 3

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.steps: list[_Step] = []
        self.inputs: list[TensorSpec] = []
        self.outputs: list[TensorSpec] = []
        self.layers: list[LayerInfo] = []

    # ------------------------------------------------------------------ public extras
    @property
    def input_chw(self) -> tuple[int, int, int] | None:
        """(C, H, W) of the first conv's input (what MaixPy checks images against), or None."""
        first = self.steps[0] if self.steps else None
        if first is not None and first.conv is not None:
            return first.conv.in_shape
        return None

    @property
    def first_layer_kind(self) -> str:
        return self.steps[0].kind if self.steps else ""

    def layer_output_typecode(self, index: int) -> str:
        """MaixPy fmap typecode of layer ``index``'s output: 'B' (uint8) or 'f' (float32)."""
        return "B" if self.steps[index].kind in QUANTIZED_OUTPUT else "f"

    # ------------------------------------------------------------------ execution
    def _place_input(self, x: np.ndarray) -> None:
        state = self._state
        first = self.steps[0]
        if first.conv is not None:
            spec = self.inputs[0]
            arr = check_input(spec, x)
            state.cache[0] = K.to_centered(arr)
            if 0 in self._plan.materialize or state.materialize_all:
                state.kpu.upload(first.conv.src_addr, arr)
        elif first.code == LAYER_CODES["FULLY_CONNECTED"]:
            spec = self.inputs[0]
            arr = check_input(spec, x)
            state.write(spec.address, arr.astype(F32))
        else:
            raise self._first_layer_error()

    def _first_layer_error(self) -> KmodelRuntimeError:
        first = self.steps[0]
        return KmodelRuntimeError(
            f"the first layer is {first.kind}; the device runner only accepts a model whose first layer is "
            "K210_CONV or FULLY_CONNECTED (MaixPy: ERR_GET_CONV_LAYER: first layer should be conv layer)",
            offset=HEADER_BYTES + 8 * int(getattr(self, "header", {}).get("output_count", 0)),
            field="layers[0].type",
        )

    def _execute(self, inputs: tuple, limit: int | None, collect: bool) -> Iterator[TraceStep]:
        """Run the layers. ``collect`` (trace) writes every conv output into KPU RAM as it goes, so
        however the trace ends (limit, caller stops early) the memories are what the device's are.
        A plain run writes only what the access plan says a later read needs."""
        if not self.inputs:  # the model loaded but its first layer cannot take an input
            raise self._first_layer_error()
        if len(inputs) != 1:
            raise KmodelRuntimeError(f"a V3 model takes exactly one input, got {len(inputs)}")
        n = len(self.steps)
        if limit is not None and limit > 0:
            n = min(limit, n)
        state = self._state
        state.cache = {}
        state.materialize_all = collect
        self._place_input(inputs[0])
        done = False
        try:
            for step in self.steps[:n]:
                out = step.fn(state)
                if collect:
                    if callable(out):
                        out = out()
                    yield TraceStep(index=step.index, kind=step.kind, output=out, on_kpu=step.on_kpu, name=step.kind)
            done = True
        finally:
            if not done and not collect:
                # a run that failed half way: put the conv outputs it made into KPU RAM in order
                for key in sorted(state.cache):
                    step = self.steps[key - 1] if key > 0 else None
                    if step is not None and step.conv is not None:
                        state.kpu.upload(step.conv.dst_addr, _to_u8(state.cache[key]))
            state.cache = {}
            state.materialize_all = False

    def run(self, *inputs: np.ndarray) -> list[np.ndarray]:
        for _ in self._execute(inputs, None, collect=False):
            pass
        return self.read_outputs()

    def read_outputs(self) -> list[np.ndarray]:
        outs = []
        for spec in self.outputs:
            raw = self._state.main[spec.address : spec.address + spec.nbytes]
            outs.append(raw.copy().view(spec.dtype).reshape(spec.shape))
        return outs

    def trace(self, *inputs: np.ndarray, limit: int | None = None) -> Iterator[TraceStep]:
        yield from self._execute(inputs, limit, collect=True)

    def reset_memory(self) -> None:
        """Zero main memory and KPU RAM (they otherwise persist between runs, as on the device)."""
        self._state.main[:] = 0
        self._state.kpu.clear()


# ---------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------


def load_v3(data: bytes) -> V3Model:
    """Parse and prepare a V3 kmodel (little-endian bytes; the container swaps BE files first)."""
    try:
        return _Loader(data).load()
    except KmodelError:
        raise
    except (ValueError, OverflowError, IndexError, MemoryError, TypeError) as exc:  # defensive
        raise KmodelFormatError(f"malformed V3 kmodel: {exc}", offset=None, field="file") from exc


#: Activation-table entries all K210_CONV layers of one model may hold (real V3 models: under
#: 8M). Layers beyond it take the exact int64 path, so thousands of wide-range layers in a
#: corrupt or hostile file cannot make the loader hold gigabytes of tables.
LUT_TOTAL_ENTRIES = 1 << 26


class _Loader:
    def __init__(self, data: bytes):
        self.r = BinaryReader(data)
        self.data = self.r.data
        self.lut_left = LUT_TOTAL_ENTRIES

    def fail(self, msg: str, offset: int, fld: str) -> None:
        raise KmodelFormatError(msg, offset=offset, field=fld)

    def load(self) -> V3Model:
        r = self.r
        r.require(0, HEADER_BYTES, "header")
        version, flags, arch, n_layers, max_start, main_usage, n_outputs = r.struct("7I", "header")
        if version != 3:
            raise KmodelFormatError(f"version {version}, expected 3", offset=0, field="version")
        if arch != 0:
            self.fail(f"arch is {arch}; the SDK loader only accepts arch 0", 8, "arch")
        if flags & ~1:
            self.fail(f"unknown header flag bits 0x{flags:x} (only bit 0, 8-bit weights, is defined)", 4, "flags")
        self.weight_bytes = 1 if flags & 1 else 2
        if n_layers == 0:
            self.fail("the model has no layers", 12, "layers_length")
        if n_layers > MAX_LAYERS:
            self.fail(f"{n_layers} layers; no K210 model has more than a few hundred (limit {MAX_LAYERS})", 12, "layers_length")
        if main_usage > K210_MAIN_MEMORY_BYTES:
            self.fail(f"main_mem_usage {main_usage} bytes exceeds the K210's 6 MiB", 20, "main_mem_usage")
        if max_start > K.KPU_ROWS:
            self.fail(f"max_start_address {max_start} is beyond the 32768 KPU rows", 16, "max_start_address")
        r.require(HEADER_BYTES, 8 * n_outputs, "output descriptors (output_count)")
        r.require(HEADER_BYTES + 8 * n_outputs, 8 * n_layers, "layer headers (layers_length)")
        self.main_usage = main_usage
        model = V3Model()
        model.file_bytes = len(self.data)
        model.header = dict(version=version, flags=flags, arch=arch, layers_length=n_layers,
                            max_start_address=max_start, main_mem_usage=main_usage, output_count=n_outputs)
        out_descs = []
        for i in range(n_outputs):
            off = HEADER_BYTES + 8 * i
            addr, size = r.at(off).struct("2I", f"outputs[{i}]")
            if addr + size > main_usage:
                self.fail(f"output {i} [{addr}, {addr + size}) lies outside main memory ({main_usage} bytes)", off, f"outputs[{i}].address")
            out_descs.append((addr, size, off))
        pos = HEADER_BYTES + 8 * n_outputs + 8 * n_layers
        steps: list[_Step] = []
        for i in range(n_layers):
            hoff = HEADER_BYTES + 8 * n_outputs + 8 * i
            code, body_size = r.at(hoff).struct("2I", f"layers[{i}]")
            if body_size == 0:
                self.fail(f"layer {i} has body_size 0 (ERR_KMODEL_FORMAT: layer_header.body_size <=0)", hoff + 4, f"layers[{i}].body_size")
            if pos >= len(self.data):
                self.fail(f"layer {i}'s body starts at {pos}, past the end of the {len(self.data)}-byte file", hoff + 4,
                          f"layers[{i - 1}].body_size" if i else "layers_length")
            if code not in LAYER_NAMES:
                raise KmodelUnsupportedError(f"layer {i} has unknown type code {code}", offset=hoff, field=f"layers[{i}].type")
            if code in UNSUPPORTED_CODES:
                raise KmodelUnsupportedError(
                    f"layer {i} is {LAYER_NAMES[code]} ({code}), which the device runner does not implement "
                    "('Layer is not supported')", offset=hoff, field=f"layers[{i}].type")
            step = _Step(index=i, code=code, body_offset=pos, body_size=body_size)
            self.prepare_step(step, model)
            steps.append(step)
            pos += body_size
        model.steps = steps
        self.check_main_ranges(steps)
        self.finish(model, steps, out_descs)
        return model

    # ------------------------------------------------------------------ per layer
    def body(self, step: _Step, fmt: str) -> tuple:
        size = _struct_size(fmt)
        if size > step.body_size:
            self.fail(f"{step.kind} body needs {size} bytes but body_size is {step.body_size}", step.body_offset,
                      f"layers[{step.index}].body_size")
        return self.r.at(step.body_offset).struct(fmt, f"layers[{step.index}] {step.kind} body")

    def prepare_step(self, step: _Step, model: V3Model) -> None:
        kind = step.kind
        method = getattr(self, "prep_" + kind.lower(), None)
        if method is None:  # pragma: no cover - every supported code has a method
            raise KmodelUnsupportedError(f"layer type {kind} not implemented", offset=step.body_offset, field="type")
        method(step)
        step.out_dtype = "uint8" if kind in QUANTIZED_OUTPUT else "float32"

    def prep_k210_conv(self, step: _Step) -> None:
        flags, main_out, layer_off, w_off, bn_off, act_off = self.body(step, "6I")
        f = f"layers[{step.index}] K210_CONV"
        b0, b1 = step.body_offset, step.body_offset + step.body_size
        for name, off in (("layer_offset", layer_off), ("weights_offset", w_off), ("bn_offset", bn_off), ("act_offset", act_off)):
            if not (b0 + 24 <= off < b1):
                self.fail(f"{name} {off} lies outside the layer's body [{b0 + 24}, {b1})", b0 + {"layer_offset": 8, "weights_offset": 12,
                          "bn_offset": 16, "act_offset": 20}[name], f"{f}.{name}")
        words = self.r.at(layer_off).array("<u8", 12, f"{f} registers")
        try:
            regs = K.decode_registers([int(v) for v in words], offset=layer_off)
            regs.validate_layout(offset=layer_off)
        except KmodelError as exc:
            if exc.offset is None:
                exc.offset = layer_off
            raise
        wsize = regs.weight_count * self.weight_bytes
        self.r.require(w_off, wsize, f"{f} weights")
        if w_off + wsize > b1:
            self.fail(f"weights ({wsize} bytes) run past the layer's body", b0 + 12, f"{f}.weights_offset")
        weights = self.data[w_off : w_off + wsize]
        oc = regs.out_channels
        bn_words = self.r.at(bn_off).array("<u8", oc, f"{f} batchnorm")
        if bn_off + 8 * oc > b1:
            self.fail("batch-norm table runs past the layer's body", b0 + 16, f"{f}.bn_offset")
        self.r.require(act_off, 144, f"{f} activation table")
        act_raw = self.data[act_off : act_off + 144]
        lut_limit = max(0, min(K.LUT_MAX_ENTRIES, self.lut_left))
        conv = K.KpuConv.prepare(regs, weights, bn_words, act_raw, weight_bytes=self.weight_bytes,
                                 lut_max_entries=lut_limit)
        conv.act_where = (act_off, f"{f}.act_offset (activation table)")
        lut = getattr(getattr(conv, "_fast", None), "lut", None)
        self.lut_left -= int(lut.size) if lut is not None else 0
        step.conv = conv
        step.on_kpu = True
        step.flags = flags
        step.param_bytes = wsize + 8 * oc + 144 + 96
        step.macs = regs.macs
        step.in_shapes = (regs.in_shape,)
        step.out_shapes = (regs.out_shape,)
        step.details = {
            "kernel": f"{regs.kernel_size}x{regs.kernel_size}",
            "depthwise": regs.depthwise,
            "pool": K.POOL_NAMES[regs.pool_type],
            "pad_value": regs.pad_value,
            "src_row": regs.image_src_addr,
            "dst_row": regs.image_dst_addr,
            "main_out": main_out if flags & 1 else None,
            "path": "fast" if conv.fast else "exact-int64",
            "typecode": "B",
        }
        for (name, row, shape) in (("image_src_addr", regs.image_src_addr, regs.in_shape), ("image_dst_addr", regs.image_dst_addr, regs.out_shape)):
            if row * 64 + K.kpu_bytes(*shape) > K.KPU_RAM_BYTES:
                self.fail(f"a {shape} map at KPU row {row} runs past the 2 MiB KPU RAM", layer_off + 8, f"{f}.{name}")
        step.kpu_reads = [K.KpuAccess("r", conv.src_addr, regs.in_shape, step.index + 1, conv=True)]
        step.kpu_writes = [K.KpuAccess("w", conv.dst_addr, regs.out_shape, step.index + 1, conv=True)]
        n_out = int(np.prod(regs.out_shape))
        if flags & 1:
            step.main_writes = [(main_out, n_out, b0 + 4, f"{f}.main_mem_out_address")]
            step.main_out_addr = main_out
        key = step.index + 1

        def run(state: _State, conv=conv, key=key, flags=flags, main_out=main_out) -> np.ndarray:
            src = _reusable_input(state, key)
            if src is not None:
                xc = state.cache[src]
            else:
                x = state.kpu.download(conv.src_addr, conv.in_shape)
                xc = K.to_centered(x)
            yc = conv.run_centered(xc)
            state.cache[key] = yc
            y8 = None
            if state.materialize_all or key in state.plan.materialize:
                y8 = _to_u8(yc)
                state.kpu.upload(conv.dst_addr, y8)
            if flags & 1:
                if y8 is None:
                    y8 = _to_u8(yc)
                state.write(main_out, y8)
            return lambda: _to_u8(yc)

        step.fn = run

    def prep_k210_add_padding(self, step: _Step) -> None:
        flags, main_in, kpu_out, channels = self.body(step, "4I")
        f = f"layers[{step.index}] K210_ADD_PADDING"
        step.on_kpu = False
        step.main_reads = [(main_in, channels, step.body_offset + 4, f"{f}.main_mem_in_address")]
        base = kpu_out * 64
        last = base + ((channels - 1) // 4) * 256 + ((channels - 1) % 4) * 16 if channels else base
        if last >= K.KPU_RAM_BYTES:  # checked before the index array is allocated
            self.fail(f"{channels} channels at KPU row {kpu_out} run past the KPU RAM", step.body_offset + 8, f"{f}.kpu_mem_out_address")
        c = np.arange(channels, dtype=np.int64)
        idx = base + (c // 4) * 256 + (c % 4) * 16
        step.kpu_writes = [K.KpuAccess("w", base, (channels, 1, 1), step.index + 1, indices=idx)]
        step.in_shapes = ((channels,),)
        step.out_shapes = ((channels, 4, 4),)
        step.details = {"kpu_row": kpu_out, "typecode": "B"}

        def run(state: _State) -> np.ndarray:
            v = state.read_u8(main_in, channels)
            state.kpu.arena[idx] = v
            return v.reshape(channels, 1, 1).copy()

        step.fn = run

    def prep_k210_remove_padding(self, step: _Step) -> None:
        flags, main_in, main_out, channels = self.body(step, "4I")
        f = f"layers[{step.index}] K210_REMOVE_PADDING"
        step.main_reads = [(main_in, 16 * channels - 15 if channels else 0, step.body_offset + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, channels, step.body_offset + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((channels, 4, 4),)
        step.out_shapes = ((channels,),)

        def run(state: _State) -> np.ndarray:
            v = state.main[main_in : main_in + 16 * channels : 16].copy()
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_k210_upload(self, step: _Step) -> None:
        flags, main_in, kpu_out, width, height, channels = self.body(step, "6I")
        f = f"layers[{step.index}] K210_UPLOAD"
        n = width * height * channels
        step.main_reads = [(main_in, n, step.body_offset + 4, f"{f}.main_mem_in_address")]
        shape = (channels, height, width)
        if width == 0 or height == 0 or channels == 0 or width > 1024 or kpu_out * 64 + K.kpu_bytes(*shape) > K.KPU_RAM_BYTES:
            self.fail(f"a {channels}x{height}x{width} upload at KPU row {kpu_out} does not fit the KPU RAM", step.body_offset + 8,
                      f"{f}.kpu_mem_out_address")
        step.kpu_writes = [K.KpuAccess("w", kpu_out * 64, shape, step.index + 1)]
        step.in_shapes = (shape,)
        step.out_shapes = (shape,)

        def run(state: _State) -> np.ndarray:
            v = state.read_u8(main_in, n).reshape(shape)
            state.kpu.upload(kpu_out * 64, v)
            return v.copy()

        step.fn = run

    def prep_add(self, step: _Step) -> None:
        flags, a, b, out, count = self.body(step, "5I")
        f = f"layers[{step.index}] ADD"
        o = step.body_offset
        step.main_reads = [(a, 4 * count, o + 4, f"{f}.main_mem_in_a_address"), (b, 4 * count, o + 8, f"{f}.main_mem_in_b_address")]
        step.main_writes = [(out, 4 * count, o + 12, f"{f}.main_mem_out_address")]
        step.in_shapes = ((count,), (count,))
        step.out_shapes = ((count,),)

        def run(state: _State) -> np.ndarray:
            v = elementwise.add_f32(state.read_f32(a, count), state.read_f32(b, count))
            state.write(out, v)
            return v

        step.fn = run

    def prep_quantized_add(self, step: _Step) -> None:
        vals = self.body(step, "5I9i")
        flags, a, b, out, count = vals[:5]
        params = vals[5:]
        f = f"layers[{step.index}] QUANTIZED_ADD"
        o = step.body_offset
        step.main_reads = [(a, count, o + 4, f"{f}.main_mem_in_a_address"), (b, count, o + 8, f"{f}.main_mem_in_b_address")]
        step.main_writes = [(out, count, o + 12, f"{f}.main_mem_out_address")]
        step.in_shapes = ((count,), (count,))
        step.out_shapes = ((count,),)
        # the device processes ceil(count/8)*8 elements; emulate the over-write inside main memory
        n8 = -(-count // 8) * 8
        n_eff = max(0, min(n8, self.main_usage - a, self.main_usage - b, self.main_usage - out))
        n_eff = max(n_eff, count)
        step.details = {"processed_elements": n_eff}

        def run(state: _State) -> np.ndarray:
            va = state.read_u8(a, n_eff)
            vb = state.read_u8(b, n_eff)
            v = elementwise.quantized_add(va, vb, *params)
            state.write(out, v)
            return v[:count].copy()

        step.fn = run

    def prep_global_average_pool2d(self, step: _Step) -> None:
        flags, main_in, main_out, kernel_size, channels = self.body(step, "5I")
        f = f"layers[{step.index}] GLOBAL_AVERAGE_POOL2D"
        o = step.body_offset
        step.main_reads = [(main_in, 4 * kernel_size * channels, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, 4 * channels, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((channels, kernel_size),)
        step.out_shapes = ((channels,),)

        def run(state: _State) -> np.ndarray:
            v = pool.global_average_pool(state.read_f32(main_in, channels * kernel_size), channels, kernel_size)
            state.write(main_out, v)
            return v

        step.fn = run

    def _pool_fields(self, step: _Step, fmt: str):
        vals = self.body(step, fmt)
        flags, main_in, main_out, iw, ih, ic, ow, oh, oc, kw, kh, sw, sh, pw, ph = vals[:15]
        f = f"layers[{step.index}] {step.kind}"
        if oc != ic:
            self.fail(f"pool changes the channel count {ic} -> {oc}", step.body_offset + 32, f"{f}.out_shape.channels")
        if sw == 0 or sh == 0:
            self.fail("pool stride is 0", step.body_offset + 44, f"{f}.stride")
        if max(iw, ih, ow, oh, kw, kh) > 4096 or ic > 65536:
            self.fail("pool sizes are implausibly large", step.body_offset + 12, f"{f}.in_shape")
        return vals, f

    def _prep_pool(self, step: _Step, fmt: str, *, quantized: bool) -> None:
        """QUANTIZED_MAX_POOL2D (u8) and AVERAGE_POOL2D (f32) share their body and main-memory plan."""
        vals, f = self._pool_fields(step, fmt)
        flags, main_in, main_out, iw, ih, ic, ow, oh, oc, kw, kh, sw, sh, pw, ph = vals[:15]
        elem = 1 if quantized else 4
        o = step.body_offset
        step.main_reads = [(main_in, elem * ic * ih * iw, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, elem * oc * oh * ow, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((ic, ih, iw),)
        step.out_shapes = ((oc, oh, ow),)
        step.details = {"kernel": f"{kh}x{kw}", "stride": f"{sh}x{sw}", "padding": f"{ph}x{pw}"}
        if quantized:
            step.details["typecode"] = "B"
        else:
            step.details["act_ignored"] = vals[15]  # the device ignores AVERAGE_POOL2D's activation
        geometry = ((oh, ow), (kh, kw), (sh, sw), (ph, pw))

        def run(state: _State) -> np.ndarray:
            if quantized:
                x = state.read_u8(main_in, ic * ih * iw).reshape(ic, ih, iw)
                v = pool.quantized_max_pool2d(x, *geometry)
            else:
                x = state.read_f32(main_in, ic * ih * iw).reshape(ic, ih, iw)
                v = pool.average_pool2d(x, *geometry)
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_quantized_max_pool2d(self, step: _Step) -> None:
        self._prep_pool(step, "15I", quantized=True)

    def prep_average_pool2d(self, step: _Step) -> None:
        self._prep_pool(step, "16I", quantized=False)

    def prep_quantize(self, step: _Step) -> None:
        flags, main_in, main_out, count, scale, bias = self.body(step, "4I2f")
        f = f"layers[{step.index}] QUANTIZE"
        o = step.body_offset
        step.main_reads = [(main_in, 4 * count, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, count, o + 8, f"{f}.mem_out_address")]
        step.in_shapes = ((count,),)
        step.out_shapes = ((count,),)
        step.details = {"scale": scale, "bias": bias, "typecode": "B"}

        def run(state: _State) -> np.ndarray:
            v = quantize.quantize_v3(state.read_f32(main_in, count), scale, bias)
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_dequantize(self, step: _Step) -> None:
        flags, main_in, main_out, count, scale, bias = self.body(step, "4I2f")
        f = f"layers[{step.index}] DEQUANTIZE"
        o = step.body_offset
        step.main_reads = [(main_in, count, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, 4 * count, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((count,),)
        step.out_shapes = ((count,),)
        step.details = {"scale": scale, "bias": bias}

        def run(state: _State) -> np.ndarray:
            v = quantize.dequantize_v3(state.read_u8(main_in, count), scale, bias)
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_requantize(self, step: _Step) -> None:
        flags, main_in, main_out, count = self.body(step, "4I")
        table = np.frombuffer(self.r.at(step.body_offset + 16).bytes(256, f"layers[{step.index}] REQUANTIZE table"), dtype=np.uint8)
        if step.body_size < 272:
            self.fail("REQUANTIZE body is shorter than its 256-byte table", step.body_offset, f"layers[{step.index}].body_size")
        f = f"layers[{step.index}] REQUANTIZE"
        o = step.body_offset
        step.main_reads = [(main_in, count, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, count, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((count,),)
        step.out_shapes = ((count,),)
        step.param_bytes = 256
        step.details = {"typecode": "B"}

        def run(state: _State) -> np.ndarray:
            v = quantize.requantize(state.read_u8(main_in, count), table)
            state.write(main_out, v)
            return v

        step.fn = run

    def _unary_f32(self, step: _Step, kernel) -> None:
        flags, main_in, main_out, channels = self.body(step, "4I")
        f = f"layers[{step.index}] {step.kind}"
        o = step.body_offset
        step.main_reads = [(main_in, 4 * channels, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, 4 * channels, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((channels,),)
        step.out_shapes = ((channels,),)

        def run(state: _State) -> np.ndarray:
            v = kernel(state.read_f32(main_in, channels).copy())
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_l2_normalization(self, step: _Step) -> None:
        self._unary_f32(step, act_ops.l2_normalize)

    def prep_softmax(self, step: _Step) -> None:
        self._unary_f32(step, act_ops.softmax_v3)

    def prep_logistic(self, step: _Step) -> None:
        self._unary_f32(step, act_ops.logistic)

    def prep_concat(self, step: _Step) -> None:
        flags, main_out, count = self.body(step, "3I")
        f = f"layers[{step.index}] {step.kind}"
        o = step.body_offset
        if 12 + 8 * count > step.body_size:
            self.fail(f"{count} inputs do not fit in the {step.body_size}-byte body", o + 8, f"{f}.input_count")
        ranges = [self.r.at(o + 12 + 8 * j).struct("2I", f"{f}.inputs[{j}]") for j in range(count)]
        total = sum(s for _, s in ranges)
        step.main_reads = [(a, s, o + 12 + 8 * j, f"{f}.inputs[{j}].start") for j, (a, s) in enumerate(ranges)]
        step.main_writes = [(main_out, total, o + 4, f"{f}.main_mem_out_address")]
        step.in_shapes = tuple((s,) for _, s in ranges)
        step.out_shapes = ((total,),)
        if step.kind == "QUANTIZED_CONCAT":
            step.details = {"typecode": "B"}

        def run(state: _State) -> np.ndarray:
            parts = [state.main[a : a + s].copy() for a, s in ranges]
            v = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
            state.main[main_out : main_out + total] = v
            return v if step.kind == "QUANTIZED_CONCAT" or total % 4 else v.view(F32)

        step.fn = run

    prep_quantized_concat = prep_concat

    def prep_fully_connected(self, step: _Step) -> None:
        flags, main_in, main_out, cin, cout, act = self.body(step, "6I")
        f = f"layers[{step.index}] FULLY_CONNECTED"
        o = step.body_offset
        n_w = cin * cout
        need = 24 + 4 * (n_w + cout)
        if need > step.body_size:
            self.fail(f"{cin}x{cout} weights need {need} bytes, body_size is {step.body_size}", o + 12, f"{f}.in_channels")
        weights = self.r.at(o + 24).array("<f4", n_w, f"{f} weights").reshape(cout, cin)
        bias = self.r.at(o + 24 + 4 * n_w).array("<f4", cout, f"{f} bias")
        if act not in fully_connected.ACTIVATIONS:
            raise KmodelUnsupportedError(f"FULLY_CONNECTED activation {act}", offset=o + 20, field=f"{f}.act")
        step.main_reads = [(main_in, 4 * cin, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, 4 * cout, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((cin,),)
        step.out_shapes = ((cout,),)
        step.param_bytes = 4 * (n_w + cout)
        step.macs = n_w
        step.details = {"act": fully_connected.ACTIVATIONS[act]}
        step.fc_in = (main_in, cin)

        def run(state: _State) -> np.ndarray:
            v = fully_connected.fully_connected(state.read_f32(main_in, cin), weights, bias, act)
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_tensorflow_flatten(self, step: _Step) -> None:
        flags, main_in, main_out, width, height, channels = self.body(step, "6I")
        f = f"layers[{step.index}] TENSORFLOW_FLATTEN"
        o = step.body_offset
        n = width * height * channels
        step.main_reads = [(main_in, 4 * n, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, 4 * n, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((channels, height, width),)
        step.out_shapes = ((n,),)

        def run(state: _State) -> np.ndarray:
            v = layout.tf_flatten(state.read_f32(main_in, n).copy(), channels, height, width)
            state.write(main_out, v)
            return v

        step.fn = run

    def prep_resize_nearest_neighbor(self, step: _Step) -> None:
        flags, main_in, main_out, iw, ih, ic, ow, oh, align = self.body(step, "9I")
        f = f"layers[{step.index}] {step.kind}"
        o = step.body_offset
        esize = 1 if step.kind.startswith("QUANTIZED") else 4
        if max(iw, ih, ow, oh) > 65536 or ic > 65536:
            self.fail("resize sizes are implausibly large", o + 12, f"{f}.in_shape")
        step.main_reads = [(main_in, esize * ic * ih * iw, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, esize * ic * oh * ow, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((ic, ih, iw),)
        step.out_shapes = ((ic, oh, ow),)
        step.details = {"align_corners_ignored": align}
        if esize == 1:
            step.details["typecode"] = "B"

        def run(state: _State) -> np.ndarray:
            n = ic * ih * iw
            x = (state.read_u8(main_in, n) if esize == 1 else state.read_f32(main_in, n)).reshape(ic, ih, iw)
            v = layout.resize_nearest(x, oh, ow)
            state.write(main_out, v)
            return v

        step.fn = run

    prep_quantized_resize_nearest_neighbor = prep_resize_nearest_neighbor

    def prep_channelwise_dequantize(self, step: _Step) -> None:
        flags, main_in, main_out, channels, csize = self.body(step, "5I")
        f = f"layers[{step.index}] CHANNELWISE_DEQUANTIZE"
        o = step.body_offset
        if 20 + 8 * channels > step.body_size:
            self.fail(f"{channels} channel parameters do not fit in the body", o + 12, f"{f}.channels")
        params = self.r.at(o + 20).array("<f4", 2 * channels, f"{f} params").reshape(channels, 2)
        scales, biases = params[:, 0].copy(), params[:, 1].copy()
        n = channels * csize
        step.main_reads = [(main_in, n, o + 4, f"{f}.main_mem_in_address")]
        step.main_writes = [(main_out, 4 * n, o + 8, f"{f}.main_mem_out_address")]
        step.in_shapes = ((channels, csize),)
        step.out_shapes = ((channels, csize),)
        step.param_bytes = 8 * channels

        def run(state: _State) -> np.ndarray:
            v = quantize.channelwise_dequantize(state.read_u8(main_in, n).reshape(channels, csize), scales, biases)
            state.write(main_out, v)
            return v.reshape(-1)

        step.fn = run

    # ------------------------------------------------------------------ whole-model checks
    def check_main_ranges(self, steps: list[_Step]) -> None:
        for step in steps:
            for addr, size, off, name in step.main_reads + step.main_writes:
                if addr + size > self.main_usage:
                    self.fail(
                        f"layer {step.index} ({step.kind}) accesses main memory [{addr}, {addr + size}) beyond "
                        f"main_mem_usage {self.main_usage}", off, name)

    def finish(self, model: V3Model, steps: list[_Step], out_descs) -> None:
        # input ----------------------------------------------------------------------------
        first = steps[0]
        if first.conv is not None:
            c, h, w = first.conv.in_shape
            model.inputs = [TensorSpec((c, h, w), np.dtype(np.uint8), "CHW", "kpu", "input", first.conv.src_addr)]
        elif first.code == LAYER_CODES["FULLY_CONNECTED"]:
            addr, cin = first.fc_in
            model.inputs = [TensorSpec((cin,), np.dtype(np.float32), "flat", "main", "input", addr)]
        else:
            model.inputs = []
            model.notes.append(f"first layer is {first.kind}: the device refuses to run this model")
        # shapes of main-memory tensors, for typed outputs ----------------------------------
        shapes: dict[int, tuple] = {}
        for step in steps:
            if step.conv is not None and step.main_out_addr is not None:
                shapes[step.main_out_addr] = step.conv.out_shape
            elif step.kind in ("DEQUANTIZE", "QUANTIZE") and step.main_reads and step.main_writes:
                src = shapes.get(step.main_reads[0][0])
                count = step.in_shapes[0][0]
                shapes[step.main_writes[0][0]] = src if src is not None and int(np.prod(src)) == count else (count,)
            elif step.main_writes:
                shapes[step.main_writes[0][0]] = step.out_shapes[0]
        last = steps[-1]
        outputs = []
        for i, (addr, size, off) in enumerate(out_descs):
            if last.kind in QUANTIZED_OUTPUT or size % 4:
                dtype, count = np.dtype(np.uint8), size
            else:
                dtype, count = np.dtype(np.float32), size // 4
            shape = shapes.get(addr)
            if shape is None or int(np.prod(shape)) != count:
                shape = (count,)
            outputs.append(TensorSpec(tuple(int(s) for s in shape), dtype, "CHW" if len(shape) == 3 else "flat", "main",
                                      f"output_{i}", addr))
        model.outputs = outputs
        # KPU RAM plan ----------------------------------------------------------------------
        accesses: list[K.KpuAccess] = []
        if first.conv is not None:
            accesses.append(K.KpuAccess("w", first.conv.src_addr, first.conv.in_shape, 0, conv=True))
        for step in steps:
            accesses.extend(step.kpu_reads)
            accesses.extend(step.kpu_writes)
        model._plan = K.plan_kpu_ram(accesses)
        kpu_lo = min((a.addr for a in accesses), default=K.KPU_RAM_BYTES)
        kpu_hi = max((a.addr + K.kpu_bytes(*a.shape) if a.indices is None else int(a.indices.max()) + 1 for a in accesses), default=K.KPU_RAM_BYTES)
        model._state = _State(self.main_usage)
        model._state.plan = model._plan
        # layer table ----------------------------------------------------------------------
        model.layers = [
            LayerInfo(
                index=s.index,
                kind=s.kind,
                on_kpu=s.on_kpu,
                input_shapes=tuple(tuple(int(v) for v in sh) for sh in s.in_shapes),
                output_shapes=tuple(tuple(int(v) for v in sh) for sh in s.out_shapes),
                param_bytes=s.param_bytes,
                macs=s.macs,
                name=s.kind,
                output_dtype=s.out_dtype,
                details={**s.details, "typecode": "B" if s.kind in QUANTIZED_OUTPUT else "f", "code": s.code},
            )
            for s in steps
        ]
        param = sum(s.param_bytes for s in steps)
        model.memory = MemoryUsage(
            file_bytes=len(self.data),
            param_bytes=param,
            main_memory_bytes=self.main_usage,
            kpu_ram_bytes=max(0, kpu_hi - kpu_lo) if accesses else 0,
        )
        seen_notes: set[str] = set()
        for s in steps:
            for note in s.conv.notes if s.conv is not None else ():
                if note not in seen_notes and not note.startswith("exact int64 path"):
                    seen_notes.add(note)
                    model.notes.append(f"layer {s.index}: {note}")
        slow = [s.index for s in steps if s.conv is not None and not s.conv.fast]
        if slow:
            model.notes.append(f"conv layers {slow} use the exact int64 path (slower)")


def _reusable_input(state: _State, key: int) -> int | None:
    """Which cached conv output (step key) a conv read may take instead of the arena."""
    src = state.plan.reuse.get(key)
    return src if src is not None and src in state.cache else None


def _to_u8(yc: np.ndarray) -> np.ndarray:
    return K.from_centered(yc)


def _struct_size(fmt: str) -> int:
    import struct

    return struct.calcsize("<" + fmt)
