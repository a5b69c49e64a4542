"""Image files as MaixPy-v1 (d8901fd) reads and writes them: bmp.c, picojpeg, imlib.c's rules,
and ``ImageWriter``/``ImageReader``.

Pixel expectations of the hand-built files are worked out from the C code (picojpeg's Winograd
scaling ``(q * 128 + 4) >> 3`` for the DC term, its fixed-point YCbCr formulas and RGB565 packing
by truncation; bmp.c's row layout). ``PICOJPEG_REFERENCE`` holds sha256 prefixes of what picojpeg.c +
picojpeg_util.c (compiled on the host with the firmware's flags) decode from the shared photos.
"""

from __future__ import annotations

import errno
import hashlib
import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image as PILImage

import maixemu.firmware.image as image
from _shared import SHARED_DIR
from maixemu.firmware.mp import notices
from maixemu.firmware import pixformat
from maixemu.firmware.image import _color, _imageio
from maixemu.host import storage

PICOJPEG_REFERENCE = {  # file: (w, h, sha256[:32] of the RGB565 memory)
    "coco_436511.jpg": (640, 424, "7aaad0d87b802776d6630f5b38895cd0"),  # 4:4:4
    "coco_436603.jpg": (640, 425, "1b3ef58fe56cfba81c591ce43940f811"),
    "face_group.jpg": (320, 240, "face0d00a42596dd53012c233f4776cf"),  # 4:2:0
    "face_20.jpg": (320, 240, "57318542bb723d5b7ea87ccfacb2b04c"),
}


@pytest.fixture()
def sd(tmp_path: Path, board_state):
    (tmp_path / "sd").mkdir()
    board_state.storage = storage.Storage(sd_dir=tmp_path / "sd", flash_dir=tmp_path / "sd")
    return tmp_path / "sd"


# ---------------------------------------------------------------------- JPEG (picojpeg)
def _jpeg(w: int, h: int, comps: int, bits: str, ac_symbol: int = 0x00) -> bytes:
    """A baseline JPEG: all-ones quant table, DC table {'0': 7}, AC table {'0': ac_symbol}."""
    bits += "1" * (-len(bits) % 8)
    data = bytes(int(bits[i:i + 8], 2) for i in range(0, len(bits), 8)).replace(b"\xff", b"\xff\x00")
    out = b"\xff\xd8" + b"\xff\xdb\x00\x43\x00" + b"\x01" * 64
    out += b"\xff\xc0" + struct.pack(">HBHHB", 8 + 3 * comps, 8, h, w, comps)
    out += b"".join(bytes([i + 1, 0x11, 0]) for i in range(comps))
    out += b"\xff\xc4\x00\x14\x00" + bytes([1] + [0] * 15) + b"\x07"
    out += b"\xff\xc4\x00\x14\x10" + bytes([1] + [0] * 15) + bytes([ac_symbol])
    out += b"\xff\xda" + struct.pack(">HB", 6 + 2 * comps, comps) + b"".join(bytes([i + 1, 0]) for i in range(comps))
    return out + b"\x00\x3f\x00" + data + b"\xff\xd9"


def _dc_sample(dc: int) -> int:
    """picojpeg, DC only: coefficient dc * ((1 * 128 + 4) >> 3), then clamp(((c + 64) >> 7) + 128)."""
    return max(0, min(255, ((dc * 16 + 64) >> 7) + 128))


def test_gray_dc_only_blocks_and_dc_prediction():
    # block 0: DC diff +80 (size 7: 1010000); block 1: diff -100 (-100 + 127 = 27: 0011011)
    data = _jpeg(16, 8, 1, "0" + "1010000" + "0" + "0" + "0011011" + "0")
    kind, pix = _imageio._jpeg_decode.decode(data)
    assert kind == "gray" and pix.shape == (8, 16)
    assert (pix[:, :8] == _dc_sample(80)).all() and (pix[:, 8:] == _dc_sample(-20)).all()
    assert _dc_sample(80) == 138 and _dc_sample(-20) == 126


