"""``find_apriltags``: the firmware's AprilTag 2 detector (``apriltag.c``) on top of ``_quads``.

Quads (black border inside white), refined edges, a homography per quad, the family decode
(border gray models, bit sampling, quick decode with the family's Hamming threshold and 4
rotations), reconciliation of overlapping duplicates, then the outputs ``imlib_find_apriltags``
builds: truncated corners (``p[3]..p[0]``), centroid, ``decision_margin / 255`` and the pose from
``homography_to_pose(H, -fx, fy, cx, cy)``. ``goodness`` is 0: the firmware does not refine the pose.

Where the arithmetic comes from: apriltag.c ``#define``s ``double`` as ``float`` and the firmware
builds it with ``-Os -ffast-math -fsingle-precision-constant``, so every formula here is float32 in
the order GCC emits it (read from its optimised tree dump; ``tests/firmware/test_image_apriltag_decode.py``
lists the regroupings and checks them against the mirror's C): the gray models' solve, the rows of
``homography_project``, the margin sums of ``quad_decode`` and the ``/ 255`` scaling. The two SVDs
(the homography's null vector, the polar decomposition of the pose) are ``_apriltag_svd``'s port of
the firmware's float32 Jacobi SVD. All of it is the no-FMA build (the golden cases' ``expected_nofma``).

Code tables: the families come from OpenCV's AprilTag dictionaries (TAG16H5, TAG25H9, TAG36H10,
TAG36H11; their grids turned 180 degrees read as the firmware's 64-bit codes, checked on every
code). ARTOOLKIT is generated: ARToolKitPlus's "simple ID" markers put the 9-bit id into each of
the four 9-bit fields of the 36-bit code, XORed with that field's fixed mask, so marker ``id``'s
code is ``(id ^ m0, id ^ m1, id ^ m2, id ^ m3)`` packed most significant first (a test reads the
firmware's 512 codes from the mirror and compares). TAG25H7 (not among OpenCV's dictionaries) is
generated: ``maixemu/tools/apriltag_families.py`` re-implements the 2010 AprilTag generator's
greedy lexicode search (it reproduces tag16h5 and the start of the other families code for code)
and wrote its 242 codes to ``_tag25h7`` (a test compares them with the firmware's table).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from . import _args
from . import _fmath as fm
from ._fmath import F, fast_atan2f, fsqrt, ftoi

TAG16H5, TAG25H7, TAG25H9, TAG36H10, TAG36H11, ARTOOLKIT = 1, 2, 4, 8, 16, 32
#: flag -> (OpenCV dictionary, d, h) in the order the firmware adds them to the detector
_FAMILIES = ((TAG16H5, "DICT_APRILTAG_16h5", 4, 5), (TAG25H7, None, 5, 7), (TAG25H9, "DICT_APRILTAG_25h9", 5, 9),
             (TAG36H10, "DICT_APRILTAG_36h10", 6, 10), (TAG36H11, "DICT_APRILTAG_36h11", 6, 11),
             (ARTOOLKIT, None, 6, 7))
#: ARToolKitPlus simple-ID field masks (9 bits each, most significant field first)
ARTOOLKIT_MASKS = (0x0DB, 0x109, 0x14E, 0x027)


@lru_cache(maxsize=None)
def family_codes(flag: int) -> np.ndarray:
    """The family's codes as uint64 (row-major bits, most significant first)."""
    import cv2

    if flag == TAG25H7:
        from ._tag25h7 import CODES

        return np.array(CODES, np.uint64)
    if flag == ARTOOLKIT:
        ids = np.arange(512, dtype=np.uint64)
        out = np.zeros(512, np.uint64)
        for field, mask in enumerate(ARTOOLKIT_MASKS):
            out |= (ids ^ np.uint64(mask)) << np.uint64(9 * (3 - field))
        return out

    name, d = next((n, d) for f, n, d, _ in _FAMILIES if f == flag)
    aruco = cv2.aruco
    bl = aruco.getPredefinedDictionary(getattr(aruco, name)).bytesList
    out = np.zeros(bl.shape[0], np.uint64)
    weights = (np.uint64(1) << np.arange(d * d - 1, -1, -1, dtype=np.uint64))
    for i in range(bl.shape[0]):
        grid = np.rot90(aruco.Dictionary.getBitsFromByteList(bl[i:i + 1], d), 2).astype(np.uint64)
        out[i] = (grid.ravel() * weights).sum()
    return out


