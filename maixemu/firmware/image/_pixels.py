"""Pixel plumbing shared by the imlib ports: native channels, binary views, masks, operands, windows.

These mirror the macros and helpers of ``imlib.h`` / ``imlib.c`` / ``py_helper.c`` that every image
function uses, so each port reads like the C it reproduces:

* channels are the native fields: ``[gray]`` or ``[R5, G6, B5]`` (``COLOR_RGB565_TO_R5`` ...);
* ``COLOR_*_TO_BINARY``: gray > 127, RGB565 ``Y > -1`` (gray >= 128 through the YUV table);
* ``image_get_mask_pixel``: a mask image of any format, false outside its bounds;
* the "other" operand of the math ops (``imlib_image_operation``): a path, an image of the same
  width/height/format (else ``OSError("Images not equal!")``) or a scalar colour filling a row;
* windows with clamp-to-edge reads (``IM_MIN(IM_MAX(y + j, 0), h - 1)``), offsets in the C loop order.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from . import _args, _color
from ._core import GRAYSCALE, RGB565, ImageBase
from ..pixformat import BINARY
from ._host import ImageHost

#: The largest value of each native channel (``COLOR_BINARY_MAX``, ``COLOR_GRAYSCALE_MAX``, R5/G6/B5).
MAXES = {BINARY: (1,), GRAYSCALE: (255,), RGB565: (31, 63, 31)}


def channels(pix: np.ndarray, fmt: int) -> list[np.ndarray]:
    """Native channels as int64 arrays: [bit] (BINARY), [gray] or [R5, G6, B5]."""
    if fmt == GRAYSCALE or fmt == BINARY:
        return [pix.astype(np.int64)]
    return [c.astype(np.int64) for c in _color.split565(pix)]


def pack(chans: list[np.ndarray], fmt: int) -> np.ndarray:
    """Store native channels back (uint8 gray / packed RGB565, values taken modulo the field width
    as the C stores do: ``IMAGE_PUT_BINARY_PIXEL`` keeps bit 0 of the value)."""
    if fmt == BINARY:
        return (np.asarray(chans[0], dtype=np.int64) & 1).astype(np.uint8)
    if fmt == GRAYSCALE:
        return (np.asarray(chans[0], dtype=np.int64) & 0xFF).astype(np.uint8)
    if all(isinstance(c, np.ndarray) and c.dtype == np.uint8 for c in chans):
        return _color.pack565(*chans)  # fields known to be 0..255: the same bits in uint16 arithmetic
    r, g, b = (np.asarray(c, dtype=np.int64) for c in chans)
    # COLOR_R5_G6_B5_TO_RGB565 with ints: (r << 3) | (g >> 3) | ((g & 7) << 13) | (b << 8), stored as uint16
    return (((r << 3) | (g >> 3) | ((g & 7) << 13) | (b << 8)) & 0xFFFF).astype(np.uint16)


def to_binary(pix: np.ndarray, fmt: int) -> np.ndarray:
    """``COLOR_GRAYSCALE_TO_BINARY`` / ``COLOR_RGB565_TO_BINARY`` of every pixel (a bitmap's own bit)."""
    if fmt == BINARY:
        return pix != 0
    if fmt == GRAYSCALE:
        return pix > 127
    from ._tables import binary_table

    return _color.lut16(pix, binary_table()).view(bool)


def binary_max(fmt: int) -> int:
    """``COLOR_*_BINARY_MAX``: the value a set pixel is written as."""
    return 1 if fmt == BINARY else 0xFF if fmt == GRAYSCALE else 0xFFFF


def mask_pixels(mask, shape: tuple[int, int], x0: int = 0, y0: int = 0) -> np.ndarray:
    """``image_get_mask_pixel(mask, x, y)`` for the (h, w) block at (x0, y0): False outside the mask."""
    if not isinstance(mask, ImageBase):
        raise TypeError("Image expected")
    h, w = shape
    out = np.zeros((h, w), bool)
    mh, mw = mask.height(), mask.width()
    ys, ye = max(y0, 0), min(y0 + h, mh)
    xs, xe = max(x0, 0), min(x0 + w, mw)
    if ye > ys and xe > xs:
        out[ys - y0:ye - y0, xs - x0:xe - x0] = to_binary(mask._pix[ys:ye, xs:xe], mask._fmt)
    return out


def keyword_mask(args: tuple, index: int, kwargs: dict):
    """``py_helper_keyword_to_image_mutable_mask``: the ``mask`` keyword or positional ``index``."""
    mask = _args.pick(args, index, kwargs, "mask", None)
    if mask is not None and not isinstance(mask, ImageBase):
        raise TypeError("Image expected")
    return mask


def ksize(value) -> int:
    """``py_helper_arg_to_ksize``."""
    k = _args.to_int(value)
    if k < 0:
        raise OSError("KernelSize must be >= 0!")
    return k


def positional_color(img, args: tuple, index: int, default: int = 0) -> int:
    """``py_helper_keyword_color(img, n_args, args, index, NULL, default)``: positional only; an int
    is the raw value, anything else must be an (r, g, b) sequence (``None`` is a TypeError)."""
    if len(args) <= index:
        return default
    value = args[index]
    if value is None:
        raise TypeError("object 'NoneType' isn't a tuple or list")
    return _color.color_value(value, img._fmt)


def operand(img, other) -> np.ndarray:
    """The other operand of a math op as raw pixels of ``img``'s shape and dtype.

    A path is read as an image file (``imlib_read_geometry``); an image must have the same width,
    height and format; anything else is a colour (int raw value or (r, g, b)) filling every pixel,
    stored as the pixel type stores it.
    """
    if isinstance(other, (str, bytes)):
        other = type(img)(other)
        if not _same_geometry(img, other):
            raise OSError("Images not equal!")
        return other._pix
    if isinstance(other, ImageBase):
        if not _same_geometry(img, other):
            raise OSError("Images not equal!")
        return other._pix
    c = positional_color(img, (other,), 0, 0)
    dtype = img._pix.dtype
    width_mask = 1 if img._fmt == BINARY else 0xFF if dtype == np.uint8 else 0xFFFF
    return np.full(img._pix.shape, int(c) & width_mask, dtype)


def _same_geometry(a, b) -> bool:
    return a.width() == b.width() and a.height() == b.height() and a._fmt == b._fmt


# ---------------------------------------------------------------------- windows
def offsets(k: int) -> Iterator[tuple[int, int]]:
    """(dy, dx) over a (2k+1)^2 window in the firmware's loop order (rows, then columns)."""
    for j in range(-k, k + 1):
        for i in range(-k, k + 1):
            yield j, i


def planes(pix: np.ndarray, fmt: int) -> list[np.ndarray]:
    """Native channels as uint8 arrays (what the window kernels read): [bit], [gray], [R5, G6, B5]."""
    if fmt == GRAYSCALE or fmt == BINARY:
        return [pix]
    return [c.astype(np.uint8) for c in _color.split565(pix)]


def box_sum(chan: np.ndarray, k: int) -> np.ndarray:
    """int32 sum over each pixel's clamp-to-edge (2k+1)^2 window of a uint8 channel (OpenCV's
    unnormalised box filter with the edge repeated: integer sums, exact)."""
    import cv2

    n = 2 * k + 1
    return cv2.boxFilter(np.ascontiguousarray(chan, dtype=np.uint8), cv2.CV_32S, (n, n), normalize=False,
                         borderType=cv2.BORDER_REPLICATE)


class Window:
    """Clamp-to-edge shifted views of a channel, for vectorised neighbourhood loops."""

    def __init__(self, chan: np.ndarray, k: int):
        self.k = k
        self.h, self.w = chan.shape
        self.padded = np.pad(chan, k, mode="edge")

    def at(self, dy: int, dx: int) -> np.ndarray:
        k = self.k
        return self.padded[k + dy:k + dy + self.h, k + dx:k + dx + self.w]

    def stack(self) -> np.ndarray:
        """(H, W, n) array of the window's values in loop order."""
        n = 2 * self.k + 1
        v = np.lib.stride_tricks.sliding_window_view(self.padded, (n, n))
        return v.reshape(self.h, self.w, n * n)



class ChannelHelpers(ImageHost):
    """Channel helpers kept for the approximate methods that still use them (flood_fill, cartoon)."""

    def _fields(self) -> list[np.ndarray]:
        return channels(self._pix, self._fmt)

    def _field_max(self) -> list[int]:
        return list(MAXES[self._fmt])

    def _set_fields(self, fields: list[np.ndarray]) -> None:
        self._pix[...] = pack([np.clip(f, 0, m) for f, m in zip(fields, MAXES[self._fmt])], self._fmt)
        self._touch()

    def _rgb8_or_gray(self) -> np.ndarray:
        return self._pix.copy() if self._fmt == GRAYSCALE else self._rgb888()

    def _store8(self, arr: np.ndarray) -> None:
        """Store an 8-bit gray or (H, W, 3) RGB array back through the firmware's tables."""
        arr = np.clip(arr, 0, 255).astype(np.uint8)
        if self._fmt == GRAYSCALE:
            self._pix[...] = arr if arr.ndim == 2 else _color.rgb888_to_gray(arr)
        else:
            self._pix[...] = _color.rgb888_to_565(arr if arr.ndim == 3 else np.repeat(arr[..., None], 3, 2))
        self._touch()

    def cartoon(self, *args, **kwargs):
        """Flat colour regions (an OpenCV mean-shift approximation of the firmware's cartoon)."""
        import cv2

        src = self._rgb8_or_gray()
        if src.ndim == 2:
            self._store8(cv2.bilateralFilter(src, 7, 60, 5))
        else:
            self._store8(cv2.pyrMeanShiftFiltering(src, 8, 24))
        return self
