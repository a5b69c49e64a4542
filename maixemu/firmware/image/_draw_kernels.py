"""Compiled kernels of the drawing methods: draw.c's and font.c's loops statement by statement.

Every primitive of ``draw.c`` sets pixels to one colour through ``imlib_set_pixel`` (clipped to the
image), so a kernel writes ``c`` straight into the pixel array: the result does not depend on the
order of the writes, only on the set of pixels, and the kernels walk the same integer loops as
the C (Bresenham steps, ``point_fill`` discs, the thick-circle spans, the sheared-ellipse walk).
``draw_image`` samples, masks and blends each destination pixel once, in float32 as the C.

The pixel array is the image's own (uint8 for grayscale and bitmaps, uint16 for RGB565): two
specialisations per kernel. Without numba (``_jit``) these run as Python: the methods whose kernels
touch many pixels then take numpy paths instead (``_draw``; the tests compare the two), the
circle and ellipse walks (few pixels, none allocated) run as they are.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

_I32_MAX = 2147483647
_I32_MIN = -2147483648


@kernel
def point_fill_lines(pix, x0s, y0s, x1s, y1s, r0, r1, colors):
    """``imlib_draw_line`` for each line in turn (later ones over earlier ones): the Bresenham walk
    from (x0, y0) to (x1, y1), a ``point_fill`` disc (offsets r0..r1, radius |r0|; 0..0 is the one
    pixel of thickness 1) at every step, colour ``colors[i]`` (int64 arrays). From a point to
    itself it is one disc: the filled circle of ``imlib_draw_circle`` (``point_fill(img, cx, cy,
    -r, r, c)``)."""
    h, w = pix.shape
    rr = r0 * r0
    for i in range(x0s.size):
        x0 = x0s[i]
        y0 = y0s[i]
        x1 = x1s[i]
        y1 = y1s[i]
        c = colors[i]
        dx = abs(x1 - x0)
        dy = abs(y1 - y0)
        sx = 1 if x0 < x1 else -1
        sy = 1 if y0 < y1 else -1
        e = dx if dx > dy else -dy
        err = e // 2 if e >= 0 else -((-e) // 2)  # C division truncates toward zero
        while True:
            for y in range(r0, r1 + 1):
                py = y0 + y
                if 0 <= py < h:
                    for x in range(r0, r1 + 1):
                        px = x0 + x
                        if 0 <= px < w and x * x + y * y <= rr:
                            pix[py, px] = c
            if x0 == x1 and y0 == y1:
                break
            e2 = err
            if e2 > -dx:
                err -= dy
                x0 += sx
            if e2 < dy:
                err += dx
                y0 += sy


@kernel
def thick_circle(pix, cx, cy, r, t0, t1, c):
    """``imlib_draw_circle``'s outline: the inner and outer midpoint walks and their eight spans."""
    h, w = pix.shape
    xo = r + t0
    xi = max(r - t1, 0)
    xi_tmp = xi
    y = 0
    erro = 1 - xo
    erri = 1 - xi
    while xo >= y:
        for k in range(8):
            # (x_lo, x_hi, y_lo, y_hi) of xLine/yLine in the C's order
            if k == 0:
                a, b, p, q = cx + xi, cx + xo, cy + y, cy + y
            elif k == 1:
                a, b, p, q = cx + y, cx + y, cy + xi, cy + xo
            elif k == 2:
                a, b, p, q = cx - xo, cx - xi, cy + y, cy + y
            elif k == 3:
                a, b, p, q = cx - y, cx - y, cy + xi, cy + xo
            elif k == 4:
                a, b, p, q = cx - xo, cx - xi, cy - y, cy - y
            elif k == 5:
                a, b, p, q = cx - y, cx - y, cy - xo, cy - xi
            elif k == 6:
                a, b, p, q = cx + xi, cx + xo, cy - y, cy - y
            else:
                a, b, p, q = cx + y, cx + y, cy - xo, cy - xi
            a, b, p, q = max(a, 0), min(b, w - 1), max(p, 0), min(q, h - 1)
            for py in range(p, q + 1):
                for px in range(a, b + 1):
                    pix[py, px] = c
        y += 1
        if erro < 0:
            erro += 2 * y + 1
        else:
            xo -= 1
            erro += 2 * (y - xo + 1)
        if y > xi_tmp:
            xi = y
        else:
            if erri < 0:
                erri += 2 * y + 1
            else:
                xi -= 1
                erri += 2 * (y - xi + 1)


