"""Benchmark of the hot camera-to-screen loop: QVGA snapshot → draw_rectangle → lcd.display into a recorder.

Skipped by default (``--benchmark-skip`` in setup.cfg); run with
``pytest tests/host/test_display_benchmark.py --benchmark-only``. Frames per second = 1 / mean.
"""

from __future__ import annotations

import pytest

from maixemu.firmware import lcd, sensor
from maixemu.firmware.state import current
from maixemu.host.display import NullSink, open_sink


@pytest.fixture
def camera_loop():
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)


def one_frame() -> None:
    img = sensor.snapshot()
    img.draw_rectangle(40, 30, 120, 90, color=lcd.RED, thickness=2)
    lcd.display(img)


@pytest.mark.parametrize("target", ["record:frames.avi", "record:frames.mp4", "record:png", "none"])
def test_qvga_snapshot_draw_display(benchmark, camera_loop, tmp_path, target):
    spec = target if target == "none" else f"record:{tmp_path / target.split(':', 1)[1]}"
    sink = open_sink(spec)
    current().display = sink
    lcd.init()
    benchmark.pedantic(one_frame, rounds=60, iterations=1, warmup_rounds=5)
    current().display.flush()  # recordings take a picture when the next one starts; the last one at the end
    sink.close()
    assert sink.frames_shown >= 66
    benchmark.extra_info["fps"] = round(1.0 / benchmark.stats.stats.mean, 1)
    benchmark.extra_info["sink"] = type(sink).__name__ if not isinstance(sink, NullSink) else "none"
