"""``image.font_load``/``font_free`` and ``draw_string`` with a loaded UTF-8 font (MaixPy ``font.c``).

The firmware knows one kind of loadable font: ``image.font_load(image.UTF8, width, height, src)``
with ``src`` a flash address (read raw from SPI flash, ``sys_spiffs_read``) or the path of a file
whose name contains ``.Dzk`` (kept open until ``font_free``). The file/flash content is a plain
glyph array indexed by Unicode code point: glyph ``u`` is the ``(width // 8) * height`` bytes at
``u * (width // 8) * height`` (uint8 arithmetic as in the firmware). Inside a glyph, the first
``height`` bytes are the leftmost 8 columns of each row, the next ``height`` bytes the next 8
columns, and so on (``imlib_draw_font`` joins ``height // 8`` bytes per row, ``height`` apart).
Every other index (``Unicode``, ``GBK``, ``GB2312`` of the firmware's enum, ``ASCII``) falls back
to the built-in 8x12 ASCII font; the module only exports ``ASCII`` (0) and ``UTF8`` (2).

Firmware behaviours reproduced (MaixPy-v1 d8901fd / v0.6.2, CanMV ``main``):

* The text length the UTF-8 loop compares against is ``mp_obj_len(str)`` used as a C int, i.e. the
  *tagged* small int ``2 * len + 1`` (``len`` = characters of a ``str``, bytes of ``bytes``). The
  loop stops at that byte index, at a NUL byte (code point 0, also the string's terminator) or at
  a malformed sequence: so a ``bytes`` text is drawn whole, a long ``str`` of 3-byte characters
  loses its tail (``"你好世界"`` draws 3 characters). A 2-byte sequence is only accepted with a
  second byte 0x80..0x9F (the firmware checks ``b2 & 0xE0``), so e.g. ``é`` (C3 A9) ends the text.
* No ``\\n`` handling and no ``y_spacing`` with a UTF-8 font; every character, ASCII included,
  comes from the loaded font.
* Proportional spacing scans only ``font[y]`` for ``y < height`` (the leftmost 8-column block) with
  ``1 << (width - 1 - x)``: for 16-wide fonts the first 8 columns never match, so the pen moves by
  ``(x + 2) * scale`` of the last lit column of the left block (or ``3 * scale`` when it is empty).
* A short read past the end of a font file leaves the firmware's stack buffer as it was; here the
  missing bytes are 0 (an unlit glyph). Unmapped flash reads as erased flash (0xFF: solid boxes);
  a notice says which address had nothing mapped.

The font the board has loaded is the one piece of run state of this module: a :class:`FontState`
part of the board (``current().font``), so a new board starts with the built-in ASCII font.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import BinaryIO

import numpy as np

from . import _args
from ._draw import font_bits
from ._host import ImageHost

_F = np.float32

# The firmware's ``enum FontIndex`` (font.h) and ``enum FontSource``.
ASCII, UNICODE, UTF8, GBK, GB2312 = 0, 1, 2, 3, 4
BUILT_IN, FILE_IN, ARRAY_IN = "builtin", "file", "flash"


def _trunc(v) -> int:
    """``fast_roundf``/``fast_floorf`` of this firmware: a float32 truncated toward zero."""
    return int(np.trunc(_F(v)))


@dataclass
class LoadedFont:
    """``font_config`` of font.c: glyph size, index, where glyphs come from."""

    width: int = 8
    high: int = 12
    index: int = ASCII
    source: str = BUILT_IN
    address: int = 0  # ARRAY_IN: flash address of glyph 0
    path: str = ""  # FILE_IN: the device path given to font_load
    handle: BinaryIO | None = field(default=None, repr=False)  # FILE_IN: the open font file

    @property
    def glyph_bytes(self) -> int:
        """``const uint8_t font_len = (width / 8) * high`` (uint8 arithmetic)."""
        return ((self.width // 8) * self.high) & 0xFF

    def read_glyph(self, code: int) -> bytes:
        """The ``glyph_bytes`` bytes of glyph ``code`` (missing bytes of a short file read as 0)."""
        n = self.glyph_bytes
        offset = code * n
        if self.source == FILE_IN and self.handle is not None:
            self.handle.seek(offset)
            data = self.handle.read(n)
        elif self.source == ARRAY_IN:
            data = _flash_read(self.address + offset, n)
        else:
            data = b""
        return data + bytes(n - len(data))


class FontState:
    """The board's loaded font (``font_config``); one instance per board (``current().font``)."""

    def __init__(self) -> None:
        self.font = LoadedFont()

    @property
    def is_utf8(self) -> bool:
        return self.font.index == UTF8

    def load(self, index: int, width: int, high: int, source: str, *, address: int = 0,
             path: str = "", handle: BinaryIO | None = None) -> None:
        """``font_load`` of font.c: only ``UTF8`` with a source is kept, anything else is ASCII."""
        self._close()
        if index == UTF8 and source != BUILT_IN:
            self.font = LoadedFont(width & 0xFF, high & 0xFF, UTF8, source, address, path, handle)
        else:
            self.font = LoadedFont()

    def free(self) -> None:
        """``font_free``: close a font file, back to the built-in ASCII font."""
        self._close()
        self.font = LoadedFont()

    def _close(self) -> None:
        if self.font.handle is not None:
            try:
                self.font.handle.close()
            finally:
                self.font.handle = None


