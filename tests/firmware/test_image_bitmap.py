"""BINARY images (``to_bitmap``, ``binary(to_bitmap=True)``), ``to_rainbow`` and the formats each
method accepts — expectations from py_image.c / imlib.h (d8901fd) by hand."""

from __future__ import annotations

import numpy as np
import pytest

import maixemu.firmware.image as image
from maixemu.firmware import pixformat
from maixemu.firmware.image import _bitmap, _color, _kinds, _tables as _yuv


def gray(values) -> image.Image:
    a = np.asarray(values, np.uint8)
    img = image.Image(size=(a.shape[1], a.shape[0])).to_grayscale(True)
    img._pix[...] = a
    return img


def rgb(values) -> image.Image:
    a = np.asarray(values, np.uint16)
    img = image.Image(size=(a.shape[1], a.shape[0]))
    img._pix[...] = a
    return img


def test_gray_to_bitmap_threshold_is_above_127():
    b = gray([[0, 127, 128, 255]]).to_bitmap()
    assert b.format() is None  # py_image_format: BINARY -> None (TODO in the firmware)
    assert [b.get_pixel(x, 0) for x in range(4)] == [0, 0, 1, 1]


def test_rgb565_to_bitmap_uses_the_yuv_tables_y():
    values = np.arange(0, 65536, 97, dtype=np.uint16)[:256].reshape(16, 16)
    b = rgb(values).to_bitmap(copy=True)
    y = _yuv.yuv_table()[values.astype(np.int64), 0]
    assert np.array_equal(b._pix, (y > -1).astype(np.uint8))  # COLOR_RGB565_TO_BINARY: Y > -1


def test_in_place_needs_a_word_of_room():
    with pytest.raises(OSError, match="Can't convert to bitmap in place!"):
        gray([[1, 2, 3]]).to_bitmap()
    with pytest.raises(OSError, match="Can't convert to bitmap in place!"):
        rgb([[1]]).to_bitmap()
    assert gray([[1, 2, 3]]).to_bitmap(copy=True).width() == 3
    assert rgb([[1, 2]]).to_bitmap().width() == 2


def test_in_place_keeps_the_memory_and_ai_pointer():
    g = gray(np.full((2, 8), 200))
    g.pix_to_ai()
    out = g.to_bitmap()
    assert out._buf is g._buf and g.format() is None and g._ai_is_stale()
    c = gray(np.full((2, 8), 200)).to_bitmap(copy=True)
    assert c._ai_array() is not None and not c._ai_array().any()  # fresh, never filled (xalloc)


def test_bitmap_memory_size_bytes_and_print():
    bits = np.zeros((3, 40), np.uint8)
    bits[0, 0] = bits[0, 33] = bits[2, 39] = 1
    b = gray(bits * 255).to_bitmap()
    assert b.size() == 2 * 4 * 3  # IMAGE_BINARY_LINE_LEN_BYTES * h
    mem = _kinds.memory_bytes(b)
    words = np.frombuffer(mem, "<u4").reshape(3, 2)
    assert words.tolist() == [[1, 1 << 1], [0, 0], [0, 1 << 7]]
    # to_bytes: ((w + 31) >> 5) * h bytes - the firmware counts words as bytes
    assert bytes(b.to_bytes()) == mem[:6]
    assert repr(b) == '{"w":40, "h":3, "type"="binary", "size":6}'
    assert np.array_equal(_kinds.unpack_bits(mem, 40, 3), bits)


def test_get_and_set_pixel_on_bitmaps():
    b = gray(np.zeros((2, 8))).to_bitmap()
    b.set_pixel(1, 0)  # default colour -1: bit 1
    b.set_pixel(2, 0, 6)  # an int: its bit 0
    b.set_pixel(3, 0, (255, 255, 255))  # a tuple: RGB565 -> Y > -1
    b.set_pixel(4, 0, (0, 0, 0))
    b.set_pixel(9, 9, 1)  # outside: nothing
    assert [b.get_pixel(x, 0) for x in range(5)] == [0, 1, 0, 1, 0]
    assert b.get_pixel(1, 0, rgbtuple=True) == (255, 255, 255)
    assert b.get_pixel(0, 0, True) == (0, 0, 0)
    assert b.get_pixel(8, 0) is None
    assert b[1] == 1 and b[0:3] == (0, 1, 0)
    b[0] = 3
    assert b[0] == 1
    with pytest.raises(OSError, match="only slices with step=1"):
        b[0:4:2]


