"""Regressions found by a differential campaign against the firmware's own imlib C.

Each expected value below was computed by MaixPy-v1 d8901fd's ``omv/img/*.c`` compiled as the
firmware is (gnu11 -Os -ffast-math -fsingle-precision-constant -ffloat-store -funsigned-char;
the FMA and the no-FMA builds agree on every value here unless a test says otherwise) and called on
the input written next to it. They are literals, never maixemu's own output.
"""

from __future__ import annotations

import numpy as np

from maixemu.firmware import image, pixformat


def gray(rows):
    return image.Image._wrap(pixformat.GRAYSCALE, np.asarray(rows, np.uint8).copy())


def rgb(rows):
    return image.Image._wrap(pixformat.RGB565, np.asarray(rows, np.uint16).copy())


def test_mul_invert_with_black_keeps_the_pixels_as_the_reassociated_float_code_does():
    # from the firmware's C (harness build, both flag sets) on gray [1, 23, 45, 62, 83, 103] * black:
    # -ffast-math turns (S-a)*(S-b)*(1/S) into (S-a)*((S-b)*(1/S)), exact here; the literal
    # left-to-right product gave 0, 22, 44, 61, 82, 102
    img = gray([[1, 23, 45, 62, 83, 103]])
    img.mul(gray([[0] * 6]), invert=True)
    assert img._pix.tolist() == [[1, 23, 45, 62, 83, 103]]
    # from the firmware's C on byte-swapped RGB565 0x2108, 0x0841, 0xef79, 0xd6b2 screened with black
    img = rgb([[0x2108, 0x0841, 0xEF79, 0xD6B2]])
    img.mul(rgb([[0] * 4]), invert=True)
    assert img._pix.tolist() == [[0x2108, 0x0841, 0xEF79, 0xD6B2]]


def test_rgb_to_lab_divides_by_the_white_point_as_reciprocal_products():
    # from the firmware's C (harness build, FMA and no-FMA agree) on these (r, g, b): -ffast-math
    # compiles ``/ 95.047f`` as ``* (1 / 95.047f)``; true division gave A -54, B 5, A 81, A -15
    assert image.rgb_to_lab((60, 190, 100)) == (69, -53, 40)
    assert image.rgb_to_lab((76, 152, 130)) == (59, -40, 6)
    assert image.rgb_to_lab((84, 32, 252)) == (37, 82, -95)
    assert image.rgb_to_lab((130, 166, 148)) == (66, -14, 4)
