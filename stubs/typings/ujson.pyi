"""MicroPython ``ujson`` (CPython's ``json`` behaviour)."""

from typing import IO, Any

def dumps(obj: Any, /) -> str:
    """Serialise to a JSON string."""
def dump(obj: Any, stream: IO[str], /) -> None:
    """Serialise to a stream."""
def loads(str: str | bytes | bytearray, /) -> Any:
    """Parse a JSON string."""
def load(stream: IO[str] | IO[bytes], /) -> Any:
    """Parse JSON from a stream."""
