"""find_lbp / match_descriptor / descriptor files, find_hog, find_eye and get_similarity, checked
against what lbp.c, hog.c, eye.c and stats.c compute (quirks included) on synthetic images."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _features


def gray(a) -> image.Image:
    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a, np.uint8))


def test_uniform_table_has_58_patterns_in_order():
    t = _features._UNIFORM
    assert sorted(set(t[t != 58])) == list(range(58))
    assert t[0] == 0 and t[1] == 1 and t[5] == 58 and t[255] == 57  # 00000101: 4 transitions


def test_lbp_of_a_flat_image_counts_pattern_255_per_region():
    img = gray(np.full((49, 63), 7, np.uint8))
    d = img.find_lbp((0, 0, 63, 49))
    hist = d.hist.reshape(49, 59)
    # every neighbour >= centre: code 255 -> uniform bin 57; regions are 9 wide, 7 high, the scan
    # stops 3 short of the image: 46 rows x 60 columns
    assert hist[:, :57].sum() == 0
    per_region = hist[:, 57].reshape(7, 7)
    assert per_region[0, 0] == 7 * 9 and per_region[6, 6] == (46 - 42) * (60 - 54)
    assert repr(d) == "{}"


def test_lbp_bins_are_uint8_and_distance_is_weighted_chi_square():
    img = gray(np.full((120, 160), 7, np.uint8))
    d = img.find_lbp((0, 0, 160, 120))
    # one region holds 17 x 22 = 374 codes: the uint8 bin wraps to 118
    assert d.hist.reshape(49, 59)[0, 57] == (17 * 22) % 256
    a = np.zeros(_features.LBP_DESC_SIZE, np.uint8)
    b = a.copy()
    a[0], b[0] = 10, 4  # region 0 has weight 2: 2 * (36 // 14) = 4
    a[17 * 59], b[17 * 59] = 50, 0  # region 17 has weight 0
    a[8 * 59 + 3] = 9  # region 8 weight 4: 4 * (81 // 9) = 36
    dist = image.match_descriptor(_features.LBPDescriptor(a), _features.LBPDescriptor(b))
    assert dist == 4 + 36


@pytest.fixture
def sd(sd_card):
    return sd_card


def test_descriptor_files_round_trip_in_the_firmware_layout(sd):
    tmp_path = sd
    img = gray(np.random.default_rng(0).integers(0, 256, (60, 80), dtype=np.uint8))
    d = img.find_lbp((0, 0, 80, 60))
    assert image.save_descriptor(d, "face.lbp") is True
    raw = (tmp_path / "face.lbp").read_bytes()
    assert struct.unpack_from("<I", raw)[0] == 0 and len(raw) == 4 + 2891
    back = image.load_descriptor("face.lbp")
    assert image.match_descriptor(d, back) == 0
    with pytest.raises(OSError, match="different types"):
        image.match_descriptor(d, 3)
    (tmp_path / "bad.lbp").write_bytes(struct.pack("<I", 7))
    with pytest.raises(OSError, match="not supported"):
        image.load_descriptor("bad.lbp")


def test_similarity_of_an_image_with_itself_and_the_column_quirk():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, (32, 80), dtype=np.uint8)
    s = gray(a).get_similarity(gray(a.copy()))
    assert (s.mean(), s.stdev(), s.min(), s.max()) == (1.0, 0.0, 1.0, 1.0)
    assert s[0] == s.mean() and len(s) == 4 and repr(s).startswith('{"mean":1.000000')
    # 10 blocks per row: the firmware only ever reads columns 0..16 (block index + i), so a change
    # in column 40 is invisible to it
    b = a.copy()
    b[:, 40:] = 255 - b[:, 40:]
    assert gray(a).get_similarity(gray(b)).mean() == 1.0
    b[:, 3] = 255 - b[:, 3]
    assert gray(a).get_similarity(gray(b)).mean() < 1.0


def test_similarity_max_starts_at_flt_min():
    a = np.zeros((8, 8), np.uint8)
    b = np.full((8, 8), 255, np.uint8)
    s = gray(a).get_similarity(gray(b))
    # ssim ~ c1 * c2 / ((255^2 + c1) * c2) ~ 1e-4 > FLT_MIN
    assert 0 < s.max() < 1e-3 and s.min() == s.max()


def test_find_eye_points_at_a_dark_pupil():
    y, x = np.mgrid[0:60, 0:80]
    a = np.full((60, 80), 230, np.uint8)
    a[(x - 42) ** 2 + (y - 40) ** 2 < 36] = 10
    ex, ey = gray(a).find_eye((10, 10, 60, 50))
    assert abs(ex - 42) <= 2 and abs(ey - 40) <= 2
    with pytest.raises(OSError, match="not supported"):
        image.Image(size=(80, 60)).find_eye((0, 0, 80, 60))


def test_find_hog_draws_the_gradient_picture():
    flat = gray(np.full((32, 32), 90, np.uint8)).find_hog()
    # flat blocks normalise 0/0: the K210 turns NaN into 255, so every bin line is drawn white
    assert set(np.unique(flat._pix)) == {0, 255}
    a = np.zeros((32, 32), np.uint8)
    a[:, 12:] = 200  # a vertical edge in the first cell column pair: horizontal gradients
    lines = _features.hog(a, (0, 0, 32, 32), 8)
    assert len(lines) == 4 * 4 * 9 and all(0 <= c <= 255 for *_, c in lines)
    # cell (0, 1) (x 8..15) holds the edge: its strongest bin is atan2(vx, vy) = 90 deg -> bin 4,
    # drawn last (bins go in ascending strength)
    cell = lines[9:18]
    assert cell[-1][4] == 255 and cell[-1][0] == cell[-1][2]  # a vertical stroke (d = 80: cos ~ 0)


def test_find_hog_python_lines_match_a_direct_loop():
    rng = np.random.default_rng(4)
    a = rng.integers(0, 256, (24, 24), dtype=np.uint8)
    F = np.float32
    # the first block, straight from hog.c's loops
    hist = np.zeros(36, F)
    k = F(0)
    for cy in range(16):
        for cx in range(16):
            y, x = cy, cx
            if 0 < y < 23 and 0 < x < 23:
                vx = int(a[y, x + 1]) - int(a[y, x - 1])
                vy = int(a[y + 1, x]) - int(a[y - 1, x])
                m = np.sqrt(F(vx * vx + vy * vy))
                if int(m) > 1:
                    k = F(k + m * m)
                    t = int(abs(F(np.arctan2(F(vx), F(vy))) * F(180.0) / F(np.pi))) // 20
                    t = 0 if t == 9 else t
                    hist[((cy // 8) * 2 + cx // 8) * 9 + t] = F(hist[((cy // 8) * 2 + cx // 8) * 9 + t] + m)
    hist = hist / np.sqrt(k)
    lines = _features.hog(a, (0, 0, 24, 24), 8)
    got = sorted(c for *_, c in lines[:9])
    assert got == sorted(int(min(max(int(v * F(255)), 0), 255)) for v in hist[:9])
