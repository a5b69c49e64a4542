"""ORB keypoint objects of the firmware (``orb.c``, ``py_image.c``): the ``kp_desc`` object, its
file format, ``match_descriptor``'s matcher and outlier filter, the ``kp_match`` result and
``draw_keypoints``.

What is here is integer logic ported as the C does it, so it is exact: the descriptor distance is
orb.c's modified popcount (a 2-bit field that differs counts once, the WTA_K=4 distance), the
ratio test divides as RISC-V does (a zero divisor gives -1), the cross-check, the angle histogram,
the centroid/rect of the matches and the ``matched`` flags, which — as on the device — stay set on
the second keypoint set between calls and feed ``filter_outliers``.

``Image.find_keypoints`` itself is not built: the descriptor samples OpenCV's learned 256-pair
pattern (``bit_pattern_31_``), a data table that no formula generates and no installed library
exposes, which the project does not copy from upstream sources. It raises ``NotImplementedError``.
"""

from __future__ import annotations

import struct

import numpy as np

from . import _fmath

KDESC_SIZE = 32
MAX_KP_DIST = KDESC_SIZE * 8
_RECORD = struct.Struct("<5H32s")  # x, y, score, octave, angle, descriptor


class KeyPoint:
    """``kp_t``: a keypoint and its 32-byte descriptor; ``matched`` is the matcher's flag."""

    __slots__ = ("x", "y", "score", "octave", "angle", "matched", "desc")

    def __init__(self, x: int, y: int, score: int, octave: int, angle: int, desc: bytes, matched: int = 0):
        self.x, self.y, self.score, self.octave, self.angle = x, y, score, octave, angle
        self.desc = bytes(desc)
        self.matched = matched


class KeyPoints:
    """The firmware's ``kp_desc`` object: ``len()``, ``kp[i] -> (x, y, score, octave, angle)``."""

    def __init__(self, kpts: list[KeyPoint], threshold: int, normalized: bool):
        self._kpts = kpts
        self._threshold = threshold
        self._normalized = bool(normalized)

    def __len__(self) -> int:
        return len(self._kpts)

    def __getitem__(self, index):
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"kp_desc indices must be integers, not {type(index).__name__}")
        n = len(self._kpts)
        i = int(index) + (n if index < 0 else 0)
        if not 0 <= i < n:
            raise IndexError("kp_desc index out of range")
        k = self._kpts[i]
        return (k.x, k.y, k.score, k.octave, k.angle)

    def __repr__(self) -> str:
        return f'{{"size":{len(self._kpts)}, "threshold":{self._threshold}, "normalized":{int(self._normalized)}}}'


class KptMatch:
    """``kp_match``: centroid, rect, count, theta and the ``(index1, index2)`` match list."""

    _fields = ("cx", "cy", "x", "y", "w", "h", "count", "theta", "match")

    def __init__(self, **values):
        self._v = values

    def __getitem__(self, i):
        return tuple(self._v[f] for f in self._fields)[i]

    def __len__(self) -> int:
        return len(self._fields)

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def __repr__(self) -> str:
        v = self._v
        return (f'{{"cx":{v["cx"]}, "cy":{v["cy"]}, "x":{v["x"]}, "y":{v["y"]}, "w":{v["w"]}, "h":{v["h"]}, '
                f'"count":{v["count"]}, "theta":{v["theta"]}}}')


for _name in KptMatch._fields:
    setattr(KptMatch, _name, (lambda key: (lambda self: self._v[key]))(_name))


# ---------------------------------------------------------------------- file format
def save(kpts: KeyPoints) -> bytes:
    """``orb_save_descriptor`` (after the uint32 type): int32 count, then x, y, score, octave and angle
    as uint16 and the 32 descriptor bytes per keypoint, little-endian as on the K210."""
    out = [struct.pack("<i", len(kpts._kpts))]
    out += [_RECORD.pack(k.x & 0xFFFF, k.y & 0xFFFF, k.score & 0xFFFF, k.octave & 0xFFFF, k.angle & 0xFFFF, k.desc)
            for k in kpts._kpts]
    return b"".join(out)


def load(data: bytes) -> KeyPoints:
    """``orb_load_descriptor``: a short file keeps the keypoints read completely (the firmware stops
    without an error); the loaded object has threshold 10 and is not normalized, as there."""
    kpts = []
    if len(data) >= 4:
        (count,) = struct.unpack_from("<i", data)
        off = 4
        for _ in range(max(count, 0)):
            if off + _RECORD.size > len(data):
                break
            x, y, score, octave, angle, desc = _RECORD.unpack_from(data, off)
            kpts.append(KeyPoint(x, y, score, octave, angle, desc))
            off += _RECORD.size
    return KeyPoints(kpts, 10, False)


# ---------------------------------------------------------------------- matching
def _pair_popcount(v: int) -> int:
    """orb.c's ``popcount``: the number of 2-bit fields of ``v`` that are not 00."""
    return bin((v | (v >> 1)) & 0x55555555).count("1")


def _distance(a: bytes, b: bytes) -> int:
    return sum(_pair_popcount(x ^ y) for x, y in zip(struct.unpack("<8I", a), struct.unpack("<8I", b)))


def _find_best_match(kp1: KeyPoint, kpts: list[KeyPoint]):
    """``find_best_match``: the closest unmatched keypoint, its index, the best two distances."""
    best, index = None, 0
    d1 = d2 = MAX_KP_DIST
    for i, kp2 in enumerate(kpts):
        if kp2.matched == 0:
            dist = _distance(kp1.desc, kp2.desc)
            if dist < d1:
                index, best, d2, d1 = i, kp2, d1, dist
    return best, index, d1, d2


