"""Which exact product a layer's GEMM runs on, chosen per layer and per machine when it loads.

Kinds, fastest first: ``u8s8`` and ``u8u8`` (onnxruntime int8 ``MatMulInteger``, each proven
exact for the layer's weights on this CPU by ``kpu.int8``), ``f32`` (BLAS sgemm, K split so that
every partial sum stays below 2**24) and ``f64`` (below 2**53). A layer takes the first kind in
``product_order()`` that is exact for it and records why each faster one was refused
(``ProductPlan.refused``, shown by ``maixemu bench --layers``); ``f64`` is the last resort of
every order, as it is exact for every 8-bit and 16-bit layer there is.

``MAIXEMU_KPU_PRODUCTS`` (read at load) forces an order, e.g. ``u8u8`` or ``f32,f64``: tests
hold every kind to the int64 reference this way, and a forced kind is still proven first (a
forced ``u8s8`` that is not exact on this CPU falls back, with its reason). ``MAIXEMU_KPU_INT8=0``
(older spelling) is ``f32,f64``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from .int8 import INT8_KINDS, Int8Gemm, int8_enabled

KINDS = ("u8s8", "u8u8", "f32", "f64")
_F32_EXACT = 1 << 24
_F64_EXACT = 1 << 53
#: at most this many float32 chunks of K (each its own GEMM) before float64 is the faster choice
F32_MAX_CHUNKS = 4


def product_order() -> tuple[str, ...]:
    """The kinds a layer may take, in order: ``MAIXEMU_KPU_PRODUCTS`` (comma list) or all."""
    value = os.environ.get("MAIXEMU_KPU_PRODUCTS", "").strip().lower()
    order: tuple[str, ...]
    if not value or value == "auto":
        order = KINDS
    else:
        order = tuple(dict.fromkeys(v.strip() for v in value.split(",") if v.strip()))
        bad = [v for v in order if v not in KINDS]
        if bad:
            raise ValueError(f"MAIXEMU_KPU_PRODUCTS={value!r}: unknown kind {bad[0]!r}; use a comma list of {', '.join(KINDS)} (or auto)")
    if not int8_enabled():
        order = tuple(k for k in order if k not in INT8_KINDS) or ("f32", "f64")
    return order


def chunks_for_bound(absw: np.ndarray, xmax: int, limit: int) -> list[tuple[int, int]] | None:
    """Split the K axis of ``absw`` [N, K] so that ``xmax · Σ|w|`` over every chunk and channel
    stays below ``limit``; None when a single tap already reaches it."""
    oc, k = absw.shape
    if k == 0:
        return [(0, 0)]
    per_tap = absw.max(axis=0).astype(np.int64) * xmax
    if (per_tap >= limit).any():
        return None
    if int(absw.sum(axis=1, dtype=np.int64).max(initial=0)) * xmax < limit:
        return [(0, k)]  # (most layers: no [N, K] int64 running sums needed)
    cs = np.concatenate([np.zeros((oc, 1), dtype=np.int64), np.cumsum(absw, axis=1, dtype=np.int64)], axis=1)
    chunks = []
    start = 0
    while start < k:
        # largest end with max_o (cs[o,end]-cs[o,start]) * xmax < limit
        span = (cs[:, start + 1 :] - cs[:, start : start + 1]).max(axis=0) * xmax
        ok = np.nonzero(span < limit)[0]
        end = start + 1 + int(ok[-1])
        chunks.append((start, end))
        start = end
    return chunks


@dataclass
class ProductPlan:
    """One GEMM's product: ``kind``; ``gemm`` for the int8 kinds; for the float kinds ``dtype``
    and the K ``chunks`` (one for f64) whose partial sums are exact; what was refused, and why."""

    kind: str
    gemm: Int8Gemm | None = None
    dtype: type | None = None  # np.float32 or np.float64 for the float kinds
    chunks: list[tuple[int, int]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)


class ProductsInexact(ValueError):
    """Not even float64 sums are exact for these weights (the exact int64 path takes the layer)."""


def choose_int8(w_kn: np.ndarray, *, b_zero: int, a_zero: int, threads: int = 1,
                order: tuple[str, ...] | None = None) -> tuple[Int8Gemm | None, list[str]]:
    """The first int8 kind of ``order`` that is exact for the uint8 weights ``w_kn`` [K, N], and
    why the kinds before it were refused."""
    order = product_order() if order is None else order
    refused: list[str] = []
    for kind in order:
        if kind in INT8_KINDS:
            gemm, why = Int8Gemm.build(w_kn, b_zero, kind, a_zero=a_zero, threads=threads)
            if gemm is not None:
                return gemm, refused
            refused.append(str(why))
    return None, refused


def choose(w_kn: np.ndarray | None, wf_kn: np.ndarray, *, b_zero: int, a_zero: int, xmax: int,
           threads: int = 1, order: tuple[str, ...] | None = None) -> ProductPlan:
    """The first exact kind of ``order`` (default ``product_order()``) for ``G = Σ (x − a_zero)·wf``.

    ``w_kn``: the raw uint8 weights [K, N] (None when they are not 8-bit) with ``wf = w − b_zero``;
    ``wf_kn``: the centred weights ([K, N], any integer type that holds them) the float kinds multiply; ``xmax``: the largest
    ``|x − a_zero|``. Raises ``ProductsInexact`` when no kind is (sums beyond 2**53)."""
    order = product_order() if order is None else order
    refused: list[str] = []
    absw_: list[np.ndarray] = []

    def absw() -> np.ndarray:
        """|wf| for the float kinds' bounds, made only when one is considered (an int8 kind
        needs none, and a copy of a layer's weights at 8 bytes each was the load's peak)."""
        if not absw_:
            absw_.append(np.abs(wf_kn) if wf_kn.dtype.kind != "i" or wf_kn.dtype.itemsize >= 8 or wf_kn.size == 0
                         or int(wf_kn.min()) > np.iinfo(wf_kn.dtype).min else np.abs(wf_kn.astype(np.int64)))
        return absw_[0]

    plan = None
    for kind in order:
        if kind in INT8_KINDS:
            if w_kn is None:
                refused.append(f"{kind}: weights or zero points are not 8-bit")
                continue
            gemm, why = choose_int8(w_kn, b_zero=b_zero, a_zero=a_zero, threads=threads, order=(kind,))
            if gemm is not None:
                plan = ProductPlan(kind, gemm=gemm)
                break
            refused += why
        elif kind == "f32":
            bound = int(absw().sum(axis=0, dtype=np.int64).max(initial=0)) * xmax
            chunks = [(0, wf_kn.shape[0])] if bound < _F32_EXACT else chunks_for_bound(absw().T, xmax, _F32_EXACT)
            if chunks is not None and len(chunks) <= F32_MAX_CHUNKS:
                plan = ProductPlan("f32", dtype=np.float32, chunks=chunks)
                break
            refused.append(f"f32: sums need more than {F32_MAX_CHUNKS} exact float32 chunks")
        else:
            break
    if plan is None:
        bound = int(absw().sum(axis=0, dtype=np.int64).max(initial=0)) * xmax
        if bound >= _F64_EXACT:
            raise ProductsInexact("sums exceed float64's exact range")
        plan = ProductPlan("f64", dtype=np.float64, chunks=[(0, wf_kn.shape[0])])
    plan.refused = switched_off(plan.kind, order) + refused
    return plan


def switched_off(kind: str, order: tuple[str, ...]) -> list[str]:
    """The note for kinds faster than ``kind`` that ``order`` leaves out (forced by the user)."""
    off = [k for k in KINDS[: KINDS.index(kind)] if k not in order]
    return [f"{', '.join(off)}: off (MAIXEMU_KPU_PRODUCTS / MAIXEMU_KPU_INT8)"] if off else []