def board_font() -> FontState:
    """The font loaded on the active board."""
    from ..state import current

    return current().font


def _flash_read(address: int, length: int) -> bytes:
    from ..Maix import utils  # the one raw-flash reader (mapped files, 0xFF elsewhere)

    return utils.flash_read(address, length)


def _flash_is_mapped(address: int) -> bool:
    from ...host import storage

    for base, path in storage.current().flash_map.items():
        try:
            if base <= address < base + path.stat().st_size:
                return True
        except OSError:
            continue
    return False


# ---------------------------------------------------------------------- module functions
def font_load(*args, **kwargs) -> None:
    """``image.font_load(index, width, height, src)``; keywords are ignored, as on the device.

    ``index == image.UTF8``: ``src`` an int flash address (> 0) or a ``.Dzk`` file path; any other
    ``src`` type leaves the current font as it is. Any other index selects the ASCII font.
    """
    if len(args) < 4:
        raise TypeError(f"function missing {4 - len(args)} required positional arguments")
    index = _args.to_int(args[0])
    width = _args.to_int(args[1])
    high = _args.to_int(args[2])
    src = args[3]
    if index != UTF8:
        board_font().load(index, width, high, BUILT_IN)
        return None
    if type(src) is int or isinstance(src, np.integer):  # mp_type_int (a bool is not)
        address = int(src)
        if address <= 0:
            raise ValueError("[MAIXPY]image: font_addr must > 0 ")
        if not _flash_is_mapped(address):
            from .. import notices

            notices.notice_once(
                f"font-flash:{address:#x}",
                f"image.font_load: nothing is mapped at flash address {address:#x}; glyphs read as "
                f"erased flash (solid boxes). Map the font with `maixemu run --flash {address:#x}=FONT.Dzk`",
            )
        board_font().load(UTF8, width, high, ARRAY_IN, address=address)
    elif isinstance(src, str):
        if ".Dzk" not in src:
            raise ValueError("[MAIXPY]image: font format don't match, only supply .Dzk ")
        handle = _open_font_file(src)
        board_font().load(UTF8, width, high, FILE_IN, path=src, handle=handle)
    return None


def font_free(*args, **kwargs) -> None:
    """``image.font_free()``: back to the built-in 8x12 ASCII font."""
    board_font().free()
    return None


def _open_font_file(path: str) -> BinaryIO:
    from ._imageio import open_device_file

    return open_device_file(path, "rb")


# ---------------------------------------------------------------------- UTF-8 decoding (font.c)
def _utf8_size(c: int) -> int:
    """``font_get_utf8_size``: sequence length from the lead byte (-1 for a continuation byte)."""
    if c < 0x80:
        return 1
    if c < 0xC0:
        return -1
    if c < 0xE0:
        return 2
    if c < 0xF0:
        return 3
    if c < 0xF8:
        return 4
    if c < 0xFC:
        return 5
    return 6


def utf8_to_unicode(data: bytes, i: int) -> tuple[int, int]:
    """``font_utf8_to_unicode`` at byte ``i``: (bytes consumed, code point); (0, 0) when malformed.

    The code point is assembled byte by byte into a little-endian uint64 exactly as the firmware
    does (each byte truncated to 8 bits, RISC-V's unsigned ``char``), including its 5/6-byte forms.
    Bytes past the end read as 0 (the string's NUL terminator).
    """
    b = [data[i + k] if i + k < len(data) else 0 for k in range(6)]
    n = _utf8_size(b[0])
    cont = all((b[k] & 0xC0) == 0x80 for k in range(1, max(n, 1)))
    if n == 1:
        out = [b[0]]
    elif n == 2:
        if (b[1] & 0xE0) != 0x80:
            return 0, 0
        out = [(b[0] << 6) + (b[1] & 0x3F), (b[0] >> 2) & 0x07]
    elif n == 3:
        if not cont:
            return 0, 0
        out = [(b[1] << 6) + (b[2] & 0x3F), (b[0] << 4) + ((b[1] >> 2) & 0x0F)]
    elif n == 4:
        if not cont:
            return 0, 0
        out = [(b[2] << 6) + (b[3] & 0x3F), (b[1] << 4) + ((b[2] >> 2) & 0x0F),
               ((b[0] << 2) & 0x1C) + ((b[1] >> 4) & 0x03)]
    elif n == 5:
        if not cont:
            return 0, 0
        out = [(b[3] << 6) + (b[4] & 0x3F), (b[2] << 4) + ((b[3] >> 2) & 0x0F),
               (b[1] << 2) + ((b[2] >> 4) & 0x03), b[0] << 6]
    elif n == 6:
        if not cont:
            return 0, 0
        out = [(b[4] << 6) + (b[5] & 0x3F), (b[4] << 4) + ((b[5] >> 2) & 0x0F),
               (b[2] << 2) + ((b[3] >> 4) & 0x03), ((b[0] << 6) & 0x40) + (b[1] & 0x3F)]
    else:  # a continuation byte as lead byte
        return 0, 0
    return n, sum((v & 0xFF) << (8 * k) for k, v in enumerate(out))


