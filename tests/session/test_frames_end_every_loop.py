"""``--frames N`` ends every kind of frame loop (rules in ``maixemu.session.budget``)."""

from __future__ import annotations

import pytest

CAMERA_THEN_LCD = """
import sensor, lcd, image
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
img = sensor.snapshot()
lcd.init()
n = 0
while True:
    n += 1
    lcd.display(img)
"""

FIVE_DRAWS_PER_FRAME = """
import sensor, lcd
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
lcd.init()
frames = 0
while True:
    img = sensor.snapshot()
    frames += 1
    print("frame", frames)
    for i in range(5):
        lcd.draw_string(0, 0, str(i))
"""

PRINT_AND_SLEEP = """
import time
n = 0
while True:
    n += 1
    print("tick", n)
    time.sleep(1)
"""

LONG_START_THEN_CAMERA = """
import sensor, time
time.sleep(2)
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
for i in range(4):
    sensor.snapshot()
print("done")
"""


def _virtual_clock():
    now = [0]
    return (lambda: now[0], lambda ns: now.__setitem__(0, now[0] + max(0, ns)))


def test_one_snapshot_then_lcd_forever_ends_after_n_pictures(maixpy):
    result = maixpy.run(code=CAMERA_THEN_LCD, frames=10, timeout=60)
    assert result.ok and result.budget_spent
    assert result.snapshots == 1
    assert "LCD frames without a new camera frame" in " ".join(result.notices)


def test_several_draws_per_camera_frame_are_not_cut_short(maixpy):
    result = maixpy.run(code=FIVE_DRAWS_PER_FRAME, frames=3, timeout=60)
    assert result.ok and result.budget_spent
    assert [line for line in result.lines if line.startswith("frame")] == ["frame 1", "frame 2", "frame 3"]


def test_a_print_and_sleep_loop_ends_after_n_sleeps(maixpy):
    result = maixpy.run(code=PRINT_AND_SLEEP, frames=4, timeout=60, clock=_virtual_clock())
    assert result.ok and result.budget_spent
    assert result.lines == ["tick 1", "tick 2", "tick 3", "tick 4", "tick 5"]
    assert "slept 4 frame times" in " ".join(result.notices)


def test_a_long_start_up_sleep_is_one_idle_frame(maixpy):
    result = maixpy.run(code=LONG_START_THEN_CAMERA, frames=4, timeout=60, clock=_virtual_clock())
    assert result.ok and not result.budget_spent and "done" in result.lines


@pytest.mark.parametrize("frames", [1, 2])
def test_cli_frames_ends_an_lcd_loop_after_one_snapshot(tmp_path, frames):
    from maixemu.runner import RunSpec, run_script

    script = tmp_path / "main.py"
    script.write_text(CAMERA_THEN_LCD)
    assert run_script(RunSpec(frames=frames, camera="synthetic", lcd="none", quiet=True, timeout=60), script) == 0
