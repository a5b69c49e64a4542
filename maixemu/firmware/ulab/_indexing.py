"""ulab 0.26 subscription (``ndarray_get_slice`` / ``insert_slice_list``): which elements an index selects.

A selection is a list of row positions and a list of column positions. Integers become one-element
slices, slices keep the firmware's length rule ``(stop - start) // step`` (MicroPython moves a
negative step's stop one place in, so ``a[::-1]`` misses the first element), Boolean lists select
where they are True — and count 0 if any item is not a bool. A Boolean list on a matrix selects
columns of row 0 (the firmware's single-index path treats it as a row-vector index).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._ndarray import FLOAT, ndarray, read_as, store_value, wrap_int


def _is_int(value: Any) -> bool:
    return isinstance(value, int)


def _slice_positions(length: int, index: Any) -> list[int]:
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


def _selection(arr: ndarray, index: Any) -> tuple[list[int], list[int]]:
    m, n = arr._m, arr._n
    if _is_int(index) or isinstance(index, slice):
        if m == 1:
            return [0], _slice_positions(n, index)
        return _slice_positions(m, index), list(range(n))
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
    rows = _bool_positions(rows_index) if isinstance(rows_index, list) else _slice_positions(m, rows_index)
    cols = _bool_positions(cols_index) if isinstance(cols_index, list) else _slice_positions(n, cols_index)
    return rows, cols


def get(arr: ndarray, index: Any) -> Any:
    if _is_int(index) and arr._m == 1:
        position = _slice_positions(arr._n, index)[0]
        return arr._item(position)
    rows, cols = _selection(arr, index)
    if not rows or not cols:
        raise IndexError("empty index range")
    picked = arr._data[(np.array(rows)[:, None] * arr._n + np.array(cols)[None, :]).reshape(-1)]
    return ndarray._new(picked.copy(), len(rows), len(cols))


def set(arr: ndarray, index: Any, value: Any) -> None:  # noqa: A001 - mirrors get
    if isinstance(value, ndarray):
        values = value
    elif isinstance(value, bool) or _is_int(value):
        values = ndarray._new(np.array([store_value(int(value), arr._typecode)], dtype=arr._data.dtype), 1, 1)
    elif isinstance(value, float):
        values = ndarray._new(np.array([value], dtype=np.float32), 1, 1)
    else:
        raise ValueError("right hand side must be an ndarray, or a scalar")
    rows, cols = _selection(arr, index)
    m, n = len(rows), len(cols)
    if m == 0 or n == 0:
        raise IndexError("empty index range")
    if m != values._m and n != values._n and len(values._data) != 1:
        raise ValueError("could not broadast input array from shape")
    row_step = 0 if values._m == 1 else 1
    col_step = 0 if values._n == 1 else 1
    source = values._data
    for i, row in enumerate(rows):
        for j, col in enumerate(cols):
            at = (i * row_step * n + j * col_step) % max(1, len(source))
            item = source[at]
            if values._typecode == FLOAT and arr._typecode != FLOAT:
                stored: Any = wrap_int(int(np.floor(np.float32(item) + np.float32(0.5))), arr._typecode)
            elif arr._typecode == FLOAT:
                stored = float(item)
            else:
                stored = wrap_int(int(item), arr._typecode)
            arr._data[row * arr._n + col] = stored


__all__ = ["get", "set", "read_as"]
