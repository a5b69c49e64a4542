"""Every KPU configuration the real models do not cover, against the direct-loop reference.

Each case writes a small V3 file with ``maixemu.kmodel.build``, loads it with the real loader,
and compares the emulator's bytes with ``tests/kmodel/kpu_reference.py`` (a plain-Python transcription
of docs/kpu-hardware.md with its own 2 MiB KPU RAM). Parameters are calibrated so outputs spread
over many values (asserted), so a case cannot pass by saturating everything to 0 or 255.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

import kpu_reference as ref
from _shared import shared_path
from maixemu.kmodel import load_kmodel
from maixemu.kmodel import kpu as K
from maixemu.kmodel.build import Activation, ConvSpec, V3Builder
from maixemu.kmodel.errors import KmodelRuntimeError

#: every configuration runs on every KPU engine (numpy, compiled int8, compiled float)
pytestmark = pytest.mark.usefixtures("kpu_engine")
NUMPY_PATH_DETAIL = pytest.mark.kpu_engines("numpy")


def _calibrate(spec: ConvSpec, x: np.ndarray, rng, spread: int = 200, weight_bytes: int = 1) -> ConvSpec:
    """Pick batch-norm mul/shift/add so that the activation input spans the table's active range."""
    regs = K.decode_registers(spec.registers(weight_bytes))
    conv = K.KpuConv.prepare(regs, spec.weights.reshape(-1).astype(np.int64), np.zeros(spec.out_channels, np.uint64),
                             Activation.relu().encode(), fast=False)
    acc = conv.accumulate_reference(x)
    oc = spec.out_channels
    muls, adds, shifts = [], [], []
    for o in range(oc):
        a = acc[o].astype(np.int64)
        lo, hi = int(np.percentile(a, 5)), int(np.percentile(a, 95))
        width = max(hi - lo, 1)
        shift = int(rng.integers(8, 16))
        # bn ≈ (acc - lo) * spread*1024 / width  → out ≈ 0..spread through the ReLU table
        mul = max(1, min((1 << 23) - 1, round(spread * 1024 * (1 << shift) / width)))
        if mul >= (1 << 23) - 1:
            shift = 0
            mul = max(1, min((1 << 23) - 1, round(spread * 1024 / width)))
        add = -((lo * mul) >> shift) - int(rng.integers(0, 20000))
        add = max(-(1 << 31), min((1 << 31) - 1, add))
        muls.append(mul)
        adds.append(add)
        shifts.append(shift)
    spec.bn_mul, spec.bn_add, spec.bn_shift = muls, adds, shifts
    return spec


def _run_reference(spec_list: list[ConvSpec], x: np.ndarray, ram: bytearray | None = None, weight_bytes: int = 1):
    ram = ram if ram is not None else bytearray(2 * 1024 * 1024)
    first = spec_list[0]
    ref.upload(ram, first.src_row * 64, x.tolist())
    outs = []
    for spec in spec_list:
        regs = spec.registers(weight_bytes)
        wfmt = "<u1" if weight_bytes == 1 else "<u2"
        from maixemu.kmodel.build import encode_batchnorm

        bn = encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift)
        out = ref.conv_layer(ram, regs, spec.weights.astype(wfmt).tobytes(), bn, spec.activation.encode(), weight_bytes)
        outs.append(np.array(out, dtype=np.uint8))
    return outs, ram


def _model_from(specs: list[ConvSpec], weight_bytes: int = 1):
    last = specs[-1]
    n = int(np.prod(last.out_shape))
    last.main_out = 0
    b = V3Builder(main_mem_usage=max(n, 8), eight_bit=weight_bytes == 1)
    for s in specs:
        b.add_conv(s)
    b.add_output(0, n)
    return load_kmodel(b.build())


def _weights(rng, oc, ic, k, dw, hi=256):
    return rng.integers(0, hi, size=(oc, 1 if dw else ic, k, k)).astype(np.uint16 if hi > 256 else np.uint8)


def _check(specs, x, weight_bytes=1, min_distinct=8):
    model = _model_from(specs, weight_bytes)
    steps = list(model.trace(x))
    expected, _ = _run_reference(specs, x, weight_bytes=weight_bytes)
    for i, (step, exp) in enumerate(zip(steps, expected)):
        assert step.output.shape == exp.shape
        diff = int((step.output != exp).sum())
        assert diff == 0, f"layer {i}: {diff} of {exp.size} bytes differ"
        conv = model.steps[i].conv
        # the exact int64 path of the engine agrees too
        inp = x if i == 0 else expected[i - 1]
        np.testing.assert_array_equal(conv.run_reference(inp), exp)
    assert len(np.unique(expected[-1])) >= min_distinct, "calibration failed: the case would not test much"
    out = model.run(x)[0]
    np.testing.assert_array_equal(out, expected[-1])
    return model


@pytest.mark.parametrize("pool_type", range(10))
def test_every_pool_type(pool_type):
    rng = np.random.default_rng(100 + pool_type)
    x = rng.integers(0, 256, size=(3, 12, 16), dtype=np.uint8)
    spec = ConvSpec(in_shape=(3, 12, 16), out_channels=5, weights=_weights(rng, 5, 3, 3, False), kernel=3,
                    pool_type=pool_type, arg_x=-120 << 15, shr_x=15, src_row=10, dst_row=200)
    _check([_calibrate(spec, x, rng)], x)


@pytest.mark.parametrize("height", [4, 7, 8, 9])
@pytest.mark.parametrize("pool_type", [0, 1, 3, 8, 9])
def test_depthwise_row_pairs_odd_and_even_heights(height, pool_type):
    """The compiled 3×3 depthwise kernel makes two conv rows per pass (consecutive output rows,
    or the rows of a pool window): odd heights leave a single last row, pools 8/9 clamp the
    window's second row at the bottom edge. Same bytes as the int64 reference."""
    rng = np.random.default_rng(2300 + 10 * height + pool_type)
    c, w = 6, 12
    x = rng.integers(0, 256, size=(c, height, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, height, w), out_channels=c, weights=_weights(rng, c, c, 3, True), kernel=3, depthwise=True,
                    pool_type=pool_type, pad_value=int(rng.integers(0, 256)), arg_x=-110 << 15, shr_x=15, src_row=0, dst_row=300)
    spec = _calibrate(spec, x, rng)
    conv = _prepared(spec)
    np.testing.assert_array_equal(conv.run(x), conv.run_reference(x))


#: (pool type, heights) of the float32 depthwise cases: heights around its 4-row blocks
_DW_F32_CASES = [(p, h) for p in range(10) for h in (4, 5, 6, 7, 8, 9, 13)] + [(0, 1), (0, 2), (0, 3), (5, 2), (6, 3), (8, 2), (9, 3)]


