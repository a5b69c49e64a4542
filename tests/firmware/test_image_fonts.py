"""``image.font_load``/``font_free`` and UTF-8 ``draw_string`` against MaixPy-v1's font.c (d8901fd).

Expected pixels are worked out from the C code by hand: glyph ``u`` is the ``(w/8)*h`` bytes at
``u*(w/8)*h``; row ``y`` of a 16x16 glyph is ``font[y] << 8 | font[y + 16]``, bit 15 leftmost.
"""

from __future__ import annotations

import errno
from pathlib import Path

import numpy as np
import pytest

from _shared import SHARED_DIR
from maixemu.firmware.mp import notices
from maixemu.firmware import state
from maixemu.firmware.image import _fonts
from maixemu.host import storage

import maixemu.firmware.image as image

FONT_16 = (SHARED_DIR / "scripts" / "canmv_examples" / "01-K210" / "52-Multimedia" / "image"
           / "demo_draw_font" / "tools" / "0xA00000_font_uincode_16_16_tblr.Dzk")

NI = 0x4F60  # 你
HAO = 0x597D  # 好


def _glyph16(rows: list[int]) -> bytes:
    """A 16x16 glyph in the firmware's layout from 16 row bitmasks (bit 15 = leftmost column)."""
    rows = rows + [0] * (16 - len(rows))
    return bytes(r >> 8 for r in rows) + bytes(r & 0xFF for r in rows)


@pytest.fixture()
def board(tmp_path: Path, board_state):
    board_state.storage = storage.Storage(sd_dir=tmp_path, flash_dir=tmp_path)
    return tmp_path


def _font_file(folder: Path, glyphs: dict[int, bytes], name: str = "t.Dzk", size: int = 32) -> Path:
    data = bytearray(0x10000 * size)
    for code, g in glyphs.items():
        data[code * size:code * size + len(g)] = g
    path = folder / name
    path.write_bytes(bytes(data))
    return path


def _lit(img) -> set[tuple[int, int]]:
    ys, xs = np.nonzero(img._pix)
    return set(zip(xs.tolist(), ys.tolist()))


def test_the_module_exports_the_firmware_font_indexes():
    # font.h: enum FontIndex {ASCII, Unicode, UTF8, GBK, GB2312}; py_image.c exports ASCII and UTF8 only.
    assert image.ASCII == 0 and image.UTF8 == 2
    for name in ("GBK", "GB2312", "Unicode"):
        assert not hasattr(image, name)


def test_font_load_argument_errors(board):
    with pytest.raises(TypeError, match="missing 1 required positional"):
        image.font_load(image.UTF8, 16, 16)
    with pytest.raises(ValueError, match=r"font_addr must > 0"):
        image.font_load(image.UTF8, 16, 16, 0)
    with pytest.raises(ValueError, match=r"only supply \.Dzk"):
        image.font_load(image.UTF8, 16, 16, "/sd/font.bin")
    with pytest.raises(OSError) as err:
        image.font_load(image.UTF8, 16, 16, "/sd/missing.Dzk")
    assert err.value.errno == errno.ENOENT
    with pytest.raises(TypeError):
        image.font_load(1.5, 16, 16, 0x100)
    # Neither int nor str (bytes, a bool): the firmware does nothing and returns None.
    assert image.font_load(image.UTF8, 16, 16, b"/sd/a.Dzk") is None
    assert not _fonts.board_font().is_utf8


def test_other_indexes_select_the_built_in_ascii_font(board):
    _font_file(board, {})
    for index in (0, 1, 3, 4, 99):  # ASCII, Unicode, GBK, GB2312, unknown -> ASCII builtin
        image.font_load(index, 16, 16, "/sd/t.Dzk")
        assert _fonts.board_font().font == _fonts.LoadedFont()


