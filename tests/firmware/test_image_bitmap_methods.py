"""Methods on BINARY (bitmap) images, against what MaixPy-v1's imlib computes (d8901fd).

Expected values come from the C by hand: ``IMAGE_PUT_BINARY_PIXEL`` keeps bit 0 of the value,
``COLOR_BINARY_MAX`` is 1, colours go through ``py_helper_keyword_color`` (an int's bit 0, a tuple
via RGB565 -> ``COLOR_RGB565_TO_BINARY``), most functions run their gray code on the 0/1 values, and
the finders copy the bitmap out as 0/255 gray (``COLOR_BINARY_TO_GRAYSCALE``) — so where the C
shows the same arithmetic, the bitmap result is compared with the gray path on 0/255.
"""

from __future__ import annotations

import numpy as np
import pytest

import maixemu.firmware.image as image
from maixemu.firmware.image import _kinds

F = np.float32


def gray(values) -> image.Image:
    return image.Image._wrap(image.GRAYSCALE, np.array(values, np.uint8, ndmin=2))


def bits(values) -> image.Image:
    """A BINARY image holding ``values`` (0/1), made the way scripts make one."""
    return gray(np.asarray(values, np.uint8) * 255).to_bitmap(copy=True)


def noise(h=24, w=40, seed=0, p=0.5) -> np.ndarray:
    return (np.random.default_rng(seed).random((h, w)) < p).astype(np.uint8)


def as_bits(img) -> np.ndarray:
    assert img.format() is None and img._pix.dtype == np.uint8  # still a bitmap, 0/1 only
    assert set(np.unique(img._pix)) <= {0, 1}
    return img._pix.copy()


# ---------------------------------------------------------------------- drawing (imlib_set_pixel)
@pytest.mark.parametrize("draw", [
    lambda i, c: i.draw_line(1, 2, 30, 17, color=c, thickness=2),
    lambda i, c: i.draw_rectangle(3, 4, 12, 9, color=c, fill=True),
    lambda i, c: i.draw_rectangle(3, 4, 12, 9, c, 3),
    lambda i, c: i.draw_circle(20, 12, 7, color=c),
    lambda i, c: i.draw_circle(20, 12, 5, color=c, fill=True),
    lambda i, c: i.draw_cross(10, 10, color=c, size=4),
    lambda i, c: i.draw_arrow(2, 2, 30, 20, color=c),
    lambda i, c: i.draw_ellipse(20, 12, 9, 5, 30, color=c),
    lambda i, c: i.draw_string(1, 1, "Hi!", color=c, scale=1),
], ids=["line", "rect_fill", "rect", "circle", "disc", "cross", "arrow", "ellipse", "string"])
def test_drawing_on_a_bitmap_sets_the_bits_gray_drawing_sets_to_255(draw):
    base = noise(seed=3)
    for bit in (0, 1):
        b, g = bits(base), gray(base * 255)
        draw(b, bit)
        draw(g, 255 * bit)
        assert np.array_equal(as_bits(b), (g._pix > 127).astype(np.uint8))


def test_bitmap_colours_are_bit0_of_an_int_and_the_luma_of_a_tuple():
    for colour, want in ((-1, 1), (None, 1), (1, 1), (2, 0), (0xFE, 0), (3, 1),
                         ((255, 255, 255), 1), ((0, 0, 0), 0), ((255, 0, 0), 0), ((0, 255, 0), 1)):
        b = bits(np.full((4, 8), 1 - want))
        b.draw_rectangle(0, 0, 8, 4, color=colour, fill=True) if colour is not None else \
            b.draw_rectangle(0, 0, 8, 4, fill=True)
        assert as_bits(b).min() == want and as_bits(b).max() == want, colour


