"""ulab 0.26's module functions (``linalg.c``, ``numerical.c``, ``vectorise.c``, ``poly.c``, ``fft.c``).

Arithmetic is float32 like the K210 build, in the firmware's order of operations where the order
decides the result (cumulative ``linspace`` steps, Gauss-Jordan without pivoting in ``inv``/``det``
/``polyfit``, the Jacobi sweeps of ``eig``, the Numerical-Recipes FFT with its twiddle recurrence),
so results agree with the board to float32 rounding (the board's compiler may fuse multiply-adds).
The firmware's quirks a script can observe are kept and listed where they live: ``roll`` rotates to
the left, ``argsort(axis=None)`` flattens its *input*, ``dot`` of non-square matrices writes rows
at the wrong stride, int8/int16 are ordered as unsigned by ``min``/``max``/``sort``/``argsort``.
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable

import numpy as np

from .. import notices
from ._ndarray import DTYPES, FLOAT, INT8, INT16, UINT8, UINT16, dtype_of, ndarray, read_as, store_value

F32 = np.float32
EPSILON = F32(1.2e-7)  # linalg.h, single precision
JACOBI_MAX = 20


def _need_ndarray(value: Any, message: str, error: type[Exception] = TypeError) -> ndarray:
    if not isinstance(value, ndarray):
        raise error(message)
    return value


def _floats(arr: ndarray) -> np.ndarray:
    return arr._data.astype(np.float32)


def _axis(axis: Any, allowed: tuple[Any, ...], message: str) -> Any:
    if axis is None:
        return None
    value = int(axis)
    if value not in allowed:
        raise ValueError(message)
    return value


def _sequence(value: Any) -> bool:
    return isinstance(value, (tuple, list, range))


# ------------------------------------------------------------------------------ linalg
def size(array: Any, *, axis: Any = None) -> int:
    arr = _need_ndarray(array, "size is defined for ndarrays only")
    if axis is None:
        return len(arr._data)
    if not isinstance(axis, int):
        raise TypeError("wrong argument type")
    ax = axis & 0xFF
    if ax == 0:
        return arr._n if arr._m == 1 else arr._m
    if ax == 1 and arr._m != 1:
        return arr._n
    raise ValueError("tuple index out of range")


def invert_matrix(data: np.ndarray) -> np.ndarray | None:
    """``linalg_invert_matrix``: Gauss-Jordan without pivoting on an (N, N) float32 array, or None."""
    a = data.astype(np.float32).copy()
    size_n = a.shape[0]
    unit = np.eye(size_n, dtype=np.float32)
    for m in range(size_n):
        pivot = a[m, m]
        if abs(pivot) < EPSILON:
            return None
        others = np.array([n for n in range(size_n) if n != m], dtype=np.int64)
        if len(others):
            elem = (a[others, m] / pivot).astype(np.float32)
            a[others] = a[others] - elem[:, None] * a[m][None, :]
            unit[others] = unit[others] - elem[:, None] * unit[m][None, :]
    diagonal = np.diag(a).copy()
    return (unit / diagonal[:, None]).astype(np.float32)


def inv(m: Any) -> ndarray:
    arr = _need_ndarray(m, "only ndarrays can be inverted")
    if arr._m != arr._n:
        raise ValueError("only square matrices can be inverted")
    inverted = invert_matrix(_floats(arr).reshape(arr._m, arr._n))
    if inverted is None:
        raise ValueError("input matrix is singular")
    return ndarray._new(inverted.reshape(-1), arr._m, arr._n)


def dot(m1: Any, m2: Any) -> ndarray:
    a = _need_ndarray(m1, "dot is defined for ndarrays only")
    b = _need_ndarray(m2, "dot is defined for ndarrays only")
    if a._n != b._m:
        raise ValueError("matrix dimensions do not match")
    product = (_floats(a).reshape(a._m, a._n) @ _floats(b).reshape(b._m, b._n)).astype(np.float32)
    out = np.zeros(a._m * b._n, dtype=np.float32)
    for i in range(a._m):  # the firmware stores row i at i * m1.m (right only when m1.m == m2.n)
        for j in range(b._n):
            at = i * a._m + j
            if at < len(out):
                out[at] = product[i, j]
    return ndarray._new(out, a._m, b._n)


def _shape(value: Any) -> tuple[int, int]:
    if isinstance(value, int) and not isinstance(value, bool):
        return 1, value
    if isinstance(value, tuple):
        if len(value) != 2:
            raise TypeError("input argument must be an integer or a 2-tuple")
        return int(value[0]), int(value[1])
    raise TypeError("input argument must be an integer or a 2-tuple")


def zeros(shape: Any, *, dtype: int = FLOAT) -> ndarray:
    dtype_of(dtype)
    m, n = _shape(shape)
    return ndarray._zeros(m, n, int(dtype))


def ones(shape: Any, *, dtype: int = FLOAT) -> ndarray:
    out = zeros(shape, dtype=dtype)
    out._data[:] = 1
    return out


def eye(N: int, *, M: Any = None, k: int = 0, dtype: int = FLOAT) -> ndarray:  # noqa: N803
    dtype_of(dtype)
    n = int(N)
    m = n if M is None else int(M)
    diag = int(k)
    out = ndarray._zeros(m, n, int(dtype))
    if 0 <= diag < n:
        for i, col in enumerate(range(diag, n)):
            if i < m:
                out._data[i * n + col] = 1
    elif diag < 0 and -diag < m:
        for i, row in enumerate(range(-diag, m)):
            if i < n:
                out._data[row * n + i] = 1
    return out


def det(m: Any) -> float:
    arr = _need_ndarray(m, "function defined for ndarrays only")
    if arr._m != arr._n:
        raise ValueError("input must be square matrix")
    size_n = arr._n
    a = _floats(arr).reshape(size_n, size_n).copy()
    for row in range(size_n - 1):
        pivot = a[row, row]
        if abs(pivot) < EPSILON:
            return 0.0
        others = np.array([n for n in range(size_n) if n != row], dtype=np.int64)
        c = (a[others, row] / pivot).astype(np.float32)
        a[others] = a[others] - c[:, None] * a[row][None, :]
    result = F32(1.0)
    for i in range(size_n):
        result = F32(result * a[i, i])
    return float(result)


def eig(m: Any) -> tuple[ndarray, ndarray]:
    arr = _need_ndarray(m, "function defined for ndarrays only")
    if arr._m != arr._n:
        raise ValueError("input must be square matrix")
    size_n = arr._n
    a = [[F32(v) for v in row] for row in _floats(arr).reshape(size_n, size_n)]
    for i in range(size_n):
        for j in range(i + 1, size_n):
            if EPSILON < abs(F32(a[i][j] - a[j][i])):
                raise ValueError("input matrix is asymmetric")
    vectors = [[F32(1.0 if i == j else 0.0) for j in range(size_n)] for i in range(size_n)]
    iterations = JACOBI_MAX * size_n * size_n
    one = F32(1.0)
    while True:
        iterations -= 1
        big_m = big_n = 0
        largest = F32(0.0)
        for i in range(size_n - 1):
            for j in range(i + 1, size_n):
                w = abs(a[i][j])
                if largest < w and EPSILON < w:
                    big_m, big_n, largest = i, j, w
        if big_m + big_n == 0:
            break
        p, q = big_m, big_n
        w = F32((a[q][q] - a[p][p]) / F32(2.0 * float(a[p][q])))
        if w > 0:
            t = F32(F32(math.sqrt(float(w * w + one))) - w)
        else:
            t = F32(-1.0 * float(F32(math.sqrt(float(w * w + one))) + w))
        root = F32(math.sqrt(float(t * t + one)))
        s, c = F32(t / root), F32(one / root)
        tau = F32((one - c) / s)
        a[p][p] = F32(a[p][p] - t * a[p][q])
        a[q][q] = F32(a[q][q] + t * a[p][q])
        a[p][q] = a[q][p] = F32(0.0)
        for k in range(size_n):
            if k in (p, q):
                continue
            a_pk, a_qk = a[p][k], a[q][k]
            a[p][k] = F32(a[p][k] - s * (a_qk + tau * a_pk))
            a[q][k] = F32(a[q][k] + s * (a_pk - tau * a_qk))
            a[k][p], a[k][q] = a[p][k], a[q][k]
        for row in range(size_n):
            vm, vn = vectors[row][p], vectors[row][q]
            vectors[row][p] = F32(c * vm - s * vn)
            vectors[row][q] = F32(s * vm + c * vn)
        if iterations <= 0:
            break
    if iterations == 0:
        raise ValueError("iterations did not converge")
    values = np.array([a[i][i] for i in range(size_n)], dtype=np.float32)
    return (ndarray._new(values, 1, size_n),
            ndarray._new(np.array(vectors, dtype=np.float32).reshape(-1), size_n, size_n))


# ------------------------------------------------------------------------------ numerical
def linspace(start: Any, stop: Any, num: int = 50, *, endpoint: Any = True, retstep: Any = False,
             dtype: int = FLOAT) -> Any:
    length = int(num) & 0xFFFF
    if length < 2:
        raise ValueError("number of points must be at least 2")
    value = F32(float(start))
    end = F32(float(stop))
    step = F32((end - value) / F32(length - 1 if endpoint is True else length))
    typecode = int(dtype)
    dtype_of(typecode)
    values = np.empty(length, dtype=np.float32)
    for i in range(length):
        values[i] = value
        value = F32(value + step)
    if typecode == FLOAT:
        data = values
    else:
        bits = DTYPES[typecode].itemsize * 8
        whole = np.trunc(values).astype(np.int64)
        if typecode in (UINT8, UINT16):  # RISC-V fcvt.wu.s saturates negative values at 0
            whole = np.maximum(whole, 0)
        data = (whole & ((1 << bits) - 1)).astype(np.uint64).astype(DTYPES[typecode])
    out = ndarray._new(data, 1, length)
    if retstep is False:
        return out
    return (out, float(step))


def _sum_mean_std(values: np.ndarray, kind: str) -> float:
    total, squares = F32(0.0), F32(0.0)
    for v in values.astype(np.float32):
        total = F32(total + v)
        if kind == "std":
            squares = F32(squares + v * v)
    count = len(values)
    with np.errstate(all="ignore"):
        if kind == "sum":
            return float(total)
        mean = F32(total / F32(count)) if count else F32("nan")
        if kind == "mean":
            return float(mean)
        return float(F32(np.sqrt(F32(squares / F32(count)) - mean * mean))) if count else float("nan")


def _statistic(array: Any, axis: Any, kind: str) -> Any:
    axis = _axis(axis, (0, 1), "axis must be None, 0, or 1")
    if _sequence(array):
        return _sum_mean_std(np.array([float(v) for v in array], dtype=np.float64), kind)
    arr = _need_ndarray(array, "input must be tuple, list, range, or ndarray")
    matrix = _floats(arr).reshape(arr._m, arr._n)
    if axis is None or arr._m == 1 or arr._n == 1:
        if len(arr._data) == 0:
            raise ValueError("data length is 0!")
        return _sum_mean_std(arr._data, kind)
    lines = matrix.T if axis == 0 else matrix
    results = []
    for line in lines:
        if len(line) == 0:
            raise ValueError("data length is 0!")
        results.append(_sum_mean_std(line, kind))
    shape = (1, arr._n) if axis == 0 else (arr._m, 1)
    return ndarray._new(np.array(results, dtype=np.float32), *shape)


def sum(array: Any, *, axis: Any = None) -> Any:  # noqa: A001 - the firmware's name
    return _statistic(array, axis, "sum")


def mean(array: Any, *, axis: Any = None) -> Any:
    return _statistic(array, axis, "mean")


def std(array: Any, *, axis: Any = None) -> Any:
    return _statistic(array, axis, "std")


def _order_key(arr: ndarray) -> np.ndarray:
    """The values the firmware compares: int8 as uint8 (sorts) / int8 (min-max), int16 as uint16."""
    return arr._data.view(np.uint16) if arr._typecode == INT16 else arr._data


def _best(arr: ndarray, positions: np.ndarray, biggest: bool) -> int:
    """``ARG_MIN_LOOP``: the first position with the strictly best value (int16 compared as uint16)."""
    keys = _order_key(arr)[positions]
    return int(positions[int(np.argmax(keys) if biggest else np.argmin(keys))])


def _extreme(array: Any, axis: Any, biggest: bool, want_index: bool) -> Any:
    axis = _axis(axis, (0, 1), "axis must be None, 0, or 1")
    if _sequence(array):
        best, best_index = None, 0
        for index, item in enumerate(array):
            if best is None or (item > best if biggest else item < best):
                best, best_index = item, index
        return best_index if want_index else best
    if not isinstance(array, ndarray):
        raise TypeError("input must be tuple, list, range, or ndarray")
    arr = array
    if axis is None or arr._m == 1 or arr._n == 1:
        best = _best(arr, np.arange(len(arr._data)), biggest)
        return best if want_index else arr._item(best)
    m, n = arr._m, arr._n
    count = n if axis == 0 else m
    out = np.zeros(count, dtype=np.uint16 if want_index else arr._data.dtype)
    for i in range(count):
        positions = np.arange(i, m * n, n) if axis == 0 else np.arange(i * n, (i + 1) * n)
        best = _best(arr, positions, biggest)
        if want_index:
            out[i] = (best // n) if axis == 0 else (best - i * n)
        else:
            out[i] = arr._data[best]
    return ndarray._new(out, 1, n) if axis == 0 else ndarray._new(out, m, 1)


def min(array: Any, *, axis: Any = None) -> Any:  # noqa: A001
    return _extreme(array, axis, biggest=False, want_index=False)


def max(array: Any, *, axis: Any = None) -> Any:  # noqa: A001
    return _extreme(array, axis, biggest=True, want_index=False)


def argmin(array: Any, *, axis: Any = None) -> Any:
    return _extreme(array, axis, biggest=False, want_index=True)


def argmax(array: Any, *, axis: Any = None) -> Any:
    return _extreme(array, axis, biggest=True, want_index=True)


def roll(array: Any, shift: int, *, axis: Any = None) -> None:
    axis = _axis(axis, (0, 1), "axis must be None, 0, or 1")
    arr = _need_ndarray(array, "roll argument must be an ndarray")
    amount = ((int(shift) + 0x8000) & 0xFFFF) - 0x8000  # int16_t
    if axis is None:
        lines = [arr._data]
    elif axis == 1:
        lines = [arr._data[i * arr._n:(i + 1) * arr._n] for i in range(arr._m)]
    else:
        lines = [arr._data[j::arr._n] for j in range(arr._n)]
    for line in lines:
        length = len(line)
        if length == 0:
            raise ZeroDivisionError("roll of an empty array (the board divides by its length)")
        left = abs(amount) % length
        if amount < 0:
            left = length - left
        line[:] = np.concatenate([line[left:], line[:left]])  # the firmware rotates to the left
    return None


def flip(array: Any, *, axis: Any = None) -> ndarray:
    arr = _need_ndarray(array, "flip argument must be an ndarray")
    axis = _axis(axis, (0, 1), "axis must be None, 0, or 1")
    matrix = arr._matrix()
    if axis is None:
        data = arr._data[::-1]
    elif axis == 1:
        data = matrix[:, ::-1].reshape(-1)
    else:
        data = matrix[::-1, :].reshape(-1)
    return ndarray._new(data.copy(), arr._m, arr._n)


def diff(array: Any, *, n: int = 1, axis: int = -1) -> ndarray:
    arr = _need_ndarray(array, "diff argument must be an ndarray")
    if axis not in (-1, 0, 1):
        raise ValueError("axis must be -1, 0, or 1")
    order = int(n)
    if order < 0 or order > 9:
        raise ValueError("n must be between 0, and 9")
    stencil = [1]
    for i in range(1, order + 1):
        stencil.append(int(-stencil[i - 1] * (order - i + 1) / i))  # int8 arithmetic, C division
    matrix = arr._matrix()
    horizontal = axis in (-1, 1)
    if horizontal and order >= arr._n:
        return ndarray._zeros(arr._m, 0, arr._typecode)
    if not horizontal and order >= arr._m:
        return ndarray._zeros(0, arr._n, arr._typecode)
    rows, cols = (arr._m, arr._n - order) if horizontal else (arr._m - order, arr._n)
    wide = matrix.astype(np.float32 if arr._typecode == FLOAT else np.int64)
    out = np.zeros((rows, cols), dtype=wide.dtype)
    for k, weight in enumerate(stencil):
        part = wide[:, k:k + cols] if horizontal else wide[k:k + rows, :]
        out = out - (F32(weight) * part if arr._typecode == FLOAT else weight * part)
    from ._ndarray import _typed

    return ndarray._new(_typed(out.reshape(-1), arr._typecode), rows, cols)


def _sort_lines(arr: ndarray, axis: Any) -> list[np.ndarray]:
    """Index arrays of the lines ``sort``/``argsort`` work on, with the firmware's loop bounds."""
    if axis is None:
        return [np.arange(len(arr._data))]
    value = int(axis)
    if value in (-1, 1):
        return [np.arange(i * arr._n, (i + 1) * arr._n) for i in range(arr._m)]
    if value == 0:  # the firmware walks m start columns: only min(m, n) exist
        return [np.arange(j, arr._m * arr._n, arr._n) for j in range(builtins.min(arr._m, arr._n))]
    raise ValueError("axis must be -1, 0, None, or 1")


