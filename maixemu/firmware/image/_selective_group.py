"""``selective_search``'s hierarchical grouping (selective_search.c after the segmentation): the
pairwise similarities of the segments, then merge after merge of the most similar adjacent pair,
each merge proposing the merged bounding box.

Two forms give the same boxes in the same order:

* :func:`_group_kernel` (numba): one pass over the pairs per merge, the C's loops, the similarity
  of a pair summed bin by bin in float32 as the C; no (n, n) temporaries, so a frame's few hundred
  segments take a few milliseconds where the array form takes tens;
* :func:`group_arrays`: each merge one ``argmax`` over the masked similarity matrix and one array
  pass over the merged region's neighbours (the form that serves while the kernel is not compiled:
  the kernel's Python twin walks n^2 pairs per merge in Python, seconds a frame).

Ties: the C picks the first best pair in row-major order of (i < j); ``argmax`` does too, and the
kernel keeps the first strictly greater value. A NaN similarity (none arises from real histograms)
stops the grouping in both, as ``argmax`` returns the first NaN and ``NaN > 0`` is false.
"""

from __future__ import annotations

import numpy as np

from ._jit import NOT_SERVED, compiled_now as compiled, kernel

F = np.float32


def _cdiv(a, b):
    """C integer division (toward zero)."""
    a = np.asarray(a, np.int64)
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def similarity(hist_a, hist_b, count_a, count_b, reg_a, reg_b, size, a1, a2, a3):
    """``color_similarity``/``size_similarity``/``fill_similarity`` of one region against many."""
    mins = np.minimum(hist_a, hist_b).astype(F)
    color = np.cumsum(mins, axis=-1, dtype=F)[..., -1] if mins.ndim > 1 else np.cumsum(mins, dtype=F)[-1]
    size_sim = F(1) - F(_cdiv(count_a + count_b, size))
    width = np.maximum(reg_a[..., 3], reg_b[..., 3]) - np.minimum(reg_a[..., 2], reg_b[..., 2])
    height = np.maximum(reg_a[..., 1], reg_b[..., 1]) - np.minimum(reg_a[..., 0], reg_b[..., 0])
    fill_sim = F(1) - _cdiv(width * height - count_a - count_b, size).astype(F)
    return ((F(a1) * color) + (F(a2) * size_sim)) + (F(a3) * fill_sim)


def group(hist, counts, regions, adj, size: int, a1: float, a2: float, a3: float) -> tuple[np.ndarray, bool]:
    """The merged boxes ``(n merges, 4)`` as (min x, min y, max x, max y), duplicates included, and
    whether the grouping stopped on no positive similarity ("failed to build tree"). Reads and
    changes ``hist``, ``counts``, ``regions`` and ``adj`` (the caller's copies)."""
    n = counts.shape[0]
    boxes = np.empty((max(n - 1, 0), 4), np.int64)
    if compiled():
        out = _group_kernel.attempt(hist, counts, regions, adj, np.zeros((n, n), F), int(size), F(a1), F(a2),
                                    F(a3), boxes)
        if out is not NOT_SERVED:
            made, failed = out
            return boxes[:made], bool(failed)
    return group_arrays(hist, counts, regions, adj, size, a1, a2, a3)


def first_seen(boxes: np.ndarray) -> list[tuple[int, int, int, int]]:
    """The boxes in order, each proposed once (the C skips a box it proposed before)."""
    if boxes.shape[0] == 0:
        return []
    _, first = np.unique(boxes, axis=0, return_index=True)
    return [tuple(b) for b in boxes[np.sort(first)].tolist()]


