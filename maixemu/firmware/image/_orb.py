"""ORB as the firmware has it (``orb.c``, ``fast.c``, ``agast.c``, ``py_image.c``): ``find_keypoints``,
the ``kp_desc`` object and its file format, ``match_descriptor``'s matcher and outlier filter, the
``kp_match`` result and ``draw_keypoints``.

What is here is integer logic ported as the C does it, so it is exact: the descriptor distance is
orb.c's modified popcount (a 2-bit field that differs counts once, the WTA_K=4 distance), the
ratio test divides as RISC-V does (a zero divisor gives -1), the cross-check, the angle histogram,
the centroid/rect of the matches and the ``matched`` flags, which — as on the device — stay set on
the second keypoint set between calls and feed ``filter_outliers``.

``find_keypoints`` is ``orb_find_keypoints``: per octave (scale 1, f, f^2 ... while the ROI keeps
more than two patches) the image scaled by fixed-point nearest sampling, blurred by the K210's KPU
(``_edges.kpu_blur``, the firmware's ``imlib_sepconv3``), corners by FAST-9 or AGAST-5/8 (the
segment tests their decision trees implement, scores by the trees' bisection, the firmware's 3x3
non-maximum suppression and its 2000-corner cap), the intensity-centroid angle quantised to 15
degrees, and the rBRIEF descriptor (4-point groups, 2 bits each) on the pattern turned by that
angle; finally the MicroPython quicksort by score and the ``max_keypoints`` cut.

The descriptor's sampling pattern is OpenCV's learned ``bit_pattern_31_`` (the firmware's
``sample_pattern``). It is not copied here: :func:`sampling_pattern` reads it out of the installed
OpenCV by running its ORB on probe images (step edges along x, y and x+y, whose blurred values
order the pattern's points) — a test compares the result with the firmware's table.
"""

from __future__ import annotations

import functools
import struct

import numpy as np

from . import _fmath
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)

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


# ---------------------------------------------------------------------- find_keypoints
PATCH_SIZE = 31
HALF_PATCH = PATCH_SIZE // 2
MAX_CORNERS = 2000


def u_max() -> list[int]:
    """OpenCV's (and orb.c's) circular patch half-widths for a 31-pixel patch."""
    import math

    vmax = math.floor(HALF_PATCH * math.sqrt(2.0) / 2 + 1)
    vmin = math.ceil(HALF_PATCH * math.sqrt(2.0) / 2)
    um = [0] * (HALF_PATCH + 2)
    for v in range(vmax + 1):
        um[v] = int(round(math.sqrt(HALF_PATCH * HALF_PATCH - v * v)))  # cvRound: no .5 cases here
    v0 = 0
    for v in range(HALF_PATCH, vmin - 1, -1):
        while um[v0] == um[v0 + 1]:
            v0 += 1
        um[v] = v0
        v0 += 1
    return um


@functools.lru_cache(maxsize=1)
def sampling_pattern() -> np.ndarray:
    """The 512 sampling points (x, y) of the descriptor, read out of OpenCV's ORB (see the module doc)."""
    return _probe_pattern()


