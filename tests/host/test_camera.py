"""Camera sources (maixemu.host.camera): synthetic, folder, still image, video, webcam and its fallback."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from maixemu.host import camera
from maixemu.host.camera import CameraError, open_source


def _write_rgb(path: Path, rgb: tuple[int, int, int], size=(40, 30)) -> None:
    w, h = size
    img = np.zeros((h, w, 3), np.uint8)
    img[...] = rgb[::-1]  # cv2 writes BGR
    assert cv2.imwrite(str(path), img)


class Notices(list):
    def __call__(self, text: str) -> None:
        self.append(text)


# ------------------------------------------------------------------------------- synthetic
def test_synthetic_is_deterministic_and_moves():
    a, b = open_source("synthetic"), open_source("synthetic")
    frames_a = [a.read() for _ in range(5)]
    frames_b = [b.read() for _ in range(5)]
    for fa, fb in zip(frames_a, frames_b):
        assert fa.shape == (240, 320, 3) and fa.dtype == np.uint8
        np.testing.assert_array_equal(fa, fb)
    assert not np.array_equal(frames_a[0], frames_a[1])  # the square moves / the counter changes
    np.testing.assert_array_equal(camera.SyntheticSource().frame(3), frames_a[3])
    assert a.name == "synthetic"


def test_synthetic_has_colour_bars():
    f = camera.SyntheticSource().frame(0)
    # first bar white, second yellow, sixth red (top rows, away from the square and the counter)
    assert tuple(f[5, 5]) == (255, 255, 255)
    assert tuple(f[5, 45]) == (255, 255, 0)
    assert tuple(f[5, 5 * 40 + 5]) == (255, 0, 0)


# ------------------------------------------------------------------------------- folder
def test_folder_sorted_looped_and_unreadable_skipped_once(tmp_path):
    _write_rgb(tmp_path / "b.png", (0, 255, 0))
    _write_rgb(tmp_path / "a.png", (255, 0, 0))
    (tmp_path / "c.txt").write_text("not an image")
    _write_rgb(tmp_path / "d.bmp", (0, 0, 255))
    notes = Notices()
    src = open_source(str(tmp_path), on_notice=notes)
    assert isinstance(src, camera.FolderSource)
    colours = [tuple(src.read()[0, 0]) for _ in range(7)]
    assert colours == [(255, 0, 0), (0, 255, 0), (0, 0, 255)] * 2 + [(255, 0, 0)]
    assert len(notes) == 1 and "c.txt" in notes[0] and "skipping" in notes[0]


def test_folder_without_readable_images_fails_clearly(tmp_path):
    (tmp_path / "x.txt").write_text("nope")
    with pytest.raises(CameraError, match="has no image OpenCV or Pillow can read"):  # at open, not mid-run
        open_source(str(tmp_path), on_notice=lambda s: None)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(CameraError, match="has no files"):
        open_source(str(empty))


# ------------------------------------------------------------------------------- still image
def test_still_image_is_rgb_and_repeats(tmp_path):
    path = tmp_path / "red.png"
    _write_rgb(path, (250, 10, 20), size=(64, 48))
    src = open_source(str(path))
    assert isinstance(src, camera.StillImageSource)
    f1, f2 = src.read(), src.read()
    assert f1.shape == (48, 64, 3)
    assert tuple(f1[10, 10]) == (250, 10, 20)
    np.testing.assert_array_equal(f1, f2)
    assert not f1.flags.writeable


def test_unreadable_still_image_fails(tmp_path):
    path = tmp_path / "broken.jpg"
    path.write_bytes(b"\xff\xd8garbage")
    with pytest.raises(CameraError, match="cannot read image"):
        open_source(str(path))


# ------------------------------------------------------------------------------- video
COLOURS = [(255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 255), (0, 0, 0)]


def _write_video(path: Path, fourcc: str) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), 10.0, (64, 48))
    assert writer.isOpened()
    for c in COLOURS:
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[...] = c[::-1]
        writer.write(frame)
    writer.release()


@pytest.mark.parametrize("name,fourcc", [("clip.avi", "MJPG"), ("clip.mp4", "mp4v")])
def test_video_frames_in_order_and_looped(tmp_path, name, fourcc):
    path = tmp_path / name
    _write_video(path, fourcc)
    notes = Notices()
    src = open_source(str(path), on_notice=notes)
    assert isinstance(src, camera.VideoSource)
    got = [src.read() for _ in range(len(COLOURS) * 2 + 1)]
    for i, frame in enumerate(got):
        assert frame.shape == (48, 64, 3)
        expected = np.array(COLOURS[i % len(COLOURS)])
        assert np.abs(frame[24, 32].astype(int) - expected).max() <= 12, (i, frame[24, 32])
    assert len(notes) == 1 and "looping" in notes[0]  # said once, not at every loop
    src.close()
    src.close()  # idempotent


def test_video_without_loop_ends_with_clear_error(tmp_path):
    path = tmp_path / "clip.avi"
    _write_video(path, "MJPG")
    src = camera.VideoSource(path, loop=False)
    for _ in COLOURS:
        src.read()
    with pytest.raises(CameraError, match="ended after 5 frames"):
        src.read()


def test_not_a_video_fails_clearly(tmp_path):
    path = tmp_path / "notes.dat"
    path.write_bytes(b"hello")
    with pytest.raises(CameraError, match="cannot open video"):
        open_source(str(path))


def test_missing_path_fails_clearly(tmp_path):
    with pytest.raises(CameraError, match="not found.*--camera synthetic"):
        open_source(str(tmp_path / "nothing-here.mp4"))


@pytest.mark.parametrize("flag", [True, False])
def test_a_boolean_is_no_camera_source(flag):
    # e.g. ``camera = true`` in maixemu.toml: a clear CameraError (not webcam 1 or 0, not os.fspath's TypeError)
    with pytest.raises(CameraError, match=f"--camera {flag} is not a camera source; use --camera synthetic"):
        open_source(flag)


# ------------------------------------------------------------------------------- webcam
class _FakeCapture:
    """Stands in for cv2.VideoCapture: ``opened`` decides whether the webcam exists."""

    opened = False
    instances: list["_FakeCapture"] = []

    def __init__(self, index):
        self.index = index
        self.released = False
        _FakeCapture.instances.append(self)

    def isOpened(self):
        return self.opened

    def read(self):
        frame = np.zeros((480, 640, 3), np.uint8)
        frame[..., 2] = 200  # BGR: red
        return True, frame

    def release(self):
        self.released = True


@pytest.fixture
def fake_webcam(monkeypatch):
    _FakeCapture.instances = []
    monkeypatch.setattr(camera.sys, "platform", "darwin")  # skip the /dev/videoN check
    monkeypatch.setattr(camera.cv2, "VideoCapture", _FakeCapture)
    return _FakeCapture


def test_missing_webcam_fails_with_hint(fake_webcam, monkeypatch):
    monkeypatch.setattr(fake_webcam, "opened", False)
    with pytest.raises(CameraError) as info:
        open_source("0")
    assert str(info.value) == "no webcam at index 0; use --camera synthetic|DIR|VIDEO|IMAGE"
    assert fake_webcam.instances[0].released


def test_auto_falls_back_to_synthetic_once(fake_webcam, monkeypatch):
    monkeypatch.setattr(fake_webcam, "opened", False)
    notes = Notices()
    src = open_source(None, on_notice=notes)
    assert isinstance(src, camera.SyntheticSource)
    assert len(notes) == 1 and "synthetic" in notes[0]
    src2 = open_source("auto", on_notice=notes)
    assert isinstance(src2, camera.SyntheticSource)


def test_missing_device_node_on_linux(monkeypatch):
    monkeypatch.setattr(camera.sys, "platform", "linux")
    with pytest.raises(CameraError, match="no webcam at index 57"):
        camera.WebcamSource(57)


def test_webcam_frames_are_rgb(fake_webcam, monkeypatch):
    monkeypatch.setattr(fake_webcam, "opened", True)
    src = open_source("0")
    assert isinstance(src, camera.WebcamSource) and src.name == "webcam 0"
    frame = src.read()
    assert frame.shape == (480, 640, 3) and tuple(frame[0, 0]) == (200, 0, 0)
    src.close()
    assert fake_webcam.instances[0].released
    auto = open_source("auto", on_notice=lambda s: pytest.fail("no notice expected"))
    assert isinstance(auto, camera.WebcamSource)
