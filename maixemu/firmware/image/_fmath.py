"""The firmware's float helpers (``omv/img/include/fmath.h`` and ``fmath.c``), vectorised in float32.

MicroPython on the K210 is single precision and imlib is compiled with ``-ffast-math
-fsingle-precision-constant``: every ``float`` expression is float32, and the "fast" helpers are not
the libm functions their names suggest. In this firmware ``fast_roundf`` and ``fast_floorf`` are a
plain ``(int)x`` truncation, ``fast_ceilf`` is ``(int)(x + 0.9999f)`` and ``fast_cbrtf`` is a bit
trick with a few percent of error, so they are reproduced here exactly rather than replaced by
``round``/``floor``/``cbrt``.

Float-to-int conversion follows the K210 (RISC-V ``fcvt.w.s`` with round-toward-zero): values are
truncated, out-of-range values saturate to ``INT32_MIN``/``INT32_MAX`` and NaN becomes
``INT32_MAX``. (An x86 build would give ``INT32_MIN`` for both; no golden case depends on it.)

Every function accepts scalars or arrays and returns numpy values (float32 or int64).
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
_I32_MIN = -(1 << 31)
_I32_MAX = (1 << 31) - 1

M_PI = F32(np.pi)
M_PI_2 = F32(np.pi / 2)
M_PI_4 = F32(np.pi / 4)


def f32(x) -> np.ndarray:
    """``x`` as float32 (the type every imlib ``float`` has)."""
    return np.asarray(x, dtype=F32)


def to_int(x) -> np.ndarray:
    """``(int) x`` for a float32 ``x`` as the K210 converts it (truncate, saturate, NaN -> INT32_MAX)."""
    x = np.asarray(x, dtype=np.float64)
    if x.size > 16:  # an array whose values all convert without saturating: a plain truncation
        lo, hi = x.min(), x.max()  # NaN propagates and fails both tests
        if _I32_MIN - 1 < lo and hi < _I32_MAX + 1:
            return x.astype(np.int64)
    with np.errstate(invalid="ignore"):
        t = np.trunc(x)
        out = np.where(np.isnan(t), _I32_MAX, np.clip(np.nan_to_num(t, nan=0.0), _I32_MIN, _I32_MAX))
    return out.astype(np.int64)


fast_roundf = to_int  # fmath.h: ``return (int)(x);``
fast_floorf = to_int  # fmath.h: ``return (int)(x);``


def fast_ceilf(x) -> np.ndarray:
    """fmath.h: ``(int)(x + 0.9999f)``."""
    return to_int(f32(x) + F32(0.9999))


def fast_sqrtf(x) -> np.ndarray:
    """``fsqrt.s``: the correctly rounded float32 square root (NaN for negative input)."""
    with np.errstate(invalid="ignore"):
        return np.sqrt(f32(x))


def c_div(a, b) -> np.ndarray:
    """C integer division (truncates toward zero), elementwise on int64 arrays."""
    a = np.asarray(a, dtype=np.int64)
    b = np.asarray(b, dtype=np.int64)
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def c_mod(a, b) -> np.ndarray:
    """C ``%`` (the sign follows the dividend)."""
    return np.asarray(a, dtype=np.int64) - c_div(a, b) * np.asarray(b, dtype=np.int64)


def fast_cbrtf(x) -> np.ndarray:
    """fmath.c ``fast_cbrtf``: integer tricks on the float's bits (an initial guess, no refinement)."""
    ix = f32(x).view(np.int32).astype(np.int64)
    ix = c_div(ix, 4) + c_div(ix, 16)
    ix = ix + c_div(ix, 16)
    ix = ix + c_div(ix, 256)
    ix = (0x2A511CD0 + ix) & 0xFFFFFFFF
    return ix.astype(np.uint32).view(F32).reshape(np.shape(x))


