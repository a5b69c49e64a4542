"""The MaixPy ``image`` module (what scripts get from ``import image``).

``Image`` keeps RGB565 pixels byte-swapped as on the K210 plus the separate planar RGB888 AI buffer
the KPU reads; see ``_core`` for the storage model and the internal hooks used by sensor, lcd and
KPU, and maixpy-api.md §0/§2 for the device rules reproduced here.

Methods that exist on the device but are not emulated yet raise
``NotImplementedError("image.Image.<name> is not emulated yet")`` — never a silent no-op.
"""

from __future__ import annotations

from ..pixformat import BINARY, GRAYSCALE, JPEG, RGB565  # noqa: F401  (re-exported for scripts)
from . import _color
from ._basic import BasicMixin
from ._draw import DrawMixin
from ._core import ImageBase, _main_frame, _reset_main_frame  # noqa: F401


def _not_emulated(qualname: str):
    def method(*args, **kwargs):
        raise NotImplementedError(f"image.{qualname} is not emulated yet")

    method.__name__ = qualname.rsplit(".", 1)[-1]
    method.__qualname__ = qualname
    method.__doc__ = f"Exists on the device; not emulated yet (raises NotImplementedError)."
    return method


#: Image methods of the MaixPy firmware that the emulator does not implement (yet).
_MISSING_METHODS = (
    "find_template", "find_displacement", "find_lbp", "find_keypoints", "find_edges", "find_hog",
    "find_apriltags", "find_datamatrices", "find_barcodes", "find_line_segments",
    "find_number", "classify_object", "selective_search", "get_regression", "get_similarity",
    "match_descriptor", "draw_keypoints", "draw_edges", "mask_rectangle", "mask_circle",
    "mask_ellipse", "flood_fill", "replace", "assign", "set", "add", "sub", "mul", "div", "min",
    "max", "difference", "blend", "top_hat", "black_hat", "morph", "erode", "dilate", "open",
    "close_", "chrominvar", "illuminvar", "linpolar", "logpolar", "lens_corr", "rotation_corr",
    "bilateral", "cartoon", "mode", "midpoint", "median", "gaussian", "laplacian", "sharpen",
    "unsharp_mask", "histeq", "gamma_corr", "mean_pool", "midpoint_pool", "to_bitmap",
    "to_rainbow", "to_ironbow", "compress", "compress_for_ide", "compressed_for_ide",
    "find_blobs", "find_qrcodes", "find_lines", "find_circles", "find_rects",
    "find_features", "find_eye", "get_histogram", "get_statistics", "get_percentile",
    "get_threshold", "binary", "mean", "conv3", "strech_char", "stretch", "dump_roi",
)

_methods: dict = {}


class Image(DrawMixin, BasicMixin, ImageBase):
    """A MaixPy image: pixels (byte-swapped RGB565 or gray) + optional planar AI buffer."""


for _name in _MISSING_METHODS:
    _pub = _name.rstrip("_")
    if not hasattr(Image, _pub):
        setattr(Image, _pub, _not_emulated(f"Image.{_pub}"))


def rgb_to_grayscale(rgb_tuple) -> int:
    """(r, g, b) -> gray via RGB565 and §2.4 (the firmware converts through RGB565)."""
    return _color.color_value(tuple(rgb_tuple), GRAYSCALE)


def grayscale_to_rgb(g) -> tuple[int, int, int]:
    """gray -> (r, g, b) through RGB565 and the 5/6->8 tables."""
    import numpy as np

    p = _color.gray_to_rgb565(np.array(int(g) & 0xFF, dtype=np.uint8))
    return tuple(int(v) for v in _color.rgb565_to_888(p))
