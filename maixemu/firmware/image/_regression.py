"""``get_regression``: the line-following fit of ``imlib_get_regression`` (stats.c).

Every threshold is scanned on its own over the sample grid (rows ``roi.y + k*y_stride``, columns
from ``roi.x + y % x_stride`` by ``x_stride``), so a pixel inside two thresholds counts twice, as on
the device. Least squares uses the blob moments with the firmware's integer centroid and 32-bit
sums; ``robust=True`` is the firmware's Theil-Sen variant: the medians of the x and y coordinates and
of all pairwise x and y differences (in the firmware's scan order, first minus later point).
"""

from __future__ import annotations

import numpy as np

from . import _args, _lab
from ._fmath import COS, SIN, F, cdiv, fast_atan2f, fsqrt, ftoi, i32, line_length, line_through_roi
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)
from ._host import ImageHost


def sample_points(pix: np.ndarray, fmt: int, roi, x_stride: int, y_stride: int, thresholds,
                  invert: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per threshold, the (xs, ys) of the sampled pixels inside it, in the firmware's scan order."""
    rx, ry, rw, rh = roi
    ys = np.arange(ry, ry + rh, y_stride)
    out = []
    for th in thresholds:
        xl, yl = [], []
        for phase in range(x_stride):  # rows sharing the same first column, done together
            rows = ys[ys % x_stride == phase]
            if rows.size == 0:
                continue
            cols = np.arange(rx + phase, rx + rw, x_stride)
            if cols.size == 0:
                continue
            hit = _lab.threshold_mask(pix[np.ix_(rows, cols)], fmt, th) ^ invert
            r, c = np.nonzero(hit)
            yl.append(rows[r])
            xl.append(cols[c])
        if xl:
            x = np.concatenate(xl).astype(np.int64)
            y = np.concatenate(yl).astype(np.int64)
            order = np.lexsort((x, y))  # row-major, as the scan visits them
            out.append((x[order], y[order]))
        else:
            out.append((np.zeros(0, np.int64), np.zeros(0, np.int64)))
    return out


def _median_index(hist: np.ndarray, total: int) -> int:
    """``get_median``: first bin where the running count reaches ``(total + 1) // 2``."""
    threshold = (total + 1) // 2
    cum = np.cumsum(hist)
    before = cum - hist
    hit = np.nonzero((before < threshold) & (threshold <= cum))[0]
    return int(hit[0]) if hit.size else len(hist) - 1


def _pair_differences(values: list[np.ndarray], size: int) -> np.ndarray:
    """Histogram (offset by ``size``) of ``v[i] - v[j]`` over all point pairs ``i < j``.

    ``values`` holds the coordinate of the points in scan order, split in blocks (one per threshold);
    within a block the points come row by row.
    """
    hist = np.zeros(2 * size, np.int64)
    seq = np.concatenate(values) if values else np.zeros(0, np.int64)
    n = seq.size
    if n < 2:
        return hist
    if compiled() and _pair_hist.attempt(np.ascontiguousarray(seq, np.int64), size, np.zeros(size, np.int64),
                                         hist) is not NOT_SERVED:
        return hist
    # The sequence is cut in chunks: a chunk's pairs with all earlier points are one correlation of
    # two histograms, the pairs inside it a small outer difference.
    earlier = np.zeros(size, np.int64)
    chunk = 512
    for s in range(0, n, chunk):
        block = seq[s:s + chunk]
        bh = np.bincount(block, minlength=size)
        if s:
            # earlier - block: correlation of the two histograms
            corr = np.convolve(earlier, bh[::-1])  # index k -> difference k - (size - 1)
            hist[1:2 * size] += corr
        d = block[:, None] - block[None, :]
        iu = np.triu_indices(block.size, 1)
        hist += np.bincount(d[iu] + size, minlength=2 * size)
        earlier += bh
    return hist


@kernel
def _pair_hist(seq, size, earlier, hist):
    """:func:`_pair_differences` (numba): point by point, the differences with every earlier point
    read off the running histogram of the earlier values (``earlier``), so the pairs cost the point
    count times the coordinate range instead of the point count squared."""
    lo = size
    hi = -1
    for j in range(seq.shape[0]):
        v = seq[j]
        for u in range(lo, hi + 1):
            c = earlier[u]
            if c != 0:
                hist[u - v + size] += c
        earlier[v] += 1
        if v < lo:
            lo = v
        if v > hi:
            hi = v


def get_regression(pix: np.ndarray, fmt: int, img_w: int, img_h: int, roi, x_stride: int,
                   y_stride: int, thresholds, invert: bool, area_threshold: int,
                   pixels_threshold: int, robust: bool) -> dict | None:
    pts = sample_points(pix, fmt, roi, x_stride, y_stride, thresholds, invert)
    xs = np.concatenate([p[0] for p in pts]) if pts else np.zeros(0, np.int64)
    ys = np.concatenate([p[1] for p in pts]) if pts else np.zeros(0, np.int64)
    rx, ry, rw, rh = roi
    n = int(xs.size)
    if n == 0:
        return None
    w = int(max(xs.max(), rx)) - int(min(xs.min(), rx + rw - 1))
    h = int(max(ys.max(), ry)) - int(min(ys.min(), ry + rh - 1))
    if not (w * h >= area_threshold and n >= pixels_threshold):
        return None
    if not robust:
        sx, sy = int(xs.sum()), int(ys.sum())
        sxx, sxy, syy = int((xs * xs).sum()), int((xs * ys).sum()), int((ys * ys).sum())
        mx, my = cdiv(i32(sx), n), cdiv(i32(sy), n)
        a = i32(sxx - 2 * mx * i32(sx) + n * mx * mx)
        b = i32(sxy - (mx * i32(sy) + my * i32(sx)) + n * mx * my)
        c = i32(syy - 2 * my * i32(sy) + n * my * my)
        if a != c:
            rot = F(fast_atan2f(F(i32(2 * b)), F(i32(a - c))) / F(2.0)) + F(1.570796)
        else:
            rot = F(1.570796) + F(1.570796)
        theta = ftoi(F(rot) * F(57.295780)) % 180
        part0 = F(i32(a + c)) / F(2.0)
        fb, fac = F(b), F(i32(a - c))
        part1 = fsqrt(F(4) * fb * fb + fac * fac) / F(2.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            p_add, p_sub = fsqrt(part0 + part1), fsqrt(part0 - part1)
            e_min = p_add if p_add < p_sub else p_sub  # IM_MIN / IM_MAX (a NaN takes the 2nd value)
            e_max = p_add if p_add > p_sub else p_sub
            magnitude = i32(ftoi(F(e_max) / F(e_min)) - 1)
    else:
        xh = np.bincount(xs, minlength=img_w)
        yh = np.bincount(ys, minlength=img_h)
        delta_sum = n * (n - 1) // 2
        if not delta_sum:
            return None
        xd = _pair_differences([p[0] for p in pts], img_w)
        yd = _pair_differences([p[1] for p in pts], img_h)
        mx = _median_index(xh, n)
        my = _median_index(yh, n)
        mdx = _median_index(xd, delta_sum) - img_w
        mdy = _median_index(yd, delta_sum) - img_h
        rot = (fast_atan2f(F(mdy), F(mdx)) if mdx else F(1.570796)) + F(1.570796)
        theta = ftoi(F(rot) * F(57.295780)) % 180
        magnitude = ftoi(fsqrt(F(mdx * mdx + mdy * mdy)))
    theta = theta + 180 if theta < 0 else theta
    rho = ftoi(F(mx - rx) * COS[theta] + F(my - ry) * SIN[theta])
    placed = line_through_roi(theta, rho, roi)
    if placed is None:
        return None
    x1, y1, x2, y2, rho = placed
    return dict(x1=x1, y1=y1, x2=x2, y2=y2, length=line_length(x1, y1, x2, y2), magnitude=magnitude,
                theta=theta, rho=rho)


class RegressionMixin(ImageHost):
    def get_regression(self, thresholds, *args, **kwargs):
        """The line through the pixels inside ``thresholds`` (least squares, or Theil-Sen with
        ``robust=True``), as a ``line`` object, or None when too few pixels match.

        Arguments as ``py_image_get_regression``: ``invert``, ``roi``, ``x_stride`` (2), ``y_stride``
        (1), ``area_threshold`` (10), ``pixels_threshold`` (10), ``robust`` (False).
        """
        from ._find import Line, _roi_and_strides

        ths = _lab.parse_thresholds(thresholds, self._fmt)
        if not ths:
            return None
        rest = args
        invert = bool(_args.to_int(_args.pick(rest, 0, kwargs, "invert", False)))
        roi, x_stride, y_stride = _roi_and_strides(self, rest[1:], kwargs)
        area_threshold = _args.to_int(_args.pick(rest, 4, kwargs, "area_threshold", 10))
        pixels_threshold = _args.to_int(_args.pick(rest, 5, kwargs, "pixels_threshold", 10))
        robust = bool(_args.to_int(_args.pick(rest, 6, kwargs, "robust", False)))
        found = get_regression(self._pix, self._fmt, self.width(), self.height(), roi, x_stride,
                               y_stride, ths, invert, area_threshold, pixels_threshold, robust)
        return None if found is None else Line(**found)
