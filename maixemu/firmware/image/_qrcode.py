"""``find_qrcodes``: the quirc 1.0 port inside the firmware (``qrcode.c``), identification and decoding.

Why a port and not a binding: the quirc the firmware carries is OpenMV's single-precision variant
(``float`` perspective transforms, ``fast_roundf`` = truncation, the moving-average threshold of
quirc 1.0, 254 regions, 32 capstones, 8 grids); the quirc a Python binding ships (pyquirc) is a
later one in double precision that rounds, and already reports a corner one pixel off on the
golden cases. Everything here follows the firmware's code and order of operations:

* threshold: the running averages over the row in both directions, carried from row to row;
* regions: span flood fills in the firmware's visiting order (corner searches take the first
  best span end), numbered in the order ``finder_scan`` touches them;
* capstones, grouping, timing scan, alignment search and the 5-pass perspective jiggle;
* decoding: format BCH, Reed-Solomon over GF(256) (Berlekamp-Massey), the data modes and ECI.

A fact kept from the firmware's version table: its version-21 alignment pattern row is 92 (the
QR standard says 94), which changes the cells read as data on version-21 codes.
"""

from __future__ import annotations

import math
from typing import Any
from functools import lru_cache

import numpy as np

from . import _args
from ._fmath import F
from ._jit import kernel
from ._host import ImageHost

PIXEL_WHITE, PIXEL_BLACK, PIXEL_REGION = 0, 1, 2
MAX_REGIONS = 254
MAX_CAPSTONES = 32
MAX_GRIDS = 8
MAX_VERSION = 40
MAX_PAYLOAD = 8896

# quirc_version_db: (bs, dw, ns) of the small blocks for ECC levels M, L, H, Q, versions 1..40
_RS = (
    "26,16,1 26,19,1 26,9,1 26,13,1 44,28,1 44,34,1 44,16,1 44,22,1 70,44,1 70,55,1 35,13,2 35,17,2 "
    "50,32,2 100,80,1 25,9,4 50,24,2 67,43,2 134,108,1 33,11,2 33,15,2 43,27,4 86,68,2 43,15,4 43,19,4 "
    "49,31,4 98,78,2 39,13,4 32,14,2 60,38,2 121,97,2 40,14,4 40,18,4 58,36,3 146,116,2 36,12,4 36,16,4 "
    "69,43,4 86,68,2 43,15,6 43,19,6 80,50,1 101,81,4 36,12,3 50,22,4 58,36,6 116,92,2 42,14,7 46,20,4 "
    "59,37,8 133,107,4 33,11,12 44,20,8 64,40,4 145,115,3 36,12,11 36,16,11 65,41,5 109,87,5 36,12,11 "
    "54,24,5 73,45,7 122,98,5 45,15,3 43,19,15 74,46,10 135,107,1 42,14,2 50,22,1 69,43,9 150,120,5 "
    "42,14,2 50,22,17 70,44,3 141,113,3 39,13,9 47,21,17 67,41,3 135,107,3 43,15,15 54,24,15 68,42,17 "
    "144,116,4 46,16,19 50,22,17 74,46,17 139,111,2 37,13,34 54,24,7 75,47,4 151,121,4 45,15,16 "
    "54,24,11 73,45,6 147,117,6 46,16,30 54,24,11 75,47,8 132,106,8 45,15,22 54,24,7 74,46,19 "
    "142,114,10 46,16,33 50,22,28 73,45,22 152,122,8 45,15,12 53,23,8 73,45,3 147,117,3 45,15,11 "
    "54,24,4 73,45,21 146,116,7 45,15,19 53,23,1 75,47,19 145,115,5 45,15,23 54,24,15 74,46,2 "
    "145,115,13 45,15,23 54,24,42 74,46,10 145,115,17 45,15,19 54,24,10 74,46,14 145,115,17 45,15,11 "
    "54,24,29 74,46,14 145,115,13 46,16,59 54,24,44 75,47,12 151,121,12 45,15,22 54,24,39 75,47,6 "
    "151,121,6 45,15,2 54,24,46 74,46,29 152,122,17 45,15,24 54,24,49 74,46,13 152,122,4 45,15,42 "
    "54,24,48 75,47,40 147,117,20 45,15,10 54,24,43 75,47,18 148,118,19 45,15,20 54,24,34"
)


def _data_bytes(v: int) -> int:
    """Codewords of a version (the raw data modules / 8)."""
    r = (16 * v + 128) * v + 64
    if v >= 2:
        n = v // 7 + 2
        r -= (25 * n - 10) * n - 55
        if v >= 7:
            r -= 36
    return r // 8


