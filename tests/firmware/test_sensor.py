"""The sensor module: frame sizes, device errors, windowing, aliasing + AI buffer, mirror/flip, pacing, hooks."""

from __future__ import annotations

import math

import time

import cv2
import numpy as np
import pytest

import maixemu

from maixemu.firmware import sensor
from maixemu.firmware.state import BoardState, activate, current, deactivate
from maixemu.firmware.image import _color
from maixemu.host.camera import CameraError, FrameSource, SyntheticSource


class ListSource(FrameSource):
    """Cycles through given RGB frames and counts reads (a live camera: skip_frames discards)."""

    live = True

    def __init__(self, frames):
        self.frames = [np.asarray(f, np.uint8) for f in frames]
        self.reads = 0
        self.closed = False
        self.name = "list"

    def read(self):
        f = self.frames[self.reads % len(self.frames)]
        self.reads += 1
        return f

    def close(self):
        self.closed = True


def pattern(w=320, h=240, seed=0) -> np.ndarray:
    """A frame where every pixel differs from its neighbours (so crops and flips are visible)."""
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)


def expected565(rgb: np.ndarray) -> np.ndarray:
    return _color.rgb888_to_565(rgb)


def use(*frames) -> ListSource:
    src = ListSource(frames)
    current().camera.plug(lambda: src)
    return src


def start(size=sensor.QVGA, fmt=sensor.RGB565):
    sensor.reset()
    sensor.set_pixformat(fmt)
    sensor.set_framesize(size)


# ------------------------------------------------------------------------------------- constants
FRAME_SIZES = {
    "QQCIF": (88, 72), "QCIF": (176, 144), "CIF": (352, 288), "QQSIF": (88, 60), "QSIF": (176, 120),
    "SIF": (352, 240), "QQQQVGA": (40, 30), "QQQVGA": (80, 60), "QQVGA": (160, 120), "QVGA": (320, 240),
    "VGA": (640, 480), "HQQQVGA": (60, 40), "HQQVGA": (120, 80), "HQVGA": (240, 160),
    "B64X32": (64, 32), "B64X64": (64, 64), "B128X64": (128, 64), "B128X128": (128, 128),
    "B240X240": (240, 240), "LCD": (128, 160), "QQVGA2": (128, 160), "WVGA": (720, 480),
    "WVGA2": (752, 480), "SVGA": (800, 600), "SXGA": (1280, 1024), "UXGA": (1600, 1200),
}


@pytest.mark.parametrize("name", sorted(FRAME_SIZES))
def test_every_framesize_constant_has_the_firmware_size(name):
    start(getattr(sensor, name))
    assert (sensor.width(), sensor.height()) == FRAME_SIZES[name]


@pytest.mark.parametrize("name", ["QQQVGA", "QQVGA", "QVGA", "B128X128", "LCD", "HQQQVGA"])
def test_snapshot_has_the_frame_size(name):
    start(getattr(sensor, name))
    img = sensor.snapshot()
    assert (img.width(), img.height()) == FRAME_SIZES[name]


def test_constants_exist():
    for name in ("RGB565", "GRAYSCALE", "YUV422", "BAYER", "JPEG", "OV9650", "OV2640", "OV7725", "MT9V034",
                 "LEPTON", "NORMAL", "NEGATIVE"):
        assert isinstance(getattr(sensor, name), int), name
    assert len({sensor.RGB565, sensor.GRAYSCALE, sensor.YUV422, sensor.BAYER, sensor.JPEG}) == 5


# ------------------------------------------------------------------------------------- errors
def test_snapshot_errors_in_firmware_order():
    with pytest.raises(TypeError, match=r"^not found sensor(\n\[maixemu\] .*)?$"):
        sensor.snapshot()
    sensor.reset()
    with pytest.raises(RuntimeError, match=r"^Not init!(\n\[maixemu\] .*)?$"):
        sensor.snapshot()
    sensor.set_framesize(sensor.QVGA)
    sensor.snapshot()
    assert sensor.run(0) is True
    with pytest.raises(RuntimeError, match=r"^Sensor timeout!(\n\[maixemu\] .*)?$"):
        sensor.snapshot()
    with pytest.raises(RuntimeError, match=r"^Sensor Timeout!!(\n\[maixemu\] .*)?$"):
        sensor.skip_frames(5)
    sensor.run(1)
    sensor.snapshot()


