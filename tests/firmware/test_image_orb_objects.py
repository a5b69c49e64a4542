"""ORB keypoint objects: the firmware's descriptor file format, match_descriptor and draw_keypoints.

Expected values are worked out from orb.c / py_image.c by hand on small sets (the modified popcount,
the ratio and cross-check tests, the persistent ``matched`` flags), not taken from our own output.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _orb


def _desc(*words: int) -> bytes:
    return struct.pack("<8I", *(list(words) + [0] * (8 - len(words))))


def _kps(descs, xs=None):
    pts = [_orb.KeyPoint(10 + 5 * i if xs is None else xs[i], 20 + i, 30 + i, 1, 15 * i, d) for i, d in enumerate(descs)]
    return _orb.KeyPoints(pts, 20, False)


def test_the_descriptor_distance_counts_differing_two_bit_fields():
    assert _orb._distance(_desc(0b11), _desc(0)) == 1  # both bits of one field: one difference
    assert _orb._distance(_desc(0b0101), _desc(0)) == 2
    assert _orb._distance(_desc(0xFFFFFFFF), _desc(0)) == 16
    assert _orb._distance(_desc(*[0xFFFFFFFF] * 8), _desc()) == _orb.MAX_KP_DIST // 2


def test_save_and_load_use_the_firmwares_layout(sd_card):
    tmp_path = sd_card
    kp = _kps([_desc(1, 2, 3), _desc(7)])
    data = _orb.save(kp)
    assert data[:4] == struct.pack("<i", 2) and len(data) == 4 + 2 * (10 + 32)
    assert data[4:14] == struct.pack("<5H", 10, 20, 30, 1, 0) and data[14:46] == _desc(1, 2, 3)
    back = _orb.load(data)
    assert len(back) == 2 and back[1] == (15, 21, 31, 1, 15) and repr(back) == '{"size":2, "threshold":10, "normalized":0}'
    assert len(_orb.load(data[:-5])) == 1  # a short file keeps the complete keypoints, as the firmware's loop
    path = "kp.orb"
    assert image.save_descriptor(kp, path) is True
    raw = (tmp_path / "kp.orb").read_bytes()
    assert raw[:4] == struct.pack("<I", 1) and raw[4:] == data  # DESC_ORB, then the keypoints
    loaded = image.load_descriptor(path)
    assert [loaded[i] for i in range(2)] == [kp[0], kp[1]]


def test_match_descriptor_ratio_cross_check_and_flags():
    a = _kps([_desc(0xF), _desc(0xF0000), _desc(0xF00000)])
    b = _kps([_desc(0xFF000000), _desc(0xF0000), _desc(0xF)], xs=[40, 60, 80])
    m = image.match_descriptor(a, b, threshold=90)
    # a0 <-> b2 (distance 0), a1 <-> b1 (0); a2's best in b is b1 (2 fields apart) then b0: after the
    # first matches b1/b2 are flagged, so a2 sees only b0 and its ratio 4*100/256 passes, but b0's best
    # in a is a0 (a0/a1 are not flagged in the first set) -> no cross-match
    assert m.match() == [(0, 2), (1, 1)] and m.count() == 2
    assert (m.cx(), m.cy()) == ((80 + 60) // 2, (22 + 21) // 2)
    assert m.rect() == (60, 21, 20, 1) and m.theta() == 0  # |angle differences| 30 and 0: the first maximum is 0
    assert [k.matched for k in b._kpts] == [0, 1, 1]
    again = image.match_descriptor(a, b, threshold=90)  # the flags stay: only b0 is left, 6 fields from
    assert again.match() == [(0, 0)] and again.rect() == (40, 20, 0, 0)  # a0, a1, a2 alike: a0 comes first
    third = image.match_descriptor(a, b, threshold=90)  # nothing unflagged: 256*100/256 = 100 > 90
    assert third.count() == 0 and third.rect() == (0, 0, 0, 0) and third.match() == []
    with pytest.raises(OSError, match="between 0 and 100"):
        image.match_descriptor(a, b, threshold=101)
    with pytest.raises(OSError, match="different types"):
        image.match_descriptor(a, image.Image(size=(8, 8)).to_grayscale(True).find_lbp((0, 0, 8, 8)))


def test_a_zero_second_distance_divides_as_risc_v():
    # two identical candidates: d1 = d2 = 0 and 0*100/0 is -1 on the K210, which passes any threshold
    a = _kps([_desc(5)])
    b = _kps([_desc(5), _desc(5)])
    m = image.match_descriptor(a, b, threshold=0)
    assert m.count() == 1 and m.match() == [(0, 0)]


def test_draw_keypoints_draws_a_line_and_a_circle():
    img = image.Image(size=(60, 40)).to_grayscale(True)
    img.draw_keypoints([(30, 20, 0)], color=255, size=10)
    ref = image.Image(size=(60, 40)).to_grayscale(True)
    ref.draw_line(30, 20, 40, 20, color=255)  # cos(0)*10, sin(0)*10
    ref.draw_circle(30, 20, 4, color=255)  # (10 - 2) / 2
    assert np.array_equal(img._pix, ref._pix)
    diag = image.Image(size=(60, 40)).to_grayscale(True).draw_keypoints([(30, 20, 405)], color=255, size=20)
    ref = image.Image(size=(60, 40)).to_grayscale(True)
    ref.draw_line(30, 20, 30 + 14, 20 + 14, color=255)  # 405 % 360 = 45: 0.707107 * 20 -> 14
    ref.draw_circle(30, 20, 9, color=255)
    assert np.array_equal(diag._pix, ref._pix)
    kp = _kps([_desc(1)])
    image.Image(size=(60, 40)).draw_keypoints(kp)
    with pytest.raises(TypeError):
        image.Image(size=(60, 40)).draw_keypoints(3)


def test_keypoints_found_here_save_load_and_match_themselves(sd_card):
    from PIL import Image as PILImage

    from _shared import shared_path

    path = shared_path("images", "face_group.jpg")
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    img = image.Image(size=(320, 240)).to_grayscale(True)
    img._pix[...] = np.asarray(PILImage.open(path).convert("L").resize((320, 240)))
    kp = img.find_keypoints(max_keypoints=50)
    assert len(kp) == 50 and repr(kp) == '{"size":50, "threshold":20, "normalized":0}'
    image.save_descriptor(kp, "scene.orb")
    back = image.load_descriptor("scene.orb")
    m = image.match_descriptor(kp, back)  # every keypoint is its own best match (distance 0)
    assert m.count() >= 40 and all(i == j for i, j in m.match())
