"""``find_edges``'s Canny (``edge.c``) as it runs on the K210.

The firmware's first step, ``imlib_sepconv3(img, kernel_gauss_3, 1/16, 0)``, is not imlib's
separable blur on this board: MaixPy's ``imlib.c`` runs the 3x3 kernel on the KPU
(``sipeed_conv_init``/``kpu_run``, 16-bit weights quantised over the kernel's range, the activation
table scaling back) and ignores the 1/16. The KPU therefore sums ``1 2 1 / 2 4 2 / 1 2 1`` times
the pixels without the division and saturates at 255, over the whole image, zero padded; the
input DMA copies the image as KPU rows of ``ceil(w/64)*64`` bytes, so unless the width is a multiple
of 64 each KPU row starts further into the buffer than the image row (bytes past the image, other
memory on the device, are zeros here), and the output comes back compact. This is computed with the
same integer model as ``conv3`` (``_k210._kpu_conv3``).

Then, inside the ROI: Sobel in ints, ``g = (int) sqrtf(vx^2 + vy^2)``, the direction
``(int) |atan2f(vy, vx) * 180 / pi|`` (libm's atan2f: ``_gradient_angle``) binned to 0/45/90/135, hysteresis against the 8 neighbours'
magnitudes, non-maximum suppression along the direction; the ROI's border is cleared.
"""

from __future__ import annotations

import numpy as np

from ._gradient_angle import degree_table, truncated_degrees
from ._jit import NOT_SERVED, compiled_now as compiled, kernel  # (the vectorised form until kernels are served compiled)

KERNEL_GAUSS_3 = (1, 2, 1, 2, 4, 2, 1, 2, 1)
KERNEL_HIGH_PASS_3 = (-1, -1, -1, -1, 8, -1, -1, -1, -1)
F = np.float32


def kpu_blur(pix: np.ndarray) -> np.ndarray:
    """``imlib_sepconv3`` on the K210: the KPU's 3x3 conv of the gray buffer as it lands in KPU RAM."""
    from ._k210 import _kpu_conv3

    h, w = pix.shape
    stride = (w + 63) // 64 * 64
    flat = np.zeros(stride * h, np.uint8)  # what the input DMA reads: channel_switch_addr * 64 bytes
    n = min(flat.size, pix.size)
    flat[:n] = pix.reshape(-1)[:n]
    plane = flat.reshape(h, stride)[:, :w]
    return _kpu_conv3(plane[None], [float(v) for v in KERNEL_GAUSS_3])[0]


def canny(pix: np.ndarray, roi: tuple[int, int, int, int], low: int, high: int) -> np.ndarray:
    """The blurred image with the ROI replaced by Canny's edges (255) and non-edges (0)."""
    blurred = kpu_blur(pix)
    if compiled():
        out = np.ascontiguousarray(blurred, np.uint8).copy()
        x0, y0, rw, rh = roi
        if _canny_roi.attempt(out, x0, y0, rw, rh, low, high, degree_table(), np.zeros((rh, rw), np.int32),
                              np.zeros((rh, rw), np.int32)) is not NOT_SERVED:
            return out
    return _canny_arrays(blurred, roi, low, high)


