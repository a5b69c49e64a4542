"""The AprilTag detector's float32 SVD and homography/pose (``_quadkernels``, ``_apriltag``) against the
firmware's apriltag.c compiled from the mirror (its matd/svd22/homography sections), bit for bit."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from firmware_c import IMG_DIR, build, firmware_source, imlib_shim, needs_firmware_c
from maixemu.firmware.image import _apriltag
from maixemu.firmware.image import _quads

_MAIN = r"""
static float rdf(void) { unsigned u; if (scanf("%x", &u) != 1) exit(3); float f; memcpy(&f, &u, 4); return f; }
static void pr(matd_t *m) { for (int i = 0; i < m->nrows; i++) for (int j = 0; j < m->ncols; j++) {
    float f = MATD_EL(m, i, j); unsigned u; memcpy(&u, &f, 4); printf("%08x ", u); } printf("\n"); }
int main(void) {
    int mode; if (scanf("%d", &mode) != 1) return 2;
    if (mode == 0) {
        int r, c; if (scanf("%d %d", &r, &c) != 2) return 2;
        matd_t *A = matd_create(r, c);
        for (int i = 0; i < r; i++) for (int j = 0; j < c; j++) MATD_EL(A, i, j) = rdf();
        matd_svd_t s = matd_svd_flags(A, MATD_SVD_NO_WARNINGS);
        pr(s.U); pr(s.S); pr(s.V);
    } else if (mode == 1) {
        int n; if (scanf("%d", &n) != 1) return 2;
        zarray_t *za = zarray_create(sizeof(float[4]));
        for (int i = 0; i < n; i++) { float c[4]; for (int k = 0; k < 4; k++) c[k] = rdf(); zarray_add(za, c); }
        pr(homography_compute(za, HOMOGRAPHY_COMPUTE_FLAG_SVD));
    } else {
        matd_t *H = matd_create(3, 3);
        for (int i = 0; i < 3; i++) for (int j = 0; j < 3; j++) MATD_EL(H, i, j) = rdf();
        float fx = rdf(), fy = rdf(), cx = rdf(), cy = rdf();
        pr(homography_to_pose(H, fx, fy, cx, cy));
    }
    return 0;
}
"""


def _hex(values) -> str:
    return " ".join("%08x" % int(v) for v in np.asarray(values, np.float32).ravel().view(np.uint32))


@pytest.fixture(scope="module")
def firmware_matd(tmp_path_factory):
    text = firmware_source(f"{IMG_DIR}/apriltag.c")
    text = text.replace('#include "imlib.h"', "").replace("#ifdef IMLIB_ENABLE_APRILTAGS", "", 1)
    text = text[:text.index('//////// "g2d.h"')]  # zarray, math_util, svd22, matd, homography
    shim = imlib_shim() + "static void umm_alloc_fail(void) { abort(); }\nstatic int mp_plat_print;\n" \
                          "#define mp_printf(p, ...) printf(__VA_ARGS__)\n"
    exe = build(tmp_path_factory.mktemp("matd"), "matd", shim + text + _MAIN)

    def call(command: str) -> list[np.ndarray]:
        out = subprocess.run([str(exe)], input=command.encode(), capture_output=True, check=True).stdout.decode()
        return [np.array([int(x, 16) for x in line.split()], np.uint32) for line in out.splitlines()]

    return call


def _bits(rows) -> np.ndarray:
    return np.asarray(rows, np.float32).ravel().view(np.uint32)


@needs_firmware_c
def test_svd_equals_matd_svd(firmware_matd):
    rng = np.random.default_rng(0)
    for t in range(30):
        r, c = [(3, 3), (9, 9), (4, 3), (3, 4), (5, 5), (2, 2)][t % 6]
        A = rng.normal(0, 10, (r, c)).astype(np.float32)
        if t % 6 == 1:
            A = (A @ A.T).astype(np.float32)  # a normal matrix, as homography_compute builds
        U, S, V = _quads.kernels().svd(A, _quads.sin_table())
        theirs = firmware_matd(f"0 {r} {c} {_hex(A)}")
        assert [list(_bits(U)), list(_bits(S)), list(_bits(V))] == [list(x) for x in theirs], t


@needs_firmware_c
def test_homography_and_pose_equal_the_firmwares(firmware_matd):
    rng = np.random.default_rng(1)
    for t in range(12):
        world = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]], np.float32)
        image = (world * rng.uniform(10, 40) + rng.uniform(30, 90, 2) + rng.normal(0, 2, (4, 2))).astype(np.float32)
        corr = np.concatenate([world, image], axis=1).astype(np.float32)
        H = _apriltag.homography_compute(corr)
        (theirs,) = firmware_matd(f"1 4 {_hex(corr)}")
        assert list(_bits(H)) == list(theirs), t
        fx, fy, cx, cy = np.float32(-120.5), np.float32(113.8), np.float32(80), np.float32(60)
        pose = _apriltag.homography_to_pose(H, fx, fy, cx, cy)
        (tp,) = firmware_matd(f"2 {_hex(H)} {_hex([fx, fy, cx, cy])}")
        assert list(_bits(pose)) == list(tp), t