def test_capture_starts_without_run_and_survives_reset():
    sensor.reset()
    sensor.set_framesize(sensor.QQVGA)
    sensor.snapshot()  # no run(1) needed
    sensor.reset()  # keeps the frame buffer size, width() forgets it until set_framesize
    assert sensor.width() == 0
    assert sensor.snapshot().width() == 160


def test_pixformat_errors():
    sensor.reset()
    with pytest.raises(ValueError, match="^arg err$"):
        sensor.set_pixformat()
    for fmt in (sensor.JPEG, sensor.BAYER, 99):
        with pytest.raises(OSError, match="^Pixel format is not supported!$"):
            sensor.set_pixformat(fmt)
    assert sensor.set_pixformat(sensor.YUV422) is True
    with pytest.raises(ValueError, match="^arg err$"):
        sensor.set_framesize()
    with pytest.raises(OSError):
        sensor.set_framesize(999)


def test_yuv422_frames_are_rgb565_images():
    start(fmt=sensor.YUV422)
    assert sensor.snapshot().format() == sensor.RGB565


def test_jpeg_snapshot_message():
    start()
    current().sensor.pixformat = sensor.JPEG  # the DVP refuses JPEG; the check exists in snapshot anyway
    with pytest.raises(OSError, match="^Operation not supported on JPEG$"):
        sensor.snapshot()


def test_reset_failed_when_the_camera_cannot_open():
    def broken():
        raise CameraError("no webcam at index 0; use --camera synthetic|DIR|VIDEO|IMAGE")

    current().camera.plug(broken)
    with pytest.raises(OSError) as info:
        sensor.reset()
    assert str(info.value).startswith("Reset Failed") and "--camera synthetic" in str(info.value)


def test_default_source_is_synthetic_and_opened_lazily():
    assert current().camera.source is None
    start()
    assert isinstance(current().camera.source, SyntheticSource)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(SyntheticSource().frame(0)))


def test_controls_before_reset_fail_like_the_firmware():
    with pytest.raises(ValueError, match="^Sensor control failed!$"):
        sensor.set_hmirror(1)
    with pytest.raises(ValueError, match="^Sensor control failed!$"):
        sensor.set_vflip(1)
    assert sensor.set_contrast(0) is False


def test_tuning_calls_return_values():
    start()
    assert sensor.set_contrast(1) is True and sensor.set_brightness(-2) is True and sensor.set_saturation(0) is True
    assert sensor.set_brightness(4) is False
    assert sensor.set_gainceiling(16) is True
    with pytest.raises(ValueError, match="^Invalid gainceiling$"):
        sensor.set_gainceiling(3)
    assert sensor.set_auto_gain(False) is None and sensor.set_auto_gain(0, gain_db=6.0) is None
    assert sensor.get_gain_db() == pytest.approx(20 * math.log10(1 + 15 / 16))  # GAIN = 0x0F: the nearest step
    assert sensor.set_auto_exposure(0, exposure_us=1234) is None and sensor.get_exposure_us() == 793
    assert sensor.set_auto_whitebal(False, rgb_gain_db=(0x52, 0x40, 0x4D)) is None
    assert sensor.get_rgb_gain_db() == (0.0, 0.0, 0.0)  # the OV2640 driver ignores the gains
    assert sensor.set_framerate(30) is None
    with pytest.raises(ValueError, match="^Invalid framerate$"):
        sensor.set_framerate(31)
    assert sensor.set_colorbar(False) is True
    assert sensor.set_special_effect(sensor.NORMAL) is True and sensor.set_special_effect(7) is False
    assert sensor.set_lens_correction(True, 100, 10) is True
    assert sensor.set_jb_quality(95) is None
    with pytest.raises(ValueError, match="^must be int$"):
        sensor.set_jb_quality(9.5)
    assert sensor.get_id() == sensor.OV2640
    assert sensor.shutdown(True) is None and sensor.sleep(False) is None and sensor.flush() is None
    assert sensor.binocular_reset() is None
    getattr(sensor, "__write_reg")(0xFF, 0x101)
    assert getattr(sensor, "__read_reg")(0xFF) == 0x01


