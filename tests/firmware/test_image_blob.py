"""find_blobs and the blob object, against blob.c / py_image.c (seeds, claims, moments, merge)."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _fmath as fm

F = np.float32


def gray(a):
    return image.Image._wrap(pixformat.GRAYSCALE, np.asarray(a, np.uint8).copy())


def test_rect_is_extent_minus_one_and_moments_give_rotation():
    a = np.zeros((20, 30), np.uint8)
    a[5:8, 2:12] = 255  # 10 x 3 bar
    [b] = gray(a).find_blobs([(128, 255)], pixels_threshold=1, area_threshold=1)
    assert b.rect() == (2, 5, 9, 2) and b.pixels() == 30
    xs, ys = np.meshgrid(np.arange(2, 12), np.arange(5, 8))
    mx, my = int(xs.sum()) // 30, int(ys.sum()) // 30
    assert (b.cx(), b.cy()) == (mx, my)
    sa = int((xs * xs).sum()) - 2 * mx * int(xs.sum()) + 30 * mx * mx
    sb = int((xs * ys).sum()) - (mx * int(ys.sum()) + my * int(xs.sum())) + 30 * mx * my
    sc = int((ys * ys).sum()) - 2 * my * int(ys.sum()) + 30 * my * my
    assert b.rotation() == float(F(fm.fast_atan2f(F(2 * sb), F(sa - sc)) / F(2)))
    assert b.area() == 18 and b.density() == float(F(30) / F(18))
    assert b[0:4] == b.rect() and b[7] == b.rotation() and b[-1] == b.count() == 1


def test_area_and_pixel_thresholds_use_the_short_rect():
    a = np.zeros((10, 10), np.uint8)
    a[2:5, 2:5] = 255  # 9 pixels, rect 2 x 2 -> area 4
    g = gray(a)
    assert g.find_blobs([(128, 255)], pixels_threshold=9, area_threshold=4) != []
    assert g.find_blobs([(128, 255)], pixels_threshold=10, area_threshold=1) == []
    assert g.find_blobs([(128, 255)], pixels_threshold=1, area_threshold=5) == []


def test_four_connectivity_and_unseeded_regions():
    a = np.zeros((8, 8), np.uint8)
    a[1, 1] = a[2, 2] = 255  # diagonal neighbours: two regions
    a[5, 4] = 255  # an even column of an odd row: no seed there with x_stride=2
    blobs = gray(a).find_blobs([(128, 255)], pixels_threshold=1, area_threshold=0)
    # seeds on row y start at x = y % 2: (1,1) and (2,2) are seeds, (4,5) is not
    assert sorted(b.rect()[:2] for b in blobs) == [(1, 1), (2, 2)]
    all_seeds = gray(a).find_blobs([(128, 255)], pixels_threshold=1, area_threshold=0, x_stride=1)
    assert len(all_seeds) == 3


def test_codes_claims_and_merge():
    a = np.zeros((10, 20), np.uint8)
    a[2:6, 2:6] = 200
    a[2:6, 8:12] = 100
    g = gray(a)
    blobs = g.find_blobs([(150, 255), (50, 255)], pixels_threshold=1, area_threshold=1)
    assert [b.code() for b in blobs] == [1, 2]  # the 200-square is claimed by the first threshold
    # rects are (2, 2, 3, 3) and (8, 2, 3, 3) (w = x2 - x1); the grown rect must start left of 2 + 3
    assert g.find_blobs([(150, 255), (50, 255)], pixels_threshold=1, area_threshold=1, merge=True,
                        margin=3)[0].count() == 1
    merged = g.find_blobs([(150, 255), (50, 255)], pixels_threshold=1, area_threshold=1, merge=True, margin=4)
    assert len(merged) == 1
    m = merged[0]
    assert m.code() == 3 and m.count() == 2 and m.rect() == (2, 2, 9, 3) and m.pixels() == 32
    assert m.cx() == (blobs[0].cx() * 16 + blobs[1].cx() * 16) // 32
    apart = g.find_blobs([(150, 255), (50, 255)], pixels_threshold=1, area_threshold=1, merge=True, margin=0)
    assert len(apart) == 2  # rects [2, 5) and [8, 11) do not overlap without a margin


def test_callbacks_and_argument_errors():
    a = np.zeros((10, 10), np.uint8)
    a[1:4, 1:4] = a[6:9, 6:9] = 255
    g = gray(a)
    seen = []
    kept = g.find_blobs([(128, 255)], pixels_threshold=1, area_threshold=1,
                        threshold_cb=lambda b: seen.append(b) or b.x() > 3)
    assert len(seen) == 2 and [b.x() for b in kept] == [6]
    # the callback only sees blobs that passed the area/pixel thresholds (C short-circuit)
    assert g.find_blobs([(128, 255)], area_threshold=5, threshold_cb=lambda b: seen.append(b)) == [] and len(seen) == 2
    assert len(g.find_blobs([(128, 255)], merge=True, margin=10, merge_cb=lambda a, b: False, pixels_threshold=1,
                            area_threshold=1)) == 2
    assert g.find_blobs([]) == [] and g.find_blobs([()]) == []
    with pytest.raises(OSError, match="x_stride must not be zero."):
        g.find_blobs([(128, 255)], x_stride=0)
    with pytest.raises(OSError, match="y_stride must not be zero."):
        g.find_blobs([(128, 255)], y_stride=0)


def test_blob_has_only_the_firmware_methods():
    a = np.zeros((6, 6), np.uint8)
    a[1:4, 1:4] = 255
    [b] = gray(a).find_blobs([(128, 255)], pixels_threshold=1, area_threshold=1)
    for name in ("corners", "elongation", "major_axis_line", "solidity", "perimeter"):
        with pytest.raises(AttributeError, match="MaixPy-v1's blob has only"):
            getattr(b, name)
    assert repr(b).startswith('{"x":1, "y":1, "w":2, "h":2, "pixels":9,')
    with pytest.raises(IndexError):
        b[10]
