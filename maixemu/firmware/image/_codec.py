"""``compress``/``compressed`` and the IDE variants (py_image.c), over the firmware's JPEG encoder.

* ``compress(quality=50)``: the image becomes a JPEG image in its own memory — ``OSError("Can't
  compress in place!")`` when the JPEG is larger than the raw image; ``compressed`` returns a new
  JPEG image and leaves this one alone. Quality outside 1..100: ``OSError("Error: 1 <= quality <=
  100!")``. BINARY images compress as gray (0/255), JPEG images cannot be compressed again.
* ``*_for_ide``: the JPEG bytes in the IDE's 6-bit framing — ``0xFE``, each 3 bytes as 4 bytes
  ``0x80 | 6 bits`` (least significant first), the 1- or 2-byte tail as 2 or 3 such bytes, ``0xFE``;
  ``size() == (8 * n + 5) // 6 + 2``. The in-place and the copying variant differ in how much of the
  tail's top byte they keep (``& 0x3F`` vs ``& 0x0F``/``& 0x03``), as in the firmware; printing such
  an image writes the framed bytes themselves (what the IDE reads from the serial port).
"""

from __future__ import annotations

import numpy as np

from . import _args, _jpeg_encode, _kinds
from ._core import GRAYSCALE, RGB565
from ._host import ImageHost

JPEG = _kinds.JPEG


def _quality(args, kwargs) -> int:
    q = _args.to_int(_args.pick(args, 0, kwargs, "quality", 50))
    if not 1 <= q <= 100:
        raise OSError("Error: 1 <= quality <= 100!")
    return q


def jpeg_of(img, quality: int) -> bytes:
    """``jpeg_compress`` of an RGB565, GRAYSCALE or BINARY image."""
    kind = {RGB565: "rgb565", GRAYSCALE: "gray", _kinds.BINARY: "binary"}[img._fmt]
    return _jpeg_encode.compress(img._pix, kind, quality)


def ide_frame(data: bytes, in_place: bool) -> bytes:
    """The IDE framing of JPEG bytes (``compress_for_ide`` when ``in_place``, else ``compressed_for_ide``)."""
    raw = np.frombuffer(data, np.uint8).astype(np.uint32)
    n = raw.size
    full = (n // 3) * 3
    g = raw[:full].reshape(-1, 3)
    x = g[:, 0] | (g[:, 1] << 8) | (g[:, 2] << 16)
    body = (0x80 | ((x[:, None] >> np.array([0, 6, 12, 18], np.uint32)) & 0x3F)).astype(np.uint8).reshape(-1)
    tail = []
    if n % 3 == 2:
        end = int(raw[-2]) | (int(raw[-1]) << 8)
        tail = [0x80 | (end & 0x3F), 0x80 | ((end >> 6) & 0x3F), 0x80 | ((end >> 12) & (0x3F if in_place else 0x0F))]
    elif n % 3 == 1:
        end = int(raw[-1])
        tail = [0x80 | (end & 0x3F), 0x80 | ((end >> 6) & (0x3F if in_place else 0x03))]
    return b"\xfe" + body.tobytes() + bytes(tail) + b"\xfe"


class CodecMixin(ImageHost):
    def _jpeg_image(self, data: bytes):
        return type(self)._jpeg_wrap(data, self.width(), self.height())

    @classmethod
    def _jpeg_wrap(cls, data: bytes, w: int, h: int):
        """A JPEG image object around ``data`` (no AI buffer)."""
        obj = cls._wrap(JPEG, np.frombuffer(bytes(data), np.uint8).copy())
        obj._buf.dims = (w, h)
        return obj

    def _become_jpeg(self, data: bytes) -> None:
        """Replace this image's memory by JPEG bytes (in-place compression; AI pointer kept)."""
        dims = (self.width(), self.height())
        self._replace(JPEG, np.frombuffer(bytes(data), np.uint8).copy(), keep_ai=True)
        self._buf.dims = dims

    def compress(self, *args, **kwargs):
        """In-place JPEG (see module docstring); returns the image."""
        q = _quality(args, kwargs)
        data = jpeg_of(self, q)
        if len(data) > self.size():
            raise OSError("Can't compress in place!")
        self._become_jpeg(data)
        return self

    def compressed(self, *args, **kwargs):
        """A new JPEG image of this one."""
        return self._jpeg_image(jpeg_of(self, _quality(args, kwargs)))

    def compress_for_ide(self, *args, **kwargs):
        q = _quality(args, kwargs)
        data = jpeg_of(self, q)
        if len(data) > self.size():
            raise OSError("Can't compress in place!")
        self._become_jpeg(ide_frame(data, in_place=True))
        return self

    def compressed_for_ide(self, *args, **kwargs):
        return self._jpeg_image(ide_frame(jpeg_of(self, _quality(args, kwargs)), in_place=False))
