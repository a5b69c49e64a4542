"""find_apriltags: the firmware's AprilTag 2 detector (apriltag.c) on markers drawn with OpenCV's
AprilTag dictionaries."""

from __future__ import annotations

import math

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _apriltag

cv2 = pytest.importorskip("cv2")
aruco = cv2.aruco

FAMILIES = [(image.TAG16H5, "DICT_APRILTAG_16h5"), (image.TAG25H9, "DICT_APRILTAG_25h9"),
            (image.TAG36H10, "DICT_APRILTAG_36h10"), (image.TAG36H11, "DICT_APRILTAG_36h11")]


def tag_image(dict_name, tag_id, side=64, size=(160, 120), at=(48, 28)):
    m = aruco.generateImageMarker(aruco.getPredefinedDictionary(getattr(aruco, dict_name)), tag_id, side)
    a = np.full((size[1], size[0]), 255, np.uint8)
    a[at[1]:at[1] + side, at[0]:at[0] + side] = m
    return a


def gray(a):
    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a))


def test_first_codes_are_the_firmwares():
    # the first code of each family, as apriltag's tag*.c (and the firmware) list them
    first = {image.TAG16H5: 0x231B, image.TAG25H9: 0x155CBF1, image.TAG36H10: 0x1CA92A687,
             image.TAG36H11: 0xD5D628584}
    for flag, code in first.items():
        assert int(_apriltag.family_codes(flag)[0]) == code
    assert [len(_apriltag.family_codes(f)) for f, _ in FAMILIES] == [30, 35, 2320, 587]


@pytest.mark.parametrize("flag,dict_name", FAMILIES)
@pytest.mark.parametrize("tag_id", [0, 7, 29])
def test_each_family_decodes_its_ids(flag, dict_name, tag_id):
    tags = gray(tag_image(dict_name, tag_id)).find_apriltags(families=flag)
    assert [(t.id(), t.family(), t.hamming()) for t in tags] == [(tag_id, flag, 0)]
    t = tags[0]
    # the tag spans x 48..111, y 28..91: corners within a pixel of the outer black border
    xs = sorted(p[0] for p in t.corners())
    ys = sorted(p[1] for p in t.corners())
    assert abs(xs[0] - 48) <= 1 and abs(xs[-1] - 112) <= 1 and abs(ys[0] - 28) <= 1 and abs(ys[-1] - 92) <= 1
    assert (t.cx(), t.cy()) in {(79, 59), (80, 60), (79, 60), (80, 59)}
    assert 0 < t.decision_margin() <= 1 and t.goodness() == 0.0
    assert t.rect() == (t.x(), t.y(), t.w(), t.h()) and t[4] == tag_id and len(t) == 18


def test_other_families_ignore_the_tag_and_default_is_36h11():
    a = tag_image("DICT_APRILTAG_36h11", 3)
    assert [t.id() for t in gray(a).find_apriltags()] == [3]
    assert gray(a).find_apriltags(families=image.TAG16H5) == []
    both = gray(a).find_apriltags(families=image.TAG16H5 | image.TAG36H11)
    assert [(t.id(), t.family()) for t in both] == [(3, image.TAG36H11)]


def test_rotation_follows_the_tag_in_quarter_turns():
    a = tag_image("DICT_APRILTAG_36h11", 5)
    base = gray(a).find_apriltags()[0].rotation()
    for k in (1, 2, 3):
        r = gray(np.rot90(a, k)).find_apriltags()[0].rotation()
        # np.rot90 turns the picture a quarter counter-clockwise: the reported angle grows by k * pi/2
        assert abs(((r - base) - k * math.pi / 2 + math.pi) % (2 * math.pi) - math.pi) < 0.02


def test_pose_puts_the_tag_in_front_of_the_camera():
    t = gray(tag_image("DICT_APRILTAG_36h11", 1)).find_apriltags()[0]
    assert t.z_translation() < 0  # the camera looks down -Z
    assert abs(t.x_translation()) < 0.3 and abs(t.y_translation()) < 0.3  # tag centred in the image
    assert abs(t.z_rotation() - t.rotation()) == 0
    small = gray(tag_image("DICT_APRILTAG_36h11", 1, side=40, at=(60, 40))).find_apriltags()[0]
    assert small.z_translation() < t.z_translation()  # smaller: farther away