def test_a_file_font_draws_its_glyphs_in_the_firmware_layout(board):
    glyph = _glyph16([0x8001, 0x4002, 0, 0xFFFF])  # corners, then a full row 3
    _font_file(board, {NI: glyph})
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(40, 20))
    img.draw_string(3, 2, "你".encode(), color=(255, 255, 255), mono_space=True)
    expect = {(3 + 0, 2), (3 + 15, 2), (3 + 1, 3), (3 + 14, 3)} | {(3 + x, 5) for x in range(16)}
    assert _lit(img) == expect
    assert int(img._pix[2, 3]) == 0xFFFF


def test_scale_samples_rows_and_columns_by_truncation(board):
    _font_file(board, {NI: _glyph16([0x8000])})
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(60, 60))
    img.draw_string(0, 0, "你".encode(), scale=2.5, mono_space=True)
    # rows y with int(y/2.5) == 0 -> y 0..2; columns x with int(x/2.5) == 0 -> x 0..2
    assert _lit(img) == {(x, y) for x in range(3) for y in range(3)}


def test_mono_space_advance_and_x_spacing(board):
    _font_file(board, {NI: _glyph16([0x8000]), HAO: _glyph16([0x8000])})
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(80, 20))
    img.draw_string(1, 0, "你好".encode(), mono_space=True, x_spacing=3)
    assert _lit(img) == {(1, 0), (1 + 16 + 3, 0)}


def test_proportional_spacing_scans_only_the_left_byte_block(board):
    # Left block: column 2 lit (bit 13); right block: column 12 lit (bit 3). The firmware tests
    # font[y] (left-block bytes) with 1 << (15 - x): x = 8..15 <-> bits 7..0 of the left bytes, so
    # it finds column 2's bit (bit 5 of the byte) at x = 10 and shifts the glyph by 10 to the left;
    # the pen then advances by (10 + 2) * scale + x_spacing.
    g = _glyph16([(1 << 13) | (1 << 3)])
    _font_file(board, {NI: g, HAO: _glyph16([1 << 15])})
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(80, 20))
    img.draw_string(20, 0, "你好".encode(), x_spacing=1)
    first = {(20 - 10 + 2, 0), (20 - 10 + 12, 0)}
    # 好's left block has bit 15 -> byte bit 7 -> found at x = 8: shifted by 8, advance irrelevant.
    second_x = 20 - 10 + 12 + 1 - 8
    assert _lit(img) == first | {(second_x, 0)}


def test_proportional_empty_glyph_advances_three_scaled_pixels_without_spacing(board):
    _font_file(board, {HAO: _glyph16([0x0080])})  # 你 is empty; 好: column 8 (right block)
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(80, 20))
    img.draw_string(5, 0, "你好".encode(), x_spacing=7, scale=2)
    # 你: nothing lit in the left block -> +int(2*3) = 6 and no x_spacing; 好 has no left-block bit
    # either, so it is not shifted: column 8 at scale 2 -> x 16, 17.
    assert _lit(img) == {(5 + 6 + 16, y) for y in (0, 1)} | {(5 + 6 + 17, y) for y in (0, 1)}


def test_text_length_is_the_tagged_len(board):
    glyphs = {code: _glyph16([0x8000]) for code in map(ord, "你好世界")}
    _font_file(board, glyphs)
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    as_bytes = image.Image(size=(100, 20))
    as_bytes.draw_string(0, 0, "你好世界".encode(), mono_space=True)
    assert _lit(as_bytes) == {(16 * k, 0) for k in range(4)}
    # str: limit 2*4+1 = 9 bytes -> the characters starting at bytes 0, 3, 6 only.
    as_str = image.Image(size=(100, 20))
    as_str.draw_string(0, 0, "你好世界", mono_space=True)
    assert _lit(as_str) == {(16 * k, 0) for k in range(3)}


