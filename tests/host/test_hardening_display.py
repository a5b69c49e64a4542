"""Hardening: LCD faults and ends. A closed window ends the run cleanly (exit 0, one line), a sleeping
script still notices it, and a recording is always finalised and playable — whatever ends the run.

The window is OpenCV's, with its GUI calls faked (no display needed); recordings are read back with
``cv2.VideoCapture`` and their frames counted.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from _shared import read_line, split_summary, with_growing_timeout

from maixemu.host import display
from maixemu.runner import RunSpec, run_script


class FakeGui:
    """OpenCV's window calls: the user closes the window (or presses ESC) ``after_s`` after it opened."""

    def __init__(self, monkeypatch, *, after_s: float, action: str):
        self.opened_at: float | None = None
        self.after_s, self.action = after_s, action
        self.shown = 0
        monkeypatch.setattr(display, "display_available", lambda: True)
        monkeypatch.setattr(cv2, "namedWindow", self.named_window)
        monkeypatch.setattr(cv2, "imshow", self.imshow)
        monkeypatch.setattr(cv2, "waitKey", self.wait_key)
        monkeypatch.setattr(cv2, "getWindowProperty", self.window_property)
        monkeypatch.setattr(cv2, "destroyWindow", lambda title: None)

    def named_window(self, title, flags=0):
        self.opened_at = time.monotonic()

    def imshow(self, title, image):
        self.shown += 1

    def _due(self) -> bool:
        return self.opened_at is not None and time.monotonic() - self.opened_at >= self.after_s

    def wait_key(self, delay=0):
        time.sleep(delay / 1000)
        return 27 if self.action == "esc" and self._due() else -1

    def window_property(self, title, prop):
        return 0.0 if self.action == "close" and self._due() else 1.0


def run_in_process(tmp_path: Path, body: str, **options) -> tuple[int, str, str]:
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(body))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_script(RunSpec(camera="synthetic", **options), script, stderr=err)
    return code, out.getvalue(), err.getvalue()


LCD_LOOP = """
import sensor, lcd
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
while True:
    try:
        lcd.display(sensor.snapshot())
    except Exception:
        pass
"""


@pytest.mark.parametrize("action,line", [
    ("close", "[maixemu] the LCD window was closed; run ended"),
    ("esc", "[maixemu] ESC pressed in the LCD window; run ended"),
])
def test_closing_the_window_ends_the_run_cleanly(tmp_path, monkeypatch, action, line):
    gui = FakeGui(monkeypatch, after_s=0.2, action=action)
    code, out, err = run_in_process(tmp_path, LCD_LOOP, lcd="window")
    assert code == 0
    assert gui.shown >= 1
    assert split_summary(err) == ("", line.removeprefix("[maixemu] "))


def test_a_sleeping_script_still_notices_the_window_closing(tmp_path, monkeypatch):
    FakeGui(monkeypatch, after_s=0.3, action="close")
    code, out, err = run_in_process(tmp_path, """
        import lcd, time
        lcd.init()
        print("sleeping", flush=True)
        time.sleep(30)
        print("woke up")
    """, lcd="window")
    assert code == 0
    assert out == "sleeping\n"  # never "woke up": the 30 s sleep was cut short
    assert split_summary(err) == ("", "the LCD window was closed; run ended")


def test_sleep_ms_pumps_the_window_too(tmp_path, monkeypatch):
    FakeGui(monkeypatch, after_s=0.3, action="esc")
    code, out, err = run_in_process(tmp_path, """
        import lcd, utime
        lcd.init()
        while True:
            utime.sleep_ms(100)
    """, lcd="window")
    assert code == 0
    assert split_summary(err) == ("", "ESC pressed in the LCD window; run ended")


