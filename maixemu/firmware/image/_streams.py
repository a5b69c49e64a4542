"""``image.ImageWriter`` / ``image.ImageReader``: MaixPy's image streams, as far as they work on the board.

``ImageWriter``/``ImageReader`` open their file and write/skip the 16-byte ``OMV IMG STR V1.0``
header, but every later call of the MaixPy port hands the *address* of the object's file field to
the file layer (``&self->fp`` where OpenMV had an embedded ``FIL``): ``size()`` returns ``EIO`` (5)
and ``add_frame``/``next_frame``/``close`` dereference garbage and crash the board. The emulator
returns 5 and raises :class:`DeviceCrash` for the others.
"""

from __future__ import annotations

from ._core import ImageBase
from ._imageio import DeviceCrash, _path_str, open_device_file

_STREAM_HEADER = b"OMV IMG STR V1.0"
_EIO = 5


def _crash(what: str) -> DeviceCrash:
    return DeviceCrash(
        f"image.{what}: in MaixPy v0.6.2/v0.6.3 this call passes the address of the object's file "
        "field to the file layer (py_image.c `&self->fp`) and the board crashes; it cannot work on the "
        "device (write frames with img.save() or a JPEG per file instead)")


class ImageWriter:
    """``image.ImageWriter(path)``: creates the file with the stream header (see module docstring)."""

    def __init__(self, path):
        with open_device_file(_path_str(path), "wb") as fp:
            fp.write(_STREAM_HEADER)

    def size(self) -> int:
        return _EIO

    def add_frame(self, img):
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


__all__ = ["ImageReader", "ImageWriter"]