def fast_atanf(xx) -> np.ndarray:
    """fmath.c ``fast_atanf``: Cephes-style range reduction and a degree-9 odd polynomial, float32."""
    xx = f32(xx)
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = xx < 0
        x = np.where(neg, -xx, xx)
        big = x > F32(2.414213562373095)
        mid = ~big & (x > F32(0.4142135623730950))
        y = np.where(big, M_PI_2, np.where(mid, M_PI_4, F32(0))).astype(F32)
        xr = np.where(big, -(F32(1) / x), np.where(mid, (x - F32(1)) / (x + F32(1)), x)).astype(F32)
        z = xr * xr
        # the source reads ``y += (((c1*z - c2)*z + c3)*z - c4)*z*x + x``; the firmware's -ffast-math
        # build factors out x: ``y + ((((c1*z - c2)*z + c3)*z - c4)*z + 1) * x``
        poly = ((((F32(8.05374449538e-2) * z - F32(1.38776856032e-1)) * z + F32(1.99777106478e-1)) * z
                 - F32(3.33329491539e-1)) * z + F32(1)) * xr
        y = (poly + y).astype(F32)
    return np.where(neg, -y, y).astype(F32)


def fast_atan2f(y, x) -> np.ndarray:
    """fmath.c ``fast_atan2f``: quadrant by quadrant around ``fast_atanf``, result in [0, 2pi)."""
    y = f32(y)
    x = f32(x)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = y / x
        a = fast_atanf(q)
        an = fast_atanf(-q)
    out = np.where(y == 0, F32(0), np.where(y > 0, M_PI, -M_PI)).astype(F32)
    out = np.where((x > 0) & (y < 0), F32(2) * M_PI - an, out)
    out = np.where((x < 0) & (y < 0), M_PI + a, out)
    out = np.where((x < 0) & (y >= 0), M_PI - an, out)
    out = np.where((x > 0) & (y >= 0), a, out)
    return out.astype(F32)


def fast_expf(x) -> np.ndarray:
    """fmath.c ``fast_expf``: Schraudolph's trick on a double's exponent/mantissa fields."""
    x = f32(x)
    with np.errstate(invalid="ignore", over="ignore"):
        lbits = to_uint32(F32(1512775) * x + F32(1072632447))
    return expf_bits(lbits).reshape(np.shape(x))


def expf_bits(lbits) -> np.ndarray:
    """The second half of ``fast_expf``: a double's high word (sign/exponent/20 mantissa bits) -> float."""
    lbits = np.asarray(lbits, dtype=np.int64)
    m = lbits & 0xFFFFF
    e = (lbits >> 20) & 0x7FF
    s = (lbits >> 31) & 1
    e = (e - 1023 + 127) & 0xFF
    packed = ((s << 31) | (e << 23) | (m << 3)) & 0xFFFFFFFF
    return packed.astype(np.uint32).view(F32)


def to_uint32(x) -> np.ndarray:
    """``(uint32_t) x`` of a float (K210: truncate, saturate to [0, 2^32-1], NaN -> 2^32-1)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        t = np.trunc(x)
        out = np.where(np.isnan(t), 0xFFFFFFFF, np.clip(np.nan_to_num(t, nan=0.0), 0, 0xFFFFFFFF))
    return out.astype(np.int64)


def fast_log2(x) -> np.ndarray:
    """fmath.c ``fast_log2``: exponent bits plus a rational correction on the mantissa."""
    x = f32(x)
    vi = x.view(np.uint32).astype(np.int64)
    mx = ((vi & 0x007FFFFF) | 0x3F000000).astype(np.uint32).view(F32)
    y = vi.astype(F32) * F32(1.1920928955078125e-7)
    return (y - F32(124.22551499) - F32(1.498030302) * mx - F32(1.72587999) / (F32(0.3520887068) + mx)).astype(F32)


def fast_log(x) -> np.ndarray:
    return (F32(0.69314718) * fast_log2(x)).astype(F32)


def fast_powf(a, b) -> np.ndarray:
    """fmath.c ``fast_powf``: linear interpolation on the float's bit pattern."""
    a = f32(a)
    b = f32(b)
    d = (a.view(np.int32).astype(np.int64) - 1064866805).astype(F32)  # int arithmetic, then to float
    v = to_int(b * d + F32(1064866805))
    return (v & 0xFFFFFFFF).astype(np.uint32).view(F32).reshape(np.broadcast(a, b).shape)


