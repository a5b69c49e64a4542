"""``find_line_segments``' per-segment tail compiled: each LSD segment clipped to the roi
(``lb_clip_line``), then its theta, rho and magnitude as ``imlib_lsd_find_line_segments`` makes
them (the Python loop in ``_lsd.find_line_segments`` serves while this is not compiled; the tests
compare the two).

The float32 steps are those of the Python loop: ``lb_clip_line``'s Liang-Barsky parameters,
``fast_atan2f`` of the clipped direction (``_quadkernels``' helper), the K210's
float-to-int conversion (truncate, saturate, NaN to INT32_MAX), C integer division of the
midpoint; theta's ``% 180`` is Python's (floor), as the loop's.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel
from ._quadkernels import fast_atan2f

#: the int columns of a row of :func:`_segment_lines`' output
X1, Y1, X2, Y2, MAGNITUDE, THETA, RHO = range(7)


@kernel
def _segment_lines(segs, rx, ry, rw, rh, cos_t, sin_t, out):
    """The lines of ``segs`` (float32 rows x1, y1, x2, y2, width, p, log_nfa in roi coordinates)
    that touch the roi, as int64 rows (x1, y1, x2, y2, magnitude, theta, rho) in image
    coordinates; returns their count."""
    f32 = np.float32
    zero = f32(0.0)
    one = f32(1.0)
    i32_max = 2147483647
    i32_min = -2147483648

    def ftoi(v):
        if v != v or v >= i32_max:
            return i32_max
        if v <= i32_min:
            return i32_min
        return np.int64(v)

    def cdiv(a, b):
        q = abs(a) // abs(b)
        return -q if (a < 0) != (b < 0) else q


    n = 0
    p = np.zeros(4, np.int64)
    q = np.zeros(4, np.int64)
    for i in range(segs.shape[0]):
        x1 = ftoi(segs[i, 0])
        y1 = ftoi(segs[i, 1])
        x2 = ftoi(segs[i, 2])
        y2 = ftoi(segs[i, 3])
        xd = x2 - x1
        yd = y2 - y1
        p[0] = -xd
        p[1] = xd
        p[2] = -yd
        p[3] = yd
        q[0] = x1
        q[1] = (rw - 1) - x1
        q[2] = y1
        q[3] = (rh - 1) - y1
        umin = zero
        umax = one
        inside = True
        for k in range(4):
            if p[k] != 0:
                u = f32(q[k]) / f32(p[k])
                if p[k] < 0:
                    if u > umax:
                        inside = False
                        break
                    if u > umin:
                        umin = u
                else:
                    if u < umin:
                        inside = False
                        break
                    if u < umax:
                        umax = u
            elif q[k] < 0:
                inside = False
                break
        if not inside or umax < umin:
            continue
        cx1 = ftoi(f32(x1) + f32(xd) * umin) + rx
        cy1 = ftoi(f32(y1) + f32(yd) * umin) + ry
        cx2 = ftoi(f32(x1) + f32(xd) * umax) + rx
        cy2 = ftoi(f32(y1) + f32(yd) * umax) + ry
        dx = cx2 - cx1
        dy = cy2 - cy1
        mdx = cx1 + cdiv(dx, 2)
        mdy = cy1 + cdiv(dy, 2)
        rot = (fast_atan2f(f32(dy), f32(dx)) if dx != 0 else f32(1.570796)) + f32(1.570796)
        theta = ftoi(rot * f32(57.295780)) % 180
        out[n, X1] = cx1
        out[n, Y1] = cy1
        out[n, X2] = cx2
        out[n, Y2] = cy2
        out[n, MAGNITUDE] = ftoi(segs[i, 6])
        out[n, THETA] = theta
        out[n, RHO] = ftoi(f32(mdx) * cos_t[theta] + f32(mdy) * sin_t[theta])
        n += 1
    return n
