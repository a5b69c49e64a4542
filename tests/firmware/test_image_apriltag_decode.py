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
plain one. The live tests compile the same code from the mirror (developer machines, skipped
elsewhere): the decode pieces on seeded random inputs, and the whole ``imlib_find_apriltags`` on
perspective views of OpenCV-drawn markers of each bundled family, every field compared bitwise.
"""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from firmware_c import IMG_DIR, apriltag_program, build, firmware_source, imlib_shim, needs_firmware_c
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
    out = call([f"0 {_hex(np.concatenate([gm.A, gm.B]))}" for gm in models])
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


# ---------------------------------------------------------------------- live: the whole detector
_DETECT_DRIVER = r"""
static void pr(float f) { unsigned u; memcpy(&u, &f, 4); printf("%08x ", u); }
static float rdf(void) { unsigned u; if (scanf("%x", &u) != 1) exit(3); float f; memcpy(&f, &u, 4); return f; }
int main(void) {
    int w, h, fam;
    while (scanf("%d %d %d", &w, &h, &fam) == 3) {
        uint8_t *buf = malloc(w * h);
        for (int i = 0; i < w * h; i++) { int v; if (scanf("%d", &v) != 1) return 2; buf[i] = v; }
        float fx = rdf(), fy = rdf(), cx = rdf(), cy = rdf();
        image_t img; img.w = w; img.h = h; img.bpp = IMAGE_BPP_GRAYSCALE; img.data = buf;
        rectangle_t roi = { 0, 0, w, h };
        list_t out;
        imlib_find_apriltags(&out, &img, &roi, fam, fx, fy, cx, cy);
        printf("%d\n", (int) list_size(&out));
        while (list_size(&out)) {
            find_apriltags_list_lnk_data_t d; list_pop_front(&out, &d);
            printf("%d %d %d %d %d %d %d %d %d ", d.rect.x, d.rect.y, d.rect.w, d.rect.h, d.id, d.family,
                   d.hamming, d.centroid.x, d.centroid.y);
            for (int i = 0; i < 4; i++) printf("%d %d ", d.corners[i].x, d.corners[i].y);
            pr(d.goodness); pr(d.decision_margin); pr(d.x_translation); pr(d.y_translation); pr(d.z_translation);
            pr(d.x_rotation); pr(d.y_rotation); pr(d.z_rotation);
            printf("\n");
        }
    }
    return 0;
}
"""


def _firmware_find_apriltags(tmp_path):
    exe = apriltag_program(tmp_path, "find_apriltags", _DETECT_DRIVER)

    def call(lines: list[str]) -> list[list[str]]:
        out = subprocess.run([str(exe)], input=("\n".join(lines) + "\n").encode(), capture_output=True,
                             check=True, timeout=300).stdout.decode().splitlines()
        scenes, i = [], 0
        while i < len(out):
            n = int(out[i])
            scenes.append([line.strip() for line in out[i + 1:i + 1 + n]])
            i += 1 + n
        return scenes

    return call


def _scene(rng, cv2, dictionary) -> np.ndarray:
    """A 160x120 view of one or two markers under a random perspective, darkened, blurred, noisy."""
    w, h = 160, 120
    out = np.full((h, w), int(rng.integers(150, 256)), np.uint8)
    for _ in range(int(rng.integers(1, 3))):
        side = int(rng.integers(24, 56))
        m = cv2.aruco.generateImageMarker(dictionary, int(rng.integers(0, dictionary.bytesList.shape[0])), side)
        m = cv2.copyMakeBorder(m, side // 6, side // 6, side // 6, side // 6, cv2.BORDER_CONSTANT, value=255)
        s = m.shape[0]
        src = np.float32([[0, 0], [s, 0], [s, s], [0, s]])
        cx, cy = rng.uniform(s / 2, w - s / 2), rng.uniform(s / 2, h - s / 2)
        ang, scale = rng.uniform(0, 2 * np.pi), rng.uniform(0.6, 1.0)
        c, sn = np.cos(ang), np.sin(ang)
        dst = np.float32([[(x * c - y * sn) * scale + cx + rng.normal(0, s * 0.04),
                           (x * sn + y * c) * scale + cy + rng.normal(0, s * 0.04)] for x, y in src - s / 2])
        M = cv2.getPerspectiveTransform(src, dst)
        warped = cv2.warpPerspective(m, M, (w, h), flags=cv2.INTER_LINEAR)
        mask = cv2.warpPerspective(np.full_like(m, 255), M, (w, h), flags=cv2.INTER_NEAREST)
        dark = int(rng.integers(0, 60))
        out = np.where(mask > 0, np.minimum(warped.astype(int) * (255 - dark) // 255 + dark, out), out).astype(np.uint8)
    if rng.random() < 0.5:
        out = cv2.GaussianBlur(out, (3, 3), rng.uniform(0.3, 1.0))
    return np.clip(out.astype(int) + rng.normal(0, rng.uniform(0, 6), out.shape), 0, 255).astype(np.uint8)


def _ours(tag) -> str:
    v = tag._v
    ints = [v["x"], v["y"], v["w"], v["h"], v["id"], v["family"], v["hamming"], v["cx"], v["cy"]]
    ints += [c for p in v["corners"] for c in p]
    floats = [v[k] for k in ("goodness", "decision_margin", "x_translation", "y_translation", "z_translation",
                             "x_rotation", "y_rotation", "z_rotation")]
    return " ".join(map(str, ints)) + " " + _hex(floats)


@needs_firmware_c
def test_find_apriltags_equals_the_firmwares_build(tmp_path):
    cv2 = pytest.importorskip("cv2")
    from maixemu.firmware import image

    call = _firmware_find_apriltags(tmp_path)
    rng = np.random.default_rng(2)
    dicts = {image.TAG16H5: cv2.aruco.DICT_APRILTAG_16h5, image.TAG25H9: cv2.aruco.DICT_APRILTAG_25h9,
             image.TAG36H10: cv2.aruco.DICT_APRILTAG_36h10, image.TAG36H11: cv2.aruco.DICT_APRILTAG_36h11}
    lines, ours = [], []
    for fam, name in dicts.items():
        for _ in range(4):
            g = _scene(rng, cv2, cv2.aruco.getPredefinedDictionary(name))
            h, w = g.shape
            # py_image.c's defaults for fx, fy, cx, cy
            params = (F(F(2.8 / 3.984) * F(w)), F(F(2.8 / 2.952) * F(h)), F(w) * F(0.5), F(h) * F(0.5))
            lines.append(f"{w} {h} {fam} {' '.join(map(str, g.ravel().tolist()))} {_hex(params)}")
            ours.append([_ours(t) for t in image.Image._wrap(image.GRAYSCALE, g).find_apriltags(families=fam)])
    theirs = call(lines)
    assert ours == theirs
    assert sum(map(len, theirs)) >= 12  # scenes with tags found, not empty lists
