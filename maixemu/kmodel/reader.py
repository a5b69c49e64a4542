"""A bounded little-endian reader over the bytes of a model file.

Every read checks the file length first, so a corrupt size or offset field raises a
KmodelFormatError naming the field instead of an IndexError, a short numpy array or a huge
allocation.
"""

from __future__ import annotations

import struct

import numpy as np

from .errors import KmodelFormatError


class BinaryReader:
    """Cursor over an immutable byte buffer; all reads are bounds-checked against its length."""

    def __init__(self, data: bytes | bytearray | memoryview, offset: int = 0):
        self.data = bytes(data) if not isinstance(data, bytes) else data
        self.offset = offset

    def __len__(self) -> int:
        return len(self.data)

    def remaining(self) -> int:
        return len(self.data) - self.offset

    def require(self, offset: int, size: int, field: str) -> None:
        """Raise unless ``size`` bytes at ``offset`` lie inside the file."""
        if offset < 0 or size < 0 or offset + size > len(self.data):
            raise KmodelFormatError(
                f"file too short or field out of range: need {size} bytes at 0x{max(offset, 0):x}, "
                f"file has {len(self.data)} bytes",
                offset=offset,
                field=field,
            )

    def seek(self, offset: int, field: str = "offset") -> "BinaryReader":
        self.require(offset, 0, field)
        self.offset = offset
        return self

    def skip(self, size: int, field: str = "padding") -> None:
        self.require(self.offset, size, field)
        self.offset += size

    def _unpack(self, fmt: str, size: int, field: str):
        self.require(self.offset, size, field)
        value = struct.unpack_from(fmt, self.data, self.offset)
        self.offset += size
        return value

    def u8(self, field: str) -> int:
        return self._unpack("<B", 1, field)[0]

    def u16(self, field: str) -> int:
        return self._unpack("<H", 2, field)[0]

    def u32(self, field: str) -> int:
        return self._unpack("<I", 4, field)[0]

    def i32(self, field: str) -> int:
        return self._unpack("<i", 4, field)[0]

    def u64(self, field: str) -> int:
        return self._unpack("<Q", 8, field)[0]

    def f32(self, field: str) -> float:
        return self._unpack("<f", 4, field)[0]

    def struct(self, fmt: str, field: str) -> tuple:
        """Unpack a struct format (little-endian is forced) at the cursor."""
        fmt = "<" + fmt.lstrip("<>=!@")
        return self._unpack(fmt, struct.calcsize(fmt), field)

    def bytes(self, size: int, field: str) -> bytes:
        self.require(self.offset, size, field)
        out = self.data[self.offset : self.offset + size]
        self.offset += size
        return out

    def array(self, dtype, count: int, field: str) -> np.ndarray:
        """Read ``count`` little-endian items; the size is checked before numpy allocates."""
        dt = np.dtype(dtype).newbyteorder("<")
        size = dt.itemsize * count
        self.require(self.offset, size, field)
        out = np.frombuffer(self.data, dtype=dt, count=count, offset=self.offset).astype(dt.newbyteorder("="))
        self.offset += size
        return out

    def view(self, count: int, field: str) -> np.ndarray:
        """``count`` bytes as a read-only uint8 array *into* the bytes this reader reads (no copy:
        a layer's weights then share those bytes — a V4 node's body — instead of adding a copy)."""
        self.require(self.offset, count, field)
        out = np.frombuffer(self.data, dtype=np.uint8, count=count, offset=self.offset)
        self.offset += count
        return out

    def at(self, offset: int) -> "BinaryReader":
        """A new reader on the same bytes, positioned at ``offset`` (checked)."""
        self.require(offset, 0, "offset")
        return BinaryReader(self.data, offset)
