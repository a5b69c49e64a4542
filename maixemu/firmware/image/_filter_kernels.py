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
def bilateral_rows(padded, k, gi, gs, hi, out):
    """``imlib_bilateral_filter`` per pixel: over its window in scan order ``w = gi[|centre - v|] *
    gs[tap]``, ``i_acc += v * w``, ``w_acc += w``, each in float32, then ``(int) IM_MIN(i_acc /
    w_acc, hi)`` (0 when ``w_acc`` is 0; a NaN quotient converts to INT32_MAX, as numpy's minimum
    and :func:`_fmath.to_int` give it). The taps are the middle loop and the pixels of a row the
    inner one, so a row's two sums advance together in the first-level cache while each pixel
    still adds its taps in the C's order (the same bits)."""
    h, w = out.shape
    n = 2 * k + 1
    si = np.empty(w, np.float32)
    sw = np.empty(w, np.float32)
    top = np.float32(hi)
    for y in range(h):
        centre = padded[y + k, k:k + w]
        si[:] = 0
        sw[:] = 0
        for j in range(n):
            for i in range(n):
                g = gs[j * n + i]
                src = padded[y + j, i:i + w]
                for x in range(w):
                    v = src[x]
                    wt = gi[abs(centre[x] - v)] * g
                    si[x] = si[x] + np.float32(v) * wt
                    sw[x] = sw[x] + wt
        row = out[y]
        for x in range(w):
            if sw[x] == 0:
                row[x] = 0
            else:
                q = si[x] / sw[x]
                if q != q:
                    row[x] = 2147483647
                elif q > top:
                    row[x] = hi
                else:
                    row[x] = np.int64(q)


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


@kernel
def clip_histogram(hist, limit):
    """clahe.c's ``ClipHistogram`` in place on a 256-bin int64 histogram, its unsigned long
    arithmetic included (``limit - incr`` wraps when the average excess exceeds the limit).

    Returns False when the C never returns: its redistribution loop runs while excess pixels
    remain and only places them in bins below the limit, so once the excess outgrows the room
    below the limit it loops forever (a tile of more than 256 * limit pixels). The histogram is
    then left as the second pass made it."""
    n = hist.shape[0]
    excess = 0
    for i in range(n):
        if hist[i] > limit:
            excess += hist[i] - limit
    incr = excess // n
    upper = limit - incr  # a negative value is a huge unsigned one: no bin is above it
    wrapped = upper < 0
    for i in range(n):
        if hist[i] > limit:
            hist[i] = limit
        elif not wrapped and hist[i] > upper:
            excess -= hist[i] - upper
            hist[i] = limit
        else:
            excess -= incr
            hist[i] += incr
    room = 0
    for i in range(n):
        if hist[i] < limit:
            room += limit - hist[i]
    if excess < 0 or excess > room:  # a negative count is a huge unsigned one
        return False
    while excess:
        start = 0
        while excess and start < n:
            step = max(n // excess, 1)
            i = start
            while i < n and excess:
                if hist[i] < limit:
                    hist[i] += 1
                    excess -= 1
                i += step
            start += 1
    return True


@kernel
def clahe_interpolate(img, maps, bands_y, bands_x, out):
    """clahe.c's interpolation loop: the padded image in bands (``bands_y``/``bands_x`` rows of
    (size, first tile, second tile): half tiles at the borders), each pixel the bilinear mix of its
    band's four tile maps, ``(yi * (xi * LU + xc * RU) + yc * (xi * LB + xc * RB)) / (sub_x * sub_y)``
    in integers."""
    y = 0
    for gy in range(bands_y.shape[0]):
        sub_y, yu, yb = bands_y[gy, 0], bands_y[gy, 1], bands_y[gy, 2]
        x = 0
        for gx in range(bands_x.shape[0]):
            sub_x, xl, xr = bands_x[gx, 0], bands_x[gx, 1], bands_x[gx, 2]
            num = sub_x * sub_y
            for yc in range(sub_y):
                yi = sub_y - yc
                src = img[y + yc, x:x + sub_x]
                dst = out[y + yc, x:x + sub_x]
                for xc in range(sub_x):
                    g = src[xc]
                    xi = sub_x - xc
                    v = (yi * (xi * maps[yu, xl, g] + xc * maps[yu, xr, g])
                         + yc * (xi * maps[yb, xl, g] + xc * maps[yb, xr, g])) // num
                    dst[xc] = v & 0xFF
            x += sub_x
        y += sub_y