def test_arguments_and_limits():
    a = tag_image("DICT_APRILTAG_36h11", 2, size=(320, 240), at=(100, 80))
    with pytest.raises(OSError, match="64K pixels"):
        gray(a).find_apriltags()
    assert [t.id() for t in gray(a).find_apriltags(roi=(80, 60, 120, 120))] == [2]
    assert gray(a).find_apriltags(roi=(0, 0, 3, 3)) == []
    assert gray(a).find_apriltags(roi=(80, 60, 120, 120), families=image.TAG25H7) == []  # (generated table)
    assert gray(a).find_apriltags(roi=(80, 60, 120, 120), families=image.ARTOOLKIT) == []
    rgb = image.Image(size=(160, 120))
    rgb._pix[...] = gray(tag_image("DICT_APRILTAG_36h11", 4)).to_rgb565(True)._pix
    assert [t.id() for t in rgb.find_apriltags()] == [4]


def test_quick_decode_corrects_up_to_the_family_threshold():
    codes = _apriltag.family_codes(image.TAG36H11)
    code = int(codes[9])
    flipped = code ^ 0b1011  # 3 bit errors: 36h11 corrects up to 11 - 6 - 1 = 4
    assert _apriltag.quick_decode(image.TAG36H11, 6, 11, flipped) == (9, 3, 0)
    rotated = _apriltag._rotate90(code, 6)
    # a code read a quarter turn off decodes after three more quarter turns
    assert _apriltag.quick_decode(image.TAG36H11, 6, 11, rotated)[::2] == (9, 3)


def _code_image(code: int, d: int, side=64, size=(160, 120), at=(48, 28)):
    """A tag drawn from a firmware code: row-major bits turned 180 degrees (the dictionaries' view),
    1 = white, inside a one-module black border, on white."""
    bits = np.array([(code >> (d * d - 1 - i)) & 1 for i in range(d * d)], np.uint8).reshape(d, d)
    grid = np.zeros((d + 2, d + 2), np.uint8)
    grid[1:-1, 1:-1] = np.rot90(bits, 2) * 255
    m = cv2.resize(grid, (side, side), interpolation=cv2.INTER_NEAREST)
    a = np.full((size[1], size[0]), 255, np.uint8)
    a[at[1]:at[1] + side, at[0]:at[0] + side] = m
    return a


@pytest.mark.parametrize("tag_id", [0, 77, 511])
def test_artoolkit_markers_decode(tag_id):
    code = int(_apriltag.family_codes(image.ARTOOLKIT)[tag_id])
    tags = gray(_code_image(code, 6)).find_apriltags(families=image.ARTOOLKIT)
    assert [(t.id(), t.family(), t.hamming()) for t in tags] == [(tag_id, image.ARTOOLKIT, 0)]


def test_generated_artoolkit_codes_are_the_firmwares():
    """The 512 ARToolKit codes from the four field masks equal apriltag.c's table (read from the mirror)."""
    import re

    from firmware_c import IMG_DIR, firmware_source, have_firmware_c

    ours = [int(c) for c in _apriltag.family_codes(image.ARTOOLKIT)]
    assert len(ours) == 512 and len(set(ours)) == 512 and ours[0] == 0x6DC269C27
    if not have_firmware_c():
        pytest.skip("the MaixPy-v1 mirror is only on developer machines")
    text = firmware_source(f"{IMG_DIR}/apriltag.c")
    start = text.index("const apriltag_family_t artoolkit = {")
    body = text[start:text.index("};", start)]
    assert re.search(r"\.d = (\d+)", body).group(1) == "6" and re.search(r"\.h = (\d+)", body).group(1) == "7"
    assert [int(v, 16) for v in re.findall(r"0x([0-9a-fA-F]+)UL", body)] == ours
