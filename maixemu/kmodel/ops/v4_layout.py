"""Data-movement kernels of the nncase v0.2 runtime (pad, transpose, strided_slice, concat and the
broadcast rule): pure index arithmetic, so they are exact for any element type.

Each ``plan_*`` function runs at load time, validates the geometry against the tensor sizes and
returns what the run-time kernel needs (slices, index arrays), so ``run`` is a single numpy copy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Shape = tuple[int, int, int, int]


def shape_size(shape) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


def broadcast_index(in_shape: Shape, out_shape: Shape):
    """How to read an input under the V4 broadcast rule (index >= dim -> 0).

    Returns ``None`` when numpy broadcasting gives the same result (every input dim is 1 or equal
    to the output dim), else a tuple of index arrays for ``np.ix_``-style gathering.
    """
    if all(i == o or i == 1 for i, o in zip(in_shape, out_shape)):
        return None
    return np.ix_(*[np.where(np.arange(o) >= i, 0, np.arange(o)) for i, o in zip(in_shape, out_shape)])


def read_broadcast(x: np.ndarray, index, out_shape: Shape) -> np.ndarray:
    if index is None:
        return np.broadcast_to(x, out_shape)
    return x[index]


@dataclass(frozen=True)
class PadPlan:
    out_shape: Shape
    out_region: tuple[slice, ...]
    in_region: tuple[slice, ...]


def plan_pad(in_shape: Shape, paddings: list[tuple[int, int]]) -> PadPlan:
    """Output = input grown (or cropped, for negative paddings) by ``paddings`` per axis."""
    out_shape = tuple(int(d + b + a) for d, (b, a) in zip(in_shape, paddings))
    if any(d < 0 for d in out_shape):
        raise ValueError(f"paddings {paddings} crop {in_shape} below zero")
    out_region, in_region = [], []
    for d, o, (b, a) in zip(in_shape, out_shape, paddings):
        lo, hi = max(b, 0), o - max(a, 0)
        if hi < lo:
            hi = lo
        out_region.append(slice(lo, hi))
        in_region.append(slice(lo - b, hi - b))
    return PadPlan(out_shape, tuple(out_region), tuple(in_region))  # type: ignore[arg-type]


def run_pad(x: np.ndarray, plan: PadPlan, pad_value) -> np.ndarray:
    out = np.full(plan.out_shape, pad_value, dtype=x.dtype)
    out[plan.out_region] = x[plan.in_region]
    return out


def plan_strided_slice(in_shape: Shape, begin, end, strides) -> tuple[Shape, tuple[np.ndarray, ...]]:
    """The runtime's nested ``for (d = begin; stride > 0 ? d < end : d > end; d += stride)`` loops
    are Python ranges; every visited index must lie inside the input."""
    ranges = []
    for axis, (d, b, e, s) in enumerate(zip(in_shape, begin, end, strides)):
        if s == 0:
            raise ValueError(f"stride 0 on axis {axis} (the runtime would loop forever)")
        r = np.arange(b, e, s, dtype=np.int64)
        if r.size and (r.min() < 0 or r.max() >= d):
            raise ValueError(f"axis {axis} visits {b}..{e} step {s}, outside 0..{d - 1}")
        ranges.append(r)
    out_shape = tuple(int(r.size) for r in ranges)
    return out_shape, np.ix_(*ranges)  # type: ignore[return-value]


def check_perm(perm) -> tuple[int, int, int, int]:
    p = tuple(int(v) for v in perm)
    if sorted(p) != [0, 1, 2, 3]:
        raise ValueError(f"perm {p} is not a permutation of 0..3")
    return p  # type: ignore[return-value]


def transpose_shape(in_shape: Shape, perm) -> Shape:
    return tuple(int(in_shape[p]) for p in perm)  # type: ignore[return-value]