def test_color_dc_only_uses_picojpegs_fixed_point_and_truncating_565():
    y, cb, cr = _dc_sample(80), _dc_sample(-100), _dc_sample(80)
    block = "0{}0"
    data = _jpeg(8, 8, 3, block.format("1010000") + block.format("0011011") + block.format("1010000"))
    kind, pix = _imageio._jpeg_decode.decode(data)
    clamp = lambda v: max(0, min(255, v))  # noqa: E731
    r = clamp(y + (cr + ((cr * 103) >> 8)) - 179)
    g = clamp(clamp(y - (((cb * 88) >> 8) - 44)) - (((cr * 183) >> 8) - 91))
    b = clamp(y + (cb + ((cb * 198) >> 8)) - 227)
    assert (r, g, b) == (152, 136, 116)
    assert kind == "rgb565" and (pix == int(_color.pack565(r >> 3, g >> 2, b >> 3))).all()


def test_a_broken_entropy_stream_is_eperm(sd, capsys):
    # AC symbol 0xF1 (16 zeros then a 1-bit value) four times runs past coefficient 63
    data = _jpeg(8, 8, 1, "0" + "1010000" + "01" * 4, ac_symbol=0xF1)
    (sd / "bad.jpg").write_bytes(data)
    with pytest.raises(OSError) as err:
        image.Image("/sd/bad.jpg")
    assert err.value.errno == errno.EPERM
    out = capsys.readouterr().out
    assert "pjpeg_decode_mcu() failed with status 28" in out and "Failed loading source image!" in out


def test_a_progressive_jpeg_gives_an_empty_image(sd, capsys):
    buf = io.BytesIO()
    PILImage.new("RGB", (32, 16), (200, 10, 10)).save(buf, "JPEG", progressive=True)
    (sd / "p.jpg").write_bytes(buf.getvalue())
    img = image.Image("/sd/p.jpg")
    assert (img.width(), img.height(), img.format()) == (0, 0, None)
    out = capsys.readouterr().out
    assert out.splitlines() == ["pjpeg_decode_init() failed with status 37",
                                "Progressive JPEG files are not supported.", "Failed loading source image!"]
    assert "jpeg-init-failed" in notices.seen()


@pytest.mark.parametrize("name", sorted(PICOJPEG_REFERENCE))
def test_shared_photos_decode_as_picojpeg(sd, name):
    src = SHARED_DIR / "images" / name
    if not src.exists():
        pytest.skip("../shared/images is absent")
    (sd / name).write_bytes(src.read_bytes())
    img = image.Image("/sd/" + name)
    w, h, digest = PICOJPEG_REFERENCE[name]
    assert (img.width(), img.height(), img.format()) == (w, h, pixformat.RGB565)
    assert hashlib.sha256(img._pix.astype("<u2").tobytes()).hexdigest()[:32] == digest


def test_jpeg_from_bytes_and_from_a_file_object(sd):
    data = _jpeg(8, 8, 1, "0" + "1010000" + "0")
    assert int(image.Image(data, from_bytes=True)._pix[0, 0]) == 138
    (sd / "a.jpg").write_bytes(data)
    with open(sd / "a.jpg", "rb") as fp:
        assert image.Image(fp).format() == pixformat.GRAYSCALE


# ---------------------------------------------------------------------- BMP (bmp.c)
def _bmp(w: int, h: int, bpp: int, rows: bytes, comp: int = 0, extra: bytes = b"", offset_pad: int = 0) -> bytes:
    header = 14 + 40 + len(extra) + offset_pad
    size = header + len(rows)
    return (b"BM" + struct.pack("<IHHI", size, 0, 0, header)
            + struct.pack("<IiiHHIIiiII", 40, w, h, 1, bpp, comp, len(rows), 0, 0, 0, 0)
            + extra + b"\0" * offset_pad + rows)


def test_bmp_24_bit_bottom_up_with_row_padding(sd):
    # 2x2, rows bottom-up, each row 6 bytes + 2 padding; pixels stored B, G, R
    rows = bytes([0, 0, 255, 0, 255, 0, 0, 0]) + bytes([255, 0, 0, 10, 20, 30, 0, 0])
    (sd / "c.bmp").write_bytes(_bmp(2, 2, 24, rows))
    img = image.Image("/sd/c.bmp")
    t5, t6 = _color.T8TO5, _color.T8TO6  # IM_R825 / IM_G826 rounding tables
    expect = [[(0, 0, 255), (30, 20, 10)], [(255, 0, 0), (0, 255, 0)]]  # top row = last file row
    for yy in range(2):
        for xx in range(2):
            r, g, b = expect[yy][xx]
            assert int(img._pix[yy, xx]) == int(_color.pack565(t5[r], t6[g], t5[b]))


