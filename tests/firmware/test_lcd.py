"""The lcd module: colours on the output, init types, display crop/centre/oft rules, text, rotation, sink pushes."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import lcd, sensor
from maixemu.firmware.state import current
from maixemu.firmware.image import Image, _color
from maixemu.host.display import NullSink


def plug(sink, hook=None) -> None:
    """Connect ``sink`` to the test's board (and ``hook`` to its ``lcd_push`` event)."""
    board = current()
    board.display = sink
    if hook is not None:
        board.events.lcd_push.append(hook)


def rgb_image(w: int, h: int, seed: int = 0) -> tuple[Image, np.ndarray]:
    """An RGB565 image of random colours and the RGB the panel must show for it."""
    rng = np.random.default_rng(seed)
    rgb = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
    shown = _color.rgb565_to_888(_color.rgb888_to_565(rgb))
    return Image._from_rgb888(rgb), shown


def px(y: int, x: int) -> tuple[int, int, int]:
    return tuple(int(v) for v in lcd.screen()[y, x])


# ------------------------------------------------------------------------------- colours
COLOURS = {
    "RED": (255, 0, 0), "GREEN": (0, 255, 0), "BLUE": (0, 0, 255), "WHITE": (255, 255, 255),
    "BLACK": (0, 0, 0), "NAVY": (0, 0, 123), "YELLOW": (255, 255, 0), "CYAN": (0, 255, 255),
    "MAGENTA": (255, 0, 255), "PINK": (255, 0, 255),
}


@pytest.mark.parametrize("name", sorted(COLOURS))
def test_colour_constants_decode_on_the_output(name):
    lcd.init()
    lcd.clear(getattr(lcd, name))
    assert px(0, 0) == COLOURS[name] and px(239, 319) == COLOURS[name]


def test_colour_constant_values_are_byte_swapped():
    expected = dict(BLACK=0x0000, NAVY=0x0F00, DARKGREEN=0xE003, DARKCYAN=0xEF03, MAROON=0x0078, PURPLE=0x0F78,
                    OLIVE=0xE07B, LIGHTGREY=0x18C6, DARKGREY=0xEF7B, BLUE=0x1F00, GREEN=0xE007, CYAN=0xFF07,
                    RED=0x00F8, MAGENTA=0x1FF8, YELLOW=0xE0FF, WHITE=0xFFFF, ORANGE=0x20FD, GREENYELLOW=0xE5AF,
                    PINK=0x1FF8)
    for name, value in expected.items():
        assert getattr(lcd, name) == value, name


def test_raw_ints_are_never_standard_rgb565():
    lcd.init()
    lcd.clear(0xF800)  # "standard" red is a blue on the K210
    assert px(5, 5) == (0, 28, 197)
    lcd.clear(31)
    assert px(5, 5) == (25, 227, 0)
    lcd.clear((255, 128, 0))  # tuples go through the 8->5/6 tables
    assert px(5, 5) == (255, 130, 0)


def test_init_fills_with_colour_and_pushes():
    sink = NullSink()
    hooks = []
    plug(sink, lambda: hooks.append(1))
    lcd.init(color=lcd.BLUE)
    assert px(100, 100) == (0, 0, 255)
    assert sink.frames_shown == 1 and hooks == [1]


# ------------------------------------------------------------------------------- init types
def test_init_types_and_sizes():
    lcd.init()
    assert (lcd.width(), lcd.height(), lcd.type()) == (320, 240, 1)
    lcd.init(type=1, width=480, height=320)
    assert (lcd.width(), lcd.height()) == (480, 320) and lcd.screen().shape == (320, 480, 3)
    lcd.init(type=2, width=320, height=240)  # the Cube is always 240x240
    assert (lcd.width(), lcd.height(), lcd.type()) == (240, 240, 2)
    lcd.init(type=3)
    assert (lcd.width(), lcd.height()) == (240, 135)
    lcd.init(type=4)
    assert (lcd.width(), lcd.height()) == (240, 240)
    lcd.init(type=5, lcd_type=3)
    assert (lcd.width(), lcd.height()) == (800, 480)
    lcd.init(type=0)
    assert (lcd.width(), lcd.height(), lcd.type()) == (None, None, None)
    with pytest.raises(ValueError, match="^type error$"):
        lcd.init(type=6)


