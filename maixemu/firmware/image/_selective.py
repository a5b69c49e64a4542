"""``selective_search``: the firmware's region proposals (``selective_search.c``).

Felzenszwalb-Huttenlocher graph segmentation of the (downscaled) image on 4 edges per pixel, the
edges sorted by the firmware's own ``qsort`` (``omv/img/qsort.c``, Bentley-McIlroy: the order of
equal weights — most of them, weights are square roots of integers — decides the segmentation, so
the sort is ported, not replaced by a stable one), small components absorbed, then the greedy
hierarchical grouping on colour-histogram, size and fill similarity, each merge proposing the
merged bounding box once. Integer divisions where the C divides ints (size/fill similarity),
float32 everywhere else. The sequential parts (sort, union-find, merge loop bookkeeping) are
``_jit`` kernels, and so is the grouping (``_selective_group``: its array form serves while the
kernel compiles).

Quirks kept: ``a2`` and ``a3`` read the ``a1`` keyword (the C looks up ``MP_QSTR_a1`` three times;
positional values work); the image is read as RGB565 whatever its format (a grayscale image's bytes
are paired — past its end the device reads other memory, here zeros); "failed to build tree" is
printed when no adjacent pair has a positive similarity left.
"""

from __future__ import annotations

import numpy as np

from . import _color
from ._jit import kernel
from ._selective_group import first_seen, group

F = np.float32


@kernel
def _qsort(keys, recs):
    """``qsort(edges, n, sizeof(edge), comp)`` of omv's qsort.c on ``keys`` (float32 weights), moving
    the rows of ``recs`` (int64 [n, 2]) with them. The recursion is an explicit stack; the
    tail iteration (``goto loop``) pops the same way."""
    def cmp(x, y):
        if x > y:
            return 1
        if x < y:
            return -1
        return 0

    def swap(i, j):
        t = keys[i]
        keys[i] = keys[j]
        keys[j] = t
        for k in range(recs.shape[1]):
            u = recs[i, k]
            recs[i, k] = recs[j, k]
            recs[j, k] = u

    def insertion(a, n):
        for pm in range(a + 1, a + n):
            pl = pm
            while pl > a and keys[pl - 1] > keys[pl]:
                swap(pl, pl - 1)
                pl -= 1

    def med3(a, b, c):
        if cmp(keys[a], keys[b]) < 0:
            if cmp(keys[b], keys[c]) < 0:
                return b
            return c if cmp(keys[a], keys[c]) < 0 else a
        if cmp(keys[b], keys[c]) > 0:
            return b
        return a if cmp(keys[a], keys[c]) < 0 else c

    n_all = keys.shape[0]
    stack_lo = np.empty(n_all + 64, np.int64)
    stack_n = np.empty(n_all + 64, np.int64)
    top = 0
    stack_lo[0] = 0
    stack_n[0] = keys.shape[0]
    top = 1
    while top > 0:
        top -= 1
        a = stack_lo[top]
        n = stack_n[top]
        while True:
            if n < 7:
                insertion(a, n)
                break
            pm = a + n // 2
            if n > 7:
                pl = a
                pn = a + n - 1
                if n > 40:
                    d = n // 8
                    pl = med3(pl, pl + d, pl + 2 * d)
                    pm = med3(pm - d, pm, pm + d)
                    pn = med3(pn - 2 * d, pn - d, pn)
                pm = med3(pl, pm, pn)
            swap(a, pm)
            pa = a + 1
            pb = a + 1
            pc = a + n - 1
            pd = a + n - 1
            swap_cnt = 0
            while True:
                while pb <= pc:
                    c = cmp(keys[pb], keys[a])
                    if c > 0:
                        break
                    if c == 0:
                        swap_cnt = 1
                        swap(pa, pb)
                        pa += 1
                    pb += 1
                while pb <= pc:
                    c = cmp(keys[pc], keys[a])
                    if c < 0:
                        break
                    if c == 0:
                        swap_cnt = 1
                        swap(pc, pd)
                        pd -= 1
                    pc -= 1
                if pb > pc:
                    break
                swap(pb, pc)
                swap_cnt = 1
                pb += 1
                pc -= 1
            if swap_cnt == 0:  # switch to insertion sort
                insertion(a, n)
                break
            pn = a + n
            r = min(pa - a, pb - pa)
            for k in range(r):
                swap(a + k, pb - r + k)
            r = min(pd - pc, pn - pd - 1)
            for k in range(r):
                swap(pb + k, pn - r + k)
            r = pb - pa
            tail = pd - pc
            if tail > 1:  # iterate on the right part after the left one (the C recurses left first)
                stack_lo[top] = pn - tail
                stack_n[top] = tail
                top += 1
            if r > 1:
                a, n = a, r
                continue
            break


@kernel
def _segment(weights, ends, n_vertices, c, min_size):
    """``segment_graph`` then the small-component pass; -> (parent, number of sets)."""
    parent = np.arange(n_vertices)
    rank = np.zeros(n_vertices, np.int64)
    size = np.ones(n_vertices, np.int64)
    def find(x):
        y = x
        while y != parent[y]:
            y = parent[y]
        parent[x] = y  # universe_find compresses only x's link
        return y

    def join(x, y):
        if rank[x] > rank[y]:
            parent[y] = x
            size[x] += size[y]
        else:
            parent[x] = y
            size[y] += size[x]
            if rank[x] == rank[y]:
                rank[y] += 1

    threshold = np.empty(n_vertices, np.float32)
    for i in range(n_vertices):
        threshold[i] = c / np.float32(1)
    num = n_vertices
    for i in range(weights.shape[0]):
        a = find(ends[i, 0])
        b = find(ends[i, 1])
        if a != b:
            if weights[i] <= threshold[a] and weights[i] <= threshold[b]:
                join(a, b)
                num -= 1
                a = find(a)
                threshold[a] = weights[i] + c / np.float32(size[a])
    for i in range(weights.shape[0]):
        a = find(ends[i, 0])
        b = find(ends[i, 1])
        if a != b and (size[a] < min_size or size[b] < min_size):
            join(a, b)
            num -= 1
    return parent, num


