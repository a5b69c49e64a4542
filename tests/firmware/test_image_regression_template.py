"""get_regression and find_template against answers derived from the firmware's algorithms
(stats.c ``imlib_get_regression``, template.c) on synthetic images."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from maixemu.firmware import image


def gray(a) -> image.Image:
    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a, np.uint8))


def line_image(w=80, h=60, pts=((10, 5), (60, 50))) -> image.Image:
    img = image.Image(size=(w, h)).to_grayscale()
    (x1, y1), (x2, y2) = pts
    img.draw_line(x1, y1, x2, y2, color=255)
    return img


def test_regression_vertical_line_least_squares():
    a = np.zeros((40, 50), np.uint8)
    a[:, 20] = 255
    # one pixel wide: the bounding box has w = x2 - x1 = 0 < area_threshold, so the firmware says None
    assert gray(a).get_regression([(200, 255)], x_stride=1) is None
    a[:, 21] = 255
    ln = gray(a).get_regression([(200, 255)], x_stride=1)
    # b = 0, a < c: rotation = pi/2 + pi/2 in float32 -> (int)(pi * 57.29578) = 179; centroid (20, 19):
    # rho = (int)(20 cos 179 + 19 sin 179) = -19
    # and x = (int)(-19 / cos 179) = 19: the device reports this vertical line at x = 19
    assert (ln.x1(), ln.y1(), ln.x2(), ln.y2(), ln.theta(), ln.rho()) == (19, 0, 19, 39, 179, -19)
    assert ln.length() == 39 and ln.line() == (19, 0, 19, 39)
    assert ln[0:4] == ln.line() and len(ln) == 8


def test_regression_none_below_thresholds_and_no_thresholds():
    a = np.zeros((40, 50), np.uint8)
    a[5, 5] = 255
    img = gray(a)
    assert img.get_regression([(200, 255)], x_stride=1) is None  # 1 pixel < pixels_threshold
    assert img.get_regression([]) is None  # the firmware returns None for an empty list
    with pytest.raises(OSError, match="x_stride must not be zero"):
        img.get_regression([(200, 255)], x_stride=0)


def test_regression_counts_overlapping_thresholds_twice():
    img = line_image()
    one = img.get_regression([(200, 255)])
    two = img.get_regression([(200, 255), (250, 255)])
    assert one is not None and two is not None
    assert one.theta() == two.theta()  # same points twice: same fit


def _theil_sen_reference(img, th, x_stride=2, y_stride=1):
    """Straight from the firmware's loops: points in scan order, all pairs i < j."""
    a = img._pix
    pts = [(x, y) for y in range(0, a.shape[0], y_stride)
           for x in range(y % x_stride, a.shape[1], x_stride) if th[0] <= a[y, x] <= th[1]]
    n = len(pts)
    w, h = a.shape[1], a.shape[0]

    def median(hist, total):
        t = (total + 1) // 2
        c = 0
        for i, v in enumerate(hist):
            if c < t <= c + v:
                return i
            c += v
        return len(hist) - 1

    xh, yh = [0] * w, [0] * h
    for x, y in pts:
        xh[x] += 1
        yh[y] += 1
    xd, yd = [0] * (2 * w), [0] * (2 * h)
    for i, j in itertools.combinations(range(n), 2):
        xd[pts[i][0] - pts[j][0] + w] += 1
        yd[pts[i][1] - pts[j][1] + h] += 1
    d = n * (n - 1) // 2
    return median(xh, n), median(yh, n), median(xd, d) - w, median(yd, d) - h


@pytest.mark.parametrize("pts", [((10, 5), (60, 50)), ((70, 2), (5, 40)), ((3, 30), (75, 33))])
def test_regression_robust_matches_the_pairwise_medians(pts):
    from maixemu.firmware.image import _fmath

    img = line_image(pts=pts)
    img.set_pixel(40, 3, 255)  # an outlier the robust fit ignores
    ln = img.get_regression([(200, 255)], robust=True)
    mx, my, mdx, mdy = _theil_sen_reference(img, (200, 255))
    F = np.float32
    rot = (_fmath.fast_atan2f(F(mdy), F(mdx)) if mdx else F(1.570796)) + F(1.570796)
    theta = int(np.trunc(F(rot) * F(57.295780))) % 180
    assert ln.theta() == theta
    assert ln.magnitude() == int(np.sqrt(F(mdx * mdx + mdy * mdy)))
    rho = int(np.trunc(F(mx) * _fmath.COS[theta] + F(my) * _fmath.SIN[theta]))
    assert ln.rho() == rho


def test_regression_rgb565_lab_thresholds_and_roi():
    img = image.Image(size=(64, 48))
    img.draw_line(8, 40, 56, 8, color=(255, 0, 0), thickness=3)
    ln = img.get_regression([(30, 100, 40, 127, 0, 127)], roi=(0, 0, 64, 48))
    assert ln is not None and 20 < ln.theta() < 70  # rising to the right
    assert img.get_regression([(30, 100, 40, 127, 0, 127)], roi=(0, 0, 4, 4)) is None


def test_template_exhaustive_finds_a_cut_out_patch():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (60, 80), dtype=np.uint8)
    t = gray(a[17:33, 29:45].copy())
    img = gray(a)
    assert img.find_template(t, 0.9, step=1) == (29, 17, 16, 16)
    # step 2 visits only even positions: it misses the odd one above the threshold
    assert img.find_template(t, 0.9, step=2) is None
    assert img.find_template(t, 0.9, roi=(20, 10, 40, 40), step=1) == (29, 17, 16, 16)
    assert img.find_template(t, 0.9, roi=(40, 30, 40, 30), step=1) is None


def test_template_ncc_value_matches_the_firmware_formula():
    from maixemu.firmware.image import _template

    rng = np.random.default_rng(2)
    f = rng.integers(0, 256, (20, 24), dtype=np.uint8)
    t = rng.integers(0, 256, (8, 8), dtype=np.uint8)
    corr, rect = _template.match_ex(f, t, (0, 0, 24, 20), 1)
    best = 0.0
    F = np.float32
    tm = int(t.sum()) // 64
    den_b = int(((t.astype(int) - tm) ** 2).sum())
    for v in range(13):
        for u in range(17):
            p = f[v:v + 8, u:u + 8].astype(int)
            s, sq = int(p.sum()), int((p * p).sum())
            fm = int(F(s) / F(64))
            num = int(((p - fm) * (t.astype(int) - tm)).sum())
            den_a = int(F(sq) - F(s) * (F(s) / F(64)))
            c = F(num) / (np.sqrt(F(den_a)) * np.sqrt(F(den_b)))
            if c > best:
                best, where = c, (u, v, 8, 8)
    assert corr == float(best) and rect == where


def test_template_diamond_search_and_errors():
    y, x = np.mgrid[0:60, 0:80]
    a = (128 + 100 * np.exp(-((x - 44) ** 2 + (y - 31) ** 2) / 60.0)).astype(np.uint8)
    img = gray(a)
    t = gray(a[23:39, 36:52].copy())
    r = img.find_template(t, 0.5, search=image.SEARCH_DS)
    assert r is not None and abs(r[0] - 36) <= 2 and abs(r[1] - 23) <= 2 and r[2:] == (16, 16)
    with pytest.raises(OSError, match="smaller than template"):
        img.find_template(t, 0.5, roi=(0, 0, 10, 10))
    with pytest.raises(OSError, match="Image format is not supported"):
        image.Image(size=(80, 60)).find_template(t, 0.5)
    with pytest.raises(TypeError):
        img.find_template(t, "x")
