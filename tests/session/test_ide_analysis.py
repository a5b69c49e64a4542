"""The IDE page's numbers (``session.ide_analysis``) are the image methods' own, for RGB565 and grayscale frames."""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
import pytest

from _firmware_colours import firmware_yuv
from maixemu.firmware import image
from maixemu.firmware.image import _color
from maixemu.session.ide_analysis import FrameBufferCopy, analyze, picture


def rgb565_frame() -> FrameBufferCopy:
    rgb = np.zeros((60, 80, 3), np.uint8)
    rgb[:] = (200, 30, 40)
    rgb[10:30, 20:50] = (20, 180, 60)  # a green block
    return FrameBufferCopy(image.Image._from_rgb888(rgb))


def gray_frame() -> FrameBufferCopy:
    gray = np.tile(np.arange(80, dtype=np.uint8) * 3, (60, 1))
    return FrameBufferCopy(image.Image._from_gray_view(gray.copy()))


def test_lab_histogram_and_statistics_are_get_histogram_and_get_statistics():
    frame = rgb565_frame()
    answer = analyze(frame, {"kind": "histogram", "space": "lab", "roi": "15,5,40,30"})
    hist = frame.image.get_histogram(roi=(15, 5, 40, 30))
    stats = frame.image.get_statistics(roi=(15, 5, 40, 30))
    assert [c["name"] for c in answer["channels"]] == ["L", "A", "B"]
    for channel, bins, prefix in zip(answer["channels"], (hist.l_bins(), hist.a_bins(), hist.b_bins()), "lab"):
        assert channel["bins"] == pytest.approx(bins)
        assert channel["stats"]["mean"] == getattr(stats, f"{prefix}_mean")()
        assert channel["stats"]["uq"] == getattr(stats, f"{prefix}_uq")()
    assert answer["roi"] == [15, 5, 40, 30]


def test_rgb_and_gray_spaces():
    frame = rgb565_frame()
    rgb = analyze(frame, {"kind": "histogram", "space": "rgb"})
    expanded = _color.rgb565_to_888(frame.image._pix)
    assert [c["name"] for c in rgb["channels"]] == ["R", "G", "B"]
    for c, channel in enumerate(rgb["channels"]):
        values = set(np.unique(expanded[..., c]).tolist())
        assert {channel["stats"]["min"], channel["stats"]["max"]} <= values
        assert len(channel["bins"]) == 256 and sum(channel["bins"]) == pytest.approx(1.0)
    gray = analyze(frame, {"kind": "histogram", "space": "gray"})
    own = frame.image.to_grayscale(copy=True).get_statistics()
    assert gray["channels"][0]["stats"]["mean"] == own.mean()
    assert frame.image.format() == image.RGB565  # the frame itself is never converted


def test_grayscale_frames_answer_every_space():
    frame = gray_frame()
    for space in ("rgb", "gray", "lab"):
        answer = analyze(frame, {"kind": "histogram", "space": space})
        assert answer["channels"]
    assert analyze(frame, {"kind": "histogram", "space": "gray"})["channels"][0]["stats"]["max"] == 237
    pixel = analyze(frame, {"kind": "pixel", "x": "10", "y": "3"})
    assert pixel["gray"] == 30 and pixel["format"] == "GRAYSCALE" and "rgb565" not in pixel
    preview = analyze(frame, {"kind": "binary", "space": "gray", "t": "0,90"})
    assert preview.shape == (60, 80, 3)
    assert (preview[:, :31] == 255).all() and (preview[:, 31:] == 0).all()
    blobs = analyze(frame, {"kind": "blobs", "space": "gray", "t": "(0, 90)"})
    # (the firmware's blob rect is (x_min, y_min, x_max - x_min, y_max - y_min): golden case 094 agrees)
    assert blobs["count"] == 1 and blobs["blobs"][0]["rect"] == [0, 0, 30, 59]


def test_pixel_readout():
    frame = rgb565_frame()
    pixel = analyze(frame, {"kind": "pixel", "x": 25, "y": 15})
    r, g, b = frame.image.get_pixel(25, 15)
    assert pixel["rgb888"] == [r, g, b]
    one = frame.image.get_statistics(roi=(25, 15, 1, 1))
    assert pixel["lab"] == [one.l_mean(), one.a_mean(), one.b_mean()]  # the LAB find_blobs compares
    assert pixel["rgb565"] == ((r >> 3) << 11) | ((g >> 2) << 5) | (b >> 3)  # the usual RRRRRGGGGGGBBBBB
    assert pixel["raw"] == frame.image.get_pixel(25, 15, rgbtuple=False)


def test_threshold_preview_and_blobs_in_lab():
    frame = rgb565_frame()
    block = frame.image.get_statistics(roi=(20, 10, 30, 20))
    l, a, b = block.l_mean(), block.a_mean(), block.b_mean()
    t = f"{l - 5},{l + 5},{a - 5},{a + 5},{b - 5},{b + 5}"
    blobs = analyze(frame, {"kind": "blobs", "space": "lab", "t": t})
    assert blobs["count"] == 1 and blobs["blobs"][0]["rect"] == [20, 10, 29, 19]
    inverted = analyze(frame, {"kind": "binary", "space": "lab", "t": t, "invert": "1"})
    assert (inverted[15, 30] == 0).all() and (inverted[50, 5] == 255).all()
    assert frame.image.get_pixel(30, 15) == tuple(int(v) for v in frame.rgb888()[15, 30])  # untouched


