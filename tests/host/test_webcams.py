"""``maixemu cameras``: which indices are tried, what each answered, a hung camera bounded.

OpenCV's capture is replaced by a stand-in with known cameras (this machine has none); the command
itself runs for real on this machine's /dev.
"""

from __future__ import annotations

import subprocess
import sys
import threading

import numpy as np

from maixemu.commands.cameras import describe
from maixemu.host import webcams


class FakeCapture:
    """Index 0: a 640x480 camera; 2: opens but gives no frame; 5: hangs while opening; others: nothing."""

    release_hang = threading.Event()

    def __init__(self, index: int):
        self.index = index
        if index == 5:
            self.release_hang.wait(30)

    def isOpened(self) -> bool:
        return self.index in (0, 2)

    def getBackendName(self) -> str:
        return "FAKE"

    def read(self):
        return (True, np.zeros((480, 640, 3), np.uint8)) if self.index == 0 else (False, None)

    def get(self, prop: int) -> float:
        import cv2

        return {cv2.CAP_PROP_FRAME_WIDTH: 640.0, cv2.CAP_PROP_FRAME_HEIGHT: 480.0, cv2.CAP_PROP_FPS: 30.0}.get(prop, 0.0)

    def release(self) -> None:
        pass


def test_other_platforms_try_indices_until_two_in_a_row_open_nothing():
    found = list(webcams.list_webcams(10, 2.0, platform="win32", open_capture=FakeCapture))
    assert [(c.index, c.opened, c.frame) for c in found] == [(0, True, True), (1, False, False), (2, True, False),
                                                             (3, False, False), (4, False, False)]
    assert "--camera 0" in describe(found[0]) and "640x480, 30 fps, FAKE" in describe(found[0])
    assert "gave no frame" in describe(found[2])


def test_linux_tries_only_its_video_nodes():
    found = list(webcams.list_webcams(10, 2.0, platform="linux", open_capture=FakeCapture, nodes=lambda: [0, 2, 12]))
    assert [(c.index, c.node, c.usable) for c in found] == [(0, "/dev/video0", True), (2, "/dev/video2", False)]


def test_a_hung_camera_ends_the_listing_in_its_time():
    try:
        found = list(webcams.list_webcams(10, 0.5, platform="linux", open_capture=FakeCapture, nodes=lambda: [0, 5, 6]))
    finally:
        FakeCapture.release_hang.set()
    assert [c.index for c in found] == [0, 5]
    assert "did not answer in 0.5 s" in found[1].note and "stopped" in found[1].note


def test_linux_nodes_are_read_from_dev(tmp_path):
    for name in ("video0", "video10", "video2", "vhci", "video-x"):
        (tmp_path / name).touch()
    assert webcams.linux_nodes(tmp_path) == [0, 2, 10]


def test_the_command_on_this_machine_and_its_bad_options():
    proc = subprocess.run([sys.executable, "-m", "maixemu", "cameras"], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode in (0, 1), proc.stderr
    assert ("--camera" in proc.stdout) and "Traceback" not in proc.stderr
    bad = subprocess.run([sys.executable, "-m", "maixemu", "cameras", "--max", "0"], capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert bad.returncode == 2 and "--max must be" in bad.stderr
