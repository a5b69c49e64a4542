"""The ``image.Image`` object: pixel buffer + separate AI buffer, as on the K210 (maixpy-api.md §0).

Storage
-------
* ``RGB565``: numpy ``uint16`` (H, W) holding the **byte-swapped** raw values exactly as the device
  memory reads little-endian (``lcd.RED == 0x00F8`` is stored as 0x00F8).
* ``GRAYSCALE``: numpy ``uint8`` (H, W).
* AI buffer (what the KPU reads): ``uint8`` (3, H, W) planar RGB888 or (1, H, W) gray, or ``None``.

The arrays live in a small :class:`_Buffer` shared by every Python object that aliases the same
device memory — ``sensor.snapshot()`` hands out new objects pointing at one frame buffer, so an old
reference changes when the next frame arrives. Generation counters on the buffer let the KPU module
detect stale AI memory (``--ai-memory warn|strict``): every pixel write bumps ``_pix_gen``;
``pix_to_ai`` (and snapshot filling) set ``_ai_gen = _pix_gen``. For a grayscale snapshot the AI
plane *is* the pixel memory (a numpy view), so it can never be stale.

Internal hooks for sensor / lcd / KPU (underscore names, not MaixPy API):
``Image._from_rgb888``, ``Image._from_gray_view``, ``img._load_frame``, ``img._rgb888``, ``img._ai_array``,
``img._ai_is_stale``, ``img._alias``, ``image._main_frame``.
"""

from __future__ import annotations

import os

import numpy as np

from .. import pixformat as _pf
from . import _color

RGB565 = _pf.RGB565
GRAYSCALE = _pf.GRAYSCALE

_FORMATS = (RGB565, GRAYSCALE)


class _Buffer:
    """One piece of device image memory: pixels, AI buffer, format and generation counters."""

    __slots__ = ("fmt", "pix", "ai", "pix_gen", "ai_gen", "ai_shared", "dims")

    def __init__(self, fmt: int, pix: np.ndarray, ai: np.ndarray | None = None,
                 dims: tuple[int, int] | None = None):
        self.fmt = fmt
        self.pix = pix  # JPEG images: the 1-D uint8 bytes, with ``dims`` = (w, h)
        self.ai = ai
        self.pix_gen = 0
        self.ai_gen = 0
        self.ai_shared = False
        self.dims = dims


def _alloc(fmt: int, w: int, h: int) -> np.ndarray:
    """A new image buffer, or the firmware's ``xalloc`` MemoryError when the board could not hold it
    (checked before the PC allocates: ``img.cut(0, 0, 100000, 100000)`` must not cost 20 GB)."""
    from ..heap import check_image_buffer

    dtype = np.uint16 if fmt == RGB565 else np.uint8
    check_image_buffer(w, h, np.dtype(dtype).itemsize)
    return np.zeros((h, w), dtype=dtype)


def _storage_format(fmt: int) -> int:
    """Formats the emulator stores: YUV422 frames are shown/stored as RGB565 (as the display treats them)."""
    if fmt in (RGB565, _pf.YUV422):
        return RGB565
    if fmt == GRAYSCALE:
        return GRAYSCALE
    raise OSError("Image format is not supported!")