@pytest.mark.kpu_engines("fast-f32", "fast-u8s8")
@pytest.mark.parametrize("pool_type,height", _DW_F32_CASES)
def test_depthwise_float32_blocks_every_pool_and_height(kpu_engine, pool_type, height):
    """The 3×3 depthwise kernel on float32 sums (``kernels.depthwise3_f32``: rows in blocks of
    four, padding folded into its input rows, pools finished per row or, without a pool, per
    block) against the int64 reference, for every pool and heights that leave 1–3 rows after
    the last full block; ``fast-u8s8`` (no f32 in the products) takes the int16 kernel on the
    same cases."""
    rng = np.random.default_rng(4100 + 20 * pool_type + height)
    c, w = 6, 11
    x = rng.integers(0, 256, size=(c, height, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, height, w), out_channels=c, weights=_weights(rng, c, c, 3, True), kernel=3, depthwise=True,
                    pool_type=pool_type, pad_value=int(rng.integers(0, 256)), arg_x=-120 << 15, shr_x=15, src_row=0,
                    dst_row=300)
    spec = _calibrate(spec, x, rng)
    conv = _prepared(spec)
    assert conv._hwc is not None and conv._hwc.dw_sums == ("f32" if kpu_engine == "fast-f32" else "int16")
    want = conv.run_reference(x)
    np.testing.assert_array_equal(conv.run(x), want)
    assert len(np.unique(want)) >= min(8, want.size // 4), "calibration failed: the case would not test much"


@pytest.mark.kpu_engines("fast-f32")
@pytest.mark.parametrize("channels,width", [(1, 5), (16, 20), (33, 9), (256, 4)])
def test_depthwise_float32_channels_and_extreme_inputs(channels, width):
    """Channel counts that do or do not divide the weight tile, and the sums' extremes: maps of
    0 and 255 under weights of 0 and 255 (|x − 128|·Σ|w| at its 8-bit maximum)."""
    rng = np.random.default_rng(4300 + channels)
    h = 9
    x = rng.integers(0, 256, size=(channels, h, width), dtype=np.uint8)
    x[:, :3] = 0
    x[:, 5:7] = 255
    wts = _weights(rng, channels, channels, 3, True)
    wts[: channels // 2 + 1, :, :2] = 255
    wts[channels // 2 :, :, 2] = 0
    for pad, ax in ((0, -255 << 15), (255, 0), (128, -128 << 15)):
        spec = ConvSpec(in_shape=(channels, h, width), out_channels=channels, weights=wts, kernel=3, depthwise=True,
                        pad_value=pad, arg_x=ax, shr_x=15, src_row=0, dst_row=600)
        spec = _calibrate(spec, x, rng)
        conv = _prepared(spec)
        assert conv._hwc is not None and conv._hwc.dw_sums == "f32"
        want = conv.run_reference(x)
        np.testing.assert_array_equal(conv.run(x), want)
        assert len(np.unique(want)) >= 4


@pytest.mark.kpu_engines("fast-f32")
@pytest.mark.parametrize("height", [1, 4, 7])
def test_depthwise_float32_flat_kernel_and_its_forced_fallback(monkeypatch, height):
    """No-pool float32 layers take ``kernels.depthwise3_f32_flat`` (constant strides); with the
    row limit lowered below the layer's padded row they take ``depthwise3_f32``: both give the
    int64 reference's bytes."""
    from maixemu.kmodel.kpu import hwc

    rng = np.random.default_rng(4500 + height)
    c, w = 16, 21
    x = rng.integers(0, 256, size=(c, height, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, height, w), out_channels=c, weights=_weights(rng, c, c, 3, True), kernel=3, depthwise=True,
                    pad_value=int(rng.integers(0, 256)), arg_x=-120 << 15, shr_x=15, src_row=0, dst_row=300)
    spec = _calibrate(spec, x, rng)
    want = _prepared(spec).run_reference(x)
    for limit, flat in (((w + 2) * c, True), ((w + 2) * c - 1, False)):
        monkeypatch.setattr(hwc, "DW_ROW_STRIDE", limit)
        conv = _prepared(spec)
        assert conv._hwc is not None and conv._hwc.dw_sums == "f32" and bool(conv._hwc.wf.size) == flat
        np.testing.assert_array_equal(conv.run(x), want)
    assert len(np.unique(want)) >= min(8, want.size // 4)


@pytest.mark.kpu_engines("fast-f32")
def test_depthwise_float32_flat_kernel_at_its_row_strides():
    """``depthwise3_f32_flat`` on maps whose padded row fills ``DW_ROW_STRIDE`` and whose sum row
    fills ``DW_SUM_STRIDE`` exactly (wider than a KPU map: the kernel is called directly) gives
    ``depthwise3_f32``'s bytes; ``_dw_flat_weights`` refuses one pixel more, pools, and other sums."""
    from maixemu.kmodel.kpu import fast, hwc

    kn = fast.kernels()
    assert (kn.DW_ROW_STRIDE, kn.DW_SUM_STRIDE, kn.DW_TAP_STRIDE) == (hwc.DW_ROW_STRIDE, hwc.DW_SUM_STRIDE, hwc.DW_TAP_STRIDE)
    c = 16
    w = hwc.DW_ROW_STRIDE // c - 2
    assert (w + 2) * c == hwc.DW_ROW_STRIDE and w * c <= hwc.DW_SUM_STRIDE
    rng = np.random.default_rng(4600)
    small = np.zeros((c, 5, 8), np.uint8)
    spec = ConvSpec(in_shape=(c, 5, 8), out_channels=c, weights=_weights(rng, c, c, 3, True), kernel=3, depthwise=True,
                    pad_value=77, arg_x=-120 << 15, shr_x=15, src_row=0, dst_row=300)
    spec = _calibrate(spec, rng.integers(0, 256, size=small.shape, dtype=np.uint8), rng)
    path = _prepared(spec)._hwc
    assert path is not None and path.wf.size
    for h in (1, 5, 6):
        x = rng.integers(0, 256, size=(h, w, c), dtype=np.uint8)
        x[:, : w // 3] = 255
        got = np.empty((h, w, c), np.uint8)
        ring = np.full(6 * kn.DW_ROW_STRIDE, np.nan, np.float32)
        sums = np.full(4 * kn.DW_SUM_STRIDE, np.nan, np.float32)
        kn.depthwise3_f32_flat(x, path.wf, path.wt.shape[1], path.pad, got, ring, sums, *path.bn, *path.act.args())
        want = np.empty_like(got)
        ring2 = np.empty(kn.DW_RING * (w + 2) * c, np.float32)
        rows = np.empty(4 * w * c, np.float32)
        kn.depthwise3_f32(x, np.ascontiguousarray(path.wt), path.pad, want, ring2, rows, *path.pool, *path.bn, *path.act.args())
        np.testing.assert_array_equal(got, want)
        assert len(np.unique(want)) >= 8
    wt = np.ascontiguousarray(path.wt)
    assert hwc._dw_flat_weights(wt, "f32", (1, 1, 0, 0, 0), (4, w, c), (4, w)).size == 9 * hwc.DW_TAP_STRIDE
    assert hwc._dw_flat_weights(wt, "f32", (1, 1, 0, 0, 0), (4, w + 1, c), (4, w + 1)).size == 0
    assert hwc._dw_flat_weights(wt, "f32", (2, 2, 0, 0, 1), (4, 8, c), (2, 4)).size == 0
    assert hwc._dw_flat_weights(wt, "f32", (1, 2, 0, 0, 0), (4, 8, c), (2, 4)).size == 0
    assert hwc._dw_flat_weights(wt.astype(np.int16), "int16", (1, 1, 0, 0, 0), (4, 8, c), (4, 8)).size == 0


def test_depthwise_sums_choice_follows_the_float32_bound(monkeypatch):
    """``_dw_sums``: float32 only for 3×3 while every channel's 128·Σ|w| stays below 2**24, f32
    is an allowed product and the layer is at most ``DW_F32_MAX_CHANNELS`` wide; else int16
    (|w| <= 255) or int64."""
    from maixemu.kmodel.kpu.hwc import _dw_sums

    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", "auto")
    edge = (1 << 24) // 128  # Σ|w| of a channel at the bound
    below = np.array([[edge - 1 - 8 * 255] + [255] * 8, [-5] * 9])
    at = np.array([[edge - 8 * 255] + [255] * 8, [-5] * 9])
    assert _dw_sums(below, 3) == "f32"
    assert _dw_sums(at, 3) == "int64"
    assert _dw_sums(np.full((2, 9), -255), 3) == "f32"
    assert _dw_sums(np.full((2, 1), 7), 1) == "int16"
    assert _dw_sums(np.full((512, 9), 3), 3) == "f32"
    assert _dw_sums(np.full((513, 9), 3), 3) == "int16"  # (wide layers: the int16 kernel is faster)
    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", "u8s8,f64")
    assert _dw_sums(np.full((2, 9), -255), 3) == "int16"


@pytest.mark.parametrize("width", [8, 16, 20, 32, 40, 70])
@pytest.mark.parametrize("kernel", [1, 3])
def test_depthwise_widths(width, kernel):
    rng = np.random.default_rng(width * 10 + kernel)
    x = rng.integers(0, 256, size=(5, 6, width), dtype=np.uint8)
    spec = ConvSpec(in_shape=(5, 6, width), out_channels=5, weights=_weights(rng, 5, 5, kernel, True), kernel=kernel,
                    depthwise=True, arg_x=-100 << 15, shr_x=15, pad_value=int(rng.integers(0, 256)), src_row=0, dst_row=300)
    _check([_calibrate(spec, x, rng)], x)


@pytest.mark.parametrize("width", [12, 32, 33, 64, 100])
def test_pointwise_widths_and_layouts(width):
    rng = np.random.default_rng(width)
    x = rng.integers(0, 256, size=(6, 5, width), dtype=np.uint8)
    spec = ConvSpec(in_shape=(6, 5, width), out_channels=7, weights=_weights(rng, 7, 6, 1, False), kernel=1,
                    arg_x=-128 << 15, shr_x=15, src_row=1000, dst_row=2000)
    _check([_calibrate(spec, x, rng)], x)


def test_offsets_pad_value_and_arg_add():
    """yolo-style quantisation: non-zero pad_value, arg_w with shr_w, arg_add counted once per input channel."""
    rng = np.random.default_rng(7)
    x = rng.integers(0, 256, size=(4, 9, 18), dtype=np.uint8)
    spec = ConvSpec(in_shape=(4, 9, 18), out_channels=6, weights=_weights(rng, 6, 4, 3, False), kernel=3,
                    pad_value=37, arg_x=-134 << 15, shr_x=15, arg_w=-(23 << 15) - 12345, shr_w=15, arg_add=3887,
                    src_row=50, dst_row=400)
    _check([_calibrate(spec, x, rng)], x)


def test_arg_x_not_a_multiple_takes_the_exact_path():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 256, size=(3, 8, 8), dtype=np.uint8)
    spec = ConvSpec(in_shape=(3, 8, 8), out_channels=4, weights=_weights(rng, 4, 3, 3, False), kernel=3,
                    arg_x=-(120 << 15) + 777, shr_x=15, arg_w=-5000, shr_w=3, arg_add=-99, src_row=0, dst_row=64)
    model = _check([_calibrate(spec, x, rng)], x)
    assert not model.steps[0].conv.fast


def test_negative_batchnorm_mul_and_large_shifts():
    rng = np.random.default_rng(9)
    x = rng.integers(0, 256, size=(3, 10, 10), dtype=np.uint8)
    spec = ConvSpec(in_shape=(3, 10, 10), out_channels=4, weights=_weights(rng, 4, 3, 3, False), kernel=3,
                    pool_type=1, arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=64)
    spec = _calibrate(spec, x, rng)
    spec.bn_mul = [-m for m in spec.bn_mul[:2]] + list(spec.bn_mul[2:])
    spec.bn_add = [-a + 200 * 1024 for a in spec.bn_add[:2]] + list(spec.bn_add[2:])
    _check([spec], x)


def _leaky(rng) -> Activation:
    """A 16-segment table like the V3 leaky ReLU: stepped biases, some segments non-monotone."""
    xs = sorted(int(v) for v in rng.integers(-300_000, 300_000, size=15))
    xs = [-(1 << 35)] + xs
    ym = [int(v) for v in rng.integers(50, 900, size=16)]
    ym[3] = -int(rng.integers(1, 500))  # a negative slope (simulation rounding quirk applies)
    sh = [int(v) for v in rng.integers(18, 22, size=16)]
    bias = [int(v) for v in rng.integers(0, 120, size=16)]
    return Activation(xs, ym, sh, bias)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_activation_segments(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=(3, 8, 12), dtype=np.uint8)
    spec = ConvSpec(in_shape=(3, 8, 12), out_channels=4, weights=_weights(rng, 4, 3, 3, False), kernel=3,
                    pool_type=[0, 1, 9][seed - 1], arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=64)
    spec = _calibrate(spec, x, rng, spread=300)
    spec.activation = _leaky(rng)
    _check([spec], x)


def test_activation_ties_round_half_to_even():
    """bn values that land exactly on .5 after the shift: half-to-even, as nncase's simulation."""
    act = K.decode_activation(Activation.relu().encode())
    bn = np.array([512, 1536, 2560, 513, 1535, 0, 1], dtype=np.int64)
    got = K.activate(bn, act)
    want = [ref.activation(int(v), Activation.relu().encode()) for v in bn]
    assert got.tolist() == want == [0, 2, 2, 1, 1, 0, 0]


def _random_activation(rng) -> K.ActivationTable:
    """Any 16 segments the format can hold: unsorted starts, negative and zero slopes, shifts
    0..63 (clamped to 60), biases 0..255."""
    span = int(rng.choice([1 << 8, 1 << 16, 1 << 24]))
    return K.ActivationTable(
        x_start=np.sort(rng.integers(-span, span, size=16)) if rng.random() < 0.7 else rng.integers(-span, span, size=16),
        y_mul=rng.choice([rng.integers(-40000, 40000, size=16), rng.integers(-3, 4, size=16), rng.integers(0, 1 << 15, size=16)]),
        shift=rng.choice([rng.integers(0, 64, size=16), rng.integers(0, 4, size=16), rng.integers(14, 24, size=16)]),
        bias=rng.integers(0, 256, size=16),
    )


@NUMPY_PATH_DETAIL
def test_activation_table_equals_the_exact_activation_entry_by_entry():
    """``activation_lut`` fills tables as runs between computed steps (rising segments) and
    entry by entry only where a falling segment is not clipped: every entry must still be the
    int64 ``activate`` of its bn, ties, clipping and the falling segments' rounding included."""
    rng = np.random.default_rng(2024)
    checked = 0
    while checked < 150:
        act = _random_activation(rng)
        first = int(act.x_start.min())
        lo = first + 1 + int(rng.integers(0, 1 << int(rng.integers(0, 20))))
        hi = lo + int(rng.integers(0, 1 << int(rng.integers(0, 18))))
        bn = np.arange(lo, hi + 1, dtype=np.int64)
        np.testing.assert_array_equal(K.activation_lut(act, lo, hi), K.activate(bn, act), err_msg=f"{act} {lo} {hi}")
        checked += 1
    with pytest.raises(Exception, match="below every activation segment start"):
        K.activation_lut(_random_activation(rng), -(1 << 30), -(1 << 30) + 10)


@NUMPY_PATH_DETAIL
def test_activation_table_of_the_shared_models_equals_the_exact_activation():
    """The same on every activation and range the sample models' layers ask for."""
    from maixemu.kmodel.kpu import activation

    asked = []
    real = activation.activation_lut

    def spy(act, lo, hi):
        asked.append((act, lo, hi))
        return real(act, lo, hi)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(activation, "activation_lut", spy)
        mp.setattr(activation, "_LUT_CACHE", {})
        mp.setattr(activation, "_CENTERED_CACHE", {})
        from maixemu.kmodel.kpu import hwc
        mp.setattr(hwc, "activation_lut", spy)
        for name in ("v4/ulffd_landmark", "v4/slim_320_face", "v3/face_detect_320x240"):
            path = shared_path("models", *f"{name}.kmodel".split("/"))
            if not path.exists():
                pytest.skip(f"{path} is not there")
            model = load_kmodel(path.read_bytes())
            # (the numpy plans make their tables when a run first needs them)
            model.run(*[np.zeros(spec.shape, spec.dtype) for spec in model.inputs])
    assert asked
    rng = np.random.default_rng(7)
    for act, lo, hi in asked:
        got = real(act, lo, hi)
        # every entry next to a change of value (where a wrong step would show), plus random ones
        change = np.flatnonzero(got[1:] != got[:-1])
        at = np.unique(np.concatenate([change, change + 1, [0, hi - lo], rng.integers(0, hi - lo + 1, size=20000)]))
        np.testing.assert_array_equal(got[at], K.activate(lo + at, act))


def test_sixteen_bit_weights():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 256, size=(2, 6, 6), dtype=np.uint8)
    spec = ConvSpec(in_shape=(2, 6, 6), out_channels=3, weights=_weights(rng, 3, 2, 3, False, hi=65536), kernel=3,
                    arg_x=-(30000 << 4), shr_x=4, src_row=0, dst_row=64)
    _check([_calibrate(spec, x, rng, weight_bytes=2)], x, weight_bytes=2)


def test_weight_load_tiling_does_not_change_results():
    rng = np.random.default_rng(12)
    x = rng.integers(0, 256, size=(4, 6, 6), dtype=np.uint8)
    spec = ConvSpec(in_shape=(4, 6, 6), out_channels=9, weights=_weights(rng, 9, 4, 1, False), kernel=1,
                    arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=64, o_ch_num_coef=4)
    _check([_calibrate(spec, x, rng)], x)


@NUMPY_PATH_DETAIL
def test_large_sums_are_chunked_exactly():
    """512 input channels × 3×3 with extreme weights: |G| bound beyond 2**24 forces K chunks."""
    rng = np.random.default_rng(13)
    x = rng.integers(0, 256, size=(512, 4, 4), dtype=np.uint8)
    w = np.where(rng.random((2, 512, 3, 3)) < 0.5, 0, 255).astype(np.uint8)
    spec = ConvSpec(in_shape=(512, 4, 4), out_channels=2, weights=w, kernel=3, arg_x=0, shr_x=0, src_row=0, dst_row=20000)
    spec = _calibrate(spec, x, rng)
    model = _check([spec], x, min_distinct=4)
    conv = model.steps[0].conv
    assert conv.fast and (len(conv._gemm_chunks) > 1 or conv._gemm_dtype == np.float64)


def test_chain_with_aliasing_and_persistence():
    """conv2 overwrites part of conv1's output; conv3 reads the mixture from the arena; memories persist."""
    rng = np.random.default_rng(14)
    x1 = rng.integers(0, 256, size=(2, 8, 8), dtype=np.uint8)
    s1 = ConvSpec(in_shape=(2, 8, 8), out_channels=2, weights=_weights(rng, 2, 2, 3, False), kernel=3,
                  arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=100)
    s1 = _calibrate(s1, x1, rng)
    y1 = _run_reference([s1], x1)[0][0]
    s2 = ConvSpec(in_shape=(2, 8, 8), out_channels=1, weights=_weights(rng, 1, 2, 1, False), kernel=1,
                  arg_x=-128 << 15, shr_x=15, src_row=100, dst_row=104)
    s2 = _calibrate(s2, y1, rng)
    ram = bytearray(2 * 1024 * 1024)
    ref.upload(ram, 0, x1.tolist())
    ref.conv_layer(ram, s1.registers(), s1.weights.tobytes(), _bn(s1), s1.activation.encode())
    ref.conv_layer(ram, s2.registers(), s2.weights.tobytes(), _bn(s2), s2.activation.encode())
    mixed = np.array(ref.download(ram, 100 * 64, 2, 8, 8), dtype=np.uint8)
    s3 = ConvSpec(in_shape=(2, 8, 8), out_channels=3, weights=_weights(rng, 3, 2, 3, False), kernel=3,
                  arg_x=-128 << 15, shr_x=15, src_row=100, dst_row=300, main_out=0)
    s3 = _calibrate(s3, mixed, rng)
    b = V3Builder(main_mem_usage=3 * 64)
    for s in (s1, s2, s3):
        b.add_conv(s)
    b.add_output(0, 3 * 64)
    model = load_kmodel(b.build())
    assert 2 in model._plan.materialize and 1 in model._plan.materialize
    ram = bytearray(2 * 1024 * 1024)
    for run in range(2):
        x = rng.integers(0, 256, size=(2, 8, 8), dtype=np.uint8)
        exp, ram = _run_reference([s1, s2, s3], x, ram)
        got = model.run(x)[0]
        np.testing.assert_array_equal(got, exp[-1], err_msg=f"run {run}")
    # a partial run (kpu.set_layers) then a full run still match the device
    x = rng.integers(0, 256, size=(2, 8, 8), dtype=np.uint8)
    steps = list(model.trace(x, limit=1))
    exp, ram = _run_reference([s1], x, ram)
    np.testing.assert_array_equal(steps[-1].output, exp[0])
    x = rng.integers(0, 256, size=(2, 8, 8), dtype=np.uint8)
    exp, ram = _run_reference([s1, s2, s3], x, ram)
    np.testing.assert_array_equal(model.run(x)[0], exp[-1])
    # a trace the caller abandons after two layers leaves the memories as the device would
    x = rng.integers(0, 256, size=(2, 8, 8), dtype=np.uint8)
    trace = model.trace(x)
    next(trace), next(trace)
    trace.close()
    _, ram = _run_reference([s1, s2], x, ram)
    x = rng.integers(0, 256, size=(2, 8, 8), dtype=np.uint8)
    exp, ram = _run_reference([s1, s2, s3], x, ram)
    np.testing.assert_array_equal(model.run(x)[0], exp[-1])


def _bn(spec):
    from maixemu.kmodel.build import encode_batchnorm

    return encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift)


def test_fully_connected_on_the_kpu_through_padding():
    """mnist-style tail: QUANTIZE → ADD_PADDING (4×4 layout, stale pixels kept) → 1×1 conv → REMOVE_PADDING."""
    rng = np.random.default_rng(15)
    c_in, c_out = 6, 5
    w = _weights(rng, c_out, c_in, 1, False)
    spec = ConvSpec(in_shape=(c_in, 4, 4), out_channels=c_out, weights=w, kernel=1, arg_x=-128 << 15, shr_x=15,
                    src_row=500, dst_row=600, main_out=64)
    probe = rng.integers(0, 256, size=(c_in, 4, 4), dtype=np.uint8)
    spec = _calibrate(spec, probe, rng)
    b = V3Builder(main_mem_usage=256)
    # input enters as floats through FULLY_CONNECTED (identity) then QUANTIZE
    b.add_fully_connected(0, 32 * 4 // 4 * 0 + 128, np.eye(c_in, dtype=np.float32), np.zeros(c_in, np.float32))
    b.add_quantize(128, 160, c_in, 1.0, 0.0)
    b.add_padding(160, 500, c_in)
    b.add_conv(spec)
    b.remove_padding(64, 200, c_out)
    b.add_output(200, c_out)
    model = load_kmodel(b.build())
    vals = rng.integers(0, 256, size=c_in).astype(np.float32)
    ram = bytearray(2 * 1024 * 1024)
    got = model.run(vals)[0]
    # reference: ADD_PADDING writes pixel (0,0) of each channel into zeroed KPU RAM
    for c in range(c_in):
        ram[500 * 64 + (c // 4) * 256 + (c % 4) * 16] = int(vals[c])
    out = ref.conv_layer(ram, spec.registers(), w.tobytes(), _bn(spec), spec.activation.encode())
    np.testing.assert_array_equal(got, [out[c][0][0] for c in range(c_out)])


def test_batches_on_kpuconv_directly():
    rng = np.random.default_rng(16)
    x = rng.integers(0, 256, size=(3, 2, 8, 8), dtype=np.uint8)
    spec = ConvSpec(in_shape=(2, 8, 8), out_channels=3, weights=_weights(rng, 3, 2, 3, False), kernel=3,
                    pool_type=1, arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=64)
    spec = _calibrate(spec, x[0], rng)
    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(_bn(spec), "<u8"), spec.activation.encode())
    got = conv.run(x)
    assert got.shape == (3, 3, 4, 4)
    for n in range(3):
        np.testing.assert_array_equal(got[n], _run_reference([spec], x[n])[0][0])


@pytest.mark.parametrize("shape", [(1, 3, 5), (3, 4, 16), (5, 2, 17), (3, 3, 32), (2, 2, 33), (2, 3, 130)])
def test_kpu_ram_layout_matches_the_document(shape):
    rng = np.random.default_rng(sum(shape))
    chw = rng.integers(0, 256, size=shape, dtype=np.uint8)
    ram = K.KpuRam()
    ram.upload(640, chw)
    mirror = bytearray(2 * 1024 * 1024)
    ref.upload(mirror, 640, chw.tolist())
    assert bytes(ram.arena) == bytes(mirror)
    np.testing.assert_array_equal(ram.download(640, shape), chw)
    assert K.kpu_bytes(*shape) >= int(K.layout_indices(640, shape).max()) + 1 - 640


def test_register_sign_extension_and_rejections():
    spec = ConvSpec(in_shape=(1, 8, 8), out_channels=1, weights=np.zeros((1, 1, 3, 3), np.uint8), arg_x=-(1 << 23),
                    arg_w=(1 << 23) - 1, arg_add=-(1 << 39), shr_x=15, shr_w=3)
    words = spec.registers()
    regs = K.decode_registers(words)
    assert (regs.arg_x, regs.arg_w, regs.arg_add) == (-(1 << 23), (1 << 23) - 1, -(1 << 39))
    garbage = list(words)
    garbage[10] |= 0xFFFF << 40  # reserved bits above arg_add are masked
    assert K.decode_registers(garbage).arg_add == -(1 << 39)
    from maixemu.kmodel.errors import KmodelUnsupportedError

    for word, bit, name in [(0, 2, "full_add"), (4, 3, "pad_type"), (4, 8, "first_stride"), (4, 9, "bypass_conv")]:
        bad = list(words)
        bad[word] |= 1 << bit
        with pytest.raises(KmodelUnsupportedError, match=name):
            K.decode_registers(bad)
    act = Activation.relu().encode()
    words18 = list(struct.unpack("<18Q", act))
    words18[10] |= 0xC << 60  # garbage in reserved bits 60-63 of a segment
    table = K.decode_activation(struct.pack("<18Q", *words18))
    assert int(table.x_start[10]) == 0 and int(table.y_mul[10]) == 1024


@NUMPY_PATH_DETAIL
@pytest.mark.parametrize("pool_type,kernel,dw", [(0, 3, False), (1, 3, False), (2, 1, False), (3, 3, True), (4, 1, False),
                                                 (5, 3, False), (7, 1, True), (8, 3, False), (9, 3, True)])
def test_row_tiling_matches_untiled(monkeypatch, pool_type, kernel, dw):
    """Large maps are processed in row tiles; forcing tiny tiles must not change a byte."""
    rng = np.random.default_rng(200 + pool_type)
    c, h, w = 4, 22, 36
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=4, weights=_weights(rng, 4, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=9, arg_x=-110 << 15, shr_x=15, src_row=0, dst_row=4000)
    spec = _calibrate(spec, x, rng)
    from maixemu.kmodel.build import encode_batchnorm

    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"), spec.activation.encode())
    whole = conv.run(x)
    monkeypatch.setattr(K.KpuConv, "TILE_BYTES", 1)
    assert conv._tile_rows() < h or pool_type in (8, 9)
    np.testing.assert_array_equal(conv.run(x), whole)
    np.testing.assert_array_equal(whole, conv.run_reference(x))
    assert len(np.unique(whole)) >= 8


@pytest.mark.kpu_engines("fast-u8s8", "fast-u8u8", "fast-f32", "fast-f64")
@pytest.mark.parametrize("pool_type", range(10))
@pytest.mark.parametrize("channels,kernel", [(1, 3), (2, 3), (3, 3), (4, 3), (8, 3), (8, 1)])
def test_compiled_row_tiles_match_the_whole_map(monkeypatch, pool_type, channels, kernel):
    """The compiled path sums and finishes a layer in row tiles of its GEMM grid (the camera
    image's patch rows of 16 and 32 bytes and its packed-word layout too): one output row per
    tile must give the whole map's bytes."""
    from maixemu.kmodel.build import encode_batchnorm
    from maixemu.kmodel.kpu.hwc import HwcPath

    monkeypatch.setenv("MAIXEMU_KPU_SMALL_COST", "0")  # (the HwcPath's own tiles: kpu.small has test_small_layers)
    rng = np.random.default_rng(300 + pool_type + channels)
    c, h, w = channels, 21, 34
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=6, weights=_weights(rng, 6, c, kernel, False), kernel=kernel,
                    pool_type=pool_type, pad_value=200, arg_x=-120 << 15, shr_x=15, src_row=0, dst_row=4000)
    spec = _calibrate(spec, x, rng)

    def prepared():
        return K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                                 np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"),
                                 spec.activation.encode())

    whole = prepared()
    assert len(whole._hwc.tiles) == 1
    monkeypatch.setattr(HwcPath, "TILE_BYTES", 1)
    tiled = prepared()
    assert len(tiled._hwc.tiles) == tiled.out_shape[1] and tiled.path == whole.path
    if whole._hwc.gemm is not None and kernel == 3 and channels <= 4:  # (an int8 product took the camera layer)
        assert whole._hwc.products.endswith("-patch" if channels <= 3 else "-rgbx"), whole.path
    want = whole.run_reference(x)
    np.testing.assert_array_equal(whole.run(x), want)
    np.testing.assert_array_equal(tiled.run(x), want)
    assert len(np.unique(want)) >= 8


@NUMPY_PATH_DETAIL
def test_float64_gemm_when_float32_chunks_would_be_too_many():
    """16-bit weights near 65535 with no offset: every tap alone nearly fills float32's exact
    range, so the engine switches to one float64 GEMM (exact below 2**53)."""
    rng = np.random.default_rng(17)
    x = rng.integers(0, 256, size=(4, 6, 6), dtype=np.uint8)
    w = rng.integers(60000, 65536, size=(3, 4, 3, 3)).astype(np.uint16)
    spec = ConvSpec(in_shape=(4, 6, 6), out_channels=3, weights=w, kernel=3, arg_x=0, shr_x=0, src_row=0, dst_row=64)
    spec = _calibrate(spec, x, rng, weight_bytes=2)
    model = _check([spec], x, weight_bytes=2, min_distinct=4)
    conv = model.steps[0].conv
    assert conv.fast and conv._gemm_dtype == np.float64


@NUMPY_PATH_DETAIL
def test_threaded_work_items_give_the_same_bytes(monkeypatch):
    """MAIXEMU_THREADS=2 hands big layers to a thread pool: identical output to the sequential run."""
    rng = np.random.default_rng(18)
    x = rng.integers(0, 256, size=(8, 100, 256), dtype=np.uint8)
    results = []
    for threads in ("1", "2"):
        monkeypatch.setenv("MAIXEMU_THREADS", threads)
        for dw, k, oc in ((False, 3, 48), (True, 3, 8), (False, 1, 64)):
            spec = ConvSpec(in_shape=(8, 100, 256), out_channels=oc, weights=_weights(np.random.default_rng(oc + k), oc, 8, k, dw),
                            kernel=k, depthwise=dw, pool_type=1, arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=2000)
            spec = _calibrate(spec, x, np.random.default_rng(5))
            from maixemu.kmodel.build import encode_batchnorm

            conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                                     np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"),
                                     spec.activation.encode())
            if threads == "2":
                assert conv._worth_threads() and len(conv.work_items(2)) > 1
                if conv._hwc is not None and not dw:  # the compiled path: row tiles for the pool
                    assert conv._hwc.threads == 2 and len(conv._hwc.tiles) >= 2
            results.append(conv.run(x))
    for a, b in zip(results[:3], results[3:]):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("kernel,pool_type", [(3, 0), (3, 5), (1, 0)])
def test_sixteen_bit_depthwise(kernel, pool_type):
    """16-bit depthwise taps overflow float32's exact range per channel: the engine must widen."""
    rng = np.random.default_rng(19 + kernel)
    x = rng.integers(0, 256, size=(3, 8, 10), dtype=np.uint8)
    x[:, :4] = 255  # saturated rows: sums of 9 taps reach ~2.5e7 > 2**24 (float32 would drop bits)
    w = (rng.integers(9000, 12500, size=(3, 1, kernel, kernel)) * 2 + 1).astype(np.uint16)
    spec = ConvSpec(in_shape=(3, 8, 10), out_channels=3, weights=w, kernel=kernel, depthwise=True, pool_type=pool_type,
                    arg_x=0, shr_x=0, src_row=0, dst_row=64)
    spec = _calibrate(spec, x, rng, weight_bytes=2)
    model = _check([spec], x, weight_bytes=2, min_distinct=4)
    conv = model.steps[0].conv
    if conv.layout == "HWC":
        return  # the compiled depthwise kernel sums in int64: nothing to widen
    # the sums themselves, before batch-norm could hide a lost bit, are exact
    ax = conv.regs.arg_x >> conv.regs.shr_x
    const = 128 * (conv.weights.astype(np.int64) + ax).sum(axis=1) + conv.const_w
    exact = conv.accumulate_reference(x) - const[:, None, None]
    g = conv._conv_rows(conv._conv_source(K.to_centered(x)), 0, conv._g_geometry()[1])
    want = exact if conv._sample is None else K.pool(exact, pool_type)
    np.testing.assert_array_equal(np.asarray(g, dtype=np.float64), want.astype(np.float64))


@NUMPY_PATH_DETAIL
@pytest.mark.parametrize("pool_type", [1, 3])
@pytest.mark.parametrize("kernel,dw", [(1, False), (3, False), (1, True), (3, True)])
@pytest.mark.parametrize("tiny_tiles", [False, True])
def test_max_pool_phase_path_matches_reference(monkeypatch, pool_type, kernel, dw, tiny_tiles):
    """Max pools before a monotone table run as one GEMM over the window's phases (input split
    into phase planes) and a maximum of the phase blocks: same bytes as the document's order,
    also for sizes that are not multiples of the window and with row tiles."""
    rng = np.random.default_rng(300 + 10 * pool_type + kernel + 2 * dw)
    c, h, w = 5, 18 if pool_type == 1 else 19, 23 if pool_type == 1 else 37
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=5, weights=_weights(rng, 5, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=int(rng.integers(0, 256)), arg_x=-110 << 15, shr_x=15, src_row=0, dst_row=4000)
    spec = _calibrate(spec, x, rng)
    from maixemu.kmodel.build import encode_batchnorm

    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"), spec.activation.encode())
    assert conv.fast and conv._sample is not None and len(conv._sample[1]) == (4 if pool_type == 1 else 16)
    if tiny_tiles:
        monkeypatch.setattr(K.KpuConv, "TILE_BYTES", 1)
        assert dw or conv._tile_rows() < conv.out_shape[1]
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 6


def test_unit_step_buckets_reproduce_the_table():
    """The two-level form of big unit-step tables gives every entry of the table back."""
    rng = np.random.default_rng(41)
    for _ in range(20):
        gaps = rng.integers(300, 3000, size=int(rng.integers(1, 255)))
        steps = np.cumsum(gaps)
        n = int(steps[-1] + rng.integers(1, 5000))
        lut = (np.searchsorted(steps, np.arange(n), side="right") - 128).astype(np.int8)
        scale, first, step = K.unit_step_buckets(lut)
        i = np.arange(n, dtype=np.float64) + rng.random(n) * 0.999  # any real in [i, i+1) floors to i
        q = (i * scale).astype(np.intp)
        np.testing.assert_array_equal(first[q] + (i >= step[q]), lut)
    assert K.unit_step_buckets(np.repeat(np.array([0, 2, 3], np.int8), 1000)) is None  # a step of 2
    assert K.unit_step_buckets(np.repeat(np.array([0, 1, 0], np.int8), 1000)) is None  # a step down
    assert K.unit_step_buckets(np.repeat(np.array([0, 1, 2], np.int8), [1000, 3, 1000])) is None  # steps 3 apart


@NUMPY_PATH_DETAIL
@pytest.mark.parametrize("pool_type,kernel,dw", [(0, 3, False), (1, 1, False), (0, 3, True), (5, 3, False), (2, 1, True)])
def test_bucketed_table_lookup_matches_reference(monkeypatch, pool_type, kernel, dw):
    """Forcing the two-level lookup onto small tables must not change a byte."""
    from maixemu.kmodel.kpu import activation as kpu_activation
    from maixemu.kmodel.kpu import conv as kpu_conv

    monkeypatch.setattr(kpu_conv, "BUCKET_MIN_ENTRIES", 0)
    monkeypatch.setattr(kpu_activation, "_BUCKET_MIN_WIDTH", 1)
    rng = np.random.default_rng(500 + pool_type + kernel)
    c, h, w = 4, 12, 18
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=4, weights=_weights(rng, 4, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=30, arg_x=-110 << 15, shr_x=15, src_row=0, dst_row=4000)
    spec = _calibrate(spec, x, rng)
    from maixemu.kmodel.build import encode_batchnorm

    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"), spec.activation.encode())
    assert conv.fast and conv._fast.buckets is not None
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 6


@pytest.mark.parametrize("pool_type,kernel,dw", [(0, 3, False), (1, 1, False), (0, 3, True), (5, 3, False), (2, 1, True),
                                                 (9, 3, False), (8, 3, True), (3, 1, False)])
def test_direct_segments_match_the_reference(monkeypatch, pool_type, kernel, dw):
    """With no activation table allowed (a table "would need 266 M entries") and the linear form
    off, every engine evaluates the 16 segments directly: the same bytes as the int64 reference,
    never its path."""
    from maixemu.kmodel.kpu import hwc

    monkeypatch.setattr(hwc, "LINEAR_MAX_SEGMENTS", 0)
    rng = np.random.default_rng(900 + pool_type * 7 + kernel)
    c, h, w = 6, 12, 16
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=6, weights=_weights(rng, 6, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=77, arg_x=-110 << 15, shr_x=15, src_row=0, dst_row=4000,
                    activation=Activation.relu(scale_shift=2))
    spec = _calibrate(spec, x, rng, spread=300)
    from maixemu.kmodel.build import encode_batchnorm

    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"), spec.activation.encode(),
                             lut_max_entries=0)
    assert conv.fast and "segments" in conv.path and conv.table_entries == 0
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 6


