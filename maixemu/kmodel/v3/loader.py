"""Loading a V3 file: the header, the output table and the layer table are checked against the
file and the K210's memories before anything is allocated; each layer body is read by its
registered reader (``layers``); then the whole model's main-memory ranges are checked, output
shapes inferred and the KPU RAM plan made."""

from __future__ import annotations

import numpy as np

from .. import kpu as K
from ..errors import KmodelError, KmodelFormatError, KmodelUnsupportedError
from ..model import K210_MAIN_MEMORY_BYTES, LayerInfo, MemoryUsage, TensorSpec
from ..reader import BinaryReader
from . import layers
from .format import HEADER_BYTES, LAYER_CODES, LAYER_NAMES, MAX_LAYERS, UNSUPPORTED_CODES, read_header
from .layers import QUANTIZED_OUTPUT, LoadContext, fmap_typecode, read_layer
from .model import State, Step, V3Model, cache_drops


def load_v3(data: bytes) -> V3Model:
    """Parse and prepare a V3 kmodel (little-endian bytes; the container swaps BE files first)."""
    try:
        return _Loader(data).load()
    except KmodelError:
        raise
    except (ValueError, OverflowError, IndexError, MemoryError, TypeError) as exc:  # defensive
        raise KmodelFormatError(f"malformed V3 kmodel: {exc}", offset=None, field="file") from exc


class _Loader:
    def __init__(self, data: bytes):
        self.r = BinaryReader(data)
        self.data = self.r.data

    def fail(self, msg: str, offset: int, fld: str) -> None:
        raise KmodelFormatError(msg, offset=offset, field=fld)

    def load(self) -> V3Model:
        r = self.r
        header = read_header(r)
        version, flags, arch, n_layers = header.version, header.flags, header.arch, header.layers_length
        max_start, main_usage, n_outputs = header.max_start_address, header.main_mem_usage, header.output_count
        if version != 3:
            raise KmodelFormatError(f"version {version}, expected 3", offset=0, field="version")
        if arch != 0:
            self.fail(f"arch is {arch}; the SDK loader only accepts arch 0", 8, "arch")
        if flags & ~1:
            self.fail(f"unknown header flag bits 0x{flags:x} (only bit 0, 8-bit weights, is defined)", 4, "flags")
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
        ctx = LoadContext(r, main_usage, 1 if flags & 1 else 2, layers.LUT_TOTAL_ENTRIES)
        model = V3Model()
        model.file_bytes = len(self.data)
        model.header = header.as_dict()
        out_descs = []
        for i in range(n_outputs):
            off = HEADER_BYTES + 8 * i
            addr, size = r.at(off).struct("2I", f"outputs[{i}]")
            if addr + size > main_usage:
                self.fail(f"output {i} [{addr}, {addr + size}) lies outside main memory ({main_usage} bytes)", off, f"outputs[{i}].address")
            out_descs.append((addr, size, off))
        pos = HEADER_BYTES + 8 * n_outputs + 8 * n_layers
        steps: list[Step] = []
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
            step = Step(index=i, code=code, body_offset=pos, body_size=body_size)
            read_layer(step, ctx)
            steps.append(step)
            pos += body_size
        model.steps = steps
        self.check_main_ranges(steps)
        self.finish(model, steps, out_descs)
        return model

    # ------------------------------------------------------------------ whole-model checks
    def check_main_ranges(self, steps: list[Step]) -> None:
        for step in steps:
            for addr, size, off, name in step.main_reads + step.main_writes:
                if addr + size > self.main_usage:
                    self.fail(
                        f"layer {step.index} ({step.kind}) accesses main memory [{addr}, {addr + size}) beyond "
                        f"main_mem_usage {self.main_usage}", off, name)

    def finish(self, model: V3Model, steps: list[Step], out_descs) -> None:
        # input ----------------------------------------------------------------------------
        first = steps[0]
        if first.conv is not None:
            c, h, w = first.conv.in_shape
            model.inputs = [TensorSpec((c, h, w), np.dtype(np.uint8), "CHW", "kpu", "input", first.conv.src_addr)]
        elif first.code == LAYER_CODES["FULLY_CONNECTED"]:
            assert first.fc_in is not None  # (read_fully_connected sets it)
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
        dtype: np.dtype
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
        model._state = State(self.main_usage)
        model._state.plan = model._plan
        model._drops = cache_drops(model._plan, [0] + [s.index + 1 for s in steps if s.conv is not None])
        # layer table ----------------------------------------------------------------------
        for s in steps:  # (the layer table shares the dicts: a KPU layer's path changes when it switches)
            s.details.update(typecode=fmap_typecode(s), code=s.code)
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
                details=s.details,
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
