"""Image files as the firmware reads and writes them (imlib.c ``imlib_load_image``/``imlib_save_image``,
bmp.c, jpeg.c, picojpeg), and ``ImageWriter``/``ImageReader`` (py_image.c).

Loading (``image.Image(path | file object | bytes, from_bytes=True)``) looks at the first two bytes:

* ``BM``: bmp.c — 8-bit (gray), 16-bit (RGB565 bit fields) or 24-bit BMPs, bottom-up or top-down,
  mirrored for a negative width; only the path form (a file object or bytes: ``OSError("Not
  support")``). The reader *reads* but does not enforce the palette, masks, planes and size fields
  (the firmware's ``read_*_expect`` results are ignored); it enforces ``file_size > data offset``,
  non-zero width/height and enough pixel data (``ValueError("file_corrupted_raise!")``), 8/16/24
  bits and compression 0/3 (``OSError("Unsupported format!")``). 24-bit pixels go through the 8->5/6
  rounding tables.
* ``FF D8``: picojpeg (see ``_jpeg_decode``).
* anything else (PNG, PPM/PGM, ...): ``ValueError("format not supported")`` — the firmware's PPM
  reader is compiled out of ``imlib_load_image``.

After a path load the extension is enforced as on the board (``.pgm`` of a colour image:
``OSError("Image is not PGM!")``, ``.ppm`` of a gray one: ``"Image is not PPM!"``, ``.raw``:
``"Image is not BAYER!"``).

Saving (``img.save(path, roi=None, quality=50)``) goes by extension: ``.bmp`` (bmp.c: gray 8-bit with
a gray palette, otherwise 16-bit RGB565 bit fields, top-down, rows padded to 4 bytes, only the
``roi``), ``.jpg``/``.jpeg`` (the firmware encoder on the *whole* image — ``roi`` is ignored — or
the bytes of a JPEG image). Every other extension, ``.ppm``/``.pgm`` included, writes nothing on the
board (those writers are commented out in ``imlib_save_image``); the emulator does the same and says
so once.

``ImageWriter``/``ImageReader`` open their file and write/skip the 16-byte ``OMV IMG STR V1.0``
header, but every later call of the MaixPy port hands the *address* of the object's file field to
the file layer (``&self->fp`` where OpenMV had an embedded ``FIL``): ``size()`` returns ``EIO`` (5)
and ``add_frame``/``next_frame``/``close`` dereference garbage and crash the board. The emulator
returns 5 and raises :class:`DeviceCrash` for the others.
"""

from __future__ import annotations

import errno
import io
import os
import struct

import numpy as np

from .. import notices
from . import _color, _jpeg_decode, _kinds
from ._core import GRAYSCALE, RGB565
from ._host import ImageHost

BINARY, JPEG = _kinds.BINARY, _kinds.JPEG


class DeviceCrash(RuntimeError):
    """A call that crashes the K210 board (hard fault) in this firmware; it cannot work there."""


# ---------------------------------------------------------------------- loading
class Decoded:
    """What a load produced: format, pixels (JPEG images: bytes) and, for JPEG, (w, h)."""

    __slots__ = ("fmt", "pix", "dims")

    def __init__(self, fmt: int, pix: np.ndarray, dims: tuple[int, int] | None = None):
        self.fmt, self.pix, self.dims = fmt, pix, dims


def open_device_file(path: str, mode: str = "rb"):
    """The device file ``path`` opened through the board's storage.

    Reads of a missing file are the device's ``OSError(ENOENT)``. When the storage has its own
    ``open`` (copy-on-write layers), every read and write goes through it, so a run never writes
    over a file that existed before it.
    """
    from ...host import storage

    st = storage.current()
    if hasattr(st, "open"):
        if "r" in mode and hasattr(st, "is_file") and not st.is_file(path):
            raise storage.enoent(path)
        return st.open(path, mode)
    host = st.resolve(path)
    if "r" in mode and not host.is_file():
        raise storage.enoent(path)
    return open(host, mode)


def check_image_buffer(w: int, h: int, bytes_per_pixel: int) -> None:
    """The firmware's ``xalloc`` MemoryError for an image buffer the board could not hold, checked
    from the header before anything is decoded (``maixemu.firmware.heap``)."""
    from .. import heap

    heap.check_image_buffer(w, h, bytes_per_pixel)


def read_device_file(path: str) -> bytes:
    with open_device_file(path, "rb") as fp:
        return fp.read()


def load_path(path: str) -> Decoded:
    """``imlib_load_image`` of a device path (then its extension check)."""
    data = read_device_file(path)
    if data[:2] == b"BM":
        out = read_bmp(data)
    elif data[:2] == b"\xff\xd8":
        out = _load_jpeg(data)
    else:
        raise ValueError("format not supported")
    check_extension(out.fmt, path, loading=True)
    return out