def _ratio(d1: int, d2: int) -> int:
    """``d1*100/d2`` in C on RISC-V (a zero divisor gives -1)."""
    return -1 if d2 == 0 else int(_fmath.cdiv(d1 * 100, d2))


def _expand(r: list[int], x: int, y: int) -> None:
    """``rectangle_expand`` (w/h hold the max corner until the caller subtracts)."""
    if x < r[0]:
        r[0] = x
    if y < r[1]:
        r[1] = y
    if x > r[2]:
        r[2] = x
    if y > r[3]:
        r[3] = y


def match(kpts1: KeyPoints, kpts2: KeyPoints, threshold: int, filter_outliers: bool) -> KptMatch:
    """``match_descriptor`` for keypoints: ``orb_match_keypoints`` then, optionally,
    ``orb_filter_keypoints`` on the second set."""
    theta = count = 0
    c, r = [0, 0], [0, 0, 0, 0]
    pairs: list[tuple[int, int]] = []
    a, b = kpts1._kpts, kpts2._kpts
    if a:  # the firmware tests kpts1's length twice (never kpts2's)
        r = [20000, 20000, 0, 0]
        cx = cy = 0
        angles = [0] * 360
        for kp1 in a:
            best, index2, d1, d2 = _find_best_match(kp1, b)
            if _ratio(d1, d2) > threshold:
                continue
            if best is None:  # every keypoint of the second set is matched: a NULL pointer on the device
                raise OSError("match_descriptor: no unmatched keypoint is left in the second set "
                              "(the firmware dereferences NULL here)")
            back, index1, d1, d2 = _find_best_match(best, a)
            if _ratio(d1, d2) > threshold:
                continue
            if back is kp1:
                count += 1
                best.matched = 1
                cx += best.x
                cy += best.y
                _expand(r, best.x, best.y)
                angle = abs(best.angle - kp1.angle)
                if 0 <= angle < 360:
                    angles[angle] += 1
                pairs.append((index1, index2))
        if count == 0:
            r = [0, 0, 0, 0]
        else:
            c = [int(_fmath.cdiv(cx, count)), int(_fmath.cdiv(cy, count))]
            r = [r[0], r[1], r[2] - r[0], r[3] - r[1]]
            best_n = 0
            for i in range(360):
                if angles[i] > best_n:
                    best_n, theta = angles[i], i
        if filter_outliers:
            count, r, c = _filter(b)
    return KptMatch(cx=c[0], cy=c[1], x=r[0], y=r[1], w=r[2], h=r[3], count=count, theta=theta, match=pairs)


def _c_idiv(a: int, b: int) -> int:
    return -1 if b == 0 else int(_fmath.cdiv(a, b))


def _filter(kpts: list[KeyPoint]):
    """``orb_filter_keypoints``: drop matched keypoints farther than one standard deviation from the
    mean distance to the centroid (float32, in the C's order); -> (count, rect, centroid)."""
    F = np.float32
    matched = [k for k in kpts if k.matched]
    n = len(matched)
    cx = _c_idiv(sum(k.x for k in matched), n)
    cy = _c_idiv(sum(k.y for k in matched), n)
    dist = {}
    mdist = F(0)
    for k in matched:
        s = F(0)
        s = F(s + F((cx - k.x) * (cx - k.x)))
        s = F(s + F((cy - k.y) * (cy - k.y)))
        dist[id(k)] = _fmath.fsqrt(s)
        mdist = F(mdist + dist[id(k)])
    with np.errstate(divide="ignore", invalid="ignore"):
        mdist = F(mdist / F(n))
        var = F(0)
        for k in matched:
            var = F(var + F((mdist - dist[id(k)]) * (mdist - dist[id(k)])))
        stdist = _fmath.fsqrt(F(var / F(n)))
    count = sx = sy = 0
    r = [20000, 20000, 0, 0]
    for k in kpts:
        if k.matched:
            if abs(F(mdist - dist[id(k)])) > stdist:
                k.matched = 0
            else:
                count += 1
                sx += k.x
                sy += k.y
                _expand(r, k.x, k.y)
    c = [_c_idiv(sx, count), _c_idiv(sy, count)]
    return count, [r[0], r[1], r[2] - r[0], r[3] - r[1]], c


# ---------------------------------------------------------------------- drawing
def draw(img, keypoints, c, size: int, thickness: int, fill: bool) -> None:
    """``draw_keypoints``: for each (x, y, angle) a line of length ``size`` along the angle (the
    sin/cos table of whole degrees, products truncated) and a circle of radius ``(size - 2) / 2``."""
    from ._args import fixed_array, to_int

    if isinstance(keypoints, (tuple, list)):
        points = []
        for item in keypoints:
            x, y, a = (to_int(v) for v in fixed_array(item, 3))
            points.append((x, y, int(_fmath.c_mod(a, 360))))
    elif isinstance(keypoints, KeyPoints):
        points = [(k.x, k.y, k.angle % 360) for k in keypoints._kpts]
    else:
        raise TypeError("Expected kp_desc")
    for x, y, angle in points:
        si = _fmath.ftoi(_fmath.SIN[angle] * np.float32(size))
        co = _fmath.ftoi(_fmath.COS[angle] * np.float32(size))
        img._line(x, y, x + co, y + si, c, thickness)
        img._circle(x, y, int(_fmath.cdiv(size - 2, 2)), c, thickness, fill)
