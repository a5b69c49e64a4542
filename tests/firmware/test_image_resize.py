"""image: resize (firmware algorithms), copy/crop/cut, save/load through the /sd mapping.

Expected values are computed with explicit loops in C ``float`` (numpy float32) arithmetic, written
from maixpy-api.md §2.6 independently of the implementation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from maixemu.firmware.state import current
from maixemu.firmware import image, pixformat
from maixemu.host import storage

F = np.float32


def rgb_img(w, h, seed=0):
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    return image.Image._from_rgb888(rgb)


def gray_img(w, h, seed=0):
    rgb = np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)
    return image.Image._from_rgb888(rgb, pixformat.GRAYSCALE)


def fields(p):
    p = int(p)
    return (p >> 3) & 31, ((p & 7) << 3) | (p >> 13), (p >> 8) & 31


@pytest.mark.parametrize("size", [(224, 224), (100, 60), (320, 120), (28, 28), (160, 240)])
def test_rgb565_nearest_when_shrinking(size):
    src = rgb_img(320, 240)
    w, h = size
    out = src.resize(w, h)
    assert out.format() == pixformat.RGB565 and (out.width(), out.height()) == (w, h)
    sx, sy = F(320) / F(w), F(240) / F(h)
    for y in range(0, h, 7):
        for x in range(0, w, 5):
            assert out._pix[y, x] == src._pix[int(F(y) * sy), int(F(x) * sx)]
    assert src.width() == 320  # original untouched
    assert out._ai_array() is None


def test_rgb565_same_size_is_copy():
    src = rgb_img(30, 20)
    out = src.resize(30, 20)
    assert np.array_equal(out._pix, src._pix) and not np.shares_memory(out._pix, src._pix)


def test_rgb565_enlarging_is_bilinear_on_fields():
    src = rgb_img(7, 5, seed=3)
    w, h = 16, 11
    out = src.resize(w, h)
    sx, sy = F(7) / F(w), F(5) / F(h)
    for y in range(h):
        for x in range(w):
            xs = (F(x) + F(0.5)) * sx - F(0.5)
            ys = (F(y) + F(0.5)) * sy - F(0.5)
            x1, y1 = int(xs), int(ys)  # C truncation toward zero
            x2, y2 = x1 + 1, y1 + 1
            if x2 >= 7 or y2 >= 5:
                assert out._pix[y, x] == src._pix[y1, x1]
                continue
            ch = []
            for k in range(3):
                p11, p21 = fields(src._pix[y1, x1])[k], fields(src._pix[y1, x2])[k]
                p12, p22 = fields(src._pix[y2, x1])[k], fields(src._pix[y2, x2])[k]
                t1 = F(x2 - xs) * F(p11) + F(xs - x1) * F(p21)
                t2 = F(x2 - xs) * F(p12) + F(xs - x1) * F(p22)
                ch.append(int(np.trunc(F(y2 - ys) * t1 + F(ys - y1) * t2)) & 0xFF)
            r, g, b = ch
            expect = ((r << 3) | (g >> 3) | ((g & 7) << 13) | (b << 8)) & 0xFFFF
            assert int(out._pix[y, x]) == expect, (x, y)


def test_gray_box_average_uses_sy_for_columns():
    src = gray_img(320, 240, seed=5)
    out = src.resize(28, 28)
    sy = F(240) / F(28)
    flat = src._pix.reshape(-1).astype(int)
    for y in range(28):
        y0, y1 = int(F(y) * sy), int(F(y + 1) * sy)
        for x in range(28):
            x0, x1 = int(F(x) * sy), int(F(x + 1) * sy)  # sy, not sx (firmware bug)
            total = 0
            for yy in range(y0, y1 + 1):
                for xx in range(x0, x1 + 1):
                    i = yy * 320 + xx
                    total += flat[i] if i < flat.size else 0  # one row past the end reads 0 here
            assert out._pix[y, x] == total // ((y1 - y0 + 1) * (x1 - x0 + 1)), (x, y)
    # only the left ~three quarters of the source were sampled
    assert int(F(28) * sy) == 240


def test_gray_bilinear_when_enlarging():
    """py_image_resize's gray bilinear loop in float32 (-fsingle-precision-constant), with the
    grouping the firmware's -ffast-math build gives it: x1 - xf becomes x1 + (0.5 - (x+0.5)*sx) and
    the four products are summed per source row: (p00*ax + p01*bx)*ay + (p10*ax + p11*bx)*by."""
    src = gray_img(6, 4, seed=9)
    w, h = 13, 9
    out = src.resize(w, h)
    sx, sy = F(6) / F(w), F(4) / F(h)
    p = src._pix.astype(F)
    for y in range(h):
        yprod = (F(y) + F(0.5)) * sy
        yf = yprod - F(0.5)
        y0 = int(yf)
        y1 = y0 + 1
        vy1 = y1 if y0 < 3 else y0
        ay, by = F(y1) + (F(0.5) - yprod), yf - F(y0)
        for x in range(w):
            xprod = (F(x) + F(0.5)) * sx
            xf = xprod - F(0.5)
            x0 = int(xf)
            x1 = x0 + 1
            vx1 = x1 if x0 < 5 else x0
            ax, bx = F(x1) + (F(0.5) - xprod), xf - F(x0)
            v = (p[y0, x0] * ax + p[y0, vx1] * bx) * ay + (p[vy1, x0] * ax + p[vy1, vx1] * bx) * by
            assert int(out._pix[y, x]) == int(np.trunc(v)) & 0xFF, (x, y)


def test_copy_and_crop_nearest_scaling():
    src = rgb_img(40, 30)
    out = src.copy(roi=(5, 4, 20, 10), x_scale=1.5, y_scale=0.5)
    assert (out.width(), out.height()) == (int(F(20) * F(1.5)), int(F(10) * F(0.5)))
    over_x, over_y = F(1 / 1.5), F(1.0) / F(0.5)
    for y in range(out.height()):
        for x in range(out.width()):
            assert out._pix[y, x] == src._pix[int(F(y) * over_y) + 4, int(F(x) * over_x) + 5]
    assert out._ai_array() is None and src.width() == 40
    with pytest.raises(OSError, match="Output image width is 0!"):
        src.copy(x_scale=0.01)
    with pytest.raises(OSError, match=r"Error: 0.0 <= x_scale!"):
        src.copy(x_scale=-1)


def test_crop_is_in_place_by_default():
    src = rgb_img(40, 30)
    part = src._pix[2:12, 3:23].copy()
    same = src.crop((3, 2, 20, 10))
    assert same is src and (src.width(), src.height()) == (20, 10)
    assert np.array_equal(src._pix, part)
    new = rgb_img(40, 30).crop((0, 0, 10, 10), copy=True)
    assert new.width() == 10
    with pytest.raises(OSError, match="won't fit"):
        rgb_img(10, 10).crop(x_scale=2, y_scale=2)


def test_cut_region_and_outside_zero():
    src = rgb_img(20, 10)
    out = src.cut(15, 5, 10, 8)
    assert (out.width(), out.height()) == (10, 8)
    assert np.array_equal(out._pix[:5, :5], src._pix[5:10, 15:20])
    assert not out._pix[5:, :].any() and not out._pix[:, 5:].any()
    assert out._ai_array() is None


def test_to_grayscale_in_place_and_invert():
    img = rgb_img(5, 4)
    gray_expect = image.Image._wrap(pixformat.RGB565, img._pix.copy()).to_grayscale(True)._pix
    img.to_grayscale()
    assert img.format() == pixformat.GRAYSCALE and np.array_equal(img._pix, gray_expect)
    before = img._pix.copy()
    img.invert()
    assert np.array_equal(img._pix, 255 - before)


@pytest.fixture()
def sd(tmp_path):
    st = storage.Storage(sd_dir=tmp_path / "sd", flash_dir=tmp_path / "flash")
    (tmp_path / "sd").mkdir()
    (tmp_path / "flash").mkdir()
    current().storage = st
    return tmp_path


@pytest.mark.parametrize("ext", ["bmp"])  # the firmware writes .bmp and .jpg only (test_image_files.py)
def test_save_load_round_trip_lossless(sd, ext):
    img = rgb_img(16, 9)
    assert img.save(f"/sd/pic.{ext}") is img
    assert (sd / "sd" / f"pic.{ext}").is_file()
    back = image.Image(f"/sd/pic.{ext}")
    assert back.format() == pixformat.RGB565
    assert np.array_equal(back._pix, img._pix)  # 565 -> 8 -> 565 is lossless with the tables
    assert back._ai_array() is None


def test_save_jpeg_and_grayscale_pgm(sd):
    img = rgb_img(32, 24)
    img.save("/sd/a.jpg", quality=95)
    back = image.Image("/sd/a.jpg")
    assert (back.width(), back.height(), back.format()) == (32, 24, pixformat.RGB565)
    g = gray_img(8, 6)
    g.save("/sd/g.bmp")  # 8-bit gray BMP (the firmware does not write .pgm)
    gb = image.Image("/sd/g.bmp")
    assert gb.format() == pixformat.GRAYSCALE and np.array_equal(gb._pix, g._pix)
    with pytest.raises(OSError, match="quality"):
        img.save("/sd/b.jpg", quality=0)


def test_missing_file_and_outside_paths_are_enoent(sd):
    import errno

    with pytest.raises(OSError) as e:
        image.Image("/sd/nope.jpg")
    assert e.value.errno == errno.ENOENT
    with pytest.raises(OSError):
        image.Image("/etc/passwd")


def test_shared_sample_image_loads():
    shared = Path(__file__).resolve().parents[2].parent / "shared" / "images"
    files = sorted(p for p in shared.glob("*") if p.suffix.lower() in (".jpg", ".jpeg", ".bmp", ".png"))
    if not files:
        pytest.skip("no shared images")
    st = storage.Storage(sd_dir=shared, flash_dir=shared)
    current().storage = st
    img = image.Image("/sd/" + files[0].name)
    assert img.width() > 0 and img.format() in (pixformat.RGB565, pixformat.GRAYSCALE)


def test_from_bytes_decodes_file_contents(sd):
    img = rgb_img(6, 4)
    img.save("/sd/p.jpg", quality=90)
    data = (sd / "sd" / "p.jpg").read_bytes()
    back = image.Image(data, from_bytes=True)  # JPEG only from bytes (a BMP: OSError "Not support")
    assert np.array_equal(back._pix, image.Image("/sd/p.jpg")._pix)
    img.save("/sd/p.bmp")
    assert np.array_equal(image.Image(b"/sd/p.bmp")._pix, img._pix)  # bytes without from_bytes: a path


def test_mean_pool_and_midpoint_pooled():
    g = gray_img(7, 5, seed=3)
    pooled = g.mean_pooled(2, 2)
    assert (pooled.width(), pooled.height()) == (3, 2) and g.width() == 7
    p = g._pix.astype(int)
    for y in range(2):
        for x in range(3):
            assert pooled.get_pixel(x, y) == p[2 * y:2 * y + 2, 2 * x:2 * x + 2].sum() // 4
    mid = g.midpoint_pooled(2, 2, bias=0.25)
    b = int(0.25 * 256)
    blk = p[0:2, 0:2]
    assert mid.get_pixel(0, 0) == (blk.min() * (256 - b) + blk.max() * b) >> 8
    assert g.mean_pool(7, 5) is g and (g.width(), g.height()) == (1, 1)
    with pytest.raises(OSError, match="Width divisor must be less than <= img width"):
        g.mean_pool(2, 1)


def test_resize_takes_two_positional_arguments_as_the_firmware_does():
    """``MP_DEFINE_CONST_FUN_OBJ_3(py_image_resize_obj, ...)``: no keywords, exactly (w, h), and
    MicroPython's words for anything else (the stub declares ``resize(w, h, /)``)."""
    img = rgb_img(20, 10)
    with pytest.raises(TypeError, match="^function doesn't take keyword arguments$"):
        img.resize(w=10, h=5)
    with pytest.raises(TypeError, match="^function takes 3 positional arguments but 2 were given$"):
        img.resize(10)
    with pytest.raises(TypeError, match="^function takes 3 positional arguments but 4 were given$"):
        img.resize(10, 5, 1)
    assert (img.resize(10, 5).width(), img.resize(10, 5).height()) == (10, 5)
