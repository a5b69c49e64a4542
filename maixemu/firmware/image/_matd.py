"""The apriltag port's ``matd`` routines (apriltag.c) as the K210 build computes them: float32.

OpenMV's apriltag.c, which MaixPy-v1 compiles into imlib, starts with ``#define double float``
(and maps ``sqrt``/``atan2`` to ``fast_sqrtf``/``fast_atan2f``), so every matrix is float32. The
-ffast-math build fuses ``acc += a * b`` into one rounding (``fmadd.s``); :func:`fma` rounds the exact
float64 result once (float32 products are exact in float64).

- :func:`matmul` is ``matd_multiply`` (``acc = fma(a[i, k], b[k, j], acc)`` over k),
- :func:`inverse` is ``matd_inverse`` through ``matd_plu`` and ``matd_plu_solve`` (partial
  pivoting; a pivot below 1e-8 makes the matrix singular),
- :func:`svd` is ``matd_svd_tall``'s U and V: Householder bidiagonalisation, then
  at most **32** Jacobi rotations (``maxiters = 1UL << 5``, ``tol = 1E-5``) chosen by the largest
  off-diagonal element, each from ``svd22`` (``fast_atan2f``, libm ``sinf``/``cosf``), then the
  bubble sort of the singular values. The port stops after 32 rotations, which on the 9x9 normal
  matrix of a homography is far from converged: the firmware's homographies are off by pixels,
  and a float64 SVD would not give them,
- :func:`homography_compute` with ``HOMOGRAPHY_COMPUTE_FLAG_SVD``: centroids, the 9x9 normal matrix
  accumulated entry by entry in the source's order, ``U[:, 8]`` as H, then ``Ty * H * Tx``.

Measured against a host build of the C code with the firmware's flags and FMA contraction (see
``_rotation``): the homographies of the tests are bit-identical.
"""

from __future__ import annotations

import numpy as np

from . import _fmath

F = np.float32


def f32(x: float) -> float:
    return float(F(x))


