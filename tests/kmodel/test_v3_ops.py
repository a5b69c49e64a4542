"""CPU-layer kernels of V3 against the device quirks kmodel-v3.md §3/§6 spells out."""

from __future__ import annotations

import ctypes
import ctypes.util
import struct
import sys

import numpy as np
import pytest

from maixemu.kmodel import load_kmodel
from maixemu.kmodel.build import V3Builder
from maixemu.kmodel.ops import activation, elementwise, fully_connected, layout, pool, quantize

F32 = np.float32


def test_expf_matches_the_c_library():
    """ops.activation.expf reproduces libm's table-driven expf bit for bit (glibc = reference)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("compares with glibc's expf")
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    libm.expf.restype = ctypes.c_float
    libm.expf.argtypes = [ctypes.c_float]
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-105, 90, 20000), rng.uniform(-2, 2, 20000),
                        [0.0, -0.0, 88.72, 88.73, -103.97, -104.0, -87.5, np.inf, -np.inf]]).astype(F32)
    got = activation.expf(x)
    want = np.array([libm.expf(float(v)) for v in x], dtype=F32)
    assert got.tobytes() == want.tobytes()
    # and it is not merely exp rounded once (which differs in about 1 of 2000 results)
    with np.errstate(over="ignore"):
        assert (np.exp(x.astype(np.float64)).astype(F32) != want).sum() > 0


def test_quantize_rounds_half_away_from_zero_and_clamps():
    x = np.array([0.5, 1.5, 2.5, -0.5, 254.5, 300.0, -7.0, np.nan], dtype=F32)
    assert quantize.quantize_v3(x, 1.0, 0.0).tolist() == [1, 2, 3, 0, 255, 255, 0, 0]
    # (x - bias) * (1/scale) in float32, not x / scale
    assert quantize.quantize_v3(np.array([0.3], F32), 0.1, 0.0).tolist() == [3]


def test_dequantize_is_two_float32_roundings():
    q = np.arange(256, dtype=np.uint8)
    scale, bias = F32(0.0173411), F32(-2.2196)
    got = quantize.dequantize_v3(q, float(scale), float(bias))
    want = (q.astype(F32) * scale) + bias
    assert got.tobytes() == want.tobytes()
    fused = (q.astype(np.float64) * np.float64(scale) + np.float64(bias)).astype(F32)
    assert (fused != want).any()  # the distinction matters for the reference bytes


def test_sdk_carry_shift_quirk():
    v = np.array([5, 6, 7, -5, -6, -7, -12], dtype=np.int64)
    # v >> (s-1) first; an odd result moves one step further from zero after halving, so a
    # negative odd intermediate is not rounded (kpu.c quirk): -6 >> 1 = -3 → (-3 >> 1) - 1 = -3
    assert elementwise.sdk_carry_shift(v, 2).tolist() == [1, 2, 2, -3, -3, -2, -3]
    assert elementwise.sdk_carry_shift(v, 0).tolist() == v.tolist()


def test_quantized_add_processes_multiples_of_eight():
    b = V3Builder(main_mem_usage=64)
    # FC identity feeds 3 floats, QUANTIZE to u8 at 40, QUANTIZED_ADD of 3 elements writes 8
    b.add_fully_connected(0, 16, np.eye(3, dtype=np.float32), np.zeros(3, np.float32))
    b.add_quantize(16, 40, 3, 1.0, 0.0)
    b.add_raw("QUANTIZED_ADD", struct.pack("<5I9i", 0, 40, 40, 48, 3, 0, 1, 0, 0, 1, 0, 10, 1, 0))
    b.add_output(48, 8)
    model = load_kmodel(b.build())
    out = model.run(np.array([1, 2, 3], np.float32))[0]
    assert out.dtype == np.uint8
    # a+b+10 for the 3 elements, and the 5 over-written ones (zeros + 10) as on the device
    assert out.tolist() == [12, 14, 16, 10, 10, 10, 10, 10]


def test_softmax_starts_its_max_at_flt_min():
    x = np.array([-50.0, -60.0, -70.0], dtype=F32)  # all negative: max stays FLT_MIN
    got = activation.softmax_v3(x)
    e = activation.expf(x - F32(np.finfo(F32).tiny))
    s = F32(0)
    for v in e:
        s = F32(s + v)
    assert got.tobytes() == (e / s).tobytes()


@pytest.mark.parametrize("compiled", [False, True])
def test_fully_connected_sums_in_order(compiled):
    """Left-to-right float32 sums of float32 products, on the numpy path and (``weights_t``
    given, the fast engine loaded) the compiled kernel."""
    weights_t = None
    if compiled:
        from maixemu.kmodel.kpu import fast

        if fast.kernels() is None:
            pytest.skip(fast.unavailable_reason() or "fast engine off")
    rng = np.random.default_rng(1)
    w = rng.standard_normal((3, 37)).astype(F32)
    x = rng.standard_normal(37).astype(F32)
    bias = rng.standard_normal(3).astype(F32)
    if compiled:
        weights_t = np.ascontiguousarray(w.T)
    got = fully_connected.fully_connected(x, w, bias, act=0, weights_t=weights_t)
    for o in range(3):
        acc = F32(0)
        for i in range(37):
            acc = F32(acc + F32(x[i] * w[o, i]))
        assert got[o] == F32(acc + bias[o])
    assert (fully_connected.fully_connected(x, w, bias, act=2, weights_t=weights_t) <= 6).all()
    assert (fully_connected.fully_connected(x, w, bias, act=1, weights_t=weights_t) >= 0).all()


def test_compiled_fully_connected_matches_numpy_bitwise():
    """Wide ranges, cancellation, infinities, NaN and signed zeros: the compiled sums are the
    numpy path's bits."""
    from maixemu.kmodel.kpu import fast

    if fast.kernels() is None:
        pytest.skip(fast.unavailable_reason() or "fast engine off")
    rng = np.random.default_rng(2)
    w = (rng.standard_normal((50, 300)) * np.exp(rng.uniform(-30, 30, (50, 300)))).astype(F32)
    w[3, :] = -0.0
    w[4, 7] = np.inf
    w[5, 9] = np.nan
    x = (rng.standard_normal(300) * 1e3).astype(F32)
    x[11] = -0.0
    bias = rng.standard_normal(50).astype(F32)
    bias[3] = -0.0
    for act in (0, 1, 2):
        want = fully_connected.fully_connected(x, w, bias, act=act)
        got = fully_connected.fully_connected(x, w, bias, act=act, weights_t=np.ascontiguousarray(w.T))
        assert got.tobytes() == want.tobytes()


