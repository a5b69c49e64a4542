"""find_lines / find_circles: the compiled Hough kernels give the array path's answers, bit for bit.

``_line_votes`` (Sobel, ``fast_atan2f`` in degrees, table rho, magnitude, votes) and
``_circle_radius`` (both votes of every edge point, then the 3x3 peaks) against the numpy forms
they replaced (the path without numba), on random scenes with random ROIs, strides, thresholds and
radii; and ``_line_votes``' Python twin against its compiled self.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _fmath as fm
from maixemu.firmware.image import _hough


def _scene(rng, w, h):
    import cv2

    img = rng.integers(0, 40, (h, w)).astype(np.uint8)
    for _ in range(int(rng.integers(1, 6))):
        c = int(rng.integers(60, 256))
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        if rng.random() < 0.5:
            cv2.circle(img, (x, y), int(rng.integers(3, max(4, min(w, h) // 2))), c, int(rng.choice([-1, 2])))
        else:
            cv2.line(img, (x, y), (int(rng.integers(0, w)), int(rng.integers(0, h))), c, int(rng.integers(1, 4)))
    return img


def _both(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(_hough, "compiled", lambda: False)
        plain = fn(*args)
    return fn(*args), plain


@pytest.mark.parametrize("seed", range(4))
def test_find_lines_kernel_equals_the_array_votes(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    for _ in range(8):
        w, h = int(rng.integers(5, 130)), int(rng.integers(5, 100))
        gray = _scene(rng, w, h)
        rx, ry = int(rng.integers(0, w - 3)), int(rng.integers(0, h - 3))
        roi = (rx, ry, int(rng.integers(3, w - rx + 1)), int(rng.integers(3, h - ry + 1)))
        xs, ys = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        args = (gray, roi, xs, ys, int(rng.integers(100, 3000)), 25, 25)
        fast, plain = _both(monkeypatch, _hough.find_lines, *args)
        assert fast == plain
        fast, plain = _both(monkeypatch, lambda *a: _hough.find_lines(*a, row_stride=ys), *args)  # bitmap rows
        assert fast == plain


def test_the_line_votes_twin_equals_the_kernel():
    rng = np.random.default_rng(9)
    gray = _scene(rng, 40, 30)
    accs = []
    for fn in (_hough._line_votes, _hough._line_votes.__wrapped__):
        acc = np.zeros((2 * 50 + 1, 1 + 180 + 1), np.int64)
        fn(gray, 0, 0, 40, 30, 1, 1, 1, 50, fm.COS, fm.SIN, acc)
        accs.append(acc)
    assert np.array_equal(accs[0], accs[1]) and accs[0].sum() > 0


@pytest.mark.parametrize("seed", range(4))
def test_find_circles_kernel_equals_the_array_votes(seed, monkeypatch):
    rng = np.random.default_rng(100 + seed)
    for _ in range(6):
        w, h = int(rng.integers(10, 110)), int(rng.integers(10, 90))
        gray = _scene(rng, w, h)
        rx, ry = int(rng.integers(0, w - 8)), int(rng.integers(0, h - 8))
        roi = (rx, ry, int(rng.integers(8, w - rx + 1)), int(rng.integers(8, h - ry + 1)))
        half = min(roi[2] // 2, roi[3] // 2)
        args = (gray, roi, int(rng.integers(1, 3)), int(rng.integers(1, 3)), int(rng.integers(0, 3000)),
                10, 10, 10, 2, half, int(rng.integers(1, 4)))
        fast, plain = _both(monkeypatch, _hough.find_circles, *args)
        assert fast == plain


def test_a_ring_is_found_alike_by_both_paths(monkeypatch):
    import cv2

    gray = np.full((80, 100), 20, np.uint8)
    cv2.circle(gray, (50, 40), 22, 220, 2)
    fast, plain = _both(monkeypatch, _hough.find_circles, gray, (0, 0, 100, 80), 2, 1, 1500, 10, 10, 10, 2, 40, 2)
    assert fast == plain and fast
