"""The pytest plugin ``maixemu.testing``: fixtures, scripted frames, captured output, fresh board per run."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from _shared import with_growing_timeout
from maixemu.testing import ArraySource, MaixPyRunner, board
from maixemu.testing.run import RunResult

SNAP_AND_SHOW = """
import sensor, lcd
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
while True:
    img = sensor.snapshot()
    print("pixel", img.get_pixel(10, 10))
    lcd.display(img)
"""


def _dominant(rgb) -> str:
    """Which channel a colour is (RGB565 and the camera model shift exact values a little)."""
    values = np.asarray(rgb, dtype=int).reshape(-1, 3)
    assert (values.max(axis=1) > 200).all() and (np.sort(values, axis=1)[:, 1] < 60).all(), values[:3]
    return "".join("rgb"[int(i)] for i in np.unique(values.argmax(axis=1)))


def _solid(rgb: tuple[int, int, int], w: int = 320, h: int = 240) -> np.ndarray:
    frame = np.empty((h, w, 3), np.uint8)
    frame[:] = rgb
    return frame


def test_entry_point_registers_the_plugin():
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="pytest11")}
    assert names.get("maixemu") == "maixemu.pytest_plugin"


def test_the_registered_plugin_does_not_import_the_emulator_at_startup():
    """pytest imports every plugin at start-up; ours must not drag numpy/OpenCV into unrelated runs."""
    import subprocess
    import sys

    code = ("import sys, maixemu.pytest_plugin; print('maixemu.testing.run' in sys.modules, "
            "'maixemu.session' in sys.modules, 'numpy' in sys.modules, 'cv2' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False", "False"]


def test_array_frames_reach_the_script_and_the_lcd(maixpy):
    result = maixpy.run(code=SNAP_AND_SHOW, camera=[_solid((255, 0, 0)), _solid((0, 0, 255))])
    result.check()
    assert len(result.lines) == 2
    assert [_dominant(eval(line.split(" ", 1)[1])) for line in result.lines] == ["r", "b"]
    assert result.snapshots == 3 and result.budget_spent  # the third request ended the run
    # lcd.init() pushes a black screen, then one frame per display
    assert len(result.lcd_frames) == 3
    assert (result.lcd_frames[0] == 0).all()
    assert _dominant(result.lcd_frames[1]) == "r" and _dominant(result.lcd) == "b"


def test_nhwc_array_and_explicit_budget(maixpy):
    frames = np.stack([_solid((0, 255, 0)), _solid((0, 0, 255))])
    result = maixpy.run(code=SNAP_AND_SHOW, camera=frames, frames=5)
    assert result.ok and len(result.lines) == 5
    assert [_dominant(eval(line.split(" ", 1)[1])) for line in result.lines] == ["g", "b", "g", "b", "g"]


def test_script_error_gives_exit_1_and_a_traceback_of_the_script(maixpy):
    result = maixpy.run(code="print('before')\nraise ValueError('boom')\n")
    assert result.exit_code == 1 and result.lines == ["before"]
    assert "ValueError: boom" in result.stderr and "main.py" in result.stderr
    with pytest.raises(AssertionError, match="boom"):
        result.check()


def test_check_failure_says_the_error_and_the_scripts_line_and_nothing_else(maixpy):
    """check()'s message: the error and where first (pytest's one-line summary), the traceback with
    the script's own source line under its frame, no closing line; check's frame is hidden."""
    result = maixpy.run(code="import sensor\nx = 1\nprint('before')\nraise ValueError('boom')\n")
    with pytest.raises(AssertionError) as info:
        result.check()
    lines = str(info.value).splitlines()
    assert lines[0] == "ValueError: boom (/sd/main.py, line 4) — exit 1"
    assert "    raise ValueError('boom')" in lines  # the device prints no source line: the test gets it
    assert lines[-1] == "ValueError: boom"
    assert not any(line.startswith("[maixemu]") and "exit 1" in line for line in lines)  # the closing line
    assert "__tracebackhide__" in RunResult.check.__code__.co_varnames  # pytest shows the test's line, not check's


def test_swallowing_the_budget_does_not_end_pytest(maixpy):
    # The command line's last resort for such scripts is os._exit, which would end pytest too.
    code = """