@kernel
def _component_ids(parent, n_sets):
    """Component number of every pixel, in the raster order their roots are first met."""
    def find(x):
        y = x
        while y != parent[y]:
            y = parent[y]
        parent[x] = y
        return y

    ids = np.empty(parent.shape[0], np.int64)
    root_id = np.full(parent.shape[0], -1, np.int64)
    nxt = 0
    for p in range(parent.shape[0]):
        root = find(p)
        if root_id[root] < 0:
            root_id[root] = nxt
            nxt += 1
        ids[p] = root_id[root]
    return ids


def _rgb565_view(img) -> np.ndarray:
    """The pixels as ``IMAGE_GET_RGB565_PIXEL`` reads them, whatever the format (see the quirks)."""
    pix = img._pix
    if pix.dtype == np.uint16:
        return pix
    h, w = pix.shape
    raw = np.zeros(2 * w * h, np.uint8)
    raw[:w * h] = pix.reshape(-1)
    return raw.view("<u2").reshape(h, w)


def selective_search(img, t: int, min_size: int, a1: float, a2: float, a3: float) -> list[tuple]:
    src = _rgb565_view(img)
    h0, w0 = src.shape
    small = w0 * h0 <= 80 * 60
    if small:
        pix = src
    else:  # image_scale to a quarter: fixed-point ratios, nearest
        w, h = w0 // 4, h0 // 4
        xr = ((w0 << 16) // w) + 1
        yr = ((h0 << 16) // h) + 1
        flat = src.reshape(-1)
        sy = (np.arange(h) * yr) >> 16
        sx = (np.arange(w) * xr) >> 16
        idx = sy[:, None] * w0 + sx[None, :]
        pix = np.where(idx < flat.size, flat[np.minimum(idx, flat.size - 1)], 0).astype(np.uint16)
    h, w = pix.shape
    rgb = _color.rgb565_to_888(pix).astype(np.int64)

    # the graph: right, down, down-right and up-right neighbours of each pixel, in the C's order
    yy, xx = np.mgrid[0:h, 0:w]
    cand = []
    for dy, dx, ok in ((0, 1, xx < w - 1), (1, 0, yy < h - 1), (1, 1, (xx < w - 1) & (yy < h - 1)),
                       (-1, 1, (xx < w - 1) & (yy > 0))):
        cand.append((ok, dy, dx))
    order = []
    for k, (ok, dy, dx) in enumerate(cand):
        p = (yy * w + xx)[ok]
        q = ((yy + dy) * w + (xx + dx))[ok]
        d = rgb[(yy + dy).clip(0, h - 1), (xx + dx).clip(0, w - 1)][ok] - rgb[ok]
        wgt = np.sqrt(((d * d).sum(axis=-1)).astype(F))
        order.append(np.stack([p * 4 + k, p, q], axis=1))
        cand[k] = wgt
    recs_all = np.concatenate(order)
    weights_all = np.concatenate(cand).astype(F)
    seq = np.argsort(recs_all[:, 0], kind="stable")  # edges[num] in the C's raster order
    ends = np.ascontiguousarray(recs_all[seq, 1:])
    weights = np.ascontiguousarray(weights_all[seq])
    _qsort(weights, ends)
    parent, n_sets = _segment(weights, ends, h * w, F(t), int(min_size))
    ids = _component_ids(parent, n_sets).reshape(h, w)
    n = int(n_sets)

    # regions (min y, max y, min x, max x), pixel counts and the 75-bin colour histograms
    flat_ids = ids.reshape(-1)
    regions = np.zeros((n, 4), np.int64)
    regions[:, 0] = np.full(n, h)
    regions[:, 2] = np.full(n, w)
    np.minimum.at(regions[:, 0], flat_ids, yy.reshape(-1))
    np.maximum.at(regions[:, 1], flat_ids, yy.reshape(-1))
    np.minimum.at(regions[:, 2], flat_ids, xx.reshape(-1))
    np.maximum.at(regions[:, 3], flat_ids, xx.reshape(-1))
    counts = np.bincount(flat_ids, minlength=n).astype(np.int64)
    hist = np.zeros((n, 75), F)
    bins = np.minimum(rgb.reshape(-1, 3), 240) // 10
    for ch in range(3):
        np.add.at(hist, (flat_ids, ch * 25 + bins[:, ch]), F(1))
    max_val = hist.max(axis=1).astype(np.int64).astype(F)  # the C's int max()
    with np.errstate(divide="ignore", invalid="ignore"):
        hist = (hist / max_val[:, None]).astype(F)

    adj = np.zeros((n, n), bool)
    c1, c2, c3 = ids[:-1, :-1], ids[:-1, 1:], ids[1:, :-1]
    for other in (c2, c3):
        diff = c1 != other
        adj[c1[diff], other[diff]] = True
        adj[other[diff], c1[diff]] = True

    boxes, failed = group(hist, counts, regions, adj, h * w, a1, a2, a3)
    if failed:
        print("failed to build tree")
    proposals = first_seen(boxes)

    scale = 1 if small else 4
    return [(x * scale, y * scale, (x2 - x) * scale, (y2 - y) * scale) for x, y, x2, y2 in proposals]
