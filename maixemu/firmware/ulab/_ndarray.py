"""ulab 0.26's ``ndarray`` (``ulab.array``): a 1-D or 2-D array of uint8/int8/uint16/int16/float, kept in numpy.

The semantics are ``ndarray.c`` of the firmware's ulab (v923z/micropython-ulab 0.262 in MaixPy-v1,
0.263 in kendryte/canmv — the same code), not numpy's, because that is what a script meets on the
board:

* every array has a shape ``(m, n)``; a "1-D" array is ``(1, n)`` and ``shape()`` is a *method*;
* ``float`` is float32 (the K210 build's ``mp_float_t``); integer arrays wrap around on overflow;
  a float stored into an integer array must be an int (``array([1.5], dtype=uint8)`` is a
  TypeError) except in slice assignment, which rounds;
* a Python int on the right of an operator becomes the smallest ulab type that holds it — and 0
  becomes a float; the result type follows the firmware's table (``uint8 + int8 -> int16``,
  ``uint16 + int16 -> float``, ...), including its slips: ``int16 (op) float`` reads the int16
  data as uint16 and ``uint16 (op) float`` reads it as uint8;
* only ``ndarray (op) scalar`` and ``ndarray (op) ndarray`` of the same shape work (``2 * a`` is a
  TypeError); comparisons return lists of booleans, ``==`` a single bool;
* indexing: an int on a row vector gives a number, an int or slice on a matrix gives rows,
  ``a[i, j]`` gives a 1x1 array, Boolean lists select, and a stepped slice has
  ``(stop - start) // step`` elements (``a[0:5:2]`` has 2, a negative step drops the last one).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

UINT8, INT8, UINT16, INT16, FLOAT = ord("B"), ord("b"), ord("H"), ord("h"), ord("f")
DTYPES: dict[int, np.dtype] = {UINT8: np.dtype(np.uint8), INT8: np.dtype(np.int8), UINT16: np.dtype(np.uint16),
                               INT16: np.dtype(np.int16), FLOAT: np.dtype(np.float32)}
NAMES = {UINT8: "uint8", INT8: "int8", UINT16: "uint16", INT16: "int16", FLOAT: "float"}
PRINT_MAX = 10

#: Result typecode of ``left (op) right`` (the RUN_BINARY_LOOP table) and how each side's bytes are read.
_PROMOTION: dict[tuple[int, int], tuple[int, int, int]] = {
    (UINT8, UINT8): (UINT8, UINT8, UINT8), (UINT8, INT8): (INT16, UINT8, INT8),
    (UINT8, UINT16): (UINT16, UINT8, UINT16), (UINT8, INT16): (INT16, UINT8, INT16),
    (UINT8, FLOAT): (FLOAT, UINT8, FLOAT),
    (INT8, UINT8): (INT16, INT8, UINT8), (INT8, INT8): (INT8, INT8, INT8), (INT8, UINT16): (INT16, INT8, UINT16),
    (INT8, INT16): (INT16, INT8, INT16), (INT8, FLOAT): (FLOAT, INT8, FLOAT),
    (UINT16, UINT8): (UINT16, UINT16, UINT8), (UINT16, INT8): (UINT16, UINT16, INT8),
    (UINT16, UINT16): (UINT16, UINT16, UINT16), (UINT16, INT16): (FLOAT, UINT16, INT16),
    (UINT16, FLOAT): (FLOAT, UINT8, FLOAT),  # sic: the firmware reads the uint16 data as uint8
    (INT16, UINT8): (INT16, INT16, UINT8), (INT16, INT8): (INT16, INT16, INT8),
    (INT16, UINT16): (FLOAT, INT16, UINT16), (INT16, INT16): (INT16, INT16, INT16),
    (INT16, FLOAT): (FLOAT, UINT16, FLOAT),  # sic: the int16 data read as uint16
    (FLOAT, UINT8): (FLOAT, FLOAT, UINT8), (FLOAT, INT8): (FLOAT, FLOAT, INT8),
    (FLOAT, UINT16): (FLOAT, FLOAT, UINT16), (FLOAT, INT16): (FLOAT, FLOAT, INT16),
    (FLOAT, FLOAT): (FLOAT, FLOAT, FLOAT),
}

_OPS = {"add": np.add, "sub": np.subtract, "mul": np.multiply}
_COMPARE = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def dtype_of(typecode: Any) -> np.dtype:
    try:
        return DTYPES[int(typecode)]
    except (KeyError, TypeError, ValueError):
        raise ValueError(f"dtype must be ulab.uint8, int8, uint16, int16 or float, got {typecode!r}") from None


def float_repr(value: float) -> str:
    """MicroPython's repr of a float32 (``'%.7g'``, with ``.0`` added to whole numbers)."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = "%.7g" % value
    return text if ("." in text or "e" in text) else text + ".0"


