"""The compiled host-op kernels of the fast engine (``kpu.kernels``: V4 binary, matmul, reduce,
reduce_window2d; V3 quantize, softmax with its expf) give the numpy kernels' bits, NaN, infinities,
signed zeros and ties included, and the V4 nodes take them once the kernels are loaded.

The numpy kernels are held to direct C-loop references in ``test_v4_ops`` / ``test_v3_ops``.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from maixemu.kmodel.ops import activation as act_ops
from maixemu.kmodel.ops import quantize
from maixemu.kmodel.ops import v4_float as vf
from test_v4_ops import DF, DU, MAIN, mr, same_bits, shp, single_op, vr

F32 = np.float32
RNG = np.random.default_rng(1414)
SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, 2.5, 254.5, 255.5, 1e-45, -1e-45, 3e38, -3e38], F32)


def same_floats(a: np.ndarray, b: np.ndarray) -> bool:
    """Same bits, except that a NaN may carry another sign or payload: which NaN operand an x86
    instruction passes on depends on the operand order the compiler picks, and C leaves it open
    (the device's RISC-V FPU returns its one canonical NaN for every NaN result anyway)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    keep = ~np.isnan(a)
    return a[keep].tobytes() == b[keep].tobytes()


@pytest.fixture
def kn():
    from maixemu.kmodel.kpu import fast

    try:
        compiled = fast.kernels()
    except fast.FastEngineUnavailable as exc:  # pragma: no cover - the fast extra is missing
        pytest.skip(str(exc))
    if compiled is None:
        pytest.skip("MAIXEMU_KPU_ENGINE=numpy")
    return compiled


def floats(n: int, scale: float = 4.0) -> np.ndarray:
    x = (RNG.standard_normal(n) * scale).astype(F32)
    k = min(n, SPECIALS.size)
    x[:k] = SPECIALS[:k]
    return x


def test_expf_matches_the_numpy_algorithm_bit_for_bit(kn):
    x = np.concatenate([RNG.uniform(-110, 95, 100_000).astype(F32), SPECIALS,
                        np.array([88.72283, 88.72284, -103.97207, -103.97208, -87.3, 1e-30], F32)])
    got = np.array([kn.expf_scalar(v, *act_ops.EXPF_ARGS) for v in x], F32)
    assert same_bits(got, act_ops.expf(x))


@pytest.mark.parametrize("n", [0, 1, 10, 1000])
def test_softmax_v3(kn, n):
    for scale in (0.5, 30.0, 1e30):
        x = floats(n, scale)
        out = np.empty(n, F32)
        kn.softmax_v3(x, *act_ops.EXPF_ARGS, out)
        assert same_floats(out, act_ops.softmax_v3(x).astype(F32))


def test_quantize_v3(kn):
    for scale, bias in ((0.5, -3.0), (1 / 255, 0.0), (2.0, 0.25), (0.0, 1.0)):
        x = np.concatenate([floats(5000, 200.0), np.arange(-2, 300, 0.25, dtype=F32) * F32(scale) + F32(bias)])
        with np.errstate(all="ignore"):
            inv = F32(1.0) / F32(scale)
        out = np.empty(x.size, np.uint8)
        kn.quantize_v3(x, F32(bias), inv, out)
        assert same_bits(out, quantize.quantize_v3(x, scale, bias))


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "min", "max"])
def test_binary_f32(kn, op):
    a, b = floats(4000), floats(4000)[::-1].copy()
    b[100:200] = 0.0
    out = np.empty_like(a)
    none = np.zeros(0, np.int64)
    codes = {"add": 0, "sub": 1, "mul": 2, "div": 3, "min": 4, "max": 5}
    kn.binary_f32(a, none, b, none, codes[op], F32(-5.0), F32(7.5), out)
    assert same_floats(out, vf.binary(a, b, op, -5.0, 7.5))
    ia = RNG.integers(0, a.size, 999)
    ib = np.zeros(999, np.int64)
    out = np.empty(999, F32)
    kn.binary_f32(a, ia, b, ib, codes[op], F32(-np.inf), F32(np.inf), out)
    assert same_floats(out, vf.binary(a[ia], b[ib], op, -np.inf, np.inf))


def test_matmul_f32(kn):
    for rows, cols, n in ((1, 32, 3), (7, 100, 9), (3, 1, 1)):
        a, b, bias = floats(rows * cols).reshape(rows, cols), floats(cols * n, 0.3).reshape(cols, n), floats(n)
        a[0, 0] = 1e38
        out = np.empty((rows, n), F32)
        kn.matmul_f32(a, b, bias, F32(-1e30), F32(1e30), out)
        assert same_floats(out, vf.matmul(a, b, bias, -1e30, 1e30))


