"""No numpy warning of the emulation reaches a script's output (issue 26: a YOLO script printed
``RuntimeWarning: overflow encountered in exp``): the firmware's C float math is silent."""

from __future__ import annotations

import warnings

import numpy as np

from maixemu.firmware.kpu.region import region_layer


def test_the_region_layer_overflows_silently_as_the_device_does():
    output = np.full((5 * 25, 7, 10), -200.0, np.float32)  # logits far beyond expf's range
    output[2::25] = output[3::25] = 200.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        boxes = region_layer(output, layer_w=10, layer_h=7, anchors=(1.0,) * 10, threshold=0.5, nms_value=0.3,
                             classes=20, net_w=320, net_h=240)
    assert boxes == []  # sigmoid(-200) is 0 (1 / (1 + inf)), as on the device


def test_a_numpy_warning_inside_the_firmware_does_not_reach_the_script(maixpy, monkeypatch, recwarn):
    from maixemu.firmware import utime

    real = utime.ticks_ms

    def overflowing_ticks_ms():
        np.float32(3e38) * np.float32(10)  # a float32 overflow inside firmware code
        return real()

    monkeypatch.setattr(utime, "ticks_ms", overflowing_ticks_ms)
    result = maixpy.run(code="import time\nprint(time.ticks_ms() >= 0)\n")
    assert result.ok and result.lines == ["True"]
    assert "Warning" not in result.stderr and "overflow" not in result.stderr
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]  # nothing for Python to show