def _alignment(v: int) -> list[int]:
    """Alignment pattern rows/columns (the standard's, with quirc's 92 for version 21)."""
    if v == 1:
        return []
    n = v // 7 + 2
    step = 26 if v == 32 else ((v * 4 + n * 2 + 1) // (2 * n - 2)) * 2
    out = [6] + [4 * v + 10 - i * step for i in range(n - 2, -1, -1)]
    if v == 21:
        out[-1] = 92
    return out


_RS_PARAMS = [tuple(int(x) for x in t.split(",")) for t in _RS.split()]
#: per version 1..40: data_bytes, apat (alignment pattern), ecc (per level); index 0 is no version
VERSIONS: list[Any] = [None] + [dict(data_bytes=_data_bytes(v), apat=_alignment(v),
                          ecc=[_RS_PARAMS[(v - 1) * 4 + k] for k in range(4)]) for v in range(1, 41)]


def _gf(poly: int, size: int):
    exp = [0] * (size + 1)
    x = 1
    for i in range(size + 1):
        exp[i] = x
        x <<= 1
        if x & (size + 1):
            x ^= poly
    log = [0] * (size + 1)
    for i in range(size + 1):
        log[exp[i]] = i  # the last write wins: log[1] == size, as in the firmware's tables
    return exp, log


GF256_EXP, GF256_LOG = _gf(0x11D, 255)
GF16_EXP, GF16_LOG = _gf(0x13, 15)


# ---------------------------------------------------------------------- pixel kernels
@kernel
def _threshold(img, out):
    """quirc's adaptive threshold: two running averages per row, carried over rows (serpentine)."""
    h, w = img.shape
    s = w // 8
    if s < 1:
        s = 1
    avg_w = 0
    avg_u = 0
    row_average = np.zeros(w, np.int64)
    for y in range(h):
        for x in range(w):
            row_average[x] = 0
        for x in range(w):
            if y & 1:
                ww = x
                uu = w - 1 - x
            else:
                ww = w - 1 - x
                uu = x
            avg_w = (avg_w * (s - 1)) // s + img[y, ww]
            avg_u = (avg_u * (s - 1)) // s + img[y, uu]
            row_average[ww] += avg_w
            row_average[uu] += avg_u
        for x in range(w):
            if img[y, x] < row_average[x] * (100 - 5) // (200 * s):
                out[y, x] = 1
            else:
                out[y, x] = 0
    return out


@kernel
def _flood_fill(pix, x, y, frm, to, spans, stack):
    """``flood_fill_seed``: fills the 4-connected run of ``frm`` from (x, y) with ``to``; the spans
    (y, left, right) in the order the firmware visits them go to ``spans``; returns their count."""
    h, w = pix.shape
    n_spans = 0
    depth = 0
    cap = stack.shape[0]
    while True:
        left = x
        right = x
        while left > 0 and pix[y, left - 1] == frm:
            left -= 1
        while right < w - 1 and pix[y, right + 1] == frm:
            right += 1
        for i in range(left, right + 1):
            pix[y, i] = to
        spans[n_spans, 0] = y
        spans[n_spans, 1] = left
        spans[n_spans, 2] = right
        n_spans += 1
        while True:
            recurse = False
            if depth < cap:
                for step in (-1, 1):  # the row above first, then the row below
                    ny = y + step
                    if ny < 0 or ny >= h:
                        continue
                    for i in range(left, right + 1):
                        if pix[ny, i] == frm:
                            stack[depth, 0] = x
                            stack[depth, 1] = y
                            stack[depth, 2] = left
                            stack[depth, 3] = right
                            depth += 1
                            x = i
                            y = ny
                            recurse = True
                            break
                    if recurse:
                        break
            if recurse:
                break
            if depth == 0:
                return n_spans
            depth -= 1
            x = stack[depth, 0]
            y = stack[depth, 1]
            left = stack[depth, 2]
            right = stack[depth, 3]


@kernel
def _finder_candidates(pix, out):
    """``finder_scan`` over every row: the (y, x, pb[0..4]) where a white run starts after five runs
    in the 1:1:3:1:1 ratio, in scan order; returns their count. ``test_capstone`` only renumbers
    black pixels (never turns one white), so the runs are those of the scan that calls it."""
    h, w = pix.shape
    n = 0
    pb = np.zeros(5, np.int64)
    for y in range(h):
        last_color = 0
        run_length = 0
        run_count = 0
        for i in range(5):
            pb[i] = 0
        for x in range(w):
            color = 1 if pix[y, x] != 0 else 0
            if x != 0 and color != last_color:
                for i in range(4):
                    pb[i] = pb[i + 1]
                pb[4] = run_length
                run_length = 0
                run_count += 1
                if color == 0 and run_count >= 5:
                    avg = (pb[0] + pb[1] + pb[3] + pb[4]) // 4
                    err = avg * 3 // 4
                    ok = True
                    for i in range(5):
                        check = 3 if i == 2 else 1
                        if pb[i] < check * avg - err or pb[i] > check * avg + err:
                            ok = False
                    if ok:  # out has room: at most one white-run start per two columns
                        out[n, 0] = y
                        out[n, 1] = x
                        for i in range(5):
                            out[n, 2 + i] = pb[i]
                        n += 1
            run_length += 1
            last_color = color
    return n


#: fitness_cell's sample offsets inside a cell (``static const float offsets[]``)
FITNESS_OFFSETS = np.array([0.3, 0.5, 0.7], np.float32)


@kernel
def _fitness(c, cells, weights, pix, off):
    """``fitness_all``'s sum: for each cell (x, y) its weight times ``fitness_cell`` (+1 per black,
    -1 per white sample of the 3x3 grid at ``off`` = 0.3/0.5/0.7, nothing outside the image), the
    perspective map in float32 and each coordinate cast to int as the K210 converts (toward zero,
    saturating at the int32 range, NaN to INT_MAX)."""
    h, w = pix.shape
    one = np.float32(1.0)
    total = 0
    for k in range(cells.shape[0]):
        score = 0
        fx = np.float32(cells[k, 0])
        fy = np.float32(cells[k, 1])
        for j in range(3):
            v = fy + off[j]
            for i in range(3):
                u = fx + off[i]
                den = c[6] * u + c[7] * v + one
                nx = c[0] * u + c[1] * v + c[2]
                ny = c[3] * u + c[4] * v + c[5]
                if den == 0:  # IEEE division (numba would raise): +-inf or NaN, cast as below
                    positive = math.copysign(1.0, den) > 0
                    px = 2147483647 if nx != nx or nx == 0 or (nx > 0) == positive else -2147483648
                    py = 2147483647 if ny != ny or ny == 0 or (ny > 0) == positive else -2147483648
                else:
                    x = nx / den
                    y = ny / den
                    if x != x or x >= 2147483647.0:
                        px = 2147483647
                    elif x <= -2147483648.0:
                        px = -2147483648
                    else:
                        px = int(x)
                    if y != y or y >= 2147483647.0:
                        py = 2147483647
                    elif y <= -2147483648.0:
                        py = -2147483648
                    else:
                        py = int(y)
                if py < 0 or py >= h or px < 0 or px >= w:
                    continue
                if pix[py, px] != 0:
                    score += 1
                else:
                    score -= 1
        total += score * weights[k]
    return total


# ---------------------------------------------------------------------- perspective (float32)
def perspective_setup(rect, w, h) -> list:
    x0, y0 = F(rect[0][0]), F(rect[0][1])
    x1, y1 = F(rect[1][0]), F(rect[1][1])
    x2, y2 = F(rect[2][0]), F(rect[2][1])
    x3, y3 = F(rect[3][0]), F(rect[3][1])
    w, h = F(w), F(h)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        wden = w * (x2 * y3 - x3 * y2 + (x3 - x2) * y1 + x1 * (y2 - y3))
        hden = h * (x2 * y3 + x1 * (y2 - y3) - x3 * y2 + (x3 - x2) * y1)
        c0 = (x1 * (x2 * y3 - x3 * y2) + x0 * (-x2 * y3 + x3 * y2 + (x2 - x3) * y1) + x1 * (x3 - x2) * y0) / wden
        c1 = -(x0 * (x2 * y3 + x1 * (y2 - y3) - x2 * y1) - x1 * x3 * y2 + x2 * x3 * y1
               + (x1 * x3 - x2 * x3) * y0) / hden
        c3 = (y0 * (x1 * (y3 - y2) - x2 * y3 + x3 * y2) + y1 * (x2 * y3 - x3 * y2) + x0 * y1 * (y2 - y3)) / wden
        c4 = (x0 * (y1 * y3 - y2 * y3) + x1 * y2 * y3 - x2 * y1 * y3 + y0 * (x3 * y2 - x1 * y2 + (x2 - x3) * y1)) / hden
        c6 = (x1 * (y3 - y2) + x0 * (y2 - y3) + (x2 - x3) * y1 + (x3 - x2) * y0) / wden
        c7 = (-x2 * y3 + x1 * y3 + x3 * y2 + x0 * (y1 - y2) - x3 * y1 + (x2 - x1) * y0) / hden
    return [F(c0), F(c1), x0, F(c3), F(c4), y0, F(c6), F(c7)]


def _trunc(v) -> int:
    v = float(v)
    if v != v:
        return 2**31 - 1
    return int(max(min(v, 2**31 - 1), -(2**31)))


def perspective_map(c, u, v) -> tuple[int, int]:
    u, v = F(u), F(v)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        den = c[6] * u + c[7] * v + F(1.0)
        x = (c[0] * u + c[1] * v + c[2]) / den
        y = (c[3] * u + c[4] * v + c[5]) / den
    return _trunc(x), _trunc(y)


def perspective_map_many(c, u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    u, v = u.astype(F), v.astype(F)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        den = c[6] * u + c[7] * v + F(1.0)
        x = (c[0] * u + c[1] * v + c[2]) / den
        y = (c[3] * u + c[4] * v + c[5]) / den
    bad_x, bad_y = ~np.isfinite(x), ~np.isfinite(y)
    xi = np.trunc(np.clip(np.nan_to_num(x, nan=0.0), -2**31, 2**31 - 1)).astype(np.int64)
    yi = np.trunc(np.clip(np.nan_to_num(y, nan=0.0), -2**31, 2**31 - 1)).astype(np.int64)
    xi[bad_x & np.isnan(x)] = 2**31 - 1
    yi[bad_y & np.isnan(y)] = 2**31 - 1
    return xi, yi


def perspective_unmap(c, p) -> tuple[np.float32, np.float32]:
    x, y = F(p[0]), F(p[1])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        den = -c[0] * c[7] * y + c[1] * c[6] * y + (c[3] * c[7] - c[4] * c[6]) * x + c[0] * c[4] - c[1] * c[3]
        u = -(c[1] * (y - c[5]) - c[2] * c[7] * y + (c[5] * c[7] - c[4]) * x + c[2] * c[4]) / den
        v = (c[0] * (y - c[5]) - c[2] * c[6] * y + (c[5] * c[6] - c[3]) * x + c[2] * c[3]) / den
    return F(u), F(v)


# ---------------------------------------------------------------------- identification
def _ring(cx: int, cy: int, r: int) -> list[tuple[int, int]]:
    """``fitness_ring``'s cells, in its order."""
    cells = []
    for i in range(r * 2):
        cells += [(cx - r + i, cy - r), (cx - r, cy + r - i), (cx + r, cy - r + i), (cx + r - i, cy + r)]
    return cells


@lru_cache(maxsize=64)
def fitness_pattern(gs: int) -> tuple[np.ndarray, np.ndarray]:
    """The cells ``fitness_all`` scores for a grid of ``gs`` modules and the sign each score gets:
    the timing patterns, the three finder patterns (centre, rings 1-3) and the alignment patterns
    of the version. (n, 2) int64 cells and (n,) int64 weights, read-only (cached per size)."""
    version = int(np.trunc((gs - 17) / 4))
    cells: list[tuple[int, int]] = []
    weights: list[int] = []
    for i in range(gs - 14):
        expect = 1 if i & 1 else -1
        cells += [(i + 7, 6), (6, i + 7)]
        weights += [expect, expect]

    def add(group, sign):
        cells.extend(group)
        weights.extend([sign] * len(group))

    for x, y in ((0, 0), (gs - 7, 0), (0, gs - 7)):
        x, y = x + 3, y + 3
        add([(x, y)], 1)
        add(_ring(x, y, 1), 1)
        add(_ring(x, y, 2), -1)
        add(_ring(x, y, 3), 1)
    if 0 <= version <= MAX_VERSION and version >= 1:
        ap = _alignment(version)  # VERSIONS[version]["apat"]
        apc = len(ap)

        def apat(cx, cy):
            add([(cx, cy)], 1)
            add(_ring(cx, cy, 1), -1)
            add(_ring(cx, cy, 2), 1)

        for i in range(1, apc - 1):
            apat(6, ap[i])
            apat(ap[i], 6)
        for i in range(1, apc):
            for j in range(1, apc):
                apat(ap[i], ap[j])
    out = np.array(cells, np.int64).reshape(-1, 2), np.array(weights, np.int64)
    for a in out:
        a.flags.writeable = False
    return out


class _Quirc:
    """One ``struct quirc`` run: pixels, regions, capstones, grids."""

    def __init__(self, gray: np.ndarray):
        self.h, self.w = gray.shape
        self.pixels = _threshold(np.ascontiguousarray(gray, np.int64), np.zeros(gray.shape, np.uint8))
        # region dicts by code; codes start at PIXEL_REGION (0 and 1 are the pixel colours: no region)
        self.regions: list[Any] = [None, None]
        self.capstones: list[dict] = []
        self.grids: list[dict] = []
        n = self.w * self.h + 1
        self._spans = np.empty((n, 3), np.int64)  # the fill writes every row it hands back
        self._stack = np.empty((n, 4), np.int64)

    # -- flood fills
    def fill(self, x, y, frm, to) -> np.ndarray:
        n = _flood_fill(self.pixels, int(x), int(y), int(frm), int(to), self._spans, self._stack)
        return self._spans[:n].copy()

    def region_code(self, x, y) -> int:
        if x < 0 or y < 0 or x >= self.w or y >= self.h:
            return -1
        pixel = int(self.pixels[y, x])
        if pixel >= PIXEL_REGION:
            return pixel
        if pixel == PIXEL_WHITE:
            return -1
        if len(self.regions) >= MAX_REGIONS:
            return -1
        code = len(self.regions)
        box = dict(seed=(x, y), count=0, capstone=-1)
        self.regions.append(box)
        spans = self.fill(x, y, pixel, code)
        box["count"] = int((spans[:, 2] - spans[:, 1] + 1).sum())
        return code

    def find_region_corners(self, rcode: int, ref) -> list:
        region = self.regions[rcode]
        sx, sy = region["seed"]
        spans = self.fill(sx, sy, rcode, PIXEL_BLACK)
        # find_one_corner: farthest span end from ref (first strict maximum, left end before right)
        ys = np.repeat(spans[:, 0], 2)
        xs = spans[:, 1:3].ravel()
        d = (xs - ref[0]) ** 2 + (ys - ref[1]) ** 2
        best = -1
        c0 = (0, 0)
        if d.size and d.max() > best:
            k = int(np.argmax(d))
            c0 = (int(xs[k]), int(ys[k]))
        rx, ry = c0[0] - ref[0], c0[1] - ref[1]
        corners = [(sx, sy)] * 4
        i = sx * rx + sy * ry
        scores = [i, 0, -i, 0]
        i = sx * -ry + sy * rx
        scores[1], scores[3] = i, -i
        spans = self.fill(sx, sy, PIXEL_BLACK, rcode)
        ys = np.repeat(spans[:, 0], 2)
        xs = spans[:, 1:3].ravel()
        up = xs * rx + ys * ry
        right = xs * -ry + ys * rx
        for j, sc in enumerate((up, right, -up, -right)):
            if sc.size and sc.max() > scores[j]:
                k = int(np.argmax(sc))
                scores[j] = int(sc[k])
                corners[j] = (int(xs[k]), int(ys[k]))
        return corners

    def record_capstone(self, ring: int, stone: int) -> None:
        if len(self.capstones) >= MAX_CAPSTONES:
            return
        idx = len(self.capstones)
        self.regions[stone]["capstone"] = idx
        self.regions[ring]["capstone"] = idx
        cap: dict[str, Any] = dict(ring=ring, stone=stone, qr_grid=-1)
        self.capstones.append(cap)
        cap["corners"] = self.find_region_corners(ring, self.regions[stone]["seed"])
        cap["c"] = perspective_setup(cap["corners"], 7.0, 7.0)
        cap["center"] = perspective_map(cap["c"], 3.5, 3.5)

    def test_capstone(self, x: int, y: int, pb) -> None:
        ring_right = self.region_code(x - pb[4], y)
        stone = self.region_code(x - pb[4] - pb[3] - pb[2], y)
        ring_left = self.region_code(x - pb[4] - pb[3] - pb[2] - pb[1] - pb[0], y)
        if ring_left < 0 or ring_right < 0 or stone < 0:
            return
        if ring_left != ring_right or ring_left == stone:
            return
        stone_reg, ring_reg = self.regions[stone], self.regions[ring_left]
        if stone_reg["capstone"] >= 0 or ring_reg["capstone"] >= 0:
            return
        ratio = stone_reg["count"] * 100 // ring_reg["count"]
        if ratio < 10 or ratio > 70:
            return
        self.record_capstone(ring_left, stone)

    def finder_scan(self) -> None:
        """``finder_scan`` of every row: the candidates in scan order, each tested in turn."""
        out = np.empty((self.h * (self.w // 2 + 1), 7), np.int64)
        n = _finder_candidates(self.pixels, out)
        for y, x, *pb in out[:n].tolist():
            self.test_capstone(x, y, pb)

    # -- grids
    def timing_scan(self, p0, p1) -> int:
        n = p1[0] - p0[0]
        d = p1[1] - p0[1]
        if not (0 <= p0[0] < self.w and 0 <= p0[1] < self.h and 0 <= p1[0] < self.w and 0 <= p1[1] < self.h):
            return -1
        x_dom = abs(n) > abs(d)
        if x_dom:
            n, d = d, n
        nondom_step = -1 if n < 0 else 1
        n = abs(n)
        dom_step = -1 if d < 0 else 1
        d = abs(d)
        x, y = p0
        a = 0
        run_length = 0
        count = 0
        for _ in range(d + 1):
            if y < 0 or y >= self.h or x < 0 or x >= self.w:
                break
            if self.pixels[y, x]:
                if run_length >= 2:
                    count += 1
                run_length = 0
            else:
                run_length += 1
            a += n
            if x_dom:
                x += dom_step
            else:
                y += dom_step
            if a >= d:
                if x_dom:
                    y += nondom_step
                else:
                    x += nondom_step
                a -= d
        return count

    def measure_timing_pattern(self, qr) -> int:
        us, vs = (6.5, 6.5, 0.5), (0.5, 6.5, 6.5)
        qr["tpep"] = [perspective_map(self.capstones[qr["caps"][i]]["c"], us[i], vs[i]) for i in range(3)]
        qr["hscan"] = self.timing_scan(qr["tpep"][1], qr["tpep"][2])
        qr["vscan"] = self.timing_scan(qr["tpep"][1], qr["tpep"][0])
        scan = max(qr["hscan"], qr["vscan"])
        if scan < 0:
            return -1
        size = scan * 2 + 13
        ver = int(np.trunc((size - 15) / 4))
        qr["grid_size"] = ver * 4 + 17
        return 0

    def find_alignment_pattern(self, qr) -> None:
        c0 = self.capstones[qr["caps"][0]]
        c2 = self.capstones[qr["caps"][2]]
        b = list(qr["align"])
        u, v = perspective_unmap(c0["c"], b)
        a = perspective_map(c0["c"], u, v + F(1.0))
        u, v = perspective_unmap(c2["c"], b)
        c = perspective_map(c2["c"], u + F(1.0), v)
        size_estimate = abs((a[0] - b[0]) * -(c[1] - b[1]) + (a[1] - b[1]) * (c[0] - b[0]))
        step_size = 1
        direction = 0
        dx_map, dy_map = (1, 0, -1, 0), (0, -1, 0, 1)
        while step_size * step_size < size_estimate * 100:
            for _ in range(step_size):
                code = self.region_code(b[0], b[1])
                if code >= 0:
                    reg = self.regions[code]
                    if size_estimate // 2 <= reg["count"] <= size_estimate * 2:
                        qr["align_region"] = code
                        return
                b[0] += dx_map[direction]
                b[1] += dy_map[direction]
            direction = (direction + 1) % 4
            if not direction & 1:
                step_size += 1

    def _cell_pixels(self, c, us, vs) -> np.ndarray:
        """Pixel values (0 white / 1 black, -1 outside) at perspective_map(c, us, vs)."""
        px, py = perspective_map_many(c, np.asarray(us, np.float64), np.asarray(vs, np.float64))
        inside = (py >= 0) & (py < self.h) & (px >= 0) & (px < self.w)
        out = np.full(px.shape, -1, np.int64)
        out[inside] = (self.pixels[py[inside], px[inside]] != 0).astype(np.int64)
        return out

    def fitness_all(self, qr) -> int:
        cells, weights = fitness_pattern(qr["grid_size"])
        return int(_fitness(np.array(qr["c"], F), cells, weights, self.pixels, FITNESS_OFFSETS))

    def jiggle_perspective(self, qr) -> None:
        best = self.fitness_all(qr)
        adjustments = [F(v) * F(0.02) for v in qr["c"]]
        for _ in range(5):
            for i in range(16):
                j = i >> 1
                old = qr["c"][j]
                step = adjustments[j]
                qr["c"][j] = F(old + step) if i & 1 else F(old - step)
                test = self.fitness_all(qr)
                if test > best:
                    best = test
                else:
                    qr["c"][j] = old
            adjustments = [a * F(0.5) for a in adjustments]

    def rotate_capstone(self, cap, h0, hd) -> None:
        best, best_score = 0, 0
        for j, p in enumerate(cap["corners"]):
            score = (p[0] - h0[0]) * -hd[1] + (p[1] - h0[1]) * hd[0]
            if not j or score < best_score:
                best, best_score = j, score
        cap["corners"] = [cap["corners"][(j + best) % 4] for j in range(4)]
        cap["c"] = perspective_setup(cap["corners"], 7.0, 7.0)

    def record_qr_grid(self, a: int, b: int, c: int) -> None:
        if len(self.grids) >= MAX_GRIDS:
            return
        h0 = self.capstones[a]["center"]
        hd = (self.capstones[c]["center"][0] - h0[0], self.capstones[c]["center"][1] - h0[1])
        bc = self.capstones[b]["center"]
        if (bc[0] - h0[0]) * -hd[1] + (bc[1] - h0[1]) * hd[0] > 0:
            a, c = c, a
            hd = (-hd[0], -hd[1])
        qr: dict[str, Any] = dict(caps=[a, b, c], align_region=-1)
        index = len(self.grids)
        self.grids.append(qr)
        for i in range(3):
            cap = self.capstones[qr["caps"][i]]
            self.rotate_capstone(cap, h0, hd)
            cap["qr_grid"] = index
        ok = self.measure_timing_pattern(qr) >= 0
        if ok:
            align = _line_intersect(self.capstones[a]["corners"][0], self.capstones[a]["corners"][1],
                                    self.capstones[c]["corners"][0], self.capstones[c]["corners"][3])
            ok = align is not None
        if not ok:
            for i in range(3):
                self.capstones[qr["caps"][i]]["qr_grid"] = -1
            self.grids.pop()
            return
        qr["align"] = align
        if qr["grid_size"] > 21:
            self.find_alignment_pattern(qr)
            if qr["align_region"] >= 0:
                reg = self.regions[qr["align_region"]]
                sx, sy = reg["seed"]
                qr["align"] = (sx, sy)
                best = -hd[1] * sx + hd[0] * sy
                self.fill(sx, sy, qr["align_region"], PIXEL_BLACK)
                spans = self.fill(sx, sy, PIXEL_BLACK, qr["align_region"])
                ys = np.repeat(spans[:, 0], 2)
                xs = spans[:, 1:3].ravel()
                d = -hd[1] * xs + hd[0] * ys
                if d.size and d.min() < best:
                    k = int(np.argmin(d))
                    qr["align"] = (int(xs[k]), int(ys[k]))
        rect = [self.capstones[qr["caps"][1]]["corners"][0], self.capstones[qr["caps"][2]]["corners"][0],
                qr["align"], self.capstones[qr["caps"][0]]["corners"][0]]
        qr["c"] = perspective_setup(rect, qr["grid_size"] - 7, qr["grid_size"] - 7)
        self.jiggle_perspective(qr)

    def test_grouping(self, i: int) -> None:
        c1 = self.capstones[i]
        if c1["qr_grid"] >= 0:
            return
        hlist, vlist = [], []
        for j, c2 in enumerate(self.capstones):
            if i == j or c2["qr_grid"] >= 0:
                continue
            u, v = perspective_unmap(c1["c"], c2["center"])
            u = abs(u - F(3.5))
            v = abs(v - F(3.5))
            if u < F(0.2) * v:
                hlist.append((j, v))
            if v < F(0.2) * u:
                vlist.append((j, u))
        if not (hlist and vlist):
            return
        best_score = F(0.0)
        best_h = best_v = -1
        for hj, hdist in hlist:
            for vj, vdist in vlist:
                with np.errstate(divide="ignore", invalid="ignore"):
                    score = abs(F(1.0) - hdist / vdist)
                if score > F(2.5):
                    continue
                if best_h < 0 or score < best_score:
                    best_h, best_v, best_score = hj, vj, score
        if best_h < 0 or best_v < 0:
            return
        self.record_qr_grid(best_h, i, best_v)

    def run(self) -> None:
        self.finder_scan()
        for i in range(len(self.capstones)):
            self.test_grouping(i)

    def extract(self, index: int) -> tuple[list, int, np.ndarray]:
        qr = self.grids[index]
        gs = qr["grid_size"]
        c = qr["c"]
        corners = [perspective_map(c, 0.0, 0.0), perspective_map(c, gs, 0.0), perspective_map(c, gs, gs),
                   perspective_map(c, 0.0, gs)]
        yy, xx = np.mgrid[0:gs, 0:gs]
        vals = self._cell_pixels(c, (xx.astype(F) + F(0.5)).ravel(), (yy.astype(F) + F(0.5)).ravel())
        return corners, gs, (vals > 0).reshape(gs, gs)


def _line_intersect(p0, p1, q0, q1):
    a = -(p1[1] - p0[1])
    b = p1[0] - p0[0]
    c = -(q1[1] - q0[1])
    d = q1[0] - q0[0]
    e = a * p1[0] + b * p1[1]
    f = c * q1[0] + d * q1[1]
    det = a * d - b * c
    if not det:
        return None
    return _cdiv(d * e - b * f, det), _cdiv(-c * e + a * f, det)


def _cdiv(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


# ---------------------------------------------------------------------- decoding
class DecodeError(Exception):
    pass


def _poly_add(dst, src, c, shift, exp, log, p):
    if not c:
        return
    log_c = log[c]
    for i in range(64):
        q = i + shift
        v = src[i]
        if q < 0 or q >= 64 or not v:
            continue
        dst[q] ^= exp[(log[v] + log_c) % p]


def _poly_eval(s, x, exp, log, p):
    if not x:
        return s[0]
    total = 0
    log_x = log[x]
    for i in range(64):
        c = s[i]
        if c:
            total ^= exp[(log[c] + log_x * i) % p]
    return total


def _berlekamp_massey(s, N, exp, log, p):
    C = [0] * 64
    B = [0] * 64
    B[0] = C[0] = 1
    L, m, b = 0, 1, 1
    for n in range(N):
        d = s[n]
        for i in range(1, L + 1):
            if C[i] and s[n - i]:
                d ^= exp[(log[C[i]] + log[s[n - i]]) % p]
        mult = exp[(p - log[b] + log[d]) % p]
        if not d:
            m += 1
        elif L * 2 <= n:
            T = list(C)
            _poly_add(C, B, mult, m, exp, log, p)
            B = T
            L = n + 1 - L
            b = d
            m = 1
        else:
            _poly_add(C, B, mult, m, exp, log, p)
            m += 1
    return C


def _block_syndromes(data, bs, npar):
    s = [0] * 64
    nonzero = False
    for i in range(npar):
        for j in range(bs):
            c = data[bs - j - 1]
            if c:
                s[i] ^= GF256_EXP[(GF256_LOG[c] + i * j) % 255]
        if s[i]:
            nonzero = True
    return nonzero, s


def _correct_block(data, bs, dw):
    npar = bs - dw
    nz, s = _block_syndromes(data, bs, npar)
    if not nz:
        return
    sigma = _berlekamp_massey(s, npar, GF256_EXP, GF256_LOG, 255)
    deriv = [0] * 64
    for i in range(0, 63, 2):
        deriv[i] = sigma[i + 1]
    omega = [0] * 64
    for i in range(npar - 1):
        a = sigma[i]
        if not a:
            continue
        log_a = GF256_LOG[a]
        for j in range(63):
            if i + j >= npar - 1:
                break
            b = s[j + 1]
            if b:
                omega[i + j] ^= GF256_EXP[(log_a + GF256_LOG[b]) % 255]
    for i in range(bs):
        xinv = GF256_EXP[255 - i]
        if not _poly_eval(sigma, xinv, GF256_EXP, GF256_LOG, 255):
            sd_x = _poly_eval(deriv, xinv, GF256_EXP, GF256_LOG, 255)
            omega_x = _poly_eval(omega, xinv, GF256_EXP, GF256_LOG, 255)
            data[bs - i - 1] ^= GF256_EXP[(255 - GF256_LOG[sd_x] + GF256_LOG[omega_x]) % 255]
    if _block_syndromes(data, bs, npar)[0]:
        raise DecodeError("ECC failure")


def _format_syndromes(u):
    s = [0] * 64
    nonzero = False
    for i in range(6):
        for j in range(15):
            if u & (1 << j):
                s[i] ^= GF16_EXP[((i + 1) * j) % 15]
        if s[i]:
            nonzero = True
    return nonzero, s


def _correct_format(u: int) -> int:
    nz, s = _format_syndromes(u)
    if not nz:
        return u
    sigma = _berlekamp_massey(s, 6, GF16_EXP, GF16_LOG, 15)
    for i in range(15):
        if not _poly_eval(sigma, GF16_EXP[15 - i], GF16_EXP, GF16_LOG, 15):
            u ^= 1 << i
    if _format_syndromes(u)[0]:
        raise DecodeError("Format data ECC failure")
    return u & 0xFFFF


def _read_format(grid: np.ndarray, which: int) -> tuple[int, int]:
    size = grid.shape[0]
    fmt = 0
    if which:
        for i in range(7):
            fmt = (fmt << 1) | int(grid[size - 1 - i, 8])
        for i in range(8):
            fmt = (fmt << 1) | int(grid[8, size - 8 + i])
    else:
        xs = (8, 8, 8, 8, 8, 8, 8, 8, 7, 5, 4, 3, 2, 1, 0)
        ys = (0, 1, 2, 3, 4, 5, 7, 8, 8, 8, 8, 8, 8, 8, 8)
        for i in range(14, -1, -1):
            fmt = (fmt << 1) | int(grid[ys[i], xs[i]])
    fmt ^= 0x5412
    fmt = _correct_format(fmt)
    fdata = fmt >> 10
    return fdata >> 3, fdata & 7


def _mask(mask: int, i: np.ndarray, j: np.ndarray) -> np.ndarray:
    if mask == 0:
        return (i + j) % 2 == 0
    if mask == 1:
        return i % 2 == 0
    if mask == 2:
        return j % 3 == 0
    if mask == 3:
        return (i + j) % 3 == 0
    if mask == 4:
        return ((i // 2) + (j // 3)) % 2 == 0
    if mask == 5:
        return ((i * j) % 2 + (i * j) % 3) == 0
    if mask == 6:
        return (((i * j) % 2 + (i * j) % 3) % 2) == 0
    return (((i * j) % 3 + (i + j) % 2) % 2) == 0


def _reserved(version: int, i: int, j: int) -> bool:
    size = version * 4 + 17
    if i < 9 and j < 9:
        return True
    if i + 8 >= size and j < 9:
        return True
    if i < 9 and j + 8 >= size:
        return True
    if i == 6 or j == 6:
        return True
    if version >= 7:
        if i < 6 and j + 11 >= size:
            return True
        if i + 11 >= size and j < 6:
            return True
    ai = aj = -1
    ap = VERSIONS[version]["apat"]
    a = 0
    for a, p in enumerate(ap):
        if abs(p - i) < 3:
            ai = a
        if abs(p - j) < 3:
            aj = a
    a = len(ap)
    if ai >= 0 and aj >= 0:
        a -= 1
        if 0 < ai < a or 0 < aj < a:
            return True
        if aj == a and ai == a:
            return True
    return False


def _data_cells(version: int) -> list[tuple[int, int]]:
    """(row, column) of the data cells in reading order (``read_data``)."""
    size = version * 4 + 17
    y = x = size - 1
    direction = -1
    out = []
    while x > 0:
        if x == 6:
            x -= 1
        if not _reserved(version, y, x):
            out.append((y, x))
        if not _reserved(version, y, x - 1):
            out.append((y, x - 1))
        y += direction
        if y < 0 or y >= size:
            direction = -direction
            x -= 2
            y += direction
    return out


class _Bits:
    def __init__(self, data: bytes, nbits: int):
        self.data = data
        self.nbits = nbits
        self.ptr = 0

    def remaining(self) -> int:
        return self.nbits - self.ptr

    def take(self, n: int) -> int:
        ret = 0
        while n and self.ptr < self.nbits:
            b = self.data[self.ptr >> 3]
            ret = (ret << 1) | ((b << (self.ptr & 7)) & 0x80 and 1)
            self.ptr += 1
            n -= 1
        return ret


def decode(grid: np.ndarray) -> dict:
    """``quirc_decode`` of a cell grid (True = black): version, ecc_level, mask, data_type,
    payload (bytes), eci."""
    size = grid.shape[0]
    if (size - 17) % 4:
        raise DecodeError("Invalid grid size")
    version = (size - 17) // 4
    if version < 1 or version > MAX_VERSION:
        raise DecodeError("Invalid version")
    try:
        ecc_level, mask = _read_format(grid, 0)
    except DecodeError:
        ecc_level, mask = _read_format(grid, 1)
    cells = _data_cells(version)
    rows = np.array([c[0] for c in cells])
    cols = np.array([c[1] for c in cells])
    bits = grid[rows, cols].astype(np.uint8) ^ _mask(mask, rows, cols).astype(np.uint8)
    raw = np.zeros(MAX_PAYLOAD, np.uint8)
    packed = np.packbits(bits)
    raw[:packed.size] = packed
    info = VERSIONS[version]
    bs, dw, ns = info["ecc"][ecc_level]
    lb_count = (info["data_bytes"] - bs * ns) // (bs + 1)
    bc = lb_count + ns
    ecc_offset = dw * bc + lb_count
    out = bytearray()
    for i in range(bc):
        b_bs, b_dw = (bs, dw) if i < ns else (bs + 1, dw + 1)
        block = [int(raw[j * bc + i]) for j in range(b_dw)]
        block += [int(raw[ecc_offset + j * bc + i]) for j in range(b_bs - b_dw)]
        _correct_block(block, b_bs, b_dw)
        out += bytes(block[:b_dw])
    ds = _Bits(bytes(out), len(out) * 8)
    payload = bytearray()
    data_type = 0
    eci = 0
    while ds.remaining() >= 4:
        kind = ds.take(4)
        if kind == 1:
            _numeric(ds, payload, version)
        elif kind == 2:
            _alpha(ds, payload, version)
        elif kind == 4:
            _byte(ds, payload, version)
        elif kind == 8:
            _kanji(ds, payload, version)
        elif kind == 7:
            eci = _eci(ds)
        else:
            break
        if not kind & (kind - 1) and kind > data_type:
            data_type = kind
    if len(payload) >= MAX_PAYLOAD:
        payload = payload[:MAX_PAYLOAD - 1]
    return dict(version=version, ecc_level=ecc_level, mask=mask, data_type=data_type,
                payload=bytes(payload), eci=eci)


def _check_room(payload, n):
    if len(payload) + n + 1 > MAX_PAYLOAD:
        raise DecodeError("Data overflow")


def _numeric(ds, payload, version):
    bits = 10 if version < 10 else 12 if version < 27 else 14
    count = ds.take(bits)
    _check_room(payload, count)
    for n, (b, d) in ((3, (10, 3)), (2, (7, 2)), (1, (4, 1))):
        while count >= n:
            if ds.remaining() < b:
                raise DecodeError("Data underflow")
            t = ds.take(b)
            payload += ("%0*d" % (d, t % 10 ** d)).encode()
            count -= n
            if n < 3:
                break


def _alpha(ds, payload, version):
    alphabet = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ $%*+-./:"
    bits = 9 if version < 10 else 11 if version < 27 else 13
    count = ds.take(bits)
    _check_room(payload, count)
    while count >= 2:
        if ds.remaining() < 11:
            raise DecodeError("Data underflow")
        t = ds.take(11)
        payload += bytes([alphabet[(t // 45) % 45], alphabet[t % 45]])
        count -= 2
    if count:
        if ds.remaining() < 6:
            raise DecodeError("Data underflow")
        payload.append(alphabet[ds.take(6) % 45])


def _byte(ds, payload, version):
    bits = 8 if version < 10 else 16
    count = ds.take(bits)
    _check_room(payload, count)
    if ds.remaining() < count * 8:
        raise DecodeError("Data underflow")
    for _ in range(count):
        payload.append(ds.take(8))


def _kanji(ds, payload, version):
    bits = 8 if version < 10 else 10 if version < 27 else 12
    count = ds.take(bits)
    _check_room(payload, count * 2)
    if ds.remaining() < count * 13:
        raise DecodeError("Data underflow")
    for _ in range(count):
        d = ds.take(13)
        inter = ((d // 0xC0) << 8) | (d % 0xC0)
        sjw = (inter + 0x8140 if inter + 0x8140 <= 0x9FFC else inter + 0xC140) & 0xFFFF
        payload += bytes([sjw >> 8, sjw & 0xFF])


def _eci(ds) -> int:
    if ds.remaining() < 8:
        raise DecodeError("Data underflow")
    eci = ds.take(8)
    if (eci & 0xC0) == 0x80:
        if ds.remaining() < 8:
            raise DecodeError("Data underflow")
        eci = (eci << 8) | ds.take(8)
    elif (eci & 0xE0) == 0xC0:
        if ds.remaining() < 16:
            raise DecodeError("Data underflow")
        eci = (eci << 16) | ds.take(16)
    return eci


# ---------------------------------------------------------------------- find_qrcodes
def find_qrcodes(gray_full: np.ndarray, roi) -> list[dict]:
    rx, ry, rw, rh = roi
    q = _Quirc(gray_full[ry:ry + rh, rx:rx + rw])
    q.run()
    out = []
    for i in range(len(q.grids)):
        corners, _, grid = q.extract(i)
        try:
            data = decode(grid)
        except DecodeError:
            continue
        pts = [(x + rx, y + ry) for x, y in corners]
        xs = [p[0] for p in pts]
        ys = [p[1] for p in pts]
        payload = data["payload"].decode("utf-8", "surrogateescape")
        out.append(dict(x=min(xs), y=min(ys), w=max(xs) - min(xs), h=max(ys) - min(ys), payload=payload,
                        version=data["version"], ecc_level=data["ecc_level"], mask=data["mask"],
                        data_type=data["data_type"], eci=data["eci"], corners=tuple(pts)))
    return out


class QRCodeMixin(ImageHost):
    def find_qrcodes(self, *args, **kwargs):
        """QR codes as the firmware's quirc finds and decodes them (``roi``)."""
        from ._find import QRCode, _gray8

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        return [QRCode(**d) for d in find_qrcodes(_gray8(self), roi)]
