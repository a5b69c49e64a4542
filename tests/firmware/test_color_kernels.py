"""The per-frame colour conversions' kernels (``_color_kernels``) give the numpy forms' bytes
(``rgb2rgb_tab.c``'s tables): every RGB565 value, every 8-bit value of each channel, compiled and
as their Python twins, and through ``_color``'s functions on frames of several shapes."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware.image import _color, _color_kernels

ALL565 = np.arange(1 << 16, dtype=np.uint16)
RUNS = {"compiled": lambda k: k, "twin": lambda k: k.__wrapped__}


def _numpy_planes(p):
    return np.stack([np.take(_color._PLANES_OF_565[c], p.astype(np.intp)) for c in range(3)])


def _every_channel_value():
    """(65536, 3) uint8 rows: each channel takes all 256 values against all others' (a Latin square)."""
    a, b = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    return np.stack([a, b, (a + 3 * b) % 256], -1).reshape(-1, 3).astype(np.uint8)


@pytest.mark.parametrize("run", RUNS)
def test_rgb565_expansions_equal_the_tables(run):
    pick = RUNS[run]
    planes = np.empty((3, ALL565.size), np.uint8)
    pick(_color_kernels.planes_of_565)(ALL565, planes)
    assert np.array_equal(planes, _numpy_planes(ALL565))
    rgb = np.empty((ALL565.size, 3), np.uint8)
    pick(_color_kernels.rgb_of_565)(ALL565, _color.T5TO8, _color.T6TO8, rgb)
    assert np.array_equal(rgb, np.take(_color._RGB_OF_565, ALL565, axis=0))


@pytest.mark.parametrize("run", RUNS)
def test_rgb888_packing_equals_the_tables(run):
    rgb = _every_channel_value()
    out = np.empty(len(rgb), np.uint16)
    RUNS[run](_color_kernels.pack_rgb888)(rgb, _color._R565, _color._G565, _color._B565, out)
    want = _color._R565[rgb[:, 0]] | _color._G565[rgb[:, 1]] | _color._B565[rgb[:, 2]]
    assert np.array_equal(out, want)


@pytest.mark.parametrize("shape", [(240, 320), (7, 9), (1, 5000), (64, 64)])
def test_color_functions_give_the_same_bytes_served_or_not(shape, monkeypatch):
    """_color's functions (which take the kernel when served, numpy otherwise; small arrays always
    numpy) on frames, strided views and tiny arrays."""
    rng = np.random.default_rng(sum(shape))
    rgb = rng.integers(0, 256, shape + (3,), dtype=np.uint8)
    p = rng.integers(0, 1 << 16, shape, dtype=np.uint16)
    got = (_color.rgb888_to_565(rgb), _color.rgb565_to_888(p), _color.rgb565_to_planes(p),
           _color.rgb888_to_565(rgb[:, ::-1]), _color.rgb565_to_planes(p[:, ::2]))
    monkeypatch.setenv("MAIXEMU_NO_JIT", "1")  # the numpy forms
    want = (_color.rgb888_to_565(rgb), _color.rgb565_to_888(p), _color.rgb565_to_planes(p),
            _color.rgb888_to_565(rgb[:, ::-1]), _color.rgb565_to_planes(p[:, ::2]))
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert np.array_equal(want[2], _numpy_planes(p))
