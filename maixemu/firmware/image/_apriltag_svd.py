"""The AprilTag detector's SVD (``matd_svd`` / ``matd_svd_tall`` / ``svd22`` in apriltag.c), in the
firmware's float32 (the file ``#define``s ``double`` as ``float``), as the no-FMA build computes it —
the arithmetic the rest of ``_apriltag``/``_quads`` follows (the golden cases' ``expected_nofma``).

``_matd`` models the same routines with fused multiply-adds for ``rotation_corr(corners=)``. Two
facts of the C differ from it and are followed here: ``svd22``'s ``cos``/``sin`` are apriltag.c's
table macros (``riscv_cos_f32``/``riscv_sin_f32``), not libm's, and ``-ffast-math`` turns the
Householder normalisation ``v[i] /= mag`` into a multiply by ``1/mag``.

Householder bidiagonalisation, then at most 32 Jacobi-like 2x2 steps on the largest off-diagonal
element (tolerance 1e-5; ``svd22`` with the firmware's ``fast_atan2f`` and its table ``sin``/``cos``),
a bubble sort of the diagonal, sign fixes, and the permutation products. Small matrices only (the
9x9 normal matrix of a homography, the 3x3 rotation of a pose), so plain scalar loops in the C's
order of operations; where ``-ffast-math`` makes GCC regroup a sum, the regrouped form is used
(marked), which is what makes the results equal the firmware's C built without fused
multiply-adds (``expected_nofma`` of the golden AprilTag case).
"""

from __future__ import annotations

import numpy as np

from . import _fmath as fm

F = np.float32
_TOL = F(1e-5)
_MAXITERS = 32


def _sin(x) -> np.float32:
    from ._quads import table_sin

    return table_sin(x)


def _cos(x) -> np.float32:
    from ._quads import table_cos

    return F(table_cos(x))


def svd22(A):
    """``svd22``: U, S, V of a 2x2 float32 matrix (row-major lists)."""
    A00, A01, A10, A11 = (F(v) for v in A)
    B0, B1, B2, B3 = A00 + A11, A00 - A11, A01 + A10, A01 - A10
    PminusT = fm.fast_atan2f_1(B3, B0)
    PplusT = fm.fast_atan2f_1(B2, B1)
    P = (PminusT + PplusT) / F(2)
    T = (-PminusT + PplusT) / F(2)
    CP, SP = _cos(P), _sin(P)
    CT, ST = _cos(T), _sin(T)
    U = [CT, -ST, ST, CT]
    V = [CP, -SP, SP, CP]
    with np.errstate(divide="ignore", invalid="ignore"):
        CPmT, SPmT = _cos(P - T), _sin(P - T)
        C0 = B0 / CPmT if abs(CPmT) > abs(SPmT) else B3 / SPmT
        CPpT, SPpT = _cos(P + T), _sin(P + T)
        C1 = B1 / CPpT if abs(CPpT) > abs(SPpT) else B2 / SPpT
    e = (C0 + C1) / F(2)
    f = (C0 - C1) / F(2)
    if e < 0:
        e = -e
        U[0], U[2] = -U[0], -U[2]
    if f < 0:
        f = -f
        U[1], U[3] = -U[1], -U[3]
    if e > f:
        S = [e, f]
    else:
        S = [f, e]
        U[0], U[2], U[1], U[3] = U[1], U[3], U[0], U[2]
        V[0], V[2], V[1], V[3] = V[1], V[3], V[0], V[2]
    return U, S, V


def _max_idx(B, row: int, maxcol: int) -> int:
    maxi, maxv = 0, F(-1)
    for i in range(maxcol):
        if i == row:
            continue
        v = abs(B[row][i])
        if v > maxv:
            maxi, maxv = i, v
    return maxi


def _householder(B, M, vlen: int, get, put_side: str, start: int, other) -> bool:
    """One reflection: v from ``get(i)``, normalised; applied to ``M`` (LS or RS) and ``B``."""
    v = [F(get(i)) for i in range(vlen)]
    mag2 = F(0)
    for x in v:
        mag2 = F(mag2 + x * x)
    oldv0 = v[0]
    root = fm.fsqrt(mag2)
    v[0] = F(v[0] - root) if oldv0 < 0 else F(v[0] + root)
    mag2 = F(F(mag2 + -oldv0 * oldv0) + v[0] * v[0])
    mag = fm.fsqrt(mag2)
    if mag == 0:
        return False
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = F(F(1) / mag)  # -ffast-math: ``v[i] /= mag`` becomes a multiply by the reciprocal
    return [F(inv * x) for x in v]


def _reflect_cols(M, col0: int, v) -> None:
    """Each row of ``M``: ``dot = row[col0:] . v``; ``row[col0+j] -= 2*dot*v[j]``."""
    for row in M:
        dot = F(0)
        for j, x in enumerate(v):
            dot = F(dot + row[col0 + j] * x)
        two_dot = F(F(2) * dot)
        for j, x in enumerate(v):
            row[col0 + j] = F(row[col0 + j] - two_dot * x)


