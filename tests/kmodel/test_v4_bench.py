"""Speed of the V4 loader: ``maixemu bench`` works on every V4 sample, and the V4 build of
yolo_20class runs no slower than 1.5x its V3 twin (same network, same KPU engine; V4 adds only a
few CPU nodes). Timings are interleaved medians so machine load hits both models alike; the ratio
check is a benchmark (``pytest --benchmark-only tests/kmodel/test_v4_bench.py``)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from _shared import shared_path
from maixemu.kmodel import load_kmodel


@pytest.mark.golden
@pytest.mark.parametrize("name", ["iris", "mask_detect", "slim_320_face", "ulffd_landmark", "yolo_20class"])
def test_bench_command_measures_v4_models(name):
    from maixemu.commands.bench import bench_model, format_results

    result = bench_model(shared_path("models", "v4", f"{name}.kmodel"), runs=2, warmup=1)[0]
    assert result.run_ms > 0 and result.matmul_gmacs > 0
    if name != "iris":  # iris has two tiny float matmuls only
        assert result.macs > 1_000_000
    assert name in format_results([result])


@pytest.mark.golden
def test_v4_yolo_is_no_slower_than_1_5x_its_v3_twin(benchmark):
    """A benchmark, not a unit test (skipped by default; `pytest --benchmark-only` runs it): speed
    depends on the machine's load, so it must not decide whether the suite is green."""
    v3 = load_kmodel(shared_path("models", "v3", "yolo_20class.kmodel"))
    v4 = load_kmodel(shared_path("models", "v4", "yolo_20class.kmodel"))
    x = np.random.default_rng(0).integers(0, 256, (3, 240, 320), dtype=np.uint8)
    t3, t4 = [], []
    for _ in range(2):
        v3.run(x), v4.run(x[None])
    for _ in range(11):
        start = time.perf_counter()
        v3.run(x)
        t3.append(time.perf_counter() - start)
        start = time.perf_counter()
        v4.run(x[None])
        t4.append(time.perf_counter() - start)
    ratio = float(np.median(t4) / np.median(t3))
    benchmark.extra_info.update(v3_ms=float(np.median(t3) * 1e3), v4_ms=float(np.median(t4) * 1e3), ratio=ratio)
    benchmark.pedantic(v4.run, args=(x[None],), rounds=3, iterations=1)
    assert ratio <= 1.5, f"V4 {np.median(t4) * 1e3:.1f} ms vs V3 {np.median(t3) * 1e3:.1f} ms (x{ratio:.2f})"