@pytest.mark.kpu_engines("fast-u8s8", "fast-u8u8", "fast-f32", "fast-f64")
@pytest.mark.parametrize("pool_type,kernel,dw", [(0, 3, False), (1, 1, False), (0, 3, True), (5, 3, False), (9, 3, True), (3, 1, False)])
def test_step_buckets_match_the_reference(monkeypatch, pool_type, kernel, dw):
    """With no full table allowed, a monotone activation runs as step buckets (one word lookup
    per value, built by bisection at load): the same bytes as the int64 reference."""
    from maixemu.kmodel.kpu import hwc

    monkeypatch.setattr(hwc, "HWC_LUT_MAX_ENTRIES", 0)
    monkeypatch.setattr(hwc, "LINEAR_MAX_SEGMENTS", 0)
    rng = np.random.default_rng(1300 + pool_type * 7 + kernel)
    c, h, w = 5, 12, 16
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=5, weights=_weights(rng, 5, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=3, arg_x=-100 << 15, shr_x=15, src_row=0, dst_row=4000)
    spec = _calibrate(spec, x, rng, spread=250)
    from maixemu.kmodel.build import encode_batchnorm

    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"), spec.activation.encode())
    assert "steps" in conv.path
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 6


def _prepared(spec: ConvSpec) -> K.KpuConv:
    from maixemu.kmodel.build import encode_batchnorm

    return K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(),
                             np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8"), spec.activation.encode())