def test_negative_effect_inverts():
    frame = pattern(seed=3)
    use(frame)
    start()
    sensor.set_special_effect(sensor.NEGATIVE)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(255 - frame))


# ------------------------------------------------------------------------------------- windowing
@pytest.mark.parametrize(
    "roi,message",
    [
        ((1, 2, 3), "The tuple/list must either be (x, y, w, h) or (w, h)"),
        ((4, 16), "The selected window is too small"),
        ((0, 0, 16, 7), "The selected window is too small"),
        ((100, 0, 224, 224), "The selected window is outside the bounds of the frame"),
        ((-8, 0, 16, 16), "The selected window is outside the bounds of the frame"),
        ((330, 16), "The selected window is outside the bounds of the frame"),
        ((0, 0, 100, 64), "value must be multiple of 8"),
        ((60, 60), "value must be multiple of 8"),
    ],
)
def test_windowing_errors(roi, message):
    start()
    with pytest.raises(ValueError) as info:
        sensor.set_windowing(roi)
    assert str(info.value) == message and info.value.args == (message,)  # the firmware's text, byte for byte
    advice = maixemu.advice(info.value)  # what to do is beside it (not for a malformed tuple)
    assert advice is None if message.startswith("The tuple") else "multiples of 8" in advice


def test_windowing_is_top_left_on_ov2640():
    frame = pattern(seed=1)
    use(frame)
    start()
    assert sensor.set_windowing((224, 224)) is True
    img = sensor.snapshot()
    assert (img.width(), img.height()) == (224, 224)
    assert (sensor.width(), sensor.height()) == (320, 240)  # the frame size, not the window
    np.testing.assert_array_equal(img._pix, expected565(frame[:224, :224]))
    np.testing.assert_array_equal(img._ai_array(), _color.rgb565_to_planes(img._pix))
    sensor.set_windowing((50, 0, 224, 224))  # offsets ignored (issue #191)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[:224, :224]))


def test_windowing_centred_mode_honours_offsets():
    frame = pattern(seed=2)
    use(frame)
    current().sensor.windowing = sensor.windowing_mode("centred")
    start()
    sensor.set_windowing((224, 224))
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[8:232, 48:272]))
    sensor.set_windowing((16, 24, 64, 32))
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[24:56, 16:80]))
    assert sensor.get_id() != sensor.OV2640


def test_set_framesize_resets_the_window():
    start()
    sensor.set_windowing((320, 224))
    assert sensor.snapshot().height() == 224
    sensor.set_framesize(sensor.QVGA)
    assert sensor.snapshot().height() == 240


# ------------------------------------------------------------------------------------- frames
def test_snapshots_alias_one_frame_buffer():
    f1, f2 = pattern(seed=10), pattern(seed=11)
    use(f1, f2)
    start()
    a = sensor.snapshot()
    np.testing.assert_array_equal(a._pix, expected565(f1))
    b = sensor.snapshot()
    assert a is not b
    np.testing.assert_array_equal(b._pix, expected565(f2))
    np.testing.assert_array_equal(a._pix, expected565(f2))  # the old reference changed too
    assert np.shares_memory(a._pix, b._pix)
    assert sensor.get_fb()._pix is b._pix


def test_snapshot_fills_the_ai_buffer_from_the_same_frame():
    frame = pattern(seed=4)
    use(frame)
    start()
    img = sensor.snapshot()
    ai = img._ai_array()
    assert ai.shape == (3, 240, 320) and ai.dtype == np.uint8
    np.testing.assert_array_equal(ai, _color.rgb565_to_planes(expected565(frame)))
    assert not img._ai_is_stale()
    before = ai.copy()
    img.pix_to_ai()  # a no-op on an unmodified snapshot
    np.testing.assert_array_equal(img._ai_array(), before)


