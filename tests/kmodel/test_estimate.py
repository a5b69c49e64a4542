"""Device-time estimate (``maixemu info MODEL --estimate``) against the face detector's published time."""

from __future__ import annotations

import re

import pytest

from _shared import shared_path
from maixemu.cli import main
from maixemu.kmodel import load_kmodel
from maixemu.kmodel.estimate import (
    CLOCK_HZ,
    KpuCosts,
    estimate,
    format_estimate,
    kpu_conv_cycles,
    lines_per_channel,
)
from maixemu.kmodel.model import LayerInfo

#: MaixPy's face detector, published: 12.33 ms on the KPU + 0.40 ms on the CPU at 400 MHz.
PUBLISHED_KPU_MS, PUBLISHED_CPU_MS = 12.33, 0.40


@pytest.fixture(scope="module")
def face_estimate():
    return estimate(load_kmodel(shared_path("models", "v3", "face_detect_320x240.kmodel")))


def test_face_detector_within_10_percent_of_published(face_estimate):
    published = PUBLISHED_KPU_MS + PUBLISHED_CPU_MS  # 12.73 ms
    assert abs(face_estimate.total_ms - published) <= 0.10 * published, face_estimate.total_ms
    assert abs(face_estimate.kpu_ms - PUBLISHED_KPU_MS) <= 0.10 * PUBLISHED_KPU_MS
    assert abs(face_estimate.cpu_ms - PUBLISHED_CPU_MS) <= 0.10 * PUBLISHED_CPU_MS


def test_face_detector_per_layer_rates_in_the_published_ranges(face_estimate):
    layers = face_estimate.layers
    assert layers[0].gmacs == pytest.approx(161, rel=0.10)  # the first 3x3 layer
    dw = [layer.gmacs for layer in layers if layer.note.endswith("dw")]
    one = [layer.gmacs for layer in layers if layer.note == "1x1"]
    assert len(dw) == 11 and len(one) == 11
    assert 22 * 0.9 <= min(dw) and max(dw) <= 71 * 1.1
    assert 13 * 0.9 <= min(one) and max(one) <= 19 * 1.1


def test_row_layout_packs_narrow_maps():
    assert lines_per_channel(240, 320) == 240 * 5
    assert lines_per_channel(60, 64) == 60 and lines_per_channel(60, 65) == 120
    assert lines_per_channel(15, 20) == 8  # two rows of <= 32 pixels share a 64-byte line
    assert lines_per_channel(7, 10) == 2  # four rows of <= 16 pixels


def _conv(ic: int, oc: int, h: int, w: int, kernel: int, dw: bool = False) -> LayerInfo:
    macs = (oc if dw else ic * oc) * h * w * kernel * kernel
    return LayerInfo(index=0, kind="K210_CONV", on_kpu=True, input_shapes=((ic, h, w),),
                     output_shapes=((oc, h, w),), param_bytes=0, macs=macs,
                     details={"kernel": f"{kernel}x{kernel}", "depthwise": dw})


def test_cost_model_shape():
    costs = KpuCosts()
    # twice the output channels costs about twice as much
    small, _ = kpu_conv_cycles(_conv(64, 64, 30, 40, 1), costs)
    big, _ = kpu_conv_cycles(_conv(64, 128, 30, 40, 1), costs)
    assert 1.8 < big / small < 2.1
    # a 3x3 kernel does 9x the MACs of a 1x1 for well under 9x the time
    one, _ = kpu_conv_cycles(_conv(64, 64, 30, 40, 1), costs)
    three, _ = kpu_conv_cycles(_conv(64, 64, 30, 40, 3), costs)
    assert three / one < 2
    # nothing beats the KPU's 64 lanes x 9 multipliers per cycle
    for layer in (_conv(3, 16, 240, 320, 3), _conv(256, 256, 15, 20, 1), _conv(256, 256, 15, 20, 3, dw=True)):
        cycles, _ = kpu_conv_cycles(layer, costs)
        assert layer.macs / cycles <= 576


def test_output_says_estimate_and_calibration(face_estimate):
    text = format_estimate(face_estimate)
    assert "ESTIMATE" in text and "not a measurement" in text
    assert "calibrated on MaixPy's face detector" in text and "12.33 ms" in text
    assert re.search(r"about \d+\.\d fps", text)
    assert len([line for line in text.splitlines() if re.match(r"\s*\d+\s+K210_CONV\s+KPU", line)]) == 23
    assert CLOCK_HZ == 400_000_000


def test_info_estimate_flag(capsys):
    model = shared_path("models", "v3", "face_detect_320x240.kmodel")
    assert main(["info", str(model), "--estimate"]) == 0
    out = capsys.readouterr().out
    assert "K210_CONV" in out and "ESTIMATE" in out
    total = float(re.search(r"estimate: ([\d.]+) ms per forward", out).group(1))
    assert abs(total - 12.73) <= 1.273
    assert main(["info", str(model)]) == 0
    assert "ESTIMATE" not in capsys.readouterr().out


@pytest.mark.parametrize("name", ["v3/mnist.kmodel", "v3/iris.kmodel", "v4/mask_detect.kmodel", "v4/slim_320_face.kmodel"])
def test_every_layer_kind_gets_a_positive_time(name):
    est = estimate(load_kmodel(shared_path("models", *name.split("/"))))
    assert est.layers and all(layer.cycles > 0 for layer in est.layers)
    assert est.total_ms == pytest.approx(est.kpu_ms + est.cpu_ms)
