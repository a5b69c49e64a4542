"""The compiled kernels of the firmware's AprilTag pipeline (``apriltag.c``), shared by ``find_rects``
and ``find_apriltags``: threshold, the 16-bit union-find, cluster gathering in the hash-table order,
quad fitting (``fit_quad``, ``quad_segment_maxima``, ``ptsort``), ``refine_edges``, the polygon
overlap of the reconciliation (``g2d``), tag decoding (gray models, bit sampling, quick decode), the
homography and the pose with the float32 Jacobi SVD (``matd_svd``, ``svd22``).

The arithmetic is the firmware's: apriltag.c ``#define``s ``double`` as ``float`` and is built with
``-Os -ffast-math -fsingle-precision-constant``, so every value is float32, in the order GCC emits
it (the regroupings are marked where they occur; ``tests/firmware/test_image_apriltag_decode.py``
lists how they were read from GCC's optimised tree dump). These are the no-FMA build's bits.

How it is written, and why:

* every kernel (``_jit.kernel``) and helper (:func:`jitable`) is in numba's subset of Python over
  numpy arrays and float32 scalars. numba compiles the kernels; with ``MAIXEMU_NO_JIT=1`` or
  without numba the very same statements run as Python (numpy float32 scalars give the same bits),
  and the tests compare the two;
* helpers are registered with numba's ``register_jitable``: compiled into the kernels that call
  them, and still the plain Python functions when called from Python (the tests call them directly
  against the firmware's C). They live in this one file on purpose: numba's disk cache keys a
  kernel on its own source file only, so a helper edited elsewhere would leave stale kernels;
* floats stay float32: constants are float32 module values, integers are converted with ``F()``
  before they meet a float (numba would widen float32 * int64 to float64), divisions that can meet
  a zero go through :func:`fdiv` (numba raises ZeroDivisionError where C gives inf/NaN), and
  ``(int)x`` is :func:`to_int` (the K210's truncating, saturating ``fcvt.w.s``);
* ``cosf``/``sinf`` are the C library's (the golden cases come from glibc): numba lowers
  ``math.cos`` of a float32 to libm's ``cosf``, and the Python form calls the same function
  through ctypes (``_fmath.cosf``); :func:`cosf` is one name for both.
* no large array is a global (numba would refuse to cache the kernel): the sine table and the tag
  codes are arguments.
"""

from __future__ import annotations

import math

import numpy as np

from . import _fmath as fm
from ._jit import compiled, kernel

F = np.float32

F0 = F(0)
F1 = F(1)
F2 = F(2)
HALF = F(0.5)
QUARTER = F(0.25)
PI = F(math.pi)
TWO_PI = F(F(2) * PI)
INF = F(np.inf)
NAN = F(np.nan)
THIRD = F(1) / F(3)  # ``x / 3`` as -freciprocal-math compiles it: ``x * (1.0f / 3)``
INT32_MAX = 2147483647
INT32_MIN = -2147483648
F_INT32_MAX = F(2147483647.0)
F_INT32_MIN = F(-2147483648.0)

MAX_NMAXIMA = 10
MAX_LINE_FIT_MSE = F(10.0)
CRITICAL_RAD = F(10) * F(math.pi) / F(180)
MIN_WHITE_BLACK_DIFF = 5
SVD_TOL = F(1e-5)
SVD_MAXITERS = 32
MATD_EPS = F(1e-8)
SEGMENT_DET_EPS = F(0.00000001)
QUAD_DET_EPS = F(0.001)


def _register(fn):
    from numba.extending import register_jitable

    return register_jitable(fn)


def jitable(fn):
    """A helper the kernels call: compiled into them when numba compiles kernels, and the same
    Python function when called from Python."""
    return _register(fn) if compiled() else fn


def cosf(x):
    """libm's ``cosf`` of a float32: through ctypes in Python (``_fmath.cosf``), and the same C
    function inside compiled kernels (numba lowers ``math.cos`` of a float32 to it)."""
    return fm.cosf(x)


def sinf(x):
    """libm's ``sinf`` of a float32 (see :func:`cosf`)."""
    return fm.sinf(x)


def _register_libm() -> None:
    from numba import types
    from numba.extending import overload

    @overload(cosf, inline="never")
    def _cosf(x):
        if isinstance(x, types.Float):
            return lambda x: math.cos(x)
        return None

    @overload(sinf, inline="never")
    def _sinf(x):
        if isinstance(x, types.Float):
            return lambda x: math.sin(x)
        return None


if compiled():
    _register_libm()


# ---------------------------------------------------------------------------------- scalar helpers
@jitable
def to_int(v):
    """``(int)v`` of a float32 as the K210 converts it: truncate, saturate, NaN -> INT32_MAX."""
    if v != v or v >= F_INT32_MAX:
        return INT32_MAX
    if v <= F_INT32_MIN:
        return INT32_MIN
    return int(v)


@jitable
def fdiv(a, b):
    """``a / b`` in float32 with IEEE results for a zero divisor (inf with the quotient's sign, NaN)."""
    if b == F0:
        if a != a or a == F0:
            return NAN
        if (a < F0) != (math.copysign(1.0, b) < 0.0):
            return -INF
        return INF
    return a / b


@jitable
def fsqrt(v):
    """``fsqrt.s``: the correctly rounded float32 square root (NaN for a negative value)."""
    return np.sqrt(v)


@jitable
def fast_atanf(xx):
    """fmath.c ``fast_atanf`` as the -ffast-math build evaluates it (x factored out of the polynomial)."""
    neg = xx < F0
    x = -xx if neg else xx
    if x > F(2.414213562373095):
        y = PI / F2
        xr = -(F1 / x)
    elif x > F(0.4142135623730950):
        y = PI / F(4)
        xr = (x - F1) / (x + F1)
    else:
        y = F0
        xr = x
    z = xr * xr
    poly = ((((F(8.05374449538e-2) * z - F(1.38776856032e-1)) * z + F(1.99777106478e-1)) * z
             - F(3.33329491539e-1)) * z + F1) * xr
    y = poly + y
    return -y if neg else y


@jitable
def fast_atan2f(y, x):
    """fmath.c ``fast_atan2f``: quadrant by quadrant around ``fast_atanf``, in [0, 2pi)."""
    if x > F0 and y >= F0:
        return fast_atanf(y / x)
    if x < F0 and y >= F0:
        return PI - fast_atanf(-(y / x))
    if x < F0 and y < F0:
        return PI + fast_atanf(y / x)
    if x > F0 and y < F0:
        return TWO_PI - fast_atanf(-(y / x))
    if y == F0:
        return F0
    return PI if y > F0 else -PI


def sin_table() -> np.ndarray:
    """``sinTable_f32``: sin(2 pi i / 512) to 8 decimals (the CMSIS table), 513 entries."""
    return np.round(np.sin(2 * np.pi * np.arange(513) / 512), 8).astype(F)


@jitable
def table_sin(x, tab):
    """``riscv_sin_f32`` (apriltag.c's ``sin``): the table, the floor of ``x / 2pi`` by the sign of x,
    an index wrap at 512 and linear interpolation."""
    inp = x * F(0.159154943092)
    n = to_int(inp)
    if x < F0:
        n -= 1
    inp = inp - F(n)
    findex = F(512) * inp
    if findex >= F(512):
        findex = findex - F(512)
    index = to_int(findex) & 0x1FF
    fract = findex - F(index)
    return (F1 - fract) * tab[index] + fract * tab[index + 1]


@jitable
def table_cos(x, tab):
    """``riscv_cos_f32`` (apriltag.c's ``cos``): the sine table a quarter turn on."""
    inp = x * F(0.159154943092) + QUARTER
    n = to_int(inp)
    if inp < F0:
        n -= 1
    inp = inp - F(n)
    findex = F(512) * inp
    index = to_int(findex) & 0x1FF
    fract = findex - F(index)
    return (F1 - fract) * tab[index] + fract * tab[index + 1]