def _reflect_rows(M, row0: int, v) -> None:
    """Each column of ``M``: ``dot = col[row0:] . v``; ``col[row0+j] -= 2*dot*v[j]``."""
    ncols = len(M[0])
    for i in range(ncols):
        dot = F(0)
        for j, x in enumerate(v):
            dot = F(dot + M[row0 + j][i] * x)
        two_dot = F(F(2) * dot)
        for j, x in enumerate(v):
            M[row0 + j][i] = F(M[row0 + j][i] - two_dot * x)


def _identity(n: int):
    return [[F(1) if i == j else F(0) for j in range(n)] for i in range(n)]


def _multiply(a, b):
    """``matd_multiply``: sequential float32 sums."""
    n, m, p = len(a), len(b), len(b[0])
    out = []
    for i in range(n):
        row = []
        for j in range(p):
            acc = F(0)
            for k in range(m):
                acc = F(acc + a[i][k] * b[k][j])
            row.append(acc)
        out.append(row)
    return out


def _transpose(a):
    return [list(r) for r in zip(*a)]


def svd_tall(A):
    """``matd_svd_tall`` of a list-of-rows float32 matrix with ncols <= nrows -> (U, S, V)."""
    nrows, ncols = len(A), len(A[0])
    B = [[F(x) for x in row] for row in A]
    LS, RS = _identity(nrows), _identity(ncols)
    for hh in range(nrows):
        if hh < ncols:
            v = _householder(B, LS, nrows - hh, lambda i: B[hh + i][hh], "L", hh, None)
            if v is not False:
                _reflect_cols(LS, hh, v)
                _reflect_rows(B, hh, v)
            else:
                continue
        if hh + 2 < ncols:
            v = _householder(B, RS, ncols - hh - 1, lambda i: B[hh][hh + i + 1], "R", hh + 1, None)
            if v is False:
                continue
            _reflect_cols(RS, hh + 1, v)
            _reflect_cols(B, hh + 1, v)

    maxrowidx = [0] * ncols
    for i in range(2, ncols):
        maxrowidx[i] = _max_idx(B, i, ncols)
    lastmaxi, lastmaxj = 0, 1
    for _ in range(_MAXITERS):
        if ncols < 2:
            break
        maxi, maxv = -1, F(-1)
        for rowi in range(ncols):
            if rowi in (lastmaxi, lastmaxj) or maxrowidx[rowi] in (lastmaxi, lastmaxj):
                maxrowidx[rowi] = _max_idx(B, rowi, ncols)
                thismaxv = abs(B[rowi][maxrowidx[rowi]])
            else:
                thismaxv = abs(B[rowi][maxrowidx[rowi]])
                if lastmaxi != rowi:
                    v = abs(B[rowi][lastmaxi])
                    if v > thismaxv:
                        thismaxv, maxrowidx[rowi] = v, lastmaxi
                if lastmaxj != rowi:
                    v = abs(B[rowi][lastmaxj])
                    if v > thismaxv:
                        thismaxv, maxrowidx[rowi] = v, lastmaxj
            if thismaxv > maxv:
                maxv, maxi = thismaxv, rowi
        maxj = maxrowidx[maxi]
        lastmaxi, lastmaxj = maxi, maxj
        if maxv < _TOL:
            break
        U, _, V = svd22([B[maxi][maxi], B[maxi][maxj], B[maxj][maxi], B[maxj][maxj]])
        for M, R in ((LS, U), (RS, V)):
            for row in M:
                vi, vj = row[maxi], row[maxj]
                row[maxi] = F(R[0] * vi + R[2] * vj)
                row[maxj] = F(R[1] * vi + R[3] * vj)
        for i in range(ncols):
            vi, vj = B[maxi][i], B[maxj][i]
            B[maxi][i] = F(U[0] * vi + U[2] * vj)
            B[maxj][i] = F(U[1] * vi + U[3] * vj)
        for row in B:
            vi, vj = row[maxi], row[maxj]
            row[maxi] = F(V[0] * vi + V[2] * vj)
            row[maxj] = F(V[1] * vi + V[3] * vj)

    idxs = list(range(ncols))
    vals = [B[i][i] for i in range(ncols)]
    changed = True
    while changed:
        changed = False
        for i in range(ncols - 1):
            if abs(vals[i + 1]) > abs(vals[i]):
                idxs[i], idxs[i + 1] = idxs[i + 1], idxs[i]
                vals[i], vals[i + 1] = vals[i + 1], vals[i]
                changed = True
    LP, RP = _identity(nrows), _identity(ncols)
    for i in range(ncols):
        LP[idxs[i]][idxs[i]] = F(0)
        RP[idxs[i]][idxs[i]] = F(0)
    for i in range(ncols):
        LP[idxs[i]][i] = F(-1) if vals[i] < 0 else F(1)
        RP[idxs[i]][i] = F(1)
    B = _multiply(_multiply(_transpose(LP), B), RP)
    LS = _multiply(LS, LP)
    RS = _multiply(RS, RP)
    for i in range(len(B)):
        for j in range(len(B[0])):
            if i != j:
                B[i][j] = F(0)
    return LS, B, RS


def svd(A):
    """``matd_svd_flags``: tall matrices directly, wide ones through the transpose."""
    if len(A[0]) <= len(A):
        return svd_tall(A)
    U, S, V = svd_tall(_transpose(A))
    return V, _transpose(S), U