_LAYER_SHAPES = [(0, 3, False), (1, 1, False), (1, 3, False), (0, 3, True), (1, 3, True), (5, 3, False), (5, 3, True),
                 (2, 1, True), (4, 3, False), (9, 3, False), (8, 3, True), (3, 1, False)]


@pytest.mark.kpu_engines("fast-u8s8", "fast-u8u8", "fast-f32", "fast-f64")
@pytest.mark.parametrize("pool_type,kernel,dw", _LAYER_SHAPES)
def test_table_lookup_matches_the_reference(monkeypatch, pool_type, kernel, dw):
    """The compiled path's table lookup (the linear form off, tables of this size before step
    buckets): same bytes as the int64 reference."""
    from maixemu.kmodel.kpu import hwc

    monkeypatch.setattr(hwc, "LINEAR_MAX_SEGMENTS", 0)
    monkeypatch.setattr(hwc, "HWC_SMALL_LUT_ENTRIES", hwc.HWC_LUT_MAX_ENTRIES)
    rng = np.random.default_rng(1700 + pool_type * 7 + kernel + dw)
    c, h, w = 6, 13, 17
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=6, weights=_weights(rng, 6, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=51, arg_x=-105 << 15, shr_x=15, src_row=0, dst_row=4000)
    conv = _prepared(_calibrate(spec, x, rng, spread=260))
    assert "+lut HWC" in conv.path
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 6