def int8(v) -> np.ndarray:
    """Store into an ``int8_t`` (wraps modulo 256, as the firmware's narrow result fields do)."""
    return ((np.asarray(v, dtype=np.int64) + 128) & 0xFF) - 128


def uint8(v) -> np.ndarray:
    """Store into a ``uint8_t`` (wraps modulo 256)."""
    return np.asarray(v, dtype=np.int64) & 0xFF


def int16(v) -> np.ndarray:
    return ((np.asarray(v, dtype=np.int64) + 32768) & 0xFFFF) - 32768


def uint16(v) -> np.ndarray:
    return np.asarray(v, dtype=np.int64) & 0xFFFF


def _libm():
    """The C library's float32 ``sinf``/``cosf``/``tanf``/``atan2f`` when ctypes can find them (the
    golden values come from glibc); ``None`` elsewhere."""
    import ctypes
    import ctypes.util

    for name in (ctypes.util.find_library("m"), "libm.so.6"):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            for fn in (lib.sinf, lib.cosf, lib.tanf):
                fn.restype = ctypes.c_float
                fn.argtypes = [ctypes.c_float]
            lib.atan2f.restype = ctypes.c_float
            lib.atan2f.argtypes = [ctypes.c_float, ctypes.c_float]
            return lib
        except (OSError, AttributeError):
            continue
    return None


_LIBM = _libm()


def sinf(x: float | np.floating) -> np.float32:
    """libm ``sinf`` of a float32 (correctly rounded double ``sin`` where no C library is found)."""
    if _LIBM is not None:
        return F32(_LIBM.sinf(float(F32(x))))
    import math

    return F32(math.sin(float(F32(x))))


def cosf(x: float | np.floating) -> np.float32:
    """libm ``cosf`` of a float32 (see :func:`sinf`)."""
    if _LIBM is not None:
        return F32(_LIBM.cosf(float(F32(x))))
    import math

    return F32(math.cos(float(F32(x))))


def tanf(x: float | np.floating) -> np.float32:
    """libm ``tanf`` of a float32 (see :func:`sinf`)."""
    if _LIBM is not None:
        return F32(_LIBM.tanf(float(F32(x))))
    import math

    return F32(math.tan(float(F32(x))))


def atan2f(y: float | np.floating, x: float | np.floating) -> np.float32:
    """libm ``atan2f`` of two float32 (see :func:`sinf`)."""
    if _LIBM is not None:
        return F32(_LIBM.atan2f(float(F32(y)), float(F32(x))))
    import math

    return F32(math.atan2(float(F32(y)), float(F32(x))))


# ---------------------------------------------------------------------- scalar helpers of the finders
F = F32
PI = M_PI
INT_MAX = _I32_MAX
INT_MIN = _I32_MIN
#: ``sincos_tab.c``: cos/sin of whole degrees rounded to 6 decimals (exact 0 at 90/180/270)
_DEG = np.arange(360)
COS = np.round(np.cos(np.deg2rad(_DEG)), 6).astype(F32)
SIN = np.round(np.sin(np.deg2rad(_DEG)), 6).astype(F32)


def ftoi(v):
    """:func:`to_int` that gives a Python ``int`` for a scalar (an int64 array otherwise)."""
    if isinstance(v, (float, np.floating, int, np.integer)):
        return _to_int_1(v)
    out = to_int(v)
    return int(out) if out.ndim == 0 else out


