"""Builtins whose MicroPython behaviour differs from CPython's in ways scripts rely on.

MaixPy runs MicroPython at commit ced340d. The run's builtins (session.run) take these names in
place of CPython's; everything a script builds with them stays a real CPython object of the same
type family, so ``isinstance`` checks and firmware functions keep working.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any


class _ByteArrayType(type):
    """``isinstance(x, bytearray)`` in a script is true for every CPython bytearray (the firmware's
    ``uart.read()`` results, too), not only for the ones the script built."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, builtins.bytearray)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, builtins.bytearray)


class bytearray(builtins.bytearray, metaclass=_ByteArrayType):  # noqa: N801 - the builtin's name
    """MicroPython's ``bytearray`` (py/objarray.c ``bytearray_make_new``): one argument with the
    buffer protocol is copied raw, and a ``str`` has it: ``bytearray("AT")`` is ``bytearray(b'AT')``
    (CPython: ``TypeError: string argument without an encoding``). A second and third argument
    (encoding, errors) are accepted and ignored whatever the first is, as the firmware does:
    text is always UTF-8."""

    def __init__(self, source: Any = 0, encoding: Any = None, errors: Any = None) -> None:
        del encoding, errors  # the firmware checks only their count
        super().__init__(source.encode("utf-8") if isinstance(source, str) else source)


def buffer_bytes(value: Any) -> bytes:
    """The bytes MicroPython's buffer protocol (``mp_get_buffer_raise``) gives for ``value``: any
    buffer, and a ``str`` as its UTF-8 bytes (CPython's ``str`` has no buffer)."""
    if isinstance(value, str):
        return value.encode("utf-8")
    try:
        return bytes(memoryview(value))
    except TypeError:
        raise TypeError("object with buffer protocol required") from None


def bytes_format(template: bytes, *args: Any, **kwargs: Any) -> bytes:
    """MicroPython's ``bytes.format`` (objstr.c ``mp_obj_str_format``, shared with str): the
    template's bytes formatted as text, the result as bytes; a ``{}`` of a bytes argument prints as
    ``b'...'``, as ``str(b'...')`` does."""
    text = template.decode("utf-8", "surrogateescape")
    return text.format(*args, **kwargs).encode("utf-8", "surrogateescape")


def format_method(obj: Any) -> Any:
    """What ``obj.format`` is in a script (the compiler routes every ``X.format`` here): MicroPython's
    ``bytes.format`` for bytes, the object's own ``format`` otherwise (an object without one raises
    CPython's AttributeError, with its ``name`` and ``obj``)."""
    if isinstance(obj, bytes):
        return functools.partial(bytes_format, obj)
    return obj.format


#: name -> object the run's builtins take from here
MICROPYTHON_BUILTINS: dict[str, Any] = {"bytearray": bytearray, "__maixemu_format_method__": format_method}

__all__ = ["MICROPYTHON_BUILTINS", "buffer_bytes", "bytearray"]