def _two_segment_leaky(knee: int) -> Activation:
    """A leaky ReLU of two segments meeting at ``knee``: slope 6/2**20 below, 1024/2**20 above
    (the V4 compiler's form), the upper one with a bias."""
    lowest = -(1 << 35)
    xs = [lowest] * 14 + [knee - (1 << 21), knee]
    ym = [0] * 14 + [6, 1024]
    sh = [0] * 14 + [20, 20]
    bias = [0] * 14 + [0, 12]
    return Activation(xs, ym, sh, bias)


def _biased_relu() -> Activation:
    """A flat floor of 20 below 0, then slope 1024/2**20 from bias 20: one segment in range whose
    formula, continued below 0, falls under the floor (the kernel must clamp first)."""
    lowest = -(1 << 35)
    xs = [lowest] * 15 + [0]
    return Activation(xs, [0] * 15 + [1024], [0] * 15 + [20], [20] * 16)


_LINEAR_FORMS = {"relu": (Activation.relu, 0), "two_segments": (lambda: _two_segment_leaky(60 * 1024), 1),
                 "biased_relu": (_biased_relu, 1)}


@pytest.mark.parametrize("pool_type,kernel,dw", _LAYER_SHAPES)
@pytest.mark.parametrize("form", list(_LINEAR_FORMS))
def test_linear_activation_matches_the_reference(pool_type, kernel, dw, form):
    """One or two segments in the layer's batch-norm range run as float64 arithmetic (no
    table), in the plain form (no clamp, x and bias folded into the batch-norm) or the general
    one: same bytes as the int64 reference on every engine."""
    from maixemu.kmodel.kpu import hwc

    make, plain = _LINEAR_FORMS[form]
    rng = np.random.default_rng(1900 + pool_type * 7 + kernel + dw + 50 * list(_LINEAR_FORMS).index(form))
    c, h, w = 7, 11, 19
    x = rng.integers(0, 256, size=(c, h, w), dtype=np.uint8)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=7, weights=_weights(rng, 7, c, kernel, dw), kernel=kernel, depthwise=dw,
                    pool_type=pool_type, pad_value=200, arg_x=-98 << 15, shr_x=15, src_row=0, dst_row=4000)
    spec = _calibrate(spec, x, rng, spread=240)
    spec.activation = make()
    conv = _prepared(spec)
    if conv.layout == "HWC":
        assert "+linear HWC" in conv.path
        assert conv._hwc.act.lin[0] == (0 if plain == 0 else 1)
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 6


