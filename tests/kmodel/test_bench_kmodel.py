"""pytest-benchmark timings of model runs (skipped by default: ``--benchmark-skip`` in setup.cfg).

Run with ``pytest tests/kmodel/test_bench_kmodel.py --benchmark-only`` (``-p no:cacheprovider``).
The LiteRT comparison records its CPU-time ratio in ``extra_info`` (``--benchmark-json``); no
benchmark asserts a time.
"""

from __future__ import annotations

import numpy as np
import pytest

from _shared import SHARED_DIR
from maixemu.commands.bench import DATA_DIR
from maixemu.kmodel import load_kmodel

MODELS = ["v3/face_detect_320x240", "v3/yolo_20class", "v3/mobilenet_v1_0.75_1000class", "v3/mnist", "v4/ulffd_landmark",
          "v4/slim_320_face", "v4/yolo_20class"]


def _load(name: str):
    path = SHARED_DIR / "models" / f"{name}.kmodel"
    if not path.exists():
        pytest.skip(f"{path} not found (../shared absent)")
    return load_kmodel(path)


def _input(model):
    spec = model.inputs[0]
    return np.random.default_rng(0).integers(0, 256, size=spec.shape, dtype=np.uint8)


def _wait_for_kernels():
    from maixemu.kmodel.kpu import fast

    fast.wait_for_warm_up()


@pytest.mark.parametrize("name", MODELS)
def test_bench_run(benchmark, name):
    model = _load(name)
    x = _input(model)
    _wait_for_kernels()
    out = benchmark(model.run, x)
    assert out and out[0].size > 0


def test_bench_demo_model(benchmark):
    model = load_kmodel(DATA_DIR / "edge_filters.kmodel")
    out = benchmark(model.run, _input(model))
    assert out[0].shape == (4, 120, 160)


@pytest.mark.parametrize("name", ["v3/face_detect_320x240"])
def test_bench_load(benchmark, name):
    path = SHARED_DIR / "models" / f"{name}.kmodel"
    if not path.exists():
        pytest.skip(f"{path} not found")
    model = benchmark(load_kmodel, path)
    assert model.version == 3


@pytest.mark.parametrize("name", ["v3/face_detect_320x240", "v4/ulffd_landmark"])
def test_bench_against_litert(benchmark, name):
    """The face detectors next to LiteRT's float ulffd detector (one thread each, CPU time,
    interleaved): ``extra_info`` holds both medians and the ratio (goal: at most 1.5x)."""
    from maixemu.commands.bench import DEFAULT_TFLITE, interleaved_medians, litert_runner

    if not DEFAULT_TFLITE.exists():
        pytest.skip(f"{DEFAULT_TFLITE} not found")
    try:
        litert = litert_runner(DEFAULT_TFLITE)
    except RuntimeError as exc:
        pytest.skip(str(exc))
    model = _load(name)
    x = _input(model)
    _wait_for_kernels()
    ours, theirs = interleaved_medians([lambda: model.run(x), litert], runs=41, warmup=3)
    benchmark.extra_info.update(maixemu_cpu_ms=ours.cpu * 1e3, litert_cpu_ms=theirs.cpu * 1e3, ratio=ours.cpu / theirs.cpu)
    out = benchmark(model.run, x)
    assert out and out[0].size > 0
