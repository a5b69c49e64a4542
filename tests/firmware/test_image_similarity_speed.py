"""get_similarity: the compiled block loop (``_features._similarity_blocks``) gives the array form's
float32 mean, stdev, min and max, bit for bit, on random and flat images of sizes that are and are
not multiples of 8 (partial blocks, the firmware's ``block + i`` columns), gray, bitmap and L ranges."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _features


def _both(monkeypatch, a, b, cmax):
    with monkeypatch.context() as m:
        m.setattr(_features, "compiled", lambda: False)
        plain = tuple(_features.similarity(a, b, cmax)._v)
    fast = tuple(_features.similarity(a, b, cmax)._v)
    return np.array(fast, np.float32), np.array(plain, np.float32)


@pytest.mark.parametrize("cmax", [255, 100, 1])
def test_the_block_kernel_equals_the_array_form(cmax, monkeypatch):
    rng = np.random.default_rng(cmax)
    for _ in range(20):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        a = rng.integers(0, cmax + 1, (h, w))
        b = np.clip(a + rng.integers(-20, 21, (h, w)), 0, cmax) if rng.random() < 0.5 else rng.integers(0, cmax + 1, (h, w))
        fast, plain = _both(monkeypatch, a, b, cmax)
        assert np.array_equal(fast.view(np.uint32), plain.view(np.uint32))
    flat = np.zeros((16, 16), np.int64)  # 0/0 blocks: NaN wins min and max
    fast, plain = _both(monkeypatch, flat, flat, cmax)
    assert np.array_equal(fast.view(np.uint32), plain.view(np.uint32))