def test_set_pixel_and_draw_image_on_a_bitmap():
    b = bits(np.zeros((4, 8)))
    b.set_pixel(1, 1, 3)  # bit 0 of 3
    b.set_pixel(2, 1, 2)
    assert as_bits(b)[1, 1] == 1 and as_bits(b)[1, 2] == 0
    # draw_image takes the source raw value as RGB565, re-encodes it and keeps bit 0 (imlib_set_pixel)
    src = bits([[1, 0, 1]])
    dst = bits(np.zeros((2, 4)))
    dst.draw_image(src, 0, 0)
    # raw 1 read as byte-swapped RGB565 is G6 = 8 (G8 = 32); COLOR_R8_G8_B8_TO_RGB565 gives 1 back
    assert as_bits(dst)[0, :3].tolist() == [1, 0, 1]
    dst = bits(np.zeros((2, 4)))
    dst.draw_image(gray([[255, 0, 255]]), 0, 0)  # raw 0x00FF as RGB565 re-encodes to ...FF: bit 0 set
    assert as_bits(dst)[0, :3].tolist() == [1, 0, 1]


# ---------------------------------------------------------------------- math ops (mathop.c)
@pytest.mark.parametrize("op, want", [
    (lambda a, b: a.add(b), lambda x, y: x | y),                   # min(x + y, 1)
    (lambda a, b: a.sub(b), lambda x, y: x & (1 - y)),             # max(x - y, 0)
    (lambda a, b: a.sub(b, reverse=True), lambda x, y: y & (1 - x)),
    (lambda a, b: a.mul(b), lambda x, y: x & y),                   # (int)(x * y * 1.0f)
    (lambda a, b: a.mul(b, invert=True), lambda x, y: x | y),      # 1 - (1 - x)(1 - y)
    (lambda a, b: a.div(b), lambda x, y: x & y),                   # IM_DIV(x * 1, y): 0 when y == 0
    (lambda a, b: a.div(b, mod=True), lambda x, y: 0 * x),         # IM_MOD(x, y) with y in {0, 1}
    (lambda a, b: a.min(b), lambda x, y: x & y),
    (lambda a, b: a.max(b), lambda x, y: x | y),
    (lambda a, b: a.difference(b), lambda x, y: x ^ y),            # abs(x - y)
    (lambda a, b: a.blend(b), lambda x, y: x & y),                 # (int)(x * .5 + y * .5)
    (lambda a, b: a.blend(b, alpha=256), lambda x, y: x),
    (lambda a, b: a.blend(b, alpha=0), lambda x, y: y),
    (lambda a, b: a.replace(b), lambda x, y: y),
    (lambda a, b: a.b_and(b), lambda x, y: x),                     # imlib_b_and is empty in MaixPy-v1
    (lambda a, b: a.b_xor(b), lambda x, y: x),
], ids=["add", "sub", "rsub", "mul", "screen", "div", "mod", "min", "max", "difference", "blend",
        "blend256", "blend0", "replace", "b_and", "b_xor"])
def test_math_ops_between_bitmaps(op, want):
    x, y = noise(seed=1), noise(seed=2)
    a, b = bits(x), bits(y)
    assert op(a, b) is a
    assert np.array_equal(as_bits(a), want(x, y).astype(np.uint8))
    assert np.array_equal(as_bits(b), y)  # the other operand is read, never written


def test_math_op_scalars_and_masks_on_bitmaps():
    x = noise(seed=4)
    a = bits(x)
    a.add(2)  # the scalar fills a row with IMAGE_PUT_BINARY_PIXEL_FAST(v): bit 0 of 2 is clear
    assert np.array_equal(as_bits(a), x)
    a.add(1)
    assert as_bits(a).min() == 1
    m = noise(seed=5)
    a = bits(x)
    a.sub(1, mask=bits(m))  # a bitmap mask: its bits
    assert np.array_equal(as_bits(a), np.where(m == 1, 0, x))
    a = bits(x)
    a.negate()
    assert np.array_equal(as_bits(a), 1 - x)
    with pytest.raises(OSError, match="Images not equal!"):
        bits(x).add(gray(x * 255))  # same size, other format


