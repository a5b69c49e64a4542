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

from ._gradient_angle import truncated_degrees

KERNEL_GAUSS_3 = (1, 2, 1, 2, 4, 2, 1, 2, 1)
KERNEL_HIGH_PASS_3 = (-1, -1, -1, -1, 8, -1, -1, -1, -1)
F = np.float32


def kpu_blur(pix: np.ndarray) -> np.ndarray:
    """``imlib_sepconv3`` on the K210: the KPU's 3x3 conv of the gray buffer as it lands in KPU RAM."""
    from ._k210 import _kpu_conv3

    h, w = pix.shape
    stride = (w + 63) // 64 * 64
    flat = np.zeros(stride * h, np.int64)  # what the input DMA reads: channel_switch_addr * 64 bytes
    n = min(flat.size, pix.size)
    flat[:n] = pix.reshape(-1)[:n]
    plane = flat.reshape(h, stride)[:, :w]
    return _kpu_conv3(plane[None], [float(v) for v in KERNEL_GAUSS_3])[0]


def canny(pix: np.ndarray, roi: tuple[int, int, int, int], low: int, high: int) -> np.ndarray:
    src = kpu_blur(pix).astype(np.int64)
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
