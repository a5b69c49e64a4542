"""Compiled kernels of the window filters (``filter.c``) over one uint8 channel.

Each kernel reads a channel padded by ``k`` pixels on every side with its edge pixels repeated
(``np.pad(..., mode="edge")``: the C's ``IM_MIN(IM_MAX(y + j, 0), h - 1)`` reads), so pixel (y, x)'s
window is ``padded[y:y + 2k + 1, x:x + 2k + 1]``. One specialisation each (uint8 in, fixed
output types). Without numba they run as Python; ``_filters`` then takes its numpy paths, and the
tests compare the two.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel


@kernel
def morph_channel(padded, krn, k, mul, add, hi, out):
    """``imlib_morph`` on one channel: ``acc = sum(krn[j*n + i] * padded[y + j, x + i])`` in exact
    integers, then ``clamp((int)(acc * mul) + add, 0, hi)`` with the float32 product truncated as the
    K210 converts (NaN -> INT32_MAX, saturating). A row of sums at a time, one tap over the whole
    row (row slices: plain indices, which vectorise)."""
    h, w = out.shape
    n = 2 * k + 1
    acc = np.zeros(w, np.int64)
    for y in range(h):
        acc[:] = 0
        for j in range(n):
            for i in range(n):
                wt = krn[j * n + i]
                if wt != 0:
                    src = padded[y + j, i:i + w]
                    for x in range(w):
                        acc[x] += wt * src[x]
        dst = out[y]
        for x in range(w):
            v = np.float32(acc[x]) * mul
            if v != v or v >= 2147483648.0:
                q = 2147483647
            elif v <= -2147483649.0:
                q = -2147483648
            else:
                q = int(v)
            q += add
            dst[x] = 0 if q < 0 else hi if q > hi else q


@kernel
def rank_filter(padded, k, rank, out):
    """The ``rank``-th smallest value (0-based) of each (2k+1)^2 window: ``imlib_median_filter``'s
    ``fsort`` then ``data[int_percentile]``, as a histogram that slides along each row (Huang's
    algorithm: per step one column leaves and one enters, and the answer moves from the last one)."""
    h, w = out.shape
    n = 2 * k + 1
    hist = np.zeros(256, np.int32)
    for y in range(h):
        hist[:] = 0
        for j in range(n):
            for i in range(n):
                hist[padded[y + j, i]] += 1
        m = 0
        below = 0  # how many window values are < m
        while below + hist[m] <= rank:
            below += hist[m]
            m += 1
        out[y, 0] = m
        for x in range(1, w):
            for j in range(n):
                v = padded[y + j, x - 1]
                hist[v] -= 1
                if v < m:
                    below -= 1
                v = padded[y + j, x + n - 1]
                hist[v] += 1
                if v < m:
                    below += 1
            while below > rank:
                m -= 1
                below -= hist[m]
            while below + hist[m] <= rank:
                below += hist[m]
                m += 1
            out[y, x] = m


@kernel
def bilateral_sums(padded, k, gi, gs, i_acc, w_acc):
    """``imlib_bilateral_filter``'s weighted sums: for every pixel, over its window in scan order,
    ``w = gi[|centre - v|] * gs[tap]``, ``i_acc += v * w``, ``w_acc += w``, each in float32. The taps
    are the outer loop and the pixels of a row the inner one, so many pixels' sums advance together
    while each pixel still adds its taps in the C's order (the same bits)."""
    h, w = i_acc.shape
    n = 2 * k + 1
    for j in range(n):
        for i in range(n):
            g = gs[j * n + i]
            for y in range(h):
                src = padded[y + j, i:i + w]
                centre = padded[y + k, k:k + w]
                si = i_acc[y]
                sw = w_acc[y]
                for x in range(w):
                    v = src[x]
                    wt = gi[abs(centre[x] - v)] * g
                    si[x] = si[x] + np.float32(v) * wt
                    sw[x] = sw[x] + wt


@kernel
def block_pool(plane, x_div, y_div, midpoint, bias, out):
    """pool.c for one channel: per x_div x y_div block, ``sum // n`` (mean) or
    ``(min * (256 - bias) + max * bias) >> 8`` (midpoint)."""
    oh, ow = out.shape
    n = x_div * y_div
    for by in range(oh):
        for bx in range(ow):
            total = 0
            lo = 255
            hi = 0
            for j in range(y_div):
                seg = plane[by * y_div + j, bx * x_div:(bx + 1) * x_div]
                for i in range(x_div):
                    v = seg[i]
                    total += v
                    lo = min(lo, v)
                    hi = max(hi, v)
            out[by, bx] = ((lo * (256 - bias) + hi * bias) >> 8) if midpoint else total // n
