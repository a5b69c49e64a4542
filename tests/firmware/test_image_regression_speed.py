"""get_regression(robust=True): the compiled pair-difference histogram (``_regression._pair_hist``)
equals the direct count over all pairs i < j and the chunked correlation form (the path without
numba), on random coordinate sequences split in blocks, short and long (several chunks)."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _regression


def _direct(values, size):
    seq = np.concatenate(values)
    hist = np.zeros(2 * size, np.int64)
    for i in range(seq.size):
        for j in range(i + 1, seq.size):
            hist[seq[i] - seq[j] + size] += 1
    return hist


@pytest.mark.parametrize("n", [0, 1, 2, 7, 300, 1300])
def test_the_pair_histogram_kernel_counts_every_pair(n, monkeypatch):
    rng = np.random.default_rng(n)
    size = int(rng.integers(2, 400))
    seq = rng.integers(0, size, n)
    cuts = np.sort(rng.integers(0, n + 1, 3))
    values = np.split(seq, cuts)
    fast = _regression._pair_differences(values, size)
    with monkeypatch.context() as m:
        m.setattr(_regression, "compiled", lambda: False)
        plain = _regression._pair_differences(values, size)
    assert np.array_equal(fast, plain)
    if n <= 300:
        assert np.array_equal(fast, _direct(values, size) if n else np.zeros(2 * size, np.int64))
    twin = np.zeros(2 * size, np.int64)
    if n >= 2:
        _regression._pair_hist.__wrapped__(seq.astype(np.int64), size, np.zeros(size, np.int64), twin)
        assert np.array_equal(twin, fast)