# ---------------------------------------------------------------------------------- threshold
@kernel
def threshold(im, out):
    """``threshold()``: 4x4 tiles' max/min, a 3x3 max/min over the tiles, 127 (no edge) where
    max - min < 5, else 255/0 above/below ``min + (max - min) / 2``; the partial tiles at the right
    and bottom use the last full tile's values without the contrast test."""
    h, w = im.shape
    ts = 4
    tw = w // ts
    th = h // ts
    tmax = np.zeros((th, tw), np.int64)
    tmin = np.zeros((th, tw), np.int64)
    for ty in range(th):
        for tx in range(tw):
            mx = 0
            mn = 255
            for dy in range(ts):
                for dx in range(ts):
                    v = int(im[ty * ts + dy, tx * ts + dx])
                    if v < mn:
                        mn = v
                    if v > mx:
                        mx = v
            tmax[ty, tx] = mx
            tmin[ty, tx] = mn
    smax = np.zeros((th, tw), np.int64)
    smin = np.zeros((th, tw), np.int64)
    for ty in range(th):
        for tx in range(tw):
            mx = 0
            mn = 255
            for dy in range(-1, 2):
                if ty + dy < 0 or ty + dy >= th:
                    continue
                for dx in range(-1, 2):
                    if tx + dx < 0 or tx + dx >= tw:
                        continue
                    if tmax[ty + dy, tx + dx] > mx:
                        mx = tmax[ty + dy, tx + dx]
                    if tmin[ty + dy, tx + dx] < mn:
                        mn = tmin[ty + dy, tx + dx]
            smax[ty, tx] = mx
            smin[ty, tx] = mn
    for ty in range(th):
        for tx in range(tw):
            mn = smin[ty, tx]
            mx = smax[ty, tx]
            low = mx - mn < MIN_WHITE_BLACK_DIFF
            thresh = mn + (mx - mn) // 2
            for dy in range(ts):
                for dx in range(ts):
                    y = ty * ts + dy
                    x = tx * ts + dx
                    if low:
                        out[y, x] = 127
                    elif int(im[y, x]) > thresh:
                        out[y, x] = 255
                    else:
                        out[y, x] = 0
    for y in range(h):
        x0 = 0 if y >= th * ts else tw * ts
        ty = min(y // ts, th - 1)
        for x in range(x0, w):
            tx = min(x // ts, tw - 1)
            mn = smin[ty, tx]
            mx = smax[ty, tx]
            thresh = mn + (mx - mn) // 2
            out[y, x] = 255 if int(im[y, x]) > thresh else 0
    return out


# ---------------------------------------------------------------------------------- union-find
@jitable
def _representative(parent, node):
    """``unionfind_get_representative``: the root, with the path compressed on the way back."""
    root = node
    while parent[root] != root:
        root = parent[root]
    while parent[node] != root:
        nxt = parent[node]
        parent[node] = root
        node = nxt
    return root


@kernel
def union_find(t, parent):
    """``do_unionfind_line`` over rows 0..h-2 with 16-bit node ids (``uint16_t``: pixel ``i`` and
    ``i + 65536`` are one node); ``parent`` is updated in place."""
    h, w = t.shape
    for y in range(h - 1):
        for x in range(1, w - 1):
            v = t[y, x]
            if v == 127:
                continue
            a = (y * w + x) & 0xFFFF
            for k in range(4):
                if k == 0:
                    yy, xx = y, x + 1
                elif k == 1:
                    yy, xx = y + 1, x
                elif v == 255:
                    yy, xx = y + 1, x - 1 if k == 2 else x + 1
                else:
                    break
                if t[yy, xx] != v:
                    continue
                ra = _representative(parent, a)
                rb = _representative(parent, (yy * w + xx) & 0xFFFF)
                if ra != rb:
                    parent[rb] = ra
    return parent


# ---------------------------------------------------------------------------------- clusters
@kernel
def gather_clusters(t, parent, nbuckets, min_size, max_size):
    """The boundary points of ``apriltag_quad_thresh`` grouped into clusters through the firmware's
    hash table: ``nbuckets`` buckets of ``u64hash_2(id) % nbuckets``, each a list a new cluster is
    pushed at the head of; read bucket by bucket, newest cluster first. In a cluster, points in
    scan order ((1, 0) before (0, 1) at each pixel). Clusters of fewer than ``min_size`` or more
    than ``max_size`` points are left out, as the firmware skips them.

    A point is twice the position half-way between a white and a black pixel, with (gx, gy)
    towards the white one (+-255). Returns ``(x, y, gx, gy, offsets)``: cluster ``i`` is
    ``[offsets[i], offsets[i + 1])``.
    """
    h, w = t.shape
    cap = max(2 * (w - 2) * (h - 2), 1)
    heads = np.full(nbuckets, -1, np.int64)
    entry_id = np.empty(cap, np.int64)
    entry_next = np.empty(cap, np.int64)
    entry_size = np.zeros(cap, np.int64)
    point_entry = np.empty(cap, np.int64)
    px = np.empty(cap, np.int32)
    py = np.empty(cap, np.int32)
    pgx = np.empty(cap, np.int32)
    pgy = np.empty(cap, np.int32)
    n = 0
    entries = 0
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            v0 = int(t[y, x])
            if v0 == 127:
                continue
            rep0 = -1
            for d in range(2):
                dx = 1 - d
                dy = d
                v1 = int(t[y + dy, x + dx])
                if v0 + v1 != 255:
                    continue
                if rep0 < 0:
                    rep0 = _representative(parent, (y * w + x) & 0xFFFF)
                rep1 = _representative(parent, ((y + dy) * w + x + dx) & 0xFFFF)
                cid = (rep1 << 16) + rep0 if rep0 < rep1 else (rep0 << 16) + rep1
                # u64hash_2: (2654435761 * id) >> 32
                bucket = np.int64(((np.uint64(2654435761) * np.uint64(cid)) >> np.uint64(32)) % np.uint64(nbuckets))
                e = heads[bucket]
                while e >= 0 and entry_id[e] != cid:
                    e = entry_next[e]
                if e < 0:
                    e = entries
                    entries += 1
                    entry_id[e] = cid
                    entry_next[e] = heads[bucket]
                    heads[bucket] = e
                entry_size[e] += 1
                point_entry[n] = e
                px[n] = 2 * x + dx
                py[n] = 2 * y + dy
                pgx[n] = dx * (v1 - v0)
                pgy[n] = dy * (v1 - v0)
                n += 1
    start = np.full(max(entries, 1), -1, np.int64)  # where each kept cluster's points go
    total = 0
    kept = 0
    for b in range(nbuckets):
        e = heads[b]
        while e >= 0:
            if min_size <= entry_size[e] <= max_size:
                start[e] = total
                total += entry_size[e]
                kept += 1
            e = entry_next[e]
    offsets = np.empty(kept + 1, np.int64)
    c = 0
    for b in range(nbuckets):
        e = heads[b]
        while e >= 0:
            if start[e] >= 0:
                offsets[c] = start[e]
                c += 1
            e = entry_next[e]
    offsets[kept] = total
    ox = np.empty(total, np.int32)
    oy = np.empty(total, np.int32)
    ogx = np.empty(total, np.int32)
    ogy = np.empty(total, np.int32)
    for k in range(n):  # in scan order: each cluster's points stay in the order they were added
        e = point_entry[k]
        if start[e] < 0:
            continue
        j = start[e]
        start[e] = j + 1
        ox[j] = px[k]
        oy[j] = py[k]
        ogx[j] = pgx[k]
        ogy[j] = pgy[k]
    return ox, oy, ogx, ogy, offsets


# ---------------------------------------------------------------------------------- ptsort
#: ``ptsort``'s sorting networks (its MAYBE_SWAP pairs) for 2, 3, 4 and 5 points, one after the
#: other; the network of ``sz`` points is the pairs ``_NET_START[sz] .. _NET_START[sz + 1]``
_NET_PAIRS = (0, 1,
              0, 1, 1, 2, 0, 1,
              0, 1, 2, 3, 0, 2, 1, 3, 1, 2,
              0, 1, 3, 4, 1, 2, 0, 1, 0, 3, 2, 4, 1, 2, 2, 3, 1, 2)
_NET_START = (0, 0, 0, 1, 4, 9, 18)


@jitable
def _sort_network(theta, idx, lo, sz):
    """``ptsort``'s sorting networks for 2 to 5 points: swap each pair that is out of order."""
    for k in range(_NET_START[sz], _NET_START[sz + 1]):
        a = lo + _NET_PAIRS[2 * k]
        b = lo + _NET_PAIRS[2 * k + 1]
        if theta[idx[a]] > theta[idx[b]]:
            tmp = idx[a]
            idx[a] = idx[b]
            idx[b] = tmp


@jitable
def ptsort(theta, idx, n, tmp, stack):
    """``ptsort`` of the points ``idx[:n]`` by ``theta``: its recursion (halves of ``sz / 2`` and the
    rest, sorting networks up to 5, a merge that takes the second half on ties) run from an explicit
    stack of (lo, hi, merge?) entries (``stack``: at least 3 x 64 ints)."""
    if n <= 1:
        return
    sp = 0
    stack[0] = 0
    stack[1] = n
    stack[2] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        lo = stack[3 * sp]
        hi = stack[3 * sp + 1]
        merge = stack[3 * sp + 2]
        sz = hi - lo
        if sz <= 5:
            _sort_network(theta, idx, lo, sz)
            continue
        asz = sz // 2
        if merge == 0:
            for lo2, hi2, m2 in ((lo, hi, 1), (lo + asz, hi, 0), (lo, lo + asz, 0)):
                stack[3 * sp] = lo2
                stack[3 * sp + 1] = hi2
                stack[3 * sp + 2] = m2
                sp += 1
            continue
        a = lo
        b = lo + asz
        out = 0
        while a < lo + asz and b < hi:
            if theta[idx[a]] < theta[idx[b]]:
                tmp[out] = idx[a]
                a += 1
            else:
                tmp[out] = idx[b]
                b += 1
            out += 1
        while a < lo + asz:
            tmp[out] = idx[a]
            a += 1
            out += 1
        while b < hi:
            tmp[out] = idx[b]
            b += 1
            out += 1
        for i in range(sz):
            idx[lo + i] = tmp[i]


# ---------------------------------------------------------------------------------- line fits
@jitable
def fit_line(mom, sz, i0, i1):
    """``fit_line`` over the cumulative moments ``mom`` (rows Mx, My, Mxx, Myy, Mxy, W) of points
    [i0, i1], wrapping when i1 <= i0: (Ex, Ey, nx, ny, err, mse).

    The wrapped sums read ``M[sz-1] - M[i0-1] + M[i1]`` in the source; the -ffast-math build
    evaluates ``(M[sz-1] + M[i1]) - M[i0-1]``. The errors share one sum with N factored out:
    ``mse = Cyy*(ny*ny) + nx*(Cxx*nx + Cxy*(ny+ny))``, ``err = N * mse``."""
    if i0 >= i1:
        j = i0 - 1 if i0 > 0 else 0
        Mx = (mom[0, sz - 1] + mom[0, i1]) - mom[0, j]
        My = (mom[1, sz - 1] + mom[1, i1]) - mom[1, j]
        Mxx = (mom[2, sz - 1] + mom[2, i1]) - mom[2, j]
        Myy = (mom[3, sz - 1] + mom[3, i1]) - mom[3, j]
        Mxy = (mom[4, sz - 1] + mom[4, i1]) - mom[4, j]
        W = (mom[5, sz - 1] + mom[5, i1]) - mom[5, j]
        n = sz - i0 + i1 + 1
    elif i0 > 0:
        Mx = mom[0, i1] - mom[0, i0 - 1]
        My = mom[1, i1] - mom[1, i0 - 1]
        Mxx = mom[2, i1] - mom[2, i0 - 1]
        Myy = mom[3, i1] - mom[3, i0 - 1]
        Mxy = mom[4, i1] - mom[4, i0 - 1]
        W = mom[5, i1] - mom[5, i0 - 1]
        n = i1 - i0 + 1
    else:
        Mx = mom[0, i1]
        My = mom[1, i1]
        Mxx = mom[2, i1]
        Myy = mom[3, i1]
        Mxy = mom[4, i1]
        W = mom[5, i1]
        n = i1 - i0 + 1
    Ex = fdiv(Mx, W)
    Ey = fdiv(My, W)
    Cxx = fdiv(Mxx, W) - Ex * Ex
    Cxy = fdiv(Mxy, W) - Ex * Ey
    Cyy = fdiv(Myy, W) - Ey * Ey
    normal_theta = HALF * fast_atan2f(F(-2) * Cxy, Cyy - Cxx)
    nx = cosf(normal_theta)
    ny = sinf(normal_theta)
    mse = Cyy * (ny * ny) + nx * (Cxx * nx + Cxy * (ny + ny))
    err = F(n) * mse
    return Ex, Ey, nx, ny, err, mse


@jitable
def segment_maxima(mom, sz, taps, max_dot, errs, filt, maxima, maxima_errs):
    """``quad_segment_maxima``: the corner indices (i0, i1, i2, i3), or i0 = -1.

    The line-fit error around each point (``ksz`` points either side), smoothed by the Gaussian
    ``taps``, its local maxima (the 10 largest when there are more), then the combination of four
    maxima whose lines fit best, each line's mse at most 10 and the first two lines at least the
    critical angle apart (``|dot| <= max_dot``)."""
    ksz = min(20, sz // 12)
    if ksz < 2:
        return -1, -1, -1, -1
    for i in range(sz):
        errs[i] = fit_line(mom, sz, (i + sz - ksz) % sz, (i + ksz) % sz)[4]
    fsz = taps.size
    for iy in range(sz):
        acc = F0
        for k in range(fsz):
            acc = acc + errs[(iy + k - fsz // 2 + sz) % sz] * taps[k]
        filt[iy] = acc
    nm = 0
    for i in range(sz):
        e = filt[i]
        if e > filt[(i + 1) % sz] and e > filt[(i + sz - 1) % sz]:
            maxima[nm] = i
            maxima_errs[nm] = e
            nm += 1
    if nm < 4:
        return -1, -1, -1, -1
    if nm > MAX_NMAXIMA:
        # the 11th largest error (``maxima_errs_copy[max_nmaxima]`` after the descending qsort)
        top = np.empty(MAX_NMAXIMA + 1, np.float32)
        ntop = 0
        for k in range(nm):
            v = maxima_errs[k]
            if ntop == MAX_NMAXIMA + 1 and not v > top[MAX_NMAXIMA]:
                continue
            j = ntop if ntop < MAX_NMAXIMA + 1 else MAX_NMAXIMA
            while j > 0 and top[j - 1] < v:
                if j < MAX_NMAXIMA + 1:
                    top[j] = top[j - 1]
                j -= 1
            top[j] = v
            if ntop < MAX_NMAXIMA + 1:
                ntop += 1
        thresh = top[MAX_NMAXIMA]
        out = 0
        for k in range(nm):
            if maxima_errs[k] > thresh:
                maxima[out] = maxima[k]
                out += 1
        nm = out
    best_error = INF
    b0 = b1 = b2 = b3 = -1
    for m0 in range(nm - 3):
        i0 = maxima[m0]
        for m1 in range(m0 + 1, nm - 2):
            i1 = maxima[m1]
            f01 = fit_line(mom, sz, i0, i1)
            if f01[5] > MAX_LINE_FIT_MSE:
                continue
            for m2 in range(m1 + 1, nm - 1):
                i2 = maxima[m2]
                f12 = fit_line(mom, sz, i1, i2)
                if f12[5] > MAX_LINE_FIT_MSE:
                    continue
                dot = f01[2] * f12[2] + f01[3] * f12[3]
                if abs(dot) > max_dot:
                    continue
                for m3 in range(m2 + 1, nm):
                    i3 = maxima[m3]
                    f23 = fit_line(mom, sz, i2, i3)
                    if f23[5] > MAX_LINE_FIT_MSE:
                        continue
                    f30 = fit_line(mom, sz, i3, i0)
                    if f30[5] > MAX_LINE_FIT_MSE:
                        continue
                    err = f01[4] + f12[4] + f23[4] + f30[4]
                    if err < best_error:
                        best_error = err
                        b0, b1, b2, b3 = i0, i1, i2, i3
    if b0 < 0 or not best_error / F(sz) < MAX_LINE_FIT_MSE:
        return -1, -1, -1, -1
    return b0, b1, b2, b3


@jitable
def line_corners(lines, out, keep_on_fail):
    """Corner i = the intersection of lines i and i+1 (``[Ex, Ey, nx, ny]`` rows). ``fit_quad``
    fails on a near-parallel pair (|det| < 0.001: returns False); ``refine_edges``
    (``keep_on_fail``) keeps the old corner there."""
    for i in range(4):
        j = (i + 1) & 3
        A00 = lines[i, 3]
        A01 = -lines[j, 3]
        A10 = -lines[i, 2]
        A11 = lines[j, 2]
        B0 = -lines[i, 0] + lines[j, 0]
        B1 = -lines[i, 1] + lines[j, 1]
        det = A00 * A11 - A10 * A01
        if keep_on_fail:
            if not abs(det) > QUAD_DET_EPS:
                continue
        elif abs(det) < QUAD_DET_EPS:
            return False
        W00 = A11 / det
        W01 = -A01 / det
        L0 = W00 * B0 + W01 * B1
        out[i, 0] = lines[i, 0] + L0 * A00
        out[i, 1] = lines[i, 1] + L0 * A10
    return True


@jitable
def quad_plausible(q):
    """``fit_quad``'s last tests: area >= 64 (two Heron triangles; a NaN area passes, as in C) and
    every turning angle at least the critical angle from 0 and pi, the four summing to 6.2..6.4."""
    area = F0
    for t in range(2):
        a = 0 if t == 0 else 2
        b = 1 if t == 0 else 3
        c = 2 if t == 0 else 0
        dx = q[b, 0] - q[a, 0]
        dy = q[b, 1] - q[a, 1]
        l0 = fsqrt(dx * dx + dy * dy)
        dx = q[c, 0] - q[b, 0]
        dy = q[c, 1] - q[b, 1]
        l1 = fsqrt(dx * dx + dy * dy)
        dx = q[a, 0] - q[c, 0]
        dy = q[a, 1] - q[c, 1]
        l2 = fsqrt(dx * dx + dy * dy)
        p = (l0 + l1 + l2) / F2
        area = area + fsqrt(p * (p - l0) * (p - l1) * (p - l2))
    if area < F(64):
        return False
    total = F0
    ok = True
    for i in range(4):
        i1 = (i + 1) & 3
        i2 = (i + 2) & 3
        t0 = fast_atan2f(q[i, 1] - q[i1, 1], q[i, 0] - q[i1, 0])
        t1 = fast_atan2f(q[i2, 1] - q[i1, 1], q[i2, 0] - q[i1, 0])
        dtheta = t0 - t1
        if dtheta < F0:
            dtheta = dtheta + F2 * PI
        if dtheta < CRITICAL_RAD or dtheta > (PI - CRITICAL_RAD):
            ok = False
        total = total + dtheta
    if total < F(6.2) or total > F(6.4):
        return False
    return ok


@jitable
def fit_quad(im, px, py, pgx, pgy, start, end, override_mode, taps, max_dot, theta, idx, tmp, stack,
             xs, ys, mom, errs, filt, maxima, maxima_errs, q):
    """``fit_quad`` of the cluster ``[start, end)``: writes the 4 corners into ``q``, returns True;
    False when no plausible quad fits. The other arrays are scratch space of the cluster's size."""
    sz = end - start
    if sz < 4:
        return False
    xmax = 0
    xmin = INT32_MAX
    ymax = 0
    ymin = INT32_MAX
    for k in range(start, end):
        xmax = max(xmax, int(px[k]))
        xmin = min(xmin, int(px[k]))
        ymax = max(ymax, int(py[k]))
        ymin = min(ymin, int(py[k]))
    cx = F(xmin + xmax) * HALF + F(0.05118)
    cy = F(ymin + ymax) * HALF + F(-0.028581)
    dot = F0
    for k in range(sz):
        dx = F(px[start + k]) - cx
        dy = F(py[start + k]) - cy
        theta[k] = fast_atan2f(dy, dx)
        dot = dot + (dx * F(pgx[start + k]) + dy * F(pgy[start + k]))
        idx[k] = k
    if not override_mode and dot < F0:
        return False
    ptsort(theta, idx, sz, tmp, stack)
    n = 0
    lastx = -1
    lasty = -1
    for k in range(sz):  # drop each point equal to the one sorted before it
        x = int(px[start + idx[k]])
        y = int(py[start + idx[k]])
        if k == 0 or x != lastx or y != lasty:
            xs[n] = x
            ys[n] = y
            n += 1
        lastx = x
        lasty = y
    sz = n
    if sz < 4:
        return False
    h, w = im.shape
    cmx = cmy = cmxx = cmyy = cmxy = cw = F0
    for k in range(sz):
        fx = F(xs[k]) * HALF + HALF
        fy = F(ys[k]) * HALF + HALF
        ix = to_int(fx)
        iy = to_int(fy)
        W = F1
        if ix > 0 and ix + 1 < w and iy > 0 and iy + 1 < h:
            gx = int(im[iy, ix + 1]) - int(im[iy, ix - 1])
            gy = int(im[iy + 1, ix]) - int(im[iy - 1, ix])
            W = fsqrt(F(gx * gx + gy * gy)) + F1
        wfx = W * fx
        wfy = W * fy
        cmx = cmx + wfx
        cmy = cmy + wfy
        cmxx = cmxx + wfx * fx
        cmyy = cmyy + wfy * fy
        cmxy = cmxy + wfx * fy
        cw = cw + W
        mom[0, k] = cmx
        mom[1, k] = cmy
        mom[2, k] = cmxx
        mom[3, k] = cmyy
        mom[4, k] = cmxy
        mom[5, k] = cw
    i0, i1, i2, i3 = segment_maxima(mom, sz, taps, max_dot, errs, filt, maxima, maxima_errs)
    if i0 < 0:
        return False
    lines = np.empty((4, 4), np.float32)
    for e in range(4):
        a = i0 if e == 0 else (i1 if e == 1 else (i2 if e == 2 else i3))
        b = i1 if e == 0 else (i2 if e == 1 else (i3 if e == 2 else i0))
        Ex, Ey, nx, ny, err, mse = fit_line(mom, sz, a, b)
        if mse > MAX_LINE_FIT_MSE:
            return False
        lines[e, 0] = Ex
        lines[e, 1] = Ey
        lines[e, 2] = nx
        lines[e, 3] = ny
    if not line_corners(lines, q, False):
        return False
    return quad_plausible(q)


@kernel
def fit_quads(im, px, py, pgx, pgy, offsets, override_mode, taps, max_dot):
    """``fit_quad`` over every cluster, in order: the plausible quads' corners, (n, 4, 2) float32."""
    ncl = offsets.size - 1
    maxsz = 4
    for c in range(ncl):
        maxsz = max(maxsz, offsets[c + 1] - offsets[c])
    theta = np.empty(maxsz, np.float32)
    idx = np.empty(maxsz, np.int64)
    tmp = np.empty(maxsz, np.int64)
    stack = np.empty(3 * 64, np.int64)
    xs = np.empty(maxsz, np.int64)
    ys = np.empty(maxsz, np.int64)
    mom = np.empty((6, maxsz), np.float32)
    errs = np.empty(maxsz, np.float32)
    filt = np.empty(maxsz, np.float32)
    maxima = np.empty(maxsz, np.int64)
    maxima_errs = np.empty(maxsz, np.float32)
    quads = np.empty((ncl, 4, 2), np.float32)
    nq = 0
    for c in range(ncl):
        if fit_quad(im, px, py, pgx, pgy, offsets[c], offsets[c + 1], override_mode, taps, max_dot, theta, idx,
                    tmp, stack, xs, ys, mom, errs, filt, maxima, maxima_errs, quads[nq]):
            nq += 1
    return quads[:nq].copy()


# ---------------------------------------------------------------------------------- refine_edges
@jitable
def refine_edges(im, q):
    """``refine_edges``: each edge refit to the strongest gradient across it at >= 16 samples, the
    corners re-intersected in place (a near-parallel pair keeps its corner)."""
    h, w = im.shape
    lines = np.empty((4, 4), np.float32)
    for edge in range(4):
        a = edge
        b = (edge + 1) & 3
        nx = q[b, 1] - q[a, 1]
        ny = -q[b, 0] + q[a, 0]
        mag = fsqrt(nx * nx + ny * ny)
        nx = fdiv(nx, mag)
        ny = fdiv(ny, mag)
        nsamples = max(16, to_int(mag / F(8)))
        Mx = My = Mxx = Mxy = Myy = N = F0
        inv_n = F1 / F(nsamples + 1)  # the build multiplies by 1/(nsamples + 1)
        for s in range(nsamples):
            alpha = (F(s) + F1) * inv_n
            x0 = alpha * q[a, 0] + (F1 - alpha) * q[b, 0]
            y0 = alpha * q[a, 1] + (F1 - alpha) * q[b, 1]
            Mn = F0
            Mcount = F0
            n = F(-2.0)
            while n <= F2:
                x1 = to_int(x0 + (n + F1) * nx)
                y1 = to_int(y0 + (n + F1) * ny)
                if 0 <= x1 < w and 0 <= y1 < h:
                    x2 = to_int(x0 + (n - F1) * nx)
                    y2 = to_int(y0 + (n - F1) * ny)
                    if 0 <= x2 < w and 0 <= y2 < h:
                        g1 = int(im[y1, x1])
                        g2 = int(im[y2, x2])
                        if g1 >= g2:
                            weight = F((g2 - g1) * (g2 - g1))
                            Mn = Mn + weight * n
                            Mcount = Mcount + weight
                n = n + QUARTER
            if Mcount == F0:
                continue
            n0 = Mn / Mcount
            bestx = x0 + n0 * nx
            besty = y0 + n0 * ny
            Mx = Mx + bestx
            My = My + besty
            Mxx = Mxx + bestx * bestx
            Mxy = Mxy + bestx * besty
            Myy = Myy + besty * besty
            N = N + F1
        if N == F0:
            # 0/0 everywhere: the build's fast_atan2f gives NaN for NaN input, so this line's normal
            # is NaN and its two corners keep their place (the det test fails)
            for k in range(4):
                lines[edge, k] = NAN
            continue
        Ex = Mx / N
        Ey = My / N
        Cxy = Mxy / N - Ex * Ey
        # ``Cyy - Cxx`` as the build evaluates it: (Myy/N + (Ex*Ex - Mxx/N)) - Ey*Ey
        x_arg = (Myy / N + (Ex * Ex - Mxx / N)) - Ey * Ey
        normal_theta = HALF * fast_atan2f(F(-2) * Cxy, x_arg)
        lines[edge, 0] = Ex
        lines[edge, 1] = Ey
        lines[edge, 2] = cosf(normal_theta)
        lines[edge, 3] = sinf(normal_theta)
    line_corners(lines, q, True)


@kernel
def refine_quads(im, quads):
    """``refine_edges`` of each quad, in place."""
    for i in range(quads.shape[0]):
        refine_edges(im, quads[i])
    return quads


# ---------------------------------------------------------------------------------- g2d polygons
@jitable
def _segments_intersect(ax0, ay0, ax1, ay1, bx0, by0, bx1, by1):
    """``g2d_line_segment_intersect_segment`` of two segments given by their end points."""
    ux = ax1 - ax0
    uy = ay1 - ay0
    mag = fsqrt(ux * ux + uy * uy)
    aux = fdiv(ux, mag)
    auy = fdiv(uy, mag)
    ux = bx1 - bx0
    uy = by1 - by0
    mag = fsqrt(ux * ux + uy * uy)
    bux = fdiv(ux, mag)
    buy = fdiv(uy, mag)
    m00 = aux
    m01 = -bux
    m10 = auy
    m11 = -buy
    det = m00 * m11 - m01 * m10
    if abs(det) < SEGMENT_DET_EPS:  # a NaN det goes on, and NaN fails every test below: "intersects"
        return False
    i00 = fdiv(m11, det)
    i01 = fdiv(-m01, det)
    b00 = bx0 - ax0
    b10 = by0 - ay0
    x00 = i00 * b00 + i01 * b10
    tx = aux * x00 + ax0
    ty = auy * x00 + ay0
    for s in range(2):
        px0 = ax0 if s == 0 else bx0
        py0 = ay0 if s == 0 else by0
        px1 = ax1 if s == 0 else bx1
        py1 = ay1 if s == 0 else by1
        ux = aux if s == 0 else bux
        uy = auy if s == 0 else buy
        a = (px0 - px0) * ux + (py0 - py0) * uy
        b = (px1 - px0) * ux + (py1 - py0) * uy
        c = (tx - px0) * ux + (ty - py0) * uy
        if (c < a and c < b) or (c > a and c > b):
            return False
    return True


@jitable
def _contains(poly, qx, qy):
    """``g2d_polygon_contains_point``: the winding count of quadrant changes around (qx, qy)."""
    n = poly.shape[0]
    last = 0
    acc = 0
    for i in range(n + 1):
        px = poly[i % n, 0]
        py = poly[i % n, 1]
        if px < qx:
            quadrant = 2 if py < qy else 1
        else:
            quadrant = 3 if py < qy else 0
        if i > 0:
            dq = quadrant - last
            if dq == -3 or dq == 1:
                acc += 1
            elif dq == -1 or dq == 3:
                acc -= 1
            elif dq == -2 or dq == 2:
                nx = py - qy
                ny = -px + qx
                d = nx * (poly[i - 1, 0] - qx) + ny * (poly[i - 1, 1] - qy)
                acc += -2 if d < F0 else 2
        last = quadrant
    return acc >= 2 or acc <= -2


@jitable
def polygons_overlap(pa, pb):
    """``g2d_polygon_overlaps_polygon``: an edge of one crosses an edge of the other, or the interior
    point (the mean of the first three corners) of one lies inside the other."""
    na = pa.shape[0]
    nb = pb.shape[0]
    for ia in range(na):
        ja = (ia + 1) % na
        for ib in range(nb):
            jb = (ib + 1) % nb
            if _segments_intersect(pa[ia, 0], pa[ia, 1], pa[ja, 0], pa[ja, 1],
                                   pb[ib, 0], pb[ib, 1], pb[jb, 0], pb[jb, 1]):
                return True
    for t in range(2):
        a = pa if t == 0 else pb
        b = pb if t == 0 else pa
        qx = (b[0, 0] + b[1, 0] + b[2, 0]) * THIRD
        qy = (b[0, 1] + b[1, 1] + b[2, 1]) * THIRD
        if _contains(a, qx, qy):
            return True
    return False


@kernel
def reconcile(keys, corners, groups):
    """The firmware's reconciliation of overlapping detections: of two overlapping polygons of the
    same group keep the one whose ``keys`` row compares smaller first (``prefer_smaller`` in
    order), with the loop's index retries. A removal is ``zarray_remove_index(za, i, 1)``: the
    *last* entry moves into the freed slot, which is what orders the survivors. Returns the kept
    indices, in order."""
    n = keys.shape[0]
    nk = keys.shape[1]
    idx = np.arange(n)
    m = n
    i0 = 0
    while i0 < m:
        a = idx[i0]
        i1 = i0 + 1
        restart = False
        while i1 < m:
            b = idx[i1]
            if groups[a] != groups[b] or not polygons_overlap(corners[a], corners[b]):
                i1 += 1
                continue
            pref = 0
            for k in range(nk):
                if pref == 0:
                    if keys[a, k] < keys[b, k]:
                        pref = -1
                    elif keys[b, k] < keys[a, k]:
                        pref = 1
            m -= 1
            if pref < 0:  # keep a; the last entry takes b's place and is compared next
                idx[i1] = idx[m]
                continue
            idx[i0] = idx[m]  # drop a; the last entry takes its place and starts over
            restart = True
            break
        if not restart:
            i0 += 1
    return idx[:m].copy()


# ---------------------------------------------------------------------------------- matd / SVD
@jitable
def identity(n):
    out = np.zeros((n, n), np.float32)
    for i in range(n):
        out[i, i] = F1
    return out


@jitable
def transpose(a):
    out = np.empty((a.shape[1], a.shape[0]), np.float32)
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            out[j, i] = a[i, j]
    return out


@jitable
def multiply(a, b):
    """``matd_multiply``: each element a sequential float32 sum."""
    out = np.empty((a.shape[0], b.shape[1]), np.float32)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = F0
            for k in range(a.shape[1]):
                acc = acc + a[i, k] * b[k, j]
            out[i, j] = acc
    return out


@jitable
def svd22(a00, a01, a10, a11, tab):
    """``svd22`` of a 2x2 matrix: (U0..U3, S0, S1, V0..V3) with apriltag.c's ``fast_atan2f`` and
    table ``cos``/``sin``."""
    B0 = a00 + a11
    B1 = a00 - a11
    B2 = a01 + a10
    B3 = a01 - a10
    PminusT = fast_atan2f(B3, B0)
    PplusT = fast_atan2f(B2, B1)
    P = (PminusT + PplusT) / F2
    T = (-PminusT + PplusT) / F2
    CP = table_cos(P, tab)
    SP = table_sin(P, tab)
    CT = table_cos(T, tab)
    ST = table_sin(T, tab)
    U0, U1, U2, U3 = CT, -ST, ST, CT
    V0, V1, V2, V3 = CP, -SP, SP, CP
    CPmT = table_cos(P - T, tab)
    SPmT = table_sin(P - T, tab)
    C0 = fdiv(B0, CPmT) if abs(CPmT) > abs(SPmT) else fdiv(B3, SPmT)
    CPpT = table_cos(P + T, tab)
    SPpT = table_sin(P + T, tab)
    C1 = fdiv(B1, CPpT) if abs(CPpT) > abs(SPpT) else fdiv(B2, SPpT)
    e = (C0 + C1) / F2
    f = (C0 - C1) / F2
    if e < F0:
        e = -e
        U0 = -U0
        U2 = -U2
    if f < F0:
        f = -f
        U1 = -U1
        U3 = -U3
    if e > f:
        S0, S1 = e, f
    else:
        S0, S1 = f, e
        U0, U2, U1, U3 = U1, U3, U0, U2
        V0, V2, V1, V3 = V1, V3, V0, V2
    return U0, U1, U2, U3, S0, S1, V0, V1, V2, V3


@jitable
def _max_idx(B, row, maxcol):
    maxi = 0
    maxv = F(-1)
    for i in range(maxcol):
        if i == row:
            continue
        v = abs(B[row, i])
        if v > maxv:
            maxi = i
            maxv = v
    return maxi


@jitable
def _householder(v, vlen):
    """Normalise the reflection vector in place (``v[0] += sign * |v|``, then ``v *= 1/|v|``: the
    build's reciprocal); False when it is zero."""
    mag2 = F0
    for i in range(vlen):
        mag2 = mag2 + v[i] * v[i]
    oldv0 = v[0]
    root = fsqrt(mag2)
    v[0] = v[0] - root if oldv0 < F0 else v[0] + root
    mag2 = (mag2 + -oldv0 * oldv0) + v[0] * v[0]
    mag = fsqrt(mag2)
    if mag == F0:
        return False
    inv = F1 / mag
    for i in range(vlen):
        v[i] = inv * v[i]
    return True


@jitable
def _reflect_cols(M, col0, v, vlen):
    """Each row of ``M``: ``dot = row[col0:] . v``; ``row[col0 + j] -= 2 dot v[j]``."""
    for r in range(M.shape[0]):
        dot = F0
        for j in range(vlen):
            dot = dot + M[r, col0 + j] * v[j]
        two_dot = F2 * dot
        for j in range(vlen):
            M[r, col0 + j] = M[r, col0 + j] - two_dot * v[j]


@jitable
def _reflect_rows(M, row0, v, vlen):
    """Each column of ``M``: ``dot = col[row0:] . v``; ``col[row0 + j] -= 2 dot v[j]``."""
    for i in range(M.shape[1]):
        dot = F0
        for j in range(vlen):
            dot = dot + M[row0 + j, i] * v[j]
        two_dot = F2 * dot
        for j in range(vlen):
            M[row0 + j, i] = M[row0 + j, i] - two_dot * v[j]


@jitable
def _rotate_pair(M, i, j, r0, r1, r2, r3):
    """Columns i, j of every row of ``M`` through the 2x2 ``[r0 r1; r2 r3]``."""
    for r in range(M.shape[0]):
        vi = M[r, i]
        vj = M[r, j]
        M[r, i] = r0 * vi + r2 * vj
        M[r, j] = r1 * vi + r3 * vj


@jitable
def svd_tall(A, tab):
    """``matd_svd_tall`` (ncols <= nrows): Householder bidiagonalisation, at most 32 Jacobi steps on
    the largest off-diagonal element (tolerance 1e-5), a bubble sort of the diagonal by magnitude,
    sign fixes and the permutation products. Returns (U, S, V)."""
    nrows, ncols = A.shape
    B = A.copy()
    LS = identity(nrows)
    RS = identity(ncols)
    v = np.empty(max(nrows, ncols), np.float32)
    for hh in range(nrows):
        if hh < ncols:
            vlen = nrows - hh
            for i in range(vlen):
                v[i] = B[hh + i, hh]
            if not _householder(v, vlen):
                continue
            _reflect_cols(LS, hh, v, vlen)
            _reflect_rows(B, hh, v, vlen)
        if hh + 2 < ncols:
            vlen = ncols - hh - 1
            for i in range(vlen):
                v[i] = B[hh, hh + i + 1]
            if not _householder(v, vlen):
                continue
            _reflect_cols(RS, hh + 1, v, vlen)
            _reflect_cols(B, hh + 1, v, vlen)

    maxrowidx = np.zeros(ncols, np.int64)
    for i in range(2, ncols):
        maxrowidx[i] = _max_idx(B, i, ncols)
    lastmaxi = 0
    lastmaxj = 1
    for _ in range(SVD_MAXITERS):
        if ncols < 2:
            break
        maxi = -1
        maxv = F(-1)
        for rowi in range(ncols):
            if rowi == lastmaxi or rowi == lastmaxj or maxrowidx[rowi] == lastmaxi or maxrowidx[rowi] == lastmaxj:
                maxrowidx[rowi] = _max_idx(B, rowi, ncols)
                thismaxv = abs(B[rowi, maxrowidx[rowi]])
            else:
                thismaxv = abs(B[rowi, maxrowidx[rowi]])
                if lastmaxi != rowi:
                    v2 = abs(B[rowi, lastmaxi])
                    if v2 > thismaxv:
                        thismaxv = v2
                        maxrowidx[rowi] = lastmaxi
                if lastmaxj != rowi:
                    v2 = abs(B[rowi, lastmaxj])
                    if v2 > thismaxv:
                        thismaxv = v2
                        maxrowidx[rowi] = lastmaxj
            if thismaxv > maxv:
                maxv = thismaxv
                maxi = rowi
        maxj = maxrowidx[maxi]
        lastmaxi = maxi
        lastmaxj = maxj
        if maxv < SVD_TOL:
            break
        U0, U1, U2, U3, _s0, _s1, V0, V1, V2, V3 = svd22(B[maxi, maxi], B[maxi, maxj], B[maxj, maxi],
                                                          B[maxj, maxj], tab)
        _rotate_pair(LS, maxi, maxj, U0, U1, U2, U3)
        _rotate_pair(RS, maxi, maxj, V0, V1, V2, V3)
        for i in range(ncols):
            vi = B[maxi, i]
            vj = B[maxj, i]
            B[maxi, i] = U0 * vi + U2 * vj
            B[maxj, i] = U1 * vi + U3 * vj
        _rotate_pair(B, maxi, maxj, V0, V1, V2, V3)

    idxs = np.arange(ncols)
    vals = np.empty(ncols, np.float32)
    for i in range(ncols):
        vals[i] = B[i, i]
    changed = True
    while changed:
        changed = False
        for i in range(ncols - 1):
            if abs(vals[i + 1]) > abs(vals[i]):
                t = idxs[i]
                idxs[i] = idxs[i + 1]
                idxs[i + 1] = t
                tv = vals[i]
                vals[i] = vals[i + 1]
                vals[i + 1] = tv
                changed = True
    LP = identity(nrows)
    RP = identity(ncols)
    for i in range(ncols):
        LP[idxs[i], idxs[i]] = F0
        RP[idxs[i], idxs[i]] = F0
    for i in range(ncols):
        LP[idxs[i], i] = F(-1) if vals[i] < F0 else F1
        RP[idxs[i], i] = F1
    S = multiply(multiply(transpose(LP), B), RP)
    LS = multiply(LS, LP)
    RS = multiply(RS, RP)
    for i in range(S.shape[0]):
        for j in range(S.shape[1]):
            if i != j:
                S[i, j] = F0
    return LS, S, RS


@jitable
def svd(A, tab):
    """``matd_svd_flags``: tall matrices directly, wide ones through the transpose."""
    if A.shape[1] <= A.shape[0]:
        return svd_tall(A, tab)
    U, S, V = svd_tall(transpose(A), tab)
    return V, transpose(S), U


@jitable
def plu_singular(H):
    """Whether ``matd_plu`` calls the matrix singular (a pivot below MATD_EPS): ``matd_inverse``
    then fails and ``quad_update_homographies`` drops the quad."""
    n = H.shape[0]
    lu = H.copy()
    singular = False
    for j in range(n):
        for i in range(n):
            kmax = i if i < j else j
            acc = F0
            for k in range(kmax):
                acc = acc + lu[i, k] * lu[k, j]
            lu[i, j] = lu[i, j] - acc
        p = j
        for i in range(j + 1, n):
            if abs(lu[i, j]) > abs(lu[p, j]):
                p = i
        if p != j:
            for k in range(n):
                t = lu[p, k]
                lu[p, k] = lu[j, k]
                lu[j, k] = t
        lujj = lu[j, j]
        if abs(lujj) < MATD_EPS:
            singular = True
        if lujj != F0:
            lujj = F1 / lujj
            for i in range(j + 1, n):
                lu[i, j] = lu[i, j] * lujj
    return singular


# ---------------------------------------------------------------------------------- homographies
@jitable
def homography_compute(corr, tab):
    """``homography_compute`` (SVD flag) of (world x, world y, image x, image y) rows: the 9x9 normal
    matrix in float32, its last singular vector, the centring undone (``Ty * H * Tx``, left to
    right). Returns (H, ok): not ok when the normal matrix is not finite."""
    n = corr.shape[0]
    s0 = s1 = s2 = s3 = F0
    for i in range(n):
        s0 = s0 + corr[i, 0]
        s1 = s1 + corr[i, 1]
        s2 = s2 + corr[i, 2]
        s3 = s3 + corr[i, 3]
    fn = F(n)
    x_cx = s0 / fn
    x_cy = s1 / fn
    y_cx = s2 / fn
    y_cy = s3 / fn
    A = np.zeros((9, 9), np.float32)
    r = np.zeros((3, 9), np.float32)
    for i in range(n):
        wx = corr[i, 0] - x_cx
        wy = corr[i, 1] - x_cy
        ix = corr[i, 2] - y_cx
        iy = corr[i, 3] - y_cy
        # the three rows of the correspondence's equations (apriltag.c's a0*, a1*, a2*); their
        # zero entries add nothing, so the upper triangle of each row's outer product is the C's sums
        r[0, 3] = -wx
        r[0, 4] = -wy
        r[0, 5] = F(-1)
        r[0, 6] = wx * iy
        r[0, 7] = wy * iy
        r[0, 8] = iy
        r[1, 0] = wx
        r[1, 1] = wy
        r[1, 2] = F1
        r[1, 6] = -wx * ix
        r[1, 7] = -wy * ix
        r[1, 8] = -ix
        r[2, 0] = -wx * iy
        r[2, 1] = -wy * iy
        r[2, 2] = -iy
        r[2, 3] = wx * ix
        r[2, 4] = wy * ix
        r[2, 5] = ix
        for row in range(3):
            for a in range(9):
                ra = r[row, a]
                if ra == F0:
                    continue
                for b in range(a, 9):
                    if r[row, b] != F0:
                        A[a, b] = A[a, b] + ra * r[row, b]
    H = np.zeros((3, 3), np.float32)
    for a in range(9):
        for b in range(9):
            if b < a:
                A[a, b] = A[b, a]
            if not (A[a, b] - A[a, b] == F0):  # inf or NaN
                return H, False
    U, _S, _V = svd(A, tab)
    for i in range(3):
        for j in range(3):
            H[i, j] = U[3 * i + j, 8]
    Tx = identity(3)
    Tx[0, 2] = -x_cx
    Tx[1, 2] = -x_cy
    Ty = identity(3)
    Ty[0, 2] = y_cx
    Ty[1, 2] = y_cy
    return multiply(multiply(Ty, H), Tx), True


@jitable
def project(H, x, y):
    """``homography_project`` as GCC -Os -ffast-math emits it: rows 1 and 2 (the ones indexed
    through ``H->ncols``) summed as ``(H[r][0]*x + H[r][2]) + H[r][1]*y``, two divisions by zz."""
    xx = H[0, 0] * x + H[0, 1] * y + H[0, 2]
    yy = (H[1, 0] * x + H[1, 2]) + H[1, 1] * y
    zz = (H[2, 0] * x + H[2, 2]) + H[2, 1] * y
    return fdiv(xx, zz), fdiv(yy, zz)


@jitable
def homography_to_pose(H, fx, fy, cx, cy, tab):
    """``homography_to_pose``: the rotation columns and translation from H and the camera, scaled to
    unit columns (sign so the tag is in front), the third column as the cross product, the rotation
    made orthonormal with the SVD (``R = U * V'``). A 4x4 float32 pose."""
    R20 = H[2, 0]
    R21 = H[2, 1]
    TZ = H[2, 2]
    R00 = fdiv(H[0, 0] - cx * R20, fx)
    R01 = fdiv(H[0, 1] - cx * R21, fx)
    TX = fdiv(H[0, 2] - cx * TZ, fx)
    R10 = fdiv(H[1, 0] - cy * R20, fy)
    R11 = fdiv(H[1, 1] - cy * R21, fy)
    TY = fdiv(H[1, 2] - cy * TZ, fy)
    length1 = fsqrt(R00 * R00 + R10 * R10 + R20 * R20)
    length2 = fsqrt(R01 * R01 + R11 * R11 + R21 * R21)
    s = fdiv(F1, fsqrt(length1 * length2))
    if TZ > F0:
        s = s * F(-1)
    R20 = R20 * s
    R21 = R21 * s
    TZ = TZ * s
    R00 = R00 * s
    R01 = R01 * s
    TX = TX * s
    R10 = R10 * s
    R11 = R11 * s
    TY = TY * s
    M = np.empty((3, 3), np.float32)
    M[0, 0] = R00
    M[0, 1] = R01
    M[0, 2] = R10 * R21 - R20 * R11
    M[1, 0] = R10
    M[1, 1] = R11
    M[1, 2] = R20 * R01 - R00 * R21
    M[2, 0] = R20
    M[2, 1] = R21
    M[2, 2] = R00 * R11 - R10 * R01
    U, _S, V = svd(M, tab)
    R = multiply(U, transpose(V))
    pose = np.zeros((4, 4), np.float32)
    for i in range(3):
        for j in range(3):
            pose[i, j] = R[i, j]
    pose[0, 3] = TX
    pose[1, 3] = TY
    pose[2, 3] = TZ
    pose[3, 3] = F1
    return pose


# ---------------------------------------------------------------------------------- decoding
@jitable
def graymodel_add(A, B, x, y, g):
    """``graymodel_add``: the upper triangle of J'J (00 01 02 11 12 22) and J'g."""
    A[0] = A[0] + x * x
    A[1] = A[1] + x * y
    A[2] = A[2] + x
    A[3] = A[3] + y * y
    A[4] = A[4] + y
    A[5] = A[5] + F1
    B[0] = B[0] + x * g
    B[1] = B[1] + y * g
    B[2] = B[2] + g


@jitable
def graymodel_solve(A, B, C):
    """``mat33_sym_solve``: Cholesky of the upper-triangle A, its triangular inverse, two products;
    -ffast-math folds ``M0*(M0*B0)`` into ``B0*(M0*M0)`` (a "powmult")."""
    L0 = fsqrt(A[0])
    L3 = fdiv(A[1], L0)
    L6 = fdiv(A[2], L0)
    L4 = fsqrt(A[3] - L3 * L3)
    L7 = fdiv(A[4] - L3 * L6, L4)
    L8 = fsqrt(A[5] - L6 * L6 - L7 * L7)
    M0 = fdiv(F1, L0)
    M3 = fdiv(-L3 * M0, L4)
    M4 = fdiv(F1, L4)
    M6 = fdiv(-L6 * M0 - L7 * M3, L8)
    M7 = fdiv(-L7 * M4, L8)
    M8 = fdiv(F1, L8)
    t1 = M3 * B[0] + M4 * B[1]
    t2 = M6 * B[0] + M7 * B[1] + M8 * B[2]
    C[0] = B[0] * (M0 * M0) + M3 * t1 + M6 * t2
    C[1] = M4 * t1 + M7 * t2
    C[2] = M8 * t2


@jitable
def graymodel_interpolate(C, x, y):
    return C[0] * x + C[1] * y + C[2]


@jitable
def popcount(x):
    """The bits set in a non-negative int64 (``popcount64c``'s count, without its wrapping multiply)."""
    c = 0
    while x:
        x &= x - 1
        c += 1
    return c


@jitable
def rotate90(w, d):
    """``rotate90``: the d x d bit grid of ``w`` turned a quarter."""
    wr = 0
    for r in range(d - 1, -1, -1):
        for c in range(d):
            b = r + d * c
            wr = (wr << 1) | ((w >> b) & 1)
    return wr


@jitable
def quick_decode(codes, start, count, d, h, rcode):
    """``quick_decode_codeword``: the first code of the family within ``max(h - d - 1, 0)`` bits of
    ``rcode`` turned 0..3 quarters: (id, hamming, rotation), or (-1, 255, 0)."""
    threshold = max(h - d - 1, 0)
    for ridx in range(4):
        for i in range(count):
            ham = popcount(codes[start + i] ^ rcode)
            if ham <= threshold:
                return i, ham, ridx
        rcode = rotate90(rcode, d)
    return -1, 255, 0


@jitable
def quad_decode(im, H, d, h, codes, start, count):
    """``quad_decode``: (decision margin, id, hamming, rotation); id -1 when no code decodes, margin -1
    when the border's white model is darker than its black one."""
    ih, iw = im.shape
    n = F(d + 2)
    white_a = np.zeros(6, np.float32)
    white_b = np.zeros(3, np.float32)
    white_c = np.zeros(3, np.float32)
    black_a = np.zeros(6, np.float32)
    black_b = np.zeros(3, np.float32)
    black_c = np.zeros(3, np.float32)
    # the 8 border patterns (x0, y0, dx, dy, white?) with black_border 1 and white_border 1
    for pat in range(8):
        if pat < 4:
            p0 = (F0 - HALF, F0 + HALF, F(d + 2) + HALF, F(d + 2) - HALF)[pat]
            p1 = HALF
            p2 = F0
            p3 = F1
        else:
            p0 = HALF
            p1 = (-HALF, HALF, F(d + 2) + HALF, F(d + 2) - HALF)[pat - 4]
            p2 = F1
            p3 = F0
        is_white = pat % 2 == 0
        for i in range(d + 2):
            fi = F(i)
            tagx = F2 * ((p0 + fi * p2) / n - HALF)
            tagy = F2 * ((p1 + fi * p3) / n - HALF)
            px, py = project(H, tagx, tagy)
            ix = to_int(px)
            iy = to_int(py)
            if ix < 0 or iy < 0 or ix >= iw or iy >= ih:
                continue
            if is_white:
                graymodel_add(white_a, white_b, tagx, tagy, F(im[iy, ix]))
            else:
                graymodel_add(black_a, black_b, tagx, tagy, F(im[iy, ix]))
    graymodel_solve(white_a, white_b, white_c)
    graymodel_solve(black_a, black_b, black_c)
    if graymodel_interpolate(white_c, F0, F0) - graymodel_interpolate(black_c, F0, F0) < F0:
        return F(-1), -1, 255, 0
    black_score = F0
    white_score = F0
    black_count = F1
    white_count = F1
    rcode = 0
    for bitidx in range(d * d):
        bitx = bitidx % d
        bity = bitidx // d
        tagx = F2 * ((F1 + F(bitx) + HALF) / n - HALF)
        tagy = F2 * ((F1 + F(bity) + HALF) / n - HALF)
        px, py = project(H, tagx, tagy)
        rcode = rcode << 1
        ix = to_int(px)
        iy = to_int(py)
        if ix < 0 or iy < 0 or ix >= iw or iy >= ih:
            continue
        v = F(im[iy, ix])
        thresh = (graymodel_interpolate(black_c, tagx, tagy) + graymodel_interpolate(white_c, tagx, tagy)) / F2
        # ``score += v - thresh`` as -ffast-math reassociates it: ``(v + score) - thresh`` for white,
        # ``(score - v) + thresh`` for black
        if v > thresh:
            white_score = (v + white_score) - thresh
            white_count = white_count + F1
            rcode |= 1
        else:
            black_score = (black_score - v) + thresh
            black_count = black_count + F1
    tag_id, hamming, rotation = quick_decode(codes, start, count, d, h, rcode)
    a = white_score / white_count
    b = black_score / black_count
    return (a if a < b else b), tag_id, hamming, rotation


@kernel
def decode_quads(im, quads, codes, fam_d, fam_h, fam_start, fam_count, rot_cs, tab):
    """``apriltag_detector_detect``'s loop: each quad's edges refined (in place), its homography,
    dropped when singular, then decoded with each family in order. Returns (family index, id,
    hamming, margin, H, centre, corners) arrays of the detections; H is turned by the decoded
    rotation (``rot_cs``: the table cos/sin of -r pi/2) and the centre and corners are its
    projections of (0, 0) and (-1, 1), (1, 1), (1, -1), (-1, -1)."""
    nq = quads.shape[0]
    nf = fam_d.size
    cap = nq * nf
    fam = np.empty(cap, np.int64)
    ids = np.empty(cap, np.int64)
    ham = np.empty(cap, np.int64)
    margins = np.empty(cap, np.float32)
    Hs = np.empty((cap, 3, 3), np.float32)
    centres = np.empty((cap, 2), np.float32)
    corners = np.empty((cap, 4, 2), np.float32)
    corr = np.empty((4, 4), np.float32)
    R = np.zeros((3, 3), np.float32)
    nd = 0
    for qi in range(nq):
        q = quads[qi]
        refine_edges(im, q)
        for i in range(4):
            corr[i, 0] = F(-1) if i == 0 or i == 3 else F1
            corr[i, 1] = F(-1) if i == 0 or i == 1 else F1
            corr[i, 2] = q[i, 0]
            corr[i, 3] = q[i, 1]
        H, ok = homography_compute(corr, tab)
        if not ok or plu_singular(H):
            continue
        for f in range(nf):
            margin, tag_id, hamming, rotation = quad_decode(im, H, fam_d[f], fam_h[f], codes, fam_start[f],
                                                            fam_count[f])
            if tag_id < 0 or not margin >= F0:
                continue
            c = rot_cs[rotation, 0]
            s = rot_cs[rotation, 1]
            R[0, 0] = c
            R[0, 1] = -s
            R[1, 0] = s
            R[1, 1] = c
            R[2, 2] = F1
            DH = multiply(H, R)
            fam[nd] = f
            ids[nd] = tag_id
            ham[nd] = hamming
            margins[nd] = margin
            Hs[nd] = DH
            centres[nd, 0], centres[nd, 1] = project(DH, F0, F0)
            for i in range(4):
                tcx = F1 if i == 1 or i == 2 else F(-1)
                tcy = F1 if i < 2 else F(-1)
                corners[nd, i, 0], corners[nd, i, 1] = project(DH, tcx, tcy)
            nd += 1
    return (fam[:nd].copy(), ids[:nd].copy(), ham[:nd].copy(), margins[:nd].copy(), Hs[:nd].copy(),
            centres[:nd].copy(), corners[:nd].copy())


@kernel
def tag_poses(Hs, fx, fy, cx, cy, tab):
    """``imlib_find_apriltags``' pose of each detection: ``homography_to_pose(H, -fx, fy, cx, cy)``,
    then the rotations ``fast_atan2f(R21, R22)``, ``fast_atan2f(-R20, sqrt(R21^2 + R22^2))``,
    ``fast_atan2f(R10, R00)``. Returns ((n, 4, 4) poses, (n, 3) rotations)."""
    n = Hs.shape[0]
    poses = np.empty((n, 4, 4), np.float32)
    rotations = np.empty((n, 3), np.float32)
    for i in range(n):
        pose = homography_to_pose(Hs[i], -fx, fy, cx, cy, tab)
        poses[i] = pose
        rotations[i, 0] = fast_atan2f(pose[2, 1], pose[2, 2])
        rotations[i, 1] = fast_atan2f(-pose[2, 0], fsqrt(pose[2, 1] * pose[2, 1] + pose[2, 2] * pose[2, 2]))
        rotations[i, 2] = fast_atan2f(pose[1, 0], pose[0, 0])
    return poses, rotations
