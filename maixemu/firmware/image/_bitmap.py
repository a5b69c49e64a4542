"""``to_bitmap``, ``to_rainbow`` and the conversions out of BINARY
images, as py_image.c does them (storage of BINARY images: see ``_kinds``).

* ``to_bitmap``: gray ``> 127`` / RGB565 ``Y > -1`` (gray >= 128); in place unless ``copy``, which
  needs ``w >= 4`` (gray) / ``w >= 2`` (RGB565) — ``OSError("Can't convert to bitmap in place!")``.
* ``to_grayscale``/``to_rgb565``/``to_rainbow`` of a BINARY image need ``copy=True`` (or ``w == 1``)
  — ``OSError("Can't convert to grayscale in place!")`` (the firmware's wording, for RGB565 too) /
  ``"Can't convert to rainbow in place!"``; bits become 0/255, black/white.
* ``to_rainbow`` maps gray (RGB565: its gray, the YUV table's ``Y + 128``) through the 256-entry
  ``rainbow_table`` (``rainbow_tab.c``); in place for RGB565, ``copy=True`` needed for gray.

In-place conversions keep the image's AI pointer (now stale), copies get a fresh never-filled AI
buffer, as ``to_grayscale`` does. In the firmware an in-place ``to_bitmap``/``to_rainbow`` updates
only the returned object's header (and the main frame buffer's); here every alias of the memory
sees the new format.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _args, _color, _kinds, _tables
from ._core import GRAYSCALE, RGB565
from ._host import ImageHost

BINARY = _kinds.BINARY


@lru_cache(maxsize=1)
def rainbow_table() -> np.ndarray:
    """``rainbow_table[256]`` (byte-swapped RGB565): a hue ramp from cyan-blue to red.

    The table in rainbow_tab.c is an HSV sweep ``h(i) = 0.53784 - 0.0021011 i`` (full saturation
    and value) with each channel rounded to 5/6 bits; checked entry by entry against the firmware's
    table (by digest) in tests/firmware/test_image_tables.py.
    """
    i = np.arange(256)
    h6 = (0.53784 - 0.0021011 * i) * 6
    k = np.floor(h6).astype(np.int64) % 6
    f = h6 - np.floor(h6)
    one, zero, down = np.ones(256), np.zeros(256), 1 - f
    r = np.choose(k, [one, down, zero, zero, f, one])
    g = np.choose(k, [f, one, one, down, zero, zero])
    b = np.choose(k, [zero, zero, f, one, one, down])
    table = _color.pack565(np.floor(r * 31 + 0.5), np.floor(g * 63 + 0.5), np.floor(b * 31 + 0.5))
    table.flags.writeable = False
    return table


@lru_cache(maxsize=1)
def rainbow_of_rgb565() -> np.ndarray:
    """(65536,) the rainbow colour of every RGB565 value: ``rainbow_table`` of its gray
    (``COLOR_RGB565_TO_GRAYSCALE``: the YUV table's Y + 128), one lookup per pixel."""
    table = rainbow_table()[_tables.gray_table()]
    table.flags.writeable = False
    return table


def bit_color(color) -> int:
    """``py_helper_keyword_color`` for a BINARY image: an int's bit 0, a tuple via RGB565 -> Y."""
    return _color.color_value(color, BINARY)


def _copy_flag(args, kwargs) -> bool:
    return bool(_args.to_int(_args.pick(args, 0, kwargs, "copy", False)))


class BitmapMixin(ImageHost):
    def _new_kind(self, fmt: int, pix: np.ndarray, copy: bool):
        """The result of a format conversion: a new image (fresh AI buffer) or this memory."""
        if copy:
            return type(self)._wrap(fmt, pix, np.zeros((3,) + pix.shape, np.uint8))
        self._replace(fmt, pix, keep_ai=True)
        return self._alias()

    def to_bitmap(self, *args, **kwargs):
        """BINARY image of this one (``copy=False``: in place)."""
        copy = _copy_flag(args, kwargs)
        fmt = self._fmt
        if fmt == BINARY:
            return self._new_kind(BINARY, self._pix.copy(), True) if copy else self._alias()
        if not copy and self.width() < (4 if fmt == GRAYSCALE else 2):
            raise OSError("Can't convert to bitmap in place!")
        bits = _kinds.binary_of_gray(self._pix) if fmt == GRAYSCALE else _kinds.binary_of_rgb565(self._pix)
        return self._new_kind(BINARY, bits, copy)

    def _from_bitmap(self, args, kwargs, fmt: int, values: np.ndarray, message: str):
        copy = _copy_flag(args, kwargs)
        if not copy and self.width() != 1:
            raise OSError(message)
        return self._new_kind(fmt, values, copy)

    def to_grayscale(self, *args, **kwargs):
        if self._fmt != BINARY:
            return super().to_grayscale(*args, **kwargs)
        return self._from_bitmap(args, kwargs, GRAYSCALE, (self._pix * 255).astype(np.uint8),
                                 "Can't convert to grayscale in place!")

    def to_rgb565(self, *args, **kwargs):
        if self._fmt != BINARY:
            return super().to_rgb565(*args, **kwargs)
        white = _color.gray_to_rgb565(np.array(255, np.uint8))  # imlib_yuv_to_rgb(255, 0, 0)
        return self._from_bitmap(args, kwargs, RGB565, np.where(self._pix != 0, white, 0).astype(np.uint16),
                                 "Can't convert to grayscale in place!")

    def to_rainbow(self, *args, **kwargs):
        """RGB565 false colours of the gray level through ``rainbow_table``."""
        table = rainbow_table()
        fmt = self._fmt
        if fmt == BINARY:
            return self._from_bitmap(args, kwargs, RGB565, table[self._pix.astype(np.int64) * 255],
                                     "Can't convert to rainbow in place!")
        copy = _copy_flag(args, kwargs)
        if fmt == GRAYSCALE:
            if not copy:
                raise OSError("Can't convert to rainbow in place!")
            return self._new_kind(RGB565, _color.lut8(self._pix, table), True)
        return self._new_kind(RGB565, _color.lut16(self._pix, rainbow_of_rgb565()), copy)