def _rotate90(w: int, d: int) -> int:
    wr = 0
    for r in range(d - 1, -1, -1):
        for c in range(d):
            b = r + d * c
            wr = (wr << 1) | ((w >> b) & 1)
    return wr


def quick_decode(flag: int, d: int, h: int, rcode: int):
    """``quick_decode_codeword``: (id, hamming, rotation), or None."""
    codes = family_codes(flag)
    threshold = max(h - d - 1, 0)
    for ridx in range(4):
        ham = np.bitwise_count(codes ^ np.uint64(rcode))
        hit = np.flatnonzero(ham <= threshold)
        if hit.size:
            return int(hit[0]), int(ham[hit[0]]), ridx
        rcode = _rotate90(rcode, d)
    return None


# ---------------------------------------------------------------------- homographies
def homography_compute(corr) -> np.ndarray | None:
    """``homography_compute`` (SVD flag): the 9x9 normal matrix in float32, its null vector."""
    c = np.asarray(corr, F)
    n = F(c.shape[0])
    sums = [F(0)] * 4
    for row in c:
        for k in range(4):
            sums[k] = sums[k] + row[k]
    x_cx, x_cy, y_cx, y_cy = (s / n for s in sums)
    A = np.zeros((9, 9), F)
    for row in c:
        wx, wy = row[0] - x_cx, row[1] - x_cy
        ix, iy = row[2] - y_cx, row[3] - y_cy
        r0 = np.array([F(0), F(0), F(0), -wx, -wy, F(-1), wx * iy, wy * iy, iy], F)
        r1 = np.array([wx, wy, F(1), F(0), F(0), F(0), -wx * ix, -wy * ix, -ix], F)
        r2 = np.array([-wx * iy, -wy * iy, -iy, wx * ix, wy * ix, ix, F(0), F(0), F(0)], F)
        for r in (r0, r1, r2):
            A = (A + np.outer(r, r).astype(F)).astype(F)
    A = np.triu(A) + np.triu(A, 1).T
    if not np.all(np.isfinite(A)):
        return None
    from . import _apriltag_svd as svd32

    U, _, _ = svd32.svd([list(row) for row in A])
    H = [[U[3 * i + j][8] for j in range(3)] for i in range(3)]
    Tx = [[F(1), F(0), -x_cx], [F(0), F(1), -x_cy], [F(0), F(0), F(1)]]
    Ty = [[F(1), F(0), y_cx], [F(0), F(1), y_cy], [F(0), F(0), F(1)]]
    return np.array(svd32._multiply(svd32._multiply(Ty, H), Tx), F)  # matd_op("M*M*M"), left to right


def _project_rows(H: np.ndarray, x, y):
    """``homography_project``'s three sums in the order GCC ``-Os -ffast-math`` emits them.

    Its reassociation pass regroups the second and third rows (the ones indexed through
    ``H->ncols``) as ``(H[r][0]*x + H[r][2]) + H[r][1]*y``; the first stays
    ``(H[0][0]*x + H[0][1]*y) + H[0][2]``. The quotients are two divisions by ``zz``."""
    xx = H[0, 0] * x + H[0, 1] * y + H[0, 2]
    yy = (H[1, 0] * x + H[1, 2]) + H[1, 1] * y
    zz = (H[2, 0] * x + H[2, 2]) + H[2, 1] * y
    with np.errstate(divide="ignore", invalid="ignore"):
        return xx / zz, yy / zz


def project(H: np.ndarray, x, y) -> tuple[np.float32, np.float32]:
    return _project_rows(H, F(x), F(y))


def project_many(H: np.ndarray, x: np.ndarray, y: np.ndarray):
    return _project_rows(H, x.astype(F), y.astype(F))


