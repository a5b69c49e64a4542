"""Colour arithmetic of the MaixPy firmware: the 5/6<->8-bit tables, byte-swapped RGB565, grayscale.

Everything here is a pure function of numpy arrays so that sensor, lcd and the image methods share one
definition. The tables are the firmware's (``rgb2rgb_tab.c``): "round half up" of the linear
rescale, *not* bit replication or shifts — models and colour tests are sensitive to the difference.
"""

from __future__ import annotations

import numpy as np

from .. import pixformat

from ._rgb565 import T5TO8, T6TO8, T8TO5, T8TO6, pack565, split565  # noqa: F401 - the colour arithmetic's own names
from ._tables import gray_table
from . import _color_kernels
from ._jit import NOT_SERVED


# Per-frame conversions (camera snapshot, AI fill, LCD) as lookups in tables made from the ones
# above (read-only constants): one gather per output value instead of several numpy passes.
#: R, G and B of each 8-bit value already in their byte-swapped RGB565 bit positions (``pack565``)
_R565 = pack565(T8TO5, 0, 0)
_G565 = pack565(0, T8TO6, 0)
_B565 = pack565(0, 0, T8TO5)
_ALL565 = np.arange(1 << 16, dtype=np.uint16)
#: [65536, 3] RGB888 of every byte-swapped RGB565 value, and its [3, 65536] planar form
_RGB_OF_565 = np.stack([T5TO8[(_ALL565 >> 3) & 31], T6TO8[((_ALL565 & 7) << 3) | (_ALL565 >> 13)], T5TO8[(_ALL565 >> 8) & 31]],
                       axis=-1)
_PLANES_OF_565 = np.ascontiguousarray(_RGB_OF_565.T)
#: the compiled kernels' forms: [65536, 3] RGB888 of each RGB565 value (``COLOR_RGB565_TO_R8/G8/B8``)
#: and [3, 256] R, G, B parts of ``COLOR_R8_G8_B8_TO_RGB565``
RGB888_OF_565 = _RGB_OF_565
_R565_LIST, _G565_LIST, _B565_LIST = _R565.tolist(), _G565.tolist(), _B565.tolist()
#: [256] the RGB565 value of each gray level (R8 = G8 = B8 = gray)
_GRAY565 = pack565(T8TO5, T8TO6, T8TO5)
PACK888 = np.stack([_R565, _G565, _B565])
for _table in (_R565, _G565, _B565, _RGB_OF_565, _PLANES_OF_565, PACK888, _GRAY565):
    _table.flags.writeable = False
del _ALL565, _table


#: below this many pixels a conversion stays in numpy (a kernel call's fixed cost would dominate)
_KERNEL_MIN_PIXELS = 4096


def rgb888_to_565(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) uint8 RGB -> byte-swapped RGB565 through the 8->5/6 rounding tables."""
    rgb = np.asarray(rgb, dtype=np.uint8)
    if rgb.size >= 3 * _KERNEL_MIN_PIXELS and rgb.shape[-1] == 3:
        out = np.empty(rgb.shape[:-1], np.uint16)
        flat = np.ascontiguousarray(rgb).reshape(-1, 3)
        if _color_kernels.pack_rgb888.attempt(flat, _R565, _G565, _B565, out.reshape(-1)) is not NOT_SERVED:
            return out
    out = np.asarray(np.take(_R565, rgb[..., 0]))
    out |= np.take(_G565, rgb[..., 1])
    out |= np.take(_B565, rgb[..., 2])
    return out


def rgb565_to_888(p: np.ndarray) -> np.ndarray:
    """Byte-swapped RGB565 -> (..., 3) uint8 RGB through the 5/6->8 tables."""
    p = np.asarray(p, dtype=np.uint16)
    if p.size >= _KERNEL_MIN_PIXELS:
        out = np.empty(p.shape + (3,), np.uint8)
        if _color_kernels.rgb_of_565.attempt(np.ascontiguousarray(p).reshape(-1), T5TO8, T6TO8,
                                             out.reshape(-1, 3)) is not NOT_SERVED:
            return out
    return np.take(_RGB_OF_565, p, axis=0)


def rgb565_to_planes(p: np.ndarray) -> np.ndarray:
    """(H, W) byte-swapped RGB565 -> (3, H, W) planar RGB888, the layout of the AI buffer (§2.3)."""
    p = np.asarray(p, dtype=np.uint16)
    out = np.empty((3,) + p.shape, dtype=np.uint8)
    if p.size >= _KERNEL_MIN_PIXELS and _color_kernels.planes_of_565.attempt(
            np.ascontiguousarray(p).reshape(-1), out.reshape(3, -1)) is not NOT_SERVED:
        return out
    index = p.astype(np.intp)
    for c in range(3):
        np.take(_PLANES_OF_565[c], index, out=out[c])
    return out


def planes_to_rgb565(planes: np.ndarray) -> np.ndarray:
    """(3, H, W) planar RGB888 -> (H, W) byte-swapped RGB565 (``ai_to_pix``)."""
    planes = np.asarray(planes, dtype=np.uint8)
    return pack565(T8TO5[planes[0]], T8TO6[planes[1]], T8TO5[planes[2]])


def rgb888_to_gray(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) 8-bit RGB -> gray: ``floor(0.299 R + 0.587 G + 0.114 B)``, the BT.601 luma of the
    firmware's YUV table (``_tables.yuv_table``) applied to full 8-bit RGB.

    Used where a gray value is made from 8-bit colour directly (a camera frame in GRAYSCALE mode);
    RGB565 pixels go through :func:`rgb565_to_gray`, which is the same formula on the table
    expansion of the 5/6-bit fields.
    """
    rgb = np.asarray(rgb)
    r = rgb[..., 0].astype(np.float64)
    g = rgb[..., 1].astype(np.float64)
    b = rgb[..., 2].astype(np.float64)
    return np.clip(np.floor(r * 0.299 + g * 0.587 + b * 0.114), 0, 255).astype(np.uint8)


