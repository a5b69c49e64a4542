"""The IDE page's recordings play in real time: the video, at its fixed rate, shows every picture
as long as the run showed it (held for a slow script, dropped above the video's rate, a pause held
until Stop), instead of one video frame per picture (a 5 fps script played three times too fast).

The times are the channel's own clock (a test clock here), so nothing depends on this machine's speed.
"""

from __future__ import annotations

import threading
import time

import cv2
import numpy as np
import pytest

from maixemu.host import display
from maixemu.host.ide.channel import ArrayFrame, IdeChannel
from maixemu.host.ide.recorder import FrameRecorder
from maixemu.host.video_timing import MAX_OUTPUT_FRAMES, hold_counts

COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0), (0, 255, 255), (255, 0, 255)]


def solid(index: int, size: tuple[int, int] = (32, 24)) -> np.ndarray:
    return np.full((size[1], size[0], 3), COLOURS[index], dtype=np.uint8)


def video_colours(path) -> list[int]:
    """Which of :data:`COLOURS` each frame of the video shows (by its centre pixel)."""
    video = cv2.VideoCapture(str(path))
    found = []
    while True:
        ok, bgr = video.read()
        if not ok:
            break
        rgb = bgr[bgr.shape[0] // 2, bgr.shape[1] // 2, ::-1].astype(int)
        found.append(int(np.argmin([np.abs(rgb - colour).sum() for colour in COLOURS])))
    video.release()
    return found


# ------------------------------------------------------------------ the schedule
def test_a_slow_scripts_frames_are_held_as_long_as_they_were_shown():
    assert hold_counts([0.0, 0.2, 0.4, 0.6], 0.8, 15).tolist() == [3, 3, 3, 3]  # 5 fps in a 15 fps video


def test_frames_faster_than_the_video_are_dropped_and_the_length_stays():
    counts = hold_counts(np.arange(60) / 60, 1.0, 15)  # 60 fps for a second
    assert counts.sum() == 15 and set(counts.tolist()) == {0, 1}
    assert counts[::4].tolist() == [1] * 15  # every fourth picture is the one on screen at its tick


def test_a_pause_and_the_time_until_stop_are_held():
    assert hold_counts([0.0, 0.1, 2.1], 3.0, 10).tolist() == [1, 20, 9]
    assert hold_counts([5.0], None, 15).tolist() == [1]  # no end known: one frame
    assert hold_counts([5.0], 5.0, 15).tolist() == [1]


def test_a_clock_step_back_or_a_jump_never_runs_away():
    # the step back counts as "at once" (the later picture wins), never reordered; a frame at Stop gets no time
    assert hold_counts([0.0, 1.0, 0.5, 2.0], 2.0, 2).tolist() == [2, 0, 2, 0]
    assert hold_counts([0.0, 1e12], None, 15).sum() == MAX_OUTPUT_FRAMES


def test_bad_schedules_are_clear_errors():
    assert hold_counts([], 1.0, 15).size == 0
    with pytest.raises(ValueError, match="fps"):
        hold_counts([0.0], 1.0, 0)
    with pytest.raises(ValueError, match="one list"):
        hold_counts([[0.0]], 1.0, 15)


# ------------------------------------------------------------------ the video file
def test_a_timed_video_lasts_as_long_as_the_recording(tmp_path):
    sink = display.VideoFileSink(tmp_path / "timed.mp4", fps=15, timed=True)
    for index, at in enumerate([10.0, 10.2, 10.4, 11.4]):  # 5 fps, then a one-second pause
        sink.show_at(solid(index), at)
    sink.end_at(11.6)
    sink.close()
    assert video_colours(tmp_path / "timed.mp4") == [0] * 3 + [1] * 3 + [2] * 15 + [3] * 3


def test_the_lcd_recording_stays_one_video_frame_per_picture(tmp_path):
    sink = display.VideoFileSink(tmp_path / "lcd.mp4", fps=15)
    for index in range(3):
        sink.show(solid(index))
    sink.close()
    assert video_colours(tmp_path / "lcd.mp4") == [0, 1, 2]
    timed = display.VideoFileSink(tmp_path / "untimed.mp4", timed=True)
    with pytest.raises(ValueError, match="time"):
        timed.show(solid(0))
    timed.close()


# ------------------------------------------------------------------ the Record button
def wait_until(condition, what: str, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


class ManualClock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0
        self.lock = threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now


def test_record_keeps_each_frame_buffer_picture_on_screen_as_long_as_the_run_did(tmp_path):
    clock = ManualClock()
    channel = IdeChannel(clock=clock)
    channel.publish_framebuffer(ArrayFrame(solid(0)))  # on screen before Record: the video starts at Record
    clock.now = 101.0
    recorder = FrameRecorder(channel, tmp_path)
    path = recorder.start()
    wait_until(lambda: recorder.frames_written == 1, what="the picture on screen recorded")
    for index, at in ((1, 101.2), (2, 101.4), (3, 102.4)):  # a 5 fps script, then a one-second pause
        clock.now = at
        channel.publish_framebuffer(ArrayFrame(solid(index)))
        wait_until(lambda: recorder.frames_written == index + 1, what=f"frame {index} recorded")
    clock.now = 102.6
    recorder.stop()
    assert video_colours(path) == [0] * 3 + [1] * 3 + [2] * 15 + [3] * 3
