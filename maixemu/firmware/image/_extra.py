"""Less used finders: ``find_edges`` (``_edges``), ``find_barcodes`` and ``find_datamatrices`` (the
firmware's zbar and libdmtx scans, ``_barcodes`` / ``_datamatrix``), ``find_displacement``
(``_phasecorr``), ``selective_search`` (``_selective``) and the ORB methods (``_orb``).
``replace``/``blend`` live in ``_mathops``, ``flood_fill`` in ``_flood``."""

from __future__ import annotations

import numpy as np

from . import _args
from ._core import GRAYSCALE
from ._find import _Result, _accessors
from ._host import ImageHost


class Barcode(_Result):
    _fields = ("x", "y", "w", "h", "payload", "type", "rotation", "quality")

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def corners(self):
        return self._v["corners"]


_accessors(Barcode, Barcode._fields)


class DataMatrix(_Result):
    _fields = ("x", "y", "w", "h", "payload", "rotation", "rows", "columns", "capacity", "padding")

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def corners(self):
        return self._v["corners"]


_accessors(DataMatrix, DataMatrix._fields)


class Displacement(_Result):
    _fields = ("x_translation", "y_translation", "rotation", "scale", "response")


_accessors(Displacement, Displacement._fields)


def _payload_text(payload: bytes) -> str:
    """MicroPython keeps a payload's bytes as they are in a str; Python needs text."""
    try:
        return payload.decode()
    except UnicodeDecodeError:
        return payload.decode("latin-1")


def _deg2rad(degrees: int) -> float:
    """``IM_DEG2RAD`` in float32 (-fsingle-precision-constant makes M_PI a float), as a float object."""
    f32 = np.float32
    return float(f32(f32(degrees) * f32(np.pi)) / f32(180))