def rgb565_to_gray(p: np.ndarray) -> np.ndarray:
    """Byte-swapped RGB565 -> gray as the firmware does everywhere (``COLOR_RGB565_TO_GRAYSCALE``:
    the YUV table's Y + 128)."""
    return lut16(np.asarray(p, dtype=np.uint16), gray_table())


def gray_to_rgb565(g: np.ndarray) -> np.ndarray:
    """Gray -> byte-swapped RGB565 with R8=G8=B8=gray packed through the 8->5/6 tables."""
    return lut8(np.asarray(g, dtype=np.uint8), _GRAY565)


def lut8(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[values]`` for uint8 ``values`` and a 256-entry ``table``: OpenCV's ``LUT`` for an
    image (a plain table lookup, several times faster than numpy's gather), ``np.take`` otherwise."""
    if values.ndim == 2 and values.size:
        import cv2

        return cv2.LUT(np.ascontiguousarray(values), table)
    return np.take(table, values)


def lut16(values: np.ndarray, table: np.ndarray) -> np.ndarray:
    """``table[values]`` for uint16 ``values`` (RGB565 pixels) and a 65536-entry ``table``."""
    return np.take(table, values)


def _clamp8(v) -> int:
    return max(0, min(255, int(v)))


def color_value(color, fmt: int):
    """A script's ``color`` argument as the raw pixel value for an image of format ``fmt``.

    * ``None``/``-1`` (the firmware default): white — 0xFFFF on RGB565, 255 on grayscale.
    * int: the raw value — byte-swapped RGB565 on colour images (``lcd.RED == 0x00F8``), the gray
      level on grayscale images (never reinterpreted as 0xRRGGBB or standard RGB565).
    * (r, g, b): clamped to 0..255, through the 8->5/6 tables; on grayscale then to gray (§2.4).
    * BINARY (bitmap) images (``py_helper_keyword_color``, ``IMAGE_PUT_BINARY_PIXEL``): an int's
      bit 0 (so ``-1`` is set, ``0xFE`` clear); (r, g, b) -> RGB565 -> ``COLOR_RGB565_TO_BINARY``.
    """
    if color is None:
        color = -1
    if isinstance(color, bool):
        color = int(color)
    if isinstance(color, (int, np.integer)):
        color = int(color)
        if fmt == pixformat.BINARY:
            return color & 1
        return (color & 0xFF) if fmt == pixformat.GRAYSCALE else (color & 0xFFFF)
    if isinstance(color, (tuple, list)):
        if len(color) != 3:
            raise ValueError(f"requested length 3 but object has length {len(color)}")
        r, g, b = (_clamp8(_to_int(c)) for c in color)
        p = _R565_LIST[r] | _G565_LIST[g] | _B565_LIST[b]  # rgb888_to_565 of one colour
        if fmt == pixformat.GRAYSCALE or fmt == pixformat.BINARY:
            gray = int(gray_table()[p])  # rgb565_to_gray
            # BINARY: COLOR_RGB565_TO_BINARY, Y > -1 of the YUV table, i.e. gray >= 128
            return gray if fmt == pixformat.GRAYSCALE else int(gray >= 128)
        return p
    raise TypeError(f"object '{type(color).__name__}' isn't a tuple or list")


from ..mp.mp_args import int_arg as _to_int  # noqa: E402 - mp_obj_get_int
