"""BINARY (bitmap) and JPEG images, and which methods accept which kind of image.

Storage in maixemu (see ``_core``): a BINARY image keeps one uint8 0/1 per pixel (H, W); its
device memory — what ``size()``, ``to_bytes()``, ``ImageWriter`` and the JPEG encoder see — is the
firmware's layout: each row ``(w + 31) // 32`` little-endian uint32 words, pixel ``x`` at bit
``x % 32`` of word ``x // 32`` (``IMAGE_GET_BINARY_PIXEL``). A JPEG image (``compress()``,
``compressed()``) keeps its bytes (1-D uint8) and its width/height; ``format()`` is ``JPEG``.

Which image a method accepts is fixed by the helper its C function calls first (py_image.c
d8901fd): ``py_helper_arg_to_image_mutable`` (BINARY, GRAYSCALE, RGB565), ``..._mutable_bayer``
(the same plus BAYER), ``..._grayscale``, ``..._color`` (RGB565 only) — all failing with
``OSError("Image format is not supported!")`` — or none (``py_image_cobj``: the method itself
decides, and the few that only handle GRAYSCALE/RGB565 print a line and return None).
:func:`install_guards` wraps every method of the table so the emulator refuses exactly what the
firmware refuses, and raises ``NotImplementedError`` for a BINARY image in a method whose
C function has no BINARY case and reads the bitmap's memory as another pixel type
(:data:`BINARY_UNDEFINED`); every other method computes on the bitmap what the firmware does — most
C functions run their gray code on the 0/1 values with ``COLOR_BINARY_MAX = 1``, the finders copy
the bitmap out as 0/255 gray (``COLOR_BINARY_TO_GRAYSCALE``).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import pixformat as _pf

BINARY, GRAYSCALE, RGB565, JPEG = _pf.BINARY, _pf.GRAYSCALE, _pf.RGB565, _pf.JPEG

NOT_SUPPORTED = "Image format is not supported!"

_MUTABLE = "mutable"  # py_helper_arg_to_image_mutable[_bayer]: BINARY, GRAYSCALE, RGB565 (BAYER)
_GRAY = "grayscale"  # py_helper_arg_to_image_grayscale
_COLOR = "color"  # py_helper_arg_to_image_color
_ANY = "any"  # py_image_cobj: the method checks (or not) itself

#: The first image helper of each method's C function (py_image.c d8901fd).
ACCEPTS: dict[str, str] = {
    **dict.fromkeys((
        "add", "and", "assign", "b_and", "b_nand", "b_nor", "b_or", "b_xnor", "b_xor", "bilateral",
        "binary", "black_hat", "blend", "blur", "cartoon", "clear", "close", "compress",
        "compress_for_ide", "compressed", "compressed_for_ide", "conv3", "copy", "crop", "difference",
        "dilate", "div", "draw_arrow", "draw_circle", "draw_cross", "draw_ellipse", "draw_font",
        "draw_image", "draw_keypoints", "draw_line", "draw_rectangle", "draw_string", "dump_roi",
        "erode", "find_apriltags", "find_barcodes", "find_blobs", "find_circles", "find_datamatrices",
        "find_displacement", "find_domain", "find_features", "find_keypoints", "find_line_segments",
        "find_lines", "find_qrcodes", "find_rects", "flood_fill", "gamma_corr", "gaussian",
        "gaussian_blur", "get_hist", "get_histogram", "get_pixel", "get_regression", "get_similarity",
        "get_statistics", "get_stats", "histeq", "histogram", "invert", "laplacian", "lens_corr",
        "linpolar", "logpolar", "max", "mean", "mean_pool", "mean_pooled", "median", "midpoint",
        "midpoint_pool", "midpoint_pooled", "min", "mode", "morph", "mul", "nand", "negate", "nor",
        "open", "or", "replace", "rotation_corr", "selective_search", "set", "set_pixel",
        "statistics", "sub", "to_bitmap", "to_grayscale", "to_rainbow", "to_rgb565", "top_hat",
        "xnor", "xor"), _MUTABLE),
    **dict.fromkeys(("find_edges", "find_eye", "find_hog", "find_lbp", "find_template"), _GRAY),
    **dict.fromkeys(("chrominvar", "illuminvar", "remove_shadows"), _COLOR),
    **dict.fromkeys(("ai_to_pix", "cut", "format", "height", "pix_to_ai", "resize", "save", "size",
                     "strech_char", "stretch", "to_bytes", "width"), _ANY),
}

#: ``py_image_cobj`` methods that only handle GRAYSCALE/RGB565: what they print for other images
#: before returning None (``mp_printf`` lines of py_image.c).
OTHER_KIND_PRINTS: dict[str, str] = {
    "cut": "pixel format not support!\r",
    "resize": "only support grayscale, 565 zoom out now\r",
    "pix_to_ai": "only support grayscale now\r",
    "ai_to_pix": "only support grayscale now\r",
    "strech_char": "only support grayscale now\r",
    "stretch": "only support grayscale now\r",
}

#: ``_MUTABLE`` methods whose C function has no BINARY case and, given a bitmap, reads or writes its
#: memory as another pixel type — past the end of the ``(w + 31) // 32 * 4 * h`` bytes a bitmap owns —
#: so the firmware's answer depends on whatever lies beyond. They raise ``NotImplementedError`` with
#: the reason (every other ``_MUTABLE`` method computes what the firmware computes on a bitmap).
BINARY_UNDEFINED: dict[str, str] = {
    **dict.fromkeys(("mean_pool", "mean_pooled", "midpoint_pool", "midpoint_pooled"),
                    "pool.c has no BINARY case: the bitmap's memory is read as RGB565 pixels (w*h*2 bytes) "
                    "and the result written as RGB565 into a bitmap-sized buffer"),
    "lens_corr": "imlib_lens_corr's BINARY case copies only (w+31)/32*h bytes of the bitmap (a quarter of it) "
                 "and pulls the other source pixels from uninitialised frame-buffer memory",
    "find_features": "the Haar detector's integral image reads the bitmap's memory as w*h gray bytes",
    "find_keypoints": "orb.c reads pixels with IM_TO_GS_PIXEL, which takes a bitmap for RGB565 (w*h*2 bytes)",
    "find_displacement": "fft2d_run reads a non-gray image as RGB565, so a bitmap's memory is read as w*h*2 bytes",
    "selective_search": "selective_search.c reads every image as RGB565 (w*h*2 bytes of a bitmap's memory)",
    "conv3": "conv.c writes the KPU's result back as RGB565 (w*h*2 bytes) over the bitmap's memory",
}


# ---------------------------------------------------------------------- bitmap layout
def row_words(w: int) -> int:
    """``IMAGE_BINARY_LINE_LEN``: 32-bit words per bitmap row."""
    return (w + 31) >> 5


def pack_bits(bits: np.ndarray) -> bytes:
    """(H, W) 0/1 -> the firmware's bitmap memory (rows of little-endian uint32 words)."""
    h, w = bits.shape
    words = row_words(w)
    full = np.zeros((h, words * 32), np.uint8)
    full[:, :w] = bits != 0
    # bit x % 32 of word x // 32: within each little-endian word byte k holds bits 8k..8k+7, LSB first
    return np.packbits(full.reshape(h, words * 4, 8), axis=2, bitorder="little").tobytes()


