"""MicroPython ``ustruct`` (= ``struct``): ``s`` takes a str, integers truncate, unpack needs a big-enough buffer."""

from typing import Any

class error(Exception):
    """Raised on bad formats or buffer sizes."""

def calcsize(format: str | bytes, /) -> int:
    """Bytes needed by ``format``."""
def pack(format: str | bytes, /, *values: Any) -> bytes:
    """Pack values by format."""
def pack_into(format: str | bytes, buffer: bytearray | memoryview, offset: int, /, *values: Any) -> None:
    """Pack into a buffer at ``offset``."""
def unpack(format: str | bytes, buffer: bytes | bytearray | memoryview, offset: int = 0, /) -> tuple[Any, ...]:
    """Unpack from the start (or ``offset``) of a buffer at least as big as the format."""
def unpack_from(format: str | bytes, /, buffer: bytes | bytearray | memoryview, offset: int = 0) -> tuple[Any, ...]:
    """Unpack from ``offset``."""
