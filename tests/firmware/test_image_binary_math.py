"""binary.c / mathop.c / pool.c rules: thresholds, binary, morphology, the math ops, pooling.

Expectations are worked out from the firmware's C per pixel (small images, explicit loops).
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _color
from maixemu.firmware.image._lab import parse_thresholds

F = np.float32


def gray(rows):
    return image.Image._wrap(pixformat.GRAYSCALE, np.asarray(rows, np.uint8).copy())


def rgb(rows):
    return image.Image._wrap(pixformat.RGB565, np.asarray(rows, np.uint16).copy())


def px(img):
    return img._pix.tolist()


# ---------------------------------------------------------------------- thresholds
def test_threshold_parsing_follows_py_helper():
    assert parse_thresholds([(200, 100)]) == [(100, 200, -128, 127, -128, 127)]  # sorted pairs
    assert parse_thresholds([(300,)]) == [(255, 255, -128, 127, -128, 127)]  # L clamped to 0..255
    assert parse_thresholds([(0, 50, -200, 300, 5, -5)]) == [(0, 50, -128, 127, -5, 5)]
    assert parse_thresholds([(), [10, 20]]) == [(10, 20, -128, 127, -128, 127)]  # empty skipped
    with pytest.raises(TypeError):
        parse_thresholds([(1.5, 2)])
    with pytest.raises(TypeError):
        parse_thresholds(5)


# ---------------------------------------------------------------------- binary
def test_binary_invert_applies_to_each_threshold():
    img = gray([[10, 50, 90, 130]])
    img.binary([(0, 60), (40, 100)], invert=True)
    # a pixel is in when ANY inverted test passes: only values inside both thresholds are out
    assert px(img) == [[255, 0, 255, 255]]


def test_binary_zero_mask_and_copy():
    img = gray([[10, 50, 90, 130]])
    mask = gray([[255, 255, 0, 0]])
    out = img.binary([(0, 100)], zero=True, mask=mask, copy=True)
    assert px(out) == [[0, 0, 90, 130]] and px(img) == [[10, 50, 90, 130]]
    img.binary([(0, 100)], mask=mask)
    assert px(img) == [[255, 255, 90, 130]]  # outside the mask the old pixel stays


def test_binary_rgb565_white_is_ffff():
    img = rgb([[0x0000, 0xFFFF]])
    img.binary([(50, 100)])
    assert px(img) == [[0, 0xFFFF]]


def test_invert_is_bitwise_and_negate_is_per_field():
    img = rgb([[0x1234]])
    img.invert()
    assert px(img) == [[0x1234 ^ 0xFFFF]]
    g = gray([[0, 100, 255]])
    g.negate()
    assert px(g) == [[255, 155, 0]]
    c = rgb([[int(_color.pack565(3, 10, 20))]])
    c.negate()
    assert [int(v) for v in _color.split565(np.uint16(c._pix[0, 0]))] == [28, 53, 11]


def test_b_ops_are_no_ops_that_still_check_arguments():
    img = gray([[1, 2, 3]])
    other = gray([[255, 255, 255]])
    for name in ("b_and", "b_nand", "b_or", "b_nor", "b_xor", "b_xnor", "and", "or", "xor", "nand", "nor", "xnor"):
        assert getattr(img, name)(other) is img
        assert px(img) == [[1, 2, 3]]
    with pytest.raises(OSError, match="Images not equal!"):
        img.b_and(gray([[1, 2]]))
    with pytest.raises(TypeError):
        img.b_or(1.5)


# ---------------------------------------------------------------------- morphology
def _binary_window_counts(on: np.ndarray, k: int) -> np.ndarray:
    h, w = on.shape
    out = np.zeros((h, w), int)
    for y in range(h):
        for x in range(w):
            for j in range(-k, k + 1):
                for i in range(-k, k + 1):
                    out[y, x] += on[min(max(y + j, 0), h - 1), min(max(x + i, 0), w - 1)]
    return out


@pytest.mark.parametrize("threshold", [None, 5, 2])
def test_erode_and_dilate_count_the_edge_clamped_window(threshold):
    rng = np.random.default_rng(4)
    src = (rng.random((7, 9)) > 0.5).astype(np.uint8) * 200 + 20
    on = src > 127
    counts = _binary_window_counts(on, 1)
    er = gray(src)
    er.erode(1) if threshold is None else er.erode(1, threshold=threshold)
    t = 8 if threshold is None else threshold
    expect = np.where(on & ((counts - 1) < t), 0, src)  # erode: centre not counted
    assert np.array_equal(er._pix, expect)
    di = gray(src)
    di.dilate(1) if threshold is None else di.dilate(1, threshold)
    t = 0 if threshold is None else threshold
    expect = np.where(~on & (counts > t), 255, src)
    assert np.array_equal(di._pix, expect)


def test_open_close_and_hats_compose_erode_dilate_difference():
    src = np.zeros((9, 9), np.uint8)
    src[2:7, 2:7] = 255
    src[0, 8] = 255  # a speck
    a = gray(src)
    a.open(1)
    b = gray(src)
    b.erode(1)
    b.dilate(1)
    assert np.array_equal(a._pix, b._pix) and a._pix[0, 8] == 0
    top = gray(src)
    top.top_hat(1)
    assert np.array_equal(top._pix, np.abs(src.astype(int) - a._pix.astype(int)))
    with pytest.raises(OSError, match="KernelSize must be >= 0!"):
        gray(src).erode(-1)


# ---------------------------------------------------------------------- math ops
def test_add_sub_saturate_per_field_and_scalar_colours():
    a = rgb([[int(_color.pack565(30, 60, 1))]])
    a.add(int(_color.pack565(5, 5, 5)))
    assert [int(v) for v in _color.split565(np.uint16(a._pix[0, 0]))] == [31, 63, 6]
    a.sub(int(_color.pack565(31, 0, 10)))
    assert [int(v) for v in _color.split565(np.uint16(a._pix[0, 0]))] == [0, 63, 0]
    g = gray([[100, 200]])
    g.sub(gray([[150, 50]]), reverse=True)
    assert px(g) == [[50, 0]]


def test_mul_div_blend_float32_formulas():
    g = gray([[200, 10, 0]])
    g.mul(gray([[128, 128, 7]]))
    assert px(g) == [[int(F(200 * 128) * (F(1) / F(255))), int(F(10 * 128) * (F(1) / F(255))), 0]]
    s = gray([[200]])
    s.mul(gray([[128]]), invert=True)
    sc = F(255)
    assert px(s) == [[int(sc - (sc - F(200)) * (sc - F(128)) * (F(1) / sc))]]
    d = gray([[100, 100, 3]])
    d.div(gray([[0, 200, 2]]))
    assert px(d) == [[0, 127, 255]]  # divide by 0 -> 0; 100*255//200; clamped at 255
    m = gray([[100]])
    m.div(gray([[7]]), mod=True)
    assert px(m) == [[(100 * 255) % 7]]
    b = gray([[200]])
    b.blend(gray([[100]]), alpha=64)
    alpha = F(64) / F(256)
    assert px(b) == [[int(F(200) * alpha + F(100) * (F(1) - alpha))]]
    with pytest.raises(OSError, match="alpha"):
        gray([[1]]).blend(gray([[1]]), alpha=300)


def test_min_max_difference_and_masks():
    g = gray([[10, 200]])
    g.max(gray([[50, 50]]), mask=gray([[255, 0]]))
    assert px(g) == [[50, 200]]
    g.min(100)
    assert px(g) == [[50, 100]]
    g.difference(gray([[60, 0]]))
    assert px(g) == [[10, 100]]
    with pytest.raises(OSError, match="Images not equal!"):
        g.add(rgb([[0, 0]]))  # same size but another format


def test_replace_mirror_flip_transpose():
    src = gray([[1, 2, 3], [4, 5, 6]])
    a = gray(np.zeros((2, 3)))
    a.replace(src, hmirror=True)
    assert px(a) == [[3, 2, 1], [6, 5, 4]]
    a.set(src, vflip=True)
    assert px(a) == [[4, 5, 6], [1, 2, 3]]
    t = gray([[1, 2, 3], [4, 5, 6]])
    t.assign(transpose=True)  # no image: the image itself, read before it is overwritten
    assert (t.width(), t.height()) == (2, 3) and px(t) == [[1, 4], [2, 5], [3, 6]]
    m = gray([[0, 0, 0], [0, 0, 0]])
    m.replace(src, mask=gray([[255, 0, 255], [0, 0, 0]]))
    assert px(m) == [[1, 0, 3], [0, 0, 0]]


def test_gamma_corr_uses_fast_powf():
    from maixemu.firmware.image import _fmath as fm

    g = gray([[0, 64, 128, 255]])
    g.gamma_corr(gamma=2.0, contrast=1.0, brightness=0.0)
    inv = F(1.0) / F(2.0)
    expect = [int(np.clip(fm.to_int(fm.fast_powf(F(v) * (F(1) / F(255)), inv) * F(255)), 0, 255)) for v in (0, 64, 128, 255)]
    assert px(g) == [expect]
    assert expect[2] != int(255 * (128 / 255) ** 0.5)  # not the libm pow


# ---------------------------------------------------------------------- pooling
def test_mean_and_midpoint_pool():
    src = np.arange(24, dtype=np.uint8).reshape(4, 6) * 10
    g = gray(src)
    out = g.mean_pooled(2, 2)
    assert (out.width(), out.height()) == (3, 2)
    assert out._pix[0, 0] == (0 + 10 + 60 + 70) // 4
    mid = g.midpoint_pooled(3, 2, bias=0.25)
    bias = int(F(0.25) * F(256))
    lo, hi = 0, 80
    assert mid._pix[0, 0] == (lo * (256 - bias) + hi * bias) >> 8
    g.mean_pool(3, 4)
    assert (g.width(), g.height()) == (2, 1)
    with pytest.raises(OSError, match="Width divisor must be less than <= img width"):
        gray(src).mean_pooled(7, 1)