class ImageBase:
    """Storage, constructors, internal hooks and format basics; the methods live in mixins."""

    # ------------------------------------------------------------------ construction
    def __init__(self, path=None, *args, copy_to_fb=False, size=None, from_bytes=False, **kwargs):
        """``Image()`` 320x240 black RGB565; ``Image(size=(w,h))``; ``Image(path)``; ``Image(bytes,
        from_bytes=True)``; ``Image(file_object)``; ``copy_to_fb=True`` into the main frame buffer.

        As ``py_image_load_image``: a second positional argument is read as ``copy_to_fb``,
        ``from_bytes`` *and* ``size`` (so it is always a TypeError); ``size`` given with a source
        makes a blank image and ignores the source. Unknown keywords are ignored.

        Why no AI buffer: on the device only the camera (and ``pix_to_ai``) fill it; a loaded or
        allocated image has ``pix_ai == NULL`` and ``kpu.forward`` refuses it.
        """
        from . import _args

        if args:  # py_helper_keyword_int(..., 1, copy_to_fb) then keyword_xy(..., 1, size)
            _args.to_int(args[0])
            _args.fixed_array(args[0], 2)
        copy_to_fb = _args.to_int(copy_to_fb) > 0
        from_bytes = _args.to_int(from_bytes) > 0
        if copy_to_fb:  # the firmware hands the IDE the old frame buffer before it is overwritten
            from .. import ide_events

            ide_events.fb_update_jpeg_buffer()
        xy = (-1, -1) if size is None else tuple(_args.to_int(v) for v in _args.fixed_array(size, 2))
        if path is not None and xy[0] <= 0:
            self._buf = _Buffer(*_load_source(path, from_bytes))
            if copy_to_fb:
                fb = _main_frame()
                fb._buf.fmt, fb._buf.pix, fb._buf.dims = self._buf.fmt, self._buf.pix, self._buf.dims
                fb._buf.ai, fb._buf.ai_shared = None, False
                fb._touch()
                self._buf = fb._buf
            return
        w, h = 320, 240  # CONFIG_LCD_DEFAULT_WIDTH/HEIGHT
        if xy[0] > 0 and xy[1] > 0:  # otherwise the firmware silently keeps 320x240
            w, h = xy
        if not copy_to_fb:
            from .. import heap

            heap.check_image_buffer(w, h, 2)  # xalloc(w * h * 2), as the firmware allocates it
        if copy_to_fb:
            fb = _main_frame()
            if fb.width() != w or fb.height() != h or fb._fmt != RGB565:
                fb._buf.fmt = RGB565
                fb._buf.pix = _alloc(RGB565, w, h)
                fb._buf.ai = None
                fb._buf.ai_shared = False
                fb._buf.dims = None
                fb._touch()
            self._buf = fb._buf
            return
        self._buf = _Buffer(RGB565, _alloc(RGB565, w, h))

    @classmethod
    def _wrap(cls, fmt: int, pix: np.ndarray, ai: np.ndarray | None = None):
        """A new image around existing arrays (no copy); AI generation matches when ``ai`` given."""
        obj = cls.__new__(cls)
        obj._buf = _Buffer(fmt, pix, ai)
        return obj

    @classmethod
    def _from_rgb888(cls, rgb: np.ndarray, pixformat: int = RGB565):
        """New image from an (H, W, 3) uint8 RGB array (sensor / file loading); no AI buffer.

        RGB565 packs through the firmware's 8->5/6 rounding tables; GRAYSCALE applies the §2.4 luma
        formula to the 8-bit RGB directly (a camera in grayscale mode delivers luminance, not a
        re-quantised RGB565 frame).
        """
        fmt = _storage_format(pixformat)
        return cls._wrap(fmt, _convert_rgb888(np.asarray(rgb), fmt))

    @classmethod
    def _from_gray_view(cls, plane: np.ndarray):
        """Grayscale image whose pixels **are** ``plane`` (H, W) uint8 — no copy, no AI buffer.

        ``kpu.fmap(fmap, ch)`` uses it: on the device the image header points into the feature map.
        """
        plane = np.asarray(plane)
        if plane.ndim != 2 or plane.dtype != np.uint8:
            raise ValueError(f"expected an (H, W) uint8 plane, got {plane.shape} {plane.dtype}")
        return cls._wrap(GRAYSCALE, plane)

    def _alias(self):
        """Another Python object for the same device memory (what each ``snapshot()`` returns)."""
        obj = type(self).__new__(type(self))
        obj._buf = self._buf
        return obj

    # ------------------------------------------------------------------ internal hooks
    def _load_frame(self, rgb888: np.ndarray, pixformat: int = RGB565, fill_ai: bool = True) -> None:
        """Put a new camera frame into this image's memory **in place** (all aliases see it).

        ``fill_ai``: fill the AI buffer as the DVP does — RGB565: planar table expansion of the new
        pixels (so ``pix_to_ai()`` on an unmodified snapshot is a no-op); GRAYSCALE: the AI plane
        becomes a view of the pixels. With ``fill_ai=False`` the AI memory is left as it was
        (dropped if its shape no longer fits).
        """
        fmt = _storage_format(pixformat)
        rgb888 = np.asarray(rgb888)
        new = _convert_rgb888(rgb888, fmt)
        b = self._buf
        if b.fmt == fmt and b.pix.shape == new.shape:
            b.pix[...] = new
        else:
            b.pix = new
            b.fmt = fmt
            if b.ai is not None and (b.ai.shape[1:] != new.shape or b.ai_shared):
                b.ai = None
            b.ai_shared = False
        b.pix_gen += 1
        if not fill_ai:
            if b.ai_shared:
                b.ai_gen = b.pix_gen
            return
        if fmt == GRAYSCALE:
            b.ai = b.pix[np.newaxis]
            b.ai_shared = True
        else:
            planes = _color.rgb565_to_planes(b.pix)
            if b.ai is not None and not b.ai_shared and b.ai.shape == planes.shape:
                b.ai[...] = planes
            else:
                b.ai = planes
            b.ai_shared = False
        b.ai_gen = b.pix_gen

    def _rgb888(self) -> np.ndarray:
        """(H, W, 3) uint8 RGB of the pixel buffer for the display (5/6->8 tables; gray replicated)."""
        b = self._buf
        if b.fmt == GRAYSCALE:
            return np.repeat(b.pix[:, :, np.newaxis], 3, axis=2)
        return _color.rgb565_to_888(b.pix)

    def _ai_array(self) -> np.ndarray | None:
        """The AI buffer as (C, H, W) uint8, or None. Grayscale images return plane 0 only (C=1).

        Returned without copying: this is the memory the KPU reads.
        """
        ai = self._buf.ai
        if ai is None:
            return None
        if self._buf.fmt == GRAYSCALE and ai.shape[0] != 1:
            return ai[:1]
        return ai

    def _ai_is_stale(self) -> bool:
        """True if the pixels were written after the AI buffer was last filled (KPU sees old data)."""
        b = self._buf
        return b.ai is not None and not b.ai_shared and b.ai_gen != b.pix_gen

    def _touch(self) -> None:
        """Record a pixel write (every method that changes pixels calls this once)."""
        b = self._buf
        b.pix_gen += 1
        if b.ai_shared:
            b.ai_gen = b.pix_gen

    def _replace(self, fmt: int, pix: np.ndarray, *, keep_ai: bool) -> None:
        """Swap in new pixel memory (in-place crop / format change). ``keep_ai``: pointer kept, stale."""
        b = self._buf
        if b.ai_shared:
            # The old AI plane was the old pixel memory: it keeps the old contents.
            assert b.ai is not None  # (ai_shared: the AI plane is the pixel memory)
            b.ai = b.ai.copy() if keep_ai else None
            b.ai_shared = False
        if not keep_ai:
            b.ai = None
        b.fmt = fmt
        b.pix = pix
        self._touch()

    # generation counters and arrays, read through the shared buffer
    @property
    def _pix(self) -> np.ndarray:
        return self._buf.pix

    @property
    def _ai(self) -> np.ndarray | None:
        return self._buf.ai

    @property
    def _fmt(self) -> int:
        return self._buf.fmt

    @property
    def _pix_gen(self) -> int:
        return self._buf.pix_gen

    @property
    def _ai_gen(self) -> int:
        return self._buf.ai_gen

    # ------------------------------------------------------------------ basics
    def width(self) -> int:
        b = self._buf
        if b.fmt == _pf.JPEG:
            assert b.dims is not None  # (compressed pixels keep the picture's size beside them)
            return int(b.dims[0])
        return int(b.pix.shape[1])

    def height(self) -> int:
        b = self._buf
        if b.fmt == _pf.JPEG:
            assert b.dims is not None  # (compressed pixels keep the picture's size beside them)
            return int(b.dims[1])
        return int(b.pix.shape[0])

    def format(self) -> int | None:
        """The pixel format; None for a BINARY image (py_image.c: ``return mp_const_none; // TODO``)."""
        return None if self._buf.fmt == _pf.BINARY else self._buf.fmt

    def size(self) -> int:
        """``image_size()``: w*h*2 (RGB565), w*h (gray), 4 bytes per 32 pixels of a row (bitmap),
        the byte count of a JPEG image."""
        from . import _kinds

        return _kinds.memory_size(self._buf.fmt, self.width(), self.height(), int(self._buf.pix.nbytes))

    def to_bytes(self) -> bytearray:
        """The pixel memory as a ``bytearray`` (a copy here; the firmware's aliases the image).

        As in the firmware its length is w*h*2 / w*h / the JPEG size — and for a BINARY image
        ``((w + 31) // 32) * h``, a quarter of the bitmap (the firmware counts words as bytes).
        """
        from . import _kinds

        data = _kinds.memory_bytes(self)
        if self._buf.fmt == _pf.BINARY:
            data = data[: _kinds.row_words(self.width()) * self.height()]
        return bytearray(data)

    def __len__(self) -> int:
        return self.width() * self.height()

    def __repr__(self) -> str:
        from . import _kinds

        b, w, h = self._buf, self.width(), self.height()
        if b.fmt == _pf.BINARY:  # the firmware prints the word count as the size
            return f'{{"w":{w}, "h":{h}, "type"="binary", "size":{_kinds.row_words(w) * h}}}'
        if b.fmt == _pf.JPEG:
            if b.pix.size and b.pix[0] == 0xFE and b.pix[-1] == 0xFE:  # compress_for_ide data: printed raw
                return b.pix.tobytes().decode("latin-1")
            return f'{{"w":{w}, "h":{h}, "type"="jpeg", "size":{b.pix.size}}}'
        fmt = _pf.NAMES.get(b.fmt, str(b.fmt))
        return f'{{"w":{w}, "h":{h}, "type"="{fmt.lower()}", "size":{self.size()}}}'

    # ------------------------------------------------------------------ AI buffer
    def pix_to_ai(self):
        """(Re)compute the AI buffer from the current pixels (§2.3); allocated on first use.

        An existing buffer (e.g. a snapshot's camera AI frame) is overwritten in place.
        """
        b = self._buf
        if b.fmt == RGB565:
            planes = _color.rgb565_to_planes(b.pix)
            if b.ai is not None and not b.ai_shared and b.ai.shape == planes.shape:
                b.ai[...] = planes
            else:
                b.ai = planes
                b.ai_shared = False
        elif b.fmt == GRAYSCALE:
            if not b.ai_shared:
                if b.ai is not None and b.ai.shape[1:] == b.pix.shape:
                    b.ai[0] = b.pix
                else:
                    b.ai = b.pix[np.newaxis].copy()
        else:  # pragma: no cover - only RGB565/GRAYSCALE images exist in the emulator
            print("only support grayscale now\r")
            return None
        b.ai_gen = b.pix_gen
        return None

    def ai_to_pix(self):
        """Pixels recomputed from the AI buffer (8->5/6 tables; gray copy); nothing if there is none."""
        b = self._buf
        if b.ai is None:
            return None
        if b.fmt == RGB565:
            if b.ai.shape[0] >= 3:
                b.pix[...] = _color.planes_to_rgb565(b.ai[:3])
            else:  # a single plane behind an RGB565 header: expand as gray
                b.pix[...] = _color.gray_to_rgb565(b.ai[0])
        else:
            if not b.ai_shared:
                b.pix[...] = b.ai[0]
        b.pix_gen += 1
        b.ai_gen = b.pix_gen
        return None