def fma(a: float, b: float, c: float) -> float:
    """float32 ``fmadd.s`` (the float64 product of two float32 values is exact; one rounding)."""
    return float(F(float(a) * float(b) + float(c)))


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``matd_multiply`` in float32: ``acc = fma(a[i, k], b[k, j], acc)`` over k."""
    out = np.zeros((a.shape[0], b.shape[1]), F)
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            acc = 0.0
            for k in range(a.shape[1]):
                acc = fma(a[i, k], b[k, j], acc)
            out[i, j] = acc
    return out


def inverse(m: np.ndarray) -> np.ndarray | None:
    """``matd_inverse``: PLU, then solve against I; None if singular (a pivot below 1e-8)."""
    n = m.shape[0]
    lu = m.astype(F).copy()
    piv = list(range(n))
    singular = False
    for j in range(n):
        for i in range(n):
            acc = 0.0
            for k in range(min(i, j)):
                acc = fma(lu[i, k], lu[k, j], acc)
            lu[i, j] = F(lu[i, j] - F(acc))
        p = j
        for i in range(j + 1, n):
            if abs(lu[i, j]) > abs(lu[p, j]):
                p = i
        if p != j:
            lu[[p, j]] = lu[[j, p]]
            piv[p], piv[j] = piv[j], piv[p]
        lujj = lu[j, j]
        if abs(lujj) < F(1e-8):
            singular = True
        if lujj != 0:
            inv = F(F(1.0) / lujj)
            for i in range(j + 1, n):
                lu[i, j] = F(lu[i, j] * inv)
    if singular:
        return None
    x = np.eye(n, dtype=F)[piv]
    for k in range(n):
        for i in range(k + 1, n):
            luik = -float(lu[i, k])
            for t in range(n):
                x[i, t] = fma(x[k, t], luik, x[i, t])
    for k in range(n - 1, -1, -1):
        lukk = F(F(1.0) / lu[k, k])
        for t in range(n):
            x[k, t] = F(x[k, t] * lukk)
        for i in range(k):
            luik = -float(lu[i, k])
            for t in range(n):
                x[i, t] = fma(x[k, t], luik, x[i, t])
    return x


# ---------------------------------------------------------------------- SVD
def _atan2(y: float, x: float) -> float:
    return float(_fmath.fast_atan2f(F(y), F(x)))


def svd22(a00: float, a01: float, a10: float, a11: float) -> tuple[list[float], list[float]]:
    """``svd22``: the rotations U, V (row-major 2x2) of a 2x2 SVD, in float32."""
    b0, b1 = f32(a00 + a11), f32(a00 - a11)
    b2, b3 = f32(a01 + a10), f32(a01 - a10)
    pmt = _atan2(b3, b0)
    ppt = _atan2(b2, b1)
    p = f32(f32(pmt + ppt) * 0.5)
    t = f32(f32(ppt - pmt) * 0.5)
    cos, sin = _fmath.cosf, _fmath.sinf
    cp, sp, ct, st = float(cos(p)), float(sin(p)), float(cos(t)), float(sin(t))
    u = [ct, -st, st, ct]
    v = [cp, -sp, sp, cp]
    d, s = f32(p - t), f32(p + t)
    cpmt, spmt = float(cos(d)), float(sin(d))
    c0 = f32(b0 / cpmt) if abs(cpmt) > abs(spmt) else f32(b3 / spmt)
    cppt, sppt = float(cos(s)), float(sin(s))
    c1 = f32(b1 / cppt) if abs(cppt) > abs(sppt) else f32(b2 / sppt)
    e = f32(f32(c0 + c1) * 0.5)
    g = f32(f32(c0 - c1) * 0.5)
    if e < 0:
        e = -e
        u[0], u[2] = -u[0], -u[2]
    if g < 0:
        g = -g
        u[1], u[3] = -u[1], -u[3]
    if not e > g:
        u = [u[1], u[0], u[3], u[2]]
        v = [v[1], v[0], v[3], v[2]]
    return u, v


def _max_idx(B: list[list[float]], row: int, maxcol: int) -> int:
    maxi, maxv = 0, -1.0
    for i in range(maxcol):
        if i != row and abs(B[row][i]) > maxv:
            maxi, maxv = i, abs(B[row][i])
    return maxi


def _reflect(v: list[float]) -> list[float] | None:
    """The normalised Householder normal of ``v`` (None when its magnitude is 0)."""
    mag2 = 0.0
    for x in v:
        mag2 = fma(x, x, mag2)
    old = v[0]
    root = float(_fmath.fast_sqrtf(F(mag2)))
    v = list(v)
    v[0] = f32(v[0] - root) if old < 0 else f32(v[0] + root)
    mag2 = f32(mag2 + fma(v[0], v[0], f32(-old * old)))
    mag = float(_fmath.fast_sqrtf(F(mag2)))
    if mag == 0:
        return None
    return [f32(x / mag) for x in v]


def _apply_rows(M: list[list[float]], off: int, v: list[float]) -> None:
    """Every row r of M: ``r[off:] -= 2 * (r[off:] . v) * v``."""
    for r in M:
        dot = 0.0
        for j, vj in enumerate(v):
            dot = fma(r[off + j], vj, dot)
        t = -f32(2 * dot)
        for j, vj in enumerate(v):
            r[off + j] = fma(t, vj, r[off + j])


def _apply_cols(M: list[list[float]], off: int, v: list[float], ncols: int) -> None:
    """Every column c of M: ``c[off:] -= 2 * (c[off:] . v) * v``."""
    for i in range(ncols):
        dot = 0.0
        for j, vj in enumerate(v):
            dot = fma(M[off + j][i], vj, dot)
        t = -f32(2 * dot)
        for j, vj in enumerate(v):
            M[off + j][i] = fma(t, vj, M[off + j][i])


def svd(A: np.ndarray, maxiters: int = 1 << 5, tol: float = f32(1e-5)) -> tuple[np.ndarray, np.ndarray]:
    """``matd_svd_tall(A)``'s U and V (A square or tall), float32, as the firmware's port computes them."""
    nr, nc = A.shape
    B = [[float(x) for x in row] for row in A.astype(F)]
    LS = [[1.0 if i == j else 0.0 for j in range(nr)] for i in range(nr)]
    RS = [[1.0 if i == j else 0.0 for j in range(nc)] for i in range(nc)]
    for hh in range(nr):
        if hh < nc:
            v = _reflect([B[hh + i][hh] for i in range(nr - hh)])
            if v is None:
                continue
            _apply_rows(LS, hh, v)
            _apply_cols(B, hh, v, nc)
        if hh + 2 < nc:
            v = _reflect([B[hh][hh + i + 1] for i in range(nc - hh - 1)])
            if v is None:
                continue
            _apply_rows(RS, hh + 1, v)
            _apply_rows(B, hh + 1, v)
    maxrow = [0] * nc
    for i in range(2, nc):
        maxrow[i] = _max_idx(B, i, nc)
    lasti, lastj = 0, 1
    for _ in range(maxiters):
        if nc < 2:
            break
        maxi, maxv = -1, -1.0
        for r in range(nc):
            if r in (lasti, lastj) or maxrow[r] in (lasti, lastj):
                maxrow[r] = _max_idx(B, r, nc)
                this = abs(B[r][maxrow[r]])
            else:
                this = abs(B[r][maxrow[r]])
                for c in (lasti, lastj):
                    if c != r and abs(B[r][c]) > this:
                        this, maxrow[r] = abs(B[r][c]), c
            if this > maxv:
                maxv, maxi = this, r
        if maxi < 0:  # only NaN entries left
            break
        maxj = maxrow[maxi]
        lasti, lastj = maxi, maxj
        if maxv < tol:
            break
        u, v = svd22(B[maxi][maxi], B[maxi][maxj], B[maxj][maxi], B[maxj][maxj])
        for M, q in ((LS, u), (RS, v)):
            for row in M:
                vi, vj = row[maxi], row[maxj]
                row[maxi] = fma(q[0], vi, f32(q[2] * vj))
                row[maxj] = fma(q[1], vi, f32(q[3] * vj))
        for i in range(nc):
            vi, vj = B[maxi][i], B[maxj][i]
            B[maxi][i] = fma(u[0], vi, f32(u[2] * vj))
            B[maxj][i] = fma(u[1], vi, f32(u[3] * vj))
        for row in B:
            vi, vj = row[maxi], row[maxj]
            row[maxi] = fma(v[0], vi, f32(v[2] * vj))
            row[maxj] = fma(v[1], vi, f32(v[3] * vj))
    idxs = list(range(nc))
    vals = [B[i][i] for i in range(nc)]
    changed = True
    while changed:  # "A bubble sort. Seriously."
        changed = False
        for i in range(nc - 1):
            if abs(vals[i + 1]) > abs(vals[i]):
                idxs[i], idxs[i + 1] = idxs[i + 1], idxs[i]
                vals[i], vals[i + 1] = vals[i + 1], vals[i]
                changed = True
    # LS * LP and RS * RP: the permutation matrices only move (and, for U, negate) columns
    L, R = np.array(LS, F), np.array(RS, F)
    U, V = L.copy(), np.zeros_like(R)
    for i in range(nc):
        U[:, i] = L[:, idxs[i]] * (F(-1) if vals[i] < 0 else F(1))
        V[:, i] = R[:, idxs[i]]
    return U, V


def svd_u(A: np.ndarray) -> np.ndarray:
    """``matd_svd_tall(A).U``."""
    return svd(A)[0]


def homography_compute(corr) -> np.ndarray:
    """``homography_compute(correspondences, HOMOGRAPHY_COMPUTE_FLAG_SVD)``: world (x, y) ->
    image (x, y) from rows ``(wx, wy, ix, iy)``, float32."""
    c = [[f32(v) for v in row] for row in corr]
    sums = [0.0] * 4
    for row in c:
        for k in range(4):
            sums[k] = f32(sums[k] + row[k])
    n = len(c)
    x_cx, x_cy, y_cx, y_cy = (f32(s / n) for s in sums)
    A = [[0.0] * 9 for _ in range(9)]

    def acc(block, vals):
        for i, ai in zip(block, vals):
            for j, aj in zip(block, vals):
                if j >= i:
                    A[i][j] = fma(ai, aj, A[i][j])

    for row in c:
        wx, wy = f32(row[0] - x_cx), f32(row[1] - x_cy)
        ix, iy = f32(row[2] - y_cx), f32(row[3] - y_cy)
        acc((3, 4, 5, 6, 7, 8), (-wx, -wy, -1.0, f32(wx * iy), f32(wy * iy), iy))
        acc((0, 1, 2, 6, 7, 8), (wx, wy, 1.0, f32(-wx * ix), f32(-wy * ix), -ix))
        acc((0, 1, 2, 3, 4, 5), (f32(-wx * iy), f32(-wy * iy), -iy, f32(wx * ix), f32(wy * ix), ix))
    for i in range(9):
        for j in range(i + 1, 9):
            A[j][i] = A[i][j]
    U = svd_u(np.array(A, F))
    H = U[:, 8].reshape(3, 3).copy()
    Tx = np.array([[1, 0, -x_cx], [0, 1, -x_cy], [0, 0, 1]], F)
    Ty = np.array([[1, 0, y_cx], [0, 1, y_cy], [0, 0, 1]], F)
    return matmul(matmul(Ty, H), Tx)
