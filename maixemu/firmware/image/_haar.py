"""Haar cascades as the firmware runs them (``haar.c``, ``integral_mw.c``, ``rectangle_merge``).

The firmware's built-in ``frontalface`` and ``eye`` cascades (``cascade.h``) are OpenCV's
``haarcascade_frontalface_default.xml`` and ``haarcascade_eye.xml`` in integer form: stage
thresholds and leaf values times 256 and node thresholds times 4096, truncated toward zero,
rectangle weights as integers. They are generated here from the XML files opencv-python ships
(a test compares every array with the firmware's header). Cascade files on the card in OpenMV's
binary format load as the firmware loads them.

Detection follows ``imlib_detect_objects``: the ROI scaled by ``1, f, f^2, ...`` with fixed-point
nearest sampling, a scanning step of 5% of the ROI width shrunk by the factor at every scale,
integral images in uint32 (the moving window computes the same rows), the variance test in uint32
arithmetic (overflow included), the standard deviation truncated to an int, every weak classifier
in integers (the weighted rectangle sums wrap at 32 bits as the C's ``int32_t``), then the overlap
merge. Each stage runs on all windows of a row at once.
"""

from __future__ import annotations

import functools
import os
import struct

import numpy as np

from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (array forms until kernels are served)

_BUILTIN = {"frontalface": "haarcascade_frontalface_default.xml", "eye": "haarcascade_eye.xml"}
M32 = 0xFFFFFFFF


class Cascade:
    """``cascade_t``'s arrays (numpy, the firmware's integer types widened to int64)."""

    def __init__(self, window: tuple[int, int], stages: list[int], stage_thresh, tree_thresh, alpha1, alpha2,
                 num_rects, weights, rects):
        self.window = window
        self.stages = np.asarray(stages, np.int64)
        self.stage_thresh = np.asarray(stage_thresh, np.int64)
        self.tree_thresh = np.asarray(tree_thresh, np.int64)
        self.alpha1 = np.asarray(alpha1, np.int64)
        self.alpha2 = np.asarray(alpha2, np.int64)
        self.num_rects = np.asarray(num_rects, np.int64)
        self.weights = np.asarray(weights, np.int64)
        self.rects = np.asarray(rects, np.int64).reshape(-1, 4)
        self.n_stages = len(stages)
        self.n_features = int(self.stages.sum())
        self.n_rectangles = int(self.num_rects.sum())
        # per feature: its first rectangle (rects of a feature are consecutive)
        self.first_rect = np.concatenate([[0], np.cumsum(self.num_rects)[:-1]]).astype(np.int64)


def _opencv_dirs() -> list[str]:
    dirs = []
    try:
        import cv2.data

        dirs.append(cv2.data.haarcascades)
    except Exception:  # pragma: no cover - cv2 without its data module
        pass
    return dirs + ["/usr/share/opencv4/haarcascades", "/usr/share/opencv/haarcascades"]


@functools.lru_cache(maxsize=None)
def builtin(name: str) -> Cascade:
    """A built-in cascade generated from OpenCV's XML (``NotImplementedError`` when it is missing)."""
    import xml.etree.ElementTree as ET

    fname = _BUILTIN[name]
    path = next((os.path.join(d, fname) for d in _opencv_dirs() if os.path.isfile(os.path.join(d, fname))), None)
    if path is None:
        raise NotImplementedError(
            f"image.HaarCascade({name!r}) is built from OpenCV's {fname}, which is not installed here "
            "(opencv-python 4.x ships it; or install Debian's opencv-data)")

    def child(node: ET.Element, tag: str) -> ET.Element:
        found = node.find(tag)
        if found is None:
            raise NotImplementedError(f"image.HaarCascade({name!r}): {path} has no <{tag}> (not an OpenCV cascade)")
        return found

    def text(node: ET.Element, tag: str) -> str:
        return child(node, tag).text or ""

    c = child(ET.parse(path).getroot(), "cascade")
    feats = [[[float(v) for v in (r.text or "").split()] for r in child(f, "rects")] for f in child(c, "features")]
    stages: list[int] = []
    stage_t: list[int] = []
    tree_t: list[int] = []
    a1: list[int] = []
    a2: list[int] = []
    nr: list[int] = []
    wts: list[int] = []
    rects: list[int] = []
    for s in child(c, "stages"):
        trees = child(s, "weakClassifiers")
        stages.append(len(trees))
        stage_t.append(int(float(text(s, "stageThreshold")) * 256))  # int() truncates toward zero
        for t in trees:
            node = text(t, "internalNodes").split()
            leaf = text(t, "leafValues").split()
            tree_t.append(int(float(node[3]) * 4096))
            a1.append(int(float(leaf[0]) * 256))
            a2.append(int(float(leaf[1]) * 256))
            fr = feats[int(node[2])]
            nr.append(len(fr))
            for x, y, w, h, weight in fr:
                rects += [int(x), int(y), int(w), int(h)]
                wts.append(int(weight))
    return Cascade((int(text(c, "width")), int(text(c, "height"))), stages, stage_t, tree_t, a1, a2, nr,
                   wts, rects)


