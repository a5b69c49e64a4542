"""``find_line_segments``: the LSD port in the firmware (``lsd.c``) and its segment merging
(``merge_alot`` in line.c).

OpenMV's LSD runs in float32 (``#define double float``) with the fast approximations for sqrt,
atan2, exp and log, libm's ``cosf``/``sinf``/``log10f``/``powf``/``sinhf``, no Gaussian
sub-sampling (the scale step is commented out), and it keeps the gradient angles and norms in
``int16`` images (angles in whole degrees, norms truncated). The firmware is built with
``-ffast-math``; where that build evaluates an expression differently from its source the code
below follows the build (the reference is the golden build with LSD's NaN guards kept).

The region growing, rectangle iteration and NFA are sequential by nature; they run per region
in Python (the gradient field and the pseudo-ordering are vectorised).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import _args
from . import _fmath as fm
from ._fmath import F, fast_atan2f, ftoi, lb_clip_line, line_length
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)
from ._host import ImageHost

PI = F(math.pi)
NOTDEF = F(-512.0)
M_3_2_PI = F(4.71238898038)
M_2__PI = F(6.28318530718)
DEG = F(180.0) / PI  # radToDeg's folded constant
RAD = PI / F(180.0)  # degToRad's folded constant
FLT_EPS = F(np.finfo(np.float32).eps)
FLT_MIN = F(np.finfo(np.float32).tiny)
FLT_MAX = F(np.finfo(np.float32).max)


def _atan2(y, x) -> np.float32:
    return fm.fast_atan2f_1(y, x)


def _log(x) -> np.float32:
    return fm.fast_log_1(x)




def _libm_f(name: str, nargs: int = 1):
    import ctypes
    import ctypes.util

    try:
        fn = getattr(ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6"), name)
        fn.restype, fn.argtypes = ctypes.c_float, [ctypes.c_float] * nargs
        return fn
    except (OSError, AttributeError):  # pragma: no cover - no C library: double precision, rounded
        return None


_SINHF = _libm_f("sinhf")
_LOG10F = _libm_f("log10f")
_POWF = _libm_f("powf", 2)


def _log10(x) -> np.float32:
    """libm ``log10f`` (glibc's, which the golden build used; double precision rounded elsewhere)."""
    if _LOG10F is not None:
        return F(_LOG10F(float(F(x))))
    return F(math.log10(float(F(x))))


def _pow(x, y) -> np.float32:
    """libm ``powf``."""
    if _POWF is not None:
        return F(_POWF(float(F(x)), float(F(y))))
    try:
        return F(math.pow(float(F(x)), float(F(y))))
    except (OverflowError, ValueError):
        return F(np.float32(np.power(np.float64(x), np.float64(y))))


def _sinh(x) -> np.float32:
    """libm ``sinhf`` (the golden values come from glibc's)."""
    if _SINHF is not None:
        return F(_SINHF(float(F(x))))
    return F(math.sinh(float(F(x))))


def _sqrt(x) -> np.float32:
    with np.errstate(invalid="ignore"):
        return F(np.sqrt(F(x)))


def _double_equal(a, b) -> bool:
    if a == b:
        return True
    abs_diff = abs(F(a - b))
    aa, bb = abs(F(a)), abs(F(b))
    abs_max = aa if aa > bb else bb
    if abs_max < FLT_MIN:
        abs_max = FLT_MIN
    return (abs_diff / abs_max) <= (F(100.0) * FLT_EPS)


def _dist(x1, y1, x2, y2) -> np.float32:
    dx, dy = F(x2) - F(x1), F(y2) - F(y1)
    return _sqrt(dx * dx + dy * dy)


def _angle_diff(a, b, signed=False) -> np.float32:
    a = F(a) - F(b)
    while a <= -PI:
        a = a + M_2__PI
    while a > PI:
        a = a - M_2__PI
    if not signed and a < 0:
        a = -a
    return a


# ---------------------------------------------------------------------- log gamma / NFA
_NEG_INV_LN10 = F(-1.0) / F(2.30258509299404568402)
_Q = [F(v) for v in (75122.6331530, 80916.6278952, 36308.2951477, 8687.24529705, 1168.92649479,
                     83.8676043424, 2.50662827511)]


def _log_gamma(x) -> np.float32:
    """``log_gamma`` (Lanczos below 15, Windschitl above) of a float32 — memoised: the NFA asks for the
    same few integer arguments over and over."""
    return _log_gamma_cached(float(F(x)))


@functools.lru_cache(maxsize=4096)
def _log_gamma_cached(xf: float) -> np.float32:
    x = F(xf)
    if x > F(15.0):
        # Windschitl, as the -ffast-math build evaluates it: 1/(810 x^6) becomes (1/810) x^-6 and
        # the sum is regrouped
        inner = _sinh(F(1.0) / x) * x + (F(1.0) / F(810.0)) * _pow(x, F(-6.0))
        return _log(inner) * (F(0.5) * x) + ((x - F(0.5)) * _log(x) + (F(0.918938533204673) - x))
    a = (x + F(0.5)) * _log(x + F(5.5)) - (x + F(5.5))
    b = F(0.0)
    for n in range(7):
        a = a - _log(x + F(n))
        b = b + _Q[n] * _pow(x, F(n))
    return a + _log(b)


def nfa(n: int, k: int, p, logNT) -> np.float32:
    p, logNT = F(p), F(logNT)
    if n == 0 or k == 0:
        return -logNT
    if n == k:
        return -logNT - F(n) * _log10(p)
    p_term = p / (F(1.0) - p)
    log1term = (_log_gamma(F(n) + F(1.0)) - _log_gamma(F(k) + F(1.0)) - _log_gamma(F(n - k) + F(1.0))
                + F(k) * _log(p) + F(n - k) * _log(F(1.0) - p))
    term = fm.fast_expf_1(log1term)
    if _double_equal(term, F(0.0)):
        if F(k) > F(n) * p:
            return log1term * _NEG_INV_LN10 - logNT  # the build multiplies by -1/ln(10)
        return -logNT
    bin_tail = term
    for i in range(k + 1, n + 1):
        bin_term = F(n - i + 1) * (F(1.0) / F(i))
        mult_term = bin_term * p_term
        term = term * mult_term
        bin_tail = bin_tail + term
        if bin_term < F(1.0):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                err = term * ((F(1.0) - _pow(mult_term, F(n - i + 1))) / (F(1.0) - mult_term) - F(1.0))
                if err < abs(_log10(bin_tail) + logNT) * (bin_tail * F(0.1)):  # as the build groups it
                    break
    return -_log10(bin_tail) - logNT


# ---------------------------------------------------------------------- rectangles
class _Rect:
    """LSD's ``struct rect`` (float32 fields, as the firmware's ``float``)."""

    __slots__ = ("x1", "y1", "x2", "y2", "width", "x", "y", "theta", "dx", "dy", "prec", "p")
    x1: np.float32
    y1: np.float32
    x2: np.float32
    y2: np.float32
    width: np.float32
    x: np.float32
    y: np.float32
    theta: np.float32
    dx: np.float32
    dy: np.float32
    prec: np.float32
    p: np.float32

    def copy(self) -> "_Rect":
        r = _Rect()
        for k in self.__slots__:
            setattr(r, k, getattr(self, k))
        return r


def _inter(x, x1, y1, x2, y2, low: bool) -> np.float32:
    if _double_equal(x1, x2) and y1 < y2:
        return y1 if low else y2
    if _double_equal(x1, x2) and y1 > y2:
        return y2 if low else y1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        result = y1 + (x - x1) * (y2 - y1) / (x2 - x1)
    if np.isnan(result) or np.isinf(result):
        if low:
            return y1 if y1 < y2 else (y2 if y1 > y2 else F(0))
        return y2 if y1 < y2 else (y1 if y1 > y2 else F(0))
    return F(result)


def _rect_corners(r: _Rect) -> tuple[np.ndarray, np.ndarray]:
    """``ri_ini``'s corner order: the four corners of the rectangle, starting at the lowest-x one."""
    hy = r.dy * r.width / F(2.0)  # ``r->dy * r->width / 2.0``
    hx = r.dx * r.width / F(2.0)
    vx = [r.x1 - hy, r.x2 - hy, r.x2 + hy, r.x1 + hy]
    vy = [r.y1 + hx, r.y2 + hx, r.y2 - hx, r.y1 - hx]
    if r.x1 < r.x2 and r.y1 <= r.y2:
        off = 0
    elif r.x1 >= r.x2 and r.y1 < r.y2:
        off = 1
    elif r.x1 > r.x2 and r.y1 >= r.y2:
        off = 2
    else:
        off = 3
    return (np.array([vx[(off + n) % 4] for n in range(4)], F), np.array([vy[(off + n) % 4] for n in range(4)], F))


@kernel
def _rect_count(angles, vx, vy, theta, prec):
    """``ri_ini``/``ri_inc`` over the rectangle with ``isaligned`` on each pixel inside the image:
    (pixels, aligned pixels); (-1, -1) when the scan would not end (a NaN rectangle)."""
    f32 = np.float32
    h, w = angles.shape
    flt_max = f32(3.4028234663852886e38)
    flt_min = f32(1.1754943508222875e-38)
    flt_eps = f32(1.1920928955078125e-07)
    rad = f32(np.pi) / f32(180.0)
    notdef = f32(-512.0)
    three_half_pi = f32(4.71238898038)
    two_pi = f32(6.28318530718)

    def to_int(v):
        if v != v or v >= f32(2147483647.0):
            return 2147483647
        if v <= f32(-2147483648.0):
            return -2147483648
        return int(v)

    def double_equal(a, b):
        if a == b:
            return True
        abs_diff = abs(a - b)
        aa = abs(a)
        bb = abs(b)
        abs_max = aa if aa > bb else bb
        if abs_max < flt_min:
            abs_max = flt_min
        return (abs_diff / abs_max) <= (f32(100.0) * flt_eps)

    def inter(x, x1, y1, x2, y2, low):
        if double_equal(x1, x2) and y1 < y2:
            return y1 if low else y2
        if double_equal(x1, x2) and y1 > y2:
            return y2 if low else y1
        den = x2 - x1
        bad = den == f32(0)
        result = f32(0)
        if not bad:
            result = y1 + (x - x1) * (y2 - y1) / den
            bad = result != result or abs(result) > flt_max  # NaN or infinite
        if bad:
            if low:
                return y1 if y1 < y2 else (y2 if y1 > y2 else f32(0))
            return y2 if y1 < y2 else (y1 if y1 > y2 else f32(0))
        return result

    x = to_int(vx[0] + f32(0.9999)) - 1
    y = to_int(vy[0] + f32(0.9999))
    ys = -flt_max
    ye = -flt_max
    pts = 0
    alg = 0
    steps = 0
    while True:
        # ri_inc
        if not (f32(x) > vx[2]):
            y += 1
            while f32(y) > ye and not (f32(x) > vx[2]):
                x += 1
                if f32(x) > vx[2]:
                    break
                fx = f32(x)
                if fx < vx[3]:
                    ys = inter(fx, vx[0], vy[0], vx[3], vy[3], True)
                else:
                    ys = inter(fx, vx[3], vy[3], vx[2], vy[2], True)
                if fx < vx[1]:
                    ye = inter(fx, vx[0], vy[0], vx[1], vy[1], False)
                else:
                    ye = inter(fx, vx[1], vy[1], vx[2], vy[2], False)
                y = to_int(ys + f32(0.9999))
        if f32(x) > vx[2]:
            return pts, alg
        if 0 <= x < w and 0 <= y < h:
            pts += 1
            a = f32(angles[y, x]) * rad
            if a != notdef:
                t = theta - a
                if t < f32(0):
                    t = -t
                if t > three_half_pi:
                    t = t - two_pi
                    if t < f32(0):
                        t = -t
                if t <= prec:
                    alg += 1
        steps += 1
        if steps > 10_000_000:
            return -1, -1


def _rect_pixels(r: _Rect):
    """The pixels the rectangle iterator (``ri_ini``/``ri_inc``) visits, in order (the reference the
    ``_rect_count`` kernel is tested against)."""
    vx, vy = (list(v) for v in _rect_corners(r))
    x = ftoi(F(vx[0]) + F(0.9999)) - 1
    y = ftoi(F(vy[0]) + F(0.9999))
    ys = ye = -FLT_MAX
    out = []

    def end():
        return F(x) > vx[2]

    def inc():
        nonlocal x, y, ys, ye
        if not end():
            y += 1
        while F(y) > ye and not end():
            x += 1
            if end():
                return
            fx = F(x)
            ys = _inter(fx, vx[0], vy[0], vx[3], vy[3], True) if fx < vx[3] else \
                _inter(fx, vx[3], vy[3], vx[2], vy[2], True)
            ye = _inter(fx, vx[0], vy[0], vx[1], vy[1], False) if fx < vx[1] else \
                _inter(fx, vx[1], vy[1], vx[2], vy[2], False)
            y = ftoi(F(ys) + F(0.9999))

    inc()
    guard = 0
    while not end():
        out.append((x, y))
        inc()
        guard += 1
        if guard > 10_000_000:  # a NaN rectangle: the device loops forever here
            raise RuntimeError("find_line_segments: the firmware's rectangle scan does not end here")
    return out


@functools.lru_cache(maxsize=None)
def _seed_trig(deg: int) -> tuple[np.float32, np.float32]:
    """libm ``cosf``/``sinf`` of ``deg * RAD`` (a constant per whole degree)."""
    r = float(F(deg) * RAD)
    return fm.cosf(r), fm.sinf(r)


def seed_cos_sin(angles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tables of libm ``cosf``/``sinf`` of every angle in ``angles`` (int16 degrees, index
    ``deg + 32768``; other entries 0): ``region_grow`` starts its sums with the seed's, so the
    compiled seed scan reads the firmware's own values from a table instead of calling the C
    library. An image holds a few hundred distinct angles (0..360, the border's -512, NOTDEF's
    -29335, which reads back as an angle too); each degree's values are computed once per process."""
    cos0 = np.zeros(65536, F)
    sin0 = np.zeros(65536, F)
    present = np.flatnonzero(np.bincount(angles.ravel() + 32768, minlength=65536))
    for index in present.tolist():
        cos0[index], sin0[index] = _seed_trig(index - 32768)
    return cos0, sin0


@kernel
def _grow(angles, used, cos_t, sin_t, cos0, sin0, seeds_x, seeds_y, start, min_size, prec, reg_x, reg_y):
    """``region_grow`` from the seeds ``start, start + 1, ...`` in turn (numba when installed, this
    Python otherwise): a seed already used or without an angle is skipped, a region smaller than
    ``min_size`` is dropped (its pixels stay used, as in the firmware's main loop); returns (index of
    the seed whose region is kept or ``len(seeds_x)``, its pixel count, its angle). The region's
    pixels are ``reg_x/reg_y[:count]``. The float32 steps are the firmware's: the seed's libm
    cos/sin (``cos0``/``sin0``, by degree), the table cos/sin sums, ``fast_atan2f``, ``isaligned``."""
    f32 = np.float32
    h, w = used.shape
    rad = f32(np.pi) / f32(180.0)
    notdef = f32(-512.0)
    three_half_pi = f32(4.71238898038)
    two_pi = f32(6.28318530718)
    pi = f32(np.pi)

    def atanf(xx):
        neg = xx < f32(0)
        v = -xx if neg else xx
        if v > f32(2.414213562373095):
            yv = f32(np.pi / 2)
            xr = -(f32(1) / v)
        elif v > f32(0.4142135623730950):
            yv = f32(np.pi / 4)
            xr = (v - f32(1)) / (v + f32(1))
        else:
            yv = f32(0)
            xr = v
        z = xr * xr
        poly = ((((f32(8.05374449538e-2) * z - f32(1.38776856032e-1)) * z + f32(1.99777106478e-1)) * z
                 - f32(3.33329491539e-1)) * z + f32(1)) * xr
        yv = poly + yv
        return -yv if neg else yv

    def atan2(yy, xx):
        if xx > f32(0) and yy >= f32(0):
            return atanf(yy / xx)
        if xx < f32(0) and yy >= f32(0):
            return pi - atanf(-(yy / xx))
        if xx < f32(0) and yy < f32(0):
            return pi + atanf(yy / xx)
        if xx > f32(0) and yy < f32(0):
            return f32(f32(2) * pi) - atanf(-(yy / xx))
        if yy == f32(0):
            return f32(0)
        return pi if yy > f32(0) else -pi

    n_seeds = seeds_x.shape[0]
    k = start
    while k < n_seeds:
        x = seeds_x[k]
        y = seeds_y[k]
        reg_angle = f32(angles[y, x]) * rad
        if used[y, x] != 0 or reg_angle == notdef:
            k += 1
            continue
        sumdx = cos0[angles[y, x] + 32768]
        sumdy = sin0[angles[y, x] + 32768]
        reg_x[0] = x
        reg_y[0] = y
        count = 1
        used[y, x] = 1
        i = 0
        while i < count:
            rx = reg_x[i]
            ry = reg_y[i]
            for xx in range(rx - 1, rx + 2):
                for yy in range(ry - 1, ry + 2):
                    if 0 <= xx < w and 0 <= yy < h and used[yy, xx] == 0:
                        a = f32(angles[yy, xx]) * rad
                        if a == notdef:
                            continue
                        theta = reg_angle - a
                        if theta < f32(0):
                            theta = -theta
                        if theta > three_half_pi:
                            theta = theta - two_pi
                            if theta < f32(0):
                                theta = -theta
                        if theta <= prec:
                            used[yy, xx] = 1
                            reg_x[count] = xx
                            reg_y[count] = yy
                            count += 1
                            deg = angles[yy, xx] % 360
                            sumdx = sumdx + cos_t[deg]
                            sumdy = sumdy + sin_t[deg]
                            reg_angle = atan2(sumdy, sumdx)
            i += 1
        if count >= min_size:
            return k, count, reg_angle
        k += 1
    return n_seeds, 0, f32(0)


class _LSD:
    def __init__(self, gray: np.ndarray):
        self.h, self.w = gray.shape
        self.ang_th = F(22.5)
        self.prec = PI * self.ang_th / F(180.0)
        self.p = self.ang_th / F(180.0)
        self.rho = F(2.0) / fm.sinf(self.prec)
        self._ll_angle(gray)

    def _ll_angle(self, gray):
        """``ll_angle``: the compiled pass (``_lsd_angles``) where it is served, else the arrays."""
        if compiled() and self.h > 0 and self.w > 0 and self._ll_angle_compiled(gray):
            self.seed_cos, self.seed_sin = seed_cos_sin(self.angles)
            return
        self._ll_angle_arrays(gray)

    def _ll_angle_compiled(self, gray) -> bool:
        from ._lsd_angles import _ll_angle

        n, p = self.h, self.w
        angles = np.empty((n, p), np.int64)
        modgrad = np.empty((n, p), np.int64)
        seeds = max(n - 1, 0) * max(p - 1, 0)
        seeds_x = np.empty(seeds, np.int64)
        seeds_y = np.empty(seeds, np.int64)
        if _ll_angle.attempt(np.ascontiguousarray(gray, np.uint8), F(self.rho), F(DEG),
                             int(np.int16(ftoi(NOTDEF * DEG))), int(np.int16(ftoi(NOTDEF))), angles, modgrad,
                             seeds_x, seeds_y) is NOT_SERVED:
            return False
        self.angles, self.modgrad, self.seeds_x, self.seeds_y = angles, modgrad, seeds_x, seeds_y
        return True

    def _ll_angle_arrays(self, gray):
        """``ll_angle`` as array code (the float32 steps of the compiled pass)."""
        n, p = self.h, self.w
        g = gray.astype(np.int64)
        angles = np.zeros((n, p), np.int64)
        modgrad = np.zeros((n, p), np.int64)
        notdef = int(np.int16(ftoi(NOTDEF * DEG)))
        angles[n - 1, :] = int(np.int16(ftoi(NOTDEF)))
        angles[:, p - 1] = int(np.int16(ftoi(NOTDEF)))
        A, B = g[:-1, :-1], g[:-1, 1:]
        C, D = g[1:, :-1], g[1:, 1:]
        com1 = (D - A).astype(F)
        com2 = (B - C).astype(F)
        gx = com1 + com2
        gy = com1 - com2
        norm = np.sqrt((gx * gx + gy * gy) / F(4.0)).astype(F)
        modgrad[:-1, :-1] = norm.astype(np.int64)  # int16 store (truncation)
        defined = ~(norm <= self.rho)
        ang = fast_atan2f(gx, -gy) * DEG
        angles[:-1, :-1] = np.where(defined, ang.astype(np.int64), notdef)
        max_grad = F(norm[defined].max()) if defined.any() else F(0)
        self.angles = angles.astype(np.int16).astype(np.int64)
        self.modgrad = modgrad
        # pseudo-ordering: bins of the (int) norm, highest bin first, inside a bin x-major order
        nb = 1024
        nv = modgrad[:-1, :-1].astype(F)
        with np.errstate(divide="ignore", invalid="ignore"):
            idx = (nv * F(nb) / max_grad)
        idx = np.where(np.isfinite(idx), idx, 0)
        b = np.minimum(idx.astype(np.int64), nb - 1)
        yy, xx = np.mgrid[0:n - 1, 0:p - 1]
        # (x, y) order is the transposed raster order, so a stable sort by the bin alone keeps it
        # (numpy sorts 16-bit keys stably by radix: linear time, where lexsort compared triples)
        order = np.argsort((nb - 1 - b.T.ravel()).astype(np.uint16), kind="stable")
        self.seeds_x = np.ascontiguousarray(xx.T.ravel()[order], np.int64)
        self.seeds_y = np.ascontiguousarray(yy.T.ravel()[order], np.int64)
        self.seed_cos, self.seed_sin = seed_cos_sin(self.angles)

    def angle_rad(self, x, y) -> np.float32:
        return F(self.angles[y, x]) * RAD

    def isaligned(self, x, y, theta, prec) -> bool:
        a = self.angle_rad(x, y)
        if a == NOTDEF:
            return False
        theta = F(theta) - a
        if theta < 0:
            theta = -theta
        if theta > M_3_2_PI:
            theta = theta - M_2__PI
            if theta < 0:
                theta = -theta
        return bool(theta <= prec)

    def grow_next(self, seeds_x, seeds_y, start: int, min_size: int, prec):
        """The next seed from ``start`` on whose region (``region_grow``: the 8-connected aligned
        pixels, the region angle updated after each one) has ``min_size`` pixels: (its index or
        ``len(seeds_x)``, the region's pixels, its angle)."""
        cos0, sin0 = self.seed_cos, self.seed_sin
        k, count, reg_angle = _grow(self.angles, self.used, fm.COS, fm.SIN, cos0, sin0, seeds_x, seeds_y,
                                    start, min_size, F(prec), self._reg_x, self._reg_y)
        return k, list(zip(self._reg_x[:count].tolist(), self._reg_y[:count].tolist())), F(reg_angle)

    def region_grow(self, x, y, prec):
        """``region_grow`` from the unused, defined pixel (x, y)."""
        _, reg, reg_angle = self.grow_next(np.array([x], np.int64), np.array([y], np.int64), 0, 0, prec)
        return reg, reg_angle

    def get_theta(self, reg, x, y, reg_angle, prec) -> np.float32:
        Ixx = Iyy = Ixy = F(0.0)
        for px, py in reg:
            wgt = F(self.modgrad[py, px])
            dxv, dyv = F(px) - x, F(py) - y
            Ixx = Ixx + dyv * dyv * wgt
            Iyy = Iyy + dxv * dxv * wgt
            Ixy = Ixy - dxv * dyv * wgt
        lam = F(0.5) * (Ixx + Iyy - _sqrt((Ixx - Iyy) * (Ixx - Iyy) + F(4.0) * Ixy * Ixy))
        theta = _atan2(lam - Ixx, Ixy) if abs(Ixx) > abs(Iyy) else _atan2(Ixy, lam - Iyy)
        if _angle_diff(theta, reg_angle) > prec:
            theta = theta + PI
        return F(theta)

    def region2rect(self, reg, reg_angle, prec, p) -> _Rect:
        x = y = s = F(0.0)
        for px, py in reg:
            wgt = F(self.modgrad[py, px])
            x = x + F(px) * wgt
            y = y + F(py) * wgt
            s = s + wgt
        with np.errstate(divide="ignore", invalid="ignore"):
            x = x / s
            y = y / s
        theta = self.get_theta(reg, x, y, reg_angle, prec)
        dx, dy = fm.cosf(theta), fm.sinf(theta)
        l_min = l_max = w_min = w_max = F(0.0)
        for px, py in reg:
            l = (F(px) - x) * dx + (F(py) - y) * dy
            w = -(F(px) - x) * dy + (F(py) - y) * dx
            if l > l_max:
                l_max = l
            if l < l_min:
                l_min = l
            if w > w_max:
                w_max = w
            if w < w_min:
                w_min = w
        r = _Rect()
        r.x1, r.y1 = x + l_min * dx, y + l_min * dy
        r.x2, r.y2 = x + l_max * dx, y + l_max * dy
        r.width = w_max - w_min
        r.x, r.y, r.theta, r.dx, r.dy, r.prec, r.p = x, y, theta, dx, dy, F(prec), F(p)
        if r.width < F(1.0):
            r.width = F(1.0)
        return r

    def rect_nfa(self, r: _Rect, logNT) -> np.float32:
        """``rect_nfa``: the pixels of the rectangle iterator and the aligned ones among them (the
        ``_rect_count`` kernel), then the NFA of that count."""
        vx, vy = _rect_corners(r)
        pts, alg = _rect_count(self.angles, vx, vy, F(r.theta), F(r.prec))
        if pts < 0:  # a NaN rectangle: the device loops forever here
            raise RuntimeError("find_line_segments: the firmware's rectangle scan does not end here")
        return nfa(pts, alg, r.p, logNT)

    def rect_improve(self, rec: _Rect, logNT, log_eps) -> tuple[np.float32, _Rect]:
        delta = F(0.5)
        delta_2 = delta / F(2.0)
        log_nfa = self.rect_nfa(rec, logNT)
        if log_nfa > log_eps:
            return log_nfa, rec

        def try_precision(rec, log_nfa):
            r = rec.copy()
            for _ in range(5):
                r.p = r.p / F(2.0)
                r.prec = r.p * PI
                new = self.rect_nfa(r, logNT)
                if new > log_nfa:
                    log_nfa, rec = new, r.copy()
            return rec, log_nfa

        rec, log_nfa = try_precision(rec, log_nfa)
        if log_nfa > log_eps:
            return log_nfa, rec
        for shift in (None, 1, -1):
            r = rec.copy()
            for _ in range(5):
                if (r.width - delta) >= F(0.5):
                    if shift is not None:
                        s = F(shift)
                        r.x1 = r.x1 + s * (-r.dy * delta_2)
                        r.y1 = r.y1 + s * (r.dx * delta_2)
                        r.x2 = r.x2 + s * (-r.dy * delta_2)
                        r.y2 = r.y2 + s * (r.dx * delta_2)
                    r.width = r.width - delta
                    new = self.rect_nfa(r, logNT)
                    if new > log_nfa:
                        rec, log_nfa = r.copy(), new
            if log_nfa > log_eps:
                return log_nfa, rec
        rec, log_nfa = try_precision(rec, log_nfa)
        return log_nfa, rec

    def density(self, reg, rec) -> np.float32:
        with np.errstate(divide="ignore", invalid="ignore"):
            return F(len(reg)) / (_dist(rec.x1, rec.y1, rec.x2, rec.y2) * rec.width)

    def reduce_region_radius(self, reg, reg_angle, prec, p, rec, density_th):
        dens = self.density(reg, rec)
        if dens >= density_th:
            return reg, rec
        xc, yc = F(reg[0][0]), F(reg[0][1])
        rad1 = _dist(xc, yc, rec.x1, rec.y1)
        rad2 = _dist(xc, yc, rec.x2, rec.y2)
        rad = rad1 if rad1 > rad2 else rad2
        reg = list(reg)
        while dens < density_th:
            rad = rad * F(0.75)
            i = 0
            while i < len(reg):
                if _dist(xc, yc, F(reg[i][0]), F(reg[i][1])) > rad:
                    self.used[reg[i][1], reg[i][0]] = 0
                    reg[i] = reg[-1]
                    reg.pop()
                    continue
                i += 1
            if len(reg) < 2:
                return None, rec
            rec = self.region2rect(reg, reg_angle, prec, p)
            dens = self.density(reg, rec)
        return reg, rec

    def refine(self, reg, reg_angle, prec, p, rec, density_th):
        if self.density(reg, rec) >= density_th:
            return reg, rec
        xc, yc = F(reg[0][0]), F(reg[0][1])
        ang_c = self.angle_rad(reg[0][0], reg[0][1])
        s = s_sum = F(0.0)
        n = 0
        for px, py in reg:
            self.used[py, px] = 0
            if _dist(xc, yc, F(px), F(py)) < rec.width:
                ang_d = _angle_diff(self.angle_rad(px, py), ang_c, signed=True)
                s = s + ang_d
                s_sum = s_sum + ang_d * ang_d
                n += 1
        with np.errstate(divide="ignore", invalid="ignore"):
            mean = s / F(n)
            tau = F(2.0) * _sqrt((s_sum - F(2.0) * mean * s) / F(n) + mean * mean)
        reg, reg_angle = self.region_grow(reg[0][0], reg[0][1], tau)
        if len(reg) < 2:
            return None, rec
        rec = self.region2rect(reg, reg_angle, prec, p)
        if self.density(reg, rec) < density_th:
            return self.reduce_region_radius(reg, reg_angle, prec, p, rec, density_th)
        return reg, rec

    def detect(self) -> list[tuple]:
        logNT = F(5.0) * (_log10(F(self.w)) + _log10(F(self.h))) / F(2.0) + _log10(F(11.0))
        min_reg_size = ftoi(-logNT / _log10(self.p))
        self.used = np.zeros((self.h, self.w), np.uint8)
        self._reg_x = np.empty(self.w * self.h, np.int64)
        self._reg_y = np.empty(self.w * self.h, np.int64)
        if compiled():
            return self._detect_compiled(logNT, min_reg_size)
        out = []
        density_th = F(0.7)
        k = 0
        while True:
            k, reg, reg_angle = self.grow_next(self.seeds_x, self.seeds_y, k, min_reg_size, self.prec)
            if k >= self.seeds_x.shape[0]:
                break
            k += 1
            rec = self.region2rect(reg, reg_angle, self.prec, self.p)
            reg, rec = self.refine(reg, reg_angle, self.prec, self.p, rec, density_th)
            if reg is None:
                continue
            log_nfa, rec = self.rect_improve(rec, logNT, F(0.0))
            if not log_nfa > F(0.0):
                continue
            out.append((rec.x1 + F(0.5), rec.y1 + F(0.5), rec.x2 + F(0.5), rec.y2 + F(0.5), rec.width, rec.p,
                        log_nfa))
        return out


    def _detect_compiled(self, logNT, min_reg_size) -> list[tuple]:
        """:meth:`detect`'s loop as one numba kernel (``_lsd_detect``): the same segments."""
        from ._lsd_detect import LANCZOS_Q, _detect

        out = np.empty((max(self.seeds_x.shape[0], 1), 7), F)
        n = _detect(self.angles, self.modgrad, self.seeds_x, self.seeds_y, fm.COS, fm.SIN, self.seed_cos,
                    self.seed_sin, F(self.prec), F(self.p), int(min_reg_size), LANCZOS_Q, F(logNT), self.used,
                    self._reg_x, self._reg_y, out)
        if n < 0:  # a NaN rectangle: the device loops forever here
            raise RuntimeError("find_line_segments: the firmware's rectangle scan does not end here")
        return [tuple(row) for row in out[:n]]


# ---------------------------------------------------------------------- merging (line.c)
def _merge_line(big, small, threshold) -> bool:
    """``merge_line``: does a point of ``big`` (Bresenham from its first end) come within
    ``threshold`` (the truncated float distance) of an end of ``small``?"""
    from ._rects import _bresenham

    xs, ys = _bresenham(*big)
    for qx, qy in ((small[0], small[1]), (small[2], small[3])):
        d = np.trunc(np.sqrt(((xs - qx) ** 2 + (ys - qy) ** 2).astype(F))).astype(np.int64)
        if (d <= threshold).any():
            return True
    return False


def _extend(la, lb, len0, len1, axis: int):
    """The merged line of ``merge_alot`` along ``axis`` (0: x, 1: y): both lines turned to run
    forward on that axis, the span of both, the other coordinate moved along the first line's slope
    (of the first line, whichever is longer: the firmware's choice)."""
    o = 1 - axis
    if la[2 + axis] - la[axis] < 0:
        la = [la[2], la[3], la[0], la[1]]
    if lb[2 + axis] - lb[axis] < 0:
        lb = [lb[2], lb[3], lb[0], lb[1]]
    d_axis, d_other = la[2 + axis] - la[axis], la[2 + o] - la[o]
    src = la if len0 > len1 else lb
    lo, hi = min(la[axis], lb[axis]), max(la[2 + axis], lb[2 + axis])
    start = src[o] - fm.cdiv(d_other * (src[axis] - lo), d_axis)
    end = src[2 + o] + fm.cdiv(d_other * (hi - src[2 + axis]), d_axis)
    out = [0, 0, 0, 0]
    out[axis], out[2 + axis], out[o], out[2 + o] = lo, hi, start, end
    return out


def merge_alot(lines: list[dict], threshold: int, theta_threshold: int) -> list[dict]:
    """line.c ``merge_alot``: compiled (``_line_merge``) with numba, the same passes below without."""
    merged = _merge_alot_compiled(lines, threshold, theta_threshold) if compiled() and lines else None
    if merged is not None:
        return merged
    from ._hough import merge_until_stable

    def merge(a, b):
        la = [a["x1"], a["y1"], a["x2"], a["y2"]]
        lb = [b["x1"], b["y1"], b["x2"], b["y2"]]
        len0, len1 = line_length(*la), line_length(*lb)
        td = abs(a["theta"] - b["theta"])
        td = 180 - td if td >= 90 else td
        if not (td <= theta_threshold and _merge_line(la if len0 > len1 else lb, la if len0 <= len1 else lb,
                                                      threshold)):
            return None
        axis = 0 if abs(la[2] - la[0]) >= abs(la[3] - la[1]) else 1
        x1, y1, x2, y2 = _extend(la, lb, len0, len1, axis)
        return dict(a, x1=x1, y1=y1, x2=x2, y2=y2)  # theta, rho and magnitude stay the first's

    return merge_until_stable(lines, merge)


def _merge_alot_compiled(lines: list[dict], threshold: int, theta_threshold: int) -> list[dict] | None:
    """``merge_alot`` in the ``_line_merge`` kernel; None while it is not served compiled (the
    passes of :func:`merge_alot` serve then)."""
    from ._line_merge import FIELDS, _merge_passes

    rows = np.array([[d[k] for k in FIELDS] for d in lines], np.int64)
    n = rows.shape[0]
    items = np.arange(n, dtype=np.int64)
    count = _merge_passes.attempt(rows, n, int(threshold), int(theta_threshold), items, np.empty(n, np.int64),
                                  np.empty(n, np.int64))
    if count is NOT_SERVED:
        return None
    return [dict(zip(FIELDS, rows[i].tolist())) for i in items[:count].tolist()]


def find_line_segments(gray_full: np.ndarray, roi, merge_distance: int, max_theta_diff: int) -> list[dict]:
    rx, ry, rw, rh = roi
    segs = _LSD(np.ascontiguousarray(gray_full[ry:ry + rh, rx:rx + rw])).detect()
    out = _segment_lines(segs, roi) if compiled() and segs else None
    if out is None:
        out = _segment_lines_python(segs, roi)
    if merge_distance > 0:
        out = merge_alot(out, merge_distance, max_theta_diff)
    for d in out:
        d["length"] = line_length(d["x1"], d["y1"], d["x2"], d["y2"])
    return out


def _segment_lines(segs: list[tuple], roi) -> list[dict] | None:
    """:func:`_segment_lines_python` in the ``_lsd_lines`` kernel; None while it is not served."""
    from ._lsd_lines import _segment_lines as kernel_lines

    rx, ry, rw, rh = roi
    rows = np.ascontiguousarray(np.array(segs, F).reshape(-1, 7))
    out = np.empty((rows.shape[0], 7), np.int64)
    n = kernel_lines.attempt(rows, int(rx), int(ry), int(rw), int(rh), fm.COS, fm.SIN, out)
    if n is NOT_SERVED:
        return None
    keys = ("x1", "y1", "x2", "y2", "magnitude", "theta", "rho")
    return [dict(zip(keys, row)) for row in out[:n].tolist()]


def _segment_lines_python(segs: list[tuple], roi) -> list[dict]:
    """Each segment clipped to the roi, with its theta, rho and magnitude (image coordinates)."""
    rx, ry, rw, rh = roi
    out = []
    for x1, y1, x2, y2, _, _, log_nfa in segs:
        clipped = lb_clip_line(ftoi(x1), ftoi(y1), ftoi(x2), ftoi(y2), 0, 0, rw, rh)
        if clipped is None:
            continue
        x1, y1, x2, y2 = (clipped[0] + rx, clipped[1] + ry, clipped[2] + rx, clipped[3] + ry)
        dx, dy = x2 - x1, y2 - y1
        mdx, mdy = x1 + fm.cdiv(dx, 2), y1 + fm.cdiv(dy, 2)
        rot = (_atan2(F(dy), F(dx)) if dx else F(1.570796)) + F(1.570796)
        theta = ftoi(F(rot) * F(57.295780)) % 180
        rho = ftoi(F(mdx) * fm.COS[theta] + F(mdy) * fm.SIN[theta])
        out.append(dict(x1=x1, y1=y1, x2=x2, y2=y2, magnitude=ftoi(log_nfa), theta=theta, rho=rho))
    return out


class LineSegmentsMixin(ImageHost):
    def find_line_segments(self, *args, **kwargs):
        """Line segments by the firmware's LSD (``roi``, ``merge_distance`` (0), ``max_theta_diff``
        (15)), as ``line`` objects."""
        from ._find import Line, _gray8

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        merge_distance = _args.to_int(_args.pick(args, 1, kwargs, "merge_distance", 0))
        max_theta_diff = _args.to_int(_args.pick(args, 2, kwargs, "max_theta_diff", 15))
        return [Line(**d) for d in find_line_segments(_gray8(self), roi, merge_distance, max_theta_diff)]