def test_positional_init_and_freq():
    lcd.init(1, 20000000)
    assert lcd.freq() == 20000000
    assert lcd.freq(15000000) == 15000000 and lcd.freq() == 15000000
    assert lcd.set_backlight(1) is None and lcd.get_backlight() is None


def test_uninitialised_panel():
    assert lcd.width() is None and lcd.screen() is None
    with pytest.raises(ValueError, match=r"^not init(\n\[maixemu\] .*)?$"):
        lcd.draw_string(0, 0, "x")
    with pytest.raises(ValueError, match=r"^not init(\n\[maixemu\] .*)?$"):
        lcd.fill_rectangle(0, 0, 1, 1, lcd.RED)
    img, _ = rgb_image(8, 8)
    sink = NullSink()
    plug(sink)
    assert lcd.display(img) is None and lcd.clear() is None
    assert sink.frames_shown == 0


def test_deinit():
    lcd.init()
    lcd.deinit()
    assert lcd.width() is None
    with pytest.raises(ValueError, match=r"^not init(\n\[maixemu\] .*)?$"):
        lcd.draw_string(0, 0, "x")


# ------------------------------------------------------------------------------- display
def test_full_screen_image_is_shown_exactly():
    lcd.init()
    img, shown = rgb_image(320, 240)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown)


def test_smaller_image_is_centred_with_black_bands():
    lcd.init(color=lcd.WHITE)
    img, shown = rgb_image(224, 224, seed=1)
    lcd.display(img)
    s = lcd.screen()
    np.testing.assert_array_equal(s[8:232, 48:272], shown)
    assert not s[:8].any() and not s[232:].any() and not s[:, :48].any() and not s[:, 272:].any()


def test_odd_padding_puts_the_extra_pixel_right_and_bottom():
    lcd.init(color=lcd.WHITE)
    img, shown = rgb_image(223, 221, seed=2)
    lcd.display(img)
    s = lcd.screen()
    np.testing.assert_array_equal(s[9:230, 48:271], shown)  # left pad 48, right 49; top 9, bottom 10
    assert not s[:, 271:].any() and not s[230:].any()


def test_larger_image_is_centre_cropped_never_scaled():
    lcd.init(type=2)  # 240x240 Cube
    img, shown = rgb_image(320, 240, seed=3)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown[:, 40:280])
    lcd.init()
    tall, shown = rgb_image(320, 256, seed=4)
    lcd.display(tall)
    np.testing.assert_array_equal(lcd.screen(), shown[8:248])


def test_roi_selects_the_region_before_fitting():
    lcd.init()
    img, shown = rgb_image(320, 240, seed=5)
    lcd.display(img, roi=(10, 20, 100, 50))
    s = lcd.screen()
    np.testing.assert_array_equal(s[95:145, 110:210], shown[20:70, 10:110])
    lcd.display(img, roi=(300, 200, 100, 100))  # clipped to the image: 20x40
    np.testing.assert_array_equal(lcd.screen()[100:140, 150:170], shown[200:240, 300:320])
    with pytest.raises(OSError, match="^Invalid ROI dimensions!$"):
        lcd.display(img, roi=(0, 0, 0, 10))
    with pytest.raises(OSError, match="^ROI does not overlap on the image!$"):
        lcd.display(img, roi=(400, 0, 10, 10))


def test_oft_composes_without_clearing_and_clips():
    lcd.init()
    big, big_shown = rgb_image(320, 240, seed=6)
    small, small_shown = rgb_image(28, 28, seed=7)
    lcd.display(big)
    lcd.display(small, oft=(120, 32))
    expected = big_shown.copy()
    expected[32:60, 120:148] = small_shown
    np.testing.assert_array_equal(lcd.screen(), expected)
    lcd.display(small, oft=(310, 230))  # beyond the edge: clipped, no error
    expected[230:240, 310:320] = small_shown[:10, :10]
    np.testing.assert_array_equal(lcd.screen(), expected)
    lcd.display(small, (0, 0, 28, 28), (0, 0))  # positional roi and oft
    expected[0:28, 0:28] = small_shown
    np.testing.assert_array_equal(lcd.screen(), expected)