@kernel
def _canny_roi(img, x0, y0, rw, rh, low, high, degrees, g, t):
    """``imlib_edge_canny`` after the blur, in place on the ROI of ``img`` (uint8): the Sobel
    magnitude ``(int) sqrtf`` and direction bin of every inner pixel into ``g``/``t`` (int32,
    zeros), then hysteresis and non-maximum suppression. ``degrees``: ``_gradient_angle``'s table
    (``[|vy|, vx + LIMIT]``)."""
    limit = (degrees.shape[1] - 1) // 2
    for gy in range(1, rh - 1):
        y = y0 + gy
        for gx in range(1, rw - 1):
            x = x0 + gx
            tl = np.int64(img[y - 1, x - 1])
            tc = np.int64(img[y - 1, x])
            tr = np.int64(img[y - 1, x + 1])
            ml = np.int64(img[y, x - 1])
            mr = np.int64(img[y, x + 1])
            bl = np.int64(img[y + 1, x - 1])
            bc = np.int64(img[y + 1, x])
            br = np.int64(img[y + 1, x + 1])
            vx = tl - tr + (ml << 1) - (mr << 1) + bl - br
            vy = tl + (tc << 1) + tr - bl - (bc << 1) - br
            g[gy, gx] = int(np.sqrt(np.float32(vx * vx + vy * vy)))
            d = degrees[vy if vy >= 0 else -vy, vx + limit]
            t[gy, gx] = 0 if d < 22 else (45 if d < 67 else (90 if d < 112 else (135 if d < 160 else 0)))
    for gy in range(rh):
        for gx in range(rw):
            y = y0 + gy
            x = x0 + gx
            if gy == 0 or gy == rh - 1 or gx == 0 or gx == rw - 1:
                img[y, x] = 0
                continue
            v = g[gy, gx]
            strong = False
            if v >= low:
                for dy in range(-1, 2):
                    for dx in range(-1, 2):
                        if g[gy + dy, gx + dx] >= high:
                            strong = True
            if not strong:
                img[y, x] = 0
                continue
            d = t[gy, gx]
            if d == 0:
                a = g[gy, gx - 1]
                b = g[gy, gx + 1]
            elif d == 45:
                a = g[gy + 1, gx - 1]
                b = g[gy - 1, gx + 1]
            elif d == 90:
                a = g[gy + 1, gx]
                b = g[gy - 1, gx]
            else:
                a = g[gy + 1, gx + 1]
                b = g[gy - 1, gx - 1]
            img[y, x] = 255 if (v > a and v > b) else 0


def _canny_arrays(blurred: np.ndarray, roi: tuple[int, int, int, int], low: int, high: int) -> np.ndarray:
    """:func:`canny` as array code (until kernels are served compiled)."""
    src = blurred.astype(np.int64)
    x0, y0, rw, rh = roi
    g = np.zeros((rh, rw), np.int64)
    t = np.zeros((rh, rw), np.int64)
    if rw > 2 and rh > 2:
        s = src[y0:y0 + rh, x0:x0 + rw]
        tl, tc, tr = s[:-2, :-2], s[:-2, 1:-1], s[:-2, 2:]
        ml, mr = s[1:-1, :-2], s[1:-1, 2:]
        bl, bc, br = s[2:, :-2], s[2:, 1:-1], s[2:, 2:]
        vx = tl - tr + (ml << 1) - (mr << 1) + bl - br
        vy = tl + (tc << 1) + tr - bl - (bc << 1) - br
        g[1:-1, 1:-1] = np.sqrt((vx * vx + vy * vy).astype(F)).astype(np.int64)
        deg = truncated_degrees(vy, vx)  # libm's atan2f, not numpy's arctan2 (_gradient_angle)
        t[1:-1, 1:-1] = np.select([deg < 22, deg < 67, deg < 112, deg < 160], [0, 45, 90, 135], 0)
    out = src.astype(np.uint8)
    region = np.zeros((rh, rw), np.uint8)
    if rw > 2 and rh > 2:
        gp = np.pad(g, 1)
        strong = np.zeros((rh, rw), bool)
        for dy in (-1, 0, 1):
            for dx in (-1, 0, 1):
                strong |= gp[1 + dy:1 + dy + rh, 1 + dx:1 + dx + rw] >= high
        keep = (g >= low) & strong
        ga = np.zeros_like(g)
        gb = np.zeros_like(g)
        for angle, (ay, ax), (by, bx) in ((0, (0, -1), (0, 1)), (45, (1, -1), (-1, 1)),
                                          (90, (1, 0), (-1, 0)), (135, (1, 1), (-1, -1))):
            sel = t == angle
            ga = np.where(sel, gp[1 + ay:1 + ay + rh, 1 + ax:1 + ax + rw], ga)
            gb = np.where(sel, gp[1 + by:1 + by + rh, 1 + bx:1 + bx + rw], gb)
        region = np.where(keep & (g > ga) & (g > gb), 255, 0).astype(np.uint8)
        region[0, :] = region[-1, :] = 0
        region[:, 0] = region[:, -1] = 0
    out[y0:y0 + rh, x0:x0 + rw] = region
    return out
