"""Less used OpenMV methods: ``find_edges``, ``flood_fill`` and ``find_barcodes`` (numpy/OpenCV
approximations of the firmware's versions). ``replace``/``blend`` live in ``_mathops``."""

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

    def flood_fill(self, *args, **kwargs):
        """Fill the region connected to (x, y) whose pixels stay within ``seed_threshold`` of the seed
        and ``floating_threshold`` of their neighbour (fractions of full scale); ``invert`` fills the
        rest, ``clear_background`` zeroes what is not filled."""
        import cv2

        (x, y), rest = _args.consume(args, 2)
        seed_th = _args.to_float(_args.pick(rest, 0, kwargs, "seed_threshold", 0.05))
        if not 0 <= seed_th <= 1:
            raise OSError("Error: 0 <= seed_threshold <= 1!")
        float_th = _args.to_float(_args.pick(rest, 1, kwargs, "floating_threshold", 0.05))
        if not 0 <= float_th <= 1:
            raise OSError("Error: 0 <= floating_threshold <= 1!")
        c = self._color(rest, kwargs, 2)
        invert = bool(_args.pick(rest, 3, kwargs, "invert", False))
        clear_bg = bool(_args.pick(rest, 4, kwargs, "clear_background", False))
        if not (0 <= x < self.width() and 0 <= y < self.height()):
            return self
        fields = self._fields()
        maxes = self._field_max()
        near_seed = np.ones(self._pix.shape, bool)
        for f, m in zip(fields, maxes):
            near_seed &= np.abs(f - f[y, x]) <= seed_th * m
        img8 = self._rgb8_or_gray().astype(np.uint8)
        img8 = np.where(near_seed[..., None] if img8.ndim == 3 else near_seed, img8, 0).astype(np.uint8)
        mask = np.zeros((self.height() + 2, self.width() + 2), np.uint8)
        diff = (float_th * 255,) * (3 if img8.ndim == 3 else 1)
        cv2.floodFill(np.ascontiguousarray(img8), mask, (x, y), 0, diff, diff,
                      4 | cv2.FLOODFILL_MASK_ONLY | (255 << 8))
        filled = (mask[1:-1, 1:-1] > 0) & near_seed
        if invert:
            filled = ~filled
        if clear_bg:
            self._pix[~filled] = 0
        self._pix[filled] = c
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
