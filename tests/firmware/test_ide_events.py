"""The IDE's frame-buffer copy follows the firmware (``omv/framebuffer.c`` ``fb_update_jpeg_buffer``).

The firmware copies the main frame buffer for the IDE at the start of ``snapshot()`` (so the IDE
shows the previous frame with the script's drawings), in ``sensor.flush()`` and in the
``copy_to_fb`` paths *before* they overwrite it — never in ``lcd.display``. Also: ``clock.fps()``
values and the KPU's runs reach their listeners.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import ide_events, image, lcd, sensor, utime
from maixemu.firmware.state import current
from maixemu.host.camera import FrameSource


class Solid(FrameSource):
    """Frame n is a solid colour: (10n, 20, 30) — so each snapshot is recognisable."""

    def __init__(self):
        self.n = 0
        self.name = "solid"

    def read(self):
        self.n += 1
        frame = np.zeros((240, 320, 3), np.uint8)
        frame[:] = (min(255, 10 * self.n), 20, 30)
        return frame


@pytest.fixture()
def copies(board_state):
    board_state.camera.plug(Solid)
    got: list = []
    board_state.events.framebuffer.append(got.append)
    return got


def start_camera():
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)


def red_of(img) -> int:
    return img.get_pixel(160, 120)[0]


def test_snapshot_hands_over_the_previous_frame_with_the_drawings(copies):
    start_camera()
    first = sensor.snapshot()
    assert copies == []  # the board's frame buffer was empty: the IDE shows nothing yet
    first.draw_rectangle(0, 0, 20, 10, color=(255, 255, 255), fill=True)
    first_red = red_of(first)
    second = sensor.snapshot()  # (``first`` is the same frame-buffer memory: it now shows frame 2)
    (copy,) = copies
    assert copy.get_pixel(5, 5) == (255, 255, 255)  # the script's drawing is in the IDE's picture
    assert red_of(copy) == first_red  # ... on the frame before the new one
    assert red_of(second) != first_red


def test_the_copy_is_detached_from_the_frame_buffer(copies):
    start_camera()
    sensor.snapshot()
    sensor.snapshot()
    before = copies[0].get_pixel(100, 100)
    sensor.get_fb().draw_rectangle(90, 90, 20, 20, color=(0, 0, 255), fill=True)
    assert copies[0].get_pixel(100, 100) == before


def test_update_jb_false_skips_the_copy(copies):
    start_camera()
    sensor.snapshot()
    sensor.snapshot(update_jb=False)
    assert copies == []
    sensor.snapshot()
    assert len(copies) == 1


def test_flush_hands_over_the_frame_buffer_as_it_is_now(copies):
    start_camera()
    img = sensor.snapshot()
    img.draw_string(0, 0, "end", color=(255, 0, 0))
    sensor.flush()
    (copy,) = copies
    assert red_of(copy) == red_of(img)
    assert np.array_equal(copy._pix, img._pix)


def test_lcd_display_does_not_update_the_ide_frame_buffer(copies):
    lcd.init()
    start_camera()
    img = sensor.snapshot()
    for _ in range(3):
        lcd.display(img)
    assert copies == []


def test_image_copy_to_fb_hands_over_the_old_frame_buffer_first(copies):
    start_camera()
    old = sensor.snapshot()
    old_red = red_of(old)
    canvas = image.Image(copy_to_fb=True)
    (copy,) = copies
    assert red_of(copy) == old_red  # the old picture, taken before the frame buffer was cleared
    canvas.draw_rectangle(0, 0, 320, 240, color=(0, 255, 0), fill=True)
    sensor.flush()
    assert copies[-1].get_pixel(10, 10) == (0, 255, 0)


def test_copy_with_copy_to_fb_hands_over_the_old_frame_buffer_first(copies):
    start_camera()
    frame_red = red_of(sensor.snapshot())
    small = image.Image(size=(40, 30))
    small.draw_rectangle(0, 0, 40, 30, color=(0, 0, 255), fill=True)
    small.copy(copy_to_fb=True)
    (copy,) = copies
    assert (copy.width(), copy.height()) == (320, 240)
    assert red_of(copy) == frame_red
    sensor.flush()
    assert (copies[-1].width(), copies[-1].height()) == (40, 30)


def test_no_listener_no_copy(copies):
    current().events.framebuffer.clear()
    start_camera()
    sensor.snapshot()
    sensor.snapshot()
    assert copies == []


def test_clock_fps_values_reach_the_listeners(copies):
    values: list[float] = []
    current().events.clock_fps.append(values.append)
    clock = utime.clock()
    clock.tick()
    returned = clock.fps()
    assert values == [returned]