@pytest.mark.parametrize("request_, message", [
    ({"kind": "histogram", "space": "hsv"}, "space must be one of"),
    ({"kind": "histogram", "roi": "1,2,3"}, "roi needs 4 numbers"),
    ({"kind": "histogram", "roi": "500,500,10,10"}, "outside the frame"),
    ({"kind": "pixel", "x": 80, "y": 0}, "outside the 80x60"),
    ({"kind": "blobs", "space": "lab", "t": "1,2"}, "thresholds needs 6 numbers"),
    ({"kind": "binary", "space": "rgb", "t": "1,2"}, r"LAB \(6 numbers\) or grayscale"),
    ({"kind": "delete_files"}, "unknown analysis"),
])
def test_bad_requests_are_clear_errors(request_, message):
    with pytest.raises(ValueError, match=message):
        analyze(rgb565_frame(), request_)


def test_an_roi_dragged_past_the_edge_is_clipped():
    answer = analyze(rgb565_frame(), {"kind": "histogram", "space": "gray", "roi": "70,50,-20,30"})
    assert answer["roi"] == [50, 50, 20, 10]


# ------------------------------------------------------------------------------------ YUV (issue 28)
def test_yuv_histogram_is_the_firmwares_signed_yuv_of_each_pixel():
    frame = rgb565_frame()
    answer = analyze(frame, {"kind": "histogram", "space": "yuv", "roi": "20,10,30,20"})  # the green block
    assert [(c["name"], c["lo"], c["hi"]) for c in answer["channels"]] == [("Y", -128, 127), ("U", -128, 127),
                                                                           ("V", -128, 127)]
    (pixel,) = np.unique(frame.image._pix[10:30, 20:50])
    for channel, expected in zip(answer["channels"], firmware_yuv(int(pixel))):
        stats = channel["stats"]
        assert stats["mean"] == stats["median"] == stats["mode"] == stats["min"] == stats["max"] == expected
        assert stats["stdev"] == 0 and len(channel["bins"]) == 256
        assert channel["bins"][expected + 128] == pytest.approx(1.0)
    whole = analyze(frame, {"kind": "histogram", "space": "yuv"})
    values = [firmware_yuv(int(p)) for p in np.unique(frame.image._pix)]
    for c, channel in enumerate(whole["channels"]):
        assert channel["stats"]["min"] == min(v[c] for v in values)
        assert channel["stats"]["max"] == max(v[c] for v in values)
        assert sum(channel["bins"]) == pytest.approx(1.0)


def test_yuv_of_a_grayscale_frame_is_its_luma_without_colour():
    answer = analyze(gray_frame(), {"kind": "histogram", "space": "yuv"})
    y, u, v = (c["stats"] for c in answer["channels"])
    assert (y["min"], y["max"]) == (0 - 128, 237 - 128)
    assert u["min"] == u["max"] == v["min"] == v["max"] == 0


def test_yuv_is_no_threshold_space():
    with pytest.raises(ValueError, match=r"LAB \(6 numbers\) or grayscale"):
        analyze(rgb565_frame(), {"kind": "blobs", "space": "yuv", "t": "1,2,3,4,5,6"})


# ------------------------------------------------------------------------------------ picture files (issue 28)
def png_bytes(rgb: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    assert ok
    return data.tobytes()


def test_a_picture_file_is_packed_as_the_camera_packs_a_frame():
    rgb = np.zeros((40, 60, 3), np.uint8)
    rgb[:, :30] = (200, 30, 40)
    rgb[:, 30:] = (20, 180, 61)
    frame = picture(png_bytes(rgb), "bars.png")
    assert (frame.width, frame.height, frame.info["format"], frame.info["name"]) == (60, 40, "RGB565", "bars.png")
    assert np.array_equal(frame.image._pix, image.Image._from_rgb888(rgb)._pix)  # sensor.snapshot()'s packing
    left = analyze(frame, {"kind": "histogram", "space": "lab", "roi": "0,0,30,40"})
    own = image.Image._from_rgb888(rgb).get_statistics(roi=(0, 0, 30, 40))
    assert left["channels"][0]["stats"]["mean"] == own.l_mean()
    blobs = analyze(frame, {"kind": "blobs", "space": "gray", "t": "0,255"})
    assert blobs["count"] == 1


def test_a_picture_larger_than_the_camera_is_scaled_to_uxga_and_says_so():
    frame = picture(png_bytes(np.full((2400, 4000, 3), 90, np.uint8)), "photo.png")
    assert (frame.width, frame.height) == (1600, 960) and frame.info["scaled_from"] == [4000, 2400]


def _png_header_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims ``width`` x ``height`` and that holds no pixels (a decompression bomb's shape)."""
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b"")


@pytest.mark.parametrize("data, message", [
    (b"not a picture at all", "not a picture OpenCV or Pillow can decode"),
    (b"", "not a picture"),
    (_png_header_claiming(30000, 30000), "more than the 8192x8192"),
])
def test_a_file_that_is_no_usable_picture_is_a_clear_error(data, message):
    with pytest.raises(ValueError, match=message):
        picture(data, "upload.png")
