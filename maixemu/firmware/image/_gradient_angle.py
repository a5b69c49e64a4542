"""``(int) fabsf(atan2f(y, x) * 180.0f / M_PI)`` of integer gradients, as the firmware's C has it.

``edge.c`` (Canny's direction, binned at 22/67/112/160 degrees) and ``hog.c`` (20-degree bins)
call libm's float ``atan2f`` on Sobel or central differences of 8-bit pixels, so ``|y|, |x| <=
4 * 255``. The truncation to whole degrees makes the last bit of ``atan2f`` matter wherever the
angle is a hair below a whole degree: numpy's float32 ``arctan2`` is no libm call (on AVX-512 it
runs SVML's, a few ulp off), and for ``(y, x) = (198, -544)`` (159.99998 degrees) it gives 160
where ``atan2f`` gives 159, which moves a Canny pixel from the 135 bin to 0.

So the degrees of every pair in range come from one table, built once: numpy's float32 answer
wherever it is more than ``_NEAR`` degrees from a whole degree (no atan2f within a few ulp can
truncate differently there), libm's ``atan2f`` (``_fmath.atan2f``) for the few thousand pairs
near one. ``atan2f`` is odd in ``y``, so the table holds ``y >= 0``.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _fmath

#: the largest |gradient| the table covers: a 3x3 Sobel of 8-bit pixels
LIMIT = 4 * 255
#: degrees from a whole degree within which numpy's float32 arctan2 is not trusted (its error is
#: a few ulp of float32: 3 ulp, 3e-5 degrees, measured on AVX-512)
_NEAR = 2e-4
_F = np.float32


@lru_cache(maxsize=1)
def degree_table() -> np.ndarray:
    """(LIMIT + 1, 2 * LIMIT + 1) uint8: the truncated degrees of ``(y, x - LIMIT)``."""
    y, x = np.mgrid[0:LIMIT + 1, -LIMIT:LIMIT + 1]
    deg = np.abs(np.arctan2(y.astype(_F), x.astype(_F)) * _F(180.0) / _F(np.pi))
    table = deg.astype(np.uint8)
    near = np.abs(deg - np.round(deg)) < _NEAR
    for yy, xx in zip(y[near].tolist(), x[near].tolist()):
        table[yy, xx + LIMIT] = int(abs(_fmath.atan2f(yy, xx) * _F(180.0) / _F(np.pi)))
    table.setflags(write=False)
    return table


def truncated_degrees(y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``(int) fabsf(atan2f(y, x) * 180.0f / M_PI)`` of integer arrays (|values| <= ``LIMIT``),
    as int64."""
    y = np.asarray(y, np.int64)
    x = np.asarray(x, np.int64)
    if y.size and max(int(np.abs(y).max()), int(np.abs(x).max())) > LIMIT:
        raise ValueError(f"gradients beyond +-{LIMIT} have no table entry")
    return degree_table()[np.abs(y), x + LIMIT].astype(np.int64)
