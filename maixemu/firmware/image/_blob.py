"""``find_blobs`` and the ``blob`` object, as ``omv/img/blob.c`` and ``py_image.c`` compute them.

The firmware's algorithm, reproduced with array operations:

* for each threshold in order (``code = 1 << index``, stored in a ``uint16_t``), seeds are visited
  in scan order: ``y`` from ``roi.y`` by ``y_stride``, ``x`` from ``roi.x + y % x_stride`` by
  ``x_stride``; an unclaimed seed inside the threshold (``^ invert``) grows its 4-connected region
  inside the ROI with a scanline flood fill. Regions without a seed point are never found, and
  pixels claimed by one threshold's regions are not available to the later thresholds (the claim
  bitmap is shared); filtered-out regions stay claimed too.
* per region: ``x, y`` = top-left, ``w = x2 - x1`` and ``h = y2 - y1`` (one less than the pixel
  extent), ``pixels``, integer centroids ``sum // n``, and ``rotation = fast_atan2f(2b, a - c) / 2``
  from the central second moments kept in 32-bit ints (0 when ``a == c``);
* kept when ``w * h >= area_threshold`` and ``pixels >= pixels_threshold`` and ``threshold_cb(blob)``;
* ``merge``: repeated passes that fold every later blob whose rect, grown by ``margin``, overlaps
  the current one (and ``merge_cb(a, b)`` agrees): united rect, pixel-weighted integer centroid,
  ``rotation = fast_atan2f`` of the pixel-weighted mean sine/cosine, codes OR-ed, counts added.

The regions themselves (the seed scan and the fill) are :mod:`._blob_regions`'s.
"""

from __future__ import annotations

import numpy as np

from . import _args
from . import _fmath as fm
from ._core import GRAYSCALE, RGB565
from ..pixformat import BINARY
from ._blob_regions import COUNT, SYY, X1, X2, Y1, Y2, RegionGrower
from ._lab import parse_thresholds
from ._host import ImageHost

F = np.float32
_FIELDS = ("x", "y", "w", "h", "pixels", "cx", "cy", "rotation", "code", "count")


class Blob:
    """The firmware's ``blob``: ``rect() x() y() w() h() pixels() cx() cy() rotation() code() count()
    area() density()`` and tuple-style indexing ``blob[0..9]`` / ``blob[a:b]`` (no other methods:
    later OpenMV additions such as ``corners()`` or ``elongation()`` do not exist on this firmware)."""

    __slots__ = ("_values",)

    def __init__(self, x, y, w, h, pixels, cx, cy, rotation, code, count):
        self._values = (int(x), int(y), int(w), int(h), int(pixels), int(cx), int(cy),
                        float(F(rotation)), int(code), int(count))

    def __getitem__(self, index):
        vals = self._values
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise OSError("only slices with step=1 (aka None) are supported")
            return vals[index]
        i = _args.to_int(index)
        if i < 0:
            i += len(vals)
        if not 0 <= i < len(vals):
            raise IndexError("blob index out of range")
        return vals[i]

    def rect(self):
        return self._values[:4]

    def area(self) -> int:
        return self._values[2] * self._values[3]

    def density(self) -> float:
        a = self.area()
        return float(F(self._values[4]) / F(a)) if a else 0.0

    def __repr__(self) -> str:
        v = self._values
        return (f'{{"x":{v[0]}, "y":{v[1]}, "w":{v[2]}, "h":{v[3]}, "pixels":{v[4]}, "cx":{v[5]}, '
                f'"cy":{v[6]}, "rotation":{v[7]:f}, "code":{v[8]}, "count":{v[9]}}}')

    def __getattr__(self, name):
        raise AttributeError(f"'blob' object has no attribute '{name}' (MaixPy-v1's blob has only "
                             "rect, x, y, w, h, pixels, cx, cy, rotation, code, count, area, density)")


for _i, _name in enumerate(_FIELDS):
    setattr(Blob, _name, (lambda i: lambda self: self._values[i])(_i))


def _int16(v: int) -> int:
    return int(fm.int16(v))


