"""find_features: the compiled cascade (``_haar._run_cascade``) passes the windows the array form passes.

Each window's stages run one after another in the kernel (leaving at the first failed one); the
array form runs every stage on all windows still alive. Both on the firmware's frontalface and eye
cascades, random and photographic integral images, and the whole detection on photos, with and
without numba.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _haar


@pytest.fixture(scope="module", params=["frontalface", "eye"])
def cascade(request):
    return _haar.builtin(request.param)


def _integrals(g):
    g = g.astype(np.int64)
    return _haar._integral(g), _haar._integral(g * g)


def test_the_kernel_passes_the_windows_the_stages_pass(cascade):
    rng = np.random.default_rng(3)
    win_w, win_h = cascade.window
    for trial in range(6):
        h, w = int(rng.integers(win_h + 2, 90)), int(rng.integers(win_w + 2, 120))
        if trial % 2:
            g = rng.integers(0, 256, (h, w))
        else:  # smooth blobs and edges, where stages pass further
            yy, xx = np.mgrid[0:h, 0:w]
            g = (128 + 100 * np.sin(xx / rng.uniform(2, 9)) * np.cos(yy / rng.uniform(2, 9))).astype(np.int64)
        isum, isq = _integrals(g)
        ys, xs = np.meshgrid(np.arange(0, h - win_h, 2), np.arange(0, w - win_w, 2), indexing="ij")
        ys, xs = ys.ravel(), xs.ravel()
        for n_stages in (cascade.n_stages, 3):
            for thr in (np.float32(0.5), np.float32(0.1), np.float32(-1.0)):
                expected = _haar._windows(cascade, n_stages, isum, isq, ys, xs, win_w * win_h, thr)
                assert np.array_equal(_haar._cascade_windows(cascade, n_stages, isum, isq, ys, xs, win_w * win_h, thr),
                                      expected)
                twin = np.zeros(xs.size, np.bool_)
                _haar._run_cascade.__wrapped__(isum, isq, ys, xs, win_w * win_h, thr, win_w, win_h, n_stages,
                                               cascade.stages, cascade.stage_thresh, cascade.tree_thresh,
                                               cascade.alpha1, cascade.alpha2, cascade.num_rects, cascade.first_rect,
                                               cascade.weights, cascade.rects, twin)
                assert np.array_equal(twin, expected)


def test_face_detection_is_the_same_with_and_without_the_kernel(monkeypatch):
    from _shared import shared_path

    from PIL import Image as PILImage

    face = image.HaarCascade("frontalface", stages=25)
    found = 0
    for name in ("face_21.jpg", "face_22.jpg", "face_group.jpg"):
        path = shared_path("images", name)
        if not path.is_file():
            pytest.skip(f"{path} not found (../shared is absent)")
        rgb = np.asarray(PILImage.open(path).convert("RGB").resize((320, 240)))
        img = image.Image._from_rgb888(rgb, image.GRAYSCALE)
        for thr in (0.5, 0.75):
            fast = img.find_features(face, threshold=thr, scale_factor=1.25)
            with monkeypatch.context() as m:
                m.setattr(_haar, "compiled", lambda: False)
                plain = img.find_features(face, threshold=thr, scale_factor=1.25)
            assert fast == plain
            found += len(fast)
    assert found


def test_a_cascade_whose_rectangles_leave_the_window_runs_the_array_form(monkeypatch):
    c = _haar.builtin("eye")
    bad = _haar.Cascade(c.window, list(c.stages), c.stage_thresh, c.tree_thresh, c.alpha1, c.alpha2,
                        c.num_rects, c.weights, c.rects.copy())
    bad.rects[0] = (c.window[0] - 2, 0, 5, 3)  # past the right edge of the window
    called = []
    monkeypatch.setattr(_haar, "_run_cascade", lambda *a: called.append(1))
    rng = np.random.default_rng(0)
    isum, isq = _integrals(rng.integers(0, 256, (60, 60)))
    ys, xs = np.zeros(4, np.int64), np.arange(4, dtype=np.int64)
    expected = _haar._windows(bad, bad.n_stages, isum, isq, ys, xs, 400, np.float32(0.5))
    assert np.array_equal(_haar._cascade_windows(bad, bad.n_stages, isum, isq, ys, xs, 400, np.float32(0.5)), expected)
    assert not called
