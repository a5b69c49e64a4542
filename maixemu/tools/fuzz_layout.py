"""Where the interesting bytes of a kmodel are, for the fuzz harness (``maixemu.tools.fuzz``).

A mutation fuzzer that flips random bytes mostly hits weights and exercises nothing; the loaders
trust (and must validate) a few dozen words: counts, sizes, offsets, shapes and type codes. This
module walks a V3 or V4 file's tables *without* the real loaders (so a loader bug cannot hide its
own fields) and lists those words and the structural boundaries (header end, each descriptor,
each layer/node header, each body start/end, the constants blob) where truncation is meaningful.

The walk is tolerant: it stops quietly where the file stops making sense, and must never raise.
V4 node bodies differ per opcode; their words are first labelled by position, then named by
loading the unmutated file once with a recording body reader (``name_v4_body_fields``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from maixemu.kmodel.v3 import LAYER_NAMES as V3_LAYER_NAMES
from maixemu.kmodel.v3 import LAYERS as V3_LAYERS

LDMK = 0x4B4D444C


@dataclass(frozen=True)
class Field:
    """One word the loader interprets. ``kind`` picks the interesting values the fuzzer writes."""

    offset: int
    size: int  # 4 (u32/i32) or 8 (a K210 register word)
    name: str
    kind: str  # "size", "count", "offset", "shape", "opcode", "version", "register", "word"
    signed: bool = False


@dataclass
class Layout:
    """The parsed structure of one file: its version, fields and truncation boundaries."""

    version: int | None
    fields: list[Field] = field(default_factory=list)
    boundaries: list[tuple[int, str]] = field(default_factory=list)
    opcodes: list[int] = field(default_factory=list)  # the valid type codes of this version

    def add(self, offset: int, name: str, kind: str, size: int = 4, signed: bool = False) -> None:
        self.fields.append(Field(offset, size, name, kind, signed))

    def mark(self, offset: int, name: str) -> None:
        self.boundaries.append((offset, name))


# ---------------------------------------------------------------------------------------------
# V3
# ---------------------------------------------------------------------------------------------

V3_CODES = sorted(V3_LAYER_NAMES)


def _v3_body_words(code: int) -> list[str]:
    """Leading u32 words of a V3 body: the loader's own declared fields (kmodel-v3.md §3)."""
    kind = V3_LAYERS.get(code)
    if kind is None:
        return []
    words = []
    for name, fmt in zip(kind.layout.names, kind.layout.fmt):
        if fmt != "I":
            break
        words.append(name)
    return words


_SIZE_WORDS = ("count", "channels", "kernel_size", "in_channels", "out_channels", "channel_size", "input_count")


def _word_kind(name: str) -> str:
    if name.endswith("address") or name.endswith("_offset"):
        return "offset"
    if name in _SIZE_WORDS:
        return "count"
    if name.endswith(("width", "height")):
        return "shape"
    return "word"


def _u32(data: bytes, off: int) -> int | None:
    return struct.unpack_from("<I", data, off)[0] if 0 <= off and off + 4 <= len(data) else None


