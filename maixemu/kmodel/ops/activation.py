"""Float activation-like layers: SOFTMAX, LOGISTIC, L2_NORMALIZATION (device float32 order).

``expf`` follows libm's table-driven algorithm step by step (see :func:`expf`); ``sqrtf`` is
correctly rounded (IEEE), so float64 sqrt rounded once is exact; sums are sequential float32
accumulations (``np.add.accumulate``), not numpy's pairwise ``sum``.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32
FLT_MIN = np.finfo(np.float32).tiny


def _exp2f_table() -> np.ndarray:
    """``tab[i] = bits(2**(i/32)) - (i << 47)``: the table of the common expf algorithm."""
    from decimal import Decimal, getcontext

    getcontext().prec = 60
    out = []
    for i in range(_EXPF_N):
        d = float(Decimal(2) ** (Decimal(i) / Decimal(_EXPF_N)))  # correctly rounded
        bits = int(np.array(d, dtype=np.float64).view(np.uint64))
        out.append((bits - (i << 47)) & 0xFFFFFFFFFFFFFFFF)
    return np.array(out, dtype=np.uint64)


_EXPF_N = 32
_EXPF_TAB = _exp2f_table()
_EXPF_INVLN2N = float.fromhex("0x1.71547652b82fep+0") * _EXPF_N
_EXPF_SHIFT = float.fromhex("0x1.8p+52")
_EXPF_C = (
    float.fromhex("0x1.c6af84b912394p-5") / _EXPF_N**3,
    float.fromhex("0x1.ebfce50fac4f3p-3") / _EXPF_N**2,
    float.fromhex("0x1.62e42ff0c52d6p-1") / _EXPF_N,
)
_EXPF_OVERFLOW = float.fromhex("0x1.62e42ep6")
_EXPF_UNDERFLOW = float.fromhex("-0x1.9fe368p6")
#: ``2**(i/32)`` as float64 (the table without its exponent offsets) and the constants, in the
#: argument order of the compiled ``kpu.kernels.expf_scalar`` / ``softmax_v3``
EXPF_ARGS = ((_EXPF_TAB + (np.arange(_EXPF_N, dtype=np.uint64) << np.uint64(47))).view(np.float64),
             *_EXPF_C, _EXPF_INVLN2N, _EXPF_SHIFT, _EXPF_OVERFLOW, _EXPF_UNDERFLOW)


def expf(x: np.ndarray) -> np.ndarray:
    """float32 ``expf`` with the table-driven double-precision algorithm of glibc/musl/newlib.

    The reference vectors were made with glibc's ``expf``, which is *not* correctly rounded
    (rounding ``exp`` in float64 differs in ~1 of 2000 results); this reproduces its every step
    (2**(k/32) table, cubic polynomial, one final rounding) and matched libm bit for bit on
    200 000 random inputs. newlib (the device's libm) ships the same algorithm.
    """
    x = np.asarray(x, dtype=F32)
    with np.errstate(all="ignore"):
        xd = x.astype(np.float64)
        z = _EXPF_INVLN2N * xd
        kd = z + _EXPF_SHIFT
        ki = kd.view(np.uint64)
        kd = kd - _EXPF_SHIFT
        r = z - kd
        t = _EXPF_TAB[(ki % np.uint64(_EXPF_N)).astype(np.intp)] + (ki << np.uint64(47))
        s = t.view(np.float64)
        zz = _EXPF_C[0] * r + _EXPF_C[1]
        r2 = r * r
        y = _EXPF_C[2] * r + 1.0
        y = zz * r2 + y
        y = (y * s).astype(F32)
        y = np.where(xd > _EXPF_OVERFLOW, F32(np.inf), y)
        y = np.where(xd < _EXPF_UNDERFLOW, F32(0.0), y)
        y = np.where(np.isnan(x), x, y)
    return y.astype(F32, copy=False)


def sequential_sum(x: np.ndarray) -> np.float32:
    """Left-to-right float32 sum starting from 0.0f (as a C loop computes it)."""
    if x.size == 0:
        return F32(0.0)
    with np.errstate(all="ignore"):
        return F32(np.add.accumulate(x.astype(F32))[-1])


def softmax_v3(x: np.ndarray) -> np.ndarray:
    """KL_SOFTMAX: the max starts at FLT_MIN (device quirk), then exp, sequential sum, divide."""
    x = x.astype(F32)
    m = max(F32(FLT_MIN), F32(x.max())) if x.size else F32(FLT_MIN)
    with np.errstate(all="ignore"):
        e = expf(x - m)
        s = sequential_sum(e)
        return e / s


def logistic(x: np.ndarray) -> np.ndarray:
    """KL_LOGISTIC: ``1.0f / (1.0f + expf(-x))``."""
    with np.errstate(all="ignore"):
        return F32(1.0) / (F32(1.0) + expf(-x.astype(F32)))


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """KL_L2_NORMALIZATION: sequential Σx² (floored at 1e-10f), ``k = 1/sqrtf(sum)``, ``x*k``."""
    x = x.astype(F32)
    with np.errstate(all="ignore"):
        s = sequential_sum(x * x)
        if s < F32(1e-10):
            s = F32(1e-10)
        k = F32(1.0) / F32(np.sqrt(np.float64(s)))
        return x * k
