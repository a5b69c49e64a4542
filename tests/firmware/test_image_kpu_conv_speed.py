"""conv3 / the KPU blur: the compiled accumulation (``_k210._conv3_planes``) gives the array form's
bytes, for one plane (gray) and three (RGB), kernels with positive, negative and mixed weights, and
random and extreme pixels; and its Python twin the kernel's."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _k210

KERNELS = [[-1, -1, -1, -1, 8, -1, -1, -1, -1], [1, 2, 1, 2, 4, 2, 1, 2, 1], [0, 0, 0, 0, 1, 0, 0, 0, 0],
           [0.5, -2.25, 3, 1, -7, 0.125, 2, 2, -1], [-3, -1, 0, -1, -1, -2, 0, -5, -1]]


def _conv(monkeypatch, planes, krn, use_kernel):
    with monkeypatch.context() as m:
        m.setattr(_k210, "compiled", lambda: use_kernel)
        return _k210._kpu_conv3(planes, krn)


@pytest.mark.parametrize("krn", KERNELS)
def test_the_compiled_conv_gives_the_array_forms_bytes(krn, monkeypatch):
    rng = np.random.default_rng(len(str(krn)))
    for c in (1, 3):
        for planes in (rng.integers(0, 256, (c, 17, 23)),  # int64 planes, as conv3 and kpu_blur pass them
                       rng.choice(np.array([0, 255]), (c, 9, 31)),
                       np.full((c, 5, 6), 255, np.int64)):
            assert np.array_equal(_conv(monkeypatch, planes, krn, True), _conv(monkeypatch, planes, krn, False))


def test_the_twin_equals_the_kernel(monkeypatch):
    captured = {}
    real = _k210._conv3_planes

    class Spy:
        @staticmethod
        def attempt(*args):
            captured["args"] = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
            return real.attempt(*args)

    rng = np.random.default_rng(1)
    planes = rng.integers(0, 256, (3, 12, 14))
    with monkeypatch.context() as m:
        m.setattr(_k210, "compiled", lambda: True)
        m.setattr(_k210, "_conv3_planes", Spy)
        fast = _k210._kpu_conv3(planes, KERNELS[0])
    args = captured["args"]
    out = np.empty_like(fast)
    _k210._conv3_planes.__wrapped__(*args[:-1], out)
    assert np.array_equal(out, fast)


def test_the_compiled_pixel_pack_gives_the_shift_formulas_words():
    """conv3's RGB565 words from its planes (plain shifts, byte-swapped) in one compiled pass equal
    the array formula for every byte value of each plane."""
    v = np.arange(256, dtype=np.uint8)
    a, b = np.meshgrid(v, v, indexing="ij")
    planes = np.stack([a, b, np.roll(a, 7, axis=1)])
    r, g, b = (planes[i].astype(np.uint16) for i in range(3))
    want = ((r >> 3) << 3) + (g >> 5) + ((b >> 3) << 8) + ((g & 0x1C) << 11)
    for run in (_k210._pack_shifted, _k210._pack_shifted.__wrapped__):
        pix = np.zeros((256, 256), np.uint16)
        run(np.ascontiguousarray(planes), pix)
        assert np.array_equal(pix, want)
