"""imlib's per-colour conversions (``imlib.c``: ``imlib_rgb_to_lab`` & co.), behind the module functions
``image.rgb_to_lab``, ``lab_to_rgb``, ``rgb_to_grayscale`` and ``grayscale_to_rgb``.

These do *not* use the RGB565 tables: they take the 8-bit values as given, linearise them through
``xyz_table`` and compute in float32 with the firmware's fast helpers (``fast_cbrtf`` is an
approximation, ``fast_roundf`` truncates). That is why ``rgb_to_lab((0, 0, 0))`` is ``(-1, 0, 0)``
on the device. Inputs are stored into the firmware's ``uint8_t``/``int8_t`` fields first (so 300
wraps to 44), as ``simple_color_t`` does.
"""

from __future__ import annotations

import numpy as np

from . import _fmath as fm
from ._tables import xyz_table

F = np.float32


def rgb_to_lab(r: int, g: int, b: int) -> tuple[int, int, int]:
    xyz = xyz_table()
    rl, gl, bl = (xyz[int(v) & 0xFF] for v in (r, g, b))
    # -ffast-math (reciprocal math) compiles ``/ 95.047f`` as ``* (1 / 95.047f)``: the last bit differs
    x = (rl * F(0.4124) + gl * F(0.3576) + bl * F(0.1805)) * (F(1) / F(95.047))
    y = (rl * F(0.2126) + gl * F(0.7152) + bl * F(0.0722)) * (F(1) / F(100.0))
    z = (rl * F(0.0193) + gl * F(0.1192) + bl * F(0.9505)) * (F(1) / F(108.883))

    def f(t):
        return fm.fast_cbrtf(t) if t > F(0.008856) else t * F(7.787037) + F(0.137931)

    x, y, z = f(x), f(y), f(z)
    L = int(fm.int8(fm.fast_roundf(F(116) * y))) - 16
    A = int(fm.int8(fm.fast_roundf(F(500) * (x - y))))
    B = int(fm.int8(fm.fast_roundf(F(200) * (y - z))))
    # lab->L is an int8_t: ((int8_t) fast_roundf(116 * y)) - 16 is stored back into it
    return int(fm.int8(L)), A, B


def _gamma(c: np.float32) -> np.float32:
    if c > F(0.0031308):
        return F(1.055) * np.power(c, F(0.416666)) - F(0.055)
    return c * F(12.92)


def lab_to_rgb(L: int, A: int, B: int) -> tuple[int, int, int]:
    L, A, B = (int(fm.int8(v)) for v in (L, A, B))
    x = F(L + 16) * F(0.008621) + F(A) * F(0.002)
    y = F(L + 16) * F(0.008621)
    z = F(L + 16) * F(0.008621) - F(B) * F(0.005)

    def f(t):
        return t * t * t if t > F(0.206897) else F(0.128419) * t - F(0.017713)

    x, y, z = f(x) * F(95.047), f(y) * F(100.0), f(z) * F(108.883)
    r_lin = (x * F(3.2406) + y * F(-1.5372) + z * F(-0.4986)) / F(100.0)
    g_lin = (x * F(-0.9689) + y * F(1.8758) + z * F(0.0415)) / F(100.0)
    b_lin = (x * F(0.0557) + y * F(-0.2040) + z * F(1.0570)) / F(100.0)
    with np.errstate(invalid="ignore"):
        r, g, b = (max(min(int(fm.fast_roundf(_gamma(F(c)) * F(255))), 255), 0) for c in (r_lin, g_lin, b_lin))
    return r, g, b


def rgb_to_grayscale(r: int, g: int, b: int) -> int:
    xyz = xyz_table()
    rl, gl, bl = (xyz[int(v) & 0xFF] for v in (r, g, b))
    y = (rl * F(0.2126) + gl * F(0.7152) + bl * F(0.0722)) / F(100.0)
    return max(min(int(fm.fast_roundf(_gamma(y) * F(255))), 255), 0)


def grayscale_to_rgb(g: int) -> tuple[int, int, int]:
    v = int(g) & 0xFF
    return v, v, v
