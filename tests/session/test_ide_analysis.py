"""The IDE page's numbers (``session.ide_analysis``) are the image methods' own, for RGB565 and grayscale frames."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _color
from maixemu.session.ide_analysis import FrameBufferCopy, analyze


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
