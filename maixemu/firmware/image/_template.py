"""``find_template``: normalised cross-correlation as ``template.c`` computes it.

``SEARCH_EX`` visits every ``step``-th position of the roi: integer numerator, the patch mean
``(uint32)(sum / (float)n)``, the denominator from integral images in float32, the first strict
maximum above 0 wins. ``SEARCH_DS`` is the firmware's large-diamond search from the image centre
(the roi is not used there, as on the device): patches clipped to the image, integer mean.
"""

from __future__ import annotations

import numpy as np

from . import _args
from ._core import GRAYSCALE
from ._fmath import F, fsqrt, ftou, i32, u32
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)
from ._host import ImageHost

SEARCH_EX, SEARCH_DS = 0, 1
_CHUNK = 1 << 22  # elements of the window matrix built at once


@kernel
def _patch_dots(f, tc, us, vs, out):
    """``out[a, b] = sum(f[vs[a] + j, us[b] + i] * tc[j, i])``: the NCC numerators of the grid in
    exact integers (each template row's dot product over a row slice, which vectorises)."""
    th, tw = tc.shape
    fi = f.astype(np.int32)
    for a in range(vs.shape[0]):
        v = vs[a]
        for b in range(us.shape[0]):
            u = us[b]
            acc = 0
            for j in range(th):
                seg = fi[v + j, u:u + tw]
                tr = tc[j]
                row = 0
                for i in range(tw):
                    row += seg[i] * tr[i]
                acc += row
            out[a, b] = acc


