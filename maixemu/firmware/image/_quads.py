"""The AprilTag quad detector of the firmware (``apriltag.c``: ``apriltag_quad_thresh``, ``fit_quad``,
``refine_edges``, the reconciliation of overlapping quads), shared by ``find_rects`` and
``find_apriltags``: the steps in order, each one a compiled kernel of ``_quadkernels``.

OpenMV's port runs AprilTag 2 in single precision (``#define double float``) with the fast
approximations of ``fmath.c`` for sqrt/atan2/exp/log, a table sine/cosine for ``sin``/``cos`` and
libm's ``cosf``/``sinf``; the kernels keep that float32 arithmetic and its order of operations (no
fused multiply-add: the golden cases accept the non-contracted build).

Device facts reproduced because they change answers:

* the union-find keeps 16-bit node ids (``uint16_t``): in an image of more than 65536 pixels the
  pixel ``i`` and ``i + 65536`` share one node;
* clusters come out of a hash table of ``OMV_FB_ALLOC_SIZE / sizeof(void *)`` = 89600 buckets
  (MaixPy's ``fb_alloc_all`` always hands out ``OMV_FB_ALLOC_SIZE``, 700 KiB in the full build; the
  minimum build has neither find_rects nor find_apriltags), bucket by bucket, newest cluster first.

Not reproduced: the firmware's heap for cluster points (``umm_init_x``) is sized from the free
frame-buffer memory, and on a busy, large image it can run out and drop points silently; here no
point is dropped.

The kernels module is imported on first use: importing it imports numba.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _fmath as fm
from ._fmath import F
from ._jit import NOT_SERVED, compiled_now as compiled  # (the array form until kernels are served compiled)

FB_ALLOC_SIZE = 700 * 1024
N_CLUSTER_BUCKETS = FB_ALLOC_SIZE // 8  # sizeof(struct uint32_zarray_entry *) on the 64-bit K210
MIN_CLUSTER_PIXELS = 5


def kernels():
    """``_quadkernels``, imported on first use."""
    from . import _quadkernels

    return _quadkernels


@lru_cache(maxsize=1)
def sin_table() -> np.ndarray:
    """The CMSIS sine table apriltag.c's ``sin``/``cos`` macros interpolate (read-only)."""
    tab = kernels().sin_table()
    tab.setflags(write=False)
    return tab


def table_sin(x) -> np.float32:
    """apriltag.c's ``sin`` (``riscv_sin_f32``) of a float32."""
    return F(kernels().table_sin(F(x), sin_table()))


def table_cos(x) -> np.float32:
    """apriltag.c's ``cos`` (``riscv_cos_f32``) of a float32."""
    return F(kernels().table_cos(F(x), sin_table()))


