"""The AprilTag decode path (``_apriltag``: the gray models, ``homography_project``, ``quad_decode``'s
margin, the ``/ 255`` scaling) in the order of operations the firmware's build gives it.

The firmware compiles apriltag.c with ``-Os -ffast-math -fsingle-precision-constant`` and
``#define double float``, so GCC may reassociate sums, fold products and turn divisions by a
constant into multiplications. The order it chose was read from GCC's optimised tree dump
(``-fdump-tree-optimized``) of apriltag.c built with the firmware's flags, no FMA:

- ``mat33_sym_solve``: ``R[0] = M[0]*tmp[0] + ...`` with ``tmp[0] = M[0]*B[0]`` becomes
  ``B[0]*(M[0]*M[0]) + ...``;
- ``homography_project``: rows 1 and 2 are summed as ``(H[r][0]*x + H[r][2]) + H[r][1]*y``;
- ``quad_decode``: ``white_score += v - thresh`` is ``(v + white_score) - thresh``, and
  ``black_score += thresh - v`` is ``(black_score - v) + thresh``;
- ``decision_margin / 255.0`` is ``decision_margin * (1.0f / 255.0f)``.

The literal tests hold numbers that program printed (built from the mirror's apriltag.c with
``gcc -std=gnu11 -Os -ffast-math -fsingle-precision-constant -ffloat-store -funsigned-char
-ffp-contract=off``, x86-64 GCC 12). Each input was picked because the plain C order and the
build's order give different float32 bits, so each test fails if the order goes back to the
plain one. The live test compiles the same code from the mirror (developer machines) and
compares on seeded random inputs.
"""

from __future__ import annotations

import subprocess

import numpy as np

from firmware_c import IMG_DIR, build, firmware_source, imlib_shim, needs_firmware_c
from maixemu.firmware.image import _apriltag

F = np.float32


def _bits(v) -> int:
    return int(np.asarray(v, F).view(np.uint32))


def _f(bits: int) -> np.float32:
    return np.uint32(bits).view(F)


# ---------------------------------------------------------------------- literals from the C build
def test_graymodel_solve_folds_m0_squared():
    # the border model of an 8-cell-wide tag (A's upper triangle, B), solved by the build:
    # C = (0x3fe6e6e9, 0x3fe6e6e8, 0x43578000); M0*(M0*B0) would give C0 = 0x3fe6e6e8
    gm = _apriltag._GrayModel()
    gm.A = [F(51), F(0), F(0), F(51), F(0), F(64)]
    gm.B = [F(92), F(92), F(13792)]
    gm.solve()
    assert [_bits(c) for c in gm.C] == [0x3FE6E6E9, 0x3FE6E6E8, 0x43578000]


def test_homography_project_regroups_rows_one_and_two():
    # the build printed (0x426b5a82, 0x42014afe); the plain row order gives (0x426b5a81, 0x42014afd)
    H = np.array([[21.125, 1.875, 80.625], [-0.125, 20.125, 60.625], [0.635, 0.605, 1.625]], F)
    px, py = _apriltag.project(H, F(0.375), F(-0.625))
    assert (_bits(px), _bits(py)) == (0x426B5A82, 0x42014AFE)
    pxs, pys = _apriltag.project_many(H, np.array([0.375], F), np.array([-0.625], F))
    assert (_bits(pxs[0]), _bits(pys[0])) == (0x426B5A82, 0x42014AFE)