def _window_dots(f: np.ndarray, t: np.ndarray, us: np.ndarray, vs: np.ndarray) -> np.ndarray:
    """sum(f[v:v+th, u:u+tw] * t) for every (v, u) of the grid, exact (the compiled kernel, or
    float64 sums of integers)."""
    out = np.empty((vs.size, us.size), np.int64)
    if compiled() and _patch_dots.attempt(np.ascontiguousarray(f), np.ascontiguousarray(t, dtype=np.int32), us, vs,
                                          out) is not NOT_SERVED:
        return out
    th, tw = t.shape
    win = np.lib.stride_tricks.sliding_window_view(f, (th, tw))
    tv = t.astype(np.float64).ravel()
    out = np.empty((vs.size, us.size), np.float64)
    rows = max(1, _CHUNK // max(1, us.size * th * tw))
    for i in range(0, vs.size, rows):
        sel = win[vs[i:i + rows]][:, us]  # (r, nu, th, tw)
        out[i:i + rows] = sel.reshape(sel.shape[0], sel.shape[1], -1).astype(np.float64) @ tv
    return np.rint(out).astype(np.int64)


def _grid_sums(f: np.ndarray, th: int, tw: int, us: np.ndarray, vs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """int64 sums of the pixels and of their squares over the th x tw window at each grid point
    (``imlib_integral_lookup``), from OpenCV's integral images (float64: exact integers below 2^53)."""
    import cv2

    s, sq = cv2.integral2(np.ascontiguousarray(f), sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)

    def window(ii: np.ndarray) -> np.ndarray:
        ii = ii.astype(np.int64)
        top, bottom = vs[:, None], vs[:, None] + th
        left, right = us[None, :], us[None, :] + tw
        return ii[bottom, right] - ii[top, right] - ii[bottom, left] + ii[top, left]

    return window(s), window(sq)


def match_ex(f: np.ndarray, t: np.ndarray, roi, step: int) -> tuple[float, tuple | None]:
    """(best correlation, its rect) of the exhaustive search; the rect is None when nothing beat 0."""
    rx, ry, rw, rh = roi
    th, tw = t.shape
    n = tw * th
    t_mean = int(t.astype(np.int64).sum()) // n
    tc = t.astype(np.int64) - t_mean
    den_b = i32(int((tc * tc).sum()))
    us = np.arange(rx, rx + rw - tw + 1, step)
    vs = np.arange(ry, ry + rh - th + 1, step)
    if us.size == 0 or vs.size == 0:
        return 0.0, None
    sums, sumsq = _grid_sums(f, th, tw, us, vs)
    sums &= 0xFFFFFFFF
    sumsq &= 0xFFFFFFFF
    fsum = sums.astype(F)
    nf = F(n)
    f_mean = np.trunc(fsum / nf).astype(np.int64)  # uint32 = sum / (float)n, always >= 0
    # num = sum((f - mean) * (t - t_mean)) = sum(f * tc) - mean * sum(tc), in C int
    num = _window_dots(f, tc, us, vs) - f_mean * int(tc.sum())
    num = ((num + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)
    with np.errstate(invalid="ignore", over="ignore"):
        den_f = sumsq.astype(F) - fsum * (fsum / nf)
    den_a = np.where(np.isnan(den_f) | (den_f <= 0), 0, np.minimum(np.trunc(np.nan_to_num(den_f)), 2**32 - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        c = num.astype(F) / (np.sqrt(den_a.astype(F)) * fsqrt(F(den_b)))
    best = F(0.0)
    where = None
    # first strict maximum in scan order (rows of v, then u); NaN never wins
    flat = c.ravel()
    valid = ~np.isnan(flat)
    if valid.any():
        m = np.max(flat[valid])
        if m > best:
            k = int(np.flatnonzero(flat == m)[0])
            best = m
            where = (int(us[k % us.size]), int(vs[k // us.size]), tw, th)
    return float(best), where


def _block_ncc(f: np.ndarray, t: np.ndarray, t_mean: int, t_sumsq: int, u: int, v: int) -> np.float32:
    """``find_block_ncc``: the patch at (u, v) clipped to the image, integer patch mean."""
    fh, fw = f.shape
    th, tw = t.shape
    w, h = tw, th
    u, v = max(u, 0), max(v, 0)
    if u + w >= fw:
        w = fw - u
    if v + h >= fh:
        h = fh - v
    patch = f[v:v + h, u:u + w].astype(np.int64)
    f_mean = u32(int(patch.sum())) // u32(w * h)
    a = patch - f_mean
    b = t[:h, :w].astype(np.int64) - t_mean
    num = i32(int((a * b).sum()))
    f_sumsq = u32(int((a * a).sum()))
    with np.errstate(divide="ignore", invalid="ignore"):
        return F(num) / (fsqrt(F(f_sumsq)) * fsqrt(F(t_sumsq)))


@kernel
def _block_nccs(f, t, t_mean, t_sumsq, xs, ys, out):
    """``find_block_ncc`` at each (xs[i], ys[i]): the patch clipped to the image, its integer mean
    (``uint32 f_sum / (w*h)``), ``num`` in C int and ``f_sumsq`` in uint32 (wrapping), the float32
    quotient (x/0 as IEEE: +-inf, 0/0 NaN)."""
    fh, fw = f.shape
    th, tw = t.shape
    sqrt_t = np.sqrt(np.float32(t_sumsq))
    for p in range(xs.shape[0]):
        u, v, w, h = max(xs[p], 0), max(ys[p], 0), tw, th
        if u + w >= fw:
            w = fw - u
        if v + h >= fh:
            h = fh - v
        total = 0
        for y in range(v, v + h):
            seg = f[y, u:u + w]
            for x in range(w):
                total += seg[x]
        f_mean = (total & 0xFFFFFFFF) // (w * h)
        num = 0
        sumsq = 0
        for y in range(h):
            seg = f[v + y, u:u + w]
            trow = t[y, :w]
            for x in range(w):
                a = np.int64(seg[x]) - f_mean
                b = np.int64(trow[x]) - t_mean
                num += a * b
                sumsq += a * a
        num = ((num + 2147483648) & 0xFFFFFFFF) - 2147483648
        den = np.sqrt(np.float32(sumsq & 0xFFFFFFFF)) * sqrt_t
        fnum = np.float32(num)
        if den != 0:
            out[p] = fnum / den
        elif fnum > 0:
            out[p] = np.inf
        elif fnum < 0:
            out[p] = -np.inf
        else:
            out[p] = np.nan


def match_ds(f: np.ndarray, t: np.ndarray) -> tuple[float, tuple]:
    """``imlib_template_match_ds``: large diamond search, step = template width, shrinking."""
    fh, fw = f.shape
    th, tw = t.shape
    t_mean = int(t.astype(np.int64).sum()) // (tw * th)
    tc = t.astype(np.int64) - t_mean
    t_sumsq = u32(int((tc * tc).sum()))
    ncc = np.empty(9, F)

    def block_nccs(points):
        """The compiled kernel where it is served, else the array form per point."""
        if compiled():
            xs = np.array([p[0] for p in points], np.int64)
            if _block_nccs.attempt(f, t, t_mean, t_sumsq, xs, np.array([p[1] for p in points], np.int64),
                                   ncc[:xs.size]) is not NOT_SERVED:
                return ncc[:xs.size]
        return [_block_ncc(f, t, t_mean, t_sumsq, x, y) for x, y in points]
    cx, cy = fw // 2 - tw // 2, fh // 2 - th // 2
    px = py = 0
    max_xc = -np.finfo(np.float32).max
    step = tw
    while step > 0:
        half = step // 2
        pts = ((cx, cy), (cx + step, cy), (cx + half, cy + half), (cx, cy + step), (cx - half, cy + half),
               (cx - step, cy), (cx - half, cy - half), (cx, cy - step), (cx + half, cy - half))
        inside = [(x, y) for x, y in pts if x < fw and y < fh]
        for (x, y), xc in zip(inside, block_nccs(inside)):
            if xc > max_xc:
                px, py, max_xc = x, y, xc
        if px == cx and py == cy:
            step -= 1
        cx, cy = px, py
    rect = (max(cx, 0), max(cy, 0), fw - cx if cx + tw > fw else tw, fh - cy if cy + th > fh else th)
    return float(max_xc), rect


class TemplateMixin(ImageHost):
    def find_template(self, template, threshold, *args, **kwargs):
        """The (x, y, w, h) where ``template`` correlates best (above ``threshold``), else None.

        Both images must be grayscale. Keywords as ``py_image_find_template``: ``roi``,
        ``step`` (2, exhaustive search only) and ``search`` (``image.SEARCH_EX``/``SEARCH_DS``).
        """
        from ._core import ImageBase

        if self._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        if not isinstance(template, ImageBase):
            raise TypeError("Expected an image")
        if template._fmt != GRAYSCALE:
            raise OSError("Image format is not supported!")
        thresh = F(_args.to_float(threshold))
        roi = _args.roi(self.width(), self.height(), _args.pick(args, 0, kwargs, "roi", None))
        if not (roi[2] >= template.width() and roi[3] >= template.height()):
            raise OSError("Region of interest is smaller than template!")
        step = _args.to_int(_args.pick(args, 1, kwargs, "step", 2))
        search = _args.to_int(_args.pick(args, 2, kwargs, "search", SEARCH_EX))
        if step <= 0 and search != SEARCH_DS:
            raise OSError("step must be > 0 (the firmware loops forever on step <= 0)")
        f, t = self._pix, template._pix
        rect: tuple | None
        if search == SEARCH_DS:
            corr, rect = match_ds(f, t)
        else:
            corr, rect = match_ex(f, t, roi, step)
        if F(corr) > thresh and rect is not None:
            return rect
        return None
