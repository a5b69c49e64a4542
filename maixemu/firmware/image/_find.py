"""Vision finders: the Hough lines/circles entry points, Haar features (``_haar``) and the result
objects (maixpy-api.md §2.8). ``find_blobs`` lives in ``_blob``, the other finders in their modules.

The result objects behave like OpenMV's: methods (``rect()``, ``cx()``, ``payload()`` ...) plus tuple-style
indexing/slicing (``line[0:4]``, ``qr[4]``).
"""

from __future__ import annotations

import math

import numpy as np

from . import _args, _color
from ._core import GRAYSCALE
from ..pixformat import BINARY
from ._host import ImageHost


class _Result:
    """Tuple-like base: ``_fields`` name the values in index order."""

    _fields: tuple[str, ...] = ()

    def __init__(self, **values):
        self._v = values

    def _tuple(self) -> tuple:
        return tuple(self._v[f] for f in self._fields)

    def __getitem__(self, i):
        return self._tuple()[i]

    def __len__(self) -> int:
        return len(self._fields)

    def __iter__(self):
        return iter(self._tuple())

    def __repr__(self) -> str:
        inner = ", ".join(f'"{k}":{_fmt(self._v[k])}' for k in self._fields)
        return "{" + inner + "}"


def _fmt(v) -> str:
    """MicroPython-style value text (strings in double quotes, floats with 6 digits)."""
    if isinstance(v, str):
        return '"' + v.replace('"', '\\"') + '"'
    if isinstance(v, float):
        return f"{v:.6f}"
    return str(v)


def _accessors(cls, names):
    for n in names:
        setattr(cls, n, (lambda key: (lambda self: self._v[key]))(n))
    return cls


class QRCode(_Result):
    _fields = ("x", "y", "w", "h", "payload", "version", "ecc_level", "mask", "data_type", "eci")

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def corners(self):
        return self._v["corners"]

    def is_numeric(self):
        return self._v["data_type"] == 1

    def is_alphanumeric(self):
        return self._v["data_type"] == 2

    def is_binary(self):
        return self._v["data_type"] == 4

    def is_kanji(self):
        return self._v["data_type"] == 8


_accessors(QRCode, QRCode._fields)


class Line(_Result):
    _fields = ("x1", "y1", "x2", "y2", "length", "magnitude", "theta", "rho")

    def line(self):
        return (self._v["x1"], self._v["y1"], self._v["x2"], self._v["y2"])


_accessors(Line, Line._fields)


class Circle(_Result):
    _fields = ("x", "y", "r", "magnitude")

    def circle(self):
        return (self._v["x"], self._v["y"], self._v["r"])


_accessors(Circle, Circle._fields)


class Rect(_Result):
    _fields = ("x", "y", "w", "h", "magnitude")

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def corners(self):
        return self._v["corners"]


_accessors(Rect, Rect._fields)


# ---------------------------------------------------------------------- Haar cascades
class HaarCascade:
    """``image.HaarCascade("frontalface" | "eye" | path, stages=N)``: the firmware's cascades (``_haar``).

    The built-in ones are generated from the OpenCV XML files they were converted from; a path loads
    an OpenMV binary cascade from the card. ``stages`` limits the stages used (when 0 < N < all).
    """

    def __init__(self, path, *args, **kwargs):
        from . import _haar

        if not isinstance(path, str):
            raise TypeError(f"can't convert {type(path).__name__} to str")
        if path in ("frontalface", "eye"):
            self._cascade = _haar.builtin(path)
        else:
            from ._core import _host_path

            host = _host_path(path)
            if not host.is_file():
                from ...host import storage

                raise storage.enoent(path)
            self._cascade = _haar.from_file(host.read_bytes())
        self._name = path
        stages = _args.to_int(_args.pick(args, 0, kwargs, "stages", self._cascade.n_stages))
        self._stages = stages if 0 < stages < self._cascade.n_stages else self._cascade.n_stages

    def __repr__(self) -> str:
        c = self._cascade
        return (f'{{"width":{c.window[0]}, "height":{c.window[1]}, "n_stages":{self._stages}, '
                f'"n_features":{c.n_features}, "n_rectangles":{c.n_rectangles}}}')


# ---------------------------------------------------------------------- helpers
def _gray8(img, roi=None) -> np.ndarray:
    pix = img._pix
    if roi is not None:
        x, y, w, h = roi
        pix = pix[y:y + h, x:x + w]
    if img._fmt == GRAYSCALE:
        return np.ascontiguousarray(pix)
    if img._fmt == BINARY:  # COLOR_BINARY_TO_GRAYSCALE: what the finders' BINARY cases copy out
        return (pix * 255).astype(np.uint8)
    return _color.rgb565_to_gray(pix)


