"""Every V3 CPU layer type through the real loader: body layouts, addresses and shapes.

One hand-built model chains all CPU layer kinds (kmodel-v3.md §3) over main memory; each
layer's traced output is checked against a direct computation written here from the document.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from maixemu.kmodel import KmodelError, load_kmodel
from maixemu.kmodel.build import ConvSpec, V3Builder

F32 = np.float32
MAIN = 2048
# main-memory map (bytes)
IN, A, B, Q, Q2, Q3, D, CD, P, AP, G, L2, LG, TF, RZ, QRZ, CC, UP_CONV, SM = (
    0, 64, 128, 192, 208, 224, 256, 320, 384, 400, 416, 420, 484, 548, 612, 868, 872, 880, 900)
KPU_ROW = 1000


def _model_bytes() -> bytes:
    b = V3Builder(main_mem_usage=MAIN)
    b.add_fully_connected(IN, A, np.eye(16, dtype=F32), np.zeros(16, F32))                    # 0
    b.add_raw("ADD", struct.pack("<5I", 0, A, A, B, 16))                                       # 1
    b.add_quantize(B, Q, 16, 0.5, -1.0)                                                        # 2
    b.add_raw("QUANTIZED_ADD", struct.pack("<5I9i", 0, Q, Q, Q2, 16, 3, 3, 1, -2, 5, 2, 7, 1, 1))  # 3
    table = bytes(255 - i for i in range(256))
    b.add_raw("REQUANTIZE", struct.pack("<4I", 0, Q2, Q3, 16) + table)                         # 4
    b.add_dequantize(Q3, D, 16, 0.25, -3.0)                                                    # 5
    params = struct.pack("<8f", 1.0, 0.0, 0.5, 1.0, 2.0, -1.0, 0.125, 0.0)
    b.add_raw("CHANNELWISE_DEQUANTIZE", struct.pack("<5I", 0, Q3, CD, 4, 4) + params)          # 6
    b.add_raw("QUANTIZED_MAX_POOL2D", struct.pack("<15I", 0, Q3, P, 4, 4, 1, 2, 2, 1, 2, 2, 2, 2, 0, 0))  # 7
    b.add_raw("AVERAGE_POOL2D", struct.pack("<16I", 0, D, AP, 4, 4, 1, 2, 2, 1, 3, 3, 2, 2, 1, 1, 1))    # 8
    b.add_raw("GLOBAL_AVERAGE_POOL2D", struct.pack("<5I", 0, D, G, 16, 1))                     # 9
    b.add_raw("L2_NORMALIZATION", struct.pack("<4I", 0, D, L2, 16))                            # 10
    b.add_logistic(D, LG, 16)                                                                  # 11
    b.add_flatten(D, TF, 2, 2, 4)                                                              # 12
    b.add_raw("RESIZE_NEAREST_NEIGHBOR", struct.pack("<9I", 0, D, RZ, 4, 4, 1, 8, 8, 1))       # 13
    b.add_raw("QUANTIZED_RESIZE_NEAREST_NEIGHBOR", struct.pack("<9I", 0, Q3, QRZ, 4, 4, 1, 2, 2, 0))  # 14
    b.add_raw("QUANTIZED_CONCAT", struct.pack("<3I4I", 0, CC, 2, P, 4, QRZ, 4))                # 15
    b.add_upload(Q3, KPU_ROW, 4, 4, 1)                                                         # 16
    conv = ConvSpec(in_shape=(1, 4, 4), out_channels=1, weights=np.full((1, 1, 1, 1), 2, np.uint8), kernel=1,
                    src_row=KPU_ROW, dst_row=KPU_ROW + 8, main_out=UP_CONV, bn_mul=[1024], bn_add=[0], bn_shift=[0])
    b.add_conv(conv)                                                                           # 17
    b.add_softmax(D, SM, 16)                                                                   # 18
    b.add_output(SM, 64)
    b.add_output(UP_CONV, 16)
    return b.build()


def test_every_cpu_layer_kind():
    model = load_kmodel(_model_bytes())
    assert model.inputs[0].shape == (16,) and model.inputs[0].dtype == np.float32
    x = np.linspace(-3, 12, 16).astype(F32)
    out = {s.index: s.output for s in model.trace(x)}
    a = x.copy()
    np.testing.assert_array_equal(out[0], a)
    np.testing.assert_array_equal(out[1], a + a)
    t = ((a + a) - F32(-1.0)) * (F32(1.0) / F32(0.5))
    q = np.clip(np.floor(np.abs(t.astype(np.float64)) + 0.5) * np.sign(t), 0, 255).astype(np.int64)
    np.testing.assert_array_equal(out[2], q)
    # shifts differ (1, 2): each side shifted on its own; out_mul 1; carry shift by 1 (odd → ±1)
    w = (((q + 3) * 3) >> 1) + (((q - 2) * 5) >> 2)
    half = w >> 1
    w = np.where((w & 1) == 1, np.where(w < 0, half - 1, half + 1), half) + 7
    q2 = np.clip(w, 0, 255)
    np.testing.assert_array_equal(out[3], q2)
    q3 = 255 - q2
    np.testing.assert_array_equal(out[4], q3)
    d = q3.astype(F32) * F32(0.25) + F32(-3.0)
    np.testing.assert_array_equal(out[5], d)
    scales, biases = np.array([1, 0.5, 2, 0.125], F32), np.array([0, 1, -1, 0], F32)
    np.testing.assert_array_equal(out[6], (q3.reshape(4, 4).astype(F32) * scales[:, None] + biases[:, None]).reshape(-1))
    grid = q3.reshape(4, 4)
    np.testing.assert_array_equal(out[7].reshape(2, 2), grid.reshape(2, 2, 2, 2).max(axis=(1, 3)))
    dg = d.reshape(4, 4)
    ap = out[8].reshape(2, 2)
    assert ap[0, 0] == F32(np.float32(dg[0, 0] + dg[0, 1] + dg[1, 0] + dg[1, 1]) / F32(4))  # 3x3 window clipped to 2x2
    acc = F32(0)
    for value in d:
        acc = F32(acc + value)
    assert out[9].tolist() == [acc / F32(16)]
    assert abs(float(np.linalg.norm(out[10])) - 1.0) < 1e-6
    np.testing.assert_allclose(out[11], 1 / (1 + np.exp(-d.astype(np.float64))), rtol=1e-6)
    np.testing.assert_array_equal(out[12], d.reshape(4, 2, 2).transpose(1, 2, 0).reshape(-1))
    np.testing.assert_array_equal(out[13].reshape(8, 8), np.repeat(np.repeat(dg, 2, 0), 2, 1))
    np.testing.assert_array_equal(out[14].reshape(2, 2), grid[::2, ::2])
    np.testing.assert_array_equal(out[15], np.concatenate([out[7].reshape(-1), out[14].reshape(-1)]))
    np.testing.assert_array_equal(out[16].reshape(4, 4), grid)
    # 1x1 conv, weight 2, arg_x 0: bn = 2*x*1024 → ReLU table → 2*x clamped
    np.testing.assert_array_equal(out[17].reshape(4, 4), np.clip(2 * grid, 0, 255))
    sm = out[18]
    assert abs(float(sm.sum()) - 1.0) < 1e-5 and int(np.argmax(sm)) == int(np.argmax(d))
    outs = model.run(x)
    assert outs[0].dtype == np.float32 and outs[0].shape == (16,)
    np.testing.assert_array_equal(outs[0], sm)


def test_every_cpu_layer_kind_survives_corruption():
    data = _model_bytes()
    rng = np.random.default_rng(77)
    for _ in range(300):
        buf = bytearray(data)
        for _ in range(int(rng.integers(1, 4))):
            buf[int(rng.integers(0, len(buf)))] = int(rng.integers(0, 256))
        try:
            model = load_kmodel(bytes(buf))
            if model.inputs:
                model.run(np.zeros(model.inputs[0].shape, model.inputs[0].dtype))
        except KmodelError:
            pass


def test_first_layer_must_be_conv_or_fully_connected():
    b = V3Builder(main_mem_usage=64)
    b.add_softmax(0, 32, 4)
    b.add_output(32, 16)
    model = load_kmodel(b.build())
    assert model.inputs == []
    with pytest.raises(KmodelError, match="first layer"):
        model.run(np.zeros(4, F32))
