"""Vision finders (OpenMV semantics, OpenCV/numpy approximations): blobs, QR codes, lines, circles,
rectangles, Haar features (maixpy-api.md §2.8).

Scripts draw what these return; exact pixel equality with the device is not expected. The result
objects behave like OpenMV's: methods (``rect()``, ``cx()``, ``payload()`` ...) plus tuple-style
indexing/slicing (``blob[0:4]``, ``blob[5]``).
"""

from __future__ import annotations

import math
import os

import numpy as np

from . import _args, _color, _lab
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


class Blob(_Result):
    _fields = ("x", "y", "w", "h", "pixels", "cx", "cy", "rotation", "code", "count")

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def area(self):
        return self._v["w"] * self._v["h"]

    def density(self):
        a = self.area()
        return self._v["pixels"] / a if a else 0.0

    def elongation(self):
        return self._v.get("elongation", 0.0)

    def corners(self):
        x, y, w, h = self.rect()
        return ((x, y), (x + w - 1, y), (x + w - 1, y + h - 1), (x, y + h - 1))

    def min_corners(self):
        return self.corners()

    def cxf(self):
        return float(self._v["cxf"])

    def cyf(self):
        return float(self._v["cyf"])

    def perimeter(self):
        return 2 * (self._v["w"] + self._v["h"])

    def roundness(self):
        return self._v.get("roundness", 0.0)

    def extent(self):
        return self.density()

    def compactness(self):
        return self._v.get("compactness", 0.0)

    def solidity(self):
        return self.density()

    def major_axis_line(self):
        raise NotImplementedError("image.blob.major_axis_line is not emulated yet")

    def minor_axis_line(self):
        raise NotImplementedError("image.blob.minor_axis_line is not emulated yet")