def test_gamma_corr_on_a_bitmap_uses_a_two_entry_table():
    x = noise(seed=6)
    a = bits(x)
    a.gamma_corr(gamma=1.0)  # (int)((fast_powf(i, 1) * 1 + 0) * 1)
    assert np.array_equal(as_bits(a), x)
    a.gamma_corr(contrast=0.0, brightness=1.0)
    assert as_bits(a).min() == 1


# ---------------------------------------------------------------------- binary (binary.c)
def test_binary_on_a_bitmap_thresholds_the_bits():
    x = noise(seed=7)
    assert np.array_equal(as_bits(bits(x).binary([(1, 1)])), x)
    assert np.array_equal(as_bits(bits(x).binary([(0, 0)])), 1 - x)
    assert np.array_equal(as_bits(bits(x).binary([(1, 1)], invert=True)), 1 - x)
    assert as_bits(bits(x).binary([(0, 0), (1, 1)], invert=True)).max() == 1  # per-threshold invert
    assert as_bits(bits(x).binary([(0, 1)])).min() == 1
    assert as_bits(bits(x).binary([(2, 255)])).max() == 0
    # zero: the pixels inside go to 0, the others keep their bit
    assert np.array_equal(as_bits(bits(x).binary([(1, 1)], zero=True)), np.zeros_like(x))
    assert np.array_equal(as_bits(bits(x).binary([(0, 0)], zero=True)), x)
    m = noise(seed=8)
    got = as_bits(bits(x).binary([(0, 0)], mask=bits(m)))  # outside the mask the old bit stays
    assert np.array_equal(got, np.where(m == 1, 1 - x, x))
    src = bits(x)
    out = src.binary([(0, 0)], copy=True)
    assert out is not src and np.array_equal(as_bits(out), 1 - x) and np.array_equal(as_bits(src), x)


def test_binary_to_bitmap_returns_a_bitmap():
    g = np.array([[0, 100, 128, 200, 255, 40, 140, 90]], np.uint8)
    src = gray(g)
    out = src.binary([(100, 200)], to_bitmap=True, copy=True)
    assert out.format() is None and src.format() == image.GRAYSCALE
    assert as_bits(out).tolist() == [[0, 1, 1, 1, 0, 0, 1, 0]]
    # zero=True into a bitmap: COLOR_GRAYSCALE_TO_BINARY(old), cleared where inside
    z = gray(g).binary([(100, 200)], zero=True, to_bitmap=True, copy=True)
    assert as_bits(z).tolist() == [[0, 0, 0, 0, 1, 0, 0, 0]]
    # mask: outside it the old pixel's COLOR_GRAYSCALE_TO_BINARY
    m = bits([[1, 1, 1, 1, 0, 0, 0, 0]])
    mk = gray(g).binary([(100, 200)], mask=m, to_bitmap=True, copy=True)
    assert as_bits(mk).tolist() == [[0, 1, 1, 1, 1, 0, 1, 0]]
    inv = gray(g).binary([(100, 200)], invert=True, to_bitmap=True, copy=True)
    assert as_bits(inv).tolist() == [[1, 0, 0, 0, 1, 1, 0, 1]]
    # in place: the same memory becomes the bitmap
    same = gray(g)
    r = same.binary([(100, 200)], to_bitmap=True)
    assert same.format() is None and r.format() is None and as_bits(same).tolist() == as_bits(out).tolist()
    with pytest.raises(OSError, match="Can't convert to bitmap in place!"):
        gray([[1, 2, 3]]).binary([(0, 1)], to_bitmap=True)
    # RGB565 in, bitmap out
    rgb = image.Image(size=(4, 1))
    rgb.draw_rectangle(0, 0, 2, 1, color=(255, 255, 255), fill=True)
    assert as_bits(rgb.binary([(50, 100)], to_bitmap=True, copy=True)).tolist() == [[1, 1, 0, 0]]
    # a bitmap in, to_bitmap=True: still the thresholded bits
    x = noise(seed=9)
    assert np.array_equal(as_bits(bits(x).binary([(0, 0)], to_bitmap=True, copy=True)), 1 - x)


