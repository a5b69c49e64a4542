"""``image.get_affine_transform`` and ``image.warp_affine_ai`` (maixpy-api.md §2.8, MaixPy affine.c).

Both follow the firmware's arithmetic: single-precision floats (numpy float32) with the few
double-precision libm calls where the C code makes them, points held as ``uint16``, the warp in
24.8 fixed point with bilinear weights in 1/256 steps on the AI planes.
"""

from __future__ import annotations

import math

import numpy as np

from . import _args
from ._core import GRAYSCALE, RGB565

F = np.float32


def _svd22(a: list[np.float32]):
    """The firmware's closed-form 2x2 SVD (float inputs, double libm calls, float results)."""
    a0, a1, a2, a3 = a
    d1 = float(a0 - a3)
    d2 = float(a1 + a2)
    d3 = float(a0 + a3)
    d4 = float(a1 - a2)
    s0 = F((math.sqrt(d1 ** 2 + d2 ** 2) + math.sqrt(d3 ** 2 + d4 ** 2)) / 2)
    s1 = F(abs(float(s0) - math.sqrt(d1 ** 2 + d2 ** 2)))
    if s0 > s1:
        num = F(2) * (a0 * a1 + a2 * a3)
        # ``a0*a0 - a1*a1 + a2*a2 - a3*a3`` as the -ffast-math build sums it (GCC's optimised tree)
        den = ((a2 * a2 + a0 * a0) - a1 * a1) - a3 * a3
        v2 = F(math.sin(math.atan2(float(num), float(den)) / 2))
    else:
        v2 = F(0)
    v0 = F(math.sqrt(float(F(1) - v2 * v2)))
    v1 = -v2
    v3 = v0
    u0 = -(a0 * v0 + a1 * v2) / s0 if s0 != 0 else F(1)
    u2 = -(a2 * v0 + a3 * v2) / s0 if s0 != 0 else F(0)
    u1 = (a0 * v1 + a1 * v3) / s1 if s1 != 0 else -u2
    u3 = (a2 * v1 + a3 * v3) / s1 if s1 != 0 else u0
    v0 = -v0
    v2 = -v2
    return (u0, u1, u2, u3), (s0, s1), (v0, v1, v2, v3)


def _points(lst, what: str) -> list[tuple[int, int]]:
    pts = []
    for item in lst:
        x, y = _args.fixed_array(item, 2)
        pts.append((_args.to_int(x) & 0xFFFF, _args.to_int(y) & 0xFFFF))  # uint16_t storage
    return pts


def get_affine_transform(src_list, dst_list):
    """3x3 similarity transform (flat 9-tuple of floats) mapping *dst* points to *src* points.

    This is the matrix ``warp_affine_ai`` needs: for each destination pixel it gives the source
    position. Both arguments must be lists of (x, y) pairs, at most 10, of equal length.
    """
    if not (isinstance(src_list, list) and isinstance(dst_list, list)):
        raise OSError("Need input [[x0,y0],[x1,y1],...]\r\n")
    if len(src_list) != len(dst_list):
        raise OSError("src len must equal with dst len")
    if len(src_list) > 10:
        raise OSError("must<=10 points")
    src = _points(src_list, "src")
    dst = _points(dst_list, "dst")
    cnt = len(src)
    if cnt == 0:
        nan = float("nan")
        return (nan, nan, nan, nan, nan, nan, 0.0, 0.0, 1.0)
    # the firmware's "src" statistics are taken from dst and vice versa
    sm = [F(0), F(0)]
    dm = [F(0), F(0)]
    for i in range(cnt):
        sm[0] += F(dst[i][0])
        sm[1] += F(dst[i][1])
        dm[0] += F(src[i][0])
        dm[1] += F(src[i][1])
    sm = [v / F(cnt) for v in sm]
    dm = [v / F(cnt) for v in dm]
    sd = [(F(dst[i][0]) - sm[0], F(dst[i][1]) - sm[1]) for i in range(cnt)]
    dd = [(F(src[i][0]) - dm[0], F(src[i][1]) - dm[1]) for i in range(cnt)]
    A = [[F(0), F(0)], [F(0), F(0)]]
    inv_cnt = F(1) / F(cnt)
    for i in range(2):
        for k in range(2):
            acc = F(0)
            for j in range(cnt):
                acc += dd[j][i] * sd[j][k]
            A[i][k] = acc * inv_cnt  # ``A[i][k] /= cnt``: -freciprocal-math multiplies by 1/cnt
    U, S, V = _svd22([A[0][0], A[0][1], A[1][0], A[1][1]])
    t00 = U[0] * V[0] + U[1] * V[2]
    t01 = U[0] * V[1] + U[1] * V[3]
    t10 = U[2] * V[0] + U[3] * V[2]
    t11 = U[2] * V[1] + U[3] * V[3]
    mean = [F(0), F(0)]
    for i in range(cnt):
        mean[0] += sd[i][0]
        mean[1] += sd[i][1]
    mean = [m / F(cnt) for m in mean]
    var = [F(0), F(0)]
    for i in range(cnt):
        var[0] += (mean[0] - sd[i][0]) * (mean[0] - sd[i][0])
        var[1] += (mean[1] - sd[i][1]) * (mean[1] - sd[i][1])
    with np.errstate(divide="ignore", invalid="ignore"):
        # ``var /= cnt; scale = 1.0f / (var[0] + var[1]) * (S[0] + S[1])``: the build folds the two
        # divisions by cnt into ``(1 / (var[1] + var[0])) * (cnt * (S[0] + S[1]))``
        scale = (F(1.0) / (var[1] + var[0])) * (F(cnt) * (S[0] + S[1]))
        t02 = dm[0] - scale * (t00 * sm[0] + t01 * sm[1])
        t12 = dm[1] - scale * (t10 * sm[0] + t11 * sm[1])
        t00, t01, t10, t11 = t00 * scale, t01 * scale, t10 * scale, t11 * scale
    return tuple(float(v) for v in (t00, t01, t02, t10, t11, t12, F(0), F(0), F(1)))