# ------------------------------------------------------------------------------ recordings
RECORD_SCRIPT = """
import sensor, lcd, sys, time
mode = sys.argv[1]
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
n = 0
while True:
    lcd.display(sensor.snapshot())
    n += 1
    print("frame", n, flush=True)
    if n == 5:
        if mode == "raise":
            raise ValueError("boom")
        if mode == "keyboard":
            raise KeyboardInterrupt
        if mode == "exit":
            sys.exit(3)
        if mode in ("timeout", "sigint", "sigterm"):
            while True:
                time.sleep(0.05)
"""

ENDS = {
    # mode: (extra options, exit code, how the closing line says the run ended)
    "raise": ((), 1, "the script failed with ValueError, exit 1"),
    "keyboard": ((), 130, "interrupted (Ctrl-C), exit 130"),
    "exit": ((), 3, "the script called sys.exit(3); exit code 3"),
    "timeout": (("--timeout", "TIMEOUT"), 0, "--timeout of TIMEOUT s reached; run ended"),
    "budget": (("--frames", "5"), 0, "frame budget of 5 frames reached; run ended"),
    "sigint": ((), 130, "interrupted (Ctrl-C), exit 130"),
    "sigterm": ((), 143, "terminated (SIGTERM); run ended, exit 143"),
}


def count_video_frames(path: Path) -> int:
    cap = cv2.VideoCapture(str(path))
    assert cap.isOpened(), f"{path} is not playable"
    frames = 0
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        assert frame.shape == (240, 320, 3)
        frames += 1
    cap.release()
    return frames


def run_and_end(tmp_path: Path, mode: str, target: str) -> tuple[int, str, str]:
    if mode == "timeout":  # --timeout counts from before set-up: a loaded machine may need longer to reach frame 5
        def attempt(timeout: float) -> tuple[int, str, str]:
            Path(target).unlink(missing_ok=True)
            return _run_and_end(tmp_path, mode, target, f"{timeout:g}")

        return with_growing_timeout(attempt, lambda result: "frame 5" in result[1].splitlines())
    return _run_and_end(tmp_path, mode, target)


