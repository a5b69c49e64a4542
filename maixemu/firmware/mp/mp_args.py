"""MicroPython's argument conversions, with their TypeError texts: the one copy every firmware module uses.

The firmware's C functions take Python objects and convert them with ``mp_obj_get_int``/
``mp_obj_get_float``/``mp_obj_get_array`` or assert a type with OpenMV's ``PY_ASSERT_TYPE``; each has
its own rule (``mp_obj_get_int`` refuses floats, ``mp_obj_get_array`` takes only tuples and lists)
and message. numpy scalars count as the numbers they hold (image methods return them).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _type_name(value: Any) -> str:
    return type(value).__name__


def int_arg(value: Any) -> int:
    """``mp_obj_get_int``: ints and bools; a float is refused (``can't convert float to int``)."""
    if isinstance(value, (int, np.integer)):
        return int(value)
    raise TypeError(f"can't convert {_type_name(value)} to int")


def float_arg(value: Any) -> float:
    """``mp_obj_get_float``: ints, bools and floats."""
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    raise TypeError(f"can't convert {_type_name(value)} to float")


def items_of(value: Any) -> list:
    """``mp_obj_get_array``: the items of a tuple or a list."""
    if isinstance(value, (tuple, list)):
        return list(value)
    raise TypeError(f"object '{_type_name(value)}' isn't a tuple or list")


def fixed_items(value: Any, n: int) -> list:
    """``mp_obj_get_array_fixed_n``: a tuple/list of exactly ``n`` items."""
    items = items_of(value)
    if len(items) != n:
        raise ValueError(f"requested length {n} but object has length {len(items)}")
    return items


def assert_type(value: Any, expected: type, type_name: str) -> None:
    """OpenMV's ``PY_ASSERT_TYPE``: ``TypeError("Can't convert <type> to <type>")``."""
    if not isinstance(value, expected):
        raise TypeError(f"Can't convert {_type_name(value)} to {type_name}")


def require_list(value: Any) -> list:
    """``PY_ASSERT_TYPE(obj, &mp_type_list)``: only a list (not a tuple)."""
    assert_type(value, list, "list")
    return list(value)


__all__ = ["int_arg", "float_arg", "items_of", "fixed_items", "assert_type", "require_list"]


def stream_write_span(data: bytes, extra: tuple) -> bytes:
    """The bytes MicroPython's stream ``write(buf[, max_len])`` / ``write(buf, off, max_len)`` sends
    (ced340d py/stream.c ``stream_write_method``, the ``write`` of UART, sockets and files):
    ``off`` past the end sends nothing; lengths are ``size_t``, so a negative one means "all"."""
    if len(extra) > 2:
        raise TypeError(f"function expected at most 4 arguments, got {len(extra) + 2}")
    size = (1 << 64) - 1
    off, max_len = 0, size
    if len(extra) == 1:
        max_len = int_arg(extra[0]) & size
    elif len(extra) == 2:
        off, max_len = min(int_arg(extra[0]) & size, len(data)), int_arg(extra[1]) & size
    return data[off: off + max_len]
