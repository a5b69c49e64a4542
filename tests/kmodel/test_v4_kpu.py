"""V4 K210 nodes: ``kpu_upload`` and ``kpu_conv2d`` (skip-count table walk, batches, main-memory
copy, KPU RAM aliasing) against the direct-loop KPU reference in ``tests/kmodel/kpu_reference.py``.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import kpu_reference as ref
from maixemu.kmodel.build import Activation, ConvSpec, encode_batchnorm
from maixemu.kmodel.kpu import kpu_bytes
from maixemu.kmodel.v4 import load_v4
from test_v4_ops import CONST, DU, KPU, MAIN, V4Writer, mr, shp

RNG = np.random.default_rng(7)


def leaky_activation() -> Activation:
    """A leaky-ReLU-like table with several segments and biases (exercises segment selection)."""
    lowest = -(1 << 35)
    xs = [lowest, -40000, -20000, 0, 30000, 60000] + [(1 << 35) - 16 + i for i in range(10)]
    ym = [102, 102, 102, 1024, 1024, 512] + [0] * 10
    sh = [20, 20, 20, 20, 20, 20] + [0] * 10
    bias = [0, 4, 6, 8, 37, 66] + [0] * 10
    return Activation(xs, ym, sh, bias)


def conv_spec(in_shape, oc, *, kernel=3, depthwise=False, pool=0, src=0, dst=0) -> ConvSpec:
    ic = in_shape[0]
    w = RNG.integers(0, 256, (oc, 1 if depthwise else ic, kernel, kernel)).astype(np.uint8)
    taps = (1 if depthwise else ic) * kernel * kernel
    return ConvSpec(in_shape=in_shape, out_channels=oc, weights=w, kernel=kernel, depthwise=depthwise, pool_type=pool,
                    pad_value=117, arg_x=-128, arg_w=-117, arg_add=128 * 117 * kernel * kernel,
                    # spread bn over about +-100000 so the activation output covers 0..255
                    bn_mul=[max(1, round(4 * 100000 / (taps**0.5 * 5476)))] * oc,
                    bn_add=[int(v) for v in RNG.integers(-4000, 4000, oc)], bn_shift=[2] * oc,
                    activation=leaky_activation(), src_row=src // 64, dst_row=dst // 64)


def kpu_conv_body(spec: ConvSpec, *, batches=1, main_out=None, skips=(8, 16, 24)) -> bytes:
    """A V4 kpu_conv2d body: the three tables behind relative skips filled with junk bytes."""
    words = spec.registers()
    words[4] |= skips[0] << 32  # bwsx_base_addr
    words[7] |= skips[1] << 32  # active_addr
    words[5] |= skips[2] << 32  # para_start_addr
    oc = spec.out_channels
    out = main_out if main_out is not None else mr(CONST, 0, 0, 0)
    body = out + struct.pack("<ii", batches, 0) + struct.pack("<12Q", *words)
    body += b"\xee" * skips[0] + encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift)
    body += b"\xdd" * skips[1] + spec.activation.encode()
    body += b"\xcc" * skips[2] + spec.weights.astype(np.uint8).tobytes()
    assert len(words) == 12 and oc > 0
    return body


def reference_layer(ram: bytearray, spec: ConvSpec, batch: int = 0) -> np.ndarray:
    words = spec.registers()
    ib = kpu_bytes(*spec.in_shape)
    ob = kpu_bytes(*spec.out_shape)
    words[1] = (spec.src_row + batch * ib // 64) | ((spec.dst_row + batch * ob // 64) << 32)
    bn = encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift)
    out = ref.conv_layer(ram, words, spec.weights.astype(np.uint8).tobytes(), bn, spec.activation.encode())
    return np.array(out, dtype=np.uint8)


def test_kpu_upload_row_layout_and_batches():
    n, c, h, w = 2, 3, 5, 20  # W=20: 2 channels per 64-byte row
    x = RNG.integers(0, 256, (n, c, h, w)).astype(np.uint8)
    per = kpu_bytes(c, h, w)
    start = 640
    body = mr(MAIN, DU, 0, x.size) + mr(KPU, DU, start, n * per) + shp(n, c, h, w)
    data = (V4Writer(x.size).input(mr(MAIN, DU, 0, x.size), (n, c, h, w))
            .output(mr(KPU, DU, start, n * per)).node(0x2001, body).build())
    m = load_v4(data)
    (raw,) = m.run(x)  # an output in KPU memory is the raw row-layout bytes, as on the device
    ram = bytearray(2 * 1024 * 1024)
    for b in range(n):
        ref.upload(ram, start + b * per, x[b].tolist())
    assert raw.tobytes() == bytes(ram[start : start + n * per])
    (step,) = list(m.trace(x))
    assert step.kind == "kpu_upload" and np.array_equal(step.output, x)


@pytest.mark.parametrize("kernel,depthwise,pool,in_shape", [(3, False, 1, (4, 12, 14)), (1, False, 5, (5, 8, 40)),
                                                            (3, True, 0, (6, 9, 33)), (3, False, 0, (2, 6, 70))])
def test_kpu_conv2d_chain_matches_reference(kernel, depthwise, pool, in_shape):
    """input (KPU) -> conv A -> conv B (reads A through the fast path) -> B also copied to main
    memory; a transpose reads A's output *from KPU RAM*, which forces A into the arena."""
    a_oc = in_shape[0] if depthwise else 7
    src, a_dst, b_dst = 0, 64 * 2000, 64 * 9000
    a = conv_spec(in_shape, a_oc, kernel=kernel, depthwise=depthwise, pool=pool, src=src, dst=a_dst)
    bsp = conv_spec(a.out_shape, 3, kernel=3, src=a_dst, dst=b_dst)
    n_main = int(np.prod(bsp.out_shape))
    a_bytes = kpu_bytes(*a.out_shape)
    main_mem = n_main + a_bytes
    in_range = mr(KPU, DU, src, kpu_bytes(*in_shape))
    w = V4Writer(main_mem).input(in_range, (1, *in_shape))
    w.node(0x2002, kpu_conv_body(a))
    w.node(0x2002, kpu_conv_body(bsp, main_out=mr(MAIN, DU, 0, n_main)))
    # a CPU node reading conv A's raw KPU bytes (row layout) as a flat u8 tensor
    w.node(0x0C, mr(KPU, DU, a_dst, a_bytes) + mr(MAIN, DU, n_main, a_bytes) + shp(1, 1, 1, a_bytes) + shp(0, 1, 2, 3))
    w.output(mr(MAIN, DU, 0, n_main)).output(mr(MAIN, DU, n_main, a_bytes))
    m = load_v4(w.build())
    assert m.input_is_kpu and m.input_chw == in_shape
    for trial in range(2):  # the second run checks state carried between runs
        x = RNG.integers(0, 256, (1, *in_shape)).astype(np.uint8)
        out_b, raw_a = m.run(x)
        ram = bytearray(2 * 1024 * 1024)
        ref.upload(ram, src, x[0].tolist())
        want_a = reference_layer(ram, a)
        want_b = reference_layer(ram, bsp)
        assert want_a.std() > 5 and want_b.std() > 5  # not saturated: the test sees the arithmetic
        assert np.array_equal(out_b.reshape(bsp.out_shape), want_b)
        assert raw_a.tobytes() == bytes(ram[a_dst : a_dst + a_bytes])
    steps = list(m.trace(x))
    assert [s.kind for s in steps] == ["kpu_conv2d", "kpu_conv2d", "transpose"]
    assert steps[0].on_kpu and steps[0].output.shape == (1, *a.out_shape)
    assert m.layers[0].details["pool"] and m.layers[0].macs > 0