# ---------------------------------------------------------------------- morphology (binary.c)
@pytest.mark.parametrize("call", [
    lambda i: i.erode(1), lambda i: i.erode(2, threshold=20), lambda i: i.dilate(1),
    lambda i: i.dilate(1, threshold=3), lambda i: i.open(1), lambda i: i.close(2),
    lambda i: i.top_hat(1), lambda i: i.black_hat(1),
], ids=["erode", "erode_t", "dilate", "dilate_t", "open", "close", "top_hat", "black_hat"])
def test_morphology_on_a_bitmap_matches_the_gray_binary_view(call):
    x = noise(seed=10, p=0.6)
    b, g = bits(x), gray(x * 255)
    call(b)
    call(g)
    assert np.array_equal(as_bits(b), (g._pix > 127).astype(np.uint8))


def test_erode_and_dilate_by_hand():
    x = np.zeros((5, 5), np.uint8)
    x[1:4, 1:4] = 1
    e = bits(x).erode(1)  # a set pixel stays only with all 8 neighbours set
    assert as_bits(e).sum() == 1 and as_bits(e)[2, 2] == 1
    d = bits(e._pix).dilate(1)
    assert np.array_equal(as_bits(d), x)


# ---------------------------------------------------------------------- filters (filter.c)
def _window_sum(x, k):
    p = np.pad(x.astype(np.int64), k, mode="edge")
    h, w = x.shape
    return sum(p[k + j:k + j + h, k + i:k + i + w] for j in range(-k, k + 1) for i in range(-k, k + 1))


def test_window_filters_on_a_bitmap_by_hand():
    x = noise(seed=11)
    n = 9
    acc = _window_sum(x, 1)
    assert np.array_equal(as_bits(bits(x).mean(1)), (acc == n).astype(np.uint8))  # (int)(acc * (1/9))
    assert np.array_equal(as_bits(bits(x).median(1)), (acc >= 5).astype(np.uint8))  # 5th of 9 sorted
    assert np.array_equal(as_bits(bits(x).median(1, percentile=0.0)), (acc == n).astype(np.uint8))
    assert np.array_equal(as_bits(bits(x).median(1, percentile=1.0)), (acc > 0).astype(np.uint8))
    assert np.array_equal(as_bits(bits(x).mode(1)), (acc >= 5).astype(np.uint8))
    assert np.array_equal(as_bits(bits(x).midpoint(1)), (acc == n).astype(np.uint8))  # (int)(.5*min + .5*max)
    assert np.array_equal(as_bits(bits(x).midpoint(1, bias=1.0)), (acc > 0).astype(np.uint8))
    # morph: clamp((int)(sum(k * v) * mul) + add, 0, 1)
    assert np.array_equal(as_bits(bits(x).morph(1, [1] * 9)), (acc == n).astype(np.uint8))
    assert np.array_equal(as_bits(bits(x).morph(1, [1] * 9, mul=1.0)), (acc > 0).astype(np.uint8))
    # threshold: set where (filtered - offset) < own bit (COLOR_BINARY_MAX / MIN)
    got = as_bits(bits(x).mean(1, threshold=True))
    assert np.array_equal(got, ((acc == n).astype(int) < x).astype(np.uint8))
    # the bit is a uint32_t (IMAGE_GET_BINARY_PIXEL_FAST): C compares ``pixel - offset`` unsigned, so a
    # negative difference is never below it (found by the differential test against filter.c)
    got = as_bits(bits(x).mean(1, threshold=True, offset=1, invert=True))
    diff = (acc == n).astype(int) - 1
    assert np.array_equal(got, ~((diff >= 0) & (diff < x)) & 1)


