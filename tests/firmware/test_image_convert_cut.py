"""py_image.c's to_grayscale / to_rgb565 / cut rules."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat


def gray(a):
    return image.Image._wrap(pixformat.GRAYSCALE, np.asarray(a, np.uint8).copy())


def test_gray_to_rgb565_needs_a_copy():
    g = gray([[1, 2]])
    with pytest.raises(OSError, match="Can't convert to rgb565 in place!"):
        g.to_rgb565()
    c = g.to_rgb565(copy=True)
    assert c.format() == pixformat.RGB565 and g.format() == pixformat.GRAYSCALE
    assert g.to_grayscale() is not None and g.format() == pixformat.GRAYSCALE


def test_cut_reads_the_flat_buffer():
    a = np.arange(20, dtype=np.uint8).reshape(4, 5)
    out = gray(a).cut(-2, 1, 4, 2)
    # rows 1..2, columns -2..1 by flat index row*5 + col: -2, -1 read the end of the row above
    assert out._pix.tolist() == [[3, 4, 5, 6], [8, 9, 10, 11]]
    clipped = gray(a).cut(3, 3, 4, 3)
    assert clipped._pix.tolist() == [[18, 19, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]
    assert gray(a).cut(0, 0, 5, 4)._ai_array() is None