def _sort_key(arr: ndarray) -> np.ndarray:
    if arr._typecode == UINT16:
        notices.notice_once("ulab-sort-uint16", "ulab.sort/argsort of a uint16 array: on the board ulab 0.26 sorts "
                                                "it as float data past the end of its buffer; maixemu sorts the numbers")
        return arr._data
    if arr._typecode == INT8:
        return arr._data.view(np.uint8)
    return _order_key(arr)


def sort_into(arr: ndarray, axis: Any) -> None:
    if axis is None:
        arr._m, arr._n = 1, len(arr._data)
    lines = _sort_lines(arr, axis)
    key = _sort_key(arr)
    for line in lines:
        order = np.argsort(key[line], kind="stable")
        arr._data[line] = arr._data[line][order]


def sort(array: Any, *, axis: Any = -1) -> ndarray:
    arr = _need_ndarray(array, "sort argument must be an ndarray")
    out = arr._copy()
    sort_into(out, axis)
    return out


def _heap_argsort(keys: np.ndarray) -> list[int]:
    """``HEAP_ARGSORT``: the firmware's heap sort of indices (its order among equal keys included)."""
    keys_list = keys.tolist()
    count = len(keys_list)
    index = list(range(count))
    q, k = count, count >> 1
    while True:
        if k > 0:
            k -= 1
            itmp = index[k]
        else:
            q -= 1
            if q <= 0:
                break
            itmp = index[q]
            index[q] = index[0]
        tmp = keys_list[itmp]
        p, c = k, 2 * k + 1
        while c < q:
            if c + 1 < q and keys_list[index[c + 1]] > keys_list[index[c]]:
                c += 1
            if keys_list[index[c]] > tmp:
                index[p] = index[c]
                p, c = c, 2 * c + 1
            else:
                break
        index[p] = itmp
    return index


