"""find_line_segments' compiled detector (``_lsd_detect``) finds the segments the Python LSD finds, bit
for bit: on the bench photo and on random scenes (boxes, stripes, circles, noise) of several sizes.

The Python methods of ``_lsd._LSD`` call libm through ctypes; the kernel calls the same C functions
through numba. Both are run here on the same gradient field, so any difference of the two paths (an
operation reordered, a constant's rounding, a libm call that numba would lower differently) shows.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _lsd
from maixemu.firmware.image._jit import compiled

pytestmark = pytest.mark.skipif(not compiled(), reason="needs numba (the fast extra) and MAIXEMU_NO_JIT unset")


def _segments(gray: np.ndarray, use_kernel: bool, monkeypatch) -> np.ndarray:
    with monkeypatch.context() as m:
        m.setattr(_lsd, "compiled", lambda: use_kernel)
        with np.errstate(all="ignore"):
            segs = _lsd._LSD(np.ascontiguousarray(gray)).detect()
    return np.array(segs, np.float32).reshape(-1, 7)


def _scene(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    import cv2

    img = np.full((h, w), int(rng.integers(0, 256)), np.uint8)
    for _ in range(int(rng.integers(2, 8))):
        kind = int(rng.integers(0, 3))
        c = int(rng.integers(0, 256))
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        if kind == 0:
            cv2.rectangle(img, (x, y), (x + int(rng.integers(5, w)), y + int(rng.integers(5, h))), c, -1)
        elif kind == 1:
            cv2.line(img, (x, y), (int(rng.integers(0, w)), int(rng.integers(0, h))), c, int(rng.integers(1, 6)))
        else:
            cv2.circle(img, (x, y), int(rng.integers(3, max(4, min(w, h) // 2))), c, -1)
    noise = rng.integers(-int(rng.integers(0, 30)) - 1, int(rng.integers(0, 30)) + 1, img.shape)
    return np.clip(img.astype(np.int64) + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("seed", range(6))
def test_the_kernel_finds_the_python_segments_on_random_scenes(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    found = 0
    for _ in range(4):
        w, h = int(rng.integers(8, 120)), int(rng.integers(8, 90))
        gray = _scene(rng, w, h)
        fast, plain = _segments(gray, True, monkeypatch), _segments(gray, False, monkeypatch)
        assert fast.shape == plain.shape and np.array_equal(fast.view(np.uint32), plain.view(np.uint32))
        found += fast.shape[0]
    assert found > 0


def test_the_kernel_finds_the_python_segments_on_the_photo(monkeypatch):
    from _shared import shared_path

    path = shared_path("images", "dog.bmp")
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    from maixemu.firmware import image
    from maixemu.tools import image_bench

    gray = image.Image._from_rgb888(image_bench._read_rgb(path), image.GRAYSCALE)._pix
    fast, plain = _segments(gray, True, monkeypatch), _segments(gray, False, monkeypatch)
    assert fast.shape[0] > 50 and np.array_equal(fast.view(np.uint32), plain.view(np.uint32))


def test_the_seed_angle_tables_hold_libms_values_for_every_angle_of_the_image():
    from maixemu.firmware.image import _fmath as fm

    angles = np.array([[0, 90, 359, 360], [-512, -29335, 45, 0]], np.int64)
    cos0, sin0 = _lsd.seed_cos_sin(angles)
    for d in angles.ravel().tolist():
        r = np.float32(d) * _lsd.RAD
        assert cos0[d + 32768] == fm.cosf(r) and sin0[d + 32768] == fm.sinf(r)