def load_bytes(data: bytes) -> Decoded:
    """``Image(data, from_bytes=True)`` and ``Image(file_object)``: JPEG only."""
    if data[:2] == b"BM":
        raise OSError("Not support")
    if data[:2] == b"\xff\xd8":
        return _load_jpeg(data)
    raise ValueError("format not supported")


def load_file_object(fp) -> Decoded:
    """``Image(stream)``: the stream's bytes from its current position (picojpeg reads it)."""
    read = getattr(fp, "read", None)
    if read is None:
        raise TypeError(f"can't convert {type(fp).__name__} to str")
    data = read()
    if isinstance(data, str):
        data = data.encode("latin-1")
    return load_bytes(bytes(data))


def _load_jpeg(data: bytes) -> Decoded:
    size = _jpeg_decode.geometry(data)
    if size is not None:  # picojpeg_util xallocs the decoded image before decoding it
        check_image_buffer(size[0], size[1], 2 if _jpeg_decode.components(data) != 1 else 1)
    try:
        kind, pix = _jpeg_decode.decode(data)
    except _jpeg_decode.JpegError as e:
        for line in e.messages():
            print(line)
        if e.stage == "init":
            # picojpeg_util returns "no error" with no pixels: the board hands back a 0x0 image
            notices.notice_once(
                "jpeg-init-failed",
                "image.Image: picojpeg could not decode this JPEG (baseline, 1 or 3 components, "
                "4:4:4/4:2:2/4:4:0/4:2:0 only); like the board, the result is an empty 0x0 image. "
                "Re-save it as a baseline JPEG or a BMP.",
            )
            return Decoded(BINARY, np.zeros((0, 0), np.uint8))
        raise OSError(errno.EPERM, "EPERM") from None
    return Decoded(GRAYSCALE if kind == "gray" else RGB565, pix)


