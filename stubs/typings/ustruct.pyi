"""MicroPython ``ustruct`` (CPython's ``struct`` behaviour)."""

from typing import Any

class error(Exception):
    """Raised on bad formats or buffer sizes."""

def calcsize(format: str | bytes, /) -> int:
    """Bytes needed by ``format``."""
def pack(format: str | bytes, /, *values: Any) -> bytes:
    """Pack values by format."""
def pack_into(format: str | bytes, buffer: bytearray | memoryview, offset: int, /, *values: Any) -> None:
    """Pack into a buffer at ``offset``."""
def unpack(format: str | bytes, buffer: bytes | bytearray | memoryview, /) -> tuple[Any, ...]:
    """Unpack a whole buffer."""
def unpack_from(format: str | bytes, /, buffer: bytes | bytearray | memoryview, offset: int = 0) -> tuple[Any, ...]:
    """Unpack from ``offset``."""