@pytest.mark.parametrize("call", [
    lambda i: i.median(1), lambda i: i.median(2, percentile=0.3), lambda i: i.mode(1),
    lambda i: i.midpoint(1, bias=1.0), lambda i: i.midpoint(1, bias=0.0),
], ids=["median", "median_p", "mode", "midpoint_max", "midpoint_min"])
def test_rank_filters_on_a_bitmap_match_the_gray_path(call):
    x = noise(seed=12)
    b, g = bits(x), gray(x * 255)
    call(b)
    call(g)
    assert np.array_equal(as_bits(b), (g._pix > 127).astype(np.uint8))


def test_gaussian_laplacian_bilateral_on_a_bitmap():
    x = noise(seed=13)
    b = bits(x)
    b.gaussian(1)  # (int)(sum(pascal * v) / 16): 1 only where the whole window is set
    assert np.array_equal(as_bits(b), (_window_sum(x, 1) == 9).astype(np.uint8))
    b = bits(x)
    b.bilateral(1)  # colour weight of a differing neighbour: gaussian(1.0, 0.1) ~ 0 -> the own bit
    assert np.array_equal(as_bits(b), x)
    b = bits(np.ones((6, 6)))
    b.laplacian(1)  # all equal: zero response
    assert as_bits(b).max() == 0


def test_histeq_on_a_bitmap():
    x = noise(seed=14)
    a = x.size
    hist = np.cumsum(np.bincount(x.ravel(), minlength=2))
    lut = [int(F(F(1) / F(a)) * F(h)) for h in hist]  # fast_roundf: (int) truncation
    b = bits(x)
    b.histeq()
    assert np.array_equal(as_bits(b), np.array(lut, np.uint8)[x])
    # CLAHE: the bits go in as 0/255 and come out as gray > 127, as on a 0/255 gray image
    b, g = bits(x), gray(x * 255)
    b.histeq(adaptive=True, clip_limit=2)
    g.histeq(adaptive=True, clip_limit=2)
    assert np.array_equal(as_bits(b), (g._pix > 127).astype(np.uint8))


def test_cartoon_leaves_a_bitmap_unchanged():
    x = noise(seed=15)
    b = bits(x)
    b.cartoon(seed_threshold=0.5, floating_threshold=0.99)  # (int)(t * 1) == 0: one value per region
    assert np.array_equal(as_bits(b), x)
    # thresholds 1.0 -> 1: every pixel joins the first flood; its mean g_acc / pixels (integer) is 0
    b = bits(x)
    b.cartoon(seed_threshold=1.0, floating_threshold=1.0)
    assert as_bits(b).max() == 0
    b = bits(np.ones((5, 7)))
    b.cartoon(seed_threshold=1.0, floating_threshold=1.0)
    assert as_bits(b).min() == 1


# ---------------------------------------------------------------------- statistics (stats.c)
def test_histogram_and_statistics_of_a_bitmap():
    x = np.zeros((4, 10), np.uint8)
    x[:, :3] = 1  # 12 of 40 set
    b = bits(x)
    h = b.get_histogram()
    assert h.bins() == [float(F(28) * (F(1) / F(40))), float(F(12) * (F(1) / F(40)))]
    assert str(h).startswith('{"bins":[')
    s = b.get_statistics()
    # mean = (int)(0 * 0.7 + 1 * 0.3); median: the bin where the running sum passes 0.5 is 0
    assert (s.mean(), s.median(), s.mode(), s.min(), s.max(), s.lq(), s.uq()) == (0, 0, 0, 0, 1, 0, 1)
    assert s.stdev() == int(np.sqrt(F(0.3) - F(0.3) * F(0.3)))
    assert str(s).startswith('{"mean":0, "median":0')
    assert b.get_histogram().get_percentile(0.9).value() == 1
    assert b.get_histogram().get_threshold().value() in (0, 1)
    assert len(b.get_histogram(bins=8).bins()) == 8
    with pytest.raises(OSError, match="bins must be >= 2"):
        b.get_histogram(bins=1)
    # thresholds: counted per threshold, divided by the ROI's area
    assert b.get_histogram([(1, 1)]).bins() == [0.0, float(F(12) * (F(1) / F(40)))]