# ---------------------------------------------------------------------- helpers
def _convert_rgb888(rgb: np.ndarray, fmt: int) -> np.ndarray:
    if rgb.ndim == 2:
        rgb = np.repeat(rgb[:, :, np.newaxis], 3, axis=2)
    if rgb.ndim != 3 or rgb.shape[2] < 3:
        raise ValueError(f"expected an (H, W, 3) RGB array, got shape {rgb.shape}")
    rgb = np.ascontiguousarray(rgb[:, :, :3], dtype=np.uint8)
    if fmt == GRAYSCALE:
        return _color.rgb888_to_gray(rgb)
    return _color.rgb888_to_565(rgb)


def _load_source(source, from_bytes: bool) -> tuple[int, np.ndarray, None, tuple[int, int] | None]:
    """``imlib_load_image`` of a path, of bytes (``from_bytes``) or of a file object (see _imageio)."""
    from . import _imageio

    if isinstance(source, (str, bytes)):  # mp_obj_is_str_or_bytes (a bytearray is not)
        if from_bytes:
            data = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else bytes(source)
            out = _imageio.load_bytes(data)
        else:
            path = source.decode("utf-8", "surrogateescape") if isinstance(source, bytes) else source
            out = _load_path(path)
    elif isinstance(source, os.PathLike):
        out = _load_path(os.fspath(source))
    else:
        out = _imageio.load_file_object(source)
    return out.fmt, out.pix, None, out.dims


def _load_path(path: str):
    """A device path's image as the firmware decodes it (``_imageio.load_path``)."""
    from . import _imageio

    return _imageio.load_path(path)


def _main_frame():
    """The board's main frame buffer image (``sensor.snapshot()`` memory, ``Image(copy_to_fb=True)``).

    Sensor code fills it with ``_main_frame()._load_frame(...)`` and returns ``_main_frame()._alias()``.
    It is part of the board's state (``current().framebuffer``): a new board starts without one.
    """
    from .. import state

    board = state.current()
    if board.framebuffer is None:
        from . import Image  # the full class with all mixins

        board.framebuffer = Image._wrap(RGB565, _alloc(RGB565, 320, 240))
    return board.framebuffer


def _host_path(path: str):
    """The host file holding what the device sees at ``path`` (for reading)."""
    from ...host import storage

    return storage.resolve(path)


def _open_for_write(path: str):
    """A binary file for writing the device file ``path``: into the run's layer (or the folder the user
    mounted for writing), never over a file that existed before the run; ``ENOSPC`` when full."""
    from ._imageio import open_device_file

    return open_device_file(path, "wb")
