"""get_histogram / get_statistics / percentile / Otsu, against stats.c and py_image.c's rules.

Each expectation below is worked out from the firmware's C (float32 bins, per-threshold counting
over the ROI area, the running-sum walks, the int8/uint8 result fields), not from our outputs.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat

F = np.float32


def gray(values, w=None):
    a = np.asarray(values, np.uint8)
    if a.ndim == 1:
        a = a.reshape(1, -1) if w is None else a.reshape(-1, w)
    return image.Image._wrap(pixformat.GRAYSCALE, a.copy())


def test_default_bins_are_float32_fractions_of_the_roi_area():
    img = gray([0] * 3 + [255] * 5)
    h = img.get_histogram()
    bins = h.bins()
    assert len(bins) == 256 and h.a_bins() == [] and h.b_bins() == []
    scale = F(1) / F(8)
    assert bins[0] == float(F(3) * scale) and bins[255] == float(F(5) * scale)
    assert all(isinstance(v, float) for v in bins)


def test_bins_keyword_rebins_with_the_reciprocal_multiplier():
    # mult = (bins - 1) * (1 / 255.0f); exact multiples fall one bin lower when the product rounds down
    vals = list(range(256))
    h = gray(vals).get_histogram(bins=4).bins()
    mult = F(3) * (F(1) / F(255))
    idx = [int(F(v) * mult) for v in vals]
    expect = [float(F(idx.count(i)) * (F(1) / F(256))) for i in range(4)]
    assert h == expect
    assert gray(vals).get_histogram(bins=8, l_bins=3).bins() == gray(vals).get_histogram(l_bins=3).bins()


def test_bin_count_errors():
    with pytest.raises(OSError, match="bins must be >= 2"):
        gray([1, 2]).get_histogram(bins=1)
    with pytest.raises(OSError, match="l_bins must be >= 2"):
        gray([1, 2]).get_histogram(l_bins=1)
    rgb = image.Image(size=(2, 2))
    with pytest.raises(OSError, match="a_bins must be >= 2"):
        rgb.get_histogram(a_bins=0)


def test_thresholds_count_each_threshold_and_divide_by_the_roi_area():
    img = gray([10, 20, 30, 200])
    # 10 and 20 are inside both thresholds: counted twice; 200 in none; 30 in the second
    bins = img.get_histogram([(0, 25), (5, 40)]).bins()
    q = F(1) / F(4)
    assert bins[10] == float(F(2) * q) and bins[20] == float(F(2) * q)
    assert bins[30] == float(q) and bins[200] == 0.0
    # invert applies to each threshold separately
    inv = img.get_histogram([(0, 25)], invert=True).bins()
    assert inv[10] == 0.0 and inv[30] == float(q) and inv[200] == float(q)


def test_roi_limits_the_histogram():
    img = gray([[1, 2], [3, 4]], w=2)
    bins = img.get_histogram(roi=(1, 0, 1, 2)).bins()
    assert bins[2] == 0.5 and bins[4] == 0.5 and bins[1] == 0.0
    with pytest.raises(OSError, match="ROI does not overlap on the image!"):
        img.get_histogram(roi=(5, 5, 2, 2))


def test_statistics_walk_the_bins():
    # values 0 x2, 10 x1, 20 x1: running sums 0.5, 0.75, 1.0
    s = gray([0, 0, 10, 20]).get_statistics()
    assert s.median() == 0  # first bin where the running sum reaches 0.5
    assert s.lq() == 0 and s.uq() == 10
    assert (s.min(), s.max(), s.mode()) == (0, 20, 0)
    assert s.mean() == 7  # (int) 7.5
    avg = F(0.5) * F(0) + F(0.25) * F(10) + F(0.25) * F(20)
    sq = F(0.25) * F(100) + F(0.25) * F(400)
    assert s.stdev() == int(np.sqrt(F(sq - avg * avg)))
    assert s[0:3] == (s.mean(), s.median(), s.mode()) and s[7] == s.uq()
    assert s[-1] == 0  # 24 fields on every image: index -1 is b_uq, zero for gray


def test_statistics_of_a_thresholded_roi_are_not_normalised_to_one():
    # only 2 of 4 pixels counted: the bins sum to 0.5, so the median walk never reaches 0.5 exactly
    s = gray([50, 60, 200, 210]).get_statistics(thresholds=[(0, 100)])
    assert (s.min(), s.max()) == (50, 60)
    assert s.median() == 60 and s.uq() == 0  # 0.75 is never reached: the field stays 0


def test_mode_is_the_first_largest_bin():
    assert gray([5, 5, 9, 9, 1]).get_statistics().mode() == 5


def test_lab_statistics_fields_are_int8():
    img = image.Image(size=(4, 4))
    img.draw_rectangle(0, 0, 4, 4, color=(0, 0, 255), fill=True)
    s = img.get_statistics()
    L, A, B = image.rgb_to_lab((0, 0, 255))
    assert s.l_mean() == s.l_min() == s.l_max()
    assert -128 <= s.b_mean() <= 127 and s.b_mean() < 0 and s.a_mean() > 0


def test_percentile():
    h = gray([0, 0, 10, 20]).get_histogram()
    assert h.get_percentile(0.5).value() == 0
    assert h.get_percentile(0.51).value() == 10
    assert h.get_percentile(1.0).value() == 20
    assert h.get_percentile(0.0).value() == 0  # median_count < 0 is never true: stays 0
    p = h.get_percentile(0.75)
    assert p[0] == p.l_value() == 10 and p[1:] == (0, 0)
    assert repr(p) == '{"value":10}'


def test_otsu_threshold_is_the_bin_index_scaled_back():
    img = gray([10] * 8 + [200] * 8)
    t = img.get_histogram().get_threshold()
    # variance of every split between 10 and 199 is equal; the first one (bin 10) wins
    assert t.value() == 10
    # half red, half black: A/B bins 128 (black) and 128 + A/B of red; the first best split is bin
    # 128 for both, read back as (128 * 255) / 255 = 128 in an int8_t -> -128; L splits at bin 0
    rgb = image.Image(size=(4, 4))
    rgb.draw_rectangle(0, 0, 2, 4, color=(255, 0, 0), fill=True)
    th = rgb.get_histogram().get_threshold()
    assert (th.l_value(), th.a_value(), th.b_value()) == (0, -128, -128)


def test_histogram_objects_read_back_their_bins():
    h = gray([0, 0, 10, 20]).get_histogram()
    h.bins()[0] = 0.0  # the list is the object's own (mp list), edits change later queries
    assert h.get_percentile(0.5).value() == 20
    assert h[0] is h.bins() and h[1] == [] and h[0:2] == (h.bins(), [])
    with pytest.raises(IndexError):
        h[3]
    with pytest.raises(OSError, match="only slices with step=1"):
        h[::2]


def test_reprs_are_the_firmware_formats():
    s = gray([7, 7]).get_statistics()
    assert repr(s) == '{"mean":7, "median":7, "mode":7, "stdev":0, "min":7, "max":7, "lq":7, "uq":7}'
    rgb = image.Image(size=(2, 2))
    assert repr(rgb.get_histogram().get_percentile(0.5)).startswith('{"l_value:0", "a_value":')
    assert repr(rgb.get_histogram().get_threshold()).startswith('{"l_value":')


def test_aliases():
    img = gray([1, 2, 3])
    assert img.get_stats().mean() == img.statistics().mean() == img.get_statistics().mean()
    assert img.get_hist().bins() == img.histogram().bins()
    h = img.get_histogram()
    assert h.get_stats().mean() == h.statistics().mean() == h.get_statistics().mean()