def test_drawing_on_rgb565_snapshot_leaves_ai_stale():
    use(np.zeros((240, 320, 3), np.uint8))
    start()
    img = sensor.snapshot()
    img.draw_rectangle(0, 0, 10, 10, color=(255, 255, 255), fill=True)
    assert img._ai_array()[:, 0, 0].tolist() == [0, 0, 0]  # the KPU still sees the camera frame
    assert img._ai_is_stale()


def test_grayscale_snapshot_shares_pixels_and_ai_plane():
    frame = pattern(seed=5)
    use(frame)
    start(fmt=sensor.GRAYSCALE)
    img = sensor.snapshot()
    assert img.format() == sensor.GRAYSCALE
    np.testing.assert_array_equal(img._pix, _color.rgb888_to_gray(frame))
    ai = img._ai_array()
    assert ai.shape == (1, 240, 320) and np.shares_memory(ai, img._pix)


def test_rgb565_quantisation_uses_the_rounding_tables():
    frame = np.zeros((240, 320, 3), np.uint8)
    frame[...] = (100, 150, 200)
    use(frame)
    start()
    img = sensor.snapshot()
    assert int(img._pix[0, 0]) == int(expected565(np.array([100, 150, 200], np.uint8)))
    assert img.get_pixel(0, 0) == (99, 150, 197)  # 8->5/6->8 through the firmware tables


def test_hmirror_and_vflip():
    frame = pattern(seed=6)
    use(frame)
    start()
    sensor.set_hmirror(1)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[:, ::-1]))
    sensor.set_vflip(True)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[::-1, ::-1]))
    sensor.set_hmirror(0)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[::-1]))
    # mirror happens in the sensor, before the (top-left) window is cut
    sensor.set_vflip(False)
    sensor.set_hmirror(True)
    sensor.set_windowing((64, 32))
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame[:, ::-1][:32, :64]))
    sensor.reset()  # reset clears both flags
    sensor.set_framesize(sensor.QVGA)
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(frame))


def test_source_frames_are_scaled_to_cover_and_centre_cropped():
    wide = pattern(640, 360, seed=7)  # 16:9 webcam frame
    use(wide)
    start()
    img = sensor.snapshot()
    crop = wide[:, 80:560]  # 480x360 is 4:3
    np.testing.assert_array_equal(img._pix, expected565(cv2.resize(crop, (320, 240), interpolation=cv2.INTER_AREA)))
    tall = pattern(100, 400, seed=8)
    np.testing.assert_array_equal(sensor.fit_frame(tall, 320, 240),
                                  cv2.resize(tall[162:237], (320, 240), interpolation=cv2.INTER_AREA))


def test_fit_frame_keeps_exact_sizes():
    f = pattern()
    assert sensor.fit_frame(f, 320, 240) is f


# ------------------------------------------------------------------------------------- pacing, hooks
def test_frame_hook_runs_once_per_snapshot_not_for_skipped_frames():
    calls = []
    current().events.snapshot.append(lambda: calls.append(1))
    start()
    sensor.skip_frames(5)
    assert calls == []
    for _ in range(3):
        sensor.snapshot()
    assert len(calls) == 3


def test_frame_hook_can_end_the_run():
    class Stop(BaseException):
        pass

    def hook():
        raise Stop

    current().events.snapshot.append(hook)
    start()
    with pytest.raises(Stop):
        sensor.snapshot()


def test_skip_frames_counts_and_does_not_sleep(monkeypatch):
    src = use(pattern(seed=1), pattern(seed=2), pattern(seed=3))
    start()
    sensor.skip_frames(4)
    assert src.reads == 4

    def no_sleep(seconds):
        raise AssertionError(f"skip_frames slept {seconds} s")

    monkeypatch.setattr(time, "sleep", no_sleep)  # counted frames, never waited time
    sensor.skip_frames(time=2000)  # capped, never waits 2 s
    assert src.reads == 4 + sensor.SKIP_TIME_MAX_FRAMES
    sensor.skip_frames()  # default 300 ms = 9 frames at 30 fps
    assert src.reads == 4 + sensor.SKIP_TIME_MAX_FRAMES + 9
    sensor.skip_frames(30, time=100)  # whichever limit comes first: 100 ms = 3 frames
    assert src.reads == 4 + sensor.SKIP_TIME_MAX_FRAMES + 9 + 3
    # the frame buffer holds the last skipped frame
    last = src.frames[(src.reads - 1) % 3]
    np.testing.assert_array_equal(sensor.get_fb()._pix, expected565(last))