def test_bmp_16_bit_top_down_and_mirrored(sd):
    words = [0xF800, 0x07E0, 0x001F, 0xFFFF]  # standard RGB565 in the file
    rows = struct.pack("<4H", *words)  # 2x2: rows of 4 bytes (already 4-aligned)
    masks = struct.pack("<3I", 0xF800, 0x07E0, 0x1F)
    (sd / "m.bmp").write_bytes(_bmp(-2, -2, 16, rows, comp=3, extra=masks))
    img = image.Image("/sd/m.bmp")
    swap = lambda v: ((v >> 8) | (v << 8)) & 0xFFFF  # noqa: E731  (IM_SWAP16 into device memory)
    assert img._pix.tolist() == [[swap(words[1]), swap(words[0])], [swap(words[3]), swap(words[2])]]
    assert img.get_pixel(1, 0) == (255, 0, 0)


def test_bmp_8_bit_palette_is_read_but_not_applied(sd):
    palette = b"".join(struct.pack("<I", 0x00FF0000) for _ in range(256))  # all red: ignored
    rows = bytes([7, 200, 0, 0])
    (sd / "g.bmp").write_bytes(_bmp(2, 1, 8, rows, extra=palette))
    img = image.Image("/sd/g.bmp")
    assert img.format() == pixformat.GRAYSCALE and img._pix.tolist() == [[7, 200]]


@pytest.mark.parametrize("patch,error", [
    ({"bpp": 32}, (OSError, "Unsupported format!")),
    ({"comp": 1}, (OSError, "Unsupported format!")),
    ({"bpp": 16, "comp": 0}, (OSError, "Unsupported format!")),
    ({"w": 0}, (ValueError, "file_corrupted_raise!")),
    ({"short": True}, (ValueError, "file_corrupted_raise!")),
])
def test_bmp_checks_the_firmware_makes(sd, patch, error):
    w = patch.get("w", 2)
    rows = bytes(8) if not patch.get("short") else bytes(2)
    (sd / "x.bmp").write_bytes(_bmp(w, 2, patch.get("bpp", 24), rows, comp=patch.get("comp", 0)))
    with pytest.raises(error[0], match=error[1]):
        image.Image("/sd/x.bmp")


def test_bmp_writer_layout_gray_and_rgb565(sd):
    g = image.Image(size=(3, 2)).to_grayscale(True)
    g._pix[...] = [[1, 2, 3], [4, 5, 6]]
    g.save("/sd/g.bmp")
    data = (sd / "g.bmp").read_bytes()
    row_bytes, size = 4, 14 + 40 + 1024 + 8
    assert data[:2] == b"BM" and struct.unpack_from("<IHHI", data, 2) == (size, 0, 0, 14 + 40 + 1024)
    assert struct.unpack_from("<IiiHHIIiiII", data, 14) == (40, 3, -2, 1, 8, 0, 8, 0, 0, 0, 0)
    assert struct.unpack_from("<I", data, 54 + 4 * 200)[0] == (200 << 16) | (200 << 8) | 200
    assert data[1078:] == bytes([1, 2, 3, 0, 4, 5, 6, 0]) and len(data) == size
    c = image.Image(size=(3, 2))
    c._pix[...] = 0x00F8  # red, byte-swapped in memory
    c.save("/sd/c.bmp", roi=(1, 0, 2, 1))
    data = (sd / "c.bmp").read_bytes()
    assert struct.unpack_from("<IiiHHI", data, 14) == (40, 2, -1, 1, 16, 3)
    assert struct.unpack_from("<3I", data, 54) == (0xF800, 0x07E0, 0x1F)
    assert data[66:] == struct.pack("<2H", 0xF800, 0xF800) and row_bytes == 4


def test_bmp_round_trip_and_bmp_from_bytes_is_not_supported(sd):
    c = image.Image(size=(5, 3))
    c._pix[...] = np.arange(15, dtype=np.uint16).reshape(3, 5) * 4111
    c.save("/sd/r.bmp")
    assert np.array_equal(image.Image("/sd/r.bmp")._pix, c._pix)
    with pytest.raises(OSError, match="Not support"):
        image.Image((sd / "r.bmp").read_bytes(), from_bytes=True)


# ---------------------------------------------------------------------- the firmware's rules
def test_formats_the_firmware_does_not_load(sd):
    PILImage.new("RGB", (4, 4)).save(sd / "a.png")
    (sd / "a.ppm").write_bytes(b"P6\n1 1\n255\n\0\0\0")
    for name in ("a.png", "a.ppm"):
        with pytest.raises(ValueError, match="format not supported"):
            image.Image("/sd/" + name)
    with pytest.raises(OSError) as err:
        image.Image("/sd/none.jpg")
    assert err.value.errno == errno.ENOENT


