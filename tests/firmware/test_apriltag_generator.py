"""The AprilTag family generator (maixemu/tools/apriltag_families.py) against published tables, and
the tag25h7 table it produced (maixemu/firmware/image/_tag25h7.py) against the firmware's."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _apriltag, _tag25h7
from maixemu.tools import apriltag_families as gen

from _shared import REPO_ROOT

MIRROR = REPO_ROOT.parent / ".mirror" / "sipeed+MaixPy-v1" / "repo"
APRILTAG_C = "components/micropython/port/src/omv/img/apriltag.c"


def test_java_random_and_rotation():
    assert gen.java_random_next_long(0) == -4962768465676381896  # new Random(0).nextLong()
    rng = np.random.default_rng(0)
    for d in (4, 5, 6):
        for w in rng.integers(0, 1 << (d * d), 20):
            assert gen.rotate90(int(w), d) == _apriltag._rotate90(int(w), d)
            w4 = int(w)
            for _ in range(4):
                w4 = gen.rotate90(w4, d)
            assert w4 == int(w)


def test_greedy_rectangle_complexity_by_hand():
    assert gen.complexity(0, 4) == 1 and gen.complexity(0xFFFF, 4) == 1
    assert gen.complexity(1 << 5, 4) == 2  # one set cell: background, then the cell
    assert gen.complexity(0x00FF, 4) == 2  # two rows set: a 4x4 then a 2x4 rectangle
    assert gen.complexity(0b1010_0101_1010_0101, 4) > 4  # a checkerboard needs many


def test_tag16h5_is_regenerated_code_for_code():
    assert gen.generate(16, 5) == [int(c) for c in _apriltag.family_codes(image.TAG16H5)]


@pytest.mark.parametrize("flag, nbits, h", [(image.TAG25H9, 25, 9), (image.TAG36H10, 36, 10),
                                            (image.TAG36H11, 36, 11)])
def test_larger_families_start_with_the_published_codes(flag, nbits, h):
    # the whole search is 2**nbits candidates; the first codes are found early
    n = 8
    assert gen.generate(nbits, h, max_codes=n) == [int(c) for c in _apriltag.family_codes(flag)[:n]]


def test_the_committed_tag25h7_table_is_the_generators():
    codes = list(_tag25h7.CODES)
    assert len(codes) == 242 and gen.generate(25, 7, max_codes=12) == codes[:12]
    # every code passes the generator's tests against all the others
    rot = []
    for c in codes:
        w = c
        for _ in range(4):
            rot.append(w)
            w = gen.rotate90(w, 5)
    r = np.array(rot, np.uint64)
    for i, c in enumerate(codes):
        others = np.delete(r, range(4 * i, 4 * i + 4))
        assert np.bitwise_count(others ^ np.uint64(c)).min() >= 7
        assert gen.complexity(c, 5) >= 8


def _firmware_codes(family: str) -> list[int]:
    try:
        text = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{APRILTAG_C}"], capture_output=True,
                              text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("the MaixPy-v1 mirror is not here")
    block = text[text.index(f"apriltag_family_t {family} = {{"):]
    block = block[block.index(".codes"):block.index("}")]
    return [int(v, 16) for v in re.findall(r"0x([0-9a-fA-F]+)UL", block)]


def test_tag25h7_equals_the_firmwares_table():
    fw = _firmware_codes("tag25h7")
    assert len(fw) == 242 and fw[0] == _tag25h7.CODES[0] and fw[-1] == _tag25h7.CODES[-1]
    assert list(_tag25h7.CODES) == fw


def _render(code: int, d: int, cell: int = 9, size=(160, 120), at=(48, 28)) -> np.ndarray:
    """A tag drawn as OpenCV draws its AprilTag markers: the firmware's row-major code turned 180
    degrees (see ``_apriltag.family_codes``), white = 1, inside a one-cell black border."""
    bits = np.array([(code >> (d * d - 1 - i)) & 1 for i in range(d * d)], np.uint8).reshape(d, d)
    cells = np.zeros((d + 2, d + 2), np.uint8)
    cells[1:-1, 1:-1] = np.rot90(bits, 2) * 255
    tag = np.kron(cells, np.ones((cell, cell), np.uint8))
    a = np.full((size[1], size[0]), 255, np.uint8)
    a[at[1]:at[1] + tag.shape[0], at[0]:at[0] + tag.shape[1]] = tag
    return a


@pytest.mark.parametrize("tag_id", [0, 100, 241])
def test_find_apriltags_decodes_tag25h7(tag_id):
    a = _render(_tag25h7.CODES[tag_id], 5)
    img = image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a))
    tags = img.find_apriltags(families=image.TAG25H7)
    assert [(t.id(), t.family(), t.hamming()) for t in tags] == [(tag_id, image.TAG25H7, 0)]