def argsort(array: Any, *, axis: Any = -1) -> ndarray:
    arr = _need_ndarray(array, "argsort argument must be an ndarray")
    if axis is None:  # the firmware flattens its input in place
        arr._m, arr._n = 1, len(arr._data)
    lines = _sort_lines(arr, axis)
    out = np.zeros(len(arr._data), dtype=np.uint16)
    key = _sort_key(arr)
    for line in lines:
        out[line] = np.array(_heap_argsort(key[line]), dtype=np.uint16)
    return ndarray._new(out, arr._m, arr._n)


# ------------------------------------------------------------------------------ vectorise
def _vectorised(name: str, function: Callable[[np.ndarray], np.ndarray]) -> Callable[[Any], Any]:
    def apply(x: Any) -> Any:
        with np.errstate(all="ignore"):
            if isinstance(x, (bool, int, float)):
                return float(function(np.array([x], dtype=np.float32))[0])
            if isinstance(x, ndarray):
                return ndarray._new(function(x._data.astype(np.float32)).astype(np.float32), x._m, x._n)
            if _sequence(x):
                values = np.array([float(v) for v in x], dtype=np.float32)
                return ndarray._new(function(values).astype(np.float32), 1, len(values))
        return None

    apply.__name__ = apply.__qualname__ = name
    apply.__doc__ = f"``{name}`` of a number (a float), an ndarray or a list/tuple/range (float ndarrays)."
    return apply


