"""MicroPython's argument conversions as the CanMV KPU code calls them, with their TypeError texts.

The C functions take Python objects and convert them with ``mp_obj_get_int``/``mp_obj_get_float``/
``mp_obj_get_array`` or assert a type with OpenMV's ``PY_ASSERT_TYPE``; each has its own rule
(``mp_obj_get_int`` refuses floats, ``mp_obj_get_array`` takes only tuples and lists) and message.
"""

from __future__ import annotations

from typing import Any


def _type_name(value: Any) -> str:
    return type(value).__name__


def int_arg(value: Any) -> int:
    """``mp_obj_get_int``: ints and bools; a float is refused (``can't convert float to int``)."""
    if isinstance(value, int):
        return int(value)
    raise TypeError(f"can't convert {_type_name(value)} to int")


def float_arg(value: Any) -> float:
    """``mp_obj_get_float``: ints, bools and floats."""
    if isinstance(value, (int, float)):
        return float(value)
    raise TypeError(f"can't convert {_type_name(value)} to float")


def items_of(value: Any) -> list:
    """``mp_obj_get_array``: the items of a tuple or a list."""
    if isinstance(value, (tuple, list)):
        return list(value)
    raise TypeError(f"object '{_type_name(value)}' isn't a tuple or list")


def assert_type(value: Any, expected: type, type_name: str) -> None:
    """OpenMV's ``PY_ASSERT_TYPE``: ``TypeError("Can't convert <type> to <type>")``."""
    if not isinstance(value, expected):
        raise TypeError(f"Can't convert {_type_name(value)} to {type_name}")


def require_list(value: Any) -> list:
    """``PY_ASSERT_TYPE(obj, &mp_type_list)``: only a list (not a tuple)."""
    assert_type(value, list, "list")
    return list(value)


__all__ = ["int_arg", "float_arg", "items_of", "assert_type", "require_list"]