def _probe_pattern() -> np.ndarray:
    import cv2

    n, c = 101, 50
    try:
        orb = cv2.ORB.create(nfeatures=1, scaleFactor=1.2, nlevels=1, edgeThreshold=31, firstLevel=0, WTA_K=2,
                            patchSize=PATCH_SIZE)
    except AttributeError as exc:  # pragma: no cover - an OpenCV without features2d
        raise NotImplementedError("image.Image.find_keypoints needs OpenCV's ORB (features2d) to read its "
                                  f"sampling pattern: {exc}") from None
    yy, xx = np.mgrid[0:n, 0:n] - c
    offsets = np.arange(-30, 31)
    found = {}
    for name, u in (("x", xx), ("y", yy), ("s", xx + yy)):
        bits, values = [], []
        for e in range(-20, 21):
            for sign in (1, -1):
                img = np.where(sign * (u - e) >= 0, 255, 0).astype(np.uint8)
                _, d = orb.compute(img, [cv2.KeyPoint(float(c), float(c), PATCH_SIZE, 0.0, 0, 0)])
                bits.append(np.unpackbits(d[0], bitorder="little"))  # pair 8i + j -> byte i, bit j
                b = cv2.GaussianBlur(img, (7, 7), sigmaX=2, sigmaY=2, borderType=cv2.BORDER_REFLECT_101).astype(np.int64)
                if name == "x":
                    values.append(b[c, c + offsets])
                elif name == "y":
                    values.append(b[c + offsets, c])
                else:  # along x + y = v: the blurred step depends on x + y only
                    values.append(b[c + offsets // 2, c + offsets - offsets // 2])
        B, V = np.array(bits), np.array(values)  # probes x 256, probes x 61
        less = V[:, :, None] < V[:, None, :]  # probes x a x b: value(a) < value(b)
        found[name] = (B, less)

    def solutions(name, k, lo, hi):
        B, less = found[name]
        sub = less[:, lo + 30:hi + 31, lo + 30:hi + 31]
        ok = np.all(sub == B[:, k][:, None, None].astype(bool), axis=0)
        return [(a + lo, b + lo) for a, b in zip(*np.nonzero(ok))]

    pts = np.zeros((512, 2), np.int64)
    for k in range(256):
        cx, cy = solutions("x", k, -15, 15), solutions("y", k, -15, 15)
        if len(cx) != 1 or len(cy) != 1:  # equal x (or y) of the two points: the diagonal decides
            cs = set(solutions("s", k, -30, 30))
            sols = [(ax, ay, bx, by) for ax, bx in cx for ay, by in cy if (ax + ay, bx + by) in cs]
        else:
            sols = [(cx[0][0], cy[0][0], cx[0][1], cy[0][1])]
        if len(sols) != 1:
            raise NotImplementedError("image.Image.find_keypoints: OpenCV's ORB pattern could not be read "
                                      f"from this OpenCV ({cv2.__version__})")
        ax, ay, bx, by = sols[0]
        pts[2 * k] = (ax, ay)
        pts[2 * k + 1] = (bx, by)
    return pts


def _scale_gray(gray: np.ndarray, w: int, h: int) -> np.ndarray:
    """orb.c's ``image_scale``: fixed-point nearest sampling."""
    sh, sw = gray.shape
    xr = ((sw << 16) // w) + 1
    yr = ((sh << 16) // h) + 1
    sy = (np.arange(h) * yr) >> 16
    sx = (np.arange(w) * xr) >> 16
    return gray[sy][:, sx]


def _arcs(diff: np.ndarray, length: int) -> np.ndarray:
    """Per pixel, the largest over circular runs of ``length`` ring samples of the run's minimum."""
    n = diff.shape[-1]
    ext = np.concatenate([diff, diff[..., :length - 1]], axis=-1)
    best = ext[..., 0:length].min(axis=-1)
    for start in range(1, n):
        best = np.maximum(best, ext[..., start:start + length].min(axis=-1))
    return best


@kernel
def _segment_scores(p, x0, y0, ring_x, ring_y, arc, threshold, best):
    """The segment test's score per pixel (numba): over the circular runs of ``arc`` ring samples,
    the largest smallest excess over the centre (bright) or under it (dark), as :func:`_arcs` gives
    it; a side with fewer than ``arc`` samples beyond ``threshold`` cannot score above it and is
    not computed (a pixel with neither gets ``threshold``: only scores above it are read)."""
    n = ring_x.shape[0]
    d = np.empty(n, np.int64)
    h, w = best.shape
    for yy in range(h):
        y = y0 + yy
        for xx in range(w):
            x = x0 + xx
            c = p[y, x]
            up = 0
            down = 0
            for k in range(n):
                v = p[y + ring_y[k], x + ring_x[k]] - c
                d[k] = v
                if v > threshold:
                    up += 1
                if -v > threshold:
                    down += 1
            score = threshold  # stands for "at most threshold" when no run can pass either way
            for sign in range(2):
                if (up if sign == 0 else down) < arc:
                    continue
                for start in range(n):
                    m = d[start] if sign == 0 else -d[start]
                    for j in range(1, arc):
                        v = d[(start + j) % n]
                        if sign == 1:
                            v = -v
                        if v < m:
                            m = v
                    if m > score:
                        score = m
            best[yy, xx] = score
    return 0


_FAST_RING = ((0, 3), (1, 3), (2, 2), (3, 1), (3, 0), (3, -1), (2, -2), (1, -3), (0, -3), (-1, -3), (-2, -2),
              (-3, -1), (-3, 0), (-3, 1), (-2, 2), (-1, 3))  # (dx, dy), fast.c's make_offsets
_AGAST_RING = ((-1, 0), (-1, -1), (0, -1), (1, -1), (1, 0), (1, 1), (0, 1), (-1, 1))  # agast.c's 5_8 pattern


def _corners(img: np.ndarray, roi, threshold: int, agast: bool):
    """Corners of the segment test (``fast9_detect``/``agast58_detect``) and their bisection scores, in
    raster order, capped at 2000 as the firmware's buffer."""
    rx, ry, rw, rh = roi
    ring: tuple[tuple[int, int], ...]
    if agast:
        ring, arc, x0, x1, y0, y1 = _AGAST_RING, 5, rx + 1, rx + rw - 1, ry + 1, ry + rh - 1
    else:
        ring, arc, x0, x1, y0, y1 = _FAST_RING, 9, rx + 3, rx + rw - 3, ry + 3, ry + rh - 3
    if x1 <= x0 or y1 <= y0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64)
    p = img.astype(np.int64)
    best = np.empty((y1 - y0, x1 - x0), np.int64)
    ring_x = np.array([dx for dx, _ in ring], np.int64)
    ring_y = np.array([dy for _, dy in ring], np.int64)
    if not compiled() or _segment_scores.attempt(p, x0, y0, ring_x, ring_y, arc, threshold, best) is NOT_SERVED:
        centre = p[y0:y1, x0:x1]
        samples = np.stack([p[y0 + dy:y1 + dy, x0 + dx:x1 + dx] for dx, dy in ring], axis=-1)
        bright = _arcs(samples - centre[..., None], arc)  # the run's smallest excess over the centre
        dark = _arcs(centre[..., None] - samples, arc)
        best = np.maximum(bright, dark)
    ys, xs = np.nonzero(best > threshold)  # corner: a run all > centre + b (or all < centre - b)
    ys, xs = ys[:MAX_CORNERS] + y0, xs[:MAX_CORNERS] + x0
    scores = best[ys - y0, xs - x0] - 1  # the largest b the tree still accepts
    return xs, ys, scores


def _nonmax(xs, ys, scores):
    """fast.c/agast.c ``nonmax_suppression``: drop a corner when a corner among its 8 neighbours
    scores at least as much."""
    if not xs.size:
        return []
    h, w = int(ys.max()) + 3, int(xs.max()) + 3
    s = np.full((h, w), -1, np.int64)
    s[ys + 1, xs + 1] = scores
    nb = np.full(xs.shape, -1, np.int64)
    for dy in (-1, 0, 1):
        for dx in (-1, 0, 1):
            if dx or dy:
                nb = np.maximum(nb, s[ys + 1 + dy, xs + 1 + dx])
    keep = nb < scores
    return [(int(x), int(y), int(sc)) for x, y, sc, k in zip(xs, ys, scores, keep) if k]


def _angle(p: np.ndarray, x: int, y: int) -> int:
    """``comp_angle`` (``p``: the octave's pixels as int64): intensity-centroid orientation,
    truncated to whole degrees, then to 15."""
    um = u_max()
    m01 = m10 = 0
    u = np.arange(-HALF_PATCH, HALF_PATCH + 1)
    m10 += int((u * p[y, x + u]).sum())
    for v in range(1, HALF_PATCH + 1):
        d = um[v]
        uu = np.arange(-d, d + 1)
        plus, minus = p[y + v, x + uu], p[y - v, x + uu]
        m01 += v * int((plus - minus).sum())
        m10 += int((uu * (plus + minus)).sum())
    F = np.float32
    ang = int(np.arctan2(F(m01), F(m10)) * (F(180.0) / F(np.pi)))
    if ang < 0:
        ang += 360
    return ang - ang % 15


def _c_roundf(v) -> np.ndarray:
    """libm ``roundf`` of float32 values: halves away from zero (in float64, where ``|v| + 0.5`` is exact)."""
    v = np.asarray(v, np.float64)
    return (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int64)


def _describe(img: np.ndarray, x: int, y: int, angle: int) -> bytes:
    """The rBRIEF descriptor of orb.c: 32 bytes, each from four groups of four points, 2 bits a group."""
    F = np.float32
    a, b = _fmath.COS[angle], _fmath.SIN[angle]
    pat = sampling_pattern().astype(F)
    px, py = pat[:, 0], pat[:, 1]
    sx = _c_roundf((px * a - py * b).astype(F))
    sy = _c_roundf((px * b + py * a).astype(F))
    vals = img[y + sy, x + sx].astype(np.int64).reshape(32, 4, 4)  # byte, group, point
    t0, t1, t2, t3 = vals[..., 0], vals[..., 1], vals[..., 2], vals[..., 3]
    u = np.where(t1 > t0, 1, 0)
    t0 = np.maximum(t0, t1)
    v = np.where(t3 > t2, 3, 2)
    t2 = np.maximum(t2, t3)
    k = np.where(t0 > t2, u, v)
    return bytes((k * (1 << (2 * np.arange(4)))).sum(axis=1).astype(np.uint8).tolist())


def _quicksort(items: list, comp) -> None:
    """MicroPython's ``mp_quicksort`` (omv array.c): in place, not stable — ties land where it leaves them."""
    def qs(head: int, tail: int) -> None:
        while head < tail:
            h, t = head - 1, tail
            v = items[tail]
            while True:
                h += 1
                while h < t and comp(items[h], v) < 0:
                    h += 1
                t -= 1
                while h < t and comp(v, items[t]) < 0:
                    t -= 1
                if h >= t:
                    break
                items[h], items[t] = items[t], items[h]
            items[h], items[tail] = items[tail], items[h]
            if t - head < tail - h - 1:
                qs(head, t)
                head = h + 1
            else:
                qs(h + 1, tail)
                tail = t

    qs(0, len(items) - 1)


def find_keypoints(gray: np.ndarray, roi, threshold: int, normalized: bool, scale_factor: float,
                   max_keypoints: int, agast: bool) -> list[KeyPoint]:
    """``orb_find_keypoints`` on the image's gray values."""
    from ._edges import kpu_blur

    F = np.float32
    h0, w0 = gray.shape
    rx, ry, rw, rh = roi
    kpts: list[KeyPoint] = []
    scale = F(1.0)
    octave = 1
    while True:
        sw, sh = int(_c_roundf(F(w0) / scale)), int(_c_roundf(F(h0) / scale))
        r = (int(_c_roundf(F(rx) / scale)) + PATCH_SIZE, int(_c_roundf(F(ry) / scale)) + PATCH_SIZE,
             int(_c_roundf(F(rw) / scale)) - 2 * PATCH_SIZE, int(_c_roundf(F(rh) / scale)) - 2 * PATCH_SIZE)
        if r[2] <= 2 * PATCH_SIZE or r[3] <= 2 * PATCH_SIZE:
            break
        img = kpu_blur(_scale_gray(gray, sw, sh))
        wide = img.astype(np.int64)  # once per octave, not per keypoint
        for x, y, score in _nonmax(*_corners(img, r, threshold, agast)):
            angle = _angle(wide, x, y)
            desc = _describe(img, x, y, angle)
            kpts.append(KeyPoint(int(np.floor(F(x) * scale)), int(np.floor(F(y) * scale)), score, octave, angle, desc))
        if normalized:
            break
        scale = F(scale * F(scale_factor))
        octave += 1
    _quicksort(kpts, lambda a, b: b.score - a.score)  # kpt_comp: descending scores
    return kpts[:max_keypoints] if len(kpts) > max_keypoints else kpts
