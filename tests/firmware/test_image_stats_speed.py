"""get_histogram / get_statistics: counting raw pixel values once and then their bins gives the
histogram that binning every pixel gave (the replaced code, kept below), for gray, bitmap and RGB565
images, custom bin counts, ROIs, thresholds (a pixel inside two counted twice) and invert."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _stats
from maixemu.firmware.image._lab import lab_of, threshold_mask

F = np.float32


def _old_histogram(img, roi, thresholds, invert, counts):
    x, y, w, h = roi
    pix = img._pix[y:y + h, x:x + w]
    chans = [pix] if img._fmt in (pixformat.GRAYSCALE, pixformat.BINARY) else list(lab_of(pix))
    ranges = _stats._ranges_of(img._fmt)
    idx = [_stats._bin_index(c, lo, hi, n) for c, (lo, hi), n in zip(chans, ranges, counts)]
    weight = None
    if thresholds:
        weight = np.zeros(pix.shape, np.int64)
        for th in thresholds:
            weight += threshold_mask(pix, img._fmt, th, invert)
    scale = F(1) / F(w * h)
    out = []
    for i, n in zip(idx, counts):
        cnt = np.bincount(i.ravel(), weights=None if weight is None else weight.ravel(), minlength=n)
        cnt = cnt[:n].astype(np.int64)
        out.append((cnt.astype(np.uint32).astype(F) * scale).astype(F))
    return out


@pytest.mark.parametrize("fmt", [pixformat.RGB565, pixformat.GRAYSCALE, pixformat.BINARY])
def test_the_value_counts_give_the_per_pixel_histogram(fmt):
    rng = np.random.default_rng(fmt)
    for _ in range(25):
        h, w = (int(v) for v in rng.integers(1, 50, 2))
        if fmt == pixformat.RGB565:
            pix = rng.integers(0, 65536, (h, w)).astype(np.uint16)
            ths = [(20, 80, -30, 60, -128, 127), (0, 100, 0, 127, 0, 127)]
            counts = [int(v) for v in rng.integers(2, 300, 3)]
        else:
            top = 255 if fmt == pixformat.GRAYSCALE else 1
            pix = rng.integers(0, top + 1, (h, w)).astype(np.uint8)
            ths = [(0, 100), (50, 255)] if fmt == pixformat.GRAYSCALE else [(0, 0), (1, 1)]
            counts = [int(rng.integers(2, 300))]
        img = image.Image._wrap(fmt, pix)
        rx, ry = int(rng.integers(0, w)), int(rng.integers(0, h))
        roi = (rx, ry, int(rng.integers(1, w - rx + 1)), int(rng.integers(1, h - ry + 1)))
        for thresholds in ([], ths[:1], ths):
            invert = bool(rng.integers(0, 2))
            new = _stats._histogram(img, roi, thresholds, invert, counts)
            old = _old_histogram(img, roi, thresholds, invert, counts)
            assert all(np.array_equal(a.view(np.uint32), b.view(np.uint32)) for a, b in zip(new, old))
