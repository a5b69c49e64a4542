"""``find_apriltags``: the firmware's AprilTag 2 detector (``apriltag.c``) on top of ``_quads``.

Quads (black border inside white), refined edges, a homography per quad, the family decode
(border gray models, bit sampling, quick decode with the family's Hamming threshold and 4
rotations), reconciliation of overlapping duplicates, then the outputs ``imlib_find_apriltags``
builds: truncated corners (``p[3]..p[0]``), centroid, ``decision_margin / 255`` and the pose from
``homography_to_pose(H, -fx, fy, cx, cy)``. ``goodness`` is 0: the firmware does not refine the pose.

The work is done by the compiled kernels of ``_quadkernels`` (quads, refinement, homography, SVD,
decoding, poses), one call per step for all candidates; this module holds the families, the
reconciliation and the result objects. Where the arithmetic comes from: apriltag.c ``#define``s
``double`` as ``float`` and the firmware builds it with ``-Os -ffast-math
-fsingle-precision-constant``, so every formula is float32 in the order GCC emits it (read from its
optimised tree dump; ``tests/firmware/test_image_apriltag_decode.py`` lists the regroupings and
checks them against the mirror's C): the gray models' solve, the rows of ``homography_project``,
the margin sums of ``quad_decode`` and the ``/ 255`` scaling. The two SVDs (the homography's null
vector, the polar decomposition of the pose) are the firmware's float32 Jacobi SVD. All of it is
the no-FMA build (the golden cases' ``expected_nofma``).

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
from ._fmath import F, ftoi
from ._host import ImageHost

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
    if name is None:
        raise ValueError(f"unknown AprilTag family flag {flag}")
    aruco = cv2.aruco
    bl = aruco.getPredefinedDictionary(getattr(aruco, name)).bytesList
    out = np.zeros(bl.shape[0], np.uint64)
    weights = (np.uint64(1) << np.arange(d * d - 1, -1, -1, dtype=np.uint64))
    for i in range(bl.shape[0]):
        grid = np.rot90(aruco.Dictionary.getBitsFromByteList(bl[i:i + 1], d), 2).astype(np.uint64)
        out[i] = (grid.ravel() * weights).sum()
    return out


def _rotate90(w: int, d: int) -> int:
    """``rotate90``: the d x d bit grid of the code ``w`` turned a quarter."""
    from ._quads import kernels

    return int(kernels().rotate90(int(w), int(d)))


def quick_decode(flag: int, d: int, h: int, rcode: int):
    """``quick_decode_codeword``: (id, hamming, rotation), or None."""
    from ._quads import kernels

    codes = family_codes(flag).astype(np.int64)
    tag_id, hamming, rotation = kernels().quick_decode(codes, 0, codes.size, int(d), int(h), int(rcode))
    return None if tag_id < 0 else (int(tag_id), int(hamming), int(rotation))


# ---------------------------------------------------------------------- homographies
def homography_compute(corr) -> np.ndarray | None:
    """``homography_compute`` (SVD flag) of (world x, world y, image x, image y) rows; None when the
    normal matrix is not finite."""
    from ._quads import kernels, sin_table

    with np.errstate(all="ignore"):
        H, ok = kernels().homography_compute(np.ascontiguousarray(corr, F), sin_table())
    return H if ok else None


def project(H: np.ndarray, x, y) -> tuple[np.float32, np.float32]:
    """``homography_project`` of one point, in the order of operations the firmware's build uses."""
    from ._quads import kernels

    with np.errstate(all="ignore"):
        px, py = kernels().project(np.ascontiguousarray(H, F), F(x), F(y))
    return F(px), F(py)


def homography_to_pose(H: np.ndarray, fx, fy, cx, cy) -> np.ndarray:
    """``homography_to_pose``: the 4x4 float32 pose of a homography for a camera (fx, fy, cx, cy)."""
    from ._quads import kernels, sin_table

    with np.errstate(all="ignore"):
        return kernels().homography_to_pose(np.ascontiguousarray(H, F), F(fx), F(fy), F(cx), F(cy), sin_table())


# ---------------------------------------------------------------------- decoding
class _GrayModel:
    """``struct graymodel``: least-squares plane intensity = C0 x + C1 y + C2 (``A``: the upper
    triangle 00 01 02 11 12 22 of J'J, ``B``: J'g)."""

    def __init__(self):
        self.A = np.zeros(6, F)
        self.B = np.zeros(3, F)
        self.C = np.zeros(3, F)

    def add(self, x, y, g):
        from ._quads import kernels

        self.A, self.B = np.asarray(self.A, F), np.asarray(self.B, F)
        kernels().graymodel_add(self.A, self.B, F(x), F(y), F(g))

    def solve(self):
        from ._quads import kernels

        self.C = np.zeros(3, F)
        with np.errstate(all="ignore"):
            kernels().graymodel_solve(np.asarray(self.A, F), np.asarray(self.B, F), self.C)

    def interpolate(self, x, y):
        from ._quads import kernels

        return F(kernels().graymodel_interpolate(np.asarray(self.C, F), F(x), F(y)))