def test_linear_activation_rounds_ties_to_even():
    """bn values exactly half-way between two outputs (bn = 512·odd with the ReLU table's
    1024/2**20): half to even, as ``round_shift``, on every engine."""
    x = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    w = np.full((2, 1, 1, 1), 129, np.uint8)  # w + arg_x >> shr_x = 1: G = x − 128
    spec = ConvSpec(in_shape=(1, 16, 16), out_channels=2, weights=w, kernel=1, pool_type=0, arg_x=-128, shr_x=0,
                    src_row=0, dst_row=100, bn_mul=[512, 1024], bn_add=[512 * 130, 1024 * 130], bn_shift=[0, 1])
    conv = _prepared(spec)
    acc = conv.accumulate_reference(x)
    bn = ((acc * conv.bn.mul[:, None, None]) >> conv.bn.shift[:, None, None]) + conv.bn.add[:, None, None]
    assert ((bn % 1024) == 512).sum() >= 200  # many ties
    if conv.layout == "HWC":
        assert "+linear HWC" in conv.path
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert len(np.unique(got)) >= 100


@pytest.mark.parametrize("bias,plain", [(8, True), (7, False)])
def test_linear_plain_form_folds_x_start_and_bias(bias, plain):
    """A segment with x_start and bias (slope 1/2 from bn = A − 100) over the layer's whole
    batch-norm range [A, A + 255]: the plain form moves both into the batch-norm constant (an
    even bias only: at ties, half-to-even rounding of v + 7 is not that of v, plus 7); ties (odd
    bn − A) round half to even. Same bytes on every engine."""
    base = 3_000_000
    x = np.arange(256, dtype=np.uint8).reshape(1, 16, 16)
    w = np.full((1, 1, 1, 1), 129, np.uint8)  # w + arg_x >> shr_x = 1: acc = x
    act = Activation([-(1 << 35)] * 15 + [base - 100], [0] * 15 + [128], [0] * 15 + [8], [0] * 15 + [bias])
    spec = ConvSpec(in_shape=(1, 16, 16), out_channels=1, weights=w, kernel=1, pool_type=0, arg_x=-128, shr_x=0,
                    src_row=0, dst_row=100, bn_mul=[1], bn_add=[base], bn_shift=[0], activation=act)
    conv = _prepared(spec)
    if conv.layout == "HWC":
        a = conv._hwc.act
        assert a.mode == 4 and a.lin[0] == (0 if plain else 1)
        assert a.bn_add == (-(base - 100) + bias * 2 if plain else 0)
    got = conv.run(x)
    np.testing.assert_array_equal(got, conv.run_reference(x))
    assert got.min() == 50 + bias and len(np.unique(got)) > 100