def warp_affine_ai(src_img, dst_img, matrix) -> None:
    """Warp ``src_img``'s AI buffer into ``dst_img``'s AI buffer (pixels untouched; call
    ``dst_img.ai_to_pix()`` to see it).

    For destination pixel (j, i): ``pre = int(T[0]*(j<<8) + T[1]*(i<<8) + T[2]*256)`` (float),
    fraction ``pre & 255``, integer part ``pre >> 8``; outside ``[0, w-1] x [0, h-1]`` stays 0;
    otherwise ``((256-x)(256-y)c00 + x(256-y)c10 + (256-x)y c01 + xy c11) >> 16``. The right/bottom
    neighbours of the last column/row are read from the flat plane as the firmware does (next row
    / next plane; zeros past the end of the buffer).
    """
    T = [F(_args.to_float(v)) for v in _args.fixed_array(matrix, 9)]
    from ._core import ImageBase

    if not isinstance(src_img, ImageBase) or not isinstance(dst_img, ImageBase):
        raise TypeError("Image expected")
    if src_img._fmt != dst_img._fmt:
        raise ValueError("src_img->bpp != dst_img->bpp")
    if src_img._ai is None or dst_img._ai is None:
        raise ValueError("only support ai image affine")
    if src_img._fmt not in (GRAYSCALE, RGB565):
        raise ValueError("only support grayscale or RGB565 pic")
    ch = 1 if src_img._fmt == GRAYSCALE else 3
    sw, sh = src_img.width(), src_img.height()
    dw, dh = dst_img.width(), dst_img.height()
    src_flat = np.ascontiguousarray(src_img._ai).reshape(-1)[: ch * sw * sh]
    src_flat = np.concatenate([src_flat, np.zeros(sw + 2, np.uint8)]).astype(np.int64)
    jj = (np.arange(dw, dtype=np.int64) << 8).astype(F)[None, :]
    ii = (np.arange(dh, dtype=np.int64) << 8).astype(F)[:, None]
    with np.errstate(invalid="ignore", over="ignore"):
        # -ffast-math hoists the row terms out of the column loop: x = T0*(j<<8) + (T1*(i<<8) + T2*256)
        px = np.trunc(T[0] * jj + (T[1] * ii + T[2] * F(256)))
        py = np.trunc(T[3] * jj + (T[4] * ii + T[5] * F(256)))
    bad = ~(np.isfinite(px) & np.isfinite(py))
    px = np.where(bad, -(1 << 20), px).astype(np.int64)
    py = np.where(bad, -(1 << 20), py).astype(np.int64)
    fx, fy = px & 0xFF, py & 0xFF
    px >>= 8
    py >>= 8
    ok = (px >= 0) & (px <= sw - 1) & (py >= 0) & (py <= sh - 1)
    out = np.zeros((ch, dh, dw), np.uint8)
    pxv, pyv, fxv, fyv = px[ok], py[ok], fx[ok], fy[ok]
    for k in range(ch):
        base = pyv * sw + pxv + k * sw * sh
        c00 = src_flat[base]
        c10 = src_flat[base + 1]
        c01 = src_flat[base + sw]
        c11 = src_flat[base + sw + 1]
        val = ((256 - fxv) * (256 - fyv) * c00 + fxv * (256 - fyv) * c10
               + (256 - fxv) * fyv * c01 + fxv * fyv * c11) >> 16
        out[k][ok] = (val & 0xFF).astype(np.uint8)
    dst_ai = dst_img._buf.ai
    assert dst_ai is not None  # (checked above: dst_img._ai)
    flat = dst_ai.reshape(-1)
    flat[: ch * dw * dh] = out.reshape(-1)
    if dst_img._buf.ai_shared:  # a grayscale snapshot: the AI plane is the pixel memory
        dst_img._touch()
    return None
