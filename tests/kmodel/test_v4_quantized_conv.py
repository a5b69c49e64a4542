"""V4's quantized convolutions on every engine and product kind (``ops.quantized_conv``) against
the direct C-loop reference of nncase v0.2: strides, dilations, asymmetric pads, groups,
depthwise with a channel multiplier, row tiles, an output that overlaps its input, offsets no
compiler emits. The compiled engines must really take the fast path (the reference form raises)."""

from __future__ import annotations

import itertools
import struct

import numpy as np
import pytest

from maixemu.kmodel.kpu import fast
from maixemu.kmodel.ops import quantized_conv
from test_v4_ops import DU, MAIN, i32b, mr, rshift_round, shp, single_op, wrap32

pytestmark = pytest.mark.usefixtures("kpu_engine")


def loop_reference(x, w, bias, groups, stride, dil, pads, in_add, w_add, mul, shift, out_off):
    """nncase's quantized_conv2d loops (NCHW), Python integers."""
    n, c, h, wd = x.shape
    oc, gic, kh, kw = w.shape
    goc = oc // groups
    oh = (h + pads[0][0] + pads[0][1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[1][0] + pads[1][1] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.empty((n, oc, oh, ow), np.uint8)
    xs, ws = x.astype(np.int64), w.astype(np.int64)
    for b, o, oy, ox in itertools.product(range(n), range(oc), range(oh), range(ow)):
        g = o // goc
        v = int(bias[o])
        for i, ky, kx in itertools.product(range(gic), range(kh), range(kw)):
            iy, ix = oy * stride[0] - pads[0][0] + ky * dil[0], ox * stride[1] - pads[1][0] + kx * dil[1]
            if 0 <= iy < h and 0 <= ix < wd:
                v += (int(xs[b, g * gic + i, iy, ix]) + in_add) * (int(ws[o, i, ky, kx]) + w_add)
        r = wrap32(wrap32(rshift_round(wrap32(v) * mul, shift)) + out_off)
        out[b, o, oy, ox] = min(max(r, 0), 255)
    return out


def spread(x, w, bias, groups, stride, dil, pads, in_add, w_add):
    """``mul``, ``shift``, ``out_off`` that map the layer's sums onto about 0..255."""
    s = _sums(x, w, groups, stride, dil, pads, in_add, w_add) + bias.astype(np.int64)[None, :, None, None]
    lo, hi = np.percentile(s, 2), np.percentile(s, 98)
    shift = 24
    mul = max(1, int(round(250 * (1 << shift) / max(hi - lo, 1))))
    out_off = -int(round(lo * mul / (1 << shift))) + 2
    return mul, shift, out_off


def _sums(x, w, groups, stride, dil, pads, in_add, w_add):
    n, c, h, wd = x.shape
    oc, gic, kh, kw = w.shape
    goc = oc // groups
    xp = np.zeros((n, c, h + sum(pads[0]), wd + sum(pads[1])), np.int64)
    xp[:, :, pads[0][0] : pads[0][0] + h, pads[1][0] : pads[1][0] + wd] = x.astype(np.int64) + in_add
    oh = (xp.shape[2] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (xp.shape[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, oc, oh, ow), np.int64)
    for o in range(oc):
        g = o // goc
        for i, ky, kx in itertools.product(range(gic), range(kh), range(kw)):
            tap = xp[:, g * gic + i, ky * dil[0] : ky * dil[0] + stride[0] * (oh - 1) + 1 : stride[0],
                     kx * dil[1] : kx * dil[1] + stride[1] * (ow - 1) + 1 : stride[1]]
            out[:, o] += tap * (int(w[o, i, ky, kx]) + w_add)
    return out


def _nchw_model(x, w, bias, groups, stride, dil, pads, in_add, w_add, mul, shift, out_off, overlap=False):
    oc, _, kh, kw = w.shape
    oh = (x.shape[2] + sum(pads[0]) - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (x.shape[3] + sum(pads[1]) - dil[1] * (kw - 1) - 1) // stride[1] + 1
    n_in, n_out = x.size, x.shape[0] * oc * oh * ow
    out_at = 0 if overlap else n_in + 8
    body = (mr(MAIN, DU, 0, n_in) + mr(MAIN, DU, out_at, n_out) + shp(*x.shape) + struct.pack("<2i", groups, oc)
            + struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", kh, kw, *stride, *dil)
            + struct.pack("<5i", in_add, w_add, mul, shift, out_off) + i32b(bias) + w.tobytes())
    return single_op(0x0F, body, max(n_in, out_at + n_out) + 8, [(mr(MAIN, DU, 0, n_in), x.shape)], [mr(MAIN, DU, out_at, n_out)])


def _expect_fast_path(model, kpu_engine, monkeypatch):
    """On a compiled engine: kernels loaded, the reference form forbidden, the path named."""
    path = model.layers[0].details["path"]
    if kpu_engine == "numpy":
        assert path == "int64"
        return path
    fast.kernels()
    fast.wait_for_warm_up()

    def forbidden(self, x, out):
        raise AssertionError("the reference form ran on a compiled engine")

    monkeypatch.setattr(quantized_conv.QuantizedConv, "_run_reference", forbidden)
    forced = kpu_engine.removeprefix("fast-")
    if path != "dw":
        refused = model.layers[0].details["refused"]
        assert path == forced or (path == "f64" and any(r.startswith(forced) for r in refused)), (path, refused)
    return path


GEOMETRIES = [
    # (in NCHW, oc, kernel, groups, stride, dilation, pads)
    ((1, 5, 9, 11), 7, (3, 3), 1, (1, 1), (1, 1), ((1, 1), (1, 1))),
    ((1, 4, 10, 9), 6, (3, 2), 2, (2, 1), (1, 2), ((1, 0), (2, 1))),
    ((1, 6, 8, 8), 6, (3, 3), 6, (1, 2), (1, 1), ((1, 1), (0, 1))),  # depthwise
    ((1, 3, 7, 9), 6, (3, 3), 3, (1, 1), (2, 1), ((2, 2), (1, 1))),  # depthwise, multiplier 2
    ((2, 8, 6, 7), 5, (1, 1), 1, (1, 1), (1, 1), ((0, 0), (0, 0))),  # pointwise, two batches
    ((1, 3, 12, 10), 4, (5, 5), 1, (2, 2), (1, 1), ((2, 2), (2, 2))),
]


@pytest.mark.parametrize("geometry", GEOMETRIES, ids=lambda g: f"{g[0]}-k{g[2][0]}x{g[2][1]}-g{g[3]}-s{g[4][0]}{g[4][1]}")
@pytest.mark.parametrize("tiles", ["whole", "row tiles"])
def test_quantized_conv2d_matches_the_loops(geometry, tiles, kpu_engine, monkeypatch):
    shape, oc, (kh, kw), groups, stride, dil, pads = geometry
    rng = np.random.default_rng(sum(shape) + oc + kh)
    x = rng.integers(0, 256, shape).astype(np.uint8)
    w = rng.integers(0, 256, (oc, shape[1] // groups, kh, kw)).astype(np.uint8)
    x[0, 0, 0, :3] = 255  # a few worst-case inputs
    w[0, 0, 0, 0] = 255
    bias = rng.integers(-20000, 20000, oc).astype(np.int32)
    in_add, w_add = -int(rng.integers(0, 256)), -int(rng.integers(0, 256))
    mul, shift, out_off = spread(x, w, bias, groups, stride, dil, pads, in_add, w_add)
    if tiles == "row tiles":
        monkeypatch.setattr(quantized_conv.QuantizedConv, "TILE_BYTES", 1)
    m = _nchw_model(x, w, bias, groups, stride, dil, pads, in_add, w_add, mul, shift, out_off)
    _expect_fast_path(m, kpu_engine, monkeypatch)
    want = loop_reference(x, w, bias, groups, stride, dil, pads, in_add, w_add, mul, shift, out_off)
    assert len(np.unique(want)) > 40  # the requantisation is exercised, not saturated
    (got,) = m.run(x)
    assert np.array_equal(got.reshape(want.shape), want)


def test_an_output_over_its_input_reads_the_whole_input_first(kpu_engine, monkeypatch):
    rng = np.random.default_rng(9)
    x = rng.integers(0, 256, (1, 4, 6, 6)).astype(np.uint8)
    w = rng.integers(0, 256, (4, 4, 3, 3)).astype(np.uint8)
    bias = rng.integers(-999, 999, 4).astype(np.int32)
    args = (1, (1, 1), (1, 1), ((1, 1), (1, 1)), -120, -130)
    mul, shift, out_off = spread(x, w, bias, *args)
    m = _nchw_model(x, w, bias, *args, mul, shift, out_off, overlap=True)
    _expect_fast_path(m, kpu_engine, monkeypatch)
    (got,) = m.run(x)
    assert np.array_equal(got.reshape(4, 6, 6), loop_reference(x, w, bias, *args, mul, shift, out_off)[0])


def test_offsets_beyond_zero_points_take_the_exact_int64_form(kpu_engine):
    rng = np.random.default_rng(10)
    x = rng.integers(0, 256, (1, 2, 5, 5)).astype(np.uint8)
    w = rng.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8)
    bias = np.zeros(3, np.int32)
    args = (1, (1, 1), (1, 1), ((1, 1), (1, 1)), 300, -7)  # x + 300: no uint8 zero point
    m = _nchw_model(x, w, bias, *args, 3, 12, 5)
    assert m.layers[0].details["path"] == "int64"
    assert ("numpy engine" if kpu_engine == "numpy" else "zero points") in m.layers[0].details["refused"][0]
    (got,) = m.run(x)
    assert np.array_equal(got.reshape(3, 5, 5), loop_reference(x, w, bias, *args, 3, 12, 5)[0])


@pytest.mark.parametrize("depthwise", [False, True])
def test_cpu_quantized_conv2d_on_hwc_maps(depthwise, kpu_engine, monkeypatch):
    s = (1, 9, 7, 6)  # NHWC
    rng = np.random.default_rng(11 + depthwise)
    x = rng.integers(0, 256, s).astype(np.uint8)
    oc = 6 if depthwise else 5
    w = rng.integers(0, 256, (oc, 3, 3, 1 if depthwise else 6)).astype(np.uint8)  # [oc][kh][kw][ic]
    bias = rng.integers(-3000, 3000, oc).astype(np.int32)
    in_off, w_off = 121, 133  # subtracted by the cpu ops
    pads, stride, dil = ((1, 1), (0, 2)), (2, 1), (1, 1)
    w_nchw = np.ascontiguousarray(w.transpose(0, 3, 1, 2))
    groups = 6 if depthwise else 1
    x_nchw = np.ascontiguousarray(x.transpose(0, 3, 1, 2))
    mul, shift, out_off = spread(x_nchw, w_nchw, bias, groups, stride, dil, pads, -in_off, -w_off)
    want = loop_reference(x_nchw, w_nchw, bias, groups, stride, dil, pads, -in_off, -w_off, mul, shift, out_off).transpose(0, 2, 3, 1)
    geo = struct.pack("<4i", *pads[0], *pads[1]) + struct.pack("<6i", 3, 3, *stride, *dil)
    n_out = want.size
    body = mr(MAIN, DU, 0, x.size) + mr(MAIN, DU, 512, n_out) + shp(*s) + (b"" if depthwise else struct.pack("<i", oc)) + geo
    body += struct.pack("<5i", in_off, w_off, mul, shift, out_off) + w.tobytes() + i32b(bias)
    m = single_op(0x1005 if depthwise else 0x1004, body, 512 + n_out, [(mr(MAIN, DU, 0, x.size), s)], [mr(MAIN, DU, 512, n_out)])
    path = _expect_fast_path(m, kpu_engine, monkeypatch)
    assert (path == "dw") == (depthwise and kpu_engine != "numpy")
    (got,) = m.run(x)
    assert len(np.unique(want)) > 40
    assert np.array_equal(got.reshape(want.shape), want)


@pytest.mark.parametrize("rows,cols,bcols", [(3, 5, 4), (37, 130, 19)])
def test_quantized_matmul_with_constant_weights(rows, cols, bcols, kpu_engine, monkeypatch):
    rng = np.random.default_rng(rows)
    a = rng.integers(0, 256, (rows, cols)).astype(np.uint8)
    b = rng.integers(0, 256, (cols, bcols)).astype(np.uint8)
    bias = rng.integers(-100000, 100000, bcols).astype(np.int32)
    a_off, b_off, shift, out_off = -128, -3, 26, 100
    acc = (a.astype(np.int64) + a_off) @ (b.astype(np.int64) + b_off) + bias
    mul = int(250 * (1 << shift) / max(int(np.ptp(acc)), 1))
    want = np.empty((rows, bcols), np.uint8)
    for r, c in itertools.product(range(rows), range(bcols)):
        v = int(bias[c]) + sum((int(a[r, i]) + a_off) * (int(b[i, c]) + b_off) for i in range(cols))
        want[r, c] = min(max(wrap32(wrap32(rshift_round(v * mul, shift)) + out_off), 0), 255)
    n_a, n_o = rows * cols, rows * bcols
    body = (mr(MAIN, DU, 0, n_a) + mr(0, DU, 0, cols * bcols) + mr(MAIN, DU, n_a, n_o)
            + struct.pack("<8i", rows, cols, bcols, a_off, b_off, mul, shift, out_off) + i32b(bias))
    m = single_op(0x10, body, n_a + n_o, [(mr(MAIN, DU, 0, n_a), (1, 1, rows, cols))], [mr(MAIN, DU, n_a, n_o)], b.tobytes())
    path = m.layers[0].details["path"]
    if kpu_engine == "numpy":
        assert path == "int64"
    else:
        fast.kernels()
        fast.wait_for_warm_up()
        forced = kpu_engine.removeprefix("fast-")
        assert path == forced or (path == "f64" and any(r.startswith(forced) for r in m.layers[0].details["refused"]))
        monkeypatch.setattr(quantized_conv.vq, "quantized_matmul", None)  # the int64 form must not run
    (got,) = m.run(a.reshape(1, 1, rows, cols))
    assert np.array_equal(got.reshape(rows, bcols), want)
