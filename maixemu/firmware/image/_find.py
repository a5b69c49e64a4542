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
    def find_blobs(self, thresholds, *args, **kwargs):
        """Blobs as MaixPy v0.6.2 ``blob.c`` finds them.

        4-connected regions grown from seed points ``(x, y)`` with ``y`` stepping by ``y_stride``
        and ``x`` from ``roi.x + y % x_stride`` stepping by ``x_stride`` (regions without a seed are
        missed); pixels taken by one threshold's blobs are not reused by later thresholds; blobs
        come out in seed order. Firmware quirks kept: ``w = x2 - x1`` and ``h = y2 - y1`` (one
        less than the pixel extent), integer centroids, rotation from ``fast_atan2f`` in [0, pi).
        """
        import cv2

        from . import _hough

        rest = args
        invert = bool(_args.to_int(_args.pick(rest, 0, kwargs, "invert", False)))
        x0, y0, w, h = _args.roi(self.width(), self.height(), _args.pick(rest, 1, kwargs, "roi", None))
        x_stride = _args.to_int(_args.pick(rest, 2, kwargs, "x_stride", 2))
        if x_stride <= 0:
            raise OSError("x_stride must not be zero.")
        y_stride = _args.to_int(_args.pick(rest, 3, kwargs, "y_stride", 1))
        if y_stride <= 0:
            raise OSError("y_stride must not be zero.")
        area_th = _args.to_int(_args.pick(rest, 4, kwargs, "area_threshold", 10))
        pix_th = _args.to_int(_args.pick(rest, 5, kwargs, "pixels_threshold", 10))
        merge = bool(_args.to_int(_args.pick(rest, 6, kwargs, "merge", False)))
        margin = _args.to_int(_args.pick(rest, 7, kwargs, "margin", 0))
        threshold_cb = _args.pick(rest, 8, kwargs, "threshold_cb", None)
        merge_cb = _args.pick(rest, 9, kwargs, "merge_cb", None)
        ths = _lab.parse_thresholds(thresholds, self._fmt)
        pix = self._pix[y0:y0 + h, x0:x0 + w]
        # seed points in scan order (roi-relative)
        seed = np.zeros((h, w), bool)
        for yy in range(0, h, y_stride):
            seed[yy, ((yy + y0) % x_stride)::x_stride] = True
        claimed = np.zeros((h, w), bool)
        blobs = []
        for code, th in enumerate(ths):
            mask = (_lab.threshold_mask(pix, self._fmt, th) ^ invert) & ~claimed
            n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
            seed_labels = labels[seed]
            seed_labels = seed_labels[seed_labels > 0]
            if seed_labels.size == 0:
                continue
            found, first = np.unique(seed_labels, return_index=True)
            order = found[np.argsort(first)]
            claimed |= np.isin(labels, found)
            # moment sums per label (absolute coordinates), exact in int64
            ys, xs = np.nonzero(labels)
            lab = labels[ys, xs]
            xs = xs.astype(np.int64) + x0
            ys = ys.astype(np.int64) + y0

            cnt = np.bincount(lab, minlength=n).astype(np.int64)
            sx = _isum(lab, xs, n)
            sy = _isum(lab, ys, n)
            sxx = _isum(lab, xs * xs, n)
            sxy = _isum(lab, xs * ys, n)
            syy = _isum(lab, ys * ys, n)
            for k in order:
                npx = int(cnt[k])
                bx, by, bw, bh = (int(v) for v in stats[k, :4])
                blob_w, blob_h = bw - 1, bh - 1  # firmware: x2 - x1, y2 - y1
                if blob_w * blob_h < area_th or npx < pix_th:
                    continue
                mx, my = int(sx[k]) // npx, int(sy[k]) // npx
                a = _c_int32(int(sxx[k]) - 2 * mx * int(sx[k]) + npx * mx * mx)
                b = _c_int32(int(sxy[k]) - (mx * int(sy[k]) + my * int(sx[k])) + npx * mx * my)
                c = _c_int32(int(syy[k]) - 2 * my * int(sy[k]) + npx * my * my)
                if a != c:
                    ang = _hough.fast_atan2f(np.float32(_c_int32(2 * b)), np.float32(_c_int32(a - c)))
                    rot = float(np.float32(ang) / np.float32(2.0))
                else:
                    rot = 0.0
                blob = Blob(x=bx + x0, y=by + y0, w=blob_w, h=blob_h, pixels=npx, cx=mx, cy=my,
                            rotation=rot, code=1 << code, count=1)
                if threshold_cb is None or threshold_cb(blob):
                    blobs.append(blob)
        if merge:
            blobs = _merge_blobs(blobs, margin, merge_cb)
        return blobs

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


def _isum(lab: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    """Exact per-label integer sums (np.bincount would go through float64)."""
    out = np.zeros(n, np.int64)
    np.add.at(out, lab, v)
    return out


def _c_int32(v: int) -> int:
    """Wrap to a C ``int`` (the firmware keeps the moment sums in 32-bit ints)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v >= 1 << 31 else v


def _merge_blobs(blobs: list[Blob], margin: int, merge_cb) -> list[Blob]:
    """``merge=True``: the firmware's pairwise merge of blobs whose rect overlaps the other's rect
    grown by ``margin``; integer pixel-weighted centroids, circular mean of the rotations."""
    import math

    from . import _hough

    blobs = list(blobs)
    while True:
        merged = False
        out: list[Blob] = []
        while blobs:
            a = blobs.pop(0)
            rest = []
            for b in blobs:
                tx, ty = b.x() - margin, b.y() - margin
                tw, th = max(b.w() + 2 * margin, 0), max(b.h() + 2 * margin, 0)
                overlap = a.x() < tx + tw and a.y() < ty + th and tx < a.x() + a.w() and ty < a.y() + a.h()
                if overlap and (merge_cb is None or merge_cb(a, b)):
                    x1, y1 = min(a.x(), b.x()), min(a.y(), b.y())
                    x2 = max(a.x() + a.w(), b.x() + b.w())
                    y2 = max(a.y() + a.h(), b.y() + b.h())
                    p = a.pixels() + b.pixels()
                    F = np.float32
                    s_mean = (F(math.sin(a.rotation())) * F(a.pixels()) + F(math.sin(b.rotation())) * F(b.pixels())) / F(p)
                    c_mean = (F(math.cos(a.rotation())) * F(a.pixels()) + F(math.cos(b.rotation())) * F(b.pixels())) / F(p)
                    rot = float(_hough.fast_atan2f(np.float32(s_mean), np.float32(c_mean)))
                    a = Blob(x=x1, y=y1, w=x2 - x1, h=y2 - y1, pixels=p,
                             cx=(a.cx() * a.pixels() + b.cx() * b.pixels()) // p,
                             cy=(a.cy() * a.pixels() + b.cy() * b.pixels()) // p,
                             rotation=rot, code=a.code() | b.code(), count=min(a.count() + b.count(), 65535))
                    merged = True
                else:
                    rest.append(b)
            blobs = rest
            out.append(a)
        blobs = out
        if not merged:
            break
    return blobs


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
