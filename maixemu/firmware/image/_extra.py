"""Less used OpenMV methods: ``find_edges`` and ``find_barcodes`` (numpy/OpenCV approximations of the
firmware's versions). ``replace``/``blend`` live in ``_mathops``, ``flood_fill`` in ``_flood``."""

from __future__ import annotations

import numpy as np

from . import _args
from ._core import GRAYSCALE
from ._find import _Result, _accessors, _gray8

# cv2 barcode type names -> the firmware's barcodes_t values
_BARCODE_TYPES = {"EAN_8": 2, "UPC_E": 3, "UPC_A": 5, "EAN_13": 6, "CODE_39": 12, "CODE_93": 14,
                  "CODE_128": 15, "CODABAR": 11, "ITF": 8, "I25": 8}


class Barcode(_Result):
    _fields = ("x", "y", "w", "h", "payload", "type", "rotation", "quality")

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def corners(self):
        return self._v["corners"]


_accessors(Barcode, Barcode._fields)


class ExtraMixin:
    def find_edges(self, edge_type, *args, **kwargs):
        """Grayscale only: edge map (white edges on black) inside the ROI (OpenCV Canny/Sobel)."""
        import cv2

        if self._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        edge_type = _args.to_int(edge_type)
        x, y, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        th = _args.pick(args, 1, kwargs, "threshold", None)
        lo, hi = (100, 200) if th is None else (_args.to_int(v) for v in _args.fixed_array(th, 2))
        region = self._pix[y:y + h, x:x + w]
        if edge_type == 0:  # EDGE_CANNY (the firmware enum: CANNY=0, SIMPLE=1)
            edges = cv2.Canny(region, lo, hi)
        else:  # EDGE_SIMPLE: gradient magnitude between the thresholds
            gx = cv2.Sobel(region, cv2.CV_32F, 1, 0)
            gy = cv2.Sobel(region, cv2.CV_32F, 0, 1)
            mag = np.abs(gx) + np.abs(gy)
            edges = np.where((mag >= lo) & (mag <= hi), 255, 0).astype(np.uint8)
        self._pix[y:y + h, x:x + w] = edges
        self._touch()
        return self

    def find_barcodes(self, *args, **kwargs):
        """1D barcodes via OpenCV's detector (the firmware uses zbar); ``type()`` uses the
        firmware's constants (``image.EAN13`` ...)."""
        import cv2

        x0, y0, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        gray = _gray8(self, (x0, y0, w, h))
        det = cv2.barcode.BarcodeDetector()
        try:
            ok, infos, types, pts = det.detectAndDecodeWithType(gray)
        except cv2.error:
            return []
        out = []
        if not ok or pts is None:
            return out
        for text, kind, quad in zip(infos, types, pts):
            if not text:
                continue
            q = tuple((int(round(px)) + x0, int(round(py)) + y0) for px, py in quad)
            xs = [p[0] for p in q]
            ys = [p[1] for p in q]
            rx, ry = min(xs), min(ys)
            out.append(Barcode(x=rx, y=ry, w=max(xs) - rx + 1, h=max(ys) - ry + 1, payload=text,
                               type=_BARCODE_TYPES.get(str(kind), 15), rotation=0.0, quality=1,
                               corners=q))
        return out
