"""Small 1×1 KPU layers in one compiled call (``kpu.small``) against the int64 reference.

The path is forced on every eligible layer of the public models (``MAIXEMU_KPU_SMALL_COST``:
big layers too, so each model's 1×1 layers all take it) and each layer's output is compared with
``KpuConv.run_reference`` (the document's arithmetic verbatim) on random and extreme maps; the
models' outputs with the path forced are compared with the numpy engine's. Synthetic layers
cover the pools and activation modes the public models do not have.
"""

from __future__ import annotations

import numpy as np
import pytest

from _shared import shared_path
from maixemu.kmodel import load_kmodel
from maixemu.kmodel import kpu as K
from maixemu.kmodel.build import Activation, ConvSpec
from maixemu.kmodel.kpu import fast, small
from test_kpu_configs import _bn, _calibrate, _weights

MODELS = [("v3", "mnist"), ("v3", "face_detect_320x240"), ("v4", "mask_detect"), ("v4", "ulffd_landmark"),
          ("v4", "slim_320_face")]


@pytest.fixture
def forced(monkeypatch):
    """Every eligible layer takes the small path; the compiled engine waits for its kernels."""
    monkeypatch.setenv("MAIXEMU_KPU_SMALL_COST", str(10**12))
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "fast")
    monkeypatch.delenv("MAIXEMU_KPU_PRODUCTS", raising=False)
    monkeypatch.delenv("MAIXEMU_KPU_INT8", raising=False)
    try:
        fast.kernels()
    except fast.FastEngineUnavailable as exc:
        pytest.skip(str(exc))
    from maixemu.kmodel.kpu import int8

    if int8.unavailable_reason():
        pytest.skip(int8.unavailable_reason())


def _convs(model) -> list:
    """The ``KpuConv`` of every KPU layer (V3 steps hold it; V4 nodes close over it)."""
    if hasattr(model, "steps"):
        return [s.conv for s in model.steps if s.conv is not None]
    found = []
    for node in model.nodes:
        cells, seen = list(node.run.__closure__ or ()), {id(node.run)}
        while cells:  # (the run's own closure, and that of the functions it calls)
            value = cells.pop().cell_contents
            if isinstance(value, K.KpuConv):
                found.append(value)
                break
            if callable(value) and getattr(value, "__closure__", None) and id(value) not in seen:
                seen.add(id(value))
                cells.extend(value.__closure__)
    return found


def _maps(conv, rng) -> list[np.ndarray]:
    shape = conv.in_shape
    return [rng.integers(0, 256, shape, dtype=np.uint8), np.zeros(shape, np.uint8), np.full(shape, 255, np.uint8)]


def _check_layer(conv, rng) -> None:
    layout, run = conv.native()
    assert layout == "HWC" and run == conv._small.run
    for x in _maps(conv, rng):
        got = run(np.ascontiguousarray(x.transpose(1, 2, 0)))
        np.testing.assert_array_equal(got.transpose(2, 0, 1), conv.run_reference(x))


@pytest.mark.golden
@pytest.mark.parametrize("version,name", MODELS)
def test_every_small_layer_of_the_public_models_equals_the_int64_reference(forced, version, name):
    model = load_kmodel(shared_path("models", version, f"{name}.kmodel"))
    fast.wait_for_warm_up()
    convs = [c for c in _convs(model) if c._small is not None]
    eligible = [c for c in _convs(model) if c.k == 1 and not c.depthwise and c._hwc is not None
                and c._hwc.products in ("u8s8", "u8u8") and c._hwc.grid[0] == 1 and len(c._hwc.tiles) == 1]
    assert convs and len(convs) == len(eligible)
    rng = np.random.default_rng(len(convs))
    for conv in convs:
        assert conv.path.startswith("i32-1x1+")
        _check_layer(conv, rng)


@pytest.mark.golden
@pytest.mark.parametrize("version,name", [("v3", "mnist"), ("v4", "ulffd_landmark"), ("v4", "mask_detect")])
def test_models_with_the_small_path_forced_give_the_numpy_engine_s_outputs(forced, monkeypatch, version, name):
    path = shared_path("models", version, f"{name}.kmodel")
    model = load_kmodel(path)
    fast.wait_for_warm_up()
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "numpy")
    plain = load_kmodel(path)
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "fast")  # (the compiled layers ask for their kernels as they run)
    rng = np.random.default_rng(3)
    for _ in range(3):
        x = [rng.integers(0, 256, s.shape).astype(s.dtype) for s in model.inputs]
        for a, b in zip(model.run(*x), plain.run(*x)):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("pool", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
@pytest.mark.parametrize("act", ["relu", "leaky"])
def test_synthetic_small_layers_with_every_pool_equal_the_reference(forced, pool, act):
    rng = np.random.default_rng(pool * 7 + len(act))
    ic, oc, h, w = 24, 6, 8, 12
    x = rng.integers(0, 256, (ic, h, w), dtype=np.uint8)
    activation = Activation.relu() if act == "relu" else Activation(
        [-(1 << 35), -40000, -20000, 0, 30000, 60000] + [(1 << 35) - 16 + i for i in range(10)],
        [102, 102, 102, 1024, 1024, 512] + [0] * 10, [20, 20, 20, 20, 20, 20] + [0] * 10, [0, 4, 6, 8, 37, 66] + [0] * 10)
    spec = ConvSpec(in_shape=(ic, h, w), out_channels=oc, weights=_weights(rng, oc, ic, 1, False), kernel=1, pool_type=pool,
                    arg_x=-128, arg_w=-117, arg_add=128 * 117, activation=activation, src_row=0, dst_row=64)
    spec = _calibrate(spec, x, rng)
    spec.activation = activation
    conv = K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights.tobytes(), np.frombuffer(_bn(spec), "<u8"),
                             spec.activation.encode())
    fast.wait_for_warm_up()
    if pool in (5, 6, 7):  # selection pools with a stride: the GEMM samples the kept pixels, not this path
        assert conv._small is None and not conv.path.startswith("i32")
        return
    _check_layer(conv, rng)


def test_the_limit_is_read_at_load(monkeypatch):
    monkeypatch.setenv("MAIXEMU_KPU_SMALL_COST", "0")
    assert small.max_cost() == 0
    monkeypatch.delenv("MAIXEMU_KPU_SMALL_COST")
    assert small.max_cost() == small.SMALL_MAX_COST
    monkeypatch.setenv("MAIXEMU_KPU_SMALL_COST", "lots")
    with pytest.raises(ValueError, match="MAIXEMU_KPU_SMALL_COST"):
        small.max_cost()