def read_bmp(data: bytes) -> Decoded:
    """bmp.c ``bmp_read_geometry`` + ``bmp_read_pixels`` (missing bytes read as 0)."""

    def u32(o: int) -> int:
        return struct.unpack_from("<I", data.ljust(o + 4, b"\0"), o)[0]

    def i32(o: int) -> int:
        return struct.unpack_from("<i", data.ljust(o + 4, b"\0"), o)[0]

    def u16(o: int) -> int:
        return struct.unpack_from("<H", data.ljust(o + 2, b"\0"), o)[0]

    file_size, header_size = u32(2), u32(10)
    if file_size <= header_size:
        raise ValueError("file_corrupted_raise!")
    data_size = (file_size - header_size) & 0xFFFFFFFF
    bmp_w, bmp_h = i32(18), i32(22)
    if bmp_w == 0 or bmp_h == 0:
        raise ValueError("file_corrupted_raise!")
    w, h = abs(bmp_w), abs(bmp_h)
    bpp, fmt = u16(28), u32(30)
    if bpp not in (8, 16, 24) or fmt not in (0, 3):
        raise OSError("Unsupported format!")
    if (bpp == 8 and fmt != 0) or (bpp == 16 and fmt != 3):
        raise OSError("Unsupported format!")
    row_bytes = ((w * bpp + 31) // 32) * 4
    if data_size < row_bytes * h:
        raise ValueError("file_corrupted_raise!")
    check_image_buffer(w, h, 1 if bpp == 8 else 2)  # bmp_read: xalloc(w * h * bpp)
    body = np.zeros(row_bytes * h, np.uint8)
    src = np.frombuffer(data[header_size:header_size + row_bytes * h], np.uint8)
    body[: src.size] = src
    rows = body.reshape(h, row_bytes)
    if bpp == 8:
        pix = rows[:, :w].copy()
        out_fmt = GRAYSCALE
    elif bpp == 16:
        words = rows.view("<u2")[:, :w].astype(np.uint16)
        pix = ((words >> 8) | (words << 8)).astype(np.uint16)  # IM_SWAP16 -> byte-swapped storage
        out_fmt = RGB565
    else:
        trip = rows[:, : (row_bytes // 3) * 3].reshape(h, -1, 3)[:, :w]
        pix = _color.pack565(_color.T8TO5[trip[..., 2]], _color.T8TO6[trip[..., 1]], _color.T8TO5[trip[..., 0]])
        out_fmt = RGB565
    if bmp_h >= 0:  # bottom-up rows
        pix = pix[::-1]
    if bmp_w < 0:
        pix = pix[:, ::-1]
    return Decoded(out_fmt, np.ascontiguousarray(pix))


def read_ppm(data: bytes) -> Decoded:
    """ppm.c: P2/P5 (gray) and P3/P6 (colour, through the 8->5/6 rounding tables), maxval 255 only."""
    pos = 2
    n = len(data)

    def read_int() -> int:
        nonlocal pos
        value, mode = 0, "white"
        while True:
            c = data[pos] if pos < n else 0
            if mode == "white":
                if c == ord("#"):
                    mode = "comment"
                elif 48 <= c <= 57:
                    value, mode = c - 48, "number"
            elif mode == "comment":
                if c in (10, 13):
                    mode = "white"
            elif 48 <= c <= 57:
                value = value * 10 + c - 48
            else:
                return value  # the delimiter stays for the next read (read_int_c_valid)
            pos += 1
            if pos > n + 1:
                return value

    kind = data[1:2]
    if kind not in (b"2", b"3", b"5", b"6"):
        raise OSError("Unsupported format!")
    w, h = read_int(), read_int()
    if w == 0 or h == 0:
        raise OSError("File corrupted!")
    if read_int() != 255:
        raise OSError("Unsupported format!")
    channels = 1 if kind in (b"2", b"5") else 3
    count = w * h * channels
    if kind in (b"5", b"6"):
        raw = np.zeros(count, np.uint8)
        src = np.frombuffer(data[pos + 1:pos + 1 + count], np.uint8)  # after the maxval's delimiter
        raw[: src.size] = src
    else:
        raw = np.array([read_int() & 0xFF for _ in range(count)], np.uint8)
    if channels == 1:
        return Decoded(GRAYSCALE, raw.reshape(h, w))
    rgb = raw.reshape(h, w, 3)
    return Decoded(RGB565, _color.pack565(_color.T8TO5[rgb[..., 0]], _color.T8TO6[rgb[..., 1]], _color.T8TO5[rgb[..., 2]]))


def read_operand(path: str, img) -> np.ndarray:
    """``imlib_image_operation``'s file operand: a BMP or PPM/PGM of the image's size and format
    (``OSError("Unsupported format!")`` / ``"Images not equal!"``), as stored pixels."""
    data = read_device_file(path)
    if data[:1] == b"P" and data[1:2] in (b"2", b"3", b"5", b"6"):
        out = read_ppm(data)
    elif data[:2] == b"BM":
        out = read_bmp(data)
    else:
        raise OSError("Unsupported format!")
    check_extension(out.fmt, path)
    if out.fmt != img._fmt or out.pix.shape != img._pix.shape:
        raise OSError("Images not equal!")
    return out.pix


# ---------------------------------------------------------------------- extensions
_JPG, _BMP, _PNM, _RAW, _OTHER = "jpg", "bmp", "pnm", "raw", None


def check_extension(fmt: int, path: str, loading: bool = False) -> str | None:
    """``imblib_parse_extension``: the file type of ``path`` for an image of format ``fmt``."""
    low = path.lower()
    if len(path) >= 5 and low.endswith(".jpeg"):
        return _JPG
    if len(path) >= 4:
        if low.endswith(".jpg"):
            return _JPG
        if low.endswith(".bmp"):
            if fmt == JPEG:
                raise OSError("Image is not BMP!")
            return _BMP
        if low.endswith(".ppm"):
            if fmt != RGB565:
                raise OSError("Image is not PPM!")
            return _PNM
        if low.endswith(".pgm"):
            if fmt != GRAYSCALE:
                raise OSError("Image is not PGM!")
            return _PNM
        if low.endswith(".raw"):
            raise OSError("Image is not BAYER!")
    return _OTHER


# ---------------------------------------------------------------------- saving
def save(img, path: str, roi: tuple[int, int, int, int], quality: int) -> None:
    """``imlib_save_image``."""
    kind = check_extension(img._fmt, path)
    if kind == _BMP:
        data = write_bmp(img, roi)
    elif kind == _JPG:
        if img._fmt == JPEG:
            data = img._pix.tobytes()
        else:
            from ._codec import jpeg_of

            data = jpeg_of(img, quality)
    else:
        notices.notice_once(
            f"save-ext:{kind}:{os.path.splitext(path)[1].lower()}",
            f"image.save({path!r}): the firmware writes only .bmp and .jpg/.jpeg files (its PPM/PGM/RAW "
            "writers are compiled out); nothing was written, as on the board",
        )
        return
    with open_device_file(path, "wb") as fp:
        fp.write(data)


def write_bmp(img, roi: tuple[int, int, int, int]) -> bytes:
    """``bmp_write_subimg``: 8-bit gray with a gray palette, else 16-bit RGB565 bit fields."""
    x, y, w, h = roi
    out = io.BytesIO()
    if img._fmt == GRAYSCALE:
        row_bytes = ((w * 8 + 31) // 32) * 4
        data_size = row_bytes * h
        out.write(b"BM" + struct.pack("<IHHI", 14 + 40 + 1024 + data_size, 0, 0, 14 + 40 + 1024))
        out.write(struct.pack("<IiiHHIIiiII", 40, w, -h, 1, 8, 0, data_size, 0, 0, 0, 0))
        out.write(struct.pack("<256I", *[(i << 16) | (i << 8) | i for i in range(256)]))
        rows = np.zeros((h, row_bytes), np.uint8)
        rows[:, :w] = img._pix[y:y + h, x:x + w]
        out.write(rows.tobytes())
        return out.getvalue()
    row_bytes = ((w * 16 + 31) // 32) * 4
    data_size = row_bytes * h
    out.write(b"BM" + struct.pack("<IHHI", 14 + 40 + 12 + data_size, 0, 0, 14 + 40 + 12))
    out.write(struct.pack("<IiiHHIIiiII", 40, w, -h, 1, 16, 3, data_size, 0, 0, 0, 0))
    out.write(struct.pack("<3I", 0x1F << 11, 0x3F << 5, 0x1F))
    raw = _raw565(img)
    rows = np.zeros((h, row_bytes // 2), np.uint16)
    rows[:, :w] = raw[y:y + h, x:x + w]
    out.write(((rows >> 8) | (rows << 8)).astype("<u2").tobytes())  # IM_SWAP16 of the stored value
    return out.getvalue()


def _raw565(img) -> np.ndarray:
    """The image memory read as RGB565 pixels (a bitmap's packed words beyond its size read as 0)."""
    if img._fmt == RGB565:
        return img._pix
    mem = np.frombuffer(_kinds.memory_bytes(img), np.uint8)
    w, h = img.width(), img.height()
    buf = np.zeros(w * h * 2, np.uint8)
    buf[: min(mem.size, buf.size)] = mem[: buf.size]
    return buf.view("<u2").reshape(h, w)


# ---------------------------------------------------------------------- ImageWriter / ImageReader
_STREAM_HEADER = b"OMV IMG STR V1.0"
_EIO = 5


def _crash(what: str) -> DeviceCrash:
    return DeviceCrash(
        f"image.{what}: in MaixPy v0.6.2/v0.6.3 this call passes the address of the object's file "
        "field to the file layer (py_image.c `&self->fp`) and the board crashes; it cannot work on the "
        "device (write frames with img.save() or a JPEG per file instead)")


def _path_str(path) -> str:
    if isinstance(path, (bytes, bytearray)):
        return bytes(path).decode("utf-8", "surrogateescape")
    if not isinstance(path, str):
        raise TypeError(f"can't convert '{type(path).__name__}' object to str implicitly")
    return path


class ImageWriter:
    """``image.ImageWriter(path)``: creates the file with the stream header (see module docstring)."""

    def __init__(self, path):
        with open_device_file(_path_str(path), "wb") as fp:
            fp.write(_STREAM_HEADER)

    def size(self) -> int:
        return _EIO

    def add_frame(self, img):
        from ._core import ImageBase

        if not isinstance(img, ImageBase):
            raise TypeError(f"Can't convert {type(img).__name__} to Image")
        raise _crash("ImageWriter.add_frame")

    def close(self):
        raise _crash("ImageWriter.close")

    def __repr__(self) -> str:
        return f'{{"size":{_EIO}}}'


class ImageReader:
    """``image.ImageReader(path)``: opens the file and reads (without checking) the 16-byte header."""

    def __init__(self, path):
        open_device_file(_path_str(path), "rb").close()

    def size(self) -> int:
        return _EIO

    def next_frame(self, *args, **kwargs):
        raise _crash("ImageReader.next_frame")

    def close(self):
        raise _crash("ImageReader.close")

    def __repr__(self) -> str:
        return f'{{"size":{_EIO}}}'


class ImageIOMixin(ImageHost):
    def save(self, path, *args, **kwargs):
        """Write by extension: ``.bmp`` (``roi``), ``.jpg``/``.jpeg`` (``quality`` 1..100, whole image)."""
        from . import _args

        if not isinstance(path, (str, bytes)):
            raise TypeError(f"can't convert '{type(path).__name__}' object to str implicitly")
        path = _path_str(path)
        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        q = _args.to_int(_args.pick(args, 1, kwargs, "quality", 50))
        if not 1 <= q <= 100:
            raise OSError("Error: 1 <= quality <= 100!")
        save(self, path, roi, q)
        return self