def test_similarity_and_regression_and_blobs_on_a_bitmap():
    x = np.zeros((16, 24), np.uint8)
    x[4:10, 5:15] = 1
    b = bits(x)
    sim = b.get_similarity(bits(x))
    assert sim.mean() == 1.0 and sim.min() == 1.0
    blobs = b.find_blobs([(1, 1)])
    ref = gray(x * 255).find_blobs([(128, 255)])
    assert [bl.rect() for bl in blobs] == [bl.rect() for bl in ref] == [(5, 4, 9, 5)]
    assert [bl.pixels() for bl in blobs] == [60]
    line = b.get_regression([(1, 1)])
    ref = gray(x * 255).get_regression([(128, 255)])
    assert line is not None and line.line() == ref.line()


# ---------------------------------------------------------------------- finders read 0/255 gray
def test_finders_see_a_bitmap_as_0_255_gray():
    x = np.zeros((60, 80), np.uint8)
    x[10:50, 20:60] = 1
    x[25:35, 30:50] = 0
    b, g = bits(x), gray(x * 255)
    assert [r.rect() for r in b.find_rects(threshold=1000)] == [r.rect() for r in g.find_rects(threshold=1000)]
    assert [c.circle() for c in b.find_circles(threshold=2000)] == [c.circle() for c in g.find_circles(threshold=2000)]
    assert [ln.line() for ln in b.find_line_segments()] == [ln.line() for ln in g.find_line_segments()]
    # find_lines: equal strides agree; the BINARY case steps rows by y_stride (gray/RGB565: x_stride)
    assert [ln.line() for ln in b.find_lines(x_stride=2, y_stride=2)] == \
           [ln.line() for ln in g.find_lines(x_stride=2, y_stride=1)]
    from maixemu.firmware.image import _hough

    roi = (0, 0, 80, 60)
    want = _hough.find_lines(x * 255, roi, 1, 3, 1000, 25, 25, row_stride=3)
    got = b.find_lines(x_stride=1, y_stride=3, threshold=1000)
    assert [(ln.theta(), ln.rho(), ln.magnitude()) for ln in got] == \
           [(d["theta"], d["rho"], d["magnitude"]) for d in want]


# ---------------------------------------------------------------------- what stays not emulated
@pytest.mark.parametrize("name, call", [
    ("mean_pool", lambda i: i.mean_pool(2, 2)), ("mean_pooled", lambda i: i.mean_pooled(2, 2)),
    ("midpoint_pool", lambda i: i.midpoint_pool(2, 2)), ("midpoint_pooled", lambda i: i.midpoint_pooled(2, 2)),
    ("lens_corr", lambda i: i.lens_corr(1.8)), ("find_keypoints", lambda i: i.find_keypoints()),
    ("find_displacement", lambda i: i.find_displacement(i)), ("selective_search", lambda i: i.selective_search()),
    ("find_features", lambda i: i.find_features(None)),
])
def test_methods_without_a_bitmap_case_name_why(name, call):
    assert name in _kinds.BINARY_UNDEFINED
    with pytest.raises(NotImplementedError, match=rf"image\.Image\.{name} on a BINARY .*: "):
        call(bits(noise(seed=16)))


def test_every_other_mutable_method_runs_on_a_bitmap():
    """The guard lets through every ``_MUTABLE`` method but the named ones."""
    for name, kind in _kinds.ACCEPTS.items():
        if kind != "mutable" or name in _kinds.BINARY_UNDEFINED:
            continue
        try:
            getattr(bits(noise(seed=17)), name)()
        except NotImplementedError as exc:
            pytest.fail(f"{name}: {exc}")
        except (TypeError, OSError, ValueError):
            pass  # missing arguments etc.: the method itself ran its argument checks