def test_skip_frames_keeps_the_first_frame_of_file_sources(tmp_path):
    import cv2 as _cv2

    from maixemu.host.camera import open_source

    for i, colour in enumerate([(255, 0, 0), (0, 255, 0)]):
        _cv2.imwrite(str(tmp_path / f"{i}.png"), np.full((240, 320, 3), colour[::-1], np.uint8))
    current().camera.plug(lambda: open_source(str(tmp_path)))
    start()
    sensor.skip_frames(30)
    sensor.skip_frames(time=2000)
    assert sensor.snapshot().get_pixel(0, 0) == (255, 0, 0)  # the folder's first image
    assert sensor.snapshot().get_pixel(0, 0) == (0, 255, 0)
    current().camera.plug(None)  # back to the synthetic pattern
    start()
    sensor.skip_frames()
    np.testing.assert_array_equal(sensor.snapshot()._pix, expected565(SyntheticSource().frame(0)))


def test_skip_frames_before_init_does_nothing():
    assert sensor.skip_frames(10) is None
    assert sensor.get_fb() is None


def test_switching_the_board_off_closes_its_camera_and_a_new_board_has_none():
    src = use(pattern())
    start()
    sensor.snapshot()
    current().camera.close()
    assert src.closed
    fresh = BoardState()
    activate(fresh)
    try:
        with pytest.raises(TypeError, match="not found sensor"):
            sensor.snapshot()
    finally:
        deactivate(fresh)


def test_deinit_stops_capture():
    start()
    sensor.deinit()
    with pytest.raises(RuntimeError, match=r"^Not init!(\n\[maixemu\] .*)?$"):
        sensor.snapshot()


# ------------------------------------------------------------------------------------- scaled frames
def test_a_shared_read_only_frame_is_scaled_once_per_size(monkeypatch):
    """A folder or a still picture hands out the same read-only frame every loop: it is scaled once
    (per frame size), a live camera's fresh frames every time, with the same pixels either way."""
    calls = []
    real = sensor.fit_frame
    monkeypatch.setattr(sensor, "fit_frame", lambda raw, w, h: calls.append((w, h)) or real(raw, w, h))
    shared = pattern(640, 480, seed=3)
    shared.setflags(write=False)
    live = pattern(640, 480, seed=4)
    use(shared, live)
    start()
    want_shared = expected565(cv2.resize(shared, (320, 240), interpolation=cv2.INTER_AREA))
    want_live = expected565(cv2.resize(live, (320, 240), interpolation=cv2.INTER_AREA))
    for _ in range(3):
        np.testing.assert_array_equal(sensor.snapshot()._pix, want_shared)
        np.testing.assert_array_equal(sensor.snapshot()._pix, want_live)
    assert calls.count((320, 240)) == 1 + 3  # the shared frame once, the live one every time
    sensor.set_framesize(sensor.QQVGA)
    np.testing.assert_array_equal(sensor.snapshot()._pix,
                                  expected565(cv2.resize(shared, (160, 120), interpolation=cv2.INTER_AREA)))
    assert calls[-1] == (160, 120)


def test_scaled_frames_stay_within_their_budget_and_go_with_their_frame(monkeypatch):
    monkeypatch.setattr(sensor, "_FIT_CACHE_BYTES", 320 * 240 * 3)  # room for one scaled frame
    frames = [pattern(640, 480, seed=s) for s in (5, 6)]
    for f in frames:
        f.setflags(write=False)
    cache = sensor._FittedFrames()
    first = cache.fit(frames[0], 320, 240)
    assert cache.fit(frames[0], 320, 240) is first and not first.flags.writeable
    second = cache.fit(frames[1], 320, 240)
    assert cache.fit(frames[1], 320, 240) is not second  # over the budget: scaled, not kept
    np.testing.assert_array_equal(second, sensor.fit_frame(frames[1], 320, 240))
    del frames[0]
    import gc

    gc.collect()
    assert cache._bytes == 0 and not cache._entries  # the frame went, its scaled copy too
