"""``merge_alot`` (line.c) compiled: the merging passes of ``find_line_segments(merge_distance=...)``.

A pass takes the first line as the head and folds into it every later line that it accepts
(theta within ``max_theta_diff`` and an end of the shorter line within ``merge_distance`` of a point
of the longer one, walked with ``trace_line``'s Bresenham steps), each fold extending the head along
its major axis; passes repeat until one merges nothing. ``_lsd.merge_alot`` is the same in Python
(the path without numba; the tests compare the two). Integer arithmetic except the float32 square
roots of the distances and lengths (``fsqrt.s``, correctly rounded in both paths); divisions by zero
give -1 as RISC-V's ``div`` does.
"""

from __future__ import annotations

import numpy as np

from ._jit import kernel

#: the columns of a line row
FIELDS = ("x1", "y1", "x2", "y2", "magnitude", "theta", "rho")


@kernel
def _merge_passes(lines, n, threshold, theta_threshold, items, rest, outs):
    """Merges ``lines[items[:n]]`` (rows of FIELDS; a merged head's row is overwritten) until a pass
    merges nothing; returns the number of lines left, whose rows are ``items[:count]`` in order
    (``rest`` and ``outs`` are scratch index arrays of the same length)."""
    la = np.zeros(4, np.int64)
    lb = np.zeros(4, np.int64)
    big = np.zeros(4, np.int64)
    small = np.zeros(4, np.int64)
    ext = np.zeros(4, np.int64)
    m = n
    while True:
        merged = False
        n_out = 0
        while m > 0:
            head = items[0]
            r = 0
            for j in range(1, m):
                b = items[j]
                for c in range(4):
                    la[c] = lines[head, c]
                    lb[c] = lines[b, c]
                dx0 = la[2] - la[0]
                dy0 = la[3] - la[1]
                dx1 = lb[2] - lb[0]
                dy1 = lb[3] - lb[1]
                len0 = int(np.sqrt(np.float32(dx0 * dx0 + dy0 * dy0)))
                len1 = int(np.sqrt(np.float32(dx1 * dx1 + dy1 * dy1)))
                td = abs(lines[head, 5] - lines[b, 5])
                if td >= 90:
                    td = 180 - td
                accept = False
                if td <= theta_threshold:
                    for c in range(4):
                        big[c] = la[c] if len0 > len1 else lb[c]
                        small[c] = la[c] if len0 <= len1 else lb[c]
                    # merge_line: a point of big's Bresenham walk within threshold of an end of small
                    x1, y1 = big[0], big[1]
                    ddx, ddy = big[2] - x1, big[3] - y1
                    ax, ay = abs(ddx), abs(ddy)
                    sx = 1 if ddx > 0 else (-1 if ddx < 0 else 0)
                    sy = 1 if ddy > 0 else (-1 if ddy < 0 else 0)
                    steps = ax if ax >= ay else ay
                    for i in range(steps + 1):
                        if i == 0:
                            px, py = x1, y1
                        elif ax >= ay:
                            px, py = x1 + sx * i, y1 + sy * (((ax >> 1) + i * ay) // ax)
                        else:
                            px, py = x1 + sx * (((ay >> 1) + i * ax) // ay), y1 + sy * i
                        for e in range(2):
                            qx = small[2 * e]
                            qy = small[2 * e + 1]
                            d2 = (px - qx) * (px - qx) + (py - qy) * (py - qy)
                            if int(np.sqrt(np.float32(d2))) <= threshold:
                                accept = True
                                break
                        if accept:
                            break
                if not accept:
                    rest[r] = b
                    r += 1
                    continue
                # the merged line along the first line's major axis (x when its x extent is the larger)
                axis = 0 if abs(la[2] - la[0]) >= abs(la[3] - la[1]) else 1
                o = 1 - axis
                if la[2 + axis] - la[axis] < 0:
                    la[0], la[1], la[2], la[3] = la[2], la[3], la[0], la[1]
                if lb[2 + axis] - lb[axis] < 0:
                    lb[0], lb[1], lb[2], lb[3] = lb[2], lb[3], lb[0], lb[1]
                d_axis = la[2 + axis] - la[axis]
                d_other = la[2 + o] - la[o]
                for c in range(4):
                    big[c] = la[c] if len0 > len1 else lb[c]  # the source of the other coordinate
                lo = min(la[axis], lb[axis])
                hi = max(la[2 + axis], lb[2 + axis])
                num0 = d_other * (big[axis] - lo)
                num1 = d_other * (hi - big[2 + axis])
                if d_axis == 0:
                    q0 = -1
                    q1 = -1
                else:
                    q0 = abs(num0) // abs(d_axis)
                    q0 = q0 if (num0 >= 0) == (d_axis > 0) else -q0
                    q1 = abs(num1) // abs(d_axis)
                    q1 = q1 if (num1 >= 0) == (d_axis > 0) else -q1
                ext[axis] = lo
                ext[2 + axis] = hi
                ext[o] = big[o] - q0
                ext[2 + o] = big[2 + o] + q1
                for c in range(4):
                    lines[head, c] = ext[c]
                merged = True
            outs[n_out] = head
            n_out += 1
            for j in range(r):
                items[j] = rest[j]
            m = r
        for j in range(n_out):  # the heads are the next pass's lines
            items[j] = outs[j]
        m = n_out
        if not merged:
            return n_out
