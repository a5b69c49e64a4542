"""find_line_segments' compiled ``merge_alot`` (``_line_merge``) merges as the Python passes do.

Random sets of lines (short, long, zero-length, nearly parallel, crossing) merged with several
distances and angle limits: the kernel, its Python twin and ``_lsd.merge_alot``'s Python passes give
the same lines in the same order.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _line_merge, _lsd


def _random_lines(rng, n):
    out = []
    for _ in range(n):
        x1, y1 = (int(v) for v in rng.integers(0, 120, 2))
        if rng.random() < 0.1:
            x2, y2 = x1, y1  # a zero-length segment (LSD reports vertical steps so)
        else:
            length = int(rng.integers(1, 60))
            a = rng.choice([0.0, np.pi / 2, rng.uniform(0, np.pi)])
            x2, y2 = x1 + int(length * np.cos(a)), y1 + int(length * np.sin(a))
        theta = int(rng.integers(0, 180))
        out.append(dict(x1=x1, y1=y1, x2=x2, y2=y2, magnitude=int(rng.integers(0, 50)), theta=theta,
                        rho=int(rng.integers(-100, 200))))
    return out


def _python(lines, threshold, theta_threshold, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(_lsd, "compiled", lambda: False)
        return _lsd.merge_alot([dict(d) for d in lines], threshold, theta_threshold)


def _twin(lines, threshold, theta_threshold):
    rows = np.array([[d[k] for k in _line_merge.FIELDS] for d in lines], np.int64)
    n = rows.shape[0]
    items = np.arange(n, dtype=np.int64)
    count = _line_merge._merge_passes.__wrapped__(rows, n, threshold, theta_threshold, items,
                                                  np.empty(n, np.int64), np.empty(n, np.int64))
    return [dict(zip(_line_merge.FIELDS, rows[i].tolist())) for i in items[:count].tolist()]


@pytest.mark.parametrize("seed", range(5))
def test_the_compiled_merge_equals_the_python_passes(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    merged_some = False
    for _ in range(15):
        lines = _random_lines(rng, int(rng.integers(1, 40)))
        threshold, theta_threshold = int(rng.integers(1, 20)), int(rng.integers(0, 90))
        expected = _python(lines, threshold, theta_threshold, monkeypatch)
        assert _lsd.merge_alot([dict(d) for d in lines], threshold, theta_threshold) == expected
        assert _twin(lines, threshold, theta_threshold) == expected
        merged_some |= len(expected) < len(lines)
    assert merged_some


def test_the_zero_length_division_gives_the_risc_v_result_in_the_kernel():
    line = dict(x1=10, y1=10, x2=10, y2=10, magnitude=5, theta=0, rho=10)
    other = dict(x1=11, y1=10, x2=30, y2=10, magnitude=7, theta=0, rho=11)
    merged = _lsd.merge_alot([line, other], 10, 25)  # worked by hand in test_image_lsd.py
    assert [(m["x1"], m["y1"], m["x2"], m["y2"]) for m in merged] == [(10, 11, 30, 9)]