def test_negative_oft_means_centred():
    lcd.init(color=lcd.WHITE)
    img, shown = rgb_image(224, 224, seed=8)
    lcd.display(img, oft=(-1, 5))
    np.testing.assert_array_equal(lcd.screen()[8:232, 48:272], shown)
    assert not lcd.screen()[:8].any()


def test_grayscale_uses_the_driver_table():
    lcd.init()
    gray = np.arange(256, dtype=np.uint8).reshape(16, 16).repeat(15, 0).repeat(20, 1)  # 240x320
    img = Image._from_rgb888(np.repeat(gray[:, :, None], 3, axis=2), sensor.GRAYSCALE)
    assert img.format() == sensor.GRAYSCALE
    lcd.display(img)
    s = lcd.screen().astype(int)
    g = img._pix.astype(int)
    np.testing.assert_array_equal(s[..., 0], _color.T5TO8[g >> 3])
    np.testing.assert_array_equal(s[..., 1], _color.T6TO8[g >> 2])
    np.testing.assert_array_equal(s[..., 2], _color.T5TO8[g >> 3])


def test_only_rgb565_and_grayscale_are_displayed():
    lcd.init()

    class Jpeg:
        def format(self):
            return sensor.JPEG

        def _rgb888(self):
            raise AssertionError("not reached")

    with pytest.raises(OSError, match=r"^Image format is not supported\.(\n\[maixemu\] .*)?$"):
        lcd.display(Jpeg())
    with pytest.raises(TypeError):
        lcd.display("not an image")


def test_display_shows_pixels_not_the_ai_buffer():
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)
    lcd.init()
    img = sensor.snapshot()
    img.draw_rectangle(10, 10, 50, 40, color=lcd.RED, fill=True)
    lcd.display(img)
    assert px(30, 30) == (255, 0, 0)
    assert tuple(img._ai_array()[:, 30, 30]) != (255, 0, 0)


# ------------------------------------------------------------------------------- draw_string
def test_draw_string_is_an_opaque_monospace_box():
    lcd.init()
    lcd.clear(lcd.BLUE)
    lcd.draw_string(30, 30, "hello maixpy", lcd.WHITE, lcd.RED)
    s = lcd.screen()
    box = s[30:42, 30:30 + 8 * 12]
    colours = {tuple(c) for c in box.reshape(-1, 3)}
    assert colours == {(255, 255, 255), (255, 0, 0)}
    assert (box == 255).all(-1).sum() > 100  # there is text
    assert px(29, 30) == (0, 0, 255) and px(42, 30) == (0, 0, 255) and px(30, 30 + 96) == (0, 0, 255)
    # monospace: "i" and "m" occupy the same 8-pixel cell
    lcd.draw_string(0, 100, "ii", lcd.WHITE, lcd.BLACK)
    cells = lcd.screen()[100:112, 0:16]
    np.testing.assert_array_equal(cells[:, :8], cells[:, 8:])


def test_draw_string_defaults_red_on_black():
    lcd.init(color=lcd.WHITE)
    lcd.draw_string(0, 0, "AB")
    colours = {tuple(c) for c in lcd.screen()[0:12, 0:16].reshape(-1, 3)}
    assert colours == {(255, 0, 0), (0, 0, 0)}


def test_draw_string_truncation_and_limits():
    lcd.init(color=lcd.BLUE)
    lcd.draw_string(300, 0, "abcdef", lcd.WHITE, lcd.RED)  # (320 - 300) // 8 = 2 characters
    s = lcd.screen()
    assert (s[0:12, 300:316] != (0, 0, 255)).any(-1).all()
    assert (s[0:12, 316:320] == (0, 0, 255)).all()
    before = lcd.screen()
    lcd.draw_string(320, 0, "x", lcd.WHITE, lcd.RED)  # x >= width: nothing
    lcd.draw_string(0, 305, "x", lcd.WHITE, lcd.RED)  # y > width - 16: nothing
    lcd.draw_string(-8, 0, "x", lcd.WHITE, lcd.RED)  # negative wraps to a huge uint16: nothing
    np.testing.assert_array_equal(lcd.screen(), before)
    lcd.draw_string(0, 232, "x", lcd.WHITE, lcd.RED)  # below the screen but y <= width - 16: clipped
    assert px(239, 0) in ((255, 0, 0), (255, 255, 255))