def homography_to_pose(H: np.ndarray, fx, fy, cx, cy) -> np.ndarray:
    fx, fy, cx, cy = F(fx), F(fy), F(cx), F(cy)
    R20, R21, TZ = H[2, 0], H[2, 1], H[2, 2]
    R00 = (H[0, 0] - cx * R20) / fx
    R01 = (H[0, 1] - cx * R21) / fx
    TX = (H[0, 2] - cx * TZ) / fx
    R10 = (H[1, 0] - cy * R20) / fy
    R11 = (H[1, 1] - cy * R21) / fy
    TY = (H[1, 2] - cy * TZ) / fy
    length1 = fsqrt(R00 * R00 + R10 * R10 + R20 * R20)
    length2 = fsqrt(R01 * R01 + R11 * R11 + R21 * R21)
    s = F(1.0) / fsqrt(length1 * length2)
    if TZ > 0:
        s = s * F(-1)
    R20, R21, TZ, R00, R01, TX, R10, R11, TY = (v * s for v in (R20, R21, TZ, R00, R01, TX, R10, R11, TY))
    R02 = R10 * R21 - R20 * R11
    R12 = R20 * R01 - R00 * R21
    R22 = R00 * R11 - R10 * R01
    from . import _apriltag_svd as svd32

    U, _, V = svd32.svd([[F(R00), F(R01), F(R02)], [F(R10), F(R11), F(R12)], [F(R20), F(R21), F(R22)]])
    R = np.array(svd32._multiply(U, svd32._transpose(V)), F)  # matd_op("M*M'", U, V)
    pose = np.zeros((4, 4), F)
    pose[:3, :3] = R
    pose[:3, 3] = (TX, TY, TZ)
    pose[3, 3] = 1
    return pose


# ---------------------------------------------------------------------- decoding
class _GrayModel:
    """``struct graymodel``: least-squares plane intensity = C0 x + C1 y + C2."""

    def __init__(self):
        self.A = [F(0)] * 6  # 00 01 02 11 12 22
        self.B = [F(0)] * 3
        self.C = [F(0)] * 3

    def add(self, x, y, g):
        x, y, g = F(x), F(y), F(g)
        a = self.A
        a[0] = a[0] + x * x
        a[1] = a[1] + x * y
        a[2] = a[2] + x
        a[3] = a[3] + y * y
        a[4] = a[4] + y
        a[5] = a[5] + F(1)
        b = self.B
        b[0] = b[0] + x * g
        b[1] = b[1] + y * g
        b[2] = b[2] + g

    def solve(self):
        """``mat33_sym_solve``: Cholesky of the upper-triangle A, triangular inverse, two products."""
        A0, A1, A2, A4, A5, A8 = self.A
        with np.errstate(divide="ignore", invalid="ignore"):
            L0 = fsqrt(A0)
            L3 = A1 / L0
            L6 = A2 / L0
            L4 = fsqrt(A4 - L3 * L3)
            L7 = (A5 - L3 * L6) / L4
            L8 = fsqrt(A8 - L6 * L6 - L7 * L7)
            M0 = F(1) / L0
            M3 = -L3 * M0 / L4
            M4 = F(1) / L4
            M6 = (-L6 * M0 - L7 * M3) / L8
            M7 = -L7 * M4 / L8
            M8 = F(1) / L8
            B0, B1, B2 = self.B
            t1 = M3 * B0 + M4 * B1
            t2 = M6 * B0 + M7 * B1 + M8 * B2
            # -ffast-math folds ``M0*tmp[0]`` = ``M0*(M0*B0)`` into ``B0*(M0*M0)`` (a "powmult")
            self.C = [B0 * (M0 * M0) + M3 * t1 + M6 * t2, M4 * t1 + M7 * t2, M8 * t2]

    def interpolate(self, x, y):
        c = self.C
        return c[0] * F(x) + c[1] * F(y) + c[2]


