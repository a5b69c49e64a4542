"""find_qrcodes' compiled kernels give the answers of the array code they replaced, bit for bit.

* ``_finder_candidates`` (every row's ``finder_scan`` run test at once) equals the per-row run
  lengths the scan used to compute with numpy (kept below), and its Python twin;
* ``_fitness`` (``fitness_all``'s perspective sampling) equals the numpy sampling through
  ``perspective_map_many`` it replaced, on random perspectives, extreme ones (overflow, NaN,
  division by zero) included, and its Python twin.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _qrcode
from maixemu.firmware.image._fmath import F


def _old_candidates(pixels):
    """The per-row finder scan the kernel replaced: (y, x, pb...) where the ratio test passes."""
    out = []
    for y in range(pixels.shape[0]):
        color = (pixels[y] != 0).astype(np.int8)
        trans = np.flatnonzero(color[1:] != color[:-1]) + 1
        if trans.size < 5:
            continue
        lengths = np.diff(np.concatenate([[0], trans]))
        for j in range(4, trans.size):
            x = int(trans[j])
            if color[x]:
                continue
            pb = [int(v) for v in lengths[j - 4:j + 1]]
            avg = (pb[0] + pb[1] + pb[3] + pb[4]) // 4
            err = avg * 3 // 4
            if all(check * avg - err <= pb[i] <= check * avg + err for i, check in enumerate((1, 1, 3, 1, 1))):
                out.append([y, x] + pb)
    return np.array(out, np.int64).reshape(-1, 7)


def _candidates(pixels, kernel):
    h, w = pixels.shape
    out = np.empty((h * (w // 2 + 1), 7), np.int64)
    return out[:kernel(pixels, out)]


def _finder_rows(rng, h, w):
    """Rows of random runs, with 1:1:3:1:1 patterns of several scales planted in some."""
    pix = np.zeros((h, w), np.uint8)
    for y in range(h):
        x, colour = 0, int(rng.integers(0, 2))
        while x < w:
            if rng.random() < 0.3:
                s = int(rng.integers(1, 6))
                for k, run in enumerate((1, 1, 3, 1, 1)):
                    n = max(1, run * s + int(rng.integers(-1, 2)))
                    pix[y, x:x + n] = 1 if k % 2 == 0 else 0
                    x += n
                colour = 0
            else:
                n = int(rng.integers(1, 9))
                pix[y, x:x + n] = colour * int(rng.integers(1, 5))  # region codes are black too
                x += n
                colour ^= 1
    return pix


@pytest.mark.parametrize("seed", range(4))
def test_the_finder_kernel_equals_the_per_row_scan(seed):
    rng = np.random.default_rng(seed)
    for _ in range(20):
        h, w = (int(v) for v in rng.integers(1, 80, 2))
        pix = _finder_rows(rng, h, w)
        old = _old_candidates(pix)
        assert np.array_equal(_candidates(pix, _qrcode._finder_candidates), old)
        assert np.array_equal(_candidates(pix, _qrcode._finder_candidates.__wrapped__), old)
    assert old.shape[0] > 0


def _old_fitness(pixels, c, gs):
    """``fitness_all`` as numpy sampling through perspective_map_many (what the kernel replaced)."""
    cells, weights = _qrcode.fitness_pattern(gs)
    off = np.array([0.3, 0.5, 0.7], F)
    us = (cells[:, 0:1].astype(F) + np.tile(off, 3)[None, :]).ravel()
    vs = (cells[:, 1:2].astype(F) + np.repeat(off, 3)[None, :]).ravel()
    px, py = _qrcode.perspective_map_many(c, us.astype(np.float64), vs.astype(np.float64))
    h, w = pixels.shape
    inside = (py >= 0) & (py < h) & (px >= 0) & (px < w)
    vals = np.full(px.shape, -1, np.int64)
    vals[inside] = (pixels[py[inside], px[inside]] != 0).astype(np.int64)
    scores = np.where(vals < 0, 0, np.where(vals > 0, 1, -1)).reshape(-1, 9).sum(axis=1)
    return int((scores * weights).sum())


def _perspectives(rng):
    yield _qrcode.perspective_setup([(10, 12), (80, 15), (85, 90), (8, 86)], 18, 18)
    yield [F(v) for v in rng.normal(0, 4, 8)]
    yield [F(3.1), F(0.2), F(5.0), F(-0.1), F(2.9), F(7.0), F(0.0), F(0.0)]
    yield [F(1e30), F(-1e30), F(1e9), F(1e30), F(2.0), F(3e38), F(0.0), F(0.0)]  # overflow to inf
    yield [F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(-0.05), F(0.0)]  # den crosses zero
    yield [F(np.nan), F(1.0), F(0.0), F(1.0), F(np.inf), F(0.0), F(0.0), F(-np.inf)]
    yield [F(1.0), F(0.0), F(0.0), F(0.0), F(1.0), F(0.0), F(-2.0), F(0.0)]  # den exactly 0 at u = 0.5
    yield [F(-1.0), F(0.0), F(0.0), F(0.0), F(0.0), F(-1.0), F(-2.0), F(0.0)]  # -0/0 and -1/0


@pytest.mark.parametrize("gs", [21, 25, 45, 97, 177])
def test_the_fitness_kernel_equals_the_array_sampling(gs):
    rng = np.random.default_rng(gs)
    pixels = (rng.random((120, 160)) < 0.5).astype(np.uint8) * rng.integers(1, 4, (120, 160)).astype(np.uint8)
    cells, weights = _qrcode.fitness_pattern(gs)
    for c in _perspectives(rng):
        c32 = np.array(c, F)
        old = _old_fitness(pixels, list(c32), gs)
        with np.errstate(all="ignore"):
            assert _qrcode._fitness(c32, cells, weights, pixels, _qrcode.FITNESS_OFFSETS) == old
            assert _qrcode._fitness.__wrapped__(c32, cells, weights, pixels, _qrcode.FITNESS_OFFSETS) == old


def test_the_fitness_pattern_counts_the_cells_fitness_all_scores():
    cells, weights = _qrcode.fitness_pattern(25)  # version 2: timing 2 x 11, 3 finders, 1 alignment
    finder = 1 + 8 + 16 + 24
    assert cells.shape == (2 * 11 + 3 * finder + (1 + 8 + 16), 2) and weights.shape == (cells.shape[0],)
    assert not cells.flags.writeable
