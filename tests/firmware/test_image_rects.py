"""find_rects: the firmware's AprilTag quad finder (apriltag.c) on drawn shapes."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image
from firmware_c import needs_firmware_c
from maixemu.firmware.image import _quads, _rects


def gray(a) -> image.Image:
    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a, np.uint8))


def square(w=120, h=90, box=(30, 20, 40, 35), fg=220, bg=30):
    a = np.full((h, w), bg, np.uint8)
    x, y, bw, bh = box
    a[y:y + bh, x:x + bw] = fg
    return a


def test_a_filled_rectangle_gives_its_corners():
    rects = gray(square()).find_rects()
    assert len(rects) == 1
    r = rects[0]
    # the quad lies on the boundary between the pixels: corners within a pixel of the box corners
    xs = sorted(c[0] for c in r.corners())
    ys = sorted(c[1] for c in r.corners())
    assert abs(xs[0] - 30) <= 1 and abs(xs[-1] - 70) <= 1
    assert abs(ys[0] - 20) <= 1 and abs(ys[-1] - 55) <= 1
    assert r.rect() == (r.x(), r.y(), r.w(), r.h()) and r[0:4] == r.rect()
    assert r.magnitude() > 1000


def test_threshold_roi_and_defaults():
    img = gray(square())
    m = img.find_rects()[0].magnitude()
    assert img.find_rects(threshold=m) and not img.find_rects(threshold=m + 1)
    moved = img.find_rects(roi=(10, 5, 100, 80))
    # another roi origin moves the tile grid: the same quad, corners within a pixel
    assert len(moved) == 1
    for p, q in zip(sorted(moved[0].corners()), sorted(img.find_rects()[0].corners())):
        assert abs(p[0] - q[0]) <= 1 and abs(p[1] - q[1]) <= 1
    assert img.find_rects(roi=(0, 0, 20, 20)) == []
    # the same answer for an RGB565 image of the same gray levels
    rgb = image.Image(size=(120, 90))
    rgb.draw_rectangle(0, 0, 120, 90, color=(30, 30, 30), fill=True)
    rgb.draw_rectangle(30, 20, 40, 35, color=(220, 220, 220), fill=True)
    assert len(rgb.find_rects()) == 1


def test_flat_and_tiny_images_have_no_rects():
    assert gray(np.full((60, 80), 100, np.uint8)).find_rects() == []
    assert gray(np.zeros((6, 6), np.uint8)).find_rects() == []


def test_threshold_marks_low_contrast_tiles():
    a = np.full((16, 16), 100, np.uint8)
    a[0:8, 0:8] = 102  # 2 levels of contrast: below min_white_black_diff = 5
    a[8:, 8:] = 200
    t = _quads.threshold(a)
    assert (t[:4, :4] == 127).all()  # no tile within reach has contrast
    assert (t[12:, 12:] == 127).all()  # its 3x3 tiles are all 200
    # next to contrast: thresh = min + (max - min) // 2 = 150: 200 -> white, 100 -> black
    assert (t[8:12, 8:12] == 255).all() and t[6, 12] == 0


def _roots(parent: np.ndarray) -> np.ndarray:
    root = parent.astype(np.int64)
    while True:
        nxt = root[root]
        if np.array_equal(nxt, root):
            return root
        root = nxt


def test_union_find_keeps_16_bit_ids():
    """Pixel i and pixel i + 65536 are one node on the device (a 300x240 image has 72000)."""
    t = np.full((240, 300), 127, np.uint8)
    t[1, 10:12] = 0  # nodes 310, 311
    t[219, 146:149] = 0  # pixels 65846..65848 -> nodes 310..312
    root = _roots(_quads.union_find(t))
    # node 312 (pixel (1, 12), which is not even black) is in the component of (1, 10)-(1, 11)
    assert root[310] == root[311] == root[312]
    assert root[313] == 313


def test_bresenham_visits_the_firmware_points():
    xs, ys = _rects._bresenham(0, 0, 5, 2)
    assert list(zip(xs, ys)) == [(0, 0), (1, 0), (2, 1), (3, 1), (4, 2), (5, 2)]
    xs, ys = _rects._bresenham(3, 4, 3, 0)
    assert list(zip(xs, ys)) == [(3, 4), (3, 3), (3, 2), (3, 1), (3, 0)]


def test_the_segment_filter_uses_the_firmware_approximations():
    # fmath.c's fast_expf(0) is not 1: the Schraudolph constant lands at 0.971
    from maixemu.firmware.image import _fmath

    assert abs(float(_fmath.fast_expf_1(np.float32(0))) - 0.9710083) < 1e-6
    assert abs(float(_fmath.fast_log_1(np.float32(0.05))) + 2.9957736) < 1e-5
    assert list(_quads._filter_taps().round(4)) == [0.0113, 0.1321, 0.6103, 0.971, 0.6103, 0.1321, 0.0113]


@pytest.mark.parametrize("angle", [0.0, 0.35, -0.6])
def test_rotated_squares_are_found_once(angle):
    h, w = 100, 100
    yy, xx = np.mgrid[0:h, 0:w]
    c, s = np.cos(angle), np.sin(angle)
    u = (xx - 50) * c + (yy - 50) * s
    v = -(xx - 50) * s + (yy - 50) * c
    a = np.where((abs(u) < 20) & (abs(v) < 20), 230, 20).astype(np.uint8)
    rects = gray(a).find_rects()
    assert len(rects) == 1
    cx = np.mean([p[0] for p in rects[0].corners()])
    cy = np.mean([p[1] for p in rects[0].corners()])
    assert abs(cx - 50) < 2 and abs(cy - 50) < 2


def test_find_lines_halves_the_accumulator_for_large_rois():
    """hough.c shrinks the accumulator (hough_divide 2, 4) when it does not fit the 700 KiB heap:
    a 640x480 roi gets theta and rho in steps of 2; a 320x240 one keeps steps of 1."""
    y, x = np.mgrid[0:480, 0:640]
    big = gray(np.where(x + y > 400, 255, 0)).find_lines(threshold=1000)
    assert [(l.theta(), l.rho()) for l in big] == [(44, 282)]  # 45 deg, rho 283 in steps of 2
    y, x = np.mgrid[0:240, 0:320]
    small = gray(np.where(x + y > 200, 255, 0)).find_lines(threshold=1000)
    assert [(l.theta(), l.rho()) for l in small] == [(45, 141)]


# ---------------------------------------------------------------------- live: the mirror's C
_RECTS_DRIVER = r"""
int main(void) {
    int w, h, thr;
    while (scanf("%d %d %d", &w, &h, &thr) == 3) {
        uint8_t *buf = malloc(w * h);
        for (int i = 0; i < w * h; i++) { int v; if (scanf("%d", &v) != 1) return 2; buf[i] = v; }
        image_t img; img.w = w; img.h = h; img.bpp = IMAGE_BPP_GRAYSCALE; img.data = buf;
        rectangle_t roi = { 0, 0, w, h };
        list_t out;
        imlib_find_rects(&out, &img, &roi, thr);
        printf("%d\n", (int) list_size(&out));
        while (list_size(&out)) {
            find_rects_list_lnk_data_t d; list_pop_front(&out, &d);
            printf("%d %d %d %d %u", d.rect.x, d.rect.y, d.rect.w, d.rect.h, (unsigned) d.magnitude);
            for (int i = 0; i < 4; i++) printf(" %d %d", d.corners[i].x, d.corners[i].y);
            printf("\n");
        }
        free(buf);
    }
    return 0;
}
"""


def _cluttered(rng, w: int, h: int) -> np.ndarray:
    """Filled random quadrilaterals (overlapping, some inside others) on a gradient, blurred, noisy."""
    import cv2

    yy, xx = np.mgrid[0:h, 0:w]
    a = (rng.uniform(0, 200) + rng.uniform(-1, 1) * xx + rng.uniform(-1, 1) * yy).clip(0, 255).astype(np.uint8)
    for _ in range(int(rng.integers(2, 9))):
        cx, cy, s, ang = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(8, w / 2), rng.uniform(0, np.pi)
        pts = np.array([[np.cos(ang + k * np.pi / 2 + rng.normal(0, 0.15)),
                         np.sin(ang + k * np.pi / 2 + rng.normal(0, 0.15))] for k in range(4)]) * s / 1.4 + [cx, cy]
        cv2.fillPoly(a, [pts.astype(np.int32)], int(rng.integers(0, 256)))
    if rng.random() < 0.5:
        a = cv2.GaussianBlur(a, (3, 3), rng.uniform(0.3, 1.2))
    return np.clip(a.astype(int) + rng.normal(0, rng.uniform(0, 8), a.shape), 0, 255).astype(np.uint8)


@needs_firmware_c
def test_find_rects_equals_the_firmwares_build(tmp_path):
    """Every rect, its magnitude, corners and the order, as the mirror's imlib_find_rects gives them.
    The order comes from the cluster hash table (700 KiB of buckets) and from the reconciliation,
    whose ``zarray_remove_index(..., 1)`` moves the last quad into the removed one's slot."""
    import subprocess

    from firmware_c import apriltag_program

    exe = apriltag_program(tmp_path, "find_rects", _RECTS_DRIVER)
    rng = np.random.default_rng(7)
    scenes = [_cluttered(rng, *[(160, 120), (100, 90), (320, 240), (80, 60)][i % 4]) for i in range(40)]
    text = "\n".join(f"{g.shape[1]} {g.shape[0]} 1000 " + " ".join(map(str, g.ravel().tolist())) for g in scenes)
    out = subprocess.run([str(exe)], input=(text + "\n").encode(), capture_output=True, check=True,
                         timeout=300).stdout.decode().splitlines()
    theirs, i = [], 0
    while i < len(out):
        n = int(out[i])
        theirs.append([tuple(map(int, line.split())) for line in out[i + 1:i + 1 + n]])
        i += 1 + n
    ours = [[(*r.rect(), r.magnitude(), *[c for p in r.corners() for c in p]) for r in gray(g).find_rects(threshold=1000)]
            for g in scenes]
    assert ours == theirs
    assert sum(map(len, theirs)) > 60