def layout_v3(data: bytes) -> Layout:
    """Fields and boundaries of a little-endian V3 file (kmodel-v3.md §1, §3)."""
    lay = Layout(3, opcodes=V3_CODES)
    names = ["version", "flags", "arch", "layers_length", "max_start_address", "main_mem_usage", "output_count"]
    kinds = ["version", "word", "word", "count", "offset", "size", "count"]
    for i, (field_name, field_kind) in enumerate(zip(names, kinds)):
        lay.add(4 * i, field_name, field_kind)
    lay.mark(28, "end of header")
    if len(data) < 28:
        return lay
    n_layers, n_out = _u32(data, 12), _u32(data, 24)
    assert n_layers is not None and n_out is not None  # (the 28 header bytes are there)
    if n_out > 4096 or n_layers > 4096:
        return lay
    for i in range(n_out):
        off = 28 + 8 * i
        lay.add(off, f"outputs[{i}].address", "offset")
        lay.add(off + 4, f"outputs[{i}].size", "size")
        lay.mark(off + 8, f"end of outputs[{i}]")
    table = 28 + 8 * n_out
    pos = table + 8 * n_layers
    for i in range(n_layers):
        hoff = table + 8 * i
        code, body_size = _u32(data, hoff), _u32(data, hoff + 4)
        if code is None or body_size is None:
            break
        lay.add(hoff, f"layers[{i}].type", "opcode")
        lay.add(hoff + 4, f"layers[{i}].body_size", "size")
        lay.mark(hoff + 8, f"end of layers[{i}] header")
        if pos >= len(data):
            continue
        lay.mark(pos, f"start of layers[{i}] body")
        for j, word in enumerate(_v3_body_words(code)):
            lay.add(pos + 4 * j, f"layers[{i}].{word}", _word_kind(word))
        if code == 10240:  # K210_CONV: the 12 register words at layer_offset
            layer_off = _u32(data, pos + 8)
            if layer_off is not None and layer_off + 96 <= len(data):
                for k in range(12):
                    lay.add(layer_off + 8 * k, f"layers[{i}].registers[{k}]", "register", size=8)
        if code in (16, 17):
            count = _u32(data, pos + 8) or 0
            for j in range(min(count, 64)):
                lay.add(pos + 12 + 8 * j, f"layers[{i}].inputs[{j}].start", "offset")
                lay.add(pos + 16 + 8 * j, f"layers[{i}].inputs[{j}].size", "size")
        pos += body_size
        lay.mark(min(pos, len(data)), f"end of layers[{i}] body")
    return lay


# ---------------------------------------------------------------------------------------------
# V4
# ---------------------------------------------------------------------------------------------

V4_CODES = list(range(0x15)) + [0x1001, 0x1002, 0x1003, 0x1004, 0x1005, 0x2001, 0x2002]


def _range_fields(lay: Layout, off: int, name: str) -> None:
    lay.add(off, f"{name}.memory_type", "word")
    lay.add(off + 4, f"{name}.datatype", "word")
    lay.add(off + 8, f"{name}.start", "offset")
    lay.add(off + 12, f"{name}.size", "size")


def layout_v4(data: bytes) -> Layout:
    """Fields and boundaries of a V4 file (kmodel-v4.md §1); body words are labelled by position,
    the first memory ranges of a body (every body starts with its input/output ranges) by name."""
    lay = Layout(4, opcodes=V4_CODES)
    hdr = ["identifier", "version", "flags", "target", "constants", "main_mem", "nodes", "inputs", "outputs"]
    kinds = ["version", "version", "word", "word", "size", "size", "count", "count", "count"]
    for i, (field_name, field_kind) in enumerate(zip(hdr, kinds)):
        lay.add(4 * i, field_name, field_kind)
    lay.mark(40, "end of header")
    if len(data) < 40:
        return lay
    constants, nodes, inputs, outputs = (_u32(data, o) for o in (16, 24, 28, 32))
    # (the 40 header bytes are there)
    assert constants is not None and nodes is not None and inputs is not None and outputs is not None
    if max(nodes, inputs, outputs) > 4096:
        return lay
    pos = 40
    for i in range(inputs):
        _range_fields(lay, pos, f"inputs[{i}]")
        pos += 16
        lay.mark(pos, f"end of inputs[{i}]")
    for i in range(inputs):
        for d in range(4):
            lay.add(pos + 4 * d, f"input_shapes[{i}][{d}]", "shape", signed=True)
        pos += 16
        lay.mark(pos, f"end of input_shapes[{i}]")
    for i in range(outputs):
        _range_fields(lay, pos, f"outputs[{i}]")
        pos += 16
        lay.mark(pos, f"end of outputs[{i}]")
    lay.mark(pos, "start of constants")
    pos += constants
    lay.mark(pos, "end of constants")
    table = pos
    body = table + 8 * nodes
    for i in range(nodes):
        hoff = table + 8 * i
        opcode, body_size = _u32(data, hoff), _u32(data, hoff + 4)
        if opcode is None or body_size is None:
            break
        lay.add(hoff, f"nodes[{i}].opcode", "opcode")
        lay.add(hoff + 4, f"nodes[{i}].body_size", "size")
        lay.mark(hoff + 8, f"end of nodes[{i}] header")
        if body >= len(data):
            continue
        lay.mark(body, f"start of nodes[{i}] body")
        n_words = min(body_size, 256, len(data) - body) // 4
        for k in range(n_words):
            if k < 8:  # two leading memory ranges (input, output) in most bodies
                names = ("memory_type", "datatype", "start", "size")
                kind = ("word", "word", "offset", "size")[k % 4]
                lay.add(body + 4 * k, f"nodes[{i}].range{k // 4}.{names[k % 4]}", kind)
            else:
                lay.add(body + 4 * k, f"nodes[{i}].body+0x{4 * k:x}", "shape", signed=True)
        body += body_size
        lay.mark(min(body, len(data)), f"end of nodes[{i}] body")
    return lay