def quad_decode(flag: int, d: int, h: int, im: np.ndarray, H: np.ndarray):
    """``quad_decode``: (decision margin, (id, hamming, rotation) or None)."""
    ih, iw = im.shape
    bb = F(1)
    n = F(2) * bb + F(d)
    wb = F(1.0)
    patterns = (
        (F(0) - wb / F(2.0), F(0.5), 0, 1, 1),
        (F(0) + bb / F(2.0), F(0.5), 0, 1, 0),
        (F(2) * bb + F(d) + wb / F(2.0), F(0.5), 0, 1, 1),
        (F(2) * bb + F(d) - bb / F(2.0), F(0.5), 0, 1, 0),
        (F(0.5), -wb / F(2.0), 1, 0, 1),
        (F(0.5), bb / F(2.0), 1, 0, 0),
        (F(0.5), F(2) * bb + F(d) + wb / F(2.0), 1, 0, 1),
        (F(0.5), F(2) * bb + F(d) - bb / F(2.0), 1, 0, 0),
    )
    white, black = _GrayModel(), _GrayModel()
    count = 2 + d
    for p0, p1, p2, p3, is_white in patterns:
        i = np.arange(count).astype(F)
        tagx = F(2) * ((p0 + i * F(p2)) / n - F(0.5))
        tagy = F(2) * ((p1 + i * F(p3)) / n - F(0.5))
        px, py = project_many(H, tagx, tagy)
        model = white if is_white else black
        for k in range(count):
            ix, iy = ftoi(px[k]), ftoi(py[k])
            if ix < 0 or iy < 0 or ix >= iw or iy >= ih:
                continue
            model.add(tagx[k], tagy[k], int(im[iy, ix]))
    white.solve()
    black.solve()
    if white.interpolate(0, 0) - black.interpolate(0, 0) < 0:
        return F(-1), None
    black_score = white_score = F(0)
    black_count = white_count = F(1)
    rcode = 0
    for bitidx in range(d * d):
        bitx, bity = bitidx % d, bitidx // d
        tagx = F(2) * ((bb + F(bitx) + F(0.5)) / n - F(0.5))
        tagy = F(2) * ((bb + F(bity) + F(0.5)) / n - F(0.5))
        px, py = project(H, tagx, tagy)
        rcode <<= 1
        ix, iy = ftoi(px), ftoi(py)
        if ix < 0 or iy < 0 or ix >= iw or iy >= ih:
            continue
        v = F(int(im[iy, ix]))
        thresh = (black.interpolate(tagx, tagy) + white.interpolate(tagx, tagy)) / F(2.0)
        # ``score += v - thresh`` as -ffast-math reassociates it: ``(v + score) - thresh`` for white,
        # ``(score - v) + thresh`` for black
        if v > thresh:
            white_score = (v + white_score) - thresh
            white_count = white_count + F(1)
            rcode |= 1
        else:
            black_score = (black_score - v) + thresh
            black_count = black_count + F(1)
    entry = quick_decode(flag, d, h, rcode)
    a, b = white_score / white_count, black_score / black_count
    return (a if a < b else b), entry


def _table_sincos(theta) -> tuple[np.float32, np.float32]:
    """The ``cos``/``sin`` macros of apriltag.c (512-entry table with interpolation)."""
    from ._quads import table_cos, table_sin

    return table_cos(theta), table_sin(theta)


def detect(im: np.ndarray, families: int) -> list[dict]:
    from . import _quads

    fams = [(f, d, h) for f, _, d, h in _FAMILIES if families & f]
    detections = []
    for quad in _quads.detect_quads(im, override_mode=False):
        q = _quads.refine_edges(im, quad)
        corr = [((-1 if i in (0, 3) else 1), (-1 if i in (0, 1) else 1), q[i][0], q[i][1]) for i in range(4)]
        H = homography_compute(corr)
        if H is None or not np.all(np.isfinite(H)) or np.linalg.det(H.astype(np.float64)) == 0:
            continue
        for flag, d, h in fams:
            margin, entry = quad_decode(flag, d, h, im, H)
            if entry is None or not margin >= 0:
                continue
            tag_id, hamming, rotation = entry
            theta = F(-rotation) * F(math.pi) / F(2.0)
            c, s = _table_sincos(theta)
            R = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], F)
            DH = (H @ R).astype(F)
            center = project(DH, 0, 0)
            p = []
            for i in range(4):
                tcx = 1 if i in (1, 2) else -1
                tcy = 1 if i < 2 else -1
                p.append(project(DH, tcx, tcy))
            detections.append(dict(family=flag, id=tag_id, hamming=hamming, goodness=F(0), margin=F(margin),
                                   H=DH, c=center, p=p))
    detections = _reconcile(detections)
    detections.sort(key=lambda det: det["id"])
    return detections


def _reconcile(dets: list[dict]) -> list[dict]:
    from ._quads import _prefer_smaller, polygons_overlap

    dets = list(dets)
    i0 = 0
    while i0 < len(dets):
        a = dets[i0]
        i1 = i0 + 1
        restart = False
        while i1 < len(dets):
            b = dets[i1]
            if a["id"] != b["id"] or a["family"] != b["family"] or not polygons_overlap(a["p"], b["p"]):
                i1 += 1
                continue
            pref = _prefer_smaller(0, a["hamming"], b["hamming"])
            pref = _prefer_smaller(pref, -a["margin"], -b["margin"])
            pref = _prefer_smaller(pref, -a["goodness"], -b["goodness"])
            for i in range(4):
                pref = _prefer_smaller(pref, a["p"][i][0], b["p"][i][0])
                pref = _prefer_smaller(pref, a["p"][i][1], b["p"][i][1])
            if pref < 0:
                del dets[i1]
                continue
            del dets[i0]
            restart = True
            break
        if not restart:
            i0 += 1
    return dets


