"""MicroPython ``uio``/``io``: in-memory streams, and files on the board's ``/sd`` and ``/flash``.

On the device ``io.open`` is the builtin ``open`` and ``FileIO``/``TextIOWrapper`` are the types of
the files it returns, made from a path: all three go through the board's storage here too (device
paths, relative to the device working directory, writes kept where the run keeps them). CPython's
``io`` is never handed to a script, so nothing it opens lands in the PC's working directory.
"""

from __future__ import annotations

import io as _io
from typing import Any

from .uos import open_device as open  # noqa: A001 - the device's name

BytesIO = _io.BytesIO
StringIO = _io.StringIO
IOBase = _io.IOBase


def FileIO(name: Any, mode: str = "r", *args: Any, **kwargs: Any):  # noqa: N802 - the device's type name
    """A binary file on the device: ``FileIO("/sd/x.bin", "w")``."""
    return open(name, mode if "b" in mode else mode + "b", *args, **kwargs)


def TextIOWrapper(stream_or_name: Any, mode: str = "r", *args: Any, **kwargs: Any):  # noqa: N802
    """A text file on the device from its path; CPython's wrapper when given a binary stream."""
    if hasattr(stream_or_name, "read") or hasattr(stream_or_name, "write"):
        return _io.TextIOWrapper(stream_or_name, *args, **kwargs)
    return open(stream_or_name, mode.replace("b", ""), *args, **kwargs)


__all__ = ["open", "BytesIO", "StringIO", "IOBase", "FileIO", "TextIOWrapper"]
