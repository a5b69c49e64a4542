"""KPU pooling (kpu-hardware.md §6): the ten pool types, their geometry, and which ones commute
with a non-decreasing map (so the conv engine may pool the sums before the activation table)."""

from __future__ import annotations

import numpy as np

from ..errors import KmodelUnsupportedError

POOL_NAMES = {
    0: "bypass",
    1: "max_2_s2",
    2: "mean_2_s2",
    3: "max_4_s4",
    4: "mean_4_s4",
    5: "left_top_2_s2",
    6: "right_top_2_s2",
    7: "left_top_4_s4",
    8: "mean_2_s1",
    9: "max_2_s1",
}
#: pool_type -> (window, stride)
POOL_GEOMETRY = {0: (1, 1), 1: (2, 2), 2: (2, 2), 3: (4, 4), 4: (4, 4), 5: (2, 2), 6: (2, 2), 7: (4, 4), 8: (2, 1), 9: (2, 1)}
#: Selection pools: pool_type -> (stride, row offset, column offset) of the kept pixel.
_SELECTION_POOLS = {5: (2, 0, 0), 6: (2, 0, 1), 7: (4, 0, 0)}
#: Max pools: pool_type -> stride (= window). With the map G -> out non-decreasing they are
#: computed as the maximum over the ``stride**2`` phase-sampled sums (see ``_sample``).
_MAX_POOLS = {1: 2, 3: 4}
#: Pools that commute with a non-decreasing function (max and selection pools).
_POOL_COMMUTES_MONOTONE = {0, 1, 3, 5, 6, 7, 9}


def _floor_div(s: np.ndarray, d: int) -> np.ndarray:
    if s.dtype.kind == "f":
        return np.floor(s * (1.0 / d)).astype(s.dtype, copy=False)
    return s // d


def pool(a: np.ndarray, pool_type: int) -> np.ndarray:
    """Apply a KPU pool (kpu-hardware.md §6) over the last two axes of ``a`` (any real dtype).

    Integer division floors; for float arrays holding integers the result is the same floor.
    """
    if pool_type == 0:
        return a
    if pool_type in (2, 4, 8) and a.dtype.kind in "iu" and a.dtype.itemsize < 4:
        # mean pools sum up to 16 values: widen, floor-divide, narrow back (values stay in range)
        return pool(a.astype(np.int32), pool_type).astype(a.dtype)
    h, w = a.shape[-2:]
    if pool_type in (1, 2):
        # rows first (two whole-row streams), then the column pairs of half as much data
        oh, ow = h // 2, w // 2
        top, bottom = a[..., 0 : 2 * oh : 2, : 2 * ow], a[..., 1 : 2 * oh : 2, : 2 * ow]
        if pool_type == 1:
            r = np.maximum(top, bottom)
            return np.maximum(r[..., 0::2], r[..., 1::2])
        r = top + bottom
        return _floor_div(r[..., 0::2] + r[..., 1::2], 4)
    if pool_type in (5, 6):
        oh, ow = h // 2, w // 2
        a00 = a[..., 0 : 2 * oh : 2, 0 : 2 * ow : 2]
        if pool_type == 5:
            return np.ascontiguousarray(a00)
        return np.ascontiguousarray(a[..., 0 : 2 * oh : 2, 1 : 2 * ow : 2])
    if pool_type in (3, 4, 7):
        oh, ow = h // 4, w // 4
        if pool_type == 7:
            return np.ascontiguousarray(a[..., 0 : 4 * oh : 4, 0 : 4 * ow : 4])
        blocks = a[..., : 4 * oh, : 4 * ow].reshape(a.shape[:-2] + (oh, 4, ow, 4))
        if pool_type == 3:
            return blocks.max(axis=(-3, -1))
        return _floor_div(blocks.sum(axis=(-3, -1), dtype=a.dtype if a.dtype.kind == "f" else np.int64), 16)
    if pool_type == 8:
        pad = [(0, 0)] * (a.ndim - 2) + [(0, 1), (0, 1)]
        p = np.pad(a, pad, mode="edge")
        s = p[..., :-1, :-1] + p[..., 1:, :-1]
        s += p[..., :-1, 1:]
        s += p[..., 1:, 1:]
        return _floor_div(s, 4)
    if pool_type == 9:
        # max over the 2x2 window at each pixel, the window cut at the bottom/right edge (the
        # same as padding with -inf): rows first, then columns, no padded copy
        r = np.empty_like(a)
        np.maximum(a[..., :-1, :], a[..., 1:, :], out=r[..., :-1, :])
        r[..., -1, :] = a[..., -1, :]
        out = np.empty_like(a)
        np.maximum(r[..., :, :-1], r[..., :, 1:], out=out[..., :, :-1])
        out[..., :, -1] = r[..., :, -1]
        return out
    raise KmodelUnsupportedError(f"KPU pool_type {pool_type} is undefined", field="pool_type")
