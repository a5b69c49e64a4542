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

The 4-connected regions come from OpenCV's connected-component labelling, which yields exactly the
regions the flood fill grows (the firmware's fill only stops early when its stack memory runs out).
"""

from __future__ import annotations

import numpy as np

from . import _args
from . import _fmath as fm
from ._core import GRAYSCALE, RGB565
from ..pixformat import BINARY
from ._lab import parse_thresholds, threshold_mask

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


def _region_sums(labels: np.ndarray, n: int, x0: int, y0: int):
    """Per-label pixel count and moment sums (absolute coordinates), exact: every partial sum stays
    far below 2**53, so ``bincount``'s float64 accumulation is exact."""
    h, w = labels.shape
    lab = labels.ravel()
    xs = np.tile(np.arange(x0, x0 + w, dtype=np.float64), h)
    ys = np.repeat(np.arange(y0, y0 + h, dtype=np.float64), w)
    out = [np.bincount(lab, minlength=n).astype(np.int64)]
    for v in (xs, ys, xs * xs, xs * ys, ys * ys):
        out.append(np.rint(np.bincount(lab, weights=v, minlength=n)).astype(np.int64))
    return out


def find_blobs(img, thresholds, args: tuple, kwargs: dict) -> list[Blob]:
    """``imlib_find_blobs`` with ``py_image_find_blobs``'s argument handling."""
    import cv2

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

    pix = img._pix[y0:y0 + h, x0:x0 + w]
    seed = np.zeros((h, w), bool)
    for yy in range(0, h, y_stride):
        seed[yy, ((yy + y0) % x_stride)::x_stride] = True
    claimed = np.zeros((h, w), bool)
    blobs: list[Blob] = []
    for code, th in enumerate(ths):
        mask = threshold_mask(pix, img._fmt, th, invert) & ~claimed
        n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=4)
        seeded = labels[seed]
        seeded = seeded[seeded > 0]
        if seeded.size == 0:
            continue
        found, first = np.unique(seeded, return_index=True)
        order = found[np.argsort(first, kind="stable")]
        taken = np.zeros(n, bool)
        taken[found] = True
        claimed |= taken[labels]
        cnt, sx, sy, sxx, sxy, syy = (v[order] for v in _region_sums(labels, n, x0, y0))
        bx, by, bw, bh = (stats[order, i].astype(np.int64) for i in range(4))
        rw, rh = fm.int16(bw - 1), fm.int16(bh - 1)
        mx, my = sx // cnt, sy // cnt
        a = _wrap32(sxx - 2 * mx * sx + cnt * mx * mx)
        b = _wrap32(sxy - (mx * sy + my * sx) + cnt * mx * my)
        c = _wrap32(syy - 2 * my * sy + cnt * my * my)
        with np.errstate(divide="ignore", invalid="ignore"):
            rot = fm.fast_atan2f(_wrap32(2 * b).astype(F), _wrap32(a - c).astype(F)) / F(2.0)
        rot = np.where(a != c, rot, F(0)).astype(F)
        keep = ((rw * rh) >= area_th) & (cnt >= pix_th)
        for k in np.flatnonzero(keep):
            blob = Blob(bx[k] + x0, by[k] + y0, rw[k], rh[k], cnt[k], mx[k], my[k], rot[k], (1 << code) & 0xFFFF, 1)
            if threshold_cb is None or threshold_cb(blob):
                blobs.append(blob)
    if merge:
        blobs = _merge(blobs, margin, merge_cb)
    return blobs


def _overlap(a: tuple, b: tuple) -> bool:
    """``rectangle_overlap``: strict on both axes."""
    return a[0] < b[0] + b[2] and a[1] < b[1] + b[3] and b[0] < a[0] + a[2] and b[1] < a[1] + a[3]


def _merge(blobs: list[Blob], margin: int, merge_cb) -> list[Blob]:
    """The firmware's merge passes (see the module docstring), until a pass merges nothing."""
    while True:
        merged = False
        out: list[Blob] = []
        pending = list(blobs)
        while pending:
            a = pending.pop(0)
            keep = []
            for b in pending:
                bx, by, bw, bh = b.rect()
                grown = (max(min(bx - margin, 32767), -32768), max(min(by - margin, 32767), -32768),
                         max(min(bw + 2 * margin, 32767), 0), max(min(bh + 2 * margin, 32767), 0))
                if _overlap(a.rect(), grown) and (merge_cb is None or merge_cb(a, b)):
                    a = _fold(a, b)
                    merged = True
                else:
                    keep.append(b)
            pending = keep
            out.append(a)
        blobs = out
        if not merged:
            return blobs


def _fold(a: Blob, b: Blob) -> Blob:
    ax, ay, aw, ah = a.rect()
    bx, by, bw, bh = b.rect()
    x1, y1 = min(ax, bx), min(ay, by)
    x2, y2 = max(ax + aw, bx + bw), max(ay + ah, by + bh)
    pa, pb = a.pixels(), b.pixels()
    p = pa + pb
    s = (fm.sinf(a.rotation()) * F(pa) + fm.sinf(b.rotation()) * F(pb)) / F(p)
    c = (fm.cosf(a.rotation()) * F(pa) + fm.cosf(b.rotation()) * F(pb)) / F(p)
    return Blob(_int16(x1), _int16(y1), _int16(x2 - x1), _int16(y2 - y1), p & 0xFFFFFFFF,
                _int16(((a.cx() * pa + b.cx() * pb) & 0xFFFFFFFF) // p),
                _int16(((a.cy() * pa + b.cy() * pb) & 0xFFFFFFFF) // p),
                fm.fast_atan2f(F(s), F(c)), a.code() | b.code(), min(a.count() + b.count(), 0xFFFF))


class BlobMixin:
    def find_blobs(self, thresholds, *args, **kwargs):
        """``find_blobs(thresholds, invert=False, roi, x_stride=2, y_stride=1, area_threshold=10,
        pixels_threshold=10, merge=False, margin=0, threshold_cb=None, merge_cb=None)``."""
        return find_blobs(self, thresholds, args, kwargs)
