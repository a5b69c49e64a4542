"""The firmware's float helpers (``fmath.c``/``fmath.h``, ``sincos_tab.c``) in float32.

MaixPy builds imlib with ``-fsingle-precision-constant``: every constant is a float, every product a
float product. ``fast_roundf``/``fast_floorf`` are ``(int)x`` truncations; float -> int conversions
follow the K210's ``fcvt.w.s`` (round toward zero, saturating, NaN -> INT_MAX), which is what a
``(int)`` cast of an out-of-range or NaN float gives on the device.
"""

from __future__ import annotations

import numpy as np

F = np.float32
_DEG = np.arange(360)
#: ``sincos_tab.c``: the tables hold the values rounded to 6 decimals (exact 0 at 90/180/270).
COS = np.round(np.cos(np.deg2rad(_DEG)), 6).astype(F)
SIN = np.round(np.sin(np.deg2rad(_DEG)), 6).astype(F)
PI = F(3.14159265358979)
INT_MAX = 2**31 - 1
INT_MIN = -(2**31)


def fast_atanf(xx: np.ndarray) -> np.ndarray:
    """``fast_atanf``: Cephes-style range reduction and polynomial, all in float32."""
    xx = np.asarray(xx, F)
    sign = np.where(xx < 0, F(-1), F(1))
    x = np.abs(xx)
    big = x > F(2.414213562373095)
    mid = (~big) & (x > F(0.4142135623730950))
    with np.errstate(divide="ignore", invalid="ignore"):
        xr = np.where(big, -(F(1.0) / np.where(x == 0, F(1), x)),
                      np.where(mid, (x - F(1.0)) / (x + F(1.0)), x)).astype(F)
    y = np.where(big, F(np.pi / 2), np.where(mid, F(np.pi / 4), F(0))).astype(F)
    z = xr * xr
    y = y + ((((F(8.05374449538e-2) * z - F(1.38776856032e-1)) * z + F(1.99777106478e-1)) * z
              - F(3.33329491539e-1)) * z * xr + xr)
    return (y * sign).astype(F)


def fast_atan2f(y, x) -> np.ndarray:
    """The firmware's atan2: angles in [0, 2*pi); ``x == 0`` gives 0 / +-pi (not +-pi/2)."""
    y = np.asarray(y, F)
    x = np.asarray(x, F)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        q1 = fast_atanf(y / np.where(x == 0, F(1), x))
        qn = fast_atanf(-y / np.where(x == 0, F(1), x))
        out = np.where((x > 0) & (y >= 0), q1,
              np.where((x < 0) & (y >= 0), PI - qn,
              np.where((x < 0) & (y < 0), PI + q1,
              np.where((x > 0) & (y < 0), F(2) * PI - qn,
                       np.where(y == 0, F(0), np.where(y > 0, PI, -PI))))))
    return out.astype(F)


def ftoi(v) -> np.ndarray | int:
    """``(int)v`` of a float as the K210 converts it: truncation, saturating, NaN -> INT_MAX."""
    a = np.asarray(v, np.float64)
    with np.errstate(invalid="ignore"):
        out = np.where(np.isnan(a), INT_MAX, np.clip(np.trunc(np.nan_to_num(a, posinf=INT_MAX, neginf=INT_MIN)),
                                                      INT_MIN, INT_MAX)).astype(np.int64)
    return int(out) if out.ndim == 0 else out


def ftou(v) -> int:
    """``(uint32_t)v`` as the K210 converts it (``fcvt.wu.s``): negatives and NaN saturate (0 / max)."""
    a = float(v)
    if a != a:
        return 2**32 - 1
    if a <= 0:
        return 0
    return min(int(a), 2**32 - 1)


def fsqrt(v) -> np.float32:
    """``fast_sqrtf``: the K210's correctly rounded ``fsqrt.s``."""
    with np.errstate(invalid="ignore"):
        return np.sqrt(F(v))


def i32(v: int) -> int:
    """Wrap to a C ``int`` (32-bit two's complement)."""
    v = int(v) & 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def cdiv(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def u32(v: int) -> int:
    """Wrap to a C ``uint32_t``."""
    return int(v) & 0xFFFFFFFF


def lb_clip_line(x1: int, y1: int, x2: int, y2: int, x: int, y: int, w: int, h: int):
    """``lb_clip_line`` (Liang-Barsky) to the box [x, x+w-1] x [y, y+h-1]; None when outside."""
    xd, yd = x2 - x1, y2 - y1
    p = (-xd, xd, -yd, yd)
    q = (x1 - x, (x + w - 1) - x1, y1 - y, (y + h - 1) - y1)
    umin, umax = F(0), F(1)
    for pi, qi in zip(p, q):
        if pi:
            u = F(qi) / F(pi)
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
    return (ftoi(F(x1) + F(xd) * umin), ftoi(F(y1) + F(yd) * umin),
            ftoi(F(x1) + F(xd) * umax), ftoi(F(y1) + F(yd) * umax))


def line_through_roi(theta: int, rho: int, roi) -> tuple[int, int, int, int] | None:
    """Endpoints of ``x cos t + y sin t = rho`` (roi coordinates) clipped to the roi, then moved to
    image coordinates, with rho moved too — the tail shared by find_lines and get_regression.

    Returns (x1, y1, x2, y2, rho) or None when the line misses the roi.
    """
    rx, ry, rw, rh = roi
    c, s = COS[theta], SIN[theta]
    with np.errstate(divide="ignore", invalid="ignore"):
        if 45 <= theta < 135:
            x1, x2 = 0, rw - 1
            y1 = ftoi((F(rho) - F(x1) * c) / s)
            y2 = ftoi((F(rho) - F(x2) * c) / s)
        else:
            y1, y2 = 0, rh - 1
            x1 = ftoi((F(rho) - F(y1) * s) / c)
            x2 = ftoi((F(rho) - F(y2) * s) / c)
    clipped = lb_clip_line(x1, y1, x2, y2, 0, 0, rw, rh)
    if clipped is None:
        return None
    x1, y1, x2, y2 = clipped
    rho += ftoi(F(rx) * c + F(ry) * s)
    return x1 + rx, y1 + ry, x2 + rx, y2 + ry, rho


def line_length(x1: int, y1: int, x2: int, y2: int) -> int:
    """The ``length`` a line object reports: ``(int)sqrtf(dx*dx + dy*dy)``."""
    dx, dy = x2 - x1, y2 - y1
    return ftoi(fsqrt(F(dx * dx + dy * dy)))