_RANGE_PARTS = ("memory_type", "datatype", "start", "size")


def _v4_kind(name: str) -> str:
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "size" or leaf.endswith("_size") or leaf.endswith("count"):
        return "size"
    if leaf == "start" or leaf.endswith("_addr") or leaf.endswith("offset"):
        return "offset"
    if leaf in ("memory_type", "datatype") or leaf.endswith("_op") or leaf == "op":
        return "word"
    return "shape"


def _named(offset: int, name: str, signed: bool, size: int) -> Field:
    if size == 8:  # a K210 register word of a kpu_conv2d body
        return Field(offset, 8, name, "register")
    return Field(offset, 4, name, _v4_kind(name), signed)


def name_v4_body_fields(data: bytes, lay: Layout) -> None:
    """Replace the positional names of V4 body words by the names the decoders read them under.

    The unmutated file is loaded once with a recording body reader; every scalar or struct read
    (not the weight arrays) becomes a named field, so targeted mutations and reports say
    ``node[12].filter_h`` instead of ``nodes[12].body+0x38``.
    """
    from maixemu.kmodel.v4 import model as v4_module
    from maixemu.kmodel.v4.format import BodyReader

    seen: dict[int, tuple[str, bool, int]] = {}

    class Recording(BodyReader):
        def _unpack(self, fmt, size, field):
            base = self.node.body_offset + self.offset
            codes = fmt.lstrip("<>=!@")
            count = int(codes[:-1]) if codes[:-1] else 1
            if codes[-1] in "IiQq" and size <= 16:
                step = size // count
                for k in range(count):
                    part = (_RANGE_PARTS[k] if count == 4 and codes[-1] == "I" else f"{k}") if count > 1 else None
                    name = f"node[{self.node.index}].{field}" + (f".{part}" if part else "")
                    seen[base + k * step] = (name, codes[-1] in "iq", step)
            return super()._unpack(fmt, size, field)

    original = v4_module.BodyReader
    setattr(v4_module, "BodyReader", Recording)  # (the loader's reader, recording for this one load)
    try:
        v4_module.load_v4(data)
        loaded = True
    except Exception:  # noqa: BLE001 - a file the loader refuses keeps its positional names
        loaded = False
    finally:
        setattr(v4_module, "BodyReader", original)
    renamed = []
    for f in lay.fields:
        positional = f.name.startswith("nodes[") and (".range" in f.name or "body+" in f.name)
        hit = seen.pop(f.offset, None) if positional else None
        if hit:
            renamed.append(_named(f.offset, *hit))
        elif not (positional and loaded):  # unread body words (weights, tables) are left to random flips
            renamed.append(f)
    renamed += [_named(off, *hit) for off, hit in seen.items()]
    lay.fields = renamed


def layout_of(data: bytes) -> Layout:
    """The layout of a little-endian V3 or a V4 file; an empty layout for anything else."""
    word0 = _u32(data, 0)
    if word0 == 3:
        return layout_v3(data)
    if word0 == LDMK and _u32(data, 4) == 4:
        lay = layout_v4(data)
        name_v4_body_fields(data, lay)
        return lay
    lay = Layout(None)
    if word0 == LDMK:  # V5: at least its header words
        lay.version = _u32(data, 4)
        for i, n in enumerate(["identifier", "version", "header_size", "flags", "alignment", "modules"]):
            lay.add(4 * i, n, "version" if i < 2 else "count")
        lay.mark(min(len(data), 32), "end of header")
    return lay