import sensor
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
n = 0
while n < 5:
    try:
        sensor.snapshot()
    except BaseException:
        n += 1
print("swallowed", n)
"""
    result = maixpy.run(code=code, camera=[_solid((0, 0, 0))])
    assert result.check().lines == ["swallowed 5"]


def test_each_run_starts_from_a_fresh_board(maixpy, tmp_path):
    # Ticks restart at 0, models loaded (and never freed) by earlier runs do not count against
    # MaixPy's 5-model limit, and the sensor is not initialised any more.
    code = "import time, KPU as kpu\nt = kpu.load(0xF00000)\ntime.sleep({pause})\nprint(time.ticks_ms())\n"
    ticks = []
    for n in range(7):
        result = maixpy.run(code=code.format(pause=2 if n == 0 else 0))
        ticks.append(int(result.check().lines[0]))
    # (no bound in seconds: a board that kept counting would read past the first run's 2 s pause
    # in every later run; a fresh one reads its own start-up, as the first run did before its pause)
    assert all(t < ticks[0] for t in ticks[1:]), ticks
    result = maixpy.run(code="import sensor\nsensor.snapshot()\n")
    assert result.exit_code == 1 and "not found sensor" in result.stderr


def test_storage_is_a_fresh_folder_and_files_are_copied_in(maixpy):
    code = "print(open('/sd/in.txt').read())\nwith open('/flash/out.txt', 'w') as f:\n    f.write('written')\n"
    result = maixpy.run(code=code, files={"/sd/in.txt": "hello"})
    assert result.check().lines == ["hello"]
    assert (result.flash_dir / "out.txt").read_text() == "written"
    again = maixpy.run(code="import os\nprint(os.listdir('/flash'))\n")
    assert again.lines == ["[]"]


def test_kpu_calls_and_ai_inputs_are_kept(maixpy):
    code = """
import sensor, KPU as kpu
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
task = kpu.load(0xF00000)
img = sensor.snapshot()
fm = kpu.forward(task, img)
print(fm.w(), fm.h(), fm.ch())
"""
    result = maixpy.run(code=code, camera=[_solid((255, 0, 0))], keep_ai=True)
    assert result.check().lines == ["160 120 4"]
    (call,) = result.calls("kpu.forward")
    assert call["input_shape"][-3:] == [3, 240, 320]
    assert (call["fmap"]["w"], call["fmap"]["h"], call["fmap"]["ch"]) == (160, 120, 4)
    assert {"min", "max", "argmax", "top"} <= set(call["output"])
    (ai,) = result.kpu_inputs  # the planar AI buffer: red plane full, the others empty
    assert ai.shape == (3, 240, 320) and (ai[0] > 200).all() and (ai[1:] < 20).all()


def test_array_source_validates_and_loops():
    src = ArraySource([np.zeros((4, 4), np.uint8), np.ones((4, 4, 3), np.float32)])
    assert src.read().shape == (4, 4, 3) and (src.read() == 255).all() and (src.read() == 0).all()
    with pytest.raises(ValueError, match="HxWx3"):
        ArraySource([np.zeros((4, 4, 4), np.uint8)])


def test_import_mode_gives_fresh_modules(maixpy_board):
    import image
    import lcd
    import sensor

    assert sensor is maixpy_board.sensor
    maixpy_board.set_camera([_solid((0, 0, 255))])
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)
    lcd.init()
    lcd.display(sensor.snapshot())
    assert _dominant(maixpy_board.lcd_frames[-1]) == "b"
    assert isinstance(image.Image(size=(8, 8)), image.Image)
    import time as cpython_time

    assert cpython_time is sys.modules["time"] and not hasattr(cpython_time, "ticks_ms")


def test_import_mode_cleans_up(tmp_path):
    before = "sensor" in sys.modules
    with board(tmp_path) as b:
        b.sensor.reset()
        assert "sensor" in sys.modules
    assert ("sensor" in sys.modules) == before
    with board(tmp_path) as b:  # power-on again: not initialised
        with pytest.raises(TypeError, match="not found sensor"):
            b.sensor.snapshot()


def test_runner_usable_without_the_fixture(tmp_path: Path):
    result = MaixPyRunner(tmp_path).run(code="print(1 + 1)")
    assert result.lines == ["2"] and result.lcd is None


def test_timeout_ends_a_script_that_never_takes_frames(maixpy):
    result = maixpy.run(code="import time\nwhile True:\n    time.sleep_ms(10)\n", timeout=0.5)
    assert result.ok and any("timeout" in n for n in result.notices)


def test_swallowing_the_timeout_does_not_end_pytest(maixpy):
    code = """