def _run_and_end(tmp_path: Path, mode: str, target: str, timeout: str = "") -> tuple[int, str, str]:
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(RECORD_SCRIPT))
    extra = [timeout if option == "TIMEOUT" else option for option in ENDS[mode][0]]
    cmd = [sys.executable, "-m", "maixemu", "run", str(script), "--camera", "synthetic", "--lcd",
           f"record:{target}", *extra, "--", mode]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    if mode in ("sigint", "sigterm"):
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "frame 5":
                break
        time.sleep(0.2)
        proc.send_signal(signal.SIGINT if mode == "sigint" else signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


@pytest.mark.parametrize("mode", list(ENDS))
def test_video_recording_is_finalised_whatever_ends_the_run(tmp_path, mode):
    video = tmp_path / "out.mp4"
    code, out, err = run_and_end(tmp_path, mode, str(video))
    _, want_code, want_line = ENDS[mode]
    assert code == want_code, err
    timeout = re.search(r"--timeout of (\S+) s", err)
    assert split_summary(err)[1] == want_line.replace("TIMEOUT", timeout.group(1) if timeout else "")
    assert f"; LCD recorded to {video}" in err.splitlines()[-1]
    # lcd.init() pushes one frame, then one per display: 6 frames when the run ended after frame 5.
    assert count_video_frames(video) == 6


@pytest.mark.parametrize("mode", ["raise", "sigterm"])
def test_avi_and_png_recordings_are_finalised_too(tmp_path, mode):
    code, _, _ = run_and_end(tmp_path, mode, str(tmp_path / "out.avi"))
    assert code == ENDS[mode][1]
    assert count_video_frames(tmp_path / "out.avi") == 6
    code, _, _ = run_and_end(tmp_path, mode, str(tmp_path / "pngs"))
    assert code == ENDS[mode][1]
    pngs = sorted((tmp_path / "pngs").glob("*.png"))
    assert len(pngs) == 6
    assert all(cv2.imread(str(p)).shape == (240, 320, 3) for p in pngs)


def test_unusable_lcd_choice_is_one_line_exit_2(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('never runs')\n")
    proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", f"record:{script}"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"maixemu: cannot record into {script}: it is a file but not .mp4/.avi; use --lcd "
                           "window|none|record:OUT.mp4|record:OUT.avi|record:FOLDER\n")


def test_lcd_failing_mid_run_is_one_line_exit_1(tmp_path, monkeypatch):
    """A disk that fills up while PNG frames are recorded: the frames so far stay, one line, exit 1."""
    import errno

    real_write, calls = display._write_whole, []

    def write_whole(path, data):
        calls.append(path)
        if len(calls) > 2 + 1:  # the folder's marker, two frames, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(path, data)

    monkeypatch.setattr(display, "_write_whole", write_whole)
    frames = tmp_path / "pngs"
    # Recordings get one frame per finished picture: each clear() finishes the previous one.
    code, out, err = run_in_process(tmp_path, """
        import lcd
        lcd.init()
        lcd.clear()
        lcd.clear()
        lcd.clear()
    """, lcd=f"record:{frames}")
    assert code == 1
    assert err == (f"maixemu: LCD output failed at main.py line 6: cannot write {frames / 'frame_000003.png'}: "
                   "No space left on device (disk full or no permission?)\n")
    assert len(list(frames.glob("*.png"))) == 2


@pytest.mark.parametrize("target", ["out.mp4", "pngs"])
def test_a_run_that_never_drew_says_nothing_was_recorded(tmp_path, target):
    code, out, err = run_in_process(tmp_path, "print('no lcd here')\n", lcd=f"record:{tmp_path / target}")
    assert code == 0
    assert err.splitlines()[-1] == f"[maixemu] the LCD showed no frame; nothing was recorded to {tmp_path / target}"


FAKE_WINDOW_MAIN = """
import sys, time
import cv2
from maixemu.host import display
from maixemu.cli import main

opened = []
display.display_available = lambda: True
cv2.namedWindow = lambda title, flags=0: opened.append(time.monotonic())
cv2.imshow = lambda title, image: None
cv2.destroyWindow = lambda title: None
cv2.getWindowProperty = lambda title, prop: 1.0

def wait_key(delay=0):
    time.sleep(delay / 1000)
    return 27 if opened and time.monotonic() - opened[0] > 0.3 else -1

cv2.waitKey = wait_key
sys.exit(main(sys.argv[1:]))
"""


def test_window_closed_but_swallowed_by_a_bare_except_still_ends_the_run(tmp_path):
    wrapper = tmp_path / "fake_window_main.py"
    wrapper.write_text(FAKE_WINDOW_MAIN)
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        import lcd, image
        lcd.init()
        img = image.Image(size=(320, 240))
        caught = 0
        while True:
            try:
                lcd.display(img)
            except:
                caught += 1
                print("caught", caught, flush=True)
    """))
    proc = subprocess.run([sys.executable, str(wrapper), "run", str(script), "--lcd", "window"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0
    assert proc.stdout == "caught 1\n"
    assert proc.stderr == "[maixemu] ESC pressed in the LCD window and the script caught the end request; stopping it\n"


def test_second_ctrl_c_stops_a_script_that_swallowed_the_first(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        import lcd, time
        lcd.init()
        ready = False
        while True:
            try:
                if not ready:  # inside the try: a Ctrl-C right after this line is caught too
                    ready = True
                    print("ready", flush=True)
                time.sleep(0.05)
            except:
                print("caught", flush=True)
    """))
    video = tmp_path / "out.mp4"
    proc = subprocess.Popen([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", f"record:{video}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and read_line(proc) == "ready\n"
    proc.send_signal(signal.SIGINT)
    line = read_line(proc)
    assert line == "caught\n", proc.communicate(timeout=60)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert err == "[maixemu] interrupted (Ctrl-C) and the script caught the end request; stopping it\n"
    assert count_video_frames(video) == 1
