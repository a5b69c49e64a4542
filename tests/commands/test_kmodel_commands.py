"""``maixemu info`` / ``forward`` / ``bench`` as users call them (through the command modules)."""

from __future__ import annotations

import argparse

import numpy as np

from _shared import shared_path
from maixemu.commands import bench, forward, info

SAMPLE = bench.DATA_DIR / "edge_filters.kmodel"


def _args(module, argv):
    parser = argparse.ArgumentParser()
    module.add_arguments(parser)
    return parser.parse_args(argv)


def test_help_lines():
    for module in (info, forward, bench):
        assert module.__doc__.strip().splitlines()[0].endswith(".")


def test_info_prints_layers_and_memory(capsys):
    assert info.run(_args(info, [str(shared_path("models", "v3", "mnist.kmodel"))])) == 0
    out = capsys.readouterr().out
    assert "K210_ADD_PADDING" in out and "SOFTMAX" in out and "KPU" in out
    assert "full firmware" in out and "fits the chip" in out
    assert out.count("\n") > 15


def test_info_on_a_byte_swapped_model_says_so(capsys):
    assert info.run(_args(info, [str(shared_path("models", "v3", "face_detect_320x240_be.kmodel"))])) == 0
    assert "swapped" in capsys.readouterr().out


def test_info_reports_errors_cleanly(tmp_path, capsys):
    bad = tmp_path / "bad.kmodel"
    bad.write_bytes(b"\x03\x00\x00\x00" + bytes(10))
    assert info.run(_args(info, [str(bad)])) == 2
    assert "header" in capsys.readouterr().err
    assert info.run(_args(info, [str(tmp_path / "missing.kmodel")])) == 2


def test_forward_image_matches_the_golden_preparation(tmp_path, capsys):
    out_path = tmp_path / "out.npy"
    model = shared_path("models", "v3", "face_detect_320x240.kmodel")
    image = shared_path("images", "face_21.jpg")
    assert forward.run(_args(forward, [str(model), "--input", str(image), "--out", str(out_path)])) == 0
    text = capsys.readouterr().out
    assert "output 0: float32 30x15x20" in text and "top 5" in text
    golden = np.load(shared_path("golden", "v3", "face_detect_320x240", "case_face_21.npz"))
    # same preparation as the golden README, so the same bytes
    assert np.load(out_path).tobytes() == golden["output_0"].tobytes()


def test_forward_npy_values_and_layers(tmp_path, capsys):
    x = np.random.default_rng(0).integers(0, 256, size=(1, 28, 28), dtype=np.uint8)
    npy = tmp_path / "x.npy"
    np.save(npy, x)
    mnist = str(shared_path("models", "v3", "mnist.kmodel"))
    assert forward.run(_args(forward, [mnist, "--input", str(npy), "--layers", "2"])) == 0
    assert "uint8 32x7x7" in capsys.readouterr().out
    iris = str(shared_path("models", "v3", "iris.kmodel"))
    assert forward.run(_args(forward, [iris, "--values", "5.1,3.5,1.4,0.2", "--top", "1"])) == 0
    assert "top 1: [0]=" in capsys.readouterr().out


def test_bench_reports_ratio(capsys):
    assert bench.run(_args(bench, [str(SAMPLE), "--runs", "2", "--warmup", "1"])) == 0
    out = capsys.readouterr().out
    assert "edge_filters" in out and "ratio" in out and "GMAC/s" in out
    assert "1 KPU layers; paths: " in out  # the path of the one conv layer
    assert out.startswith("CPU: ") and "\nint8 products: " in out and "\nBLAS: " in out  # the machine
    assert "CPU ms/run" in out and "memory MiB" in out and "x file" in out and "x K210" in out


def test_bench_compare_and_layers(capsys):
    face = shared_path("models", "v3", "face_detect_320x240.kmodel")
    assert bench.run(_args(bench, [str(face), "--runs", "1", "--warmup", "0", "--compare", "--layers"])) == 0
    out = capsys.readouterr().out
    assert " auto " in out and " numpy " in out
    assert out.count("layer ") >= 2 * 23  # every conv layer of both engines, with its path
    assert "CHW" in out  # the numpy path's layers
    assert " ms " in out and "GMAC/s" in out  # each layer's CPU time and speed


def test_bench_default_models_prefer_shared():
    models = bench.default_models()
    assert models and all(p.suffix == ".kmodel" for p in models)
    if (bench.SHARED_MODELS / "v3").is_dir():
        assert any("face_detect" in p.name for p in models)
    else:
        assert models == [SAMPLE]