_accessors(Blob, Blob._fields)


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
    def find_blobs(self, thresholds, *args, **kwargs):
        """Connected regions (4-connected) inside LAB (RGB565) or gray thresholds."""
        import cv2

        rest = args
        invert = bool(_args.to_int(_args.pick(rest, 0, kwargs, "invert", False)))
        x0, y0, w, h = _args.roi(self.width(), self.height(), _args.pick(rest, 1, kwargs, "roi", None))
        x_stride = _args.to_int(_args.pick(rest, 2, kwargs, "x_stride", 2))
        y_stride = _args.to_int(_args.pick(rest, 3, kwargs, "y_stride", 1))
        area_th = _args.to_int(_args.pick(rest, 4, kwargs, "area_threshold", 10))
        pix_th = _args.to_int(_args.pick(rest, 5, kwargs, "pixels_threshold", 10))
        merge = bool(_args.to_int(_args.pick(rest, 6, kwargs, "merge", False)))
        margin = _args.to_int(_args.pick(rest, 7, kwargs, "margin", 0))
        threshold_cb = _args.pick(rest, 8, kwargs, "threshold_cb", None)
        merge_cb = _args.pick(rest, 9, kwargs, "merge_cb", None)
        if x_stride < 1:
            raise OSError("x_stride must not be zero.")
        if y_stride < 1:
            raise OSError("y_stride must not be zero.")
        ths = _lab.parse_thresholds(thresholds, self._fmt)
        pix = self._pix[y0:y0 + h, x0:x0 + w]
        blobs = []
        for idx, th in enumerate(ths):
            mask = _lab.threshold_mask(pix, self._fmt, th) ^ invert
            n, labels, stats, cents = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
            for k in range(1, n):
                bx, by, bw, bh, cnt = (int(v) for v in stats[k])
                if bw < x_stride or bh < y_stride:
                    continue
                comp = labels[by:by + bh, bx:bx + bw] == k
                ys, xs = np.nonzero(comp)
                cxf = float(xs.mean()) + bx + x0
                cyf = float(ys.mean()) + by + y0
                mu20 = float(((xs - xs.mean()) ** 2).mean())
                mu02 = float(((ys - ys.mean()) ** 2).mean())
                mu11 = float(((xs - xs.mean()) * (ys - ys.mean())).mean())
                rot = 0.5 * math.atan2(2 * mu11, mu20 - mu02) if (mu20 or mu02 or mu11) else 0.0
                b = Blob(x=bx + x0, y=by + y0, w=bw, h=bh, pixels=cnt, cx=int(cxf), cy=int(cyf),
                         rotation=rot % math.pi, code=1 << idx, count=1, cxf=cxf, cyf=cyf)
                if b.area() < area_th or cnt < pix_th:
                    continue
                if threshold_cb is not None and not threshold_cb(b):
                    continue
                blobs.append(b)
        if merge:
            blobs = _merge_blobs(blobs, margin, merge_cb)
        return blobs

    def find_qrcodes(self, *args, **kwargs):
        """QR codes via OpenCV's detector/decoder (the firmware uses quirc)."""
        import cv2

        x0, y0, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        gray = _gray8(self, (x0, y0, w, h))
        det = cv2.QRCodeDetector()
        out = []
        try:
            ok, texts, pts, _ = det.detectAndDecodeMulti(gray)
        except cv2.error:
            ok, texts, pts = False, (), None
        if not ok or pts is None:
            return out
        for text, quad in zip(texts, pts):
            if not text:
                continue
            q = [(int(round(px)) + x0, int(round(py)) + y0) for px, py in quad]
            xs = [p[0] for p in q]
            ys = [p[1] for p in q]
            rx, ry = min(xs), min(ys)
            out.append(QRCode(x=rx, y=ry, w=max(xs) - rx + 1, h=max(ys) - ry + 1, payload=text,
                              version=1, ecc_level=0, mask=0, data_type=4, eci=0, corners=tuple(q)))
        return out

    def find_lines(self, *args, **kwargs):
        """Infinite lines by the firmware's Hough transform (``_hough``), clipped to the ROI."""
        from . import _hough

        rest = args
        roi = _args.roi(self.width(), self.height(), _args.pick(rest, 0, kwargs, "roi", None))
        x_stride = _args.to_int(_args.pick(rest, 1, kwargs, "x_stride", 2))
        if x_stride <= 0:
            raise OSError("x_stride must not be zero.")
        y_stride = _args.to_int(_args.pick(rest, 2, kwargs, "y_stride", 1))
        if y_stride <= 0:
            raise OSError("y_stride must not be zero.")
        threshold = _args.to_int(_args.pick(rest, 3, kwargs, "threshold", 1000))
        theta_margin = _args.to_int(_args.pick(rest, 4, kwargs, "theta_margin", 25))
        rho_margin = _args.to_int(_args.pick(rest, 5, kwargs, "rho_margin", 25))
        found = _hough.find_lines(_gray8(self), roi, x_stride, y_stride, threshold, theta_margin, rho_margin)
        return [Line(**d) for d in found]

    def find_line_segments(self, *args, **kwargs):
        raise NotImplementedError("image.Image.find_line_segments is not emulated yet")

    def find_circles(self, *args, **kwargs):
        """Circles by the firmware's gradient Hough transform (``_hough``)."""
        from . import _hough

        rest = args
        roi = _args.roi(self.width(), self.height(), _args.pick(rest, 0, kwargs, "roi", None))
        x_stride = _args.to_int(_args.pick(rest, 1, kwargs, "x_stride", 2))
        if x_stride <= 0:
            raise OSError("x_stride must not be zero.")
        y_stride = _args.to_int(_args.pick(rest, 2, kwargs, "y_stride", 1))
        if y_stride <= 0:
            raise OSError("y_stride must not be zero.")
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

    def find_rects(self, *args, **kwargs):
        """Quadrilaterals from contours of an edge map (approximation of the AprilTag quad finder)."""
        import cv2

        x0, y0, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        threshold = _args.to_int(_args.pick(args, 1, kwargs, "threshold", 10000))
        gray = _gray8(self, (x0, y0, w, h))
        edges = cv2.Canny(gray, 50, 150)
        gx = cv2.Sobel(gray, cv2.CV_32F, 1, 0)
        gy = cv2.Sobel(gray, cv2.CV_32F, 0, 1)
        mag = np.abs(gx) + np.abs(gy)
        contours, _ = cv2.findContours(edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        out = []
        for cnt in contours:
            peri = cv2.arcLength(cnt, True)
            if peri < 20:
                continue
            approx = cv2.approxPolyDP(cnt, 0.04 * peri, True)
            if len(approx) != 4 or not cv2.isContourConvex(approx):
                continue
            pts = approx[:, 0, :]
            magnitude = int(sum(mag[min(py, h - 1), min(px, w - 1)] for px, py in cnt[:, 0, :]))
            if magnitude < threshold:
                continue
            rx, ry, rw, rh = cv2.boundingRect(approx)
            if any(abs(rx - o.x() + x0) < 3 and abs(ry - o.y() + y0) < 3 for o in out):
                continue
            out.append(Rect(x=rx + x0, y=ry + y0, w=rw, h=rh, magnitude=magnitude,
                            corners=tuple((int(px) + x0, int(py) + y0) for px, py in pts)))
        return out

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
        neighbours = max(1, int(round(threshold * 6)))
        found = cascade._cv.detectMultiScale(gray, scaleFactor=scale, minNeighbors=neighbours)
        return [(int(x) + x0, int(y) + y0, int(fw), int(fh)) for x, y, fw, fh in
                (found if len(found) else [])]


def _merge_blobs(blobs: list[Blob], margin: int, merge_cb) -> list[Blob]:
    """Merge blobs whose margin-expanded bounding boxes overlap (OpenMV ``merge=True``)."""
    blobs = list(blobs)
    changed = True
    while changed:
        changed = False
        out: list[Blob] = []
        while blobs:
            a = blobs.pop(0)
            i = 0
            while i < len(blobs):
                b = blobs[i]
                if (a.x() - margin < b.x() + b.w() and b.x() - margin < a.x() + a.w()
                        and a.y() - margin < b.y() + b.h() and b.y() - margin < a.y() + a.h()):
                    if merge_cb is not None and not merge_cb(a, b):
                        i += 1
                        continue
                    x = min(a.x(), b.x())
                    y = min(a.y(), b.y())
                    w = max(a.x() + a.w(), b.x() + b.w()) - x
                    h = max(a.y() + a.h(), b.y() + b.h()) - y
                    p = a.pixels() + b.pixels()
                    cxf = (a.cxf() * a.pixels() + b.cxf() * b.pixels()) / p
                    cyf = (a.cyf() * a.pixels() + b.cyf() * b.pixels()) / p
                    a = Blob(x=x, y=y, w=w, h=h, pixels=p, cx=int(cxf), cy=int(cyf),
                             rotation=a.rotation(), code=a.code() | b.code(), count=a.count() + b.count(),
                             cxf=cxf, cyf=cyf)
                    blobs.pop(i)
                    changed = True
                else:
                    i += 1
            out.append(a)
        blobs = out
    return blobs
