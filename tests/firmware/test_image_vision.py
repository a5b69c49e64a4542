"""image vision approximations: blobs, QR codes, lines, circles, rects, statistics, filters.

These are OpenCV/numpy approximations; the tests pin the object interfaces and clear-cut cases.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat

GREEN = (0, 80, -70, -10, -0, 30)


def make(rgb):
    return image.Image._from_rgb888(np.asarray(rgb, np.uint8))


def test_find_blobs_rect_centroid_and_indexing():
    rgb = np.zeros((120, 160, 3), np.uint8)
    rgb[30:60, 40:90] = (60, 140, 70)
    rgb[90:100, 10:20] = (60, 140, 70)
    img = make(rgb)
    blobs = img.find_blobs([GREEN], pixels_threshold=20)
    assert len(blobs) == 2
    b = max(blobs, key=lambda b: b.pixels())
    # MaixPy v0.6.2 blob.c: w = x2 - x1, h = y2 - y1 (one less than the 50x30 extent)
    assert b.rect() == (40, 30, 49, 29) and b[0:4] == (40, 30, 49, 29)
    # integer centroid: sum(x) // pixels
    assert (b.cx(), b.cy()) == ((40 + 89) * 50 * 30 // 2 // 1500, (30 + 59) * 50 * 30 // 2 // 1500)
    assert (b[5], b[6]) == (b.cx(), b.cy())
    assert b.pixels() == 1500 and b.area() == 49 * 29 and b.code() == 1 and b.count() == 1
    merged = img.find_blobs([GREEN], merge=True, margin=100)
    assert len(merged) == 1 and merged[0].count() == 2
    assert img.find_blobs([GREEN], area_threshold=2000) == []


def test_find_blobs_grayscale_thresholds():
    g = image.Image(size=(20, 20)).to_grayscale(True)
    g.draw_rectangle(5, 5, 4, 4, color=200, fill=True)
    blobs = g.find_blobs([(150, 255)], pixels_threshold=1, area_threshold=1)
    assert [b.rect() for b in blobs] == [(5, 5, 3, 3)]


def test_find_blobs_seeds_and_claimed_pixels():
    g = image.Image(size=(20, 10)).to_grayscale(True)
    g.set_pixel(3, 0, 255)  # single pixel at an odd x on row 0: no seed (x = 0, 2, 4, ...)
    g.set_pixel(4, 5, 255)  # even x on an odd row: seeds there are at odd x -> missed too
    g.set_pixel(5, 5, 255)  # ... but its neighbour is a seed, so this 2-pixel blob is found
    blobs = g.find_blobs([(200, 255)], pixels_threshold=1, area_threshold=0)
    assert [(b.x(), b.y(), b.pixels()) for b in blobs] == [(4, 5, 2)]
    # a second threshold covering the same pixels finds nothing: they are already taken
    both = g.find_blobs([(200, 255), (100, 255)], pixels_threshold=1, area_threshold=0)
    assert [b.code() for b in both] == [1]


def test_find_qrcodes_payload():
    import cv2

    qr = cv2.QRCodeEncoder.create().encode("maixemu")
    qr = cv2.resize(qr, None, fx=4, fy=4, interpolation=cv2.INTER_NEAREST)
    qr = np.pad(qr, 16, constant_values=255)
    img = make(np.repeat(qr[:, :, None], 3, 2))
    res = img.find_qrcodes()
    assert len(res) == 1 and res[0].payload() == "maixemu" and res[0][4] == "maixemu"
    assert len(res[0].rect()) == 4 and len(res[0].corners()) == 4
    assert image.Image(size=(40, 40)).find_qrcodes() == []


def test_find_lines_circles_rects_shapes():
    img = image.Image(size=(160, 120))
    img.draw_line(0, 60, 159, 60, color=(255, 255, 255), thickness=3)
    lines = img.find_lines(threshold=1000)
    assert any(abs(l.theta() - 90) <= 2 and abs(l.rho() - 60) <= 2 for l in lines)
    assert len(lines[0].line()) == 4
    c = image.Image(size=(160, 120)).draw_circle(80, 60, 30, color=(255, 255, 255), thickness=3)
    circles = c.find_circles(threshold=5000, r_min=10, r_max=50)
    assert len(circles) == 1
    k = circles[0]
    assert abs(k.x() - 80) <= 2 and abs(k.y() - 60) <= 2 and abs(k.r() - 30) <= 3 and k[0:3] == k.circle()
    r = image.Image(size=(160, 120)).draw_rectangle(30, 20, 60, 50, color=(255, 255, 255), fill=True)
    rects = r.find_rects(threshold=10000)
    assert rects and abs(rects[0].x() - 30) <= 2 and abs(rects[0].w() - 60) <= 3
    assert len(rects[0].corners()) == 4


def test_hough_quirks_of_the_firmware():
    from maixemu.firmware.image import _hough

    # horizontal edges have x_acc == 0: theta = int(1.570796 * 57.29578) = 89, not 90
    img = image.Image(size=(40, 30)).draw_rectangle(0, 15, 40, 15, color=(255, 255, 255), fill=True)
    lines = img.find_lines(threshold=500)
    assert lines and all(l.theta() == 89 for l in lines)
    # the firmware's atan2 returns pi (not pi/2) when x == 0 and y > 0
    assert abs(float(_hough.fast_atan2f(np.float32(1), np.float32(0))) - np.pi) < 1e-6
    assert abs(float(_hough.fast_atan2f(np.float32(-1), np.float32(1))) - 1.75 * np.pi) < 1e-3


def test_haar_cascade_without_data_raises_not_implemented_or_works():
    try:
        cascade = image.HaarCascade("frontalface", stages=25)
    except NotImplementedError as e:
        assert "HaarCascade" in str(e)
        return
    assert image.Image(size=(64, 64)).find_features(cascade) == []


def test_statistics_gray_and_lab():
    g = image.Image(size=(10, 10)).to_grayscale(True)
    g.draw_rectangle(0, 0, 10, 5, color=100, fill=True)
    s = g.get_statistics()
    # stats.c: the median is the first bin where the running sum reaches 0.5 -> bin 0 here
    assert (s.mean(), s.min(), s.max(), s.median()) == (50, 0, 100, 0)
    assert s.l_mean() == 50
    rgb = make(np.full((4, 4, 3), 255, np.uint8)).get_statistics()
    assert rgb.l_mean() == 100 and abs(rgb.a_mean()) <= 1


def test_binary_and_mean_filters():
    g = image.Image(size=(6, 1)).to_grayscale(True)
    for x, v in enumerate([0, 50, 100, 150, 200, 250]):
        g.set_pixel(x, 0, v)
    g.binary([(100, 200)])
    assert [g.get_pixel(x, 0) for x in range(6)] == [0, 0, 255, 255, 255, 0]
    m = image.Image(size=(3, 1)).to_grayscale(True)
    for x, v in enumerate([0, 30, 90]):
        m.set_pixel(x, 0, v)
    m.mean(1)  # filter.c: 3x3 window with replicated edges, int(sum * (1/9))
    rows = [0, 0, 30, 90, 90]
    expect = [int(np.float32(3 * sum(rows[x:x + 3])) * (np.float32(1) / np.float32(9))) for x in range(3)]
    assert [m.get_pixel(x, 0) for x in range(3)] == expect
    z = image.Image(size=(3, 1)).to_grayscale(True)
    for x, v in enumerate([10, 120, 250]):
        z.set_pixel(x, 0, v)
    z.binary([(100, 200)], zero=True)  # passing pixels are zeroed, others kept
    assert [z.get_pixel(x, 0) for x in range(3)] == [10, 0, 250]


@pytest.mark.parametrize("name,args", [
    ("median", (1,)), ("mode", (1,)), ("midpoint", (1,)), ("gaussian", (1,)), ("laplacian", (1,)),
    ("bilateral", (1,)), ("cartoon", ()), ("histeq", ()), ("gamma_corr", ()), ("lens_corr", ()),
    ("rotation_corr", ()), ("linpolar", ()), ("logpolar", ()), ("negate", ()),
])
def test_filters_run_in_place_and_return_image(name, args):
    img = make(np.random.default_rng(0).integers(0, 256, (24, 32, 3)))
    out = getattr(img, name)(*args)
    assert out is img and img.format() == pixformat.RGB565 and img.width() == 32


def test_rotation_corr_180_about_x_flips_vertically():
    img = image.Image(size=(32, 24))
    img.draw_rectangle(0, 0, 32, 4, color=(255, 0, 0), fill=True)
    img.rotation_corr(x_rotation=180, fov=2)
    assert img.get_pixel(16, 22) == (255, 0, 0) and img.get_pixel(16, 1) == (0, 0, 0)


def test_morphology_and_math_ops():
    g = image.Image(size=(10, 10)).to_grayscale(True)
    g.draw_rectangle(2, 2, 5, 5, color=255, fill=True)
    assert int((g.copy().erode(1)._pix > 0).sum()) == 9   # 5x5 square -> 3x3
    assert int((g.copy().dilate(1)._pix > 0).sum()) == 49  # -> 7x7
    assert int((g.copy().close(1)._pix > 0).sum()) == 25
    a = image.Image(size=(1, 1))
    a.set_pixel(0, 0, (100, 100, 100))
    a.add((50, 50, 50))  # per 5/6-bit field, saturating
    r5 = min(31, round(100 * 31 / 255) + round(50 * 31 / 255))
    assert a.get_pixel(0, 0)[0] == int(r5 * 255 / 31 + 0.5)
    a.sub((255, 255, 255))
    assert a.get_pixel(0, 0) == (0, 0, 0)
    getattr(a, "or")(0x00F8)  # `or` = b_or, whose work function is commented out in MaixPy-v1 binary.c
    assert a.get_pixel(0, 0, rgbtuple=False) == 0



def test_find_features_frontalface_on_shared_face_image():
    from pathlib import Path

    face = Path(__file__).resolve().parents[2].parent / "shared" / "images" / "face_21.jpg"
    if not face.is_file():
        pytest.skip("shared images not present")
    try:
        cascade = image.HaarCascade("frontalface", stages=25)
    except NotImplementedError:
        pytest.skip("no OpenCV Haar cascades on this machine")
    from PIL import Image as PILImage

    rgb = np.asarray(PILImage.open(face).convert("RGB").resize((320, 240)))
    found = make(rgb).find_features(cascade, threshold=0.5, scale_factor=1.5)
    assert len(found) == 1 and all(isinstance(v, int) for v in found[0])
    x, y, w, h = found[0]
    assert x < 160 < x + w and y < 120 < y + h


def test_replace_blend_flood_fill_find_edges():
    a = image.Image(size=(4, 2))
    a.set_pixel(0, 0, (255, 0, 0))
    assert image.Image(size=(4, 2)).replace(a, hmirror=True).get_pixel(3, 0) == (255, 0, 0)
    assert image.Image(size=(4, 2)).replace(a, vflip=True).get_pixel(0, 1) == (255, 0, 0)
    t = image.Image(size=(4, 2)).replace(a, transpose=True)
    assert (t.width(), t.height()) == (2, 4)
    a.blend((0, 0, 255), alpha=128)  # half of each 5-bit field: 31*0.5 -> 15
    assert a.get_pixel(0, 0) == (int(15 * 255 / 31 + 0.5), 0, int(15 * 255 / 31 + 0.5))
    g = image.Image(size=(20, 10)).to_grayscale(True)
    g.draw_rectangle(5, 2, 6, 6, color=200, fill=True)
    g.flood_fill(7, 4, color=50)
    assert int((g._pix == 50).sum()) == 36 and g.get_pixel(0, 0) == 0
    e = image.Image(size=(20, 10)).to_grayscale(True)
    e.draw_rectangle(5, 2, 6, 6, color=200, fill=True)
    e.find_edges(image.EDGE_CANNY)
    assert e.get_pixel(7, 4) == 0 and (e._pix == 255).sum() > 10
    with pytest.raises(OSError, match="Image format is not supported!"):
        image.Image(size=(4, 4)).find_edges(image.EDGE_CANNY)
    assert image.Image(size=(40, 40)).find_barcodes() == []
