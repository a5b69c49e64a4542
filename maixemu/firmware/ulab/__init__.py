"""``ulab``: the numpy-like module of MaixPy-v1 and kendryte/canmv full builds — ulab 0.26, a flat API.

Both firmwares pin micropython-ulab 0.262/0.263 (late 2019): everything is at the top level,
``import ulab as np; a = np.array([1, 2, 3], dtype=np.uint8)``. There is no ``ulab.numpy``,
``ulab.linalg``, ``ulab.vector`` or ``ndim`` — those came with ulab 0.5/2.x, which no K210 MaixPy
or CanMV build has — so ``from ulab import numpy as np`` fails here as on the board
(``ImportError: cannot import name numpy``, plus a line saying what works).

Names (``ulab.c``): ``array`` (the ``ndarray`` type: ``shape()``, ``rawsize()``, ``flatten()``,
``asbytearray()``, ``transpose()``, ``reshape()``, ``sort()``); linalg ``size``, ``inv``, ``dot``,
``zeros``, ``ones``, ``eye``, ``det``, ``eig``; 23 element-wise functions (``sin`` ... ``tanh``);
numerical ``linspace``, ``sum``, ``mean``, ``std``, ``min``, ``max``, ``argmin``, ``argmax``,
``roll``, ``flip``, ``diff``, ``sort``, ``argsort``; ``polyval``, ``polyfit``; ``fft``, ``ifft``,
``spectrum``; the dtypes ``uint8``, ``int8``, ``uint16``, ``int16``, ``float`` (float32). How each
behaves, including the firmware's quirks, is documented in :mod:`._ndarray` and :mod:`._functions`.
"""

from __future__ import annotations

from typing import Any

from . import _functions as _f
from ._ndarray import FLOAT, INT8, INT16, UINT8, UINT16, ndarray

__version__ = 0.262  # MaixPy-v1 (kendryte/canmv: 0.263, the same code)

array = ndarray
uint8, int8, uint16, int16 = UINT8, INT8, UINT16, INT16
float = FLOAT  # noqa: A001 - the firmware's name

size, inv, dot, zeros, ones, eye, det, eig = _f.size, _f.inv, _f.dot, _f.zeros, _f.ones, _f.eye, _f.det, _f.eig
linspace, sum, mean, std = _f.linspace, _f.sum, _f.mean, _f.std  # noqa: A001
min, max, argmin, argmax = _f.min, _f.max, _f.argmin, _f.argmax  # noqa: A001
roll, flip, diff, sort, argsort = _f.roll, _f.flip, _f.diff, _f.sort, _f.argsort
polyval, polyfit = _f.polyval, _f.polyfit
fft, ifft, spectrum = _f.fft, _f.ifft, _f.spectrum

acos, acosh, asin, asinh, atan, atanh, ceil, cos, erf, erfc, exp, expm1, floor, gamma, lgamma, log, log10, \
    log2, sin, sinh, sqrt, tan, tanh = (_f._vectorised(name, fn) for name, fn in _f.VECTORISED.items())

#: Submodules of later ulab versions that scripts written for other boards import.
_LATER_ULAB = frozenset({"numpy", "scipy", "linalg", "vector", "numerical", "poly", "filter", "compare",
                         "approx", "user", "utils"})

__all__ = ["array", "uint8", "int8", "uint16", "int16", "float", "size", "inv", "dot", "zeros", "ones", "eye",
           "det", "eig", "linspace", "sum", "mean", "std", "min", "max", "argmin", "argmax", "roll", "flip", "diff",
           "sort", "argsort", "polyval", "polyfit", "fft", "ifft", "spectrum", *_f.VECTORISED]


def __getattr__(name: str) -> Any:
    if name in _LATER_ULAB:
        raise ImportError(f"cannot import name {name} (this firmware's ulab is 0.26 with a flat API: "
                          f"use 'import ulab as np' and np.array, np.sin, ...; 'from ulab import {name}' "
                          "needs ulab 2.x, which K210 MaixPy/CanMV builds do not have)")
    raise AttributeError(f"'module' object has no attribute '{name}'")
