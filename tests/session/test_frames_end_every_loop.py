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


# -- camera loops whose LCD updates or sleeps per frame vary (issue 26) ------------------------------
DISPLAY_PER_DETECTION = """
import sensor, lcd
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
lcd.init()
frames = 0
while True:
    img = sensor.snapshot()
    frames += 1
    print("frame", frames)
    found = 20 if frames % 2 == 0 else 0
    lcd.display(img)
    for i in range(found):   # one lcd.display per detection, as real scripts do
        img.draw_rectangle(i, i, 10, 10)
        lcd.display(img)
"""

BLINK_ON_A_FIND = """
import sensor, time
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
frames = 0
while True:
    img = sensor.snapshot()
    frames += 1
    print("frame", frames)
    if frames == 2:
        for i in range(8):
            time.sleep_ms(100)
"""

WAV_THEN_CAMERA = """
import sensor, audio
from Maix import I2S
tx = I2S(I2S.DEVICE_0)
player = audio.Audio(path="/sd/ding.wav")
info = player.play_process(tx)
tx.channel_config(tx.CHANNEL_1, I2S.TRANSMITTER, align_mode=I2S.STANDARD_MODE)
tx.set_sample_rate(info[1])
while True:
    if not player.play():
        break
player.finish()
print("played")
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
frames = 0
while True:
    sensor.snapshot()
    frames += 1
    print("frame", frames)
"""

BARE_EXCEPT_THEN_EXIT = """
import sensor, sys
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
try:
    while True:
        sensor.snapshot()
except:
    print("caught")
    sys.exit()
"""

BARE_EXCEPT_THEN_RETURN = """
import sensor
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
try:
    while True:
        sensor.snapshot()
except:
    print("caught")
"""


def _frame_lines(result):
    return [line for line in result.lines if line.startswith("frame")]


def test_a_camera_loop_with_one_display_per_detection_gets_its_frames(maixpy):
    result = maixpy.run(code=DISPLAY_PER_DETECTION, frames=6, timeout=120)
    assert result.ok and result.budget_spent
    assert _frame_lines(result) == [f"frame {n}" for n in range(1, 7)]
    assert result.summary.ended == "frame budget of 6 frames reached; run ended"


def test_a_camera_loop_that_sleeps_on_one_frame_gets_its_frames(maixpy):
    result = maixpy.run(code=BLINK_ON_A_FIND, frames=4, timeout=60, clock=_virtual_clock())
    assert result.ok and result.budget_spent
    assert _frame_lines(result) == ["frame 1", "frame 2", "frame 3", "frame 4"]


def test_blocking_wav_playback_is_not_sleeping(maixpy):
    import struct

    import numpy as np

    samples = np.zeros(2 * 16000, dtype="<i2")  # one second of stereo silence at 16 kHz
    data = samples.tobytes()
    fmt = struct.pack("<HHIIHH", 1, 2, 16000, 64000, 4, 16)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    wav = b"RIFF" + struct.pack("<I", len(body)) + body
    result = maixpy.run(code=WAV_THEN_CAMERA, frames=3, timeout=60, clock=_virtual_clock(),
                        files={"/sd/ding.wav": wav})
    assert result.ok and result.budget_spent
    assert "played" in result.lines
    assert _frame_lines(result) == ["frame 1", "frame 2", "frame 3"]


@pytest.mark.parametrize("code, then", [(BARE_EXCEPT_THEN_EXIT, "called sys.exit()"),
                                        (BARE_EXCEPT_THEN_RETURN, "returned")])
def test_the_closing_line_names_the_budget_when_the_script_caught_its_end(maixpy, code, then):
    result = maixpy.run(code=code, frames=3, timeout=60)
    assert result.ok and result.budget_spent and result.lines == ["caught"]
    assert result.summary.ended == (f"frame budget of 3 frames reached; run ended "
                                    f"(the script caught the end and {then})")
    assert result.summary.frames == 3


def test_the_cli_exit_code_after_a_caught_budget_end_is_the_budget_s(tmp_path):
    from maixemu.runner import RunSpec, run_script

    script = tmp_path / "main.py"
    script.write_text(BARE_EXCEPT_THEN_EXIT.replace("sys.exit()", "sys.exit(3)"))
    assert run_script(RunSpec(frames=2, camera="synthetic", lcd="none", quiet=True, timeout=60), script) == 0