def _per_element(function: Callable[[float], float]) -> Callable[[np.ndarray], np.ndarray]:
    def run(values: np.ndarray) -> np.ndarray:
        out = np.empty(len(values), dtype=np.float32)
        for i, v in enumerate(values.tolist()):
            try:
                out[i] = function(v)
            except (ValueError, OverflowError):
                out[i] = math.inf if v == 0 or v > 0 else math.nan
        return out

    return run


VECTORISED: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "acos": np.arccos, "acosh": np.arccosh, "asin": np.arcsin, "asinh": np.arcsinh, "atan": np.arctan,
    "atanh": np.arctanh, "ceil": np.ceil, "cos": np.cos, "erf": _per_element(math.erf),
    "erfc": _per_element(math.erfc), "exp": np.exp, "expm1": np.expm1, "floor": np.floor,
    "gamma": _per_element(math.gamma), "lgamma": _per_element(math.lgamma), "log": np.log, "log10": np.log10,
    "log2": np.log2, "sin": np.sin, "sinh": np.sinh, "sqrt": np.sqrt, "tan": np.tan, "tanh": np.tanh,
}


# ------------------------------------------------------------------------------ poly
def _values(seq: Any) -> list[float]:
    if isinstance(seq, ndarray):
        if seq._m > 1:
            raise TypeError("can't convert ndarray to float")
        return [float(v) for v in seq._data.astype(np.float32)]
    return [float(v) for v in seq]