#: ``x / 255.0`` under ``-ffast-math -fsingle-precision-constant`` is ``x * (1.0f / 255.0f)``
#: (``-freciprocal-math`` turns a division by a constant into a multiply by its float reciprocal)
_INV_255 = F(1) / F(255)


def find_apriltags(gray_full: np.ndarray, roi, families: int, fx, fy, cx, cy) -> list[dict]:
    rx, ry, rw, rh = roi
    im = np.ascontiguousarray(gray_full[ry:ry + rh, rx:rx + rw])
    out = []
    for det in detect(im, families):
        pts = [(ftoi(px) + rx, ftoi(py) + ry) for px, py in det["p"]]
        x0, y0 = pts[0]
        x1, y1 = x0, y0
        for x, y in pts[1:]:
            x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
        pose = homography_to_pose(det["H"], -F(fx), fy, cx, cy)
        xr = float(fast_atan2f(pose[2, 1], pose[2, 2]))
        yr = float(fast_atan2f(-pose[2, 0], fsqrt(pose[2, 1] * pose[2, 1] + pose[2, 2] * pose[2, 2])))
        zr = float(fast_atan2f(pose[1, 0], pose[0, 0]))
        out.append(dict(x=x0, y=y0, w=x1 - x0, h=y1 - y0, id=det["id"], family=det["family"],
                        cx=ftoi(det["c"][0]) + rx, cy=ftoi(det["c"][1]) + ry, rotation=zr,
                        decision_margin=float(F(det["margin"]) * _INV_255), hamming=det["hamming"],
                        goodness=float(F(det["goodness"]) * _INV_255),
                        x_translation=float(pose[0, 3]), y_translation=float(pose[1, 3]),
                        z_translation=float(pose[2, 3]), x_rotation=xr, y_rotation=yr, z_rotation=zr,
                        corners=(pts[3], pts[2], pts[1], pts[0])))
    return out


class AprilTag:
    """``apriltag``: the firmware's tag object (methods, and the tuple of its first 18 values)."""

    _fields = ("x", "y", "w", "h", "id", "family", "cx", "cy", "rotation", "decision_margin", "hamming",
               "goodness", "x_translation", "y_translation", "z_translation", "x_rotation", "y_rotation",
               "z_rotation")

    def __init__(self, **v):
        self._v = v

    def corners(self):
        return self._v["corners"]

    def rect(self):
        return (self._v["x"], self._v["y"], self._v["w"], self._v["h"])

    def __getitem__(self, i):
        return tuple(self._v[f] for f in self._fields)[i]

    def __len__(self):
        return len(self._fields)

    def __repr__(self) -> str:
        v = self._v
        return ('{"x":%d, "y":%d, "w":%d, "h":%d, "id":%d, "family":%d, "cx":%d, "cy":%d, "rotation":%f, '
                '"decision_margin":%f, "hamming":%d, "goodness":%f, "x_translation":%f, "y_translation":%f, '
                '"z_translation":%f, "x_rotation":%f, "y_rotation":%f, "z_rotation":%f}'
                % tuple(v[f] for f in self._fields))


for _name in AprilTag._fields:
    setattr(AprilTag, _name, (lambda key: (lambda self: self._v[key]))(_name))


class AprilTagMixin:
    def find_apriltags(self, *args, **kwargs):
        """AprilTags as the firmware finds them: ``roi``, ``families`` (``image.TAG36H11``),
        ``fx``/``fy`` (focal lengths in pixels, default that of the OV7725's 2.8 mm lens), ``cx``/
        ``cy`` (the image centre). The roi must have fewer than 65536 pixels."""
        from ._find import _gray8

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        if roi[2] * roi[3] >= 65536:
            raise OSError("The maximum supported resolution for find_apriltags() is < 64K pixels.")
        if roi[2] < 4 or roi[3] < 4:
            return []
        families = _args.to_int(_args.pick(args, 1, kwargs, "families", TAG36H11))
        w, h = self.width(), self.height()
        fx = _args.to_float(_args.pick(args, 2, kwargs, "fx", float(F(F(2.8 / 3.984) * F(w)))))
        fy = _args.to_float(_args.pick(args, 3, kwargs, "fy", float(F(F(2.8 / 2.952) * F(h)))))
        cx = _args.to_float(_args.pick(args, 4, kwargs, "cx", float(F(w) * F(0.5))))
        cy = _args.to_float(_args.pick(args, 5, kwargs, "cy", float(F(h) * F(0.5))))
        found = find_apriltags(_gray8(self), roi, families, F(fx), F(fy), F(cx), F(cy))
        return [AprilTag(**d) for d in found]
