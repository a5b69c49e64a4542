"""Pixel access, copies, conversions and file output of ``image.Image`` (maixpy-api.md §2.5-2.6).

AI-buffer rules implemented here (§0): ``copy``/``crop``/``cut``/``resize`` results have none;
in-place format changes keep the pointer but its contents go stale; ``to_grayscale(copy=True)``
gets a fresh zero-filled buffer (allocated, never filled, as on the device).
"""

from __future__ import annotations

import numpy as np

from .. import heap
from . import _args, _color, _kinds, _resize
from ._core import GRAYSCALE, RGB565, _alloc, _main_frame
from ._host import ImageHost

_F = np.float32


def _consecutive(idx: np.ndarray) -> slice | None:
    """The slice ``idx`` spells when its values are consecutive (an unscaled axis), else None."""
    if idx.size and int(idx[-1]) - int(idx[0]) == idx.size - 1 and bool(np.all(np.diff(idx) == 1)):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return None


def pick_grid(pix: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """``pix[rows][:, cols]`` as a new array: a slice copy along unscaled axes, one gather per
    scaled axis (cheaper than one 2-D fancy index)."""
    r, c = _consecutive(rows), _consecutive(cols)
    if r is not None and c is not None:
        return pix[r, c].copy()
    out = pix[r] if r is not None else np.take(pix, rows, axis=0)
    return np.take(out, cols, axis=1) if c is None else np.ascontiguousarray(out[:, c])


class BasicMixin(ImageHost):
    # ------------------------------------------------------------------ pixels
    def get_pixel(self, *args, **kwargs):
        """RGB565: (r8, g8, b8) through the 5->8/6->8 tables, raw value with ``rgbtuple=False``;
        grayscale: int (tuple of the gray's RGB565 expansion with ``rgbtuple=True``); BINARY: 0/1
        ((0, 0, 0)/(255, 255, 255) with ``rgbtuple=True``); outside: None."""
        (x, y), rest = _args.consume(args, 2)
        fmt = self._fmt
        rgbtuple = bool(_args.to_int(_args.pick(rest, 0, kwargs, "rgbtuple", fmt == RGB565)))
        if not (0 <= x < self.width() and 0 <= y < self.height()):
            return None
        p = self._pix[y, x]
        if fmt == RGB565:
            if not rgbtuple:
                return int(p)
            return tuple(int(v) for v in _color.rgb565_to_888(p))
        if rgbtuple:
            as565 = (0xFFFF if p else 0) if fmt == _kinds.BINARY else _color.gray_to_rgb565(p)
            return tuple(int(v) for v in _color.rgb565_to_888(np.uint16(as565)))
        return int(p)

    def set_pixel(self, *args, **kwargs):
        """Write one pixel (``color`` default white); outside the image nothing happens."""
        (x, y), rest = _args.consume(args, 2)
        color = _args.pick(rest, 0, kwargs, "color", -1)
        if self._fmt == _kinds.BINARY:
            from ._bitmap import bit_color

            c = bit_color(color)
        else:
            c = _color.color_value(color, self._fmt)
        if 0 <= x < self.width() and 0 <= y < self.height():
            self._pix[y, x] = c
            self._touch()
        return self

    def _subscr_range(self, index):
        """``mp_seq_get_fast_slice_indexes`` / ``mp_get_index`` over pixels (JPEG: over bytes)."""
        n = self._pix.size if self._fmt == _kinds.JPEG else self.width() * self.height()
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise OSError("only slices with step=1 (aka None) are supported")
            return range(*index.indices(n))
        i = _args.to_int(index)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("image index out of range")
        return i

    def _subscr_get(self, i: int):
        if self._fmt == _kinds.JPEG:
            return int(self._pix[i])
        y, x = divmod(i, self.width())
        if self._fmt == RGB565:
            return tuple(int(v) for v in _color.rgb565_to_888(self._pix[y, x]))
        return int(self._pix[y, x])

    def _subscr_value(self, value):
        if self._fmt == RGB565:
            r, g, b = (_args.to_int(v) for v in _args.fixed_array(value, 3))
            return int(_color.rgb888_to_565(np.array([r & 0xFF, g & 0xFF, b & 0xFF], np.uint8)))
        v = _args.to_int(value)
        return v & 1 if self._fmt == _kinds.BINARY else v & 0xFF

    def __getitem__(self, index):
        """``img[i]``: pixel ``i`` in row-major order ((r, g, b) / gray / bit / JPEG byte);
        ``img[a:b]`` a tuple of them."""
        where = self._subscr_range(index)
        if isinstance(where, range):
            return tuple(self._subscr_get(i) for i in where)
        return self._subscr_get(where)

    def __setitem__(self, index, value):
        where = self._subscr_range(index)
        if isinstance(where, range):
            if isinstance(value, list):
                if len(value) != len(where):
                    raise OSError("cannot grow or shrink image")
                values = [self._subscr_value(v) for v in value]
            else:
                values = [self._subscr_value(value)] * len(where)
        else:
            where, values = [where], [self._subscr_value(value)]
        flat = self._pix.reshape(-1)
        for i, v in zip(where, values):
            flat[i] = v
        self._touch()

    def clear(self):
        """Zero the pixels (black). AI buffer untouched (stale)."""
        self._pix[...] = 0
        self._touch()
        return self

    # ------------------------------------------------------------------ copies
    def _copy_int(self, args, kwargs, crop: bool):
        rest = args
        x, y, w, h = _args.roi(self.width(), self.height(), _args.pick(rest, 0, kwargs, "roi", None))
        xs = _F(_args.to_float(_args.pick(rest, 1, kwargs, "x_scale", 1.0)))
        if not xs >= 0:
            raise OSError("Error: 0.0 <= x_scale!")
        ys = _F(_args.to_float(_args.pick(rest, 2, kwargs, "y_scale", 1.0)))
        if not ys >= 0:
            raise OSError("Error: 0.0 <= y_scale!")
        target = _args.pick(rest, 3, kwargs, "copy" if crop else "copy_to_fb", None)
        ow = int(np.floor(_F(w) * xs))
        if ow < 1:
            raise OSError("Output image width is 0!")
        oh = int(np.floor(_F(h) * ys))
        if oh < 1:
            raise OSError("Output image height is 0!")
        over_x = _F(1.0 / float(xs))  # IM_DIV(1.0, x_scale): double division stored in a float
        over_y = _F(1.0) / ys
        sx = (np.arange(ow, dtype=_F) * over_x).astype(np.int64) + x
        sy = (np.arange(oh, dtype=_F) * over_y).astype(np.int64) + y
        pix = pick_grid(self._pix, sy, sx)
        fmt = self._fmt
        nbytes = pix.nbytes

        to_fb = False
        other = self if crop else None
        if target is not None:
            if isinstance(target, (bool, int)):
                if not crop:
                    to_fb = bool(target)
                elif target:
                    other = None
            elif isinstance(target, BasicMixin):
                other = target
            else:
                raise TypeError("Image expected")
        if to_fb:
            from .. import ide_events

            ide_events.fb_update_jpeg_buffer()  # before the frame buffer is overwritten, as the firmware
            fb = _main_frame()
            fb._replace(fmt, pix, keep_ai=False)
            return fb._alias()
        if other is not None:
            if nbytes > other.size():
                raise OSError("The new image won't fit in the target frame buffer!")
            other._replace(fmt, pix, keep_ai=False)
            return other._alias() if other is not self else self
        return type(self)._wrap(fmt, pix)

    def copy(self, *args, **kwargs):
        """New image (nearest scaling ``int(dst * (1/scale)) + roi offset``); no AI buffer."""
        return self._copy_int(args, kwargs, crop=False)

    def crop(self, *args, **kwargs):
        """Like ``copy`` but in place by default (``copy=True`` -> new image, ``copy=img`` -> into img)."""
        return self._copy_int(args, kwargs, crop=True)

    def cut(self, x, y, w, h):
        """New w x h image copied from (x, y) (py_image_cut); no AI buffer.

        The firmware copies rows ``y .. min(y + h, H) - 1`` and columns ``x .. min(x + w, W) - 1``
        by flat index ``row * W + col``: a negative ``x`` reads the end of the previous row, and
        whatever is not copied stays as allocated (zero). Reads before the start of the buffer
        (negative rows) are out of bounds on the device; they give 0 here.
        """
        x, y, w, h = (_args.to_int(v) for v in (x, y, w, h))
        fmt = self._fmt
        if w <= 0 or h <= 0:
            raise OSError("Output image width is 0!" if w <= 0 else "Output image height is 0!")
        out = _alloc(fmt, w, h)
        W, H = self.width(), self.height()
        y1, x1 = min(y + h, H), min(x + w, W)
        if y1 > y and x1 > x and x >= 0 and y >= 0:
            out[0:y1 - y, 0:x1 - x] = self._pix[y:y1, x:x1]  # inside the image: rows of the buffer
        elif y1 > y and x1 > x:
            rows = np.arange(y, y1)[:, None]
            cols = np.arange(x, x1)[None, :]
            idx = rows * W + cols
            flat = self._pix.reshape(-1)
            ok = (idx >= 0) & (idx < flat.size)
            block = np.where(ok, flat[np.clip(idx, 0, flat.size - 1)], 0)
            out[0:y1 - y, 0:x1 - x] = block
        return type(self)._wrap(fmt, out)

    def resize(self, *args, **kwargs):
        """``resize(w, h)``: new image with the K210 firmware's resampling (see ``_resize``); no AI buffer.

        ``MP_DEFINE_CONST_FUN_OBJ_3`` in py_image.c: exactly two positional arguments, no keywords,
        with MicroPython's messages for anything else.
        """
        if kwargs:
            raise TypeError("function doesn't take keyword arguments")
        if len(args) != 2:
            raise TypeError(f"function takes 3 positional arguments but {len(args) + 1} were given")
        w, h = _args.to_int(args[0]), _args.to_int(args[1])
        if w <= 0 or h <= 0:
            raise MemoryError(f"memory allocation failed, allocating {max(w * h, 0)} bytes")
        heap.check_image_buffer(w, h, 2 if self._fmt == RGB565 else 1)  # py_image_resize's xalloc(w*h*bpp)
        if self._fmt == RGB565:
            return type(self)._wrap(RGB565, _resize.resize_rgb565(self._pix, w, h))
        return type(self)._wrap(GRAYSCALE, _resize.resize_gray(self._pix, w, h))

    # ------------------------------------------------------------------ formats
    def _convert(self, fmt: int, convert, args, kwargs):
        """``to_grayscale``/``to_rgb565``: in place keeps the AI pointer (contents now stale); ``copy``
        gives a new image whose fresh AI buffer is never filled (zeros), as on the device."""
        copy = bool(_args.to_int(_args.pick(args, 0, kwargs, "copy", False)))
        if fmt == RGB565 and self._fmt == GRAYSCALE and not copy:
            raise OSError("Can't convert to rgb565 in place!")  # 1 byte per pixel cannot grow in place
        pix = self._pix.copy() if self._fmt == fmt else convert(self._pix)
        if copy:
            return type(self)._wrap(fmt, pix, np.zeros((3,) + pix.shape, np.uint8))
        if self._fmt != fmt:
            self._replace(fmt, pix, keep_ai=True)
        return self._alias()

    def to_grayscale(self, *args, **kwargs):
        """Gray via §2.4. In place (AI pointer kept, contents stale) unless ``copy`` (fresh zero AI)."""
        return self._convert(GRAYSCALE, _color.rgb565_to_gray, args, kwargs)

    def to_rgb565(self, *args, **kwargs):
        """RGB565 (gray expanded R=G=B through the 8->5/6 tables); in place unless ``copy``."""
        return self._convert(RGB565, _color.gray_to_rgb565, args, kwargs)

    # ------------------------------------------------------------------ simple filters
