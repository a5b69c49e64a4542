"""ulab 0.26 subscription (``ndarray_get_slice`` / ``insert_slice_list``): which elements an index selects.

A leaf below ``_ndarray``: the array's ``[]`` reads and writes the positions chosen here.

A selection is a list of row positions and a list of column positions. Integers become one-element
slices, slices keep the firmware's length rule ``(stop - start) // step`` (MicroPython moves a
negative step's stop one place in, so ``a[::-1]`` misses the first element), Boolean lists select
where they are True — and count 0 if any item is not a bool. A Boolean list on a matrix selects
columns of row 0 (the firmware's single-index path treats it as a row-vector index).
"""

from __future__ import annotations

from typing import Any

import numpy as np



def _is_int(value: Any) -> bool:
    return isinstance(value, int)


def slice_positions(length: int, index: Any) -> list[int]:
    if isinstance(index, slice):
        start, stop, step = index.indices(length)
        if step < 0:
            stop += 1
            count = max(0, (start - stop) // -step)
        else:
            count = max(0, (stop - start) // step)
        return [start + k * step for k in range(count)]
    if _is_int(index):
        value = index + length if index < 0 else index
        if value >= length or value < 0:
            raise IndexError("index is out of bounds")
        return [value]
    raise IndexError("indices must be integers, slices, or Boolean lists")


def _bool_positions(flags: list[Any]) -> list[int]:
    if any(type(flag) is not bool for flag in flags):
        return []
    return [i for i, flag in enumerate(flags) if flag]


def selection(m: int, n: int, index: Any) -> tuple[list[int], list[int]]:
    """(rows, columns) an index selects in an m x n array."""
    if _is_int(index) or isinstance(index, slice):
        if m == 1:
            return [0], slice_positions(n, index)
        return slice_positions(m, index), list(range(n))
    if isinstance(index, list):
        return [0], _bool_positions(index)
    if not isinstance(index, tuple):
        raise IndexError("indices must be integers, slices, or Boolean lists")
    if len(index) != 2:
        raise IndexError("too many indices")
    for part in index:
        if not (isinstance(part, (list, slice)) or _is_int(part)):
            raise IndexError("indices must be integers, slices, or Boolean lists")
    rows_index, cols_index = index
    rows = _bool_positions(rows_index) if isinstance(rows_index, list) else slice_positions(m, rows_index)
    cols = _bool_positions(cols_index) if isinstance(cols_index, list) else slice_positions(n, cols_index)
    return rows, cols


__all__ = ["selection", "slice_positions"]
