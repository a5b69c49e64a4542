"""Hardening: camera faults end (or continue) a run as a user expects, each with one clear line.

Webcams are faked (``cv2.VideoCapture`` replaced) and runs are in-process so the fake applies; file
sources go through ``python -m maixemu run``. A source that never worked exits 2 (choose another
``--camera``), one that failed mid-run exits 1.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
import textwrap
from pathlib import Path

import cv2
import numpy as np
import pytest

from _shared import split_summary

from maixemu.host import camera
from maixemu.runner import RunSpec, run_script

HINT = "use --camera synthetic|DIR|VIDEO|IMAGE"

LOOP = """
import sensor
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
while True:
    img = sensor.snapshot()
    print("frame", flush=True)
"""


class FakeCapture:
    """A webcam that opens (or not) and delivers ``frames`` frames, then nothing (unplugged)."""

    def __init__(self, opened: bool, frames: int):
        self.opened, self.left = opened, frames

    def isOpened(self) -> bool:  # noqa: N802 - cv2's name
        return self.opened

    def read(self):
        if self.left <= 0:
            return False, None
        self.left -= 1
        return True, np.full((240, 320, 3), 90, np.uint8)

    def release(self) -> None:
        self.opened = False


@pytest.fixture
def fake_webcam(monkeypatch):
    def install(opened: bool = True, frames: int = 0):
        monkeypatch.setattr(camera, "_webcam_node_present", lambda index: True)
        monkeypatch.setattr(camera.WebcamSource, "READ_TIMEOUT_S", 0.1)
        monkeypatch.setattr(cv2, "VideoCapture", lambda *args: FakeCapture(opened, frames))

    return install


def run_in_process(tmp_path: Path, body: str, **options) -> tuple[int, str, str]:
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(body))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_script(RunSpec(lcd="none", **options), script, stderr=err)
    return code, out.getvalue(), err.getvalue()


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", "run", *args], capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_webcam_that_fails_to_open_is_one_line_exit_2(tmp_path, fake_webcam):
    fake_webcam(opened=False)
    code, out, err = run_in_process(tmp_path, LOOP, camera="0")
    assert code == 2
    assert out == ""
    assert err == f"maixemu: camera failed at main.py line 3: no webcam at index 0; {HINT}\n"


def test_webcam_without_frames_is_one_line_exit_2(tmp_path, fake_webcam):
    fake_webcam(frames=0)
    code, out, err = run_in_process(tmp_path, LOOP, camera="0")
    assert code == 2
    assert err == ("maixemu: camera failed at main.py line 7: webcam 0 opened but delivered no frame in 0.1 s "
                   f"(is another program using it?); {HINT}\n")


def test_webcam_unplugged_mid_run_is_one_line_exit_1(tmp_path, fake_webcam):
    fake_webcam(frames=5)
    code, out, err = run_in_process(tmp_path, LOOP, camera="0")
    assert code == 1
    assert out == "frame\n" * 5
    assert err == ("maixemu: camera failed at main.py line 7: webcam 0 stopped delivering frames after 5 frames "
                   f"(unplugged?); {HINT}\n")


def test_a_script_can_still_catch_the_device_error(tmp_path, fake_webcam):
    fake_webcam(opened=False)
    code, out, err = run_in_process(tmp_path, """
        import sensor
        try:
            sensor.reset()
        except OSError as e:
            print("no camera:", e)
    """, camera="0", quiet=True)
    assert code == 0
    assert out == f"no camera: Reset Failed (no webcam at index 0; {HINT})\n"


def test_no_webcam_with_the_default_camera_falls_back_to_synthetic(tmp_path, fake_webcam):
    fake_webcam(opened=False)
    code, out, err = run_in_process(tmp_path, LOOP, frames=2)
    assert code == 0
    assert out == "frame\n" * 2
    assert err.splitlines()[0] == (
        "[maixemu] no webcam found (index 0): the camera shows a synthetic test pattern; pass "
        "--camera 0|DIR|VIDEO|IMAGE to choose a source")


def write_video(path: Path, frames: int) -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    assert writer.isOpened()
    for n in range(frames):
        writer.write(np.full((48, 64, 3), n * 20, np.uint8))
    writer.release()
    return path


def test_video_that_ends_loops_and_says_so_once(tmp_path):
    video = write_video(tmp_path / "clip.avi", 5)
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(LOOP))
    proc = run_cli(str(script), "--lcd", "none", "--camera", str(video), "--frames", "17")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "frame\n" * 17
    rest, ended = split_summary(proc.stderr)
    assert ended == "frame budget of 17 frames reached; run ended"
    assert rest.splitlines() == [
        "[maixemu] video clip.avi ended after 5 frames; looping",
    ]


def test_file_that_is_no_video_is_one_line_exit_2(tmp_path):
    bogus = tmp_path / "clip.mp4"
    bogus.write_text("not a video")
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(LOOP))
    proc = run_cli(str(script), "--lcd", "none", "--camera", str(bogus))
    assert proc.returncode == 2
    assert proc.stderr == (f"maixemu: camera failed at main.py line 3: cannot open video {bogus}: OpenCV has no "
                           f"decoder for it or it is not a video; {HINT}\n")


def test_unreadable_image_in_a_folder_is_skipped_with_one_line(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    cv2.imwrite(str(folder / "a.png"), np.zeros((48, 64, 3), np.uint8))
    (folder / "b.jpg").write_bytes(b"\xff\xd8 truncated jpeg")
    cv2.imwrite(str(folder / "c.png"), np.full((48, 64, 3), 200, np.uint8))
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(LOOP))
    proc = run_cli(str(script), "--lcd", "none", "--camera", str(folder), "--frames", "6")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "frame\n" * 6
    rest, ended = split_summary(proc.stderr)
    assert ended == "frame budget of 6 frames reached; run ended"
    assert rest.splitlines() == [
        "[maixemu] camera folder: skipping b.jpg (not an image OpenCV or Pillow can read)",
    ]


def test_folder_without_any_readable_image_is_one_line_exit_2(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    (folder / "notes.txt").write_text("hello")
    (folder / "broken.png").write_bytes(b"\x89PNG nothing else")
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(LOOP))
    proc = run_cli(str(script), "--lcd", "none", "--camera", str(folder))
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (f"maixemu: camera failed at main.py line 3: folder {folder} has no image OpenCV or "
                           f"Pillow can read (2 files tried); {HINT}\n")