def _clip_line(rho: float, theta: float, x0: int, y0: int, w: int, h: int):
    """Endpoints of the line x*cos + y*sin = rho (roi coordinates) clipped to the roi box."""
    c, s = math.cos(theta), math.sin(theta)
    pts = []
    if abs(s) > 1e-9:
        for x in (0, w - 1):
            y_at = (rho - x * c) / s
            if -0.5 <= y_at <= h - 0.5:
                pts.append((x, int(round(y_at))))
    if abs(c) > 1e-9:
        for y in (0, h - 1):
            x_at = (rho - y * s) / c
            if -0.5 <= x_at <= w - 0.5:
                pts.append((int(round(x_at)), y))
    pts = sorted(set(pts))
    if len(pts) < 2:
        return None
    (ax, ay), (bx, by) = pts[0], pts[-1]
    return ax + x0, ay + y0, bx + x0, by + y0


class FindMixin(ImageHost):
    def find_lines(self, *args, **kwargs):
        """Infinite lines by the firmware's Hough transform (``_hough``), clipped to the ROI."""
        from . import _hough

        rest = args
        roi, x_stride, y_stride = _roi_and_strides(self, rest, kwargs)
        threshold = _args.to_int(_args.pick(rest, 3, kwargs, "threshold", 1000))
        theta_margin = _args.to_int(_args.pick(rest, 4, kwargs, "theta_margin", 25))
        rho_margin = _args.to_int(_args.pick(rest, 5, kwargs, "rho_margin", 25))
        found = _hough.find_lines(_gray8(self), roi, x_stride, y_stride, threshold, theta_margin, rho_margin,
                                  row_stride=y_stride if self._fmt == BINARY else x_stride)
        return [Line(**d) for d in found]

    def find_circles(self, *args, **kwargs):
        """Circles by the firmware's gradient Hough transform (``_hough``)."""
        from . import _hough

        rest = args
        roi, x_stride, y_stride = _roi_and_strides(self, rest, kwargs)
        threshold = _args.to_int(_args.pick(rest, 3, kwargs, "threshold", 2000))
        x_margin = _args.to_int(_args.pick(rest, 4, kwargs, "x_margin", 10))
        y_margin = _args.to_int(_args.pick(rest, 5, kwargs, "y_margin", 10))
        r_margin = _args.to_int(_args.pick(rest, 6, kwargs, "r_margin", 10))
        half = min(roi[2] // 2, roi[3] // 2)
        r_min = max(_args.to_int(_args.pick(rest, 7, kwargs, "r_min", 2)), 2)
        r_max = min(_args.to_int(_args.pick(rest, 8, kwargs, "r_max", half)), half)
        r_step = _args.to_int(_args.pick(rest, 9, kwargs, "r_step", 2))
        found = _hough.find_circles(_gray8(self), roi, x_stride, y_stride, threshold, x_margin, y_margin,
                                    r_margin, r_min, r_max, max(r_step, 1))
        return [Circle(**d) for d in found]

    def find_features(self, cascade, *args, **kwargs):
        """Haar-cascade detections as ``(x, y, w, h)`` tuples, computed as the firmware's
        ``imlib_detect_objects`` does (``_haar``): ``threshold`` (0.5), ``scale_factor`` (1.5), ``roi``."""
        from . import _haar

        if not isinstance(cascade, HaarCascade):
            raise TypeError("HaarCascade expected")
        threshold = _args.to_float(_args.pick(args, 0, kwargs, "threshold", 0.5))
        scale = _args.to_float(_args.pick(args, 1, kwargs, "scale_factor", 1.5))
        roi = _args.roi(self.width(), self.height(), _args.pick(args, 2, kwargs, "roi", None))
        c = cascade._cascade
        if not (roi[2] > c.window[0] and roi[3] > c.window[1]):
            raise OSError("Region of interest is smaller than detector window!")
        if not np.float32(scale) > np.float32(1.0):  # the device's scale loop would never end
            raise OSError("find_features: scale_factor must be > 1.0 (the firmware loops forever otherwise)")
        found = _haar.detect(_gray8(self), c, cascade._stages, roi, threshold, scale)
        return [tuple(r) for r in found]


def _roi_and_strides(img, rest, kwargs) -> tuple:
    """``roi, x_stride, y_stride``: the first three arguments of the Hough finders, checked as the firmware does."""
    roi = _args.roi(img.width(), img.height(), _args.pick(rest, 0, kwargs, "roi", None))
    x_stride = _args.to_int(_args.pick(rest, 1, kwargs, "x_stride", 2))
    if x_stride <= 0:
        raise OSError("x_stride must not be zero.")
    y_stride = _args.to_int(_args.pick(rest, 2, kwargs, "y_stride", 1))
    if y_stride <= 0:
        raise OSError("y_stride must not be zero.")
    return roi, x_stride, y_stride