@pytest.mark.parametrize("kernel,dw", [(3, True), (1, False)])
def test_a_batch_norm_value_below_every_segment_is_the_layer_error(kpu_engine, monkeypatch, kernel, dw):
    """A table whose every segment starts above the layer's batch-norm values (a corrupt file):
    the device has no segment for them, and every path says so (the KPU layer's error naming
    its table), the compiled paths that take their choices once (a depthwise layer without pool,
    a 1×1 product in one tile) included."""
    monkeypatch.setenv("MAIXEMU_KPU_SMALL_COST", "0")  # (the 1×1 layer on the product, not the small-layer kernel)
    rng = np.random.default_rng(77)
    c, h, w = 8, 6, 10
    top = (1 << 35) - 16
    above = Activation([top + i for i in range(16)], [1] * 16, [0] * 16, [0] * 16)
    spec = ConvSpec(in_shape=(c, h, w), out_channels=c, weights=_weights(rng, c, c, kernel, dw), kernel=kernel, depthwise=dw,
                    arg_x=-128 << 15, shr_x=15, src_row=0, dst_row=300, activation=above)
    spec.bn_mul, spec.bn_add, spec.bn_shift = [1] * c, [0] * c, [0] * c
    model = _model_from([spec])
    x = rng.integers(0, 256, (c, h, w), dtype=np.uint8)
    for _ in range(2):  # (the first run of a compiled path makes its choices, the second takes them)
        with pytest.raises(KmodelRuntimeError, match="below every activation segment start"):
            model.run(x)