@kernel
def sheared_ellipse(pix, x0, y0, width, height, filled, shear_dx, shear_dy, c, t0, t1):
    """``scratch_draw_sheared_ellipse``: both octant walks; per step two columns (filled) or four
    ``point_fill`` discs, each column shifted by ``(int)((dx * shear_dy) / shear_dx)`` in float32
    (saturating as the K210's ``fcvt.w.s``). The caller checks ``(thickness > 0 || filled)`` and
    ``shear_dx != 0``."""
    h, w = pix.shape
    a2 = width * width
    b2 = height * height
    rr = t0 * t0
    for half in range(2):
        if half == 0:
            x, y = 0, height
            sigma = 2 * b2 + a2 * (1 - 2 * height)
        else:
            x, y = width, 0
            sigma = 2 * a2 + b2 * (1 - 2 * width)
        while (b2 * x <= a2 * y) if half == 0 else (a2 * y <= b2 * x):
            for sign in range(2):
                dx = x if sign == 0 else -x
                v = (np.float32(dx) * shear_dy) / shear_dx
                if v != v or v >= 2147483648.0:
                    shift = _I32_MAX
                elif v <= -2147483649.0:
                    shift = _I32_MIN
                else:
                    shift = int(v)
                px0 = x0 + dx
                if filled:
                    if 0 <= px0 < w:
                        top = max(y0 + shift - y, 0)
                        bottom = min(y0 + shift + y, h - 1)
                        if bottom >= top:
                            pix[top:bottom + 1, px0] = c
                else:
                    for dy in (y, -y):
                        cy = y0 + dy + shift
                        for j in range(-t0, t1 + 1):
                            py = cy + j
                            if 0 <= py < h:
                                for i in range(-t0, t1 + 1):
                                    px = px0 + i
                                    if 0 <= px < w and i * i + j * j <= rr:
                                        pix[py, px] = c
            if half == 0:
                if sigma >= 0:
                    sigma += 4 * a2 * (1 - y)
                    y -= 1
                sigma += b2 * (4 * x + 6)
                x += 1
            else:
                if sigma >= 0:
                    sigma += 4 * b2 * (1 - x)
                    x -= 1
                sigma += a2 * (4 * y + 6)
                y += 1


@kernel
def blit_bits(pix, bits, x_off, y_off, c):
    """Set ``c`` where ``bits`` (a (rows, cols) 0/1 uint8 array) is set, at (x_off, y_off), clipped
    (``imlib_draw_font``'s ``imlib_set_pixel`` calls)."""
    h, w = pix.shape
    rows, cols = bits.shape
    for y in range(rows):
        py = y_off + y
        if 0 <= py < h:
            for x in range(cols):
                px = x_off + x
                if bits[y, x] and 0 <= px < w:
                    pix[py, px] = c


@kernel
def blit_glyphs(pix, glyphs, codes, xs, ys, c):
    """:func:`blit_bits` of ``glyphs[codes[i]]`` (an (n, rows, cols) 0/1 table) at (xs[i], ys[i])
    for each character of a string."""
    h, w = pix.shape
    _, rows, cols = glyphs.shape
    for k in range(codes.shape[0]):
        g = codes[k]
        x_off = xs[k]
        y_off = ys[k]
        for y in range(rows):
            py = y_off + y
            if 0 <= py < h:
                for x in range(cols):
                    px = x_off + x
                    if glyphs[g, y, x] and 0 <= px < w:
                        pix[py, px] = c


@kernel
def draw_image(dst, src, sx, sy, x_off, y_off, mask, use_mask, alpha, rgb8, pack8, out_mask):
    """``imlib_draw_image`` for every destination pixel (x, y) < (len(sx), len(sy)).

    ``src`` is the source's pixels as uint16 (a gray or bitmap value is read as an RGB565 one, as
    the C does); ``sx``/``sy`` the sampled source columns/rows; ``mask`` the mask image's bits
    (``image_get_mask_pixel``, read when ``use_mask``; false outside it). With ``alpha == 1`` the
    C converts the source pixel to 8-bit and back, which gives every RGB565 value back unchanged
    (the tests check all 65536), so the pixel is copied; otherwise the C's brightness-weighted
    float32 blend with the destination pixel, through ``rgb8`` (the (65536, 3) table of
    ``COLOR_RGB565_TO_R8/G8/B8``) and ``pack8`` (the (3, 256) R/G/B parts of
    ``COLOR_R8_G8_B8_TO_RGB565``). ``out_mask`` keeps the bits the destination stores
    (``imlib_set_pixel``: 0xFFFF RGB565, 0xFF gray, 1 bitmap).
    """
    h, w = dst.shape
    sh, sw = src.shape
    mh, mw = mask.shape
    one = np.float32(1.0)
    for y in range(sy.shape[0]):
        py = y_off + y
        if py < 0 or py >= h:
            continue
        oy = sy[y]
        for x in range(sx.shape[0]):
            px = x_off + x
            if px < 0 or px >= w:
                continue
            ox = sx[x]
            if use_mask and not (ox < mw and oy < mh and mask[oy, ox]):
                continue
            p = 0xFFFF  # imlib_get_pixel's -1 outside the source, as the RGB565 macros read it
            if ox < sw and oy < sh:
                p = src[oy, ox]
            if alpha == one:
                dst[py, px] = p & out_mask
                continue
            q = dst[py, px]
            sr = rgb8[p, 0]
            sg = rgb8[p, 1]
            sb = rgb8[p, 2]
            t = np.float32((sr | sg | sb) / 256.0)
            ta = alpha * t
            beta = one - ta
            r = min(int(np.float32(sr) * ta + np.float32(rgb8[q, 0]) * beta) & 0xFFFF, 255)
            g = min(int(np.float32(sg) * ta + np.float32(rgb8[q, 1]) * beta) & 0xFFFF, 255)
            b = min(int(np.float32(sb) * ta + np.float32(rgb8[q, 2]) * beta) & 0xFFFF, 255)
            dst[py, px] = (pack8[0, r] | pack8[1, g] | pack8[2, b]) & out_mask