def test_two_byte_sequences_need_a_second_byte_below_0xa0(board):
    glyphs = {0x41: _glyph16([0x8000]), 0xE9: _glyph16([0x8000]), 0xC4: _glyph16([0x8000])}
    _font_file(board, glyphs)
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(100, 20))
    img.draw_string(0, 0, "AÄé A".encode(), mono_space=True)  # Ä = C3 84 is accepted, é = C3 A9 stops
    assert _lit(img) == {(0, 0), (16, 0)}
    assert _fonts.utf8_to_unicode("é".encode(), 0) == (0, 0)
    assert _fonts.utf8_to_unicode("Ä".encode(), 0) == (2, 0xC4)
    assert _fonts.utf8_to_unicode("😀".encode(), 0) == (4, 0x1F600)
    assert _fonts.utf8_to_unicode(b"\x80", 0) == (0, 0)


def test_newlines_are_glyphs_with_a_utf8_font(board):
    _font_file(board, {0x0A: _glyph16([0x8000]), 0x41: _glyph16([0x8000])})
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    img = image.Image(size=(100, 40))
    img.draw_string(0, 0, b"\nA", mono_space=True)
    assert _lit(img) == {(0, 0), (16, 0)}


def test_flash_fonts_read_the_mapped_flash(board):
    path = _font_file(board, {NI: _glyph16([0x8001])}, name="font.bin")
    state.current().storage = storage.Storage(sd_dir=board, flash_dir=board, flash_map={0xA00000: path})
    image.font_load(image.UTF8, 16, 16, 0xA00000)
    img = image.Image(size=(40, 20))
    img.draw_string(0, 0, "你".encode(), mono_space=True)
    assert _lit(img) == {(0, 0), (15, 0)}
    assert not any(k.startswith("font-flash") for k in notices.seen())


def test_unmapped_flash_reads_as_erased_and_says_so(board):
    image.font_load(image.UTF8, 8, 8, 0x300000)
    assert "font-flash:0x300000" in notices.seen()
    img = image.Image(size=(20, 20))
    img.draw_string(0, 0, b"A", mono_space=True)
    assert _lit(img) == {(x, y) for x in range(8) for y in range(8)}


def test_8x8_font_glyph_size_and_offsets(board):
    data = bytearray(0x10000 * 8)
    data[0x41 * 8:0x41 * 8 + 8] = bytes([0x81, 0, 0, 0, 0, 0, 0, 0x18])
    (board / "u8.Dzk").write_bytes(bytes(data))
    image.font_load(image.UTF8, 8, 8, "/sd/u8.Dzk")
    img = image.Image(size=(20, 20))
    img.draw_string(0, 0, b"A", mono_space=True)
    assert _lit(img) == {(0, 0), (7, 0), (3, 7), (4, 7)}


def test_font_free_returns_to_ascii_and_closes_the_file(board):
    _font_file(board, {0x41: _glyph16([0xFFFF] * 16)})
    image.font_load(image.UTF8, 16, 16, "/sd/t.Dzk")
    handle = _fonts.board_font().font.handle
    image.font_free()
    assert handle.closed and not _fonts.board_font().is_utf8
    img = image.Image(size=(20, 20))
    img.draw_string(0, 0, "A", mono_space=True)
    # the built-in 8x12 'A' (font.c: 0x00,0x38,0x44,...) - not a 16x16 block
    assert max(x for x, _ in _lit(img)) < 8


def test_the_shipped_16x16_unicode_font(board):
    if not FONT_16.exists():
        pytest.skip("../shared/scripts/canmv_examples is absent")
    state.current().storage = storage.Storage(sd_dir=board, flash_dir=board, flash_map={0xA00000: FONT_16})
    image.font_load(image.UTF8, 16, 16, 0xA00000)
    img = image.Image(size=(40, 20))
    img.draw_string(0, 0, "你".encode(), mono_space=True)
    raw = FONT_16.read_bytes()[NI * 32:NI * 32 + 32]
    expect = {(x, y) for y in range(16) for x in range(16)
              if ((raw[y] << 8 | raw[y + 16]) >> (15 - x)) & 1}
    assert expect and _lit(img) == expect