def test_loading_enforces_the_extension(sd):
    (sd / "a.pgm").write_bytes(_jpeg(8, 8, 3, "0" * 3 + "0" * 3 + "0" * 3 + "0" * 6))  # a colour JPEG
    with pytest.raises(OSError, match="Image is not PGM!"):
        image.Image("/sd/a.pgm")


def test_save_writes_only_bmp_and_jpeg(sd):
    img = image.Image(size=(4, 4))
    for name in ("a.png", "a.ppm", "noext"):
        assert img.save("/sd/" + name) is img
        assert not (sd / name).exists()
    assert any(k.startswith("save-ext") for k in notices.seen())
    with pytest.raises(OSError, match="Image is not PGM!"):
        img.save("/sd/a.pgm")
    with pytest.raises(OSError, match="Image is not BAYER!"):
        img.save("/sd/a.raw")
    with pytest.raises(OSError, match="Image is not PPM!"):
        img.to_grayscale(True).save("/sd/g.ppm")
    with pytest.raises(OSError, match="1 <= quality <= 100"):
        img.save("/sd/a.jpg", quality=0)


def test_save_jpeg_ignores_roi_and_jpeg_images_save_their_bytes(sd):
    img = image.Image(size=(32, 16))
    img.save("/sd/full.jpg", roi=(0, 0, 8, 8), quality=70)
    with PILImage.open(sd / "full.jpg") as im:
        assert im.size == (32, 16)
    j = img.compressed(quality=70)
    j.save("/sd/j.JPEG")
    assert (sd / "j.JPEG").read_bytes() == bytes(j.to_bytes())
    with pytest.raises(OSError, match="Image is not BMP!"):
        j.save("/sd/j.bmp")


def test_image_with_a_source_and_a_size_is_blank(sd):
    (sd / "a.jpg").write_bytes(_jpeg(8, 8, 1, "0" + "1010000" + "0"))
    img = image.Image("/sd/a.jpg", size=(10, 6))
    assert (img.width(), img.height(), img.format(), int(img._pix.max())) == (10, 6, pixformat.RGB565, 0)
    with pytest.raises(TypeError):
        image.Image("/sd/a.jpg", True)


# ---------------------------------------------------------------------- ImageWriter / ImageReader
def test_image_writer_and_reader_as_the_port_behaves(sd):
    w = image.ImageWriter("/sd/s.bin")
    assert (sd / "s.bin").read_bytes() == b"OMV IMG STR V1.0"
    assert w.size() == 5 and repr(w) == '{"size":5}'  # vfs_internal_size(&self->fp) -> EIO
    with pytest.raises(TypeError, match="Can't convert int to Image"):
        w.add_frame(3)
    with pytest.raises(_imageio.DeviceCrash, match="board crashes"):
        w.add_frame(image.Image(size=(4, 4)))
    with pytest.raises(_imageio.DeviceCrash):
        w.close()
    r = image.ImageReader("/sd/s.bin")
    assert r.size() == 5
    with pytest.raises(_imageio.DeviceCrash):
        r.next_frame()
    (sd / "junk.bin").write_bytes(b"not a stream")
    assert image.ImageReader("/sd/junk.bin").size() == 5  # the header is read, never checked
    with pytest.raises(OSError) as err:
        image.ImageReader("/sd/missing.bin")
    assert err.value.errno == errno.ENOENT


def test_a_header_claiming_a_huge_image_is_refused_before_decoding(sd):
    data = bytearray(_jpeg(8, 8, 1, "0" + "1010000" + "0"))
    i = data.index(b"\xff\xc0")
    data[i + 5:i + 9] = struct.pack(">HH", 16000, 16000)  # 256 Mpx claimed by a 200-byte file
    (sd / "big.jpg").write_bytes(bytes(data))
    with pytest.raises(MemoryError, match="Out of normal MicroPython Heap Memory"):
        image.Image("/sd/big.jpg")
    header = bytearray(_bmp(30000, 30000, 24, b"", comp=0)[:54])
    header[2:6] = struct.pack("<I", 0xFFFFFFF0)  # a file size field that covers the claimed rows
    (sd / "big.bmp").write_bytes(bytes(header))
    with pytest.raises(MemoryError, match="Out of normal MicroPython Heap Memory"):
        image.Image("/sd/big.bmp")