def from_file(data: bytes) -> Cascade:
    """``imlib_load_cascade_from_file``: OpenMV's binary cascade (little-endian, as the K210 reads it)."""
    try:
        w, h, n = struct.unpack_from("<iii", data, 0)
        off = 12
        stages = list(data[off:off + n])
        off += n
        nf = sum(stages)

        def take(fmt: str, count: int):
            nonlocal off
            size = struct.calcsize(f"<{count}{fmt}")
            vals = struct.unpack_from(f"<{count}{fmt}", data, off)
            off += size
            return list(vals)

        st = take("h", n)
        tt, a1, a2 = take("h", nf), take("h", nf), take("h", nf)
        nr = take("b", nf)
        nrect = sum(nr)
        wts = take("b", nrect)
        rects = take("b", 4 * nrect)
    except struct.error:
        raise OSError("The file is corrupted.") from None
    return Cascade((w, h), stages, st, tt, a1, a2, nr, wts, rects)


def _integral(gray: np.ndarray) -> np.ndarray:
    """uint32 integral (inclusive) of a small gray image, as int64 values in [0, 2^32)."""
    return np.cumsum(np.cumsum(gray.astype(np.int64), axis=0), axis=1) & M32


def detect(gray: np.ndarray, cascade: Cascade, n_stages: int, roi, threshold: float, scale_factor: float):
    """``imlib_detect_objects`` -> merged [x, y, w, h] rectangles."""
    F = np.float32
    rx, ry, rw, rh = roi
    win_w, win_h = cascade.window
    n = win_w * win_h
    step = min((rw * 50) // 1000, win_h)
    objects = []
    factor = F(1.0)
    thr = F(threshold)
    while True:
        szw, szh = int(F(rw) / factor), int(F(rh) / factor)
        if szw < win_w or szh < win_h:
            break
        x_ratio = ((rw << 16) // szw) + 1
        y_ratio = ((rh << 16) // szh) + 1
        sy = ry + ((np.arange(szh) * y_ratio) >> 16)
        sx = rx + ((np.arange(szw) * x_ratio) >> 16)
        g = gray[np.minimum(sy, gray.shape[0] - 1)][:, np.minimum(sx, gray.shape[1] - 1)].astype(np.int64)
        isum, isq = _integral(g), _integral(g * g)
        step = int(F(step) / factor)
        step = 1 if step == 0 else step
        y2, x2 = szh - win_h, szw - win_w
        # every window of this scale at once, rows then columns (the C loops' order)
        grid_y, grid_x = np.meshgrid(np.arange(0, max(y2, 0), step), np.arange(0, max(x2, 0), step), indexing="ij")
        ys, xs = grid_y.ravel(), grid_x.ravel()
        if xs.size:
            hits = _cascade_windows(cascade, n_stages, isum, isq, ys, xs, n, thr) if compiled() else None
            if hits is None:
                hits = _windows(cascade, n_stages, isum, isq, ys, xs, n, thr)
            for x, y in zip(xs[hits].tolist(), ys[hits].tolist()):
                objects.append([int(F(x) * factor) + rx, int(F(y) * factor) + ry,
                                int(F(win_w) * factor), int(F(win_h) * factor)])
        factor = F(factor * F(scale_factor))
    return merge(objects) if len(objects) > 1 else objects


def _lookup(I: np.ndarray, ys, xs: np.ndarray, rx, ry, w, h) -> np.ndarray:
    """``imlib_integral_mw_lookup`` of the windows at (xs, ys): P(x+w, y+h) + P(x, y) - P(x+w, y) - P(x, y+h), uint32."""
    y0, y1 = ys + ry, ys + ry + h
    x0, x1 = xs + rx, xs + rx + w
    return (I[y1, x1] + I[y0, x0] - I[y0, x1] - I[y1, x0]) & M32


def _windows(c: Cascade, n_stages: int, isum, isq, ys, xs: np.ndarray, n: int, thr) -> np.ndarray:
    """``run_cascade_classifier`` for the windows at (xs, ys): a boolean per window."""
    F = np.float32
    ys = np.broadcast_to(ys, xs.shape)
    i_s = _lookup(isum, ys, xs, 0, 0, c.window[0], c.window[1])
    i_sq = _lookup(isq, ys, xs, 0, 0, c.window[0], c.window[1])
    m = i_s // n
    v = ((i_sq // n) - m * m) & M32
    alive = v >= 2500  # homogeneous windows are skipped
    std = np.sqrt(((i_sq * n - i_s * i_s) & M32).astype(F)).astype(np.int64)  # uint32 wraps, then float
    idx = np.flatnonzero(alive)
    t_idx = 0
    for i in range(n_stages):
        if not idx.size:
            break
        wy, wx = ys[idx], xs[idx]
        cnt = int(c.stages[i])
        stage_sum = np.zeros(idx.size, np.int64)
        for t in range(t_idx, t_idx + cnt):
            t_thr = c.tree_thresh[t] * std[idx]
            sumw = np.zeros(idx.size, np.int64)
            r0 = int(c.first_rect[t])
            for r in range(r0, r0 + int(c.num_rects[t])):
                x, yy, w, h = (int(v) for v in c.rects[r])
                sumw += _lookup(isum, wy, wx, x, yy, w, h) * (int(c.weights[r]) << 12)
            sumw = ((sumw + (1 << 31)) & M32) - (1 << 31)  # int32_t
            stage_sum += np.where(sumw >= t_thr, c.alpha2[t], c.alpha1[t])
        t_idx += cnt
        keep = stage_sum.astype(F) >= thr * F(c.stage_thresh[i])
        idx = idx[keep]
    out = np.zeros(xs.size, bool)
    out[idx] = True
    return out


def _cascade_windows(c: Cascade, n_stages: int, isum, isq, ys, xs: np.ndarray, n: int, thr) -> np.ndarray | None:
    """:func:`_windows` with the ``_run_cascade`` kernel: a window leaves at its first failed stage
    (None while the kernel is not served compiled: the caller takes the array form).
    A cascade file whose rectangles leave the window (the kernel does not check its indices) runs
    the array form, which reads what numpy's indexing gives as before."""
    r = c.rects
    win_w, win_h = c.window
    if r.size and ((r[:, :2] < 0).any() or (r[:, 2:] < 0).any() or (r[:, 0] + r[:, 2] > win_w).any()
                   or (r[:, 1] + r[:, 3] > win_h).any()):
        return _windows(c, n_stages, isum, isq, ys, xs, n, thr)
    out = np.zeros(xs.size, np.bool_)
    if _run_cascade.attempt(isum, isq, np.ascontiguousarray(ys, np.int64), np.ascontiguousarray(xs, np.int64), n,
                            np.float32(thr), c.window[0], c.window[1], n_stages, c.stages, c.stage_thresh,
                            c.tree_thresh, c.alpha1, c.alpha2, c.num_rects, c.first_rect, c.weights, c.rects,
                            out) is NOT_SERVED:
        return None
    return out


@kernel
def _run_cascade(isum, isq, ys, xs, n, thr, win_w, win_h, n_stages, stages, stage_thresh, tree_thresh, alpha1,
                 alpha2, num_rects, first_rect, weights, rects, out):
    """``run_cascade_classifier`` per window (numba): the variance test and the standard deviation in
    uint32 arithmetic, every weak classifier in integers (the weighted sums wrapped to int32), each
    stage's sum against ``thr * stage_thresh`` in float32; ``out[i]`` is whether window i passes."""
    m32 = 0xFFFFFFFF
    for i in range(xs.shape[0]):
        y0 = ys[i]
        x0 = xs[i]
        i_s = (isum[y0 + win_h, x0 + win_w] + isum[y0, x0] - isum[y0, x0 + win_w] - isum[y0 + win_h, x0]) & m32
        i_sq = (isq[y0 + win_h, x0 + win_w] + isq[y0, x0] - isq[y0, x0 + win_w] - isq[y0 + win_h, x0]) & m32
        mean = i_s // n
        var = ((i_sq // n) - mean * mean) & m32
        if var < 2500:  # homogeneous windows are skipped
            continue
        std = int(np.sqrt(np.float32((i_sq * n - i_s * i_s) & m32)))
        t = 0
        passed = True
        for st in range(n_stages):
            stage_sum = 0
            for _ in range(stages[st]):
                t_thr = tree_thresh[t] * std
                sumw = 0
                r0 = first_rect[t]
                for r in range(r0, r0 + num_rects[t]):
                    rx = x0 + rects[r, 0]
                    ry = y0 + rects[r, 1]
                    rw = rects[r, 2]
                    rh = rects[r, 3]
                    area = (isum[ry + rh, rx + rw] + isum[ry, rx] - isum[ry, rx + rw] - isum[ry + rh, rx]) & m32
                    sumw += area * (weights[r] << 12)
                sumw = ((sumw + (1 << 31)) & m32) - (1 << 31)  # int32_t
                stage_sum += alpha2[t] if sumw >= t_thr else alpha1[t]
                t += 1
            if not np.float32(stage_sum) >= thr * np.float32(stage_thresh[st]):
                passed = False
                break
        out[i] = passed


def merge(rects: list[list[int]]) -> list[list[int]]:
    """``rectangle_merge``: each first rectangle absorbs those that intersect it; the average (C ints)."""
    rects = [list(r) for r in rects]
    objects = []
    while rects:
        rect = rects.pop(0)
        overlap = []
        j = 0
        while j < len(rects):
            o = rects[j]
            if rect[0] < o[0] + o[2] and rect[1] < o[1] + o[3] and rect[0] + rect[2] > o[0] and rect[1] + rect[3] > o[1]:
                overlap.append(rects.pop(j))
                continue
            j += 1
        for o in reversed(overlap):
            rect = [a + b for a, b in zip(rect, o)]
        k = len(overlap) + 1
        rect = [v // k if v >= 0 else -((-v) // k) for v in rect]  # C division toward zero
        objects.append(rect)
    return objects