def _blocky_40x40() -> np.ndarray:
    yy, xx = np.mgrid[0:40, 0:40]
    im = np.where(((xx // 4) * 7 + (yy // 4) * 3) % 5 < 2, 40, 210)
    return (im + (xx * 13 + yy * 7) % 9).astype(np.uint8)


def test_quad_decode_margin_accumulates_as_the_build():
    # quad_decode(tag36h11) on this image: the build returned 0x1.0af35p+6 and 0x1.055bbap+6;
    # ``score += v - thresh`` summed as written gives 0x1.0af352p+6 and 0x1.055bb8p+6
    im = _blocky_40x40()
    for t, margin in ((8, "0x1.0af35p+6"), (20, "0x1.055bbap+6")):
        H = np.array([[15 + 0.25 * t, 1.5, 20], [-1.0, 15 - 0.125 * t, 20], [0, 0, 1]], F)
        got, _ = _apriltag.quad_decode(_apriltag.TAG36H11, 6, 11, im, H)
        assert float(got) == float.fromhex(margin), t


def test_decision_margin_scale_is_the_reciprocal_constant():
    # ``det->decision_margin / 255.0`` compiles to a mulss by .LC0 = 998277249 (0x3b808081)
    assert _bits(_apriltag._INV_255) == 0x3B808081
    # a margin of 119.99999 (0x42efffff) reads 0.47058824 on the device, not 0.4705882
    assert _bits(F(_f(0x42EFFFFF)) * _apriltag._INV_255) == _bits(F(120) / F(255))


# ---------------------------------------------------------------------- live: the mirror's C
_MAIN = r"""
static float rdf(void) { unsigned u; if (scanf("%x", &u) != 1) exit(3); float f; memcpy(&f, &u, 4); return f; }
static void pr(float f) { unsigned u; memcpy(&u, &f, 4); printf("%08x ", u); }
int main(void) {
    int mode;
    while (scanf("%d", &mode) == 1) {
        if (mode == 0) {
            struct graymodel gm; memset(&gm, 0, sizeof gm);
            float *A = (float *) gm.A;
            A[0] = rdf(); A[1] = rdf(); A[2] = rdf(); A[4] = rdf(); A[5] = rdf(); A[8] = rdf();
            for (int i = 0; i < 3; i++) gm.B[i] = rdf();
            graymodel_solve(&gm);
            for (int i = 0; i < 3; i++) pr(gm.C[i]);
        } else if (mode == 1) {
            matd_t *H = matd_create(3, 3);
            for (int i = 0; i < 9; i++) H->data[i] = rdf();
            float x = rdf(), y = rdf(), px, py;
            homography_project(H, x, y, &px, &py);
            pr(px); pr(py);
            matd_destroy(H);
        } else {
            int w, h; if (scanf("%d %d", &w, &h) != 2) return 2;
            uint8_t *buf = malloc(w * h);
            for (int i = 0; i < w * h; i++) { int v; if (scanf("%d", &v) != 1) return 2; buf[i] = v; }
            image_u8_t im = { .width = w, .height = h, .stride = w, .buf = buf };
            struct quad q; memset(&q, 0, sizeof q);
            q.H = matd_create(3, 3);
            for (int i = 0; i < 9; i++) q.H->data[i] = rdf();
            struct quick_decode_entry e = { .id = 65535, .hamming = 255 };  /* kept when the models are inverted */
            apriltag_family_t *fam = mode == 2 ? (apriltag_family_t *) &tag36h11 : (apriltag_family_t *) &tag16h5;
            pr(quad_decode(fam, &im, &q, &e, NULL));
            printf("%d %d %d", (int) e.id, (int) e.hamming, (int) e.rotation);
            free(buf); matd_destroy(q.H);
        }
        printf("\n");
    }
    return 0;
}
"""


def _hex(values) -> str:
    return " ".join("%08x" % v for v in np.asarray(values, F).ravel().view(np.uint32))


def _firmware_decode(tmp_path):
    text = firmware_source(f"{IMG_DIR}/apriltag.c")
    text = text.replace('#include "imlib.h"', "").replace("#ifdef IMLIB_ENABLE_APRILTAGS", "", 1)
    text = text[:text.index("double score_goodness(")]  # everything up to quad_decode
    shim = imlib_shim() + r"""
static void umm_alloc_fail(void) { abort(); }
static int mp_plat_print;
#define mp_printf(p, ...) printf(__VA_ARGS__)
static void *fb_alloc0_all(uint32_t *size) { *size = 1 << 20; return calloc(1, 1 << 20); }
"""
    exe = build(tmp_path, "decode", shim + text + _MAIN)

    def call(lines: list[str]) -> list[str]:
        return subprocess.run([str(exe)], input="\n".join(lines).encode(), capture_output=True, check=True,
                              timeout=120).stdout.decode().splitlines()

    return call


def _border_model(rng, d: int) -> _apriltag._GrayModel:
    """A gray model fed as quad_decode feeds it: the border lines' cell centres, a lit plane plus noise."""
    gm = _apriltag._GrayModel()
    n = F(d + 2)
    base, gx, gy = rng.uniform(20, 235), rng.normal(0, 30), rng.normal(0, 30)
    for _ in range(int(rng.integers(3, 8 * (d + 2) + 1))):
        edge = F(rng.choice([-0.5, 0.5, d + 1.5, d + 2.5]))
        along = F(0.5) + F(rng.integers(0, d + 2))
        p0, p1 = (edge, along) if rng.integers(0, 2) else (along, edge)
        tx, ty = F(2) * (p0 / n - F(0.5)), F(2) * (p1 / n - F(0.5))
        gm.add(tx, ty, int(np.clip(base + gx * tx + gy * ty + rng.normal(0, 4), 0, 255)))
    return gm


@needs_firmware_c
def test_decode_path_equals_the_firmwares_build(tmp_path):
    call = _firmware_decode(tmp_path)
    rng = np.random.default_rng(13)

    models = [_border_model(rng, int(rng.integers(4, 7))) for _ in range(400)]
    out = call([f"0 {_hex(gm.A + gm.B)}" for gm in models])
    for k, (gm, line) in enumerate(zip(models, out)):
        with np.errstate(all="ignore"):
            gm.solve()
        assert _hex(gm.C) == line.strip(), k

    cases = []
    for _ in range(400):
        H = (rng.normal(0, 1, (3, 3)) * rng.uniform(1, 50)).astype(F)
        H[2, 2] = F(rng.uniform(0.5, 2))
        cases.append((H, F(rng.uniform(-1.5, 1.5)), F(rng.uniform(-1.5, 1.5))))
    out = call([f"1 {_hex(H)} {_hex([x, y])}" for H, x, y in cases])
    for k, ((H, x, y), line) in enumerate(zip(cases, out)):
        assert _hex(_apriltag.project(H, x, y)) == line.strip(), k

    # blocky noise (margins, mostly no code) and tag36h11 markers turned 0..3 quarter turns (codes)
    w, h = 80, 60
    noise = np.kron(rng.integers(0, 256, (h // 4, w // 4)), np.ones((4, 4), int)).astype(np.uint8)
    quads = []
    for _ in range(150):
        s = rng.uniform(5, 20)
        H = np.array([[s * rng.uniform(0.7, 1.3), s * rng.uniform(-0.3, 0.3), rng.uniform(15, 65)],
                      [s * rng.uniform(-0.3, 0.3), s * rng.uniform(0.7, 1.3), rng.uniform(15, 45)],
                      [rng.uniform(-0.05, 0.05), rng.uniform(-0.05, 0.05), 1.0]]) * rng.uniform(0.5, 2)
        quads.append((int(rng.integers(2, 4)), noise, H.astype(F)))
    for tag_id, turns in ((0, 0), (5, 1), (77, 2), (300, 3), (586, 0)):
        im = np.full((h, w), 230, np.uint8)
        im[6:54, 16:64] = np.rot90(_marker36h11(tag_id, 48), turns) // 4 * 3 + 20
        for _ in range(6):
            H = np.array([[24 + rng.normal(0, 0.4), rng.normal(0, 0.4), 40 + rng.normal(0, 0.4)],
                          [rng.normal(0, 0.4), 24 + rng.normal(0, 0.4), 30 + rng.normal(0, 0.4)],
                          [rng.normal(0, 0.002), rng.normal(0, 0.002), 1.0]])
            quads.append((2, im, H.astype(F)))
    out = call([f"{mode} {w} {h} {' '.join(map(str, im.ravel().tolist()))} {_hex(H)}" for mode, im, H in quads])
    decoded = 0
    for k, ((mode, im, H), line) in enumerate(zip(quads, out)):
        flag, d, hh = (_apriltag.TAG36H11, 6, 11) if mode == 2 else (_apriltag.TAG16H5, 4, 5)
        with np.errstate(all="ignore"):
            margin, entry = _apriltag.quad_decode(flag, d, hh, im, H)
        theirs = line.split()
        assert _hex([margin]) == theirs[0], k
        if int(theirs[2]) != 255:
            decoded += 1
            assert entry == (int(theirs[1]), int(theirs[2]), int(theirs[3])), k
        else:
            assert entry is None, k
    assert sum(float(np.uint32(int(t.split()[0], 16)).view(F)) > 0 for t in out) > 50  # real margins, not -1s
    assert decoded >= 25


def _marker36h11(tag_id: int, side: int) -> np.ndarray:
    import cv2

    aruco = cv2.aruco
    return aruco.generateImageMarker(aruco.getPredefinedDictionary(aruco.DICT_APRILTAG_36h11), tag_id, side)
