"""MicroPython ``ustruct`` (``struct``): py/modstruct.c at MaixPy's MicroPython commit ced340d.

The device is more lenient than CPython's ``struct`` in ways scripts rely on, so the functions
are MicroPython's over CPython's packing:

* ``s`` takes any object with the buffer protocol, ``str`` included (``pack(">sf", "f", 1.0)``);
  shorter data is zero-filled, longer is cut to the count;
* ``pack`` ignores arguments beyond the format and leaves the fields of missing ones zero;
* integers are stored truncated to the field's width (no range error);
* ``unpack`` reads from a buffer that is *at least* big enough (CPython wants the exact size);
  a short one raises the firmware's ``ValueError: buffer too small``.
"""

from __future__ import annotations

import struct as _struct
from struct import calcsize, error
from typing import Any

from .mp_builtins import buffer_bytes

_BYTE_ORDERS = "@=<>!"
_INTEGER_CODES = "bBhHiIlLqQnN"
_SIGNED_CODES = "bhilqn"


def _split(fmt: str | bytes) -> tuple[str, list[tuple[int, str]]]:
    """``fmt`` as (byte order prefix, [(count, code)...]) the way modstruct.c walks it."""
    text = fmt.decode() if isinstance(fmt, (bytes, bytearray)) else str(fmt)
    prefix = ""
    if text[:1] in tuple(_BYTE_ORDERS):
        prefix, text = text[0], text[1:]
    items: list[tuple[int, str]] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < len(text) and text[j].isdigit():
            j += 1
        if j >= len(text):
            raise error("bad char in struct format")
        items.append((int(text[i:j]) if j > i else 1, text[j]))
        i = j + 1
    return prefix, items


def _truncate(code: str, value: Any, prefix: str) -> Any:
    if code not in _INTEGER_CODES or isinstance(value, bool) or not isinstance(value, int):
        return value
    bits = 8 * calcsize(prefix + code)
    value &= (1 << bits) - 1
    if code in _SIGNED_CODES and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def _fields(fmt: str | bytes, args: tuple[Any, ...]) -> tuple[str, list[Any]]:
    """The CPython format and argument list that pack what MicroPython packs for ``args``."""
    prefix, items = _split(fmt)
    values: list[Any] = []
    remaining = list(args)
    for count, code in items:
        if code == "x":
            continue
        if code == "s":
            data = buffer_bytes(remaining.pop(0)) if remaining else b""
            values.append(data[:count])
            continue
        for _ in range(count):
            if remaining:
                values.append(_truncate(code, remaining.pop(0), prefix))
            else:
                values.append(0.0 if code in "efd" else False if code == "?" else 0)
    return (fmt.decode() if isinstance(fmt, (bytes, bytearray)) else fmt), values


def _room(size: int, length: int, offset: int) -> int:
    """``offset`` (negative: from the end) where ``size`` bytes fit in ``length``, or the firmware's error."""
    if offset < 0:
        offset += length
    if offset < 0 or offset + size > length:
        raise ValueError("buffer too small")
    return offset


def pack(format: str | bytes, /, *values: Any) -> bytes:  # noqa: A002 - the firmware's names
    """Pack ``values`` by ``format`` as the firmware does (see the module docstring)."""
    cpython_fmt, packed = _fields(format, values)
    return _struct.pack(cpython_fmt, *packed)


def pack_into(format: str | bytes, buffer: Any, offset: int, /, *values: Any) -> None:  # noqa: A002
    """Pack into ``buffer`` at ``offset`` (negative: from the end); ``buffer too small`` as on the device."""
    offset = _room(calcsize(format), len(buffer), offset)
    cpython_fmt, fields = _fields(format, values)
    _struct.pack_into(cpython_fmt, buffer, offset, *fields)


def unpack_from(format: str | bytes, /, buffer: Any, offset: int = 0) -> tuple[Any, ...]:  # noqa: A002
    """Unpack from ``buffer`` at ``offset``; it needs to be big enough, not exactly sized."""
    view = buffer if isinstance(buffer, (bytes, bytearray)) else memoryview(buffer).cast("B")
    return _struct.unpack_from(format, view, _room(calcsize(format), len(view), offset))


def unpack(format: str | bytes, buffer: Any, offset: int = 0, /) -> tuple[Any, ...]:  # noqa: A002
    """MicroPython's ``unpack`` is its ``unpack_from``: extra bytes after the fields are ignored."""
    return unpack_from(format, buffer, offset)


__all__ = ["calcsize", "error", "pack", "pack_into", "unpack", "unpack_from"]
