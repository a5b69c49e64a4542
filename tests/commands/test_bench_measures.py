"""What ``maixemu bench`` measures besides the run time: each layer's CPU time (``Model.layer_times``),
working memory, a fresh process's first output, and how the layer report reads. Nothing here
asserts a time or a size: only that the measurements are taken, shaped and printed."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from maixemu.commands import bench
from maixemu.commands._bench_measure import first_output, working_memory
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.kpu import fast

SAMPLE = bench.DATA_DIR / "edge_filters.kmodel"


@pytest.mark.parametrize("rel", ["v3/face_detect_320x240", "v4/ulffd_landmark"])
def test_layer_times_cover_every_layer_and_give_the_run_s_outputs(rel):
    from conftest import shared_path

    m = load_kmodel(shared_path("models", *f"{rel}.kmodel".split("/")))
    x = np.random.default_rng(0).integers(0, 256, m.inputs[0].shape, dtype=np.uint8)
    want = [o.copy() for o in m.run(x)]
    times = m.layer_times(x)
    assert [i for i, _ in times] == [layer.index for layer in m.layers]
    assert all(t >= 0 for _, t in times)
    got = m.read_outputs() if m.version == 3 else m._fetch()
    assert all(np.array_equal(a, b) for a, b in zip(got, want))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="resident memory is read from /proc/self (Linux)")
def test_working_memory_is_measured():
    m = load_kmodel(SAMPLE)
    fast.wait_for_warm_up()
    x = [np.zeros(s.shape, s.dtype) for s in m.inputs]
    m.run(*x)
    used = working_memory(SAMPLE, x)
    assert used is not None and used >= 0


def test_a_fresh_process_reports_its_first_output(tmp_path):
    got = first_output(SAMPLE, fast.cache_dir().parent)  # the warm cache of this machine
    assert got.cpu > 0 and got.wall > 0 and got.rss > 0
    assert got.ready_cpu >= got.cpu and got.ready_rss >= got.rss


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the peak is read from /proc/self (Linux)")
def test_a_fresh_process_reports_its_own_peak_not_its_parent_s(tmp_path):
    """``ru_maxrss`` survives ``exec``: a child started by a process holding 256 MiB said it had
    used them. The child's own peak is whatever it is, but it cannot include the parent's pages."""
    held = np.ones(256 << 20, np.uint8)  # written: resident in this process
    got = first_output(SAMPLE, fast.cache_dir().parent)
    assert held.nbytes > 0 and 0 < got.rss < held.nbytes, got.rss


def test_the_layer_report_names_refusals_and_slow_layers():
    layers = [bench.LayerTiming(0, "K210_CONV", "u8u8+linear HWC", 10_000_000, 0.002,
                                ["u8s8: not exact on this CPU, 23 of 640 proof sums"]),
              bench.LayerTiming(1, "K210_CONV", "u8u8+linear HWC", 10_000, 0.001,
                                ["u8s8: not exact on this CPU, 5 of 640 proof sums"]),
              bench.LayerTiming(2, "DEQUANTIZE", "cpu", 0, 0.0001)]
    r = bench.BenchResult("m", 0.1, 3.1, 10_010_000, 20.0, layers=layers, paths=[(0, "K210_CONV", "u8u8+linear HWC")] * 2)
    short = bench.format_paths(r, every_layer=False)
    assert "paths: u8u8+linear HWC x2" in short
    assert "refused: u8s8: not exact on this CPU (x2)" in short
    assert "below 1 GMAC/s: layer 1 K210_CONV 0.01" in short and "layer 0" not in short.split("below")[1]
    full = bench.format_paths(r, every_layer=True)
    assert full.count("\n  layer ") == 3 and "refused: u8s8: not exact on this CPU, 23 of 640 proof sums" in full
    assert "5.0 GMAC/s" in full


def test_memory_is_also_read_against_what_the_board_holds():
    """``x K210``: the working memory over what the K210 itself holds for the model — the file
    and main-memory scratch ``kpu.load`` keeps in general RAM, plus the KPU RAM its maps take —
    the same numbers ``maixemu info`` gives for the board."""
    from conftest import shared_path

    path = shared_path("models", "v3", "mnist.kmodel")
    m = load_kmodel(path)
    mem = m.memory
    # (mnist: 203.2 KiB file, 13.8 KiB main-memory scratch, 8.8 KiB of KPU RAM: ``maixemu info``)
    assert bench.k210_bytes(m) == path.stat().st_size + mem.main_memory_bytes + mem.kpu_ram_bytes
    # a kfpkg holds the same model: the board keeps the kmodel, not the package
    pkg = load_kmodel(shared_path("models", "v3", "face_model_at_0x300000.kfpkg"))
    plain = load_kmodel(shared_path("models", "v3", "face_detect_320x240.kmodel"))
    assert bench.k210_bytes(pkg) == bench.k210_bytes(plain)
    r = bench.BenchResult("m", 0.1, 3.1, 10_010_000, 20.0, memory=3 << 20, file_bytes=1 << 19, k210_bytes=1 << 20)
    header, row = bench.format_results([r]).splitlines()
    assert "x K210" in header and row.split()[-1] == "3.0" and row.split()[-2] == "1.0" and row.split()[-3] == "6.0"