# ---------------------------------------------------------------------- scalar twins
# The sequential finders (LSD, the quad fits) call these helpers on one value at a time, where the
# array versions' broadcasting and ``np.where`` of both branches cost microseconds per call. Each
# twin below performs the same float32 operations in the same order as its array version (only the
# branch that the array version would keep), so the two give identical bits; tests compare them.
def _to_int_1(v) -> int:
    """:func:`to_int` of one value."""
    x = float(v)
    if x != x:
        return _I32_MAX
    if x >= _I32_MAX:
        return _I32_MAX
    if x <= _I32_MIN:
        return _I32_MIN
    return int(x)


_ATAN_BIG, _ATAN_MID = F32(2.414213562373095), F32(0.4142135623730950)
_ATAN_C1, _ATAN_C2, _ATAN_C3, _ATAN_C4 = (F32(8.05374449538e-2), F32(1.38776856032e-1), F32(1.99777106478e-1),
                                          F32(3.33329491539e-1))


def fast_atanf_1(xx) -> np.float32:
    """:func:`fast_atanf` of one float32."""
    xx = F32(xx)
    neg = xx < 0
    x = -xx if neg else xx
    if x > _ATAN_BIG:  # no errstate needed: 1/x of x > 2.4 and (x-1)/(x+1) can neither overflow nor divide by 0
        y, xr = M_PI_2, -(F32(1) / x)
    elif x > _ATAN_MID:
        y, xr = M_PI_4, (x - F32(1)) / (x + F32(1))
    else:
        y, xr = F32(0), x
    z = xr * xr
    poly = ((((_ATAN_C1 * z - _ATAN_C2) * z + _ATAN_C3) * z - _ATAN_C4) * z + F32(1)) * xr
    y = poly + y
    return -y if neg else y


_TWO_PI = F32(F32(2) * M_PI)


def fast_atan2f_1(y, x) -> np.float32:
    """:func:`fast_atan2f` of one pair of float32 (the same cascade of cases, NaN included)."""
    y, x = F32(y), F32(x)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if x > 0 and y >= 0:
            return fast_atanf_1(y / x)
        if x < 0 and y >= 0:
            return F32(M_PI - fast_atanf_1(-(y / x)))
        if x < 0 and y < 0:
            return F32(M_PI + fast_atanf_1(y / x))
        if x > 0 and y < 0:
            return F32(_TWO_PI - fast_atanf_1(-(y / x)))
    if y == 0:
        return F32(0)
    return M_PI if y > 0 else -M_PI


_LOG2_C0, _LOG2_C1, _LOG2_C2, _LOG2_C3, _LOG2_C4 = (F32(1.1920928955078125e-7), F32(124.22551499),
                                                     F32(1.498030302), F32(1.72587999), F32(0.3520887068))


def fast_log2_1(x) -> np.float32:
    """:func:`fast_log2` of one float32."""
    vi = int(F32(x).view(np.uint32))
    mx = np.uint32((vi & 0x007FFFFF) | 0x3F000000).view(F32)
    y = F32(vi) * _LOG2_C0  # mx is in [0.5, 1): nothing here can overflow or divide by zero
    return y - _LOG2_C1 - _LOG2_C2 * mx - _LOG2_C3 / (_LOG2_C4 + mx)


def fast_expf_1(x) -> np.float32:
    """:func:`fast_expf` of one float32."""
    with np.errstate(invalid="ignore", over="ignore"):
        v = float(F32(F32(1512775) * F32(x)) + F32(1072632447))
    lbits = 0xFFFFFFFF if v != v else int(min(max(v, 0.0), 4294967295.0))
    m, e, sgn = lbits & 0xFFFFF, (lbits >> 20) & 0x7FF, (lbits >> 31) & 1
    e = (e - 1023 + 127) & 0xFF
    return np.uint32(((sgn << 31) | (e << 23) | (m << 3)) & 0xFFFFFFFF).view(F32)


