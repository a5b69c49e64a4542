"""Display sinks (maixemu.host.display): none, PNG folder, .mp4/.avi recordings, window logic, auto choice."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from maixemu.host import display
from maixemu.host.display import DisplayError, WindowClosed, open_sink


def _frame(i: int, w: int = 320, h: int = 240) -> np.ndarray:
    """Frame i: a solid colour from a short cycle plus a white block that moves with i."""
    colours = [(255, 0, 0), (0, 255, 0), (0, 0, 255)]
    f = np.zeros((h, w, 3), np.uint8)
    f[...] = colours[i % 3]
    f[10:30, 10 + 4 * i : 30 + 4 * i] = 255
    return f


def _count_video_frames(path) -> int:
    cap = cv2.VideoCapture(str(path))
    assert cap.isOpened(), f"cv2 cannot read back {path}"
    n = 0
    while True:
        ok, _ = cap.read()
        if not ok:
            break
        n += 1
    cap.release()
    return n


def test_none_sink_counts_frames():
    sink = open_sink("none")
    for i in range(3):
        sink.show(_frame(i))
    assert sink.frames_shown == 3 and not sink.closed
    sink.close()
    assert sink.closed
    with pytest.raises(WindowClosed):
        sink.show(_frame(0))


def test_bad_frame_is_refused():
    with pytest.raises(DisplayError, match=r"\(H, W, 3\) uint8"):
        open_sink("none").show(np.zeros((4, 4), np.uint8))


def test_png_folder_records_numbered_frames(tmp_path):
    folder = tmp_path / "frames"
    sink = open_sink(f"record:{folder}")
    assert isinstance(sink, display.PngFolderSink)
    frames = [_frame(i) for i in range(3)]
    for f in frames:
        sink.show(f)
    sink.close()
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))
    assert names == ["frame_000001.png", "frame_000002.png", "frame_000003.png"]
    assert (folder / ".maixemu-recording.json").read_text() == '{"state": "finished", "frames": 3}'
    for name, f in zip(names, frames):
        back = cv2.imread(str(folder / name))[:, :, ::-1]
        np.testing.assert_array_equal(back, f)  # PNG is lossless and RGB order is kept


@pytest.mark.parametrize("suffix", [".mp4", ".avi"])
def test_video_recording_is_finalised_and_readable(tmp_path, suffix):
    path = tmp_path / f"out{suffix}"
    sink = open_sink(f"record:{path}")
    assert isinstance(sink, display.VideoFileSink)
    for i in range(12):
        sink.show(_frame(i))
    sink.close()
    sink.close()  # idempotent
    assert _count_video_frames(path) == 12
    cap = cv2.VideoCapture(str(path))
    ok, first = cap.read()
    cap.release()
    assert ok and first.shape == (240, 320, 3)
    r, g, b = first[120, 160, ::-1].astype(int)
    assert r > 200 and g < 60 and b < 60  # frame 0 is red: colours not swapped


def test_video_odd_panel_size_is_padded(tmp_path):
    path = tmp_path / "m5.mp4"
    sink = open_sink(f"record:{path}")
    for i in range(4):
        sink.show(_frame(i, 240, 135))
    sink.close()
    cap = cv2.VideoCapture(str(path))
    ok, first = cap.read()
    cap.release()
    assert ok and first.shape == (136, 240, 3)
    assert _count_video_frames(path) == 4


def test_video_finalised_when_garbage_collected(tmp_path):
    path = tmp_path / "gc.avi"
    sink = open_sink(f"record:{path}")
    for i in range(5):
        sink.show(_frame(i))
    del sink
    import gc

    gc.collect()
    assert _count_video_frames(path) == 5


def test_record_errors(tmp_path):
    with pytest.raises(DisplayError, match="needs a path"):
        open_sink("record:")
    f = tmp_path / "file.txt"
    f.write_text("x")
    with pytest.raises(DisplayError, match="not .mp4/.avi"):
        open_sink(f"record:{f}")
    with pytest.raises(DisplayError, match="unknown LCD output"):
        open_sink("projector")


def test_auto_without_display_is_none_with_one_notice(monkeypatch):
    monkeypatch.setattr(display.sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    notes: list[str] = []
    sink = open_sink(None, on_notice=notes.append)
    assert isinstance(sink, display.NullSink)
    assert len(notes) == 1 and "no display" in notes[0]
    with pytest.raises(DisplayError, match="no display"):
        open_sink("window")


def test_window_closed_is_not_an_exception():
    # scripts' "except Exception:" must not swallow the user's request to stop
    assert issubclass(WindowClosed, BaseException) and not issubclass(WindowClosed, Exception)


def test_local_display_without_x_server_is_not_available(monkeypatch):
    monkeypatch.setattr(display.sys, "platform", "linux")
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setenv("DISPLAY", ":4711")  # no /tmp/.X11-unix/X4711: Qt would abort the process
    assert not display.display_available()
    notes: list[str] = []
    assert isinstance(open_sink("auto", on_notice=notes.append), display.NullSink) and len(notes) == 1
    monkeypatch.setenv("DISPLAY", "remotehost:0")
    assert display.display_available()


def test_auto_window_falls_back_when_opencv_has_no_gui(monkeypatch):
    monkeypatch.setattr(display, "display_available", lambda: True)

    def headless(*args, **kwargs):
        raise cv2.error("The function is not implemented")

    monkeypatch.setattr(display.cv2, "namedWindow", headless)
    notes: list[str] = []
    sink = open_sink("auto", on_notice=notes.append)
    sink.show(_frame(0))
    sink.show(_frame(1))
    assert sink.frames_shown == 2 and len(notes) == 1 and "opencv-python-headless" in notes[0]
    with pytest.raises(DisplayError, match="cannot open a window"):
        open_sink("window").show(_frame(0))


class _FakeHighGui:
    """Records cv2 window calls; ``keys`` are returned by waitKey, ``visible`` by getWindowProperty."""

    def __init__(self):
        self.shown: list[np.ndarray] = []
        self.keys: list[int] = []
        self.visible = 1.0
        self.destroyed = False

    def install(self, monkeypatch):
        monkeypatch.setattr(display, "display_available", lambda: True)
        monkeypatch.setattr(display.cv2, "namedWindow", lambda *a, **k: None)
        monkeypatch.setattr(display.cv2, "imshow", lambda title, img: self.shown.append(img.copy()))
        monkeypatch.setattr(display.cv2, "waitKey", lambda ms: self.keys.pop(0) if self.keys else -1)
        monkeypatch.setattr(display.cv2, "getWindowProperty", lambda *a: self.visible)
        monkeypatch.setattr(display.cv2, "destroyWindow", lambda *a: setattr(self, "destroyed", True))


def test_window_scales_small_panels_and_converts_to_bgr(monkeypatch):
    gui = _FakeHighGui()
    gui.install(monkeypatch)
    sink = open_sink("window")
    frame = _frame(0)
    sink.show(frame)
    shown = gui.shown[0]
    assert shown.shape == (480, 640, 3)  # x2 for a 320x240 panel
    assert tuple(shown[200, 300]) == (0, 0, 255)  # red in BGR
    np.testing.assert_array_equal(shown[::2, ::2, ::-1], frame)
    sink.show(np.zeros((480, 800, 3), np.uint8))  # big panels are shown 1:1
    assert gui.shown[1].shape == (480, 800, 3)
    assert sink.frames_shown == 2


def test_window_esc_ends_the_run(monkeypatch):
    gui = _FakeHighGui()
    gui.install(monkeypatch)
    sink = open_sink("window")
    sink.show(_frame(0))
    gui.keys.append(27)
    with pytest.raises(WindowClosed):
        sink.show(_frame(1))
    assert sink.closed and gui.destroyed


def test_window_close_button_ends_the_run(monkeypatch):
    gui = _FakeHighGui()
    gui.install(monkeypatch)
    sink = open_sink("window")
    sink.show(_frame(0))
    gui.visible = 0.0
    sink.pump()
    assert sink.closed
    with pytest.raises(WindowClosed):
        sink.show(_frame(1))
