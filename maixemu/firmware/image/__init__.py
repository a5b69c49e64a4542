"""The MaixPy ``image`` module (what scripts get from ``import image``).

``Image`` keeps RGB565 pixels byte-swapped as on the K210 plus the separate planar RGB888 AI buffer
the KPU reads; see ``_core`` for the storage model and the internal hooks used by sensor, lcd and
KPU, and maixpy-api.md §0/§2 for the device rules reproduced here.

Methods that exist on the device but are not emulated yet raise
``NotImplementedError("image.Image.<name> is not emulated yet")`` — never a silent no-op.

Fidelity notes (where the firmware source, MaixPy v0.6.2/v0.6.3, settles what maixpy-api.md leaves
open or states differently):

* ``fast_roundf``/``fast_floorf`` are ``(int)x`` truncations in this firmware (``fmath.h``), so
  ``draw_string`` glyph sizes, scaled glyph rows/columns, proportional advances, arrow heads and
  ``draw_image`` sampling truncate (``int(8 * 1.9) == 15``) rather than round.
* ``draw_image`` takes the other image's raw pixel values as RGB565 whatever its format (draw.c):
  a grayscale image drawn onto an RGB565 one shows false colours, as on the device.
* Thick rectangle/line/circle borders are centred on the outline (``thickness//2`` outside).
* ``resize`` bilinear: a negative source coordinate truncates to 0 (no wrap-around).
* ``find_blobs`` reports ``w = x2 - x1`` and ``h = y2 - y1``; ``find_lines`` ignores ``y_stride``
  (uses ``x_stride``) and reports theta 89 for horizontal edges — all as in the firmware.
* ``copy``/``crop`` follow v0.6.3 (``crop`` does not exist in v0.6.2).
* Files: only BMP and JPEG load (picojpeg's pixels, not libjpeg's) and only ``.bmp``/``.jpg`` save;
  JPEG output is the firmware's own encoder, byte for byte (``_imageio``, ``_jpeg_encode``,
  ``_jpeg_decode``). BINARY and JPEG images exist, and every method accepts exactly the image
  formats its C function accepts (``_kinds``).
* ``image.font_load(image.UTF8, w, h, src)`` draws Unicode-indexed fonts from flash or a ``.Dzk``
  file with font.c's quirks (``_fonts``).
"""

from __future__ import annotations

import numpy as np

from ..pixformat import BINARY, GRAYSCALE, JPEG, RGB565  # noqa: F401  (re-exported for scripts)
from . import _args, _bitmap, _codec, _colorspace, _features, _flood, _fonts, _imageio, _invariant, _jpeg_encode, _kinds, _polar, _rotation
from ._affine import get_affine_transform, warp_affine_ai  # noqa: F401
from ._basic import BasicMixin
from ._core import ImageBase, _main_frame  # noqa: F401
from ._draw import DrawMixin
from ._extra import Barcode, DataMatrix, ExtraMixin  # noqa: F401
from ._apriltag import AprilTagMixin as _AprilTagMixin
from ._binary import BinaryMixin
from ._features import FeaturesMixin as _FeaturesMixin
from ._filters import FilterMixin
from ._blob import Blob, BlobMixin  # noqa: F401
from ._find import Circle, FindMixin, HaarCascade, Line, QRCode, Rect  # noqa: F401
from ._fonts import font_free, font_load  # noqa: F401
from ._geometry import GeometryMixin
from ._k210 import K210Mixin
from ._lsd import LineSegmentsMixin as _LineSegmentsMixin
from ._mathops import MathOpsMixin
from ._pixels import ChannelHelpers
from ._pool import PoolMixin
from ._qrcode import QRCodeMixin as _QRCodeMixin
from ._rects import RectsMixin as _RectsMixin
from ._regression import RegressionMixin as _RegressionMixin
from ._stats import Histogram, Percentile, Statistics, StatsMixin, Threshold  # noqa: F401
from ._template import TemplateMixin as _TemplateMixin


def _not_emulated(qualname: str):
    def method(*args, **kwargs):
        raise NotImplementedError(f"image.{qualname} is not emulated yet")

    method.__name__ = qualname.rsplit(".", 1)[-1]
    method.__qualname__ = qualname
    method.__doc__ = "Exists on the device; not emulated yet (raises NotImplementedError)."
    # a marker on the function, read by the method-table audit (tests/firmware/test_image_method_table.py)
    method._not_emulated = True  # type: ignore[attr-defined]
    return method