def unpack_bits(data: bytes, w: int, h: int) -> np.ndarray:
    """The inverse of :func:`pack_bits` (missing bytes read as 0)."""
    words = row_words(w)
    need = words * 4 * h
    buf = np.zeros(need, np.uint8)
    src = np.frombuffer(bytes(data[:need]), np.uint8)
    buf[: src.size] = src
    bits = np.unpackbits(buf.reshape(h, words * 4, 1), axis=2, bitorder="little").reshape(h, words * 32)
    return np.ascontiguousarray(bits[:, :w])


def memory_size(fmt: int, w: int, h: int, nbytes: int) -> int:
    """``image_size()``: bytes of device memory of an image."""
    if fmt == BINARY:
        return row_words(w) * 4 * h
    if fmt == GRAYSCALE:
        return w * h
    if fmt == RGB565:
        return w * h * 2
    return nbytes  # JPEG: bpp holds the byte count


def memory_bytes(img) -> bytes:
    """The image's device memory as bytes (byte-swapped RGB565 / gray / bitmap words / JPEG)."""
    fmt = img._fmt
    if fmt == BINARY:
        return pack_bits(img._pix)
    if fmt == RGB565:
        return img._pix.astype("<u2").tobytes()
    return img._pix.astype(np.uint8).tobytes()


# ---------------------------------------------------------------------- colour of BINARY pixels
def binary_of_gray(g: np.ndarray) -> np.ndarray:
    """``COLOR_GRAYSCALE_TO_BINARY``: ``g > 127``."""
    return (np.asarray(g) > 127).astype(np.uint8)


def binary_of_rgb565(p: np.ndarray) -> np.ndarray:
    """``COLOR_RGB565_TO_BINARY``: ``Y > -1`` of the YUV table (gray >= 128)."""
    from . import _color, _tables

    return _color.lut16(np.asarray(p, dtype=np.uint16), _tables.binary_table())


# ---------------------------------------------------------------------- guards
def _guard(name: str, func, accepts: str):
    @functools.wraps(func)
    def method(self, *args, **kwargs):
        fmt = self._buf.fmt
        if fmt == RGB565 or fmt == GRAYSCALE:
            if (accepts == _GRAY and fmt != GRAYSCALE) or (accepts == _COLOR and fmt != RGB565):
                raise OSError(NOT_SUPPORTED)
        elif accepts == _ANY:
            if name in OTHER_KIND_PRINTS:
                if name == "ai_to_pix" and self._buf.ai is None:
                    return None
                print(OTHER_KIND_PRINTS[name])
                return None
        elif fmt == BINARY and accepts == _MUTABLE:
            if name in BINARY_UNDEFINED and not (name == "conv3" and self._buf.ai is None):
                raise NotImplementedError(f"image.Image.{name} on a BINARY (bitmap) image is not emulated: "
                                          f"{BINARY_UNDEFINED[name]}")
        else:  # JPEG (or a BINARY image in a grayscale/colour-only method)
            raise OSError(NOT_SUPPORTED)
        return func(self, *args, **kwargs)

    method._kind_guarded = True  # type: ignore[attr-defined]  # a marker on the function (install_guards reads it)
    return method


def install_guards(cls) -> None:
    """Wrap each method of :data:`ACCEPTS` on ``cls`` (once; not-emulated stubs are left alone)."""
    for name, accepts in ACCEPTS.items():
        func = cls.__dict__.get(name) or getattr(cls, name, None)
        if func is None or getattr(func, "_kind_guarded", False) or getattr(func, "_not_emulated", False):
            continue
        setattr(cls, name, _guard(name, func, accepts))
