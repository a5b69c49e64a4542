"""filter.c rules, checked per pixel against literal evaluations of the firmware's loops.

Every window filter reads a (2k+1)^2 neighbourhood with clamp-to-edge coordinates from the original
image; the reference implementations below are plain loops written from the C.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _color, _tables

F = np.float32


def gray(a):
    return image.Image._wrap(pixformat.GRAYSCALE, np.asarray(a, np.uint8).copy())


def rgb(a):
    return image.Image._wrap(pixformat.RGB565, np.asarray(a, np.uint16).copy())


@pytest.fixture
def src():
    return np.random.default_rng(11).integers(0, 256, (9, 11), dtype=np.uint8)


def window(a, y, x, k):
    h, w = a.shape
    return [int(a[min(max(y + j, 0), h - 1), min(max(x + i, 0), w - 1)])
            for j in range(-k, k + 1) for i in range(-k, k + 1)]


def each_pixel(a, k, fn):
    h, w = a.shape
    return np.array([[fn(window(a, y, x, k)) for x in range(w)] for y in range(h)])


@pytest.mark.parametrize("k", [0, 1, 2])
def test_mean_truncates_sum_times_reciprocal(src, k):
    over_n = F(1) / F((2 * k + 1) ** 2)
    expect = each_pixel(src, k, lambda v: int(F(sum(v)) * over_n))
    g = gray(src)
    g.mean(k)
    assert np.array_equal(g._pix, expect)


@pytest.mark.parametrize("p", [0.0, 0.25, 0.5, 1.0])
def test_median_takes_the_truncated_percentile_index(src, p):
    n = 9
    idx = int(F(p) * F(n - 1))
    g = gray(src)
    g.median(1, percentile=p)
    assert np.array_equal(g._pix, each_pixel(src, 1, lambda v: sorted(v)[idx]))


def test_mode_prefers_the_value_that_first_reaches_the_top_count():
    def fw_mode(v):
        bins, best, count = {}, 0, 0
        for p in v:
            bins[p] = bins.get(p, 0) + 1
            if bins[p] > count:
                count, best = bins[p], p
        return best

    a = np.random.default_rng(3).integers(0, 4, (8, 8), dtype=np.uint8) * 60
    g = gray(a)
    g.mode(1)
    assert np.array_equal(g._pix, each_pixel(a, 1, fw_mode))


def test_midpoint_bias(src):
    bias = F(0.3)
    g = gray(src)
    g.midpoint(1, bias=0.3)
    expect = each_pixel(src, 1, lambda v: int(F(min(v)) * (F(1) - bias) + F(max(v)) * bias))
    assert np.array_equal(g._pix, expect)
    with pytest.raises(OSError, match="Error: 0 <= bias <= 1!"):
        gray(src).midpoint(1, bias=2)


def test_morph_kernel_mul_and_truncated_add(src):
    krn = [1, -2, 1, 0, 3, 0, -1, 2, -1]
    m = F(1) / F(sum(krn))
    g = gray(src)
    g.morph(1, krn, add=2.9)  # add is converted to an int: 2
    expect = each_pixel(src, 1, lambda v: max(0, min(255, int(F(sum(a * b for a, b in zip(krn, v))) * m) + 2)))
    assert np.array_equal(g._pix, expect)
    with pytest.raises(ValueError):
        gray(src).morph(1, krn[:8])


def morph_reference(src, krn, m):
    """imlib_morph on gray: clamp((int)(sum(k * v) * m)) per pixel."""
    return each_pixel(src, 1, lambda v: max(0, min(255, int(F(sum(a * b for a, b in zip(krn, v))) * m))))


def test_gaussian_is_the_pascal_kernel_and_blur_is_gaussian(src):
    krn = [a * b for a in (1, 2, 1) for b in (1, 2, 1)]
    expect = morph_reference(src, krn, F(1) / F(16))
    g = gray(src)
    g.gaussian(1)
    assert np.array_equal(g._pix, expect)
    b = gray(src)
    b.blur(1)  # MaixPy-v1's method table maps blur to gaussian
    assert np.array_equal(b._pix, expect)


def test_laplacian_is_scaled_by_its_centre_and_clamped(src):
    krn = [-(a * b) for a in (1, 2, 1) for b in (1, 2, 1)]
    krn[4] += 16  # centre = 16 - 4 = 12
    m = F(1) / F(12)
    g = gray(src)
    g.laplacian(1)
    assert np.array_equal(g._pix, morph_reference(src, krn, m))
    sharp = list(krn)
    sharp[4] += 12
    s = gray(src)
    s.laplacian(1, sharpen=True)
    assert np.array_equal(s._pix, morph_reference(src, sharp, m))


def test_adaptive_threshold_offset_invert_and_mask(src):
    over_n = F(1) / F(9)
    mean = each_pixel(src, 1, lambda v: int(F(sum(v)) * over_n))
    g = gray(src)
    g.mean(1, threshold=True, offset=3, invert=True)
    assert np.array_equal(g._pix, np.where(((mean - 3) < src) ^ True, 255, 0))
    mask = np.zeros_like(src)
    mask[:, :5] = 255
    m = gray(src)
    m.mean(1, mask=gray(mask))
    assert np.array_equal(m._pix, np.where(mask > 127, mean, src))


def test_rgb565_thresholds_compare_the_yuv_luma():
    a = np.random.default_rng(5).integers(0, 65536, (5, 6), dtype=np.uint16)
    r = rgb(a)
    r.median(1, threshold=True)
    y = _tables.yuv_table()[:, 0].astype(int)
    fields = [f.astype(int) for f in _color.split565(a)]
    med = [each_pixel(f, 1, lambda v: sorted(v)[4]) for f in fields]
    packed = _color.pack565(*med)
    assert np.array_equal(r._pix, np.where(y[packed] < y[a], 0xFFFF, 0))


def test_histeq_global_uses_the_cumulative_histogram(src):
    g = gray(src)
    g.histeq()
    cdf = np.cumsum(np.bincount(src.ravel(), minlength=256))
    s = F(255) / F(src.size)
    assert np.array_equal(g._pix, (s * cdf[src].astype(F)).astype(int))
    c = gray(src)
    c.histeq(adaptive=True, clip_limit=1.0)  # CLAHE returns at once for clip_limit == 1
    assert np.array_equal(c._pix, src)
    a = gray(src)
    a.histeq(adaptive=True)
    assert a._pix.shape == src.shape and not np.array_equal(a._pix, src)


def test_bilateral_smooths_flat_regions_only():
    a = np.zeros((8, 8), np.uint8)
    a[:, 4:] = 250
    g = gray(a)
    g.bilateral(1, color_sigma=0.1, space_sigma=1)
    out = g._pix.astype(int)
    # the edge is kept (colour weights vanish across it); a flat 250 region comes out as the
    # float32 quotient sum(v*w)/sum(w) truncated, which may be 249
    assert (out[:, :4] == 0).all() and np.isin(out[:, 4:], (249, 250)).all()


def test_kernel_size_and_percentile_errors(src):
    with pytest.raises(OSError, match="KernelSize must be >= 0!"):
        gray(src).mean(-1)
    with pytest.raises(OSError, match="Error: 0 <= percentile <= 1!"):
        gray(src).median(1, percentile=1.5)
    with pytest.raises(TypeError):
        gray(src).mean(1.0)
