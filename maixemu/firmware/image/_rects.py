"""``find_rects``: the AprilTag quad detector (``_quads``) as ``imlib_find_rects`` uses it.

Quads of the roi's grayscale (black-inside or white-inside: ``overrideMode``), edges refined, the
overlapping ones reconciled, then each one's magnitude: the Sobel magnitudes (``pixel_magnitude``,
clamped at the image border) summed along its four edges, traced with Bresenham on the whole
image. Quads below ``threshold`` are dropped.
"""

from __future__ import annotations

import numpy as np

from . import _args
from ._fmath import F, ftoi, lb_clip_line
from ._jit import kernel
from ._host import ImageHost


def quad_box_and_corners(p, rx: int, ry: int):
    """The rect (union of the truncated corners) and the corners in the firmware's order
    (p[3], p[2], p[1], p[0]), moved by the roi origin."""
    pts = [(ftoi(F(c[0])) + rx, ftoi(F(c[1])) + ry) for c in p]
    x0, y0 = pts[0]
    x1, y1 = x0, y0
    for x, y in pts[1:]:
        x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
    return (x0, y0, x1 - x0, y1 - y0), (pts[3], pts[2], pts[1], pts[0]), pts


def _bresenham(x1: int, y1: int, x2: int, y2: int) -> tuple[np.ndarray, np.ndarray]:
    """The points ``trace_line`` visits, first included."""
    dx, dy = x2 - x1, y2 - y1
    ax, ay = abs(dx), abs(dy)
    sx, sy = (dx > 0) - (dx < 0), (dy > 0) - (dy < 0)
    if ax >= ay:
        i = np.arange(1, ax + 1)
        acc = (ax >> 1) + i * ay  # the y accumulator starts at dxabs >> 1
        steps = acc // ax if ax else np.zeros_like(i)
        xs = x1 + sx * i
        ys = y1 + sy * steps
    else:
        i = np.arange(1, ay + 1)
        acc = (ay >> 1) + i * ax
        steps = acc // ay
        xs = x1 + sx * steps
        ys = y1 + sy * i
    return np.concatenate([[x1], xs]).astype(np.int64), np.concatenate([[y1], ys]).astype(np.int64)


@kernel
def trace_magnitude(gray, x1, y1, x2, y2):
    """``trace_line``'s points from (x1, y1) to (x2, y2) (Bresenham, the first included) summed by
    their ``pixel_magnitude`` (Sobel, rows and columns clamped at the image border,
    ``(int)sqrtf(gx*gx + gy*gy)``); -1 when the line leaves the image."""
    h, w = gray.shape
    if not (0 <= x1 < w and 0 <= x2 < w and 0 <= y1 < h and 0 <= y2 < h):
        return -1  # Bresenham's points lie between the ends: they are all inside when both ends are

    def magnitude(x, y):
        ym = y - 1 if y != 0 else y
        yp = y + 1 if y != h - 1 else y
        xm = max(x - 1, 0)
        xp = min(x + 1, w - 1)
        a, b, c = int(gray[ym, xm]), int(gray[ym, x]), int(gray[ym, xp])
        d, f = int(gray[y, xm]), int(gray[y, xp])
        g, k, m = int(gray[yp, xm]), int(gray[yp, x]), int(gray[yp, xp])
        gx = a - c + 2 * d - 2 * f + g - m
        gy = a + 2 * b + c - g - 2 * k - m
        return int(np.sqrt(np.float32(gx * gx + gy * gy)))

    dx = x2 - x1
    dy = y2 - y1
    sdx = -1 if dx < 0 else (1 if dx > 0 else 0)
    sdy = -1 if dy < 0 else (1 if dy > 0 else 0)
    if abs(dx) >= abs(dy):  # one step along x each point, along y when the accumulator overflows
        steps, minor, mx, my, nx, ny = abs(dx), abs(dy), sdx, 0, 0, sdy
    else:
        steps, minor, mx, my, nx, ny = abs(dy), abs(dx), 0, sdy, sdx, 0
    acc = steps >> 1
    px = x1
    py = y1
    total = magnitude(px, py)
    for _ in range(steps):
        acc += minor
        if acc >= steps:
            acc -= steps
            px += nx
            py += ny
        px += mx
        py += my
        total += magnitude(px, py)
    return total


def edge_magnitude(gray: np.ndarray, corners, rx: int = 0, ry: int = 0) -> int:
    """Sum of the magnitudes along the 4 edges (each clipped to the image), as a uint32.

    An edge with a NaN end (a corner ``refine_edges`` lost) adds nothing: on the device its
    ``(int)NaN`` end clips to pixels outside the image, which it reads as garbage.
    """
    h, w = gray.shape
    total = 0
    for i in range(4):
        a, b = corners[i], corners[(i + 1) & 3]
        if any(np.isnan(F(v)) for v in (*a, *b)):
            continue
        x1, y1, x2, y2 = ftoi(F(a[0])) + rx, ftoi(F(a[1])) + ry, ftoi(F(b[0])) + rx, ftoi(F(b[1])) + ry
        clipped = lb_clip_line(x1, y1, x2, y2, 0, 0, w, h)
        if clipped is None:
            continue
        total += max(0, int(trace_magnitude(gray, *clipped)))
    return total & 0xFFFFFFFF


def find_rects(gray_full: np.ndarray, roi, threshold: int) -> list[dict]:
    from . import _quads

    rx, ry, rw, rh = roi
    im = np.ascontiguousarray(gray_full[ry:ry + rh, rx:rx + rw])
    quads = _quads.detect_quads(im, override_mode=True)
    quads = _quads.drop_overlapping(_quads.refine_edges(im, quads))
    out = []
    for q in quads:
        rect, corners, _ = quad_box_and_corners(q, rx, ry)
        magnitude = edge_magnitude(gray_full, q, rx, ry)
        if magnitude < threshold:
            continue
        out.append(dict(x=rect[0], y=rect[1], w=rect[2], h=rect[3], magnitude=magnitude, corners=corners))
    return out


class RectsMixin(ImageHost):
    def find_rects(self, *args, **kwargs):
        """Rectangles (any quadrilateral) as ``rect`` objects: ``rect()``, ``corners()``,
        ``magnitude()``; arguments ``roi`` and ``threshold`` (10000) as ``py_image_find_rects``."""
        from ._find import Rect, _gray8

        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        threshold = _args.to_int(_args.pick(args, 1, kwargs, "threshold", 1000))
        return [Rect(**d) for d in find_rects(_gray8(self), roi, threshold)]
