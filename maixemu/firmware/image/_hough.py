"""``find_lines`` / ``find_circles`` following MaixPy v0.6.2 ``hough.c``.

Sobel on the grayscale image at strided sample points, gradient angle through the firmware's
polynomial ``fast_atan2f`` (range [0, 2*pi)), Hough accumulation of gradient magnitudes, 3x3 local
maxima above ``threshold``, then the firmware's pairwise merging. ``fast_roundf`` is a truncation in
this firmware. Known firmware quirk reproduced: for grayscale/RGB565 ``find_lines`` uses
``x_stride`` as the row stride too (``y_stride`` is ignored).
"""

from __future__ import annotations

import numpy as np

FB_ALLOC_SIZE = 700 * 1024  # OMV_FB_ALLOC_SIZE of the full build: what fb_avail() gives at most

from ._fmath import COS, F, SIN, fast_atan2f, fast_atan2f_1, ftoi, line_length, line_through_roi
from ._fmath import fast_atanf as _fast_atanf  # noqa: F401  (kept for the modules that use it here)
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)


def _sobel(gray: np.ndarray, ys: np.ndarray, xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The firmware's Sobel sums at (ys, xs): x_acc = left - right, y_acc = top - bottom."""
    g = gray.astype(np.int64)

    def p(dy, dx):
        return g[ys + dy, xs + dx]

    x_acc = p(-1, -1) - p(-1, 1) + 2 * p(0, -1) - 2 * p(0, 1) + p(1, -1) - p(1, 1)
    y_acc = p(-1, -1) + 2 * p(-1, 0) + p(-1, 1) - p(1, -1) - 2 * p(1, 0) - p(1, 1)
    return x_acc, y_acc


def _angle_deg(x_acc: np.ndarray, y_acc: np.ndarray, modulo: int) -> np.ndarray:
    ang = np.where(x_acc != 0, fast_atan2f(y_acc, x_acc), F(1.570796))
    deg = np.trunc((ang.astype(np.float64) * 57.295780).astype(F)).astype(np.int64)
    deg = np.fmod(deg, modulo)
    return np.where(deg < 0, deg + modulo, deg)


def _magnitude(x_acc, y_acc) -> np.ndarray:
    return np.trunc(np.sqrt((x_acc * x_acc + y_acc * y_acc).astype(F))).astype(np.int64)


def _samples(rx, ry, rw, rh, x_stride, rows) -> tuple[np.ndarray, np.ndarray]:
    yl, xl = [], []
    for y in rows:
        xs = np.arange(rx + (y % x_stride) + 1, rx + rw - 1, x_stride)
        yl.append(np.full(xs.size, y))
        xl.append(xs)
    if not yl:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    return np.concatenate(yl).astype(np.int64), np.concatenate(xl).astype(np.int64)


def _peaks(acc: np.ndarray, threshold: int) -> list[tuple[int, int, int]]:
    """(row, col, value) of cells >= threshold and >= all 8 neighbours, row-major order."""
    import cv2

    c = acc[1:-1, 1:-1]
    ok = c >= threshold
    if ok.any():  # >= all 8 neighbours: equal to the 3x3 maximum (exact in float64 up to 2**53)
        big = acc.astype(np.float64)
        ok &= big[1:-1, 1:-1] >= cv2.dilate(big, np.ones((3, 3), np.uint8))[1:-1, 1:-1]
    rr, cc = np.nonzero(ok)
    return [(int(r) + 1, int(q) + 1, int(c[r, q])) for r, q in zip(rr, cc)]


def _ftrunc(v) -> int:
    return int(ftoi(F(v)))


def merge_until_stable(items: list, merge) -> list:
    """The firmware's list merging (hough.c, line.c): pop the head, fold into it every later item
    ``merge(head, item)`` accepts (it returns the merged item, or None), push the head to the
    output; repeat over the output until a pass merges nothing."""
    items = list(items)
    while True:
        merged = False
        out = []
        while items:
            a = items.pop(0)
            rest = []
            for b in items:
                m = merge(a, b)
                if m is None:
                    rest.append(b)
                else:
                    a, merged = m, True
            items = rest
            out.append(a)
        items = out
        if not merged:
            return items


def find_lines(gray: np.ndarray, roi, x_stride: int, y_stride: int, threshold: int,
               theta_margin: int, rho_margin: int, row_stride: int | None = None) -> list[dict]:
    """``imlib_find_lines``. ``row_stride``: the rows' step — the gray/RGB565 code passes
    ``x_stride`` (a firmware bug, the default here); the BINARY case steps by ``y_stride``."""
    rx, ry, rw, rh = roi
    r_diag = _ftrunc(np.sqrt(F(rw * rw + rh * rh)))
    hd = 1  # hough_divide: the accumulator shrinks (1, 2, 4) until it fits the frame-buffer heap
    while True:
        r_div = (r_diag + hd - 1) // hd
        theta_size = 1 + (180 + hd - 1) // hd + 1
        r_size = 2 * r_div + 1
        if 4 * theta_size * r_size <= FB_ALLOC_SIZE:
            break
        hd <<= 1
        if hd > 4:
            raise MemoryError("Out of Memory! Please reduce the resolution of the image you are running "
                              "this algorithm on to bypass this issue!")
    acc = np.zeros((r_size, theta_size), np.int64)
    step = x_stride if row_stride is None else row_stride  # firmware bug: x_stride for gray/RGB565
    if not compiled() or _line_votes.attempt(np.ascontiguousarray(gray, np.uint8), rx, ry, rw, rh, x_stride, step, hd,
                                              r_div, COS, SIN, acc) is NOT_SERVED:
        _line_votes_array(gray, rx, ry, rw, rh, x_stride, step, hd, r_div, acc)
    lines = [dict(magnitude=v, theta=(c - 1) * hd, rho=(r - r_div) * hd) for r, c, v in _peaks(acc, threshold)]
    def merge_lines(a, b):
        t0, t1, r0, r1 = a["theta"], b["theta"], a["rho"], b["rho"]
        if r0 < 0:
            r0, t0 = -r0, t0 + 180
        if r1 < 0:
            r1, t1 = -r1, t1 + 180
        td = abs(t0 - t1)
        td = 360 - td if td >= 180 else td
        if not (td < theta_margin and abs(r0 - r1) < rho_margin):
            return None
        m = a["magnitude"] + b["magnitude"]
        s_mean = (SIN[t0] * F(a["magnitude"]) + SIN[t1] * F(b["magnitude"])) / F(m)
        c_mean = (COS[t0] * F(a["magnitude"]) + COS[t1] * F(b["magnitude"])) / F(m)
        th = int(_angle_any(s_mean, c_mean)) % 360
        rho = _ftrunc((r0 * a["magnitude"] + r1 * b["magnitude"]) // m)
        if th >= 180:
            rho, th = -rho, th - 180
        return dict(magnitude=m // 2, theta=th, rho=rho)

    lines = merge_until_stable(lines, merge_lines)
    result = []
    for ln in lines:
        th = ln["theta"]
        placed = line_through_roi(th, ln["rho"], roi)
        if placed is None:
            continue
        x1, y1, x2, y2, rho = placed
        result.append(dict(x1=x1, y1=y1, x2=x2, y2=y2, length=line_length(x1, y1, x2, y2),
                           magnitude=ln["magnitude"], theta=th, rho=rho))
    return result


def _angle_any(s, c) -> int:
    return int(np.trunc(F(float(fast_atan2f_1(s, c)) * 57.295780)))


def _line_votes_array(gray, rx, ry, rw, rh, x_stride, step, hd, r_div, acc) -> None:
    """The Hough votes of the line finder with array operations (the path without numba)."""
    ys, xs = _samples(rx, ry, rw, rh, x_stride, range(ry + 1, ry + rh - 1, step))
    if ys.size:
        x_acc, y_acc = _sobel(gray, ys, xs)
        theta = _angle_deg(x_acc, y_acc, 180)
        rho = np.trunc(F(1) * (xs - rx).astype(F) * COS[theta] + (ys - ry).astype(F) * SIN[theta]).astype(np.int64)
        rho = np.sign(rho) * (np.abs(rho) // hd) + r_div  # C division truncates toward zero
        mag = _magnitude(x_acc, y_acc)
        np.add.at(acc, (rho, theta // hd + 1), mag)


@kernel
def _line_votes(gray, rx, ry, rw, rh, x_stride, step, hd, r_div, cos_t, sin_t, acc):
    """The Hough votes of ``imlib_find_lines`` (numba): at each sample the Sobel sums, the angle
    (``fast_atan2f`` in degrees, truncated, mod 180), rho in float32 from the tables, divided by
    ``hd`` toward zero, and the magnitude ``(int) sqrtf``, added to ``acc[rho, theta / hd + 1]``."""
    f32 = np.float32
    zero = f32(0.0)
    pi = f32(np.pi)
    for y in range(ry + 1, ry + rh - 1, step):
        for x in range(rx + (y % x_stride) + 1, rx + rw - 1, x_stride):
            a00 = np.int64(gray[y - 1, x - 1])
            a01 = np.int64(gray[y - 1, x])
            a02 = np.int64(gray[y - 1, x + 1])
            a10 = np.int64(gray[y, x - 1])
            a12 = np.int64(gray[y, x + 1])
            a20 = np.int64(gray[y + 1, x - 1])
            a21 = np.int64(gray[y + 1, x])
            a22 = np.int64(gray[y + 1, x + 1])
            x_acc = a00 - a02 + 2 * a10 - 2 * a12 + a20 - a22
            y_acc = a00 + 2 * a01 + a02 - a20 - 2 * a21 - a22
            if x_acc != 0:
                yy = f32(y_acc)
                xx = f32(x_acc)
                # fast_atan2f: the quadrant (x != 0 here), then fast_atanf of the ratio
                if xx > zero and yy >= zero:
                    case = 1
                elif xx < zero and yy >= zero:
                    case = 2
                elif xx < zero and yy < zero:
                    case = 3
                else:
                    case = 4
                q = yy / xx
                v = -q if case == 2 or case == 4 else q
                neg = v < zero
                t = -v if neg else v
                if t > f32(2.414213562373095):
                    base = f32(np.pi / 2)
                    xr = -(f32(1) / t)
                elif t > f32(0.4142135623730950):
                    base = f32(np.pi / 4)
                    xr = (t - f32(1)) / (t + f32(1))
                else:
                    base = zero
                    xr = t
                z = xr * xr
                poly = ((((f32(8.05374449538e-2) * z - f32(1.38776856032e-1)) * z + f32(1.99777106478e-1)) * z
                         - f32(3.33329491539e-1)) * z + f32(1)) * xr
                at = poly + base
                if neg:
                    at = -at
                if case == 1:
                    ang = at
                elif case == 2:
                    ang = pi - at
                elif case == 3:
                    ang = pi + at
                else:
                    ang = f32(f32(2) * pi) - at
            else:
                ang = f32(1.570796)
            deg = int(f32(float(ang) * 57.295780))
            theta = deg - int(deg / 180) * 180  # C %: the sign of the dividend
            if theta < 0:
                theta += 180
            rho = int(f32(x - rx) * cos_t[theta] + f32(y - ry) * sin_t[theta])
            rho = (rho // hd if rho >= 0 else -((-rho) // hd)) + r_div
            mag = int(np.sqrt(f32(x_acc * x_acc + y_acc * y_acc)))
            acc[rho, theta // hd + 1] += mag


@kernel
def _circle_radius(pxf, pyf, cos0, sin0, cos1, sin1, mag, r, rw, rh, threshold, acc, out):
    """One radius of the circle Hough transform (numba): both votes of every edge point (along its
    gradient, table cos/sin ``cos0``/``sin0``, and opposite, ``cos1``/``sin1``), each centre in
    float32 as the array path computes it, truncated, kept inside the accumulator, weighted by the
    magnitude; then the cells >= ``threshold`` and >= their 8 neighbours, row-major, into ``out``
    rows (row, col, value). Returns their count."""
    w_size = rw - 2 * r
    h_size = rh - 2 * r
    a_size = w_size + 2
    b_size = h_size + 2
    for i in range(a_size * b_size):
        acc[i] = 0
    rf = np.float32(r)
    for i in range(pxf.shape[0]):
        a = int(pxf[i] + rf * cos0[i]) - r
        b = int(pyf[i] + rf * sin0[i]) - r
        if 0 <= a < w_size and 0 <= b < h_size:
            acc[(b + 1) * a_size + a + 1] += mag[i]
        a = int(pxf[i] + rf * cos1[i]) - r
        b = int(pyf[i] + rf * sin1[i]) - r
        if 0 <= a < w_size and 0 <= b < h_size:
            acc[(b + 1) * a_size + a + 1] += mag[i]
    n = 0
    for row in range(1, b_size - 1):
        for col in range(1, a_size - 1):
            k = row * a_size + col
            v = acc[k]
            if v < threshold:
                continue
            if (v >= acc[k - a_size - 1] and v >= acc[k - a_size] and v >= acc[k - a_size + 1]
                    and v >= acc[k - 1] and v >= acc[k + 1]
                    and v >= acc[k + a_size - 1] and v >= acc[k + a_size] and v >= acc[k + a_size + 1]):
                out[n, 0] = row
                out[n, 1] = col
                out[n, 2] = v
                n += 1
    return n


def _circles_compiled(px, py, th, mg, roi, threshold, r_min, r_max, r_step) -> list[dict] | None:
    """The circles of every radius with the ``_circle_radius`` kernel (one call per radius); None
    when the kernel is not served compiled yet (the array form serves: its Python twin takes ~2 s a
    frame). Every radius passes the same argument types, so one served call means all are."""
    rx, ry, rw, rh = roi
    pxf, pyf = px.astype(F), py.astype(F)
    opposite = (th + 180) % 360
    cos0, sin0, cos1, sin1 = COS[th], SIN[th], COS[opposite], SIN[opposite]
    mg = np.ascontiguousarray(mg, np.int64)
    acc = np.empty((rw + 2) * (rh + 2), np.int64)  # the largest accumulator (r >= 0)
    out = np.empty((acc.size, 3), np.int64)
    circles: list[dict] = []
    first = True
    for r in range(r_min, r_max, r_step):
        if rw - 2 * r <= 0 or rh - 2 * r <= 0:
            continue
        n = _circle_radius.attempt(pxf, pyf, cos0, sin0, cos1, sin1, mg, r, rw, rh, threshold, acc, out)
        if n is NOT_SERVED:
            if first:
                return None
            n = _circle_radius(pxf, pyf, cos0, sin0, cos1, sin1, mg, r, rw, rh, threshold, acc, out)
        first = False
        for row, col, v in out[:n].tolist():
            circles.append(dict(x=(col - 1) + r + rx, y=(row - 1) + r + ry, r=r, magnitude=v))
    return circles


def _circle_merger(x_margin: int, y_margin: int, r_margin: int):
    """hough.c's merge of two circles (centres and radius within the margins): magnitude-weighted
    mean, half the summed magnitude; None when they stay apart."""
    def merge_circles(a, b):
        if not (abs(a["x"] - b["x"]) < x_margin and abs(a["y"] - b["y"]) < y_margin
                and abs(a["r"] - b["r"]) < r_margin):
            return None
        m = a["magnitude"] + b["magnitude"]
        return dict(x=(a["x"] * a["magnitude"] + b["x"] * b["magnitude"]) // m,
                    y=(a["y"] * a["magnitude"] + b["y"] * b["magnitude"]) // m,
                    r=(a["r"] * a["magnitude"] + b["r"] * b["magnitude"]) // m,
                    magnitude=m // 2)

    return merge_circles


def find_circles(gray: np.ndarray, roi, x_stride: int, y_stride: int, threshold: int, x_margin: int,
                 y_margin: int, r_margin: int, r_min: int, r_max: int, r_step: int) -> list[dict]:
    rx, ry, rw, rh = roi
    # rows as the firmware's two cores split them
    i_len = (ry + rh - 1) - (ry + 1)
    span = (i_len + y_stride - 1) // y_stride * y_stride
    rows = []
    for core in (0, 1):
        start = span * core // 2 + ry + 1
        end = span * (core + 1) // 2 + ry + 1
        rows += list(range(start, min(end, ry + rh - 1), y_stride))
    ys, xs = _samples(rx, ry, rw, rh, x_stride, rows)
    circles: list[dict] = []
    if ys.size == 0:
        return circles
    x_acc, y_acc = _sobel(gray, ys, xs)
    theta = _angle_deg(x_acc, y_acc, 360)
    mag = _magnitude(x_acc, y_acc) & 0xFFFF
    keep = mag != 0
    px, py, th, mg = (xs - rx)[keep], (ys - ry)[keep], theta[keep], mag[keep]
    found = _circles_compiled(px, py, th, mg, roi, threshold, r_min, r_max, r_step) if compiled() else None
    if found is not None:
        return merge_until_stable(found, _circle_merger(x_margin, y_margin, r_margin))
    # both votes of every edge point (along its gradient and opposite) in one set of arrays; the
    # float32 products and sums are those of one vote at a time, the integer sums are exact
    t = np.concatenate([th, (th + 180) % 360])
    cos_t, sin_t = COS[t], SIN[t]
    pxf, pyf = np.concatenate([px, px]).astype(F), np.concatenate([py, py]).astype(F)
    mg2 = np.concatenate([mg, mg]).astype(np.int64)
    weights = mg2.astype(np.float64)
    for r in range(r_min, r_max, r_step):
        w_size, h_size = rw - 2 * r, rh - 2 * r
        a_size, b_size = w_size + 2, h_size + 2
        if a_size <= 2 or b_size <= 2:
            continue
        a = (pxf + F(r) * cos_t).astype(np.int32) - r  # truncation toward zero, as np.trunc
        b = (pyf + F(r) * sin_t).astype(np.int32) - r
        ok = (a >= 0) & (a < w_size) & (b >= 0) & (b < h_size)
        idx = (b[ok] + 1) * a_size + (a[ok] + 1)
        acc = np.bincount(idx, weights=weights[ok], minlength=a_size * b_size).astype(np.int64)
        for row, col, v in _peaks(acc.reshape(b_size, a_size), threshold):
            circles.append(dict(x=(col - 1) + r + rx, y=(row - 1) + r + ry, r=r, magnitude=v))
    circles = merge_until_stable(circles, _circle_merger(x_margin, y_margin, r_margin))
    return circles
