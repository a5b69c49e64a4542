"""The compiled kernels of the AprilTag pipeline (``_quadkernels``): each kernel equals its plain
Python form (the same statements, run with numpy float32 scalars), the cluster order equals a direct
model of the firmware's hash table, ``ptsort`` equals its recursion, and the polygon overlap and
the singularity test equal the mirror's apriltag.c.

``find_rects``' edge magnitude (``_rects.trace_magnitude``) is compared with its plain form too.
The whole pipeline is compared with the firmware's C in ``test_image_apriltag_decode.py``
(find_apriltags) and ``test_image_rects.py`` (find_rects).
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from firmware_c import apriltag_program, needs_firmware_c
from maixemu.firmware.image import _apriltag, _jit, _quads, _rects

F = np.float32
needs_numba = pytest.mark.skipif(not _jit.compiled(), reason="numba is not installed (or MAIXEMU_NO_JIT is set): "
                                                            "the kernels run as the Python they are compared with")


def _scene(seed: int = 3, w: int = 64, h: int = 48) -> np.ndarray:
    """A small frame with a tag36h11 marker, a bright square and noise: clusters, quads and a tag."""
    import cv2

    rng = np.random.default_rng(seed)
    a = np.full((h, w), 200, np.uint8)
    m = cv2.aruco.generateImageMarker(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_APRILTAG_36h11), 7, 32)
    a[8:40, 4:36] = m
    a[10:30, 44:60] = 40
    return np.clip(a.astype(int) + rng.normal(0, 6, a.shape), 0, 255).astype(np.uint8)


def _same(a, b) -> bool:
    """Equal arrays (bitwise for floats), recursively through tuples."""
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind == "f":
        return a.shape == b.shape and np.array_equal(a.view(np.uint32 if a.itemsize == 4 else np.uint64),
                                                     b.view(np.uint32 if b.itemsize == 4 else np.uint64))
    return a.shape == b.shape and np.array_equal(a, b)


@needs_numba
def test_each_kernel_equals_its_python_form():
    k = _quads.kernels()
    im = _scene()
    h, w = im.shape
    with np.errstate(all="ignore"):
        steps = []
        t = k.threshold(im, np.empty_like(im))
        steps.append(("threshold", k.threshold, (im, np.empty_like(im))))
        parent = np.arange(w * h + 1, dtype=np.int64)
        steps.append(("union_find", k.union_find, (t, parent)))
        parent = k.union_find(t, parent.copy())
        steps.append(("gather_clusters", k.gather_clusters, (t, parent, _quads.N_CLUSTER_BUCKETS, 5, 3 * (2 * w + 2 * h))))
        px, py, gx, gy, offsets = k.gather_clusters(t, parent.copy(), _quads.N_CLUSTER_BUCKETS, 5, 3 * (2 * w + 2 * h))
        for override in (False, True):
            steps.append((f"fit_quads({override})", k.fit_quads,
                          (im, px, py, gx, gy, offsets, override, _quads._filter_taps(), _quads.table_cos(k.CRITICAL_RAD))))
        quads = k.fit_quads(im, px, py, gx, gy, offsets, True, _quads._filter_taps(), _quads.table_cos(k.CRITICAL_RAD))
        steps.append(("refine_quads", k.refine_quads, (im, quads)))
        refined = k.refine_quads(im, quads.copy())
        steps.append(("reconcile", k.reconcile, (refined.reshape(-1, 8), refined, np.zeros(len(refined), np.int64))))
        flags, ds, hs, starts, counts, codes = _apriltag._family_tables(_apriltag.TAG36H11 | _apriltag.TAG16H5)
        tags = k.fit_quads(im, px, py, gx, gy, offsets, False, _quads._filter_taps(), _quads.table_cos(k.CRITICAL_RAD))
        decode_args = (im, tags, codes, ds, hs, starts, counts, _apriltag._rotations(), _quads.sin_table())
        steps.append(("decode_quads", k.decode_quads, decode_args))
        decoded = k.decode_quads(*[a.copy() if isinstance(a, np.ndarray) else a for a in decode_args])
        assert decoded[1].tolist() == [7]  # the marker, decoded: the comparison below is of real work
        steps.append(("tag_poses", k.tag_poses, (decoded[4], F(-100), F(90), F(32), F(24), _quads.sin_table())))
        for line in ((0, 0, w - 1, h - 1), (5, 40, 60, 2), (10, 3, 12, 47), (63, 0, 0, 0), (0, 0, w, 0)):
            steps.append((f"trace_magnitude{line}", _rects.trace_magnitude, (im, *line)))
        for name, kernel, args in steps:
            compiled = kernel(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            plain = kernel.__wrapped__(*[a.copy() if isinstance(a, np.ndarray) else a for a in args])
            assert _same(compiled, plain), name
    assert len(quads) >= 2 and offsets.size > 10


def _hash_table_clusters(t: np.ndarray, nbuckets: int):
    """apriltag_quad_thresh's cluster map as the C builds it: per boundary point, the bucket's list
    searched for the id, a new entry pushed at its head; then the buckets read in order."""
    h, w = t.shape
    parent = _quads.union_find(t)

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return int(i)

    buckets: dict[int, list] = {}
    for y in range(1, h - 1):
        for x in range(1, w - 1):
            v0 = int(t[y, x])
            if v0 == 127:
                continue
            for dx, dy in ((1, 0), (0, 1)):
                v1 = int(t[y + dy, x + dx])
                if v0 + v1 != 255:
                    continue
                r0, r1 = root((y * w + x) & 0xFFFF), root(((y + dy) * w + x + dx) & 0xFFFF)
                cid = (r1 << 16) + r0 if r0 < r1 else (r0 << 16) + r1
                entries = buckets.setdefault(((2654435761 * cid) >> 32) % nbuckets, [])
                entry = next((e for e in entries if e[0] == cid), None)
                if entry is None:
                    entry = (cid, [])
                    entries.insert(0, entry)
                entry[1].append((2 * x + dx, 2 * y + dy, dx * (v1 - v0), dy * (v1 - v0)))
    return [pts for b in sorted(buckets) for _, pts in buckets[b]]


@pytest.mark.parametrize("nbuckets", [_quads.N_CLUSTER_BUCKETS, 7])
def test_clusters_come_in_the_hash_tables_order(nbuckets):
    """With 7 buckets most share one, so the newest-first order inside a bucket shows too."""
    t = _quads.threshold(_scene(5, 80, 60))
    h, w = t.shape
    expected = [c for c in _hash_table_clusters(t, nbuckets) if 5 <= len(c) <= 3 * (2 * w + 2 * h)]
    px, py, gx, gy, offsets = _quads.kernels().gather_clusters(t, _quads.union_find(t), nbuckets, 5, 3 * (2 * w + 2 * h))
    got = [list(zip(px[s:e].tolist(), py[s:e].tolist(), gx[s:e].tolist(), gy[s:e].tolist()))
           for s, e in zip(offsets[:-1], offsets[1:])]
    assert got == expected and len(got) > 20


def _ptsort_reference(theta: list, idx: list) -> list:
    """``ptsort`` as the C recursion reads: networks up to 5, halves of sz/2, ties to the second half."""
    nets = {2: ((0, 1),), 3: ((0, 1), (1, 2), (0, 1)), 4: ((0, 1), (2, 3), (0, 2), (1, 3), (1, 2)),
            5: ((0, 1), (3, 4), (1, 2), (0, 1), (0, 3), (2, 4), (1, 2), (2, 3), (1, 2))}
    a = list(idx)
    if len(a) <= 5:
        for i, j in nets.get(len(a), ()):
            if theta[a[i]] > theta[a[j]]:
                a[i], a[j] = a[j], a[i]
        return a
    left, right = _ptsort_reference(theta, a[:len(a) // 2]), _ptsort_reference(theta, a[len(a) // 2:])
    out = []
    while left and right:
        out.append(left.pop(0) if theta[left[0]] < theta[right[0]] else right.pop(0))
    return out + left + right


def test_ptsort_follows_the_recursion_on_ties():
    k = _quads.kernels()
    rng = np.random.default_rng(1)
    for n in (1, 2, 3, 5, 6, 7, 13, 64, 257):
        theta = rng.integers(0, 4, n).astype(F)  # many ties: the order among equals is the firmware's
        idx = np.arange(n, dtype=np.int64)
        k.ptsort(theta, idx, n, np.empty(n, np.int64), np.empty(192, np.int64))
        assert idx.tolist() == _ptsort_reference(theta.tolist(), list(range(n))), n


# ---------------------------------------------------------------------- the mirror's g2d and matd
_G2D_DRIVER = r"""
static float rdf(void) { unsigned u; if (scanf("%x", &u) != 1) exit(3); float f; memcpy(&f, &u, 4); return f; }
int main(void) {
    int mode;
    while (scanf("%d", &mode) == 1) {
        if (mode == 0) {
            zarray_t *a = g2d_polygon_create_zeros(4), *b = g2d_polygon_create_zeros(4);
            for (int i = 0; i < 4; i++) { float p[2] = { rdf(), rdf() }; zarray_set(a, i, p, NULL); }
            for (int i = 0; i < 4; i++) { float p[2] = { rdf(), rdf() }; zarray_set(b, i, p, NULL); }
            printf("%d\n", g2d_polygon_overlaps_polygon(a, b));
        } else {
            matd_t *H = matd_create(3, 3);
            for (int i = 0; i < 9; i++) H->data[i] = rdf();
            printf("%d\n", matd_inverse(H) == NULL);
        }
    }
    return 0;
}
"""


def _hex(values) -> str:
    return " ".join("%08x" % v for v in np.asarray(values, F).ravel().view(np.uint32))


@needs_firmware_c
def test_polygon_overlap_and_singularity_equal_the_firmwares(tmp_path):
    exe = apriltag_program(tmp_path, "g2d", _G2D_DRIVER)
    rng = np.random.default_rng(4)
    pairs = []
    for _ in range(300):
        c = rng.uniform(0, 40, 2)
        pairs.append(((c + rng.normal(0, 8, (4, 2))).astype(F), (c + rng.uniform(-15, 15, 2) + rng.normal(0, 8, (4, 2))).astype(F)))
    # the interior point of the second polygon is (a + b + c) * (1.0f / 3) in the build, one ulp above
    # (a + b + c) / 3 here: it lies just inside the first polygon's left edge, not on it
    x = F(244.1678)
    pairs.append((np.array([[x, 0], [x + 10, 0], [x + 10, 10], [x, 10]], F), np.array([[x, 2], [x, 4], [x, 6], [x, 8]], F)))
    singular = [np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], F), np.array([[1e-9, 0, 0], [0, 1, 0], [0, 0, 1]], F),
                np.array([[5, 1, 0], [1, 5, 0], [0, 0, 1]], F)] + [rng.normal(0, 1, (3, 3)).astype(F) for _ in range(20)]
    lines = [f"0 {_hex(a)} {_hex(b)}" for a, b in pairs] + [f"1 {_hex(m)}" for m in singular]
    out = subprocess.run([str(exe)], input=("\n".join(lines) + "\n").encode(), capture_output=True, check=True,
                         timeout=60).stdout.decode().split()
    ours = [int(_quads.polygons_overlap(a, b)) for a, b in pairs]
    ours += [int(_quads.kernels().plu_singular(m)) for m in singular]
    assert ours == [int(v) for v in out]
    assert ours[len(pairs) - 1] == 1 and ours[len(pairs):len(pairs) + 3] == [1, 1, 0]
    assert 50 < sum(ours[:300]) < 250  # both answers occur among the random pairs


def test_threshold_kernel_its_twin_and_the_array_form_agree():
    """``_quadkernels.threshold`` (compiled), its Python twin and ``_quads.threshold_arrays`` on
    random, low-contrast and smooth images whose sizes leave partial tiles (or none)."""
    from maixemu.firmware.image import _quadkernels

    assert _quads._MIN_WHITE_BLACK_DIFF == _quadkernels.MIN_WHITE_BLACK_DIFF
    rng = np.random.default_rng(23)
    for trial in range(40):
        h, w = (int(v) for v in rng.integers(4, 48, 2))
        kind = trial % 3
        if kind == 0:
            im = rng.integers(0, 256, (h, w))
        elif kind == 1:
            im = int(rng.integers(0, 250)) + rng.integers(0, 7, (h, w))  # around the contrast test
        else:
            im = (np.add.outer(np.arange(h) * int(rng.integers(1, 9)), np.arange(w) * int(rng.integers(1, 9)))) % 256
        im = np.ascontiguousarray(im, np.uint8)
        want = _quads.threshold_arrays(im)
        for fn in (_quadkernels.threshold, _quadkernels.threshold.__wrapped__):
            assert np.array_equal(fn(im, np.empty_like(im)), want), (trial, h, w)
