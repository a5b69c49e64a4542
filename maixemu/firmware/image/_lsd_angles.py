"""LSD's ``ll_angle`` compiled: the level-line angle, gradient norm and seed order of every pixel
in one numba pass (``_lsd._LSD`` asks it first; its array form serves while it is not compiled).

The float32 steps are the array form's, pixel by pixel: the 2x2 differences, the norm's square
root of the quarter sum (IEEE, as ``np.sqrt``), ``fast_atan2f`` (``_quadkernels``' helper, the
AprilTag kernels' too), the degree's truncation and int16 store; the pseudo-ordering is the array
form's stable sort of the transposed raster by descending bin, done here as a counting sort
(the same order: a stable sort by one small key). ``tests/firmware/test_image_lsd.py`` compares
the kernel, its Python twin and the array form.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._quadkernels import fast_atan2f

#: the bins of the pseudo-ordering (``n_bins`` of lsd.c)
N_BINS = 1024


@kernel
def _ll_angle(gray, rho, deg, notdef, border, angles, modgrad, seeds_x, seeds_y):
    """``angles``/``modgrad`` (h, w) int64 and the seeds (``(h-1)*(w-1)`` each) of the uint8
    ``gray``; ``notdef``/``border`` are the int16 values stored where the angle is undefined and
    on the last row and column."""
    f32 = np.float32
    h, w = gray.shape
    zero = f32(0.0)
    four = f32(4.0)


    for x in range(w):
        angles[h - 1, x] = border
        modgrad[h - 1, x] = 0
    for y in range(h):
        angles[y, w - 1] = border
        modgrad[y, w - 1] = 0
    max_grad = zero
    for y in range(h - 1):
        for x in range(w - 1):
            a = np.int64(gray[y, x])
            b = np.int64(gray[y, x + 1])
            c = np.int64(gray[y + 1, x])
            d = np.int64(gray[y + 1, x + 1])
            com1 = f32(d - a)
            com2 = f32(b - c)
            gx = com1 + com2
            gy = com1 - com2
            norm = np.sqrt((gx * gx + gy * gy) / four)
            modgrad[y, x] = np.int64(norm)
            if norm <= rho:
                angles[y, x] = notdef
            else:
                angles[y, x] = np.int64(fast_atan2f(gx, -gy) * deg)
                if norm > max_grad:
                    max_grad = norm
    # pseudo-ordering: bins of the (int) norm, highest first, x-major inside a bin
    n_seeds = (h - 1) * (w - 1)
    keys = np.empty(n_seeds, np.int64)
    counts = np.zeros(N_BINS + 1, np.int64)
    fbins = f32(N_BINS)
    i = 0
    for x in range(w - 1):
        for y in range(h - 1):
            idx = f32(modgrad[y, x]) * fbins / max_grad if max_grad != zero else zero
            if idx != idx or idx == np.inf:
                bn = 0
            else:
                bn = min(np.int64(idx), N_BINS - 1)
            k = N_BINS - 1 - bn
            keys[i] = k
            counts[k + 1] += 1
            i += 1
    for k in range(N_BINS):
        counts[k + 1] += counts[k]
    i = 0
    for x in range(w - 1):
        for y in range(h - 1):
            k = keys[i]
            seeds_x[counts[k]] = x
            seeds_y[counts[k]] = y
            counts[k] += 1
            i += 1
