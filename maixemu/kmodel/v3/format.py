"""kmodel V3 on-disk structures (kmodel-v3.md §1-§2): the header, the layer type codes, and the
body reader that reads a layer body by its declared fields.

Only parsing and validation live here; what each layer *does* is registered in ``layers``.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..errors import KmodelFormatError
from ..reader import BinaryReader

HEADER_BYTES = 28
#: Sanity limit on layers_length (real models have tens); keeps a corrupt count from costing minutes.
MAX_LAYERS = 10000

#: Every layer type code nncase v0.1 defines (kmodel-v3.md §2), implemented or not.
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
#: Codes the device runner (``ai_step``) does not implement: "Layer is not supported".
UNSUPPORTED_CODES = {0, 3, 4, 6, 7, 10, 19, 21}


@dataclass(frozen=True)
class Header:
    """The seven u32 words of the 28-byte header (kmodel-v3.md §1.1)."""

    version: int
    flags: int
    arch: int
    layers_length: int
    max_start_address: int
    main_mem_usage: int
    output_count: int

    def as_dict(self) -> dict[str, int]:
        return dict(version=self.version, flags=self.flags, arch=self.arch, layers_length=self.layers_length,
                    max_start_address=self.max_start_address, main_mem_usage=self.main_mem_usage,
                    output_count=self.output_count)


#: struct codes of the declared body fields: ``name`` is a u32, ``name:i`` an i32, ``name:f`` a float32.
_FIELD_CODES = {"": "I", "i": "i", "f": "f"}


@dataclass(frozen=True)
class BodyLayout:
    """The fixed head of one layer type's body: field names in file order with their struct codes."""

    names: tuple[str, ...]
    fmt: str

    @classmethod
    def parse(cls, fields: str) -> "BodyLayout":
        names, codes = [], []
        for item in fields.split():
            name, _, kind = item.partition(":")
            names.append(name)
            codes.append(_FIELD_CODES[kind])
        return cls(tuple(names), "".join(codes))

    @property
    def size(self) -> int:
        return struct.calcsize("<" + self.fmt)

    def offset_of(self, name: str) -> int:
        return struct.calcsize("<" + self.fmt[: self.names.index(name)])


class Body:
    """One layer body read through its declared :class:`BodyLayout`.

    Field values are attributes (``body.main_mem_in_address``); ``body.at(name)`` is the field's
    absolute file offset and ``body.field(name)`` its name as errors report it
    (``layers[3] QUANTIZE.count``), so every message a malformed file gets names both.
    """

    def __init__(self, reader: BinaryReader, index: int, kind: str, offset: int, size: int, layout: BodyLayout):
        self.reader = reader
        self.index = index
        self.kind = kind
        self.offset = offset
        self.size = size
        self.layout = layout
        self.prefix = f"layers[{index}] {kind}"
        if layout.size > size:
            raise KmodelFormatError(f"{kind} body needs {layout.size} bytes but body_size is {size}", offset=offset,
                                    field=f"layers[{index}].body_size")
        values = reader.at(offset).struct(layout.fmt, f"{self.prefix} body")
        self.values = dict(zip(layout.names, values))

    def __getattr__(self, name: str):
        values = self.__dict__.get("values")
        if values is not None and name in values:
            return values[name]
        raise AttributeError(name)

    @property
    def end(self) -> int:
        return self.offset + self.size

    def at(self, name: str) -> int:
        return self.offset + self.layout.offset_of(name)

    def field(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def access(self, name: str, nbytes: int) -> tuple[int, int, int, str]:
        """``(address, nbytes, file offset, field)`` of a main-memory range addressed by field ``name``."""
        return (self.values[name], nbytes, self.at(name), self.field(name))

    def fail(self, message: str, name: str, *, label: str | None = None) -> KmodelFormatError:
        """An error at field ``name``; ``label`` names it differently (``in_shape`` for its first word)."""
        return KmodelFormatError(message, offset=self.at(name), field=self.field(label or name))


def read_header(r: BinaryReader) -> Header:
    r.require(0, HEADER_BYTES, "header")
    return Header(*r.at(0).struct("7I", "header"))