def group_arrays(hist, counts, regions, adj, size: int, a1: float, a2: float, a3: float) -> tuple[np.ndarray, bool]:
    """:func:`group` as array code (see the module docstring)."""
    n = counts.shape[0]
    sim = np.zeros((n, n), F)
    for i in range(n):
        j = np.arange(i + 1, n)
        if j.size:
            s = similarity(hist[i], hist[j], counts[i], counts[j], regions[i], regions[j], size, a1, a2, a3)
            sim[i, j] = s
            sim[j, i] = s
    boxes: list[tuple[int, int, int, int]] = []
    upper = np.triu(np.ones((n, n), bool), 1)
    remaining = n
    failed = False
    while remaining > 1:
        cand_sim = np.where(adj & upper, sim, F(0))
        flat_best = int(np.argmax(cand_sim))
        if not cand_sim.reshape(-1)[flat_best] > 0:
            failed = True
            break
        bi, bj = divmod(flat_best, n)
        regions[bi, 0] = min(regions[bi, 0], regions[bj, 0])
        regions[bi, 2] = min(regions[bi, 2], regions[bj, 2])
        regions[bi, 3] = max(regions[bi, 3], regions[bj, 3])
        regions[bi, 1] = max(regions[bi, 1], regions[bj, 1])
        boxes.append((int(regions[bi, 2]), int(regions[bi, 0]), int(regions[bi, 3]), int(regions[bi, 1])))
        ci, cj = F(counts[bi]), F(counts[bj])
        hist[bi] = ((ci * hist[bi]) + (cj * hist[bj])) / F(counts[bi] + counts[bj])
        counts[bi] += counts[bj]
        adj[bi] |= adj[bj]
        adj[:, bi] |= adj[:, bj]
        adj[bj] = False
        adj[:, bj] = False
        adj[bi, bi] = False
        nb = np.nonzero(adj[bi])[0]
        if nb.size:
            s = similarity(hist[nb], hist[bi], counts[nb], counts[bi], regions[nb], regions[bi], size, a1, a2, a3)
            sim[nb, bi] = s
            sim[bi, nb] = s
        remaining -= 1
    return np.array(boxes, np.int64).reshape(-1, 4), failed


@kernel
def _group_kernel(hist, counts, regions, adj, sim, size, a1, a2, a3, boxes):
    """:func:`group_arrays`' loops pair by pair; -> (merges made, whether it stopped on no
    positive similarity). ``sim`` is (n, n) float32 scratch."""
    n = counts.shape[0]

    def pair(a, b):
        """:func:`similarity` of regions ``a`` and ``b``: the colour sum bin by bin in float32,
        the size and fill terms C integer divisions made float32."""
        color = np.float32(0)
        for k in range(hist.shape[1]):
            u = hist[a, k]
            v = hist[b, k]
            color = color + (u if u < v else v)
        total = counts[a] + counts[b]
        size_sim = np.float32(1) - np.float32(total // size)  # (counts are positive: // truncates)
        width = max(regions[a, 3], regions[b, 3]) - min(regions[a, 2], regions[b, 2])
        height = max(regions[a, 1], regions[b, 1]) - min(regions[a, 0], regions[b, 0])
        num = width * height - total
        q = -((-num) // size) if num < 0 else num // size
        fill_sim = np.float32(1) - np.float32(q)
        return ((a1 * color) + (a2 * size_sim)) + (a3 * fill_sim)

    for i in range(n):
        for j in range(i + 1, n):
            s = pair(i, j)
            sim[i, j] = s
            sim[j, i] = s
    made = 0
    remaining = n
    failed = False
    while remaining > 1:
        best = np.float32(0)
        bi = -1
        bj = -1
        nan = False
        for i in range(n):
            for j in range(i + 1, n):
                if adj[i, j]:
                    s = sim[i, j]
                    if s != s:
                        nan = True
                    elif s > best:
                        best = s
                        bi = i
                        bj = j
        if nan or bi < 0:
            failed = True
            break
        regions[bi, 0] = min(regions[bi, 0], regions[bj, 0])
        regions[bi, 2] = min(regions[bi, 2], regions[bj, 2])
        regions[bi, 3] = max(regions[bi, 3], regions[bj, 3])
        regions[bi, 1] = max(regions[bi, 1], regions[bj, 1])
        boxes[made, 0] = regions[bi, 2]
        boxes[made, 1] = regions[bi, 0]
        boxes[made, 2] = regions[bi, 3]
        boxes[made, 3] = regions[bi, 1]
        made += 1
        ci = np.float32(counts[bi])
        cj = np.float32(counts[bj])
        total = np.float32(counts[bi] + counts[bj])
        for k in range(hist.shape[1]):
            hist[bi, k] = ((ci * hist[bi, k]) + (cj * hist[bj, k])) / total
        counts[bi] += counts[bj]
        for k in range(n):
            if adj[bj, k]:
                adj[bi, k] = True
            if adj[k, bj]:
                adj[k, bi] = True
        for k in range(n):
            adj[bj, k] = False
            adj[k, bj] = False
        adj[bi, bi] = False
        for k in range(n):
            if adj[bi, k]:
                s = pair(k, bi)
                sim[k, bi] = s
                sim[bi, k] = s
        remaining -= 1
    return made, failed
