"""pytest-benchmark timings of model runs (skipped by default: ``--benchmark-skip`` in setup.cfg).

Run with ``pytest tests/kmodel/test_bench_kmodel.py --benchmark-enable`` (or ``--benchmark-only``).
"""

from __future__ import annotations

import numpy as np
import pytest

from _shared import SHARED_DIR
from maixemu.commands.bench import DATA_DIR
from maixemu.kmodel import load_kmodel

MODELS = ["v3/face_detect_320x240", "v3/yolo_20class", "v3/mobilenet_v1_0.75_1000class", "v3/mnist"]


def _load(name: str):
    path = SHARED_DIR / "models" / f"{name}.kmodel"
    if not path.exists():
        pytest.skip(f"{path} not found (../shared absent)")
    return load_kmodel(path)


def _input(model):
    spec = model.inputs[0]
    return np.random.default_rng(0).integers(0, 256, size=spec.shape, dtype=np.uint8)


@pytest.mark.parametrize("name", MODELS)
def test_bench_run(benchmark, name):
    model = _load(name)
    x = _input(model)
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