import time
print("in the loop")
caught = 0
while caught < 2:
    try:
        time.sleep_ms(10)
    except BaseException:
        caught += 1
print("caught", caught)
"""
    # the timeout counts from before set-up: a loaded machine may need a longer one to reach the loop
    result = with_growing_timeout(lambda timeout: maixpy.run(code=code, timeout=timeout / 8),
                                  lambda result: result.lines[:1] == ["in the loop"])
    assert result.check().lines == ["in the loop", "caught 2"]


def test_folder_and_video_cameras_default_to_one_pass(maixpy, tmp_path):
    import cv2

    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    folder = tmp_path / "frames"
    folder.mkdir()
    for i, rgb in enumerate(colours):
        Image.fromarray(_solid(rgb)).save(folder / f"{i}.png")
    (folder / "notes.txt").write_text("not a frame")
    result = maixpy.run(code=SNAP_AND_SHOW, camera=folder)
    assert [_dominant(eval(line.split(" ", 1)[1])) for line in result.check().lines] == ["r", "g", "b"]

    video = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (320, 240))
    if not writer.isOpened():
        pytest.skip("this OpenCV build cannot write MJPG .avi files")
    for rgb in colours:
        writer.write(cv2.cvtColor(_solid(rgb), cv2.COLOR_RGB2BGR))
    writer.release()
    result = maixpy.run(code=SNAP_AND_SHOW, camera=video)
    assert [_dominant(eval(line.split(" ", 1)[1])) for line in result.check().lines] == ["r", "g", "b"]


KEY_LOOP = """
import sensor
from maix import GPIO
from fpioa_manager import fm
from board import board_info
fm.register(board_info.BOOT_KEY, fm.fpioa.GPIOHS0)
key = GPIO(GPIO.GPIOHS0, GPIO.IN, GPIO.PULL_UP)
key.irq(lambda pin: print("edge", pin.value()), GPIO.IRQ_BOTH)
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
while True:
    sensor.snapshot()
    print("key", key.value())
"""


def test_scripted_key_presses_drive_the_pin_and_its_irqs(maixpy):
    """``keys={N: name}``: down (0, falling-edge IRQ) at camera frame N, up (1, rising edge) at N+1."""
    result = maixpy.run(code=KEY_LOOP, camera=[_solid((0, 0, 0))], frames=6, keys={2: "BOOT_KEY", 4: ("BOOT", 2)})
    assert result.lines == ["key 1", "edge 0", "key 0", "edge 1", "key 1", "edge 0", "key 0", "key 0",
                            "edge 1", "key 1"]
    assert result.key_presses == [(2, "BOOT_KEY"), (4, "BOOT")]


def test_scripted_keys_reject_frame_zero(maixpy):
    with pytest.raises(ValueError, match="frames count from 1"):
        maixpy.run(code=KEY_LOOP, camera=[_solid((0, 0, 0))], frames=2, keys={0: "BOOT_KEY"})