def polyval(p: Any, x: Any) -> ndarray:
    coefficients = [F32(v) for v in _values(p)]
    if isinstance(x, ndarray):
        shape = (x._m, x._n)
    else:
        shape = (1, len(x))
    out = np.zeros(shape[0] * shape[1], dtype=np.float32)
    for i, value in enumerate(_values(x)):
        xv, y = F32(value), coefficients[0] if coefficients else F32(0.0)
        for c in coefficients[1:]:
            y = F32(F32(y * xv) + c)
        if i < len(out):
            out[i] = y
    return ndarray._new(out, *shape)


def _nditerable(value: Any) -> bool:
    return isinstance(value, (ndarray, tuple, list, range))


def polyfit(*args: Any) -> ndarray:
    if len(args) not in (2, 3):
        raise ValueError("number of arguments must be 2, or 3")
    if not _nditerable(args[0]):
        raise ValueError("input data must be an iterable")
    count = len(args[0]._data) if isinstance(args[0], ndarray) else len(args[0])
    count &= 0xFFFF
    if len(args) == 2:
        degree = int(args[1]) & 0xFF
        x = np.arange(count, dtype=np.float32)
        y_values = _values(args[0])
    else:
        degree = int(args[2]) & 0xFF
        x = np.array(_values(args[0])[:count], dtype=np.float32)
        y_values = _values(args[1])  # the firmware takes both lengths from x
    if count < degree:
        raise ValueError("more degrees of freedom than data points")
    if count > 255:
        notices.notice_once("ulab-polyfit-255", "ulab.polyfit with more than 255 points: the board's uint8 loop "
                                                "counter never ends (the board hangs); maixemu fits all points")
    y = np.zeros(count, dtype=np.float32)
    y[: builtins.min(count, len(y_values))] = y_values[:count]
    xt = np.ones((degree + 1, count), dtype=np.float32)
    for j in range(1, degree + 1):
        xt[j] = xt[j - 1] * x
    prod = np.zeros((degree + 1, degree + 1), dtype=np.float32)
    for i in range(degree + 1):
        for j in range(degree + 1):
            total = F32(0.0)
            for k in range(count):
                total = F32(total + xt[j, k] * xt[i, k])
            prod[j, i] = total
    inverse = invert_matrix(prod)
    if inverse is None:
        raise ValueError("could not invert Vandermonde matrix")
    xty = np.zeros(degree + 1, dtype=np.float32)
    for i in range(degree + 1):
        total = F32(0.0)
        for j in range(count):
            total = F32(total + xt[i, j] * y[j])
        xty[i] = total
    beta = np.zeros(degree + 1, dtype=np.float32)
    for i in range(degree + 1):
        total = F32(0.0)
        for j in range(degree + 1):
            total = F32(total + inverse[i, j] * xty[j])
        beta[i] = total
    return ndarray._new(beta[::-1].copy(), degree + 1, 1)


