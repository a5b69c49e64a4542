"""kmodel V4 (nncase v0.2, "KMDL" version 4) on-disk structures: header, memory ranges, shapes,
node headers, and a body reader that names the node and field in every error.

Only parsing and validation live here; what each node *does* is in ``nodes``. All sizes are
checked against the file length and the K210 memories before anything is allocated.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import KmodelFormatError
from ..model import K210_KPU_RAM_BYTES, K210_MAIN_MEMORY_BYTES
from ..reader import BinaryReader

KMDL = 0x4B4D444C
HEADER_BYTES = 40
MEMORY_RANGE_BYTES = 16
SHAPE_BYTES = 16
NODE_HEADER_BYTES = 8

MEM_CONST, MEM_MAIN, MEM_KPU = 0, 1, 2
MEMORY_NAMES = {MEM_CONST: "const", MEM_MAIN: "main", MEM_KPU: "kpu"}
DT_FLOAT32, DT_UINT8 = 0, 1
DTYPES: dict[int, np.dtype] = {DT_FLOAT32: np.dtype(np.float32), DT_UINT8: np.dtype(np.uint8)}

#: A sanity bound for any single tensor dimension product (elements); far above the K210's 8 MiB.
MAX_ELEMENTS = 1 << 26

OPCODE_NAMES: dict[int, str] = {
    0x00: "binary", 0x01: "concat", 0x02: "conv2d", 0x03: "dequantize", 0x04: "matmul", 0x05: "pad",
    0x06: "quantize", 0x07: "reduce", 0x08: "reduce_window2d", 0x09: "memory_copy",
    0x0A: "resize_image", 0x0B: "softmax", 0x0C: "transpose", 0x0D: "strided_slice", 0x0E: "unary",
    0x0F: "quantized_conv2d", 0x10: "quantized_matmul", 0x11: "quantized_binary",
    0x12: "table_lookup1d", 0x13: "conv2d_transpose", 0x14: "nnil_unary_method",
    0x1001: "cpu_conv2d", 0x1002: "cpu_depthwise_conv2d", 0x1003: "cpu_reduce_window2d",
    0x1004: "cpu_quantized_conv2d", 0x1005: "cpu_quantized_depthwise_conv2d",
    0x2001: "kpu_upload", 0x2002: "kpu_conv2d",
}


@dataclass(frozen=True)
class Header:
    version: int
    flags: int
    target: int
    constants: int
    main_mem: int
    nodes: int
    inputs: int
    outputs: int


@dataclass(frozen=True)
class MemoryRange:
    """``memory_range``: where a tensor lives. ``start`` is a byte offset in every memory (KPU too)."""

    memory_type: int
    datatype: int
    start: int
    size: int
    offset: int = 0  # file offset of the record, for messages

    @property
    def dtype(self) -> np.dtype:
        return DTYPES[self.datatype]

    @property
    def count(self) -> int:
        """Elements of ``dtype`` (the runtime's typed span drops a remainder)."""
        return self.size // self.dtype.itemsize

    @property
    def end(self) -> int:
        return self.start + self.size

    @property
    def memory(self) -> str:
        return MEMORY_NAMES[self.memory_type]

    def overlaps(self, other: "MemoryRange") -> bool:
        return self.memory_type == other.memory_type and self.start < other.end and other.start < self.end

    def __str__(self) -> str:
        return f"{self.memory}:{self.dtype.name}[{self.start}+{self.size}]"


@dataclass(frozen=True)
class NodeHeader:
    index: int
    opcode: int
    body_size: int
    body_offset: int

    @property
    def name(self) -> str:
        return OPCODE_NAMES.get(self.opcode, f"0x{self.opcode:x}")


class BodyReader(BinaryReader):
    """A reader over one node body; errors name the node, its opcode and the field."""

    def __init__(self, data: bytes, node: NodeHeader, file_end: int):
        # the last body may be physically shorter than declared (missing alignment padding)
        end = min(node.body_offset + node.body_size, file_end)
        super().__init__(data[node.body_offset : end])
        self.node = node

    def require(self, offset: int, size: int, field: str) -> None:
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise KmodelFormatError(
                f"node {self.node.index} ({self.node.name}) body is {len(self.data)} bytes; "
                f"field needs {size} bytes at body offset {offset}",
                offset=self.node.body_offset + max(offset, 0),
                field=f"node[{self.node.index}].{field}",
            )

    def fail(self, message: str, field: str, at: int | None = None) -> KmodelFormatError:
        pos = self.offset if at is None else at
        return KmodelFormatError(
            f"node {self.node.index} ({self.node.name}): {message}",
            offset=self.node.body_offset + pos,
            field=f"node[{self.node.index}].{field}",
        )

    def memory_range(self, field: str) -> MemoryRange:
        at = self.offset
        mtype, dtype, start, size = self.struct("4I", field)
        if mtype not in MEMORY_NAMES:
            raise self.fail(f"memory_type {mtype} is not 0 (const), 1 (main) or 2 (kpu)", f"{field}.memory_type", at)
        if dtype not in DTYPES:
            raise self.fail(f"datatype {dtype} is not 0 (float32) or 1 (uint8)", f"{field}.datatype", at + 4)
        return MemoryRange(mtype, dtype, start, size, self.node.body_offset + at)

    def shape(self, field: str, allow_negative: bool = False) -> tuple[int, int, int, int]:
        at = self.offset
        dims = self.struct("4i", field)
        if not allow_negative:
            if any(d < 0 for d in dims):
                raise self.fail(f"negative dimension in {list(dims)}", field, at)
            n = 1
            for d in dims:
                n *= d
            if n > MAX_ELEMENTS:
                raise self.fail(f"shape {list(dims)} has {n} elements, more than any K210 memory holds", field, at)
        return tuple(dims)

    def padding(self, field: str) -> tuple[int, int]:
        return tuple(self.struct("2i", field))

    def value_range(self, field: str) -> tuple[float, float]:
        return tuple(self.struct("2f", field))

    def remaining_bytes(self) -> bytes:
        return self.data[self.offset :]


def read_header(r: BinaryReader) -> Header:
    ident, version, flags, target, constants, main_mem, nodes, inputs, outputs, _reserved = r.struct("10I", "model_header")
    if ident != KMDL:
        raise KmodelFormatError(f"identifier 0x{ident:08x} is not 'KMDL'", offset=0, field="identifier")
    if version != 4:
        raise KmodelFormatError(f"version {version} is not 4", offset=4, field="version")
    if target not in (0, 1):
        raise KmodelFormatError(f"target {target} is neither 0 (CPU) nor 1 (K210)", offset=12, field="target")
    if main_mem > K210_MAIN_MEMORY_BYTES:
        raise KmodelFormatError(
            f"main_mem {main_mem} bytes exceeds the K210's {K210_MAIN_MEMORY_BYTES} bytes of SRAM", offset=20, field="main_mem"
        )
    file_len = len(r)
    if constants > file_len:
        raise KmodelFormatError(f"constants {constants} bytes exceeds the file ({file_len} bytes)", offset=16, field="constants")
    tables = (inputs * (MEMORY_RANGE_BYTES + SHAPE_BYTES) + outputs * MEMORY_RANGE_BYTES + nodes * NODE_HEADER_BYTES)
    if HEADER_BYTES + tables + constants > file_len:
        raise KmodelFormatError(
            f"header declares {inputs} inputs, {outputs} outputs, {nodes} nodes and {constants} constant bytes, "
            f"which do not fit in {file_len} bytes",
            offset=24,
            field="nodes/inputs/outputs",
        )
    if inputs == 0:
        raise KmodelFormatError("model has no inputs", offset=28, field="inputs")
    return Header(version, flags, target, constants, main_mem, nodes, inputs, outputs)


def read_range(r: BinaryReader, field: str) -> MemoryRange:
    at = r.offset
    mtype, dtype, start, size = r.struct("4I", field)
    if mtype not in MEMORY_NAMES:
        raise KmodelFormatError(f"memory_type {mtype} is not 0, 1 or 2", offset=at, field=f"{field}.memory_type")
    if dtype not in DTYPES:
        raise KmodelFormatError(f"datatype {dtype} is not 0 (float32) or 1 (uint8)", offset=at + 4, field=f"{field}.datatype")
    return MemoryRange(mtype, dtype, start, size, at)


def arena_sizes(header: Header) -> dict[int, int]:
    return {MEM_CONST: header.constants, MEM_MAIN: header.main_mem, MEM_KPU: K210_KPU_RAM_BYTES}


def check_range(mr: MemoryRange, sizes: dict[int, int], field: str, *, writable: bool = False, node: NodeHeader | None = None) -> None:
    """The range must lie inside its memory; written ranges must not be in const memory."""
    where = f"node {node.index} ({node.name}): " if node else ""
    fld = f"node[{node.index}].{field}" if node else field
    if writable and mr.memory_type == MEM_CONST:
        raise KmodelFormatError(f"{where}{field} {mr} writes into the read-only constants", offset=mr.offset, field=fld)
    limit = sizes[mr.memory_type]
    if mr.end > limit:
        raise KmodelFormatError(
            f"{where}{field} {mr} ends at byte {mr.end}, beyond the {limit}-byte {mr.memory} memory",
            offset=mr.offset + 8,
            field=fld,
        )
