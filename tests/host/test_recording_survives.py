"""Recordings survive (issue 10): SIGHUP/SIGQUIT finalise like SIGTERM, a SIGKILL loses at most the
frame being written (frames are on disk as they are recorded), stale frames of an earlier run are
never mixed with new ones, and two runs recording to one target at once get an error."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import cv2
import pytest

from _shared import split_summary, video_frame_count

LOOP = textwrap.dedent("""
    import sensor, lcd
    lcd.init()
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)
    n = 0
    while True:
        img = sensor.snapshot()          # the previous picture is recorded now
        lcd.display(img)
        n += 1
        print(n, flush=True)
""")


def start(tmp_path: Path, target: str, *extra: str) -> subprocess.Popen:
    script = tmp_path / "main.py"
    script.write_text(LOOP)
    return subprocess.Popen([sys.executable, "-m", "maixemu", "run", str(script), "--camera", "synthetic",
                             "--lcd", f"record:{target}", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, stdin=subprocess.DEVNULL)


def wait_for_frame(proc: subprocess.Popen, n: int) -> None:
    for line in proc.stdout:
        if line.strip() == str(n):
            return
    raise AssertionError(f"the run ended before frame {n}: {proc.communicate(timeout=60)}")


def killed_at(tmp_path: Path, target: Path, frame: int) -> None:
    """A recording run killed with SIGKILL (no clean-up at all) right after its ``frame``-th frame."""
    proc = start(tmp_path, str(target))
    wait_for_frame(proc, frame)
    proc.kill()
    proc.communicate(timeout=60)


def rerun(tmp_path: Path, target: Path, frames: int) -> subprocess.CompletedProcess:
    """The same script again, recording ``frames`` frames to ``target``."""
    return subprocess.run([sys.executable, "-m", "maixemu", "run", str(tmp_path / "main.py"), "--camera", "synthetic",
                           "--lcd", f"record:{target}", "--frames", str(frames), "-q"], capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def test_sigkill_keeps_every_recorded_frame_of_a_video(tmp_path):
    video = tmp_path / "out.mp4"
    killed_at(tmp_path, video, 30)
    journal = tmp_path / "out.mp4.unfinished.mjpeg"
    assert video_frame_count(journal) >= 29  # picture 29 was recorded when snapshot 30 was taken
    # The next run to the same name keeps those frames: it refuses, in one line.
    again = rerun(tmp_path, video, 3)
    assert again.returncode == 2
    assert again.stderr == (f"maixemu: cannot record to {video}: {journal} holds the frames of an earlier recording "
                            "that never finished (was the run killed?); it plays as an MJPEG video: move or delete "
                            "it first\n")
    assert video_frame_count(journal) >= 29


def test_sigkill_leaves_only_whole_png_frames(tmp_path):
    folder = tmp_path / "pngs"
    killed_at(tmp_path, folder, 20)
    frames = sorted(folder.glob("frame_*.png"))
    assert len(frames) >= 19
    assert all(cv2.imread(str(p)) is not None for p in frames)
    assert [p.name for p in frames] == [f"frame_{i:06d}.png" for i in range(1, len(frames) + 1)]


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1])
def test_fatal_signals_finalise_the_recording_like_sigterm(tmp_path, signum):
    video = tmp_path / "out.mp4"
    proc = start(tmp_path, str(video))
    wait_for_frame(proc, 5)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum
    assert split_summary(err)[1] == f"terminated ({signal.Signals(signum).name}); run ended, exit {128 + signum}"
    assert video_frame_count(video) >= 5
    assert not (tmp_path / "out.mp4.unfinished.mjpeg").exists()


@pytest.mark.parametrize("target", ["out.avi", "pngs"])
def test_two_runs_recording_to_one_target_get_an_error(tmp_path, target):
    first = start(tmp_path, str(tmp_path / target))
    wait_for_frame(first, 3)
    second = rerun(tmp_path, tmp_path / target, 2)
    first.send_signal(signal.SIGTERM)
    first.communicate(timeout=120)
    assert first.returncode == 143
    assert second.returncode == 2
    assert second.stderr == (f"maixemu: another maixemu run is recording to {tmp_path / target} right now; choose "
                             "another name (record:OTHER) or wait for it to end\n")


def _record_pngs(tmp_path: Path, folder: Path, frames: int) -> subprocess.CompletedProcess:
    (tmp_path / "main.py").write_text(LOOP)
    return rerun(tmp_path, folder, frames)


def test_a_folder_of_an_earlier_recording_is_replaced_never_mixed(tmp_path):
    folder = tmp_path / "pngs"
    assert _record_pngs(tmp_path, folder, 6).returncode == 0
    first = len(list(folder.glob("frame_*.png")))
    assert _record_pngs(tmp_path, folder, 3).returncode == 0
    names = sorted(p.name for p in folder.glob("frame_*.png"))
    assert len(names) == first - 3  # lcd.init's picture and one per frame: none of the first run's left
    assert names == [f"frame_{i:06d}.png" for i in range(1, len(names) + 1)]


def test_frames_maixemu_did_not_record_are_refused(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "frame_000001.png").write_bytes(b"someone else's picture")
    proc = _record_pngs(tmp_path, folder, 3)
    assert proc.returncode == 2
    assert proc.stderr == (f"maixemu: cannot record into {folder}: it holds 1 frames (frame_000001.png ...) of "
                           "pictures maixemu did not record; record into an empty folder or move them first\n")
    assert (folder / "frame_000001.png").read_bytes() == b"someone else's picture"