# ------------------------------------------------------------------------------ fft
def fft_kernel(real: np.ndarray, imag: np.ndarray, isign: int) -> None:
    """Numerical Recipes' ``four1`` on separate float32 real/imaginary arrays, in place, as ``fft.c``."""
    n = len(real)
    j = 0
    for i in range(n):
        if j > i:
            real[i], real[j] = real[j], real[i]
            imag[i], imag[j] = imag[j], imag[i]
        m = n >> 1
        while j >= m and m > 0:
            j -= m
            m >>= 1
        j += m
    mmax = 1
    while n > mmax:
        istep = mmax << 1
        theta = F32(-2.0 * isign * float(F32(math.pi)) / istep)
        wtemp = F32(math.sin(float(F32(0.5 * float(theta)))))
        wpr = F32(-2.0 * float(wtemp) * float(wtemp))
        wpi = F32(math.sin(float(theta)))
        wr, wi = F32(1.0), F32(0.0)
        for m in range(mmax):
            ii = np.arange(m, n, istep)
            jj = ii + mmax
            tempr = (wr * real[jj] - wi * imag[jj]).astype(np.float32)
            tempi = (wr * imag[jj] + wi * real[jj]).astype(np.float32)
            real[jj] = real[ii] - tempr
            imag[jj] = imag[ii] - tempi
            real[ii] += tempr
            imag[ii] += tempi
            wtemp = wr
            wr = F32(F32(F32(wr * wpr) - F32(wi * wpi)) + wr)
            wi = F32(F32(F32(wi * wpr) + F32(wtemp * wpi)) + wi)
        mmax = istep


