"""Vision finders (OpenMV semantics, OpenCV/numpy approximations): QR codes, lines, circles,
rectangles, Haar features (maixpy-api.md §2.8). ``find_blobs`` lives in ``_blob``.

Scripts draw what these return; exact pixel equality with the device is not expected. The result
objects behave like OpenMV's: methods (``rect()``, ``cx()``, ``payload()`` ...) plus tuple-style
indexing/slicing (``line[0:4]``, ``qr[4]``).
"""

from __future__ import annotations

import math
import os

import numpy as np

from . import _args, _color
from ._core import GRAYSCALE


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
_HAAR_NAMES = {
    "frontalface": "haarcascade_frontalface_default.xml",
    "eye": "haarcascade_eye.xml",
    "smile": "haarcascade_smile.xml",
}


def _haar_dirs() -> list[str]:
    dirs = []
    try:
        import cv2

        dirs.append(cv2.data.haarcascades)
    except Exception:  # pragma: no cover - cv2 without data module
        pass
    dirs += ["/usr/share/opencv4/haarcascades", "/usr/share/opencv/haarcascades",
             "/usr/local/share/opencv4/haarcascades"]
    return dirs


class HaarCascade:
    """``image.HaarCascade("frontalface" | "eye", stages=N)`` backed by OpenCV's cascades.

    The firmware's built-in OpenMV cascades are not bundled; OpenCV's equivalents are used when
    found (opencv-python's ``cv2.data`` or a system ``opencv-data`` install). Cascade files from
    the filesystem (OpenMV binary format) are not supported.
    """

    def __init__(self, path, stages=None):
        import cv2

        if not isinstance(path, str):
            raise TypeError(f"can't convert {type(path).__name__} to str")
        name = _HAAR_NAMES.get(path)
        if name is None:
            raise NotImplementedError(
                f"image.HaarCascade({path!r}) is not emulated yet: only the built-in "
                "'frontalface' and 'eye' cascades are (through OpenCV)")
        if not hasattr(cv2, "CascadeClassifier"):
            raise NotImplementedError(
                f"image.HaarCascade({path!r}) is not emulated with this OpenCV ({cv2.__version__}): it has "
                "no CascadeClassifier (OpenCV 5 moved it out of the main package); an OpenCV 4.x "
                "opencv-python, which also ships the cascade files, makes it work")
        for d in _haar_dirs():
            f = os.path.join(d, name)
            if os.path.isfile(f):
                self._cv = cv2.CascadeClassifier(f)
                break
        else:
            raise NotImplementedError(
                f"image.HaarCascade({path!r}) needs OpenCV's {name}, which is not installed here "
                "(install the 'opencv-data' system package)")
        self._name = path
        self._stages = stages if stages is not None else (25 if path == "frontalface" else 24)

    def __repr__(self) -> str:
        return f'{{"width":24, "height":24, "n_stages":{self._stages}, "n_features":0, "n_rectangles":0}}'


# ---------------------------------------------------------------------- helpers
def _gray8(img, roi=None) -> np.ndarray:
    pix = img._pix
    if roi is not None:
        x, y, w, h = roi
        pix = pix[y:y + h, x:x + w]
    if img._fmt == GRAYSCALE:
        return np.ascontiguousarray(pix)
    return _color.rgb565_to_gray(pix)


def _clip_line(rho: float, theta: float, x0: int, y0: int, w: int, h: int):
    """Endpoints of the line x*cos + y*sin = rho (roi coordinates) clipped to the roi box."""
    c, s = math.cos(theta), math.sin(theta)
    pts = []
    if abs(s) > 1e-9:
        for x in (0, w - 1):
            y = (rho - x * c) / s
            if -0.5 <= y <= h - 0.5:
                pts.append((x, int(round(y))))
    if abs(c) > 1e-9:
        for y in (0, h - 1):
            x = (rho - y * s) / c
            if -0.5 <= x <= w - 0.5:
                pts.append((int(round(x)), y))
    pts = sorted(set(pts))
    if len(pts) < 2:
        return None
    (ax, ay), (bx, by) = pts[0], pts[-1]
    return ax + x0, ay + y0, bx + x0, by + y0


class FindMixin:
    def find_lines(self, *args, **kwargs):
        """Infinite lines by the firmware's Hough transform (``_hough``), clipped to the ROI."""
        from . import _hough

        rest = args
        roi, x_stride, y_stride = _roi_and_strides(self, rest, kwargs)
        threshold = _args.to_int(_args.pick(rest, 3, kwargs, "threshold", 1000))
        theta_margin = _args.to_int(_args.pick(rest, 4, kwargs, "theta_margin", 25))
        rho_margin = _args.to_int(_args.pick(rest, 5, kwargs, "rho_margin", 25))
        found = _hough.find_lines(_gray8(self), roi, x_stride, y_stride, threshold, theta_margin, rho_margin)
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
        """Haar-cascade detections as (x, y, w, h) tuples (OpenCV ``detectMultiScale``)."""
        if not isinstance(cascade, HaarCascade):
            raise TypeError("HaarCascade expected")
        threshold = _args.to_float(_args.pick(args, 0, kwargs, "threshold", 0.5))
        scale = _args.to_float(_args.pick(args, 1, kwargs, "scale_factor", 1.5))
        x0, y0, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 2, kwargs, "roi", None))
        if scale <= 1.0:
            raise OSError("Scale factor must be > 1.0")
        gray = _gray8(self, (x0, y0, w, h))
        neighbours = max(1, int(round(threshold * 2)))  # OpenMV threshold 0.5 ~ one neighbour
        found = cascade._cv.detectMultiScale(gray, scaleFactor=scale, minNeighbors=neighbours)
        return [(int(x) + x0, int(y) + y0, int(fw), int(fh)) for x, y, fw, fh in
                (found if len(found) else [])]


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