def test_kpu_conv2d_batches_and_input_overwritten_by_upload():
    """batches=2 reads/writes consecutive maps; a kpu_upload that overwrites the conv's input
    between runs of two convs must be seen (no stale cached array)."""
    in_shape = (3, 8, 10)
    spec = conv_spec(in_shape, 4, kernel=3, src=0, dst=64 * 100)
    per_in = kpu_bytes(*in_shape)
    n_out = 2 * int(np.prod(spec.out_shape))
    main_in = int(np.prod(in_shape))
    w = V4Writer(n_out + main_in, constants=b"")
    w.input(mr(KPU, DU, 0, 2 * per_in), (2, *in_shape))
    w.input(mr(MAIN, DU, n_out, main_in), (1, *in_shape))
    w.node(0x2002, kpu_conv_body(spec, batches=2, main_out=mr(MAIN, DU, 0, n_out)))
    # overwrite batch 0's input with input 1 and run the same layer again (batches=1)
    w.node(0x2001, mr(MAIN, DU, n_out, main_in) + mr(KPU, DU, 0, per_in) + shp(1, *in_shape))
    w.node(0x2002, kpu_conv_body(spec, batches=1, main_out=mr(MAIN, DU, 0, n_out // 2), skips=(0, 0, 0)))
    w.output(mr(MAIN, DU, 0, n_out))
    m = load_v4(w.build())
    x = RNG.integers(0, 256, (2, *in_shape)).astype(np.uint8)
    y = RNG.integers(0, 256, (1, *in_shape)).astype(np.uint8)
    (out,) = m.run(x, y)
    ram = bytearray(2 * 1024 * 1024)
    for b in range(2):
        ref.upload(ram, b * per_in, x[b].tolist())
    batch = [reference_layer(ram, spec, b) for b in range(2)]
    ref.upload(ram, 0, y[0].tolist())
    again = reference_layer(ram, spec, 0)
    got = out.reshape(2, *spec.out_shape)
    assert np.array_equal(got[0], again)
    assert np.array_equal(got[1], batch[1])
    assert not np.array_equal(again, batch[0])


def test_kpu_conv2d_rejects_maps_beyond_kpu_ram():
    from maixemu.kmodel import KmodelFormatError

    spec = conv_spec((3, 8, 10), 4, src=0, dst=64 * 32767)
    data = (V4Writer(64).input(mr(KPU, DU, 0, kpu_bytes(3, 8, 10)), (1, 3, 8, 10)).output(mr(MAIN, DU, 0, 8))
            .node(0x2002, kpu_conv_body(spec)).build())
    with pytest.raises(KmodelFormatError, match="2 MiB"):
        load_v4(data)