def test_draw_string_argument_rules():
    lcd.init()
    with pytest.raises(TypeError):
        lcd.draw_string(0, 0, "x", color=lcd.RED)
    with pytest.raises(TypeError):
        lcd.draw_string(0, 0, "x", (255, 0, 0))
    with pytest.raises(TypeError):
        lcd.draw_string(0, 0, 12)


def test_colour_that_is_no_int_nor_triple_is_the_firmwares_type_error():
    # py_lcd_clear: mp_obj_get_array_fixed_n on a non-integer raises MicroPython's
    # "object '<type>' isn't a tuple or list" (lcd.type() must not stand in for type())
    lcd.init()
    with pytest.raises(TypeError, match="^object 'str' isn't a tuple or list$"):
        lcd.clear("red")


def test_next_display_overwrites_text():
    lcd.init()
    lcd.draw_string(0, 0, "text", lcd.WHITE, lcd.RED)
    img, shown = rgb_image(320, 240, seed=9)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown)


# ------------------------------------------------------------------------------- fill_rectangle
def test_fill_rectangle():
    lcd.init()
    lcd.fill_rectangle(10, 20, 30, 40, lcd.GREEN)
    s = lcd.screen()
    assert (s[20:60, 10:40] == (0, 255, 0)).all()
    assert not s[:20].any() and not s[60:].any() and not s[:, :10].any() and not s[:, 40:].any()
    lcd.fill_rectangle(0, 0, 5, 5, (0, 0, 255))
    assert px(4, 4) == (0, 0, 255)
    for args in ((0, 0, 320, 10), (0, 0, 10, 240), (320, 0, 1, 1), (-1, 0, 5, 5)):
        with pytest.raises(ValueError, match="^arg error$"):
            lcd.fill_rectangle(*args, lcd.RED)


# ------------------------------------------------------------------------------- rotation / mirror
def test_rotation_swaps_size_and_rotates_new_drawing_clockwise():
    lcd.init()
    assert lcd.rotation() == 0
    assert lcd.rotation(1) == 1 and (lcd.width(), lcd.height()) == (240, 320)
    lcd.fill_rectangle(0, 0, 10, 20, lcd.RED)  # logical top-left 10 wide, 20 high
    s = lcd.screen()
    assert (s[0:10, 300:320] == (255, 0, 0)).all()  # appears at the physical top-right, turned 90°
    assert int((s == (255, 0, 0)).all(-1).sum()) == 200
    lcd.clear()
    lcd.rotation(2)
    assert (lcd.width(), lcd.height()) == (320, 240)
    lcd.fill_rectangle(0, 0, 10, 20, lcd.RED)
    assert (lcd.screen()[220:240, 310:320] == (255, 0, 0)).all()
    lcd.clear()
    lcd.rotation(3)
    lcd.fill_rectangle(0, 0, 10, 20, lcd.RED)
    assert (lcd.screen()[230:240, 0:20] == (255, 0, 0)).all()
    with pytest.raises(ValueError, match=r"^value:\[0,3\]$"):
        lcd.rotation(4)


def test_rotated_display_of_a_portrait_image():
    lcd.init()
    lcd.rotation(1)
    img, shown = rgb_image(240, 320, seed=10)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), np.rot90(shown, k=-1))  # 90° clockwise on the glass
    lcd.rotation(3)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), np.rot90(shown, k=1))


def test_rotation_does_not_move_what_is_on_the_glass():
    lcd.init()
    img, shown = rgb_image(320, 240, seed=11)
    lcd.display(img)
    lcd.rotation(2)
    np.testing.assert_array_equal(lcd.screen(), shown)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown[::-1, ::-1])