# ---------------------------------------------------------------------- glyph rasterising
#: glyphs of at most this many pixels are kept once made (a font has few distinct ones per text)
_CACHED_PIXELS = 4096


@lru_cache(maxsize=1024)
def _cached_bits(glyph: bytes, font_w: int, font_h: int, scale: float) -> np.ndarray:
    bits = font_bits(glyph, font_w, font_h, scale)
    bits.flags.writeable = False
    return bits


def glyph_bits(glyph: bytes, font_w: int, font_h: int, scale, y0: int = 0, y1: int | None = None) -> np.ndarray:
    """``_draw.font_bits`` of a font glyph (rows ``y0..y1-1``), kept when small."""
    if _trunc(_F(font_h) * _F(scale)) * (_trunc(_F(font_w) * _F(scale)) & 0xFF) <= _CACHED_PIXELS:
        bits = _cached_bits(glyph, font_w, font_h, float(scale))
        return bits[y0:bits.shape[0] if y1 is None else max(y1, y0)]
    return font_bits(glyph, font_w, font_h, scale, y0, y1)


@lru_cache(maxsize=1024)
def _first_lit_column(glyph: bytes, font_w: int, font_h: int) -> int | None:
    """The proportional-spacing scan of font.c: first x whose bit is set in ``glyph[y]``, y < h."""
    for x in range(font_w):
        bit = font_w - 1 - x
        if bit < 8 and any(glyph[y] >> bit & 1 for y in range(min(font_h, len(glyph)))):
            return x
    return None


@lru_cache(maxsize=1024)
def _last_lit_column(glyph: bytes, font_w: int, font_h: int) -> int | None:
    for x in range(font_w - 1, -1, -1):
        bit = font_w - 1 - x
        if bit < 8 and any(glyph[y] >> bit & 1 for y in range(min(font_h, len(glyph)) - 1, -1, -1)):
            return x
    return None


def draw_utf8(img, x_off: int, y_off: int, text, color, scale, x_spacing: int, mono: bool) -> None:
    """``imlib_draw_utf8_string`` with the board's font onto ``img`` (pixels only; no touch)."""
    font = board_font().font
    data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
    limit = 2 * len(text) + 1  # mp_obj_len() used as a C int: the tagged small int
    w, h = font.width, font.high
    s = _F(scale)
    i = 0
    while i < limit:
        size, code = utf8_to_unicode(data, i)
        if size <= 0 or code <= 0:
            break
        glyph = font.read_glyph(code)
        if not mono:
            first = _first_lit_column(glyph, w, h)
            if first is not None:
                x_off -= _trunc(_F(first) * s)
        y0 = max(-y_off, 0)  # only the rows that land on the image
        bits = glyph_bits(glyph, w, h, s, y0, img.height() - y_off)
        if bits.size:
            img._blit(bits, x_off, y_off + y0, color)
        if mono:
            x_off += _trunc(_F(w) * s) + x_spacing
        else:
            last = _last_lit_column(glyph, w, h)
            x_off += _trunc(_F(last + 2) * s) + x_spacing if last is not None else _trunc(s * _F(3))
        i += size


class FontMixin(ImageHost):
    """``draw_string`` with a loaded UTF-8 font (font.c ``imlib_draw_string`` dispatch)."""

    def _draw_text(self, x, y, text, data: bytes, c, scale, x_spacing, y_spacing, mono) -> None:
        if not board_font().is_utf8:
            return super()._draw_text(x, y, text, data, c, scale, x_spacing, y_spacing, mono)  # DrawMixin's
        if not isinstance(text, (str, bytes)):  # mp_obj_str_get_str: str or bytes only
            raise TypeError(f"can't convert '{type(text).__name__}' object to str implicitly")
        draw_utf8(self, x, y, text, c, scale, x_spacing, mono)
        return None
