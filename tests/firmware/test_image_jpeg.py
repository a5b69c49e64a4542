"""The firmware's JPEG encoder (``omv/img/jpeg.c`` d8901fd) and ``compress``/``compressed``(``_for_ide``).

``REFERENCE`` holds the length and sha256 prefix of what jpeg.c's ``jpeg_compress`` produces for
fixed synthetic images: the C file compiled on the host with the firmware's flags (-ffast-math
-fsingle-precision-constant -ffloat-store, unsigned char) and its dual-core RGB565 path run on two
threads, as on the K210. The other expectations are read off the C code by hand.
"""

from __future__ import annotations

import hashlib
import io
import types

import numpy as np
import pytest
from PIL import Image as PILImage

import maixemu.firmware.image as image
from maixemu.firmware import pixformat, state
from maixemu.firmware.image import _codec, _jit, _jpeg_encode
from firmware_c import FORMS, both_forms


def pattern565(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return ((x * 37 + y * 101 + (x * y) % 97) & 0xFFFF).astype(np.uint16)


def pattern_gray(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return ((x * 5 + y * 3 + (x * y) % 11) % 256).astype(np.uint8)


def pattern_bits(h: int, w: int) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    return (((x ^ y) & 4) != 0).astype(np.uint8)


PATTERNS = {"565_240x320": ("rgb565", pattern565(240, 320)), "565_61x75": ("rgb565", pattern565(61, 75)),
            "gray_37x53": ("gray", pattern_gray(37, 53)), "bin_33x40": ("binary", pattern_bits(33, 40))}

# (pattern, quality) -> (bytes, sha256[:32]) of jpeg.c's output, each compression right after power-on
REFERENCE = {
    ("565_240x320", 95): (168424, "278f15600a09c512904af89b688b0d18"),
    ("565_240x320", 50): (27563, "3f203e8a65b756f1448e806ba59d5745"),
    ("565_240x320", 20): (8979, "c0a746d8abe54ed99207ccfeb86de0fd"),
    ("565_240x320", 100): (2709, "4270c9cc48ebb02bfdc80cc864010669"),
    ("565_61x75", 95): (11495, "b421f335f5b44ea55c21a64e07ae077f"),
    ("565_61x75", 50): (2365, "294870a61a15fa6bbfd6f62ee122cb13"),
    ("565_61x75", 20): (1163, "3e76a9ceb5989d9b06e36dc4edc45ba3"),
    ("565_61x75", 100): (749, "149d798edfc2b6bc0edd98a7a692d59d"),
    ("gray_37x53", 95): (1256, "4c76d186781ec4bb2481c1e66f4ebe3b"),
    ("gray_37x53", 50): (572, "f357d757486e5291044911645efa5079"),
    ("gray_37x53", 20): (471, "cefb0c71888dabfefed9271624939443"),
    ("gray_37x53", 100): (353, "90e78391694318a6137e901d216824f7"),
    ("bin_33x40", 95): (1326, "7bc301eeb2e88e0c0320eb191f5bacc7"),
    ("bin_33x40", 50): (724, "a8f6f595a481ccedea87ccd399de62ca"),
    ("bin_33x40", 20): (655, "1a4df2d9fecb9fe5b5d39ea94e16c4aa"),
    ("bin_33x40", 100): (345, "4553751e63e057c6b465874c5ea66abe"),
}
#: quality 100 right after a quality-90 compression (the table cache holds scale 20 -> rebuilt)
REFERENCE_100_AFTER_90 = (20426, "3a0f94e450b83ed50b3bbbcd88e76abd")

# Annex K luminance table in raster order (jpeg.c YQT), for the DQT at quality 50
YQT = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
       14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
       49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]
ZIGZAG = [0, 1, 5, 6, 14, 15, 27, 28, 2, 4, 7, 13, 16, 26, 29, 42, 3, 8, 12, 17, 25, 30, 41, 43,
          9, 11, 18, 24, 31, 40, 44, 53, 10, 19, 23, 32, 39, 45, 52, 54, 20, 22, 33, 38, 46, 51, 55, 60,
          21, 34, 37, 47, 50, 56, 59, 61, 35, 36, 48, 49, 57, 58, 62, 63]


def digest(data: bytes) -> tuple[int, str]:
    return len(data), hashlib.sha256(data).hexdigest()[:32]


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    """The MCU kernels (``_jpeg_scan``) and the array form of ``_jpeg_encode``."""
    return both_forms(request, monkeypatch, _jpeg_encode)


@pytest.mark.parametrize("key", sorted(REFERENCE), ids=[f"{k[0]}-q{k[1]}" for k in sorted(REFERENCE)])
def test_encoder_matches_jpeg_c(key, jit):
    kind, pix = PATTERNS[key[0]]
    assert digest(_jpeg_encode.compress(pix, kind, key[1])) == REFERENCE[key]


def _random_frame(rng, kind: str, h: int, w: int) -> np.ndarray:
    """Noise over smooth gradients: long zero runs (ZRL tokens), large DC jumps and FF bytes."""
    y, x = np.mgrid[0:h, 0:w]
    smooth = (x * rng.integers(1, 9) + y * rng.integers(1, 9)) & 0xFF
    noisy = np.where(rng.random((h, w)) < rng.random(), rng.integers(0, 256, (h, w)), smooth)
    if kind == "rgb565":
        return (noisy * 257 ^ rng.integers(0, 0x10000, (h, w)) * (rng.random((h, w)) < 0.3)).astype(np.uint16)
    if kind == "binary":
        return (noisy > 127).astype(np.uint8)
    return noisy.astype(np.uint8)


@pytest.mark.skipif(not _jit.compiled(), reason="numba is not installed: one form only")
def test_the_kernels_and_the_array_form_give_the_same_bytes(monkeypatch):
    # sizes around the MCU edges (1, 7, 8, 9, 15, 16, 17) and one MCU row (no second core's rows)
    rng = np.random.default_rng(23)
    for trial in range(60):
        kind = ("rgb565", "gray", "binary")[trial % 3]
        h, w = (int(v) for v in rng.choice([1, 2, 7, 8, 9, 15, 16, 17, 33, 47], 2))
        quality = int(rng.choice([1, 10, 30, 50, 60, 80, 90, 95, 100]))
        pix = _random_frame(rng, kind, h, w)
        kernels = _jpeg_encode.compress(pix, kind, quality)
        monkeypatch.setattr(_jpeg_encode, "compiled", lambda: False)
        arrays = _jpeg_encode.compress(pix, kind, quality)
        monkeypatch.undo()
        assert kernels == arrays, (kind, h, w, quality)


def test_the_kernels_python_twins_give_the_array_forms_bytes(monkeypatch):
    # what runs while the compiled code is not loaded yet (and without numba if compiled were asked)
    from maixemu.firmware.image import _jpeg_scan

    rng = np.random.default_rng(5)
    for trial in range(12):
        kind = ("rgb565", "gray", "binary")[trial % 3]
        h, w = (int(v) for v in rng.choice([1, 8, 9, 16, 17, 40], 2))
        quality = int(rng.choice([10, 50, 90, 95]))
        pix = _random_frame(rng, kind, h, w)
        monkeypatch.setattr(_jpeg_encode, "compiled", lambda: False)
        arrays = _jpeg_encode.compress(pix, kind, quality)
        monkeypatch.setattr(_jpeg_encode, "compiled", lambda: True)
        for name in ("encode_mcus", "splice"):  # the kernels "served" by their Python statements
            twin = getattr(_jpeg_scan, name).__wrapped__
            monkeypatch.setattr(_jpeg_scan, name, types.SimpleNamespace(attempt=twin))
        twins = _jpeg_encode.compress(pix, kind, quality)
        monkeypatch.undo()
        assert twins == arrays, (kind, h, w, quality)


def test_table_cache_survives_between_compressions():
    kind, pix = PATTERNS["565_61x75"]
    _jpeg_encode.compress(pix, kind, 90)
    assert digest(_jpeg_encode.compress(pix, kind, 100)) == REFERENCE_100_AFTER_90


def _segments(data: bytes) -> dict[int, bytes]:
    out, i = {}, 2
    while data[i] == 0xFF and data[i + 1] != 0xDA:
        n = (data[i + 2] << 8) | data[i + 3]
        out[data[i + 1]] = data[i + 4:i + 2 + n]
        i += 2 + n
    out[0xDA] = data[i + 4:i + 2 + ((data[i + 2] << 8) | data[i + 3])]
    return out


def test_headers_quality_50_tables_and_sampling():
    kind, pix = PATTERNS["565_61x75"]
    data = _jpeg_encode.compress(pix, kind, 50)
    seg = _segments(data)
    assert data[:2] == b"\xff\xd8" and data[-2:] == b"\xff\xd9"
    assert seg[0xE0] == b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    dqt = seg[0xDB]
    assert len(dqt) == 130 and dqt[0] == 0 and dqt[65] == 1
    # quality 50: scale 200 - 100 = 100, entries (QT * 100 + 50) / 100 = QT, stored in zig-zag order
    zz = [0] * 64
    for i in range(64):
        zz[ZIGZAG[i]] = YQT[i]
    assert list(dqt[1:65]) == zz
    sof = seg[0xC0]
    assert sof[:6] == bytes([8, 0, 61, 0, 75, 3])
    assert sof[6:] == bytes([1, 0x21, 0, 2, 0x11, 1, 3, 0x11, 1])  # quality 36..59: 2x1 luma
    assert seg[0xDA] == bytes([3, 1, 0x00, 2, 0x11, 3, 0x11, 0, 0x3F, 0])
    assert len(seg[0xC4]) == 416


@pytest.mark.parametrize("quality,sampling", [(60, 0x11), (100, 0x11), (59, 0x21), (36, 0x21), (35, 0x22), (1, 0x22)])
def test_subsampling_by_quality(quality, sampling):
    data = _jpeg_encode.compress(PATTERNS["565_61x75"][1], "rgb565", quality)
    assert _segments(data)[0xC0][7] == sampling


def test_table_scale_formula():
    # jpeg_init: quality < 50 -> 5000 / quality, else 200 - 2 * quality; entries clamped to 1..255
    dqt = _segments(_jpeg_encode.compress(PATTERNS["gray_37x53"][1], "gray", 10))[0xDB]
    assert len(dqt) == 65
    assert dqt[1] == min(255, (16 * 500 + 50) // 100) and dqt[64] == 255
    dqt = _segments(_jpeg_encode.compress(PATTERNS["gray_37x53"][1], "gray", 99))[0xDB]
    assert (16 * 2 + 50) // 100 == 0 and dqt[1] == 1  # scale 2: the entry rounds to 0, clamped to 1


def test_quality_100_first_after_power_on_uses_the_unbuilt_zero_tables():
    data = _jpeg_encode.compress(PATTERNS["gray_37x53"][1], "gray", 100)
    assert set(_segments(data)[0xDB][1:]) == {0}


def test_output_decodes_close_to_the_source():
    kind, pix = PATTERNS["565_240x320"]
    img = image.Image(size=(320, 240))
    img._pix[...] = pix
    data = _jpeg_encode.compress(pix, kind, 95)
    decoded = np.asarray(PILImage.open(io.BytesIO(data)).convert("RGB")).astype(int)
    err = np.abs(decoded - img._rgb888().astype(int)).mean()
    assert err < 12  # chroma noise of this pattern; the point is a valid, faithful stream


def test_compress_in_place_makes_a_jpeg_image():
    img = image.Image(size=(75, 61))
    img._pix[...] = pattern565(61, 75)
    with state.bind(state.BoardState()):  # another board: this one's encoder stays at power-on
        expect = _jpeg_encode.compress(img._pix.copy(), "rgb565", 50)
    assert img.compress() is img
    assert img.format() == pixformat.JPEG == image.JPEG
    assert (img.width(), img.height(), img.size()) == (75, 61, len(expect))
    assert bytes(img.to_bytes()) == expect and isinstance(img.to_bytes(), bytearray)
    assert repr(img) == f'{{"w":75, "h":61, "type"="jpeg", "size":{len(expect)}}}'
    assert img[0] == 0xFF and img[0:2] == (0xFF, 0xD8)
    with pytest.raises(OSError, match="Image format is not supported!"):
        img.compress()
    with pytest.raises(OSError, match="Image format is not supported!"):
        img.draw_line(0, 0, 5, 5)
    with pytest.raises(OSError, match="Image format is not supported!"):
        img.get_pixel(0, 0)


def test_compress_larger_than_the_image_is_refused():
    img = image.Image(size=(8, 8))  # 128 bytes; headers alone are ~600
    with pytest.raises(OSError, match="Can't compress in place!"):
        img.compress(quality=90)
    assert img.format() == pixformat.RGB565


def test_compressed_is_a_new_image():
    g = image.Image(size=(53, 37)).to_grayscale(True)
    g._pix[...] = pattern_gray(37, 53)
    out = g.compressed(quality=95)
    assert out is not g and g.format() == pixformat.GRAYSCALE
    assert digest(out.to_bytes()) == REFERENCE[("gray_37x53", 95)]
    with pytest.raises(OSError, match="1 <= quality <= 100"):
        g.compressed(quality=0)
    with pytest.raises(OSError, match="1 <= quality <= 100"):
        g.compressed(101)
    with pytest.raises(TypeError):
        g.compressed(quality=50.0)


def _hand_ide(data: bytes, in_place: bool) -> bytes:
    """The framing loop of py_image.c, one byte at a time."""
    out = [0xFE]
    n = len(data)
    for i in range(0, (n // 3) * 3, 3):
        x = data[i] | data[i + 1] << 8 | data[i + 2] << 16
        out += [0x80 | (x >> s) & 0x3F for s in (0, 6, 12, 18)]
    if n % 3 == 2:
        x = data[-2] | data[-1] << 8
        out += [0x80 | x & 0x3F, 0x80 | (x >> 6) & 0x3F, 0x80 | (x >> 12) & (0x3F if in_place else 0x0F)]
    if n % 3 == 1:
        x = data[-1]
        out += [0x80 | x & 0x3F, 0x80 | (x >> 6) & (0x3F if in_place else 0x03)]
    return bytes(out + [0xFE])


@pytest.mark.parametrize("n", [3, 4, 5, 300, 301, 302])
@pytest.mark.parametrize("in_place", [True, False])
def test_ide_framing(n, in_place):
    data = bytes(np.random.default_rng(n).integers(0, 256, n, dtype=np.uint8))
    framed = _codec.ide_frame(data, in_place)
    assert framed == _hand_ide(data, in_place)
    assert len(framed) == (n * 8 + 5) // 6 + 2


def test_compress_for_ide_and_compressed_for_ide():
    src = image.Image(size=(320, 240))
    src._pix[...] = pattern565(240, 320)
    jpeg = src.compressed(quality=50).to_bytes()
    copy = src.compressed_for_ide(quality=50)
    assert bytes(copy.to_bytes()) == _hand_ide(bytes(jpeg), in_place=False)
    assert copy.size() == (len(jpeg) * 8 + 5) // 6 + 2 and copy.format() == pixformat.JPEG
    assert repr(copy) == bytes(copy.to_bytes()).decode("latin-1")  # printed raw for the IDE
    assert src.compress_for_ide(quality=50) is src
    assert bytes(src.to_bytes()) == _hand_ide(bytes(jpeg), in_place=True)


def test_binary_images_compress_as_their_gray_levels():
    bits = pattern_bits(33, 40)
    gray = image.Image(size=(40, 33)).to_grayscale(True)
    gray._pix[...] = bits * 255
    b = gray.to_bitmap(copy=True)
    # jpeg_get_mcu(bpp 0): COLOR_BINARY_TO_GRAYSCALE(bit) - 128, the gray path's samples
    assert b.compressed(quality=70).to_bytes() == gray.compressed(quality=70).to_bytes()


def test_the_encoder_reads_the_firmwares_yuv_table():
    # sha256 of yuv_tab.c's full yuv_table[196608] (int8), which jpeg.c's COLOR_RGB565_TO_Y/U/V read
    from maixemu.firmware.image import _tables

    assert hashlib.sha256(_tables.yuv_table().tobytes()).hexdigest() == (
        "3934e95630e51d66299c5147b8ce1b1f04aef5bc5ffd9825ff64297293872a48")
