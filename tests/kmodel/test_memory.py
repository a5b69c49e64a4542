"""What a loaded model holds (issue 22): object-level facts behind ``maixemu bench``'s "memory
MiB", never resident-size numbers (those depend on the host and its allocator). The arenas are
lazily mapped zeros, the numpy plans make their weights and tables only when a run needs them
and let them go once the compiled path took over, the warm-up thread keeps no output buffer,
tables are not kept past their models, and the weights share the file's one copy."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

from maixemu.kmodel import load_kmodel
from maixemu.kmodel import kpu as K
from maixemu.kmodel.kpu import zeros

from conftest import shared_path

HANG_S = 600.0


def test_the_kpu_ram_is_a_lazily_mapped_arena_cleared_in_place():
    ram = K.KpuRam()
    assert zeros.lazily_mapped(ram.arena) and ram.arena.size == K.KPU_RAM_BYTES and not ram.arena.any()
    view = ram.view(4096, (3, 8, 40))
    ram.upload(4096, np.full((3, 8, 40), 7, np.uint8))
    ram.arena[-1] = 9
    ram.clear()
    assert not ram.arena.any()
    ram.upload(4096, np.full((3, 8, 40), 5, np.uint8))
    np.testing.assert_array_equal(view, 5)  # (the cached view still reads the same arena)
    assert ram.download(4096, (3, 8, 40)).tolist() == np.full((3, 8, 40), 5).tolist()


def test_small_arenas_are_plain_zeros_and_clear_writes_them():
    a = zeros.lazy_zeros(100)
    assert a.dtype == np.uint8 and a.size == 100 and not zeros.lazily_mapped(a)
    a[:] = 3
    zeros.clear(a)
    assert not a.any()
    big = zeros.lazy_zeros(zeros.MMAP_MIN_BYTES)
    part = big[10:20]
    part[:] = 1
    zeros.clear(part)  # (a slice is not the whole mapping: written, not released)
    assert not big.any()


def test_a_v3_model_holds_lazily_mapped_memories():
    model = load_kmodel(shared_path("models", "v3", "mobilenet_v1_0.75_1000class.kmodel"))
    state = model._state
    assert zeros.lazily_mapped(state.kpu.arena) and zeros.lazily_mapped(state.main)


def test_the_weights_share_the_files_bytes():
    """No second copy of the weights at load: each layer's weights are a view into the bytes
    read (V3: the file's; V4: its node's body)."""
    from maixemu.tools.emulated_cpu import _convs

    for rel in ("v3/face_detect_320x240", "v4/ulffd_landmark"):
        model = load_kmodel(shared_path("models", *f"{rel}.kmodel".split("/")))
        convs = _convs(model)
        assert convs and all(not c.weights.flags.owndata for c in convs), rel


def test_shifted_weights_are_narrow_and_exact():
    from maixemu.kmodel.kpu.conv import _shifted_weights

    rng = np.random.default_rng(3)
    w8 = rng.integers(0, 256, (5, 27)).astype(np.uint8)
    w16 = rng.integers(0, 65536, (5, 27)).astype(np.uint16)
    for w, ax, dtype in ((w8, -128, np.int16), (w8, 0, np.int16), (w16, -30000, np.int32), (w16, 1 << 40, np.int64)):
        got = _shifted_weights(w, ax)
        assert got.dtype == dtype
        assert got.astype(object).tolist() == (w.astype(object) + ax).tolist()


def test_products_do_not_need_absolute_weights_for_int8_kinds(monkeypatch):
    """``choose`` makes |w| only for the float kinds (it was a [K, N] copy for every layer)."""
    from maixemu.kmodel.kpu import products

    calls = []
    real = np.abs

    def counting_abs(x, *args, **kwargs):
        calls.append(getattr(x, "shape", None))
        return real(x, *args, **kwargs)

    rng = np.random.default_rng(4)
    w = rng.integers(0, 256, (36, 8)).astype(np.uint8)
    monkeypatch.setattr(products.np, "abs", counting_abs)
    plan = products.choose(w, w.astype(np.int16) - 128, b_zero=128, a_zero=128, xmax=128, order=("u8s8",))
    monkeypatch.undo()
    if plan.kind != "u8s8":
        pytest.skip(f"u8s8 refused on this machine: {plan.refused}")
    assert (36, 8) not in calls


def test_the_warm_up_binding_keeps_no_output_buffer():
    """A product's IO binding holds its output weakly, and ``forget_thread`` drops it: a scratch
    buffer that grew (or the warm-up thread's) is not kept alive by the layers bound to it."""
    from maixemu.kmodel.kpu import int8

    rng = np.random.default_rng(5)
    w = rng.integers(0, 256, (16, 8)).astype(np.uint8)
    gemm, why = int8.Int8Gemm.build(w, 128, "u8u8")
    if gemm is None or not isinstance(gemm._run, int8._BoundRun):
        pytest.skip(f"no IO-bound product here: {why}")
    a = rng.integers(0, 256, (4, 16)).astype(np.uint8)
    want = (a.astype(np.int64) - 128) @ (w.astype(np.int64) - 128)
    out = np.empty((4, 8), np.int32)
    np.testing.assert_array_equal(gemm(a, out), want)
    dead = weakref.ref(out)
    del out
    gc.collect()
    assert dead() is None
    other = np.empty((4, 8), np.int32)
    np.testing.assert_array_equal(gemm(a, other), want)  # (rebound to the new buffer)
    gemm.forget_thread()
    assert not vars(gemm._run._local)
    np.testing.assert_array_equal(gemm(a), want)


def test_activation_tables_do_not_outlive_their_models(monkeypatch):
    from maixemu.kmodel.kpu import activation, hwc

    # (yolo_20class's tables are larger than the step buckets' threshold: its layers build them
    # only when tables come first)
    monkeypatch.setattr(hwc, "HWC_SMALL_LUT_ENTRIES", hwc.HWC_LUT_MAX_ENTRIES)
    monkeypatch.setattr(activation, "_LUT_CACHE", weakref.WeakValueDictionary())
    monkeypatch.setattr(activation, "_CENTERED_CACHE", weakref.WeakValueDictionary())
    model = load_kmodel(shared_path("models", "v3", "yolo_20class.kmodel"))
    model.run(*[np.zeros(spec.shape, spec.dtype) for spec in model.inputs])
    assert len(activation._LUT_CACHE) + len(activation._CENTERED_CACHE) > 0
    del model
    gc.collect()
    assert len(activation._LUT_CACHE) == 0 and len(activation._CENTERED_CACHE) == 0


@pytest.fixture
def background(monkeypatch):
    """The default mode from a clean queue (as ``test_cold_start``)."""
    from maixemu.kmodel.kpu import warmup

    monkeypatch.setenv("MAIXEMU_KERNELS", "background")
    monkeypatch.delenv("MAIXEMU_KPU_ENGINE", raising=False)
    monkeypatch.delenv("MAIXEMU_NO_JIT", raising=False)
    warmup.wait(timeout=HANG_S)
    warmup._reset()
    yield warmup
    warmup._reset()


def test_the_numpy_plans_are_made_by_a_run_and_released_after_the_switch(background):
    from maixemu.tools.emulated_cpu import _convs

    warmup = background
    model = load_kmodel(shared_path("models", "v3", "yolo_20class.kmodel"))
    convs = _convs(model)
    assert convs and all(c._fast is not None and c._hwc is None for c in convs)
    assert all(c._wnumpy is None for c in convs)  # (nothing ran yet)
    assert all(c._fast.lut is None for c in convs if c._fast.lazy is not None)
    assert sum(c.table_entries for c in convs) > 0  # (counted before they are made)
    x = [np.random.default_rng(6).integers(0, 256, spec.shape).astype(spec.dtype) for spec in model.inputs]
    want = model.run(*x)
    assert all(c._wnumpy is not None for c in convs)
    assert all(c._fast.lut is not None for c in convs if c._fast.lazy is not None)
    warmup.start()
    assert warmup.wait(timeout=HANG_S)
    assert all(c._hwc is not None for c in convs)
    assert all(c._fast is None and c._wnumpy is None for c in convs)
    for got, ref in zip(model.run(*x), want):
        assert got.tobytes() == ref.tobytes()


def test_a_switch_during_a_numpy_run_releases_the_plan_after_it(background, monkeypatch):
    """The plan a run is using is never taken from under it: released when the run ends."""
    from maixemu.kmodel.kpu import hwc
    from maixemu.tools.emulated_cpu import _convs

    model = load_kmodel(shared_path("models", "v3", "face_detect_320x240.kmodel"))
    conv = _convs(model)[1]
    monkeypatch.setattr(hwc.HwcPath, "_schedule_warm_up", lambda self: self)
    path = hwc.HwcPath.prepare(conv, conv._bounds(), lut_max_entries=conv._lut_max_entries)
    x = np.random.default_rng(8).integers(0, 256, conv.in_shape).astype(np.uint8)
    want = conv.run_reference(x)
    real = conv._run_numpy
    seen = []

    def switched_midway(xc, parallel):
        conv._switch(path)
        seen.append(conv._fast is not None)
        return real(xc, parallel)

    monkeypatch.setattr(conv, "_run_numpy", switched_midway)
    got = K.from_centered(conv.run_centered(K.to_centered(x)))
    assert seen == [True]
    assert conv._fast is None and conv._wnumpy is None and conv._hwc is path
    np.testing.assert_array_equal(got, want)