def _fft(args: tuple[Any, ...], kind: str) -> Any:
    if not 1 <= len(args) <= 2:
        raise TypeError(f"function expected at most 2 arguments, got {len(args)}")
    re = args[0]
    if not isinstance(re, ndarray) or (len(args) == 2 and not isinstance(args[1], ndarray)):
        raise NotImplementedError("FFT is defined for ndarrays only")
    length = len(re._data) & 0xFFFF
    if length & (length - 1):
        raise ValueError("input array length must be power of 2")
    real = _floats(re)[:length].copy()
    imag = np.zeros(length, dtype=np.float32)
    if len(args) == 2:
        if len(args[1]._data) != len(re._data):
            raise ValueError("real and imaginary parts must be of equal length")
        imag = _floats(args[1])[:length].copy()
    if kind == "ifft":
        fft_kernel(real, imag, -1)
        real, imag = (real / F32(length)).astype(np.float32), (imag / F32(length)).astype(np.float32)
    else:
        fft_kernel(real, imag, 1)
        if kind == "spectrum":
            return ndarray._new(np.sqrt(real * real + imag * imag).astype(np.float32), 1, length)
    return (ndarray._new(real, 1, length), ndarray._new(imag, 1, length))


def fft(*args: Any) -> tuple[ndarray, ndarray]:
    return _fft(args, "fft")


def ifft(*args: Any) -> tuple[ndarray, ndarray]:
    return _fft(args, "ifft")


def spectrum(*args: Any) -> ndarray:
    return _fft(args, "spectrum")


__all__ = ["UINT8", "INT8", "UINT16", "INT16", "FLOAT", "read_as", "store_value"]