def fast_log_1(x) -> np.float32:
    return _LN2 * fast_log2_1(x)


_LN2 = F32(0.69314718)


def ftou(v) -> int:
    """``(uint32_t)v`` of a scalar float as the K210 converts it."""
    return int(to_uint32(v))


def fsqrt(v) -> np.float32:
    """:func:`fast_sqrtf` of a scalar, as a float32 scalar."""
    return F32(fast_sqrtf(v))


def i32(v: int) -> int:
    """Wrap a Python int to a C ``int`` (32-bit two's complement)."""
    v = int(v) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def u32(v: int) -> int:
    """Wrap a Python int to a C ``uint32_t``."""
    return int(v) & 0xFFFFFFFF


def cdiv(a: int, b: int) -> int:
    """C integer division of Python ints (truncates toward zero), as the K210 does it.

    Division by zero does not trap on RISC-V: ``div`` returns -1 (all bits set; the M extension's
    rule), so imlib's C code carries on where Python would raise — e.g. ``merge_alot`` (line.c)
    dividing by the x extent of a zero-length segment from ``find_line_segments``."""
    if b == 0:
        return -1
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def lb_clip_line(x1: int, y1: int, x2: int, y2: int, x: int, y: int, w: int, h: int):
    """``lb_clip_line`` (Liang-Barsky, float32) to the box [x, x+w-1] x [y, y+h-1]; None when outside."""
    xd, yd = x2 - x1, y2 - y1
    p = (-xd, xd, -yd, yd)
    q = (x1 - x, (x + w - 1) - x1, y1 - y, (y + h - 1) - y1)
    umin, umax = F32(0), F32(1)
    for pi, qi in zip(p, q):
        if pi:
            u = F32(qi) / F32(pi)
            if pi < 0:
                if u > umax:
                    return None
                if u > umin:
                    umin = u
            if pi > 0:
                if u < umin:
                    return None
                if u < umax:
                    umax = u
        elif qi < 0:
            return None
    if umax < umin:
        return None
    return (ftoi(F32(x1) + F32(xd) * umin), ftoi(F32(y1) + F32(yd) * umin),
            ftoi(F32(x1) + F32(xd) * umax), ftoi(F32(y1) + F32(yd) * umax))


def line_through_roi(theta: int, rho: int, roi):
    """Endpoints of ``x cos t + y sin t = rho`` (roi coordinates) clipped to the roi and moved to
    image coordinates, rho moved too — the tail shared by find_lines and get_regression.

    Returns (x1, y1, x2, y2, rho), or None when the line misses the roi.
    """
    rx, ry, rw, rh = roi
    c, s = COS[theta], SIN[theta]
    with np.errstate(divide="ignore", invalid="ignore"):
        if 45 <= theta < 135:
            x1, x2 = 0, rw - 1
            y1 = ftoi((F32(rho) - F32(x1) * c) / s)
            y2 = ftoi((F32(rho) - F32(x2) * c) / s)
        else:
            y1, y2 = 0, rh - 1
            x1 = ftoi((F32(rho) - F32(y1) * s) / c)
            x2 = ftoi((F32(rho) - F32(y2) * s) / c)
    clipped = lb_clip_line(x1, y1, x2, y2, 0, 0, rw, rh)
    if clipped is None:
        return None
    x1, y1, x2, y2 = clipped
    rho += ftoi(F32(rx) * c + F32(ry) * s)
    return x1 + rx, y1 + ry, x2 + rx, y2 + ry, rho


def line_length(x1: int, y1: int, x2: int, y2: int) -> int:
    """The ``length`` a line object reports: ``(int)sqrtf(dx*dx + dy*dy)``."""
    dx, dy = x2 - x1, y2 - y1
    return ftoi(fast_sqrtf(F32(dx * dx + dy * dy)))