def quad_decode(flag: int, d: int, h: int, im: np.ndarray, H: np.ndarray):
    """``quad_decode``: (decision margin, (id, hamming, rotation) or None)."""
    from ._quads import kernels

    codes = family_codes(flag).astype(np.int64)
    with np.errstate(all="ignore"):
        margin, tag_id, hamming, rotation = kernels().quad_decode(
            np.ascontiguousarray(im, np.uint8), np.ascontiguousarray(H, F), int(d), int(h), codes, 0, codes.size)
    return F(margin), (None if tag_id < 0 else (int(tag_id), int(hamming), int(rotation)))


@lru_cache(maxsize=None)
def _family_tables(families: int):
    """The enabled families in the firmware's order: (flags, d, h, starts, counts) and all their codes
    (int64) in one array, as the decode kernel takes them (read-only, cached per families mask)."""
    fams = [(f, d, h) for f, _, d, h in _FAMILIES if families & f]
    codes = [family_codes(f).astype(np.int64) for f, _, _ in fams]
    counts = np.array([c.size for c in codes], np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    tables = (np.array([f for f, _, _ in fams], np.int64), np.array([d for _, d, _ in fams], np.int64),
              np.array([h for _, _, h in fams], np.int64), starts, counts,
              np.concatenate(codes) if codes else np.zeros(0, np.int64))
    for t in tables:
        t.setflags(write=False)
    return tables


@lru_cache(maxsize=1)
def _rotations() -> np.ndarray:
    """cos/sin (apriltag.c's table macros) of ``theta = -rotation * M_PI / 2.0`` for the 4 rotations."""
    from ._quads import table_cos, table_sin

    out = np.array([[table_cos(F(-r) * F(math.pi) / F(2.0)), table_sin(F(-r) * F(math.pi) / F(2.0))]
                    for r in range(4)], F)
    out.setflags(write=False)
    return out


def detect(im: np.ndarray, families: int) -> list[dict]:
    """``apriltag_detector_detect``: quads, refined, decoded with each family, reconciled, by id."""
    from . import _quads

    flags, ds, hs, starts, counts, codes = _family_tables(families)
    if flags.size == 0:
        return []
    im = np.ascontiguousarray(im, np.uint8)
    quads = _quads.detect_quads(im, override_mode=False)
    with np.errstate(all="ignore"):
        fam, ids, hamming, margins, Hs, centres, corners = _quads.kernels().decode_quads(
            im, quads, codes, ds, hs, starts, counts, _rotations(), _quads.sin_table())
    # reconcile: same id and family, overlapping: prefer small hamming, big margin, big goodness (0),
    # then the smaller corner coordinates
    keys = np.concatenate([hamming[:, None].astype(F), -margins[:, None], np.zeros((ids.size, 1), F),
                           corners.reshape(-1, 8)], axis=1)
    kept = _quads.reconcile(keys, corners, ids * 64 + fam)
    by_id = sorted(kept.tolist(), key=lambda i: ids[i])  # zarray_sort by id (glibc's qsort: stable)
    return [dict(family=int(flags[fam[i]]), id=int(ids[i]), hamming=int(hamming[i]), goodness=F(0),
                 margin=F(margins[i]), H=Hs[i], c=centres[i], p=corners[i]) for i in by_id]


#: ``x / 255.0`` under ``-ffast-math -fsingle-precision-constant`` is ``x * (1.0f / 255.0f)``
#: (``-freciprocal-math`` turns a division by a constant into a multiply by its float reciprocal)
_INV_255 = F(1) / F(255)


def find_apriltags(gray_roi: np.ndarray, roi, families: int, fx, fy, cx, cy) -> list[dict]:
    """``imlib_find_apriltags`` on the roi's gray pixels (``gray_roi``), positions in the image's."""
    from . import _quads

    rx, ry = roi[0], roi[1]
    dets = detect(gray_roi, families)
    if not dets:
        return []
    with np.errstate(all="ignore"):
        poses, rotations = _quads.kernels().tag_poses(np.array([d["H"] for d in dets], F), F(fx), F(fy), F(cx),
                                                      F(cy), _quads.sin_table())
    out = []
    for det, pose, (xr, yr, zr) in zip(dets, poses, rotations.tolist()):
        pts = [(ftoi(px) + rx, ftoi(py) + ry) for px, py in det["p"]]
        x0, y0 = pts[0]
        x1, y1 = x0, y0
        for x, y in pts[1:]:
            x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
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


class AprilTagMixin(ImageHost):
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
        found = find_apriltags(_gray8(self, roi), roi, families, F(fx), F(fy), F(cx), F(cy))
        return [AprilTag(**d) for d in found]
