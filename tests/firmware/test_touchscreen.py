"""``touchscreen`` as py_touchscreen.c: init's calibration check, read()'s (status, x, y) over a touch's life."""

from __future__ import annotations

import pytest

from maixemu.firmware import touchscreen as ts
from maixemu.firmware.state import current


def test_a_touch_reads_press_move_release_idle():
    ts.init()
    assert ts.read() == (ts.STATUS_IDLE, 0, 0)
    current().touch.touch(10, 20)
    assert ts.read() == (ts.STATUS_PRESS, 10, 20)
    current().touch.touch(12, 25)
    assert ts.read() == (ts.STATUS_MOVE, 12, 25)
    current().touch.release()
    assert ts.read() == (ts.STATUS_RELEASE, 12, 25)
    assert ts.read() == (ts.STATUS_IDLE, 12, 25)


def test_init_checks_the_calibration_tuple_as_the_firmware():
    with pytest.raises(ValueError, match="tuple size must be 7"):
        ts.init(cal=(1, 2, 3))
    ts.init(type=ts.FT62XX, cal=(1, 2, 3))  # the FT62XX driver takes no calibration: not checked
    ts.init(cal=(1, 2, 3, 4, 5, 6, 7))
    assert ts.calibrate() == (1, 2, 3, 4, 5, 6, 7)
    assert (ts.STATUS_IDLE, ts.STATUS_RELEASE, ts.STATUS_PRESS, ts.STATUS_MOVE) == (0, 1, 2, 3)
    assert (ts.NS2009, ts.FT62XX) == (0, 1)


def test_the_lcd_window_mouse_is_the_finger():
    from maixemu.firmware.state import BoardState, bind

    class FakeWindow:
        held: tuple[int, int] | None = (5, 6)

        def pointer(self):
            return self.held

    window = FakeWindow()
    with bind(BoardState(display=window)):
        assert ts.read() == (ts.STATUS_PRESS, 5, 6)
        window.held = None
        assert ts.read() == (ts.STATUS_RELEASE, 5, 6)


def test_the_window_sink_reports_the_held_left_button_in_lcd_pixels():
    cv2 = pytest.importorskip("cv2")
    from maixemu.host.display import WindowSink

    sink = WindowSink.__new__(WindowSink)  # no window is opened: only the mouse bookkeeping runs
    sink._shown_scale, sink._pressed_at = 2, None
    sink._on_mouse(cv2.EVENT_LBUTTONDOWN, 20, 30, cv2.EVENT_FLAG_LBUTTON)
    assert sink.pointer() == (10, 15)
    sink._on_mouse(cv2.EVENT_MOUSEMOVE, 40, 30, cv2.EVENT_FLAG_LBUTTON)
    assert sink.pointer() == (20, 15)
    sink._on_mouse(cv2.EVENT_LBUTTONUP, 40, 30, 0)
    assert sink.pointer() is None