def test_conversions_out_of_a_bitmap():
    b = gray([[0, 255, 0, 255]]).to_bitmap()
    with pytest.raises(OSError, match="Can't convert to grayscale in place!"):
        b.to_grayscale()
    with pytest.raises(OSError, match="Can't convert to grayscale in place!"):
        b.to_rgb565()  # (sic: the firmware's message)
    with pytest.raises(OSError, match="Can't convert to rainbow in place!"):
        b.to_rainbow()
    assert b.to_grayscale(True)._pix.tolist() == [[0, 255, 0, 255]]
    assert b.to_rgb565(True)._pix.tolist() == [[0, 0xFFFF, 0, 0xFFFF]]
    table = _bitmap.rainbow_table()
    assert b.to_rainbow(copy=True)._pix.tolist() == [[int(table[0]), int(table[255])] * 2]
    one = gray([[255]]).to_bitmap(copy=True)  # w == 1 converts in place
    assert one.to_grayscale()._pix.tolist() == [[255]]


def test_to_rainbow_of_gray_and_rgb565():
    table = _bitmap.rainbow_table()
    g = gray([[0, 100, 255]])
    with pytest.raises(OSError, match="Can't convert to rainbow in place!"):
        g.to_rainbow()
    out = g.to_rainbow(copy=True)
    assert out.format() == pixformat.RGB565 and out._pix.tolist() == [[int(table[v]) for v in (0, 100, 255)]]
    c = rgb([[0x00F8, 0xFFFF]])
    gray_of = [int(_yuv.yuv_table()[p, 0]) + 128 for p in (0x00F8, 0xFFFF)]
    assert c.to_rainbow() is not None and c.format() == pixformat.RGB565
    assert c._pix.tolist() == [[int(table[v]) for v in gray_of]]


def test_binary_to_bitmap_is_the_binary_of_the_thresholded_image():
    g = gray([[10, 120, 250, 130, 90, 200, 0, 140]])
    out = g.binary([(100, 200)], to_bitmap=True, copy=True)
    assert out.format() is None and g.format() == pixformat.GRAYSCALE
    assert out._pix.tolist() == [[0, 1, 0, 1, 0, 1, 0, 1]]
    inv = g.binary([(100, 200)], invert=True, to_bitmap=True, copy=True)
    assert inv._pix.tolist() == [[1, 0, 1, 0, 1, 0, 1, 0]]
    # zero=True: pixels passing become 0, the others keep COLOR_GRAYSCALE_TO_BINARY(old) (> 127)
    z = g.binary([(100, 200)], zero=True, to_bitmap=True, copy=True)
    assert z._pix.tolist() == [[0, 0, 1, 0, 0, 0, 0, 0]]
    with pytest.raises(OSError, match="Can't convert to bitmap in place!"):
        gray([[1, 2]]).binary([(0, 10)], to_bitmap=True)
    inplace = gray([[10, 150, 10, 150]])
    assert inplace.binary([(100, 200)], False, False, None, True)._buf is inplace._buf
    assert inplace.format() is None


def test_bitmap_colour_helper():
    assert _bitmap.bit_color(-1) == 1 and _bitmap.bit_color(2) == 0 and _bitmap.bit_color(None) == 1
    white = int(_color.rgb888_to_565(np.array([255, 255, 255], np.uint8)))
    assert _yuv.yuv_table()[white, 0] == 127 and _bitmap.bit_color((255, 255, 255)) == 1


def test_methods_accept_the_formats_the_firmware_accepts(capsys):
    b = gray(np.zeros((2, 8))).to_bitmap()
    with pytest.raises(OSError, match="Image format is not supported!"):
        b.chrominvar()  # py_helper_arg_to_image_color
    with pytest.raises(OSError, match="Image format is not supported!"):
        b.find_edges(image.EDGE_CANNY)  # ..._grayscale
    with pytest.raises(NotImplementedError, match="mean_pool on a BINARY.*pool.c has no BINARY case"):
        b.mean_pool(2, 2)  # pool.c reads the bitmap's memory as RGB565: undefined on the device
    assert b.cut(0, 0, 2, 2) is None and b.resize(4, 4) is None
    assert capsys.readouterr().out == "pixel format not support!\r\nonly support grayscale, 565 zoom out now\r\n"
    with pytest.raises(OSError, match="Image format is not supported!"):
        rgb([[1, 2]]).find_edges(image.EDGE_CANNY)
    with pytest.raises(OSError, match="Image format is not supported!"):
        gray([[1, 2]]).remove_shadows()
    j = rgb(np.zeros((16, 16))).compressed()
    assert j.pix_to_ai() is None and j.ai_to_pix() is None
    assert capsys.readouterr().out == "only support grayscale now\r\n"


def test_rainbow_table_is_the_firmwares():
    # sha256 of rainbow_tab.c's rainbow_table[256] (little-endian uint16), entries read off the source
    import hashlib

    table = _bitmap.rainbow_table()
    assert table.shape == (256,) and table.dtype == np.uint16
    assert hashlib.sha256(table.astype("<u2").tobytes()).hexdigest() == (
        "da5bae34831d32e7bc30b264b25e4d43baef4ee8055ec38879ff8630c512a15b")
    assert [hex(int(table[i])) for i in (0, 18, 97, 128, 174, 255)] == [
        "0x3f06", "0xff07", "0xe007", "0xe067", "0xe0f7", "0x20f8"]