def test_mirror_and_direction():
    lcd.init()
    img, shown = rgb_image(320, 240, seed=12)
    assert lcd.mirror() == 0
    assert lcd.mirror(True) == 1
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown[:, ::-1])
    lcd.mirror(False)  # as in the firmware, only the next rotation() restores the direction
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown[:, ::-1])
    lcd.rotation(0)
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown)
    lcd.direction(lcd.YX_LRUD)  # the rotation-2 scan direction
    lcd.display(img)
    np.testing.assert_array_equal(lcd.screen(), shown[::-1, ::-1])
    assert lcd.width() == 320  # direction() does not touch the reported size


def test_bgr_to_rgb_swaps_red_and_blue():
    lcd.init()
    lcd.clear(lcd.RED)
    lcd.bgr_to_rgb(True)
    assert px(0, 0) == (0, 0, 255)
    lcd.bgr_to_rgb(False)
    assert px(0, 0) == (255, 0, 0)
    with pytest.raises(ValueError, match="^True or False$"):
        lcd.bgr_to_rgb()


# ------------------------------------------------------------------------------- pushing
def test_every_change_is_pushed_once():
    sink = NullSink()
    hooks = []
    plug(sink, lambda: hooks.append(1))
    lcd.init()
    img, _ = rgb_image(320, 240)
    lcd.clear()
    lcd.display(img)
    lcd.draw_string(0, 0, "x")
    lcd.fill_rectangle(0, 0, 1, 1, lcd.RED)
    lcd.rotation(1)  # no pixels change: no push
    assert sink.frames_shown == 5 and len(hooks) == 5


def test_frames_reach_a_recorder(tmp_path):
    import cv2

    from maixemu.host.display import open_sink

    sink = open_sink(f"record:{tmp_path / 'png'}")
    plug(sink)
    lcd.init()
    lcd.clear(lcd.RED)
    current().display.close()  # the run's end: the picture still being composed goes to the recording
    back = cv2.imread(str(tmp_path / "png" / "frame_000002.png"))
    assert tuple(back[0, 0]) == (0, 0, 255)  # BGR of pure red: not byte-swapped on the way out


def test_recordings_get_one_frame_per_finished_picture(tmp_path):
    """display + draw_string is one picture on the glass; a recording must not flicker between them."""
    import cv2

    from maixemu.firmware import image
    from maixemu.host.display import open_sink

    sink = open_sink(f"record:{tmp_path / 'png'}")
    plug(sink)
    lcd.init()
    for _ in range(3):
        lcd.display(image.Image(size=(320, 240)))
        lcd.draw_string(10, 10, "hello", lcd.WHITE, lcd.RED)
    current().display.close()
    frames = sorted((tmp_path / "png").glob("*.png"))
    assert len(frames) == 4  # the black screen of init, then three pictures
    for path in frames[1:]:
        assert tuple(cv2.imread(str(path))[12, 12]) == (0, 0, 255)  # every picture has its red text box


def test_idle_time_reports_a_closed_window():
    from maixemu.host.display import WindowClosed

    sink = NullSink()
    plug(sink)
    current().display.idle()  # nothing to do for an open sink
    sink.close()
    with pytest.raises(WindowClosed):
        current().display.idle()


def test_a_panel_mounted_upside_down_is_shown_as_the_user_sees_it(maixpy):
    """The M5StickV's panel is mounted turned by 180 degrees: its boot's lcd.rotation(2) makes pictures
    upright on the glass, and the frames that leave the board (window, recordings, the plugin) are
    the glass as seen, not the panel's memory."""
    code = """
import lcd, image
lcd.init(type=3)
lcd.rotation(2)
img = image.Image(size=(lcd.width(), lcd.height()))
img.draw_rectangle(0, 0, 20, 10, color=(255, 0, 0), fill=True)   # top left, as the script means it
lcd.display(img)
"""
    result = maixpy.run(code=code, board="m5stickv")
    assert result.ok, result.stderr
    frame = result.lcd
    assert frame.shape == (135, 240, 3)
    assert tuple(frame[2, 2]) == (255, 0, 0) and tuple(frame[-3, -3]) == (0, 0, 0)
    plain = maixpy.run(code=code)  # a board whose panel is mounted as it scans: the memory as it is
    assert tuple(plain.lcd[-3, -3]) == (255, 0, 0)