class ExtraMixin(ImageHost):
    def find_edges(self, edge_type, *args, **kwargs):
        """Edges of a grayscale image as ``edge.c`` finds them (``_edges``); in place, returns the image.

        ``EDGE_SIMPLE``: high-pass ``morph``, ``binary`` to ``threshold`` and ``erode(1, 2)`` over the
        whole image. ``EDGE_CANNY``: the K210's KPU blur of the whole image, then Sobel, hysteresis
        and non-maximum suppression inside ``roi`` (white edges on black, the ROI border black).
        """
        from . import _edges

        if self._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        edge_type = _args.to_int(edge_type)
        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        th = _args.pick(args, 1, kwargs, "threshold", None)
        lo, hi = (100, 200) if th is None else (_args.to_int(v) for v in _args.fixed_array(th, 2))
        if edge_type == 1:  # EDGE_SIMPLE
            self.morph(1, list(_edges.KERNEL_HIGH_PASS_3), mul=1.0, add=0.0)
            self.binary([(lo, hi)])
            self.erode(1, threshold=2)
        elif edge_type == 0:  # EDGE_CANNY
            self._pix[...] = _edges.canny(self._pix, roi, lo, hi)
            self._touch()
        return self

    def find_barcodes(self, *args, **kwargs):
        """1D barcodes as the firmware finds them: its zbar scan (``_barcodes``) over ``roi``; each
        result's ``type()`` is the firmware's constant (``image.EAN13`` ...), ``rotation()`` radians."""
        from . import _barcodes

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        out = []
        for code in _barcodes.find_barcodes(self, roi):
            x, y, w, h = code["rect"]
            out.append(Barcode(x=x, y=y, w=w, h=h, payload=_payload_text(code["payload"]), type=code["type"],
                               rotation=_deg2rad(code["rotation"]), quality=code["quality"],
                               corners=((x, y), (x + w, y), (x + w, y + h), (x, y + h))))
        return out

    def find_datamatrices(self, *args, **kwargs):
        """Data Matrix symbols as the firmware finds them: its libdmtx scan (``_datamatrix``) over
        ``roi`` with ``effort`` grid locations (default 200); ``rotation()`` in radians."""
        from . import _datamatrix

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        effort = _args.to_int(_args.pick(args, 1, kwargs, "effort", 200))
        out = []
        for code in _datamatrix.find_datamatrices(self, roi, effort):
            x, y, w, h = code["rect"]
            out.append(DataMatrix(x=x, y=y, w=w, h=h, payload=_payload_text(code["payload"]),
                                  rotation=_deg2rad(code["rotation"]), rows=code["rows"],
                                  columns=code["columns"], capacity=code["capacity"],
                                  padding=code["padding"], corners=code["corners"]))
        return out

    def find_displacement(self, template, *args, **kwargs):
        """Translation (or, with ``logpolar=True``, rotation and scale) between ``roi`` of this image
        and ``template_roi`` of ``template`` by the firmware's phase correlation (``_phasecorr``)."""
        from . import _phasecorr
        from ._core import ImageBase

        if not isinstance(template, ImageBase):
            raise TypeError("Image expected")
        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        template_roi = _args.roi(template.width(), template.height(),
                                 _args.pick(args, 1, kwargs, "template_roi", None))
        if roi[2:] != template_roi[2:]:
            raise OSError("ROI(w,h) != TEMPLATE_ROI(w,h)")
        logpolar = bool(_args.to_int(_args.pick(args, 2, kwargs, "logpolar", False)))
        fix = bool(_args.to_int(_args.pick(args, 3, kwargs, "fix_rotation_scale", False)))

        def rotation_corr(pixels, z_rotation, zoom):
            """``imlib_rotation_corr(img, 0, 0, z_rotation, 0, 0, zoom, 60, NULL)``: radians, and the fov
            of 60 passed as radians too, as the C caller does (``_rotation``'s model)."""
            from . import _rotation
            from ._polar import remap_nearest

            tmp = type(self)(size=(pixels.shape[1], pixels.shape[0]))
            if self._fmt == GRAYSCALE:
                tmp = tmp.to_grayscale(True)
            tmp._pix[...] = pixels
            h, w = pixels.shape
            f32 = np.float32
            T4 = _rotation.transform(w, h, f32(0), f32(0), f32(z_rotation), f32(0), f32(0), f32(zoom), f32(60))
            if T4 is None:
                return np.zeros_like(pixels)
            remap_nearest(tmp, *_rotation.source_map(T4, w, h))
            return tmp._pix

        x, y, r, s, response = _phasecorr.phasecorrelate(self, template, roi, template_roi, logpolar, fix,
                                                         rotation_corr)
        return Displacement(x_translation=float(x), y_translation=float(y), rotation=float(r), scale=float(s),
                            response=float(response))

    def selective_search(self, *args, **kwargs):
        """Region proposals ``[(x, y, w, h), ...]`` of the firmware's selective search (``_selective``).

        ``threshold`` (int, 500), ``size`` (20) and ``a1``/``a2``/``a3`` (1.0) as the firmware reads
        them: its ``a2`` and ``a3`` look up the ``a1`` keyword, so only ``a1=`` (or positions) count.
        """
        from . import _selective

        t = _args.to_int(_args.pick(args, 0, kwargs, "threshold", 500))
        size = _args.to_int(_args.pick(args, 1, kwargs, "size", 20))
        a1_kw = kwargs.get("a1")
        a1, a2, a3 = (_args.to_float(a1_kw if a1_kw is not None else (args[2 + i] if len(args) > 2 + i else 1.0))
                      for i in range(3))
        return _selective.selective_search(self, t, size, a1, a2, a3)

    def draw_keypoints(self, keypoints, *args, **kwargs):
        """Draw a ``kp_desc`` object or a list of ``(x, y, angle)`` tuples as the firmware does
        (``color`` white, ``size`` 10, ``thickness`` 1, ``fill`` False): a line along each angle and
        a circle of radius ``(size - 2) / 2``."""
        from . import _orb

        c = self._color(args, kwargs, 0)
        size = _args.to_int(_args.pick(args, 1, kwargs, "size", 10))
        thickness = _args.to_int(_args.pick(args, 2, kwargs, "thickness", 1))
        fill = bool(_args.to_int(_args.pick(args, 3, kwargs, "fill", False)))
        _orb.draw(self, keypoints, c, size, thickness, fill)
        self._touch()
        return self

    def find_keypoints(self, *args, **kwargs):
        """ORB keypoints as the firmware finds them (``_orb``): ``roi``, ``threshold`` (20),
        ``normalized`` (False: all octaves), ``scale_factor`` (1.5), ``max_keypoints`` (100),
        ``corner_detector`` (``image.CORNER_AGAST``). ``None`` when there are none, as on the device."""
        from . import _orb
        from ._find import _gray8

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        threshold = _args.to_int(_args.pick(args, 1, kwargs, "threshold", 20))
        normalized = bool(_args.to_int(_args.pick(args, 2, kwargs, "normalized", False)))
        scale_factor = _args.to_float(_args.pick(args, 3, kwargs, "scale_factor", 1.5))
        max_keypoints = _args.to_int(_args.pick(args, 4, kwargs, "max_keypoints", 100))
        detector = _args.to_int(_args.pick(args, 5, kwargs, "corner_detector", 1))
        if not normalized and not np.float32(scale_factor) > np.float32(1.0):  # the octaves would never end
            raise OSError("find_keypoints: scale_factor must be > 1.0 (the firmware loops forever otherwise)")
        kpts = _orb.find_keypoints(_gray8(self), roi, threshold, normalized, scale_factor, max_keypoints,
                                   agast=detector != 0)
        return _orb.KeyPoints(kpts, threshold, normalized) if kpts else None