#: Every method of the firmware's image type (MaixPy v0.6.3 ``py_image.c`` locals table). Those the
#: emulator does not implement are installed as NotImplementedError stubs below, so a script gets
#: "not emulated yet" instead of an AttributeError or a silent no-op.
_DEVICE_METHODS = (
    "add", "ai_to_pix", "and", "assign", "b_and", "b_nand", "b_nor", "b_or", "b_xnor", "b_xor",
    "bilateral", "binary", "black_hat", "blend", "blur", "cartoon", "chrominvar", "clear", "close",
    "compress", "compress_for_ide", "compressed", "compressed_for_ide", "conv3", "copy", "crop", "cut",
    "difference", "dilate", "div", "draw_arrow", "draw_circle", "draw_cross", "draw_ellipse",
    "draw_font", "draw_image", "draw_keypoints", "draw_line", "draw_rectangle", "draw_string",
    "dump_roi", "erode", "find_apriltags", "find_barcodes", "find_blobs", "find_circles",
    "find_datamatrices", "find_displacement", "find_domain", "find_edges", "find_eye",
    "find_features", "find_hog", "find_keypoints", "find_lbp", "find_line_segments", "find_lines",
    "find_qrcodes", "find_rects", "find_template", "flood_fill", "format", "gamma_corr", "gaussian",
    "gaussian_blur", "get_hist", "get_histogram", "get_pixel", "get_regression", "get_similarity",
    "get_statistics", "get_stats", "height", "histeq", "histogram", "illuminvar", "invert",
    "laplacian", "lens_corr", "linpolar", "logpolar", "max", "mean", "mean_pool", "mean_pooled",
    "median", "midpoint", "midpoint_pool", "midpoint_pooled", "min", "mode", "morph", "mul", "nand",
    "negate", "nor", "open", "or", "pix_to_ai", "remove_shadows", "replace", "resize",
    "rotation_corr", "save", "selective_search", "set", "set_pixel", "size", "statistics",
    "strech_char", "stretch", "sub", "to_bitmap", "to_bytes", "to_grayscale", "to_rainbow",
    "to_rgb565", "top_hat", "width", "xnor", "xor",
)


class Image(_fonts.FontMixin, _bitmap.BitmapMixin, _codec.CodecMixin, _imageio.ImageIOMixin, _flood.FloodMixin,
            _invariant.InvariantMixin, _polar.PolarMixin, _rotation.RotationMixin, _LineSegmentsMixin, _AprilTagMixin,
            _QRCodeMixin, _FeaturesMixin, _RectsMixin, _TemplateMixin, _RegressionMixin, ExtraMixin, BlobMixin, FindMixin,
            BinaryMixin, MathOpsMixin, StatsMixin, GeometryMixin, K210Mixin, PoolMixin, FilterMixin, DrawMixin,
            ChannelHelpers, BasicMixin, ImageBase):
    """A MaixPy image: pixels (byte-swapped RGB565 or gray) + optional planar AI buffer."""


setattr(Image, "blur", Image.gaussian)  # MaixPy-v1's method table maps blur to gaussian (OpenMV: mean)
setattr(Image, "gaussian_blur", Image.gaussian)
for _alias, _target in (("and", "b_and"), ("nand", "b_nand"), ("or", "b_or"), ("nor", "b_nor"),
                        ("xor", "b_xor"), ("xnor", "b_xnor")):
    setattr(Image, _alias, getattr(Image, _target))

for _name in _DEVICE_METHODS:
    if not hasattr(Image, _name):
        setattr(Image, _name, _not_emulated(f"Image.{_name}"))
_kinds.install_guards(Image)  # which image formats each method accepts (BINARY, JPEG images)

# ---------------------------------------------------------------------- module constants
SEARCH_EX, SEARCH_DS = 0, 1
EDGE_CANNY, EDGE_SIMPLE = 0, 1
CORNER_FAST, CORNER_AGAST = 0, 1
TAG16H5, TAG25H7, TAG25H9, TAG36H10, TAG36H11, ARTOOLKIT = 1, 2, 4, 8, 16, 32
EAN2, EAN5, EAN8, UPCE, ISBN10, UPCA, EAN13, ISBN13 = 0, 1, 2, 3, 4, 5, 6, 7
I25, DATABAR, DATABAR_EXP, CODABAR, CODE39, PDF417, CODE93, CODE128 = 8, 9, 10, 11, 12, 13, 14, 15
QRCODE = 16
ASCII, UTF8 = _fonts.ASCII, _fonts.UTF8  # the font indexes the firmware exports (font.h enum)