def _wrap32(v: np.ndarray) -> np.ndarray:
    """int64 values stored into a C ``int`` (two's complement wrap)."""
    return ((np.asarray(v, np.int64) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def find_blobs(img, thresholds, args: tuple, kwargs: dict) -> list[Blob]:
    """``imlib_find_blobs`` with ``py_image_find_blobs``'s argument handling."""
    if img._fmt not in (BINARY, GRAYSCALE, RGB565):
        raise OSError("Image format is not supported!")
    ths = parse_thresholds(thresholds)
    if not ths:
        return []
    invert = bool(_args.to_int(_args.pick(args, 0, kwargs, "invert", False)))
    x0, y0, w, h = _args.roi(img.width(), img.height(), _args.pick(args, 1, kwargs, "roi", None))
    x_stride = _args.to_int(_args.pick(args, 2, kwargs, "x_stride", 2)) & 0xFFFFFFFF
    if x_stride == 0:
        raise OSError("x_stride must not be zero.")
    y_stride = _args.to_int(_args.pick(args, 3, kwargs, "y_stride", 1)) & 0xFFFFFFFF
    if y_stride == 0:
        raise OSError("y_stride must not be zero.")
    area_th = _args.to_int(_args.pick(args, 4, kwargs, "area_threshold", 10)) & 0xFFFFFFFF
    pix_th = _args.to_int(_args.pick(args, 5, kwargs, "pixels_threshold", 10)) & 0xFFFFFFFF
    merge = bool(_args.to_int(_args.pick(args, 6, kwargs, "merge", False)))
    margin = _args.to_int(_args.pick(args, 7, kwargs, "margin", 0))
    threshold_cb = _args.pick(args, 8, kwargs, "threshold_cb", None)
    merge_cb = _args.pick(args, 9, kwargs, "merge_cb", None)

    grower = RegionGrower(img._pix, img._fmt, (x0, y0, w, h), x_stride, y_stride, invert)
    blobs: list[Blob] = []
    for code, th in enumerate(ths):
        rows = grower.grow(th)
        if rows.shape[0] == 0:
            continue
        cnt, sx, sy, sxx, sxy, syy = (rows[:, k] for k in range(COUNT, SYY + 1))
        rw, rh = fm.int16(rows[:, X2] - rows[:, X1]), fm.int16(rows[:, Y2] - rows[:, Y1])
        mx, my = sx // cnt, sy // cnt
        a = _wrap32(sxx - 2 * mx * sx + cnt * mx * mx)
        b = _wrap32(sxy - (mx * sy + my * sx) + cnt * mx * my)
        c = _wrap32(syy - 2 * my * sy + cnt * my * my)
        with np.errstate(divide="ignore", invalid="ignore"):
            rot = fm.fast_atan2f(_wrap32(2 * b).astype(F), _wrap32(a - c).astype(F)) / F(2.0)
        rot = np.where(a != c, rot, F(0)).astype(F)
        keep = ((rw * rh) >= area_th) & (cnt >= pix_th)
        for k in np.flatnonzero(keep):
            blob = Blob(rows[k, X1], rows[k, Y1], rw[k], rh[k], cnt[k], mx[k], my[k], rot[k], (1 << code) & 0xFFFF, 1)
            if threshold_cb is None or threshold_cb(blob):
                blobs.append(blob)
    if merge:
        blobs = _merge(blobs, margin, merge_cb)
    return blobs


def _overlap(a: tuple, b: tuple) -> bool:
    """``rectangle_overlap``: strict on both axes."""
    return a[0] < b[0] + b[2] and a[1] < b[1] + b[3] and b[0] < a[0] + a[2] and b[1] < a[1] + a[3]


def _merge(blobs: list[Blob], margin: int, merge_cb) -> list[Blob]:
    """The firmware's merge passes (see the module docstring), until a pass merges nothing.

    A pass takes the first pending blob as the head and folds into it, in order, every later blob
    whose grown rect overlaps the head's current rect (and that ``merge_cb`` accepts). The overlap
    tests of one head against all later blobs are one array comparison; only the candidates it
    finds are visited in Python, and the search resumes after each fold with the grown head.
    """
    while True:
        n = len(blobs)
        if n < 2:
            return blobs
        rects = np.array([b.rect() for b in blobs], np.int64)
        gx = np.clip(rects[:, 0] - margin, -32768, 32767)
        gy = np.clip(rects[:, 1] - margin, -32768, 32767)
        gx2 = gx + np.clip(rects[:, 2] + 2 * margin, 0, 32767)
        gy2 = gy + np.clip(rects[:, 3] + 2 * margin, 0, 32767)
        pending = np.ones(n, bool)
        merged = False
        out: list[Blob] = []
        for i in range(n):
            if not pending[i]:
                continue
            pending[i] = False
            a = blobs[i]
            start = i + 1
            while start < n:
                ax, ay, aw, ah = a.rect()
                hits = np.flatnonzero(pending[start:] & (ax < gx2[start:]) & (ay < gy2[start:])
                                      & (gx[start:] < ax + aw) & (gy[start:] < ay + ah)) + start
                for k in hits:
                    if merge_cb is None or merge_cb(a, blobs[k]):
                        a = _fold(a, blobs[k])
                        pending[k] = False
                        merged = True
                        start = int(k) + 1
                        break
                else:
                    break
            out.append(a)
        blobs = out
        if not merged:
            return blobs


def _fold(a: Blob, b: Blob) -> Blob:
    ax, ay, aw, ah, pa, acx, acy, arot, acode, acount = a._values
    bx, by, bw, bh, pb, bcx, bcy, brot, bcode, bcount = b._values
    x1, y1 = min(ax, bx), min(ay, by)
    x2, y2 = max(ax + aw, bx + bw), max(ay + ah, by + bh)
    p = pa + pb
    s = (fm.sinf(arot) * F(pa) + fm.sinf(brot) * F(pb)) / F(p)
    c = (fm.cosf(arot) * F(pa) + fm.cosf(brot) * F(pb)) / F(p)
    return Blob(_int16(x1), _int16(y1), _int16(x2 - x1), _int16(y2 - y1), p & 0xFFFFFFFF,
                _int16(((acx * pa + bcx * pb) & 0xFFFFFFFF) // p),
                _int16(((acy * pa + bcy * pb) & 0xFFFFFFFF) // p),
                fm.fast_atan2f_1(F(s), F(c)), acode | bcode, min(acount + bcount, 0xFFFF))


class BlobMixin(ImageHost):
    def find_blobs(self, thresholds, *args, **kwargs):
        """``find_blobs(thresholds, invert=False, roi, x_stride=2, y_stride=1, area_threshold=10,
        pixels_threshold=10, merge=False, margin=0, threshold_cb=None, merge_cb=None)``."""
        return find_blobs(self, thresholds, args, kwargs)