def wrap_int(value: int, typecode: int) -> int:
    """An int stored into an integer array of ``typecode`` (two's complement wrap)."""
    bits = DTYPES[typecode].itemsize * 8
    value &= (1 << bits) - 1
    if typecode in (INT8, INT16) and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


def store_value(value: Any, typecode: int) -> Any:
    """``mp_binary_set_val_array``: int arrays take ints (floats are a TypeError), float takes numbers."""
    if typecode == FLOAT:
        return float(np.float32(_as_float(value)))
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, int):
        raise TypeError(f"can't convert {type(value).__name__} to int")
    return wrap_int(value, typecode)


def _as_float(value: Any) -> float:
    if isinstance(value, (bool, int, float)):
        return float(value)
    raise TypeError(f"can't convert {type(value).__name__} to float")


def read_as(data: np.ndarray, typecode: int, count: int) -> np.ndarray:
    """The first ``count`` elements of ``data``'s bytes read as ``typecode`` (the firmware's casts)."""
    target = DTYPES[typecode]
    if data.dtype == target:
        return data[:count]
    raw = np.ascontiguousarray(data).view(np.uint8)
    usable = raw[: (len(raw) // target.itemsize) * target.itemsize].view(target)
    if len(usable) < count:  # reading a wider type past the end: the rest is not ours to know
        usable = np.concatenate([usable, np.zeros(count - len(usable), dtype=target)])
    return usable[:count]


def _typed(values: np.ndarray, typecode: int) -> np.ndarray:
    """Values computed in wide arithmetic, stored as ``typecode`` (wrapping, float32 rounding)."""
    target = DTYPES[typecode]
    if typecode == FLOAT:
        return values.astype(np.float32)
    return (values.astype(np.int64) & ((1 << (8 * target.itemsize)) - 1)).astype(np.uint64).astype(target)


class ndarray:  # noqa: N801 - the firmware's type name
    """``ulab.array(iterable, dtype=ulab.float)``; see the module docstring."""

    __slots__ = ("_data", "_m", "_n", "__weakref__")

    def __init__(self, iterable: Any = None, *args: Any, dtype: int = FLOAT):
        if len(args) > 1:
            raise TypeError("function expected at most 2 arguments, got 3")
        typecode = int(dtype)
        dtype_of(typecode)
        try:
            length = len(iterable)
        except TypeError:
            raise ValueError("first argument must be an iterable") from None
        rows = list(iterable)
        width = 0
        seen = 0
        for item in rows:
            try:
                item_len = len(item)
            except TypeError:
                continue
            if seen and item_len != width:
                raise ValueError("iterables are not of the same length")
            width = item_len
            seen += 1
        if width == 0:
            values = [store_value(v, typecode) for v in rows]
            m, n = 1, length
        else:
            values = [store_value(v, typecode) for row in rows for v in row]
            m, n = length, width
        data = np.zeros(m * n, dtype=DTYPES[typecode])
        data[: len(values)] = values[: m * n]
        self._set(data, m, n)

    # -- construction helpers --------------------------------------------------------------------
    def _set(self, data: np.ndarray, m: int, n: int) -> None:
        self._data = data
        self._m, self._n = int(m), int(n)

    @classmethod
    def _new(cls, data: np.ndarray, m: int, n: int) -> "ndarray":
        obj = cls.__new__(cls)
        obj._set(np.ascontiguousarray(data).reshape(-1), m, n)
        return obj

    @classmethod
    def _zeros(cls, m: int, n: int, typecode: int) -> "ndarray":
        from ..mgc import HEAP_SIZE

        size = m * n * DTYPES[typecode].itemsize
        if m < 0 or n < 0 or size > HEAP_SIZE:  # size_t on the board: a negative size is huge
            raise MemoryError(f"memory allocation failed, allocating {size & 0xFFFFFFFF} bytes")
        return cls._new(np.zeros(m * n, dtype=DTYPES[typecode]), m, n)

    @property
    def _typecode(self) -> int:
        return {v: k for k, v in DTYPES.items()}[self._data.dtype]

    def _copy(self) -> "ndarray":
        return ndarray._new(self._data.copy(), self._m, self._n)

    def _item(self, index: int) -> Any:
        value = self._data[index]
        return float(value) if self._typecode == FLOAT else int(value)

    def _matrix(self) -> np.ndarray:
        return self._data.reshape(self._m, self._n)

    # -- methods ---------------------------------------------------------------------------------
    def shape(self) -> tuple[int, int]:
        return (self._m, self._n)

    def rawsize(self) -> tuple[int, int, int, int, int]:
        size = self._data.dtype.itemsize
        return (self._m, self._n, len(self._data), len(self._data) * size, size)

    def flatten(self, *, order: str = "C") -> "ndarray":
        if not isinstance(order, str) or order not in ("C", "F"):
            raise ValueError("flattening order must be either 'C', or 'F'")
        data = self._matrix().T.reshape(-1) if order == "F" else self._data
        return ndarray._new(data.copy(), 1, len(self._data))

    def asbytearray(self) -> bytearray:
        return bytearray(self._data.tobytes())

    def transpose(self) -> None:
        if self._m != 1 and self._n != 1:
            self._data = np.ascontiguousarray(self._matrix().T).reshape(-1)
        self._m, self._n = self._n, self._m
        return None

    def reshape(self, shape: Any) -> "ndarray":
        if not isinstance(shape, tuple) or len(shape) != 2:
            raise ValueError("shape must be a 2-tuple")
        m, n = int(shape[0]) & 0xFFFF, int(shape[1]) & 0xFFFF
        if m * n != self._m * self._n:
            raise ValueError("cannot reshape array (incompatible input/output shape)")
        self._m, self._n = m, n
        return self

    def sort(self, *, axis: Any = -1) -> None:
        from . import _functions

        _functions.sort_into(self, axis)
        return None

    # -- the Python protocol ---------------------------------------------------------------------
    def __len__(self) -> int:
        return self._m if self._m > 1 else self._n

    def __bool__(self) -> bool:  # MicroPython has no truth test for ndarray: objects are true
        return True

    def __iter__(self):
        if self._m == 1:
            for i in range(len(self._data)):
                yield self._item(i)
        else:
            for row in range(self._m):
                yield ndarray._new(self._matrix()[row].copy(), 1, self._n)

    def __repr__(self) -> str:
        if len(self._data) == 0:
            body = "[]"
        elif self._m == 1 or self._n == 1:
            body = self._row(0, len(self._data))
        else:
            body = "[" + ",\n\t ".join(self._row(i * self._n, self._n) for i in range(self._m)) + "]"
        return f"array({body}, dtype={NAMES[self._typecode]})"

    __str__ = __repr__

    def _row(self, start: int, count: int) -> str:
        fmt = float_repr if self._typecode == FLOAT else str
        values = [fmt(self._item(start + i)) for i in range(count)]
        if count >= PRINT_MAX:
            values = values[:3] + ["..."] + values[-3:]
        return "[" + ", ".join(values) + "]"

    # -- indexing --------------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> Any:
        from . import _indexing

        return _indexing.get(self, index)

    def __setitem__(self, index: Any, value: Any) -> None:
        from . import _indexing

        _indexing.set(self, index, value)

    # -- operators -------------------------------------------------------------------------------
    def _operand(self, other: Any) -> tuple["ndarray", bool]:
        if isinstance(other, bool) or isinstance(other, int):
            value = int(other)
            if 0 < value < 256:
                typecode = UINT8
            elif 255 < value < 65535:
                typecode = UINT16
            elif -128 < value < 0:
                typecode = INT8
            elif -32767 < value < -127:
                typecode = INT16
            else:
                typecode = FLOAT
            return ndarray._new(np.array([value], dtype=np.float64).astype(DTYPES[typecode]), 1, 1), True
        if isinstance(other, float):
            return ndarray._new(np.array([other], dtype=np.float32), 1, 1), True
        if isinstance(other, ndarray):
            return other, False
        raise TypeError("wrong operand type on the right hand side")

    def _binary(self, other: Any, op: str) -> Any:
        right, scalar = self._operand(other)
        if not scalar and (self._m != right._m or self._n != right._n):
            raise ValueError("operands could not be broadcast together")
        out_code, left_code, right_code = _PROMOTION[(self._typecode, right._typecode)]
        count = len(self._data)
        left = read_as(self._data, left_code, count)
        rvals = read_as(right._data, right_code, 1 if scalar else count)
        rvals = np.broadcast_to(rvals[:1], (count,)) if scalar else rvals
        if op in _COMPARE:
            return self._compare(left, rvals, op)
        if op == "div":
            with np.errstate(all="ignore"):
                result = left.astype(np.float32) / rvals.astype(np.float32)
            return ndarray._new(result.astype(np.float32), self._m, self._n)
        if out_code == FLOAT:
            with np.errstate(all="ignore"):
                result = _OPS[op](left.astype(np.float32), rvals.astype(np.float32))
        else:
            result = _OPS[op](left.astype(np.int64), rvals.astype(np.int64))
        return ndarray._new(_typed(result, out_code), self._m, self._n)

    def _compare(self, left: np.ndarray, right: np.ndarray, op: str) -> list[Any]:
        if left.dtype.kind == "f" or right.dtype.kind == "f":
            outcome = _COMPARE[op](left.astype(np.float64), right.astype(np.float64))
        else:
            outcome = _COMPARE[op](left.astype(np.int64), right.astype(np.int64))
        rows = [[bool(v) for v in outcome[i * self._n:(i + 1) * self._n]] for i in range(self._m)]
        return rows[0] if self._m == 1 else rows

    def __add__(self, other: Any) -> Any:
        return self._binary(other, "add")

    def __sub__(self, other: Any) -> Any:
        return self._binary(other, "sub")

    def __mul__(self, other: Any) -> Any:
        return self._binary(other, "mul")

    def __truediv__(self, other: Any) -> Any:
        return self._binary(other, "div")

    __iadd__, __isub__, __imul__, __itruediv__ = __add__, __sub__, __mul__, __truediv__

    def __lt__(self, other: Any) -> Any:
        return self._binary(other, "lt")

    def __le__(self, other: Any) -> Any:
        return self._binary(other, "le")

    def __gt__(self, other: Any) -> Any:
        return self._binary(other, "gt")

    def __ge__(self, other: Any) -> Any:
        return self._binary(other, "ge")

    def __eq__(self, other: Any) -> bool:
        right, _ = self._operand(other)
        return (self._m, self._n, self._data.dtype) == (right._m, right._n, right._data.dtype) and \
            self._data.tobytes() == right._data.tobytes()

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]

    def __radd__(self, other: Any) -> Any:
        raise TypeError(f"unsupported types for __add__: '{type(other).__name__}', 'ndarray'")

    def __rsub__(self, other: Any) -> Any:
        raise TypeError(f"unsupported types for __sub__: '{type(other).__name__}', 'ndarray'")

    def __rmul__(self, other: Any) -> Any:
        raise TypeError(f"unsupported types for __mul__: '{type(other).__name__}', 'ndarray'")

    def __rtruediv__(self, other: Any) -> Any:
        raise TypeError(f"unsupported types for __truediv__: '{type(other).__name__}', 'ndarray'")

    def __neg__(self) -> "ndarray":
        if self._typecode == FLOAT:
            return ndarray._new(-self._data, self._m, self._n)
        return ndarray._new(_typed(-self._data.astype(np.int64), self._typecode), self._m, self._n)

    def __pos__(self) -> "ndarray":
        return self._copy()

    def __abs__(self) -> "ndarray":
        if self._typecode in (UINT8, UINT16):
            return self._copy()
        if self._typecode == FLOAT:
            return ndarray._new(np.abs(self._data), self._m, self._n)
        return ndarray._new(_typed(np.abs(self._data.astype(np.int64)), self._typecode), self._m, self._n)

    def __invert__(self) -> "ndarray":
        if self._typecode == FLOAT:
            raise ValueError("operation is not supported for given type")
        return ndarray._new(~self._data, self._m, self._n)
