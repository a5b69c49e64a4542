"""find_keypoints: the compiled segment test (``_orb._segment_scores``) finds the corners and scores of
the array form (``_arcs`` over the ring samples), for FAST's 16-pixel and AGAST's 8-pixel rings, any
threshold (negative ones too), on random and smooth images, and the whole keypoint search alike."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _orb


def _corners(monkeypatch, img, roi, threshold, agast, use_kernel):
    with monkeypatch.context() as m:
        m.setattr(_orb, "compiled", lambda: use_kernel)
        return [a.tolist() for a in _orb._corners(img, roi, threshold, agast)]


@pytest.mark.parametrize("agast", [False, True])
def test_the_kernel_scores_the_corners_the_arrays_score(agast, monkeypatch):
    rng = np.random.default_rng(int(agast))
    for trial in range(12):
        h, w = int(rng.integers(8, 60)), int(rng.integers(8, 80))
        if trial % 2:
            img = rng.integers(0, 256, (h, w)).astype(np.uint8)
        else:
            yy, xx = np.mgrid[0:h, 0:w]
            img = ((xx // int(rng.integers(2, 9)) + yy // int(rng.integers(2, 9))) % 2 * 200 + 20).astype(np.uint8)
        roi = (0, 0, w, h)
        for threshold in (int(rng.integers(0, 60)), 0, -3, 255):
            expected = _corners(monkeypatch, img, roi, threshold, agast, False)
            assert _corners(monkeypatch, img, roi, threshold, agast, True) == expected


def test_the_python_twin_equals_the_kernel():
    rng = np.random.default_rng(5)
    p = rng.integers(0, 256, (20, 24)).astype(np.int64)
    rx = np.array([dx for dx, _ in _orb._FAST_RING], np.int64)
    ry = np.array([dy for _, dy in _orb._FAST_RING], np.int64)
    a, b = np.empty((14, 18), np.int64), np.empty((14, 18), np.int64)
    _orb._segment_scores(p, 3, 3, rx, ry, 9, 10, a)
    _orb._segment_scores.__wrapped__(p, 3, 3, rx, ry, 9, 10, b)
    assert np.array_equal(a, b) and (a > 10).any()


def test_find_keypoints_is_the_same_with_and_without_the_kernel(monkeypatch):
    from maixemu.tools import image_bench

    if not image_bench.PHOTO.is_file():
        pytest.skip(f"{image_bench.PHOTO} not found (../shared is absent)")
    img = image.Image._from_rgb888(image_bench._read_rgb(image_bench.PHOTO), image.GRAYSCALE)
    for detector in (image.CORNER_FAST, image.CORNER_AGAST):
        fast = img.find_keypoints(max_keypoints=50, corner_detector=detector)
        with monkeypatch.context() as m:
            m.setattr(_orb, "compiled", lambda: False)
            plain = img.find_keypoints(max_keypoints=50, corner_detector=detector)
        assert fast is not None and plain is not None
        assert [(k.x, k.y, k.score, k.octave, k.angle, k.desc) for k in fast._kpts] == \
            [(k.x, k.y, k.score, k.octave, k.angle, k.desc) for k in plain._kpts]