def test_pools_clip_windows_like_the_runner():
    x = np.arange(1, 17, dtype=np.uint8).reshape(1, 4, 4)
    assert pool.quantized_max_pool2d(x, (2, 2), (3, 3), (2, 2), (1, 1)).tolist() == [[[6, 8], [14, 16]]]
    xf = np.arange(16, dtype=F32).reshape(1, 4, 4)
    avg = pool.average_pool2d(xf, (2, 2), (3, 3), (2, 2), (1, 1))
    assert avg[0, 0, 0] == F32((0 + 1 + 4 + 5) / 4)  # divisor = valid taps only
    assert pool.global_average_pool(xf.reshape(-1), 1, 16).tolist() == [7.5]


def test_flatten_and_nearest_resize():
    x = np.arange(2 * 2 * 3, dtype=F32).reshape(2, 2, 3)
    assert layout.tf_flatten(x, 2, 2, 3).tolist() == [0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11]
    assert layout.resize_nearest_indices(3, 7).tolist() == [0, 0, 0, 1, 1, 2, 2]
    up = layout.resize_nearest(np.arange(4, dtype=np.uint8).reshape(1, 2, 2), 4, 4)
    assert up[0].tolist() == [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]


def test_l2_normalization_and_logistic():
    x = np.array([3.0, 4.0], dtype=F32)
    assert activation.l2_normalize(x).tolist() == [F32(0.6), F32(0.8)]
    assert activation.l2_normalize(np.zeros(2, F32)).tolist() == [0.0, 0.0]
    assert activation.logistic(np.array([0.0], F32)).tolist() == [0.5]