@lru_cache(maxsize=1)
def _filter_taps() -> np.ndarray:
    """``quad_segment_maxima``'s Gaussian (sigma 1, cut at 0.05) with fmath.c's ``fast_expf``/``fast_log``."""
    sigma = F(1)
    cutoff = F(0.05)
    fsz = int(fm.fsqrt(-fm.fast_log_1(cutoff) * F(2) * sigma * sigma)) + 1
    fsz = 2 * fsz + 1
    taps = np.array([fm.fast_expf_1(F(-(j * j)) / (F(2) * sigma * sigma))
                     for j in range(-(fsz // 2), fsz - fsz // 2)], F)
    taps.setflags(write=False)
    return taps


def threshold(im: np.ndarray) -> np.ndarray:
    """``threshold()``: 0/255 around each 4x4 tile's local mid-level, 127 where there is no contrast
    (the compiled kernel where it is served, else :func:`threshold_arrays`)."""
    im = np.ascontiguousarray(im, np.uint8)
    h, w = im.shape
    if h < 4 or w < 4:  # (no full tile: the kernel's reads as they are)
        with np.errstate(all="ignore"):
            return kernels().threshold(im, np.empty_like(im))
    if compiled():
        out = np.empty_like(im)
        if kernels().threshold.attempt(im, out) is not NOT_SERVED:
            return out
    return threshold_arrays(im)


#: ``MIN_WHITE_BLACK_DIFF`` of apriltag.c (``_quadkernels`` has it too: importing that imports numba)
_MIN_WHITE_BLACK_DIFF = 5


def threshold_arrays(im: np.ndarray) -> np.ndarray:
    """The ``threshold`` kernel as array code, for an image of at least one full 4x4 tile: tile
    extrema, their 3x3 extrema (the kernel's 0/255 starting values pad the border), the tiles'
    test, then the partial right and bottom tiles against the last full tile's mid-level."""
    h, w = im.shape
    th, tw = h // 4, w // 4
    tiles = im[:th * 4, :tw * 4].reshape(th, 4, tw, 4)
    pmax = np.pad(tiles.max(axis=(1, 3)).astype(np.int64), 1, constant_values=0)
    pmin = np.pad(tiles.min(axis=(1, 3)).astype(np.int64), 1, constant_values=255)
    smax = np.max([pmax[dy:dy + th, dx:dx + tw] for dy in range(3) for dx in range(3)], axis=0)
    smin = np.min([pmin[dy:dy + th, dx:dx + tw] for dy in range(3) for dx in range(3)], axis=0)
    thresh = smin + (smax - smin) // 2
    ty = np.minimum(np.arange(h) // 4, th - 1)
    tx = np.minimum(np.arange(w) // 4, tw - 1)
    out = np.where(im > thresh[ty][:, tx], 255, 0).astype(np.uint8)
    low = np.repeat(np.repeat(smax - smin < _MIN_WHITE_BLACK_DIFF, 4, axis=0), 4, axis=1)
    out[:th * 4, :tw * 4][low] = 127
    return out


def union_find(t: np.ndarray) -> np.ndarray:
    """The union-find parents of the thresholded image (16-bit node ids)."""
    h, w = t.shape
    return kernels().union_find(t, np.arange(min(w * h + 1, 65536), dtype=np.int64))


def clusters(t: np.ndarray):
    """The boundary clusters the firmware fits quads to, in its order: ``(x, y, gx, gy, offsets)``
    (points at twice their coordinates, gradients towards white; cluster i is
    ``[offsets[i], offsets[i + 1])``), clusters of 5 to ``3 * (2w + 2h)`` points only."""
    h, w = t.shape
    return kernels().gather_clusters(t, union_find(t), N_CLUSTER_BUCKETS, MIN_CLUSTER_PIXELS, 3 * (2 * w + 2 * h))


def detect_quads(im: np.ndarray, override_mode: bool) -> np.ndarray:
    """``apriltag_quad_thresh``: every plausible quad's corners (unrefined), (n, 4, 2) float32, in the
    firmware's order. ``override_mode`` (find_rects) also takes white-inside-black quads."""
    im = np.ascontiguousarray(im, np.uint8)
    h, w = im.shape
    if w < 4 or h < 4:  # no full 4x4 tile: the firmware's threshold reads outside its tile arrays
        return np.zeros((0, 4, 2), F)
    k = kernels()
    px, py, gx, gy, offsets = clusters(threshold(im))
    with np.errstate(all="ignore"):
        return k.fit_quads(im, px, py, gx, gy, offsets, bool(override_mode), _filter_taps(),
                           table_cos(k.CRITICAL_RAD))


def refine_edges(im: np.ndarray, quads: np.ndarray) -> np.ndarray:
    """``refine_edges`` of each quad (a refined copy)."""
    with np.errstate(all="ignore"):
        return kernels().refine_quads(np.ascontiguousarray(im, np.uint8), np.array(quads, F).reshape(-1, 4, 2))


def polygons_overlap(pa, pb) -> bool:
    """``g2d_polygon_overlaps_polygon`` of two polygons' corners."""
    with np.errstate(all="ignore"):
        return bool(kernels().polygons_overlap(np.asarray(pa, F), np.asarray(pb, F)))


def reconcile(keys: np.ndarray, corners: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """The kept indices of the firmware's reconciliation: of two overlapping polygons of one group,
    the one whose ``keys`` row compares smaller first stays."""
    with np.errstate(all="ignore"):
        return kernels().reconcile(np.ascontiguousarray(keys, F), np.ascontiguousarray(corners, F),
                                   np.ascontiguousarray(groups, np.int64))


def drop_overlapping(quads: np.ndarray) -> np.ndarray:
    """``imlib_find_rects``' reconciliation: of two overlapping quads keep the one whose corner
    coordinates compare smaller first (x then y of each corner in turn)."""
    quads = np.ascontiguousarray(quads, F).reshape(-1, 4, 2)
    return quads[reconcile(quads.reshape(-1, 8), quads, np.zeros(len(quads), np.int64))]