# ---------------------------------------------------------------------- module functions
def _rgb_args(value) -> list[int]:
    return [_args.to_int(v) for v in _args.fixed_array(value, 3)]


def rgb_to_grayscale(rgb_tuple) -> int:
    """(r, g, b) -> gray by imlib's formula (sRGB luminance, float32), not through RGB565."""
    return _colorspace.rgb_to_grayscale(*_rgb_args(rgb_tuple))


def grayscale_to_rgb(g) -> tuple[int, int, int]:
    """gray -> (g, g, g) (the firmware copies the value into the three channels)."""
    return _colorspace.grayscale_to_rgb(_args.to_int(g))


def rgb_to_lab(rgb_tuple) -> tuple[int, int, int]:
    """(r, g, b) -> (L, A, B) by imlib's float32 formula (``fast_cbrtf``, truncation); not the LAB table."""
    return _colorspace.rgb_to_lab(*_rgb_args(rgb_tuple))


def lab_to_rgb(lab_tuple) -> tuple[int, int, int]:
    """(L, A, B) -> (r, g, b) by imlib's inverse formulas (float32, truncated, clamped)."""
    return _colorspace.lab_to_rgb(*_rgb_args(lab_tuple))


ImageWriter = _imageio.ImageWriter
ImageReader = _imageio.ImageReader


def load_descriptor(path, *args, **kwargs):
    """A descriptor saved by ``save_descriptor`` (on the board or here): LBP or ORB keypoints."""
    import struct

    from ._core import _host_path

    if not isinstance(path, str):
        raise TypeError(f"can't convert {type(path).__name__} to str")
    host = _host_path(path)
    if not host.is_file():
        from ...host import storage

        raise storage.enoent(path)
    data = host.read_bytes()
    if len(data) < 4:
        raise OSError("The file is corrupted.")
    (kind,) = struct.unpack_from("<I", data)
    if kind == _features.DESC_LBP:
        return _features.load_lbp(data[4:])
    if kind == _features.DESC_ORB:
        from . import _orb

        return _orb.load(data[4:])
    raise OSError("Descriptor type is not supported")


def save_descriptor(desc, path, *args, **kwargs):
    """Write a descriptor as the firmware does: a uint32 type, then the LBP histogram bytes or the
    ORB keypoints (``_orb.save``)."""
    from ._core import _open_for_write

    if not isinstance(path, str):
        raise TypeError(f"can't convert {type(path).__name__} to str")
    from . import _orb

    if isinstance(desc, _orb.KeyPoints):
        import struct

        with _open_for_write(path) as fp:
            fp.write(struct.pack("<I", _features.DESC_ORB) + _orb.save(desc))
        return True
    if not isinstance(desc, _features.LBPDescriptor):
        raise TypeError(f"can't save a {type(desc).__name__} descriptor (LBP or kp_desc expected)")
    with _open_for_write(path) as fp:
        _features.save_lbp(desc, fp)
    return True


def match_descriptor(desc0, desc1, *args, **kwargs):
    """LBP: the weighted chi-square distance (smaller is closer). Keypoints: a ``kp_match`` of the
    cross-checked matches (``threshold`` 0..100, default 85; ``filter_outliers``)."""
    from . import _orb

    if type(desc0) is not type(desc1):
        raise OSError("Descriptors have different types!")
    if isinstance(desc0, _features.LBPDescriptor):
        return _features.match_lbp(desc0, desc1)
    if isinstance(desc0, _orb.KeyPoints):
        threshold = _args.to_int(_args.pick(args, 0, kwargs, "threshold", 85))
        filter_outliers = bool(_args.to_int(_args.pick(args, 1, kwargs, "filter_outliers", False)))
        if not 0 <= threshold <= 100:
            raise OSError("Expected threshold between 0 and 100")
        return _orb.match(desc0, desc1, threshold, filter_outliers)
    raise OSError("Descriptor type is not supported")