@pytest.mark.parametrize("op", ["mean", "sum", "min", "max"])
def test_reduce_kernels(kn, op):
    code = {"mean": 0, "sum": 0, "min": 4, "max": 5}[op]
    x = floats(2 * 3 * 4 * 5).reshape(2, 3, 4, 5)
    for so in ((2, 3, 4, 1), (1, 1, 1, 1), (2, 1, 4, 1)):
        axes = [i for i in range(4) if so[i] != x.shape[i]]
        rows = np.ascontiguousarray(x.transpose([i for i in range(4) if i not in axes] + axes)).reshape(int(np.prod(so)), -1)
        mul = F32(F32(np.prod(so)) / F32(x.size))
        out = np.empty(int(np.prod(so)), F32)
        kn.reduce_rows_f32(rows, code, F32(0.25), op == "mean", mul, out)
        assert same_floats(out.reshape(so), vf.reduce(x, so, op, 0.25))
    y = floats(2 * 3 * 9 * 11).reshape(2, 3, 9, 11)
    init = {"mean": 0.0, "sum": 0.0, "min": 1e30, "max": -1e30}[op]
    for k, st, dil, pads in (((2, 2), (2, 2), (1, 1), ((0, 0), (0, 1))), ((3, 2), (2, 1), (1, 2), ((1, 1), (0, 2)))):
        want = vf.reduce_window2d(y, op, init, *k, *st, *dil, pads[0], pads[1], -3.0, 3.5)
        out = np.empty(want.shape, F32)
        kn.reduce_window_f32(y, code, F32(init), op == "mean", *k, *st, *dil, pads[0][0], pads[1][0], F32(-3.0), F32(3.5), out)
        assert same_floats(out, want)


@pytest.mark.parametrize("op", ["min", "max"])
@pytest.mark.parametrize("init", [1e30, -1e30, 0.0, -0.0, np.nan, np.inf, -np.inf])
def test_the_2x2_stride_2_pool_kernel(kn, op, init):
    """``pool2_f32`` (2x2 windows, stride 2, inside the map) folds as the numpy kernel does:
    NaN, infinities and signed zeros in the map and as the initial value."""
    for shape in ((2, 3, 9, 11), (1, 16, 30, 30), (1, 2, 2, 2)):
        y = floats(int(np.prod(shape))).reshape(shape)
        for lo, hi in ((-3.0, 3.5), (-np.inf, np.inf)):
            want = vf.reduce_window2d(y, op, init, 2, 2, 2, 2, 1, 1, (0, 0), (0, 0), lo, hi)
            out = np.empty(want.shape, F32)
            kn.pool2_f32(y, op == "max", F32(init), F32(lo), F32(hi), out)
            assert same_floats(out, want)


def test_v4_nodes_take_the_compiled_kernels(kn):
    from maixemu.kmodel.kpu import fast

    s = (1, 3, 6, 8)
    x = floats(int(np.prod(s))).reshape(s)
    n_in, n_out = x.size * 4, 3 * 3 * 4 * 4
    body = (mr(MAIN, DF, 0, n_in) + mr(MAIN, DF, n_in, n_out) + struct.pack("<I", 2) + shp(*s)
            + struct.pack("<4i", 0, 0, 0, 0) + struct.pack("<6i", 2, 2, 2, 2, 1, 1) + struct.pack("<f", -1e30) + vr(-1e30, 1e30))
    m = single_op(0x08, body, n_in + n_out, [(mr(MAIN, DF, 0, n_in), s)], [mr(MAIN, DF, n_in, n_out)])
    fast.wait_for_warm_up()
    assert getattr(m.nodes[0].run, "kernel", None) == "pool2_f32"  # (2x2, stride 2: the one-pass pool)
    (got,) = m.run(x)
    assert same_bits(got.reshape(1, 3, 3, 4), vf.reduce_window2d(x, "max", -1e30, 2, 2, 2, 2, 1, 1, (0, 0), (0, 0), -1e30, 1e30))


@pytest.mark.parametrize("act", [0, 1, 2])
def test_fully_connected_v3(kn, act):
    from maixemu.kmodel.ops import fully_connected as fc

    for cin, cout in ((1, 1), (40, 7), (300, 33)):
        x, w, bias = floats(cin, 3.0), floats(cin * cout, 2.0).reshape(cout, cin), floats(cout, 6.0)
        bias[: min(cout, 3)] = [-0.0, 6.0, 0.0][: min(cout, 3)]
        out = np.empty(cout, F32)
        kn.fully_connected_v3(x, np.ascontiguousarray(w.T), bias, act, out)
        assert same_floats(out, fc.fully_connected(x, w, bias, act))


@pytest.mark.parametrize("shape", [(1, 4, 8, 10), (1, 20, 30, 40), (1, 512, 4, 4), (1, 3, 5, 9)])
def test_v4_uint8_transposes_to_nhwc_take_the_hwc_copy(kn, shape):
    """A uint8 NCHW → NHWC transpose of one map at least ``TRANSPOSE_MIN_WIDTH`` wide runs on
    ``kernels.chw_to_hwc``; every one gives numpy's transposed bytes."""
    from maixemu.kmodel.kpu import fast
    from maixemu.kmodel.v4 import nodes

    n = int(np.prod(shape))
    body = mr(MAIN, DU, 0, n) + mr(MAIN, DU, n, n) + shp(*shape) + struct.pack("<4i", 0, 2, 3, 1)
    m = single_op(0x0C, body, 2 * n, [(mr(MAIN, DU, 0, n), shape)], [mr(MAIN, DU, n, n)])
    fast.wait_for_warm_up()
    wide = shape[3] >= nodes.TRANSPOSE_MIN_WIDTH
    assert (getattr(m.nodes[0].run, "kernel", None) == "chw_to_hwc") == wide
    x = RNG.integers(0, 256, shape, dtype=np.uint8)
    for _ in range(2):  # (the first run may be numpy's while the kernel loads)
        (got,) = m.run(x)
        np.testing.assert_array_equal(got.reshape(-1), np.transpose(x, (0, 2, 3, 1)).reshape(-1))
