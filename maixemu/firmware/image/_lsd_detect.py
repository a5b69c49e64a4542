"""LSD's main loop compiled: every region ``find_line_segments`` grows, its rectangle, refinement and
NFA, in one numba kernel (``_lsd._LSD.detect`` calls it when numba is there).

The statements are those of ``_lsd._LSD`` (region_grow, region2rect, get_theta, refine,
reduce_region_radius, rect_improve, rect_nfa, nfa, log_gamma) on float32 scalars in the same order,
with the firmware's fast approximations written out (``fast_atan2f``, ``fast_log``, ``fast_expf``)
and libm's ``cosf``/``sinf``/``log10f``/``powf``/``sinhf`` called through numba, which calls the C
library's float functions as ``_lsd`` does through ctypes (``tests/firmware/test_image_lsd_detect.py``
compares the two paths). Divisions by zero are written out as IEEE gives them (numba would raise).

Unlike the other kernels, this one has no exact Python twin: numpy's own float32 ``log10``/``power``
/``sinh``/``cos``/``sin`` (SIMD) differ from the C library's in the last bit, so without numba the
``_LSD`` methods (ctypes libm) remain the path.
"""

from __future__ import annotations

import math

import numpy as np

from ._jit import kernel

#: the fields of a rectangle row (``struct rect``)
X1, Y1, X2, Y2, WIDTH, CX, CY, THETA, DX, DY, PREC, P = range(12)

#: log_gamma_lanczos' q coefficients (float32)
LANCZOS_Q = np.array([75122.6331530, 80916.6278952, 36308.2951477, 8687.24529705, 1168.92649479,
                      83.8676043424, 2.50662827511], np.float32)


@kernel
def _detect(angles, modgrad, seeds_x, seeds_y, cos_t, sin_t, seed_cos, seed_sin, prec0, p0, min_reg_size,
            lanczos_q, log_nt, used, reg_x, reg_y, out):
    """The segments of ``_LSD.detect`` into ``out`` rows (x1 + .5, y1 + .5, x2 + .5, y2 + .5, width,
    p, log_nfa); returns their count, or -1 when a rectangle scan would not end (a NaN rectangle,
    on which the device loops forever)."""
    f32 = np.float32
    h, w = angles.shape
    pi = f32(np.pi)
    rad = pi / f32(180.0)
    notdef = f32(-512.0)
    three_half_pi = f32(4.71238898038)
    two_pi = f32(6.28318530718)
    flt_max = f32(3.4028234663852886e38)
    flt_min = f32(1.1754943508222875e-38)
    flt_eps = f32(1.1920928955078125e-07)
    zero = f32(0.0)
    one = f32(1.0)
    half = f32(0.5)
    nan = f32(np.nan)
    inf = f32(np.inf)
    neg_inv_ln10 = f32(-1.0) / f32(2.30258509299404568402)
    ln2 = f32(0.69314718)
    bits_f = np.zeros(1, np.float32)
    bits_u = bits_f.view(np.uint32)

    first_x = np.zeros(1, seeds_x.dtype)  # refine's seed: the region's first pixel
    first_y = np.zeros(1, seeds_y.dtype)

    def div(a, b):
        if b == zero:
            if a != a or a == zero:
                return nan
            return -inf if (a < zero) != (math.copysign(1.0, b) < 0.0) else inf
        return a / b

    def atanf(xx):
        neg = xx < zero
        v = -xx if neg else xx
        if v > f32(2.414213562373095):
            yv = f32(np.pi / 2)
            xr = -(one / v)
        elif v > f32(0.4142135623730950):
            yv = f32(np.pi / 4)
            xr = (v - one) / (v + one)
        else:
            yv = zero
            xr = v
        z = xr * xr
        poly = ((((f32(8.05374449538e-2) * z - f32(1.38776856032e-1)) * z + f32(1.99777106478e-1)) * z
                 - f32(3.33329491539e-1)) * z + one) * xr
        yv = poly + yv
        return -yv if neg else yv

    def atan2(yy, xx):
        """``fast_atan2f``: its four quadrant cases, one ``atanf`` call site."""
        if xx > zero and yy >= zero:
            case = 1
        elif xx < zero and yy >= zero:
            case = 2
        elif xx < zero and yy < zero:
            case = 3
        elif xx > zero and yy < zero:
            case = 4
        else:
            if yy == zero:
                return zero
            return pi if yy > zero else -pi
        q = yy / xx
        a = atanf(-q if case == 2 or case == 4 else q)
        if case == 1:
            return a
        if case == 2:
            return pi - a
        if case == 3:
            return pi + a
        return f32(f32(2) * pi) - a

    def dist(x1, y1, x2, y2):
        dx = x2 - x1
        dy = y2 - y1
        return np.sqrt(dx * dx + dy * dy)

    def angle_diff(a, b, signed):
        a = a - b
        while a <= -pi:
            a = a + two_pi
        while a > pi:
            a = a - two_pi
        if not signed and a < zero:
            a = -a
        return a

    def angle_rad(x, y):
        return f32(angles[y, x]) * rad

    def isaligned(x, y, theta, prec):
        a = f32(angles[y, x]) * rad
        if a == notdef:
            return False
        t = theta - a
        if t < zero:
            t = -t
        if t > three_half_pi:
            t = t - two_pi
            if t < zero:
                t = -t
        return t <= prec

    def region_grow(sx, sy, k, stop, min_size, prec):
        """From the seeds ``k, k + 1, ... < stop`` of (sx, sy): (index of the seed kept or ``stop``,
        count, angle); the region is ``reg_x/reg_y[:count]``."""
        while k < stop:
            x = sx[k]
            y = sy[k]
            reg_angle = f32(angles[y, x]) * rad
            if used[y, x] != 0 or reg_angle == notdef:
                k += 1
                continue
            sumdx = seed_cos[angles[y, x] + 32768]
            sumdy = seed_sin[angles[y, x] + 32768]
            reg_x[0] = x
            reg_y[0] = y
            count = 1
            used[y, x] = 1
            i = 0
            while i < count:
                rx = reg_x[i]
                ry = reg_y[i]
                for xx in range(rx - 1, rx + 2):
                    for yy in range(ry - 1, ry + 2):
                        if 0 <= xx < w and 0 <= yy < h and used[yy, xx] == 0:
                            if isaligned(xx, yy, reg_angle, prec):
                                used[yy, xx] = 1
                                reg_x[count] = xx
                                reg_y[count] = yy
                                count += 1
                                deg = angles[yy, xx] % 360
                                sumdx = sumdx + cos_t[deg]
                                sumdy = sumdy + sin_t[deg]
                                reg_angle = atan2(sumdy, sumdx)
                i += 1
            if count >= min_size:
                return k, count, reg_angle
            k += 1
        return stop, 0, zero

    def region2rect(count, reg_angle, prec, p, r):
        x = zero
        y = zero
        s = zero
        for i in range(count):
            wgt = f32(modgrad[reg_y[i], reg_x[i]])
            x = x + f32(reg_x[i]) * wgt
            y = y + f32(reg_y[i]) * wgt
            s = s + wgt
        x = div(x, s)
        y = div(y, s)
        ixx = zero
        iyy = zero
        ixy = zero
        for i in range(count):
            wgt = f32(modgrad[reg_y[i], reg_x[i]])
            dxv = f32(reg_x[i]) - x
            dyv = f32(reg_y[i]) - y
            ixx = ixx + dyv * dyv * wgt
            iyy = iyy + dxv * dxv * wgt
            ixy = ixy - dxv * dyv * wgt
        lam = half * (ixx + iyy - np.sqrt((ixx - iyy) * (ixx - iyy) + f32(4.0) * ixy * ixy))
        if abs(ixx) > abs(iyy):
            ty, tx = lam - ixx, ixy
        else:
            ty, tx = ixy, lam - iyy
        theta = atan2(ty, tx)
        if angle_diff(theta, reg_angle, False) > prec:
            theta = theta + pi
        dx = np.cos(theta)
        dy = np.sin(theta)
        l_min = zero
        l_max = zero
        w_min = zero
        w_max = zero
        for i in range(count):
            px = f32(reg_x[i])
            py = f32(reg_y[i])
            l = (px - x) * dx + (py - y) * dy
            wv = -(px - x) * dy + (py - y) * dx
            if l > l_max:
                l_max = l
            if l < l_min:
                l_min = l
            if wv > w_max:
                w_max = wv
            if wv < w_min:
                w_min = wv
        r[X1] = x + l_min * dx
        r[Y1] = y + l_min * dy
        r[X2] = x + l_max * dx
        r[Y2] = y + l_max * dy
        r[WIDTH] = w_max - w_min
        r[CX] = x
        r[CY] = y
        r[THETA] = theta
        r[DX] = dx
        r[DY] = dy
        r[PREC] = prec
        r[P] = p
        if r[WIDTH] < one:
            r[WIDTH] = one

    corners_x = np.zeros(4, np.float32)
    corners_y = np.zeros(4, np.float32)

    def fast_log(x):
        bits_f[0] = x
        vi = int(bits_u[0])
        bits_u[0] = (vi & 0x007FFFFF) | 0x3F000000
        mx = bits_f[0]
        y = f32(vi) * f32(1.1920928955078125e-7)
        return ln2 * (y - f32(124.22551499) - f32(1.498030302) * mx - f32(1.72587999) / (f32(0.3520887068) + mx))

    def fast_expf(x):
        v = f32(f32(1512775) * x) + f32(1072632447)
        if v != v:
            lbits = 0xFFFFFFFF
        else:
            lbits = int(min(max(float(v), 0.0), 4294967295.0))
        m = lbits & 0xFFFFF
        e = (lbits >> 20) & 0x7FF
        sgn = (lbits >> 31) & 1
        e = (e - 1023 + 127) & 0xFF
        bits_u[0] = ((sgn << 31) | (e << 23) | (m << 3)) & 0xFFFFFFFF
        return bits_f[0]

    def double_equal(a, b):
        if a == b:
            return True
        abs_diff = abs(a - b)
        aa = abs(a)
        bb = abs(b)
        abs_max = aa if aa > bb else bb
        if abs_max < flt_min:
            abs_max = flt_min
        return (abs_diff / abs_max) <= (f32(100.0) * flt_eps)

    def log_gamma(x):
        if x > f32(15.0):
            inner = np.sinh(one / x) * x + (one / f32(810.0)) * np.power(x, f32(-6.0))
            return fast_log(inner) * (half * x) + ((x - half) * fast_log(x) + (f32(0.918938533204673) - x))
        a = (x + half) * fast_log(x + f32(5.5)) - (x + f32(5.5))
        b = zero
        for n in range(7):
            a = a - fast_log(x + f32(n))
            b = b + lanczos_q[n] * np.power(x, f32(n))
        return a + fast_log(b)

    def nfa(n, k, p, lnt):
        if n == 0 or k == 0:
            return -lnt
        if n == k:
            return -lnt - f32(n) * np.log10(p)
        p_term = div(p, one - p)
        # log_gamma(n + 1) - log_gamma(k + 1) - log_gamma(n - k + 1), one call site (numba inlines
        # each call of an inner function: one site keeps the compiled kernel small)
        log1term = zero
        for j in range(3):
            arg = f32(n) + one if j == 0 else (f32(k) + one if j == 1 else f32(n - k) + one)
            lg = log_gamma(arg)
            log1term = lg if j == 0 else log1term - lg
        log1term = log1term + f32(k) * fast_log(p) + f32(n - k) * fast_log(one - p)
        term = fast_expf(log1term)
        if double_equal(term, zero):
            if f32(k) > f32(n) * p:
                return log1term * neg_inv_ln10 - lnt
            return -lnt
        bin_tail = term
        for i in range(k + 1, n + 1):
            bin_term = f32(n - i + 1) * (one / f32(i))
            mult_term = bin_term * p_term
            term = term * mult_term
            bin_tail = bin_tail + term
            if bin_term < one:
                err = term * (div(one - np.power(mult_term, f32(n - i + 1)), one - mult_term) - one)
                if err < abs(np.log10(bin_tail) + lnt) * (bin_tail * f32(0.1)):
                    break
        return -np.log10(bin_tail) - lnt

    def inter(x, x1, y1, x2, y2, low):
        same_x = double_equal(x1, x2)
        if same_x and y1 < y2:
            return y1 if low else y2
        if same_x and y1 > y2:
            return y2 if low else y1
        den = x2 - x1
        bad = den == zero
        result = zero
        if not bad:
            result = y1 + (x - x1) * (y2 - y1) / den
            bad = result != result or abs(result) > flt_max
        if bad:
            if low:
                return y1 if y1 < y2 else (y2 if y1 > y2 else zero)
            return y2 if y1 < y2 else (y1 if y1 > y2 else zero)
        return result

    def to_int(v):
        if v != v or v >= f32(2147483647.0):
            return 2147483647
        if v <= f32(-2147483648.0):
            return -2147483648
        return int(v)

    def rect_nfa(r):
        """(log NFA, False), or (0, True) when the rectangle scan would not end."""
        hy = r[DY] * r[WIDTH] / f32(2.0)
        hx = r[DX] * r[WIDTH] / f32(2.0)
        if r[X1] < r[X2] and r[Y1] <= r[Y2]:
            off = 0
        elif r[X1] >= r[X2] and r[Y1] < r[Y2]:
            off = 1
        elif r[X1] > r[X2] and r[Y1] >= r[Y2]:
            off = 2
        else:
            off = 3
        for n in range(4):
            c = (off + n) % 4
            if c == 0:
                corners_x[n] = r[X1] - hy
                corners_y[n] = r[Y1] + hx
            elif c == 1:
                corners_x[n] = r[X2] - hy
                corners_y[n] = r[Y2] + hx
            elif c == 2:
                corners_x[n] = r[X2] + hy
                corners_y[n] = r[Y2] - hx
            else:
                corners_x[n] = r[X1] + hy
                corners_y[n] = r[Y1] - hx
        vx = corners_x
        vy = corners_y
        theta = r[THETA]
        prec = r[PREC]
        x = to_int(vx[0] + f32(0.9999)) - 1
        y = to_int(vy[0] + f32(0.9999))
        ys = -flt_max
        ye = -flt_max
        pts = 0
        alg = 0
        steps = 0
        while True:
            if not (f32(x) > vx[2]):
                y += 1
                while f32(y) > ye and not (f32(x) > vx[2]):
                    x += 1
                    if f32(x) > vx[2]:
                        break
                    fx = f32(x)
                    for j in range(2):  # ys on the lower sides, then ye on the upper ones
                        if j == 0:
                            a0, a1 = (0, 3) if fx < vx[3] else (3, 2)
                        else:
                            a0, a1 = (0, 1) if fx < vx[1] else (1, 2)
                        v = inter(fx, vx[a0], vy[a0], vx[a1], vy[a1], j == 0)
                        if j == 0:
                            ys = v
                        else:
                            ye = v
                    y = to_int(ys + f32(0.9999))
            if f32(x) > vx[2]:
                break
            if 0 <= x < w and 0 <= y < h:
                pts += 1
                if isaligned(x, y, theta, prec):
                    alg += 1
            steps += 1
            if steps > 10_000_000:
                return zero, True
        return nfa(pts, alg, r[P], log_nt), False

    def rect_improve(rec, r):
        """``rect_improve``: (log_nfa, stuck); ``rec`` becomes the improved rectangle (``r`` is
        scratch). Its phases in the firmware's order, one ``rect_nfa`` call site: 0 the rectangle
        itself, 1 five precision halvings, 2-4 five width reductions unshifted, shifted by +1 and
        by -1, 5 five precision halvings again; after every phase but the last a positive NFA ends it."""
        delta = half
        delta_2 = delta / f32(2.0)
        log_nfa = zero
        for phase in range(6):
            r[:] = rec
            for _ in range(1 if phase == 0 else 5):
                if phase == 1 or phase == 5:
                    r[P] = r[P] / f32(2.0)
                    r[PREC] = r[P] * pi
                elif phase >= 2:
                    if not (r[WIDTH] - delta) >= half:
                        continue
                    if phase >= 3:
                        sgn = one if phase == 3 else f32(-1.0)
                        r[X1] = r[X1] + sgn * (-r[DY] * delta_2)
                        r[Y1] = r[Y1] + sgn * (r[DX] * delta_2)
                        r[X2] = r[X2] + sgn * (-r[DY] * delta_2)
                        r[Y2] = r[Y2] + sgn * (r[DX] * delta_2)
                    r[WIDTH] = r[WIDTH] - delta
                new, stuck = rect_nfa(r)
                if stuck:
                    return zero, True
                if phase == 0:
                    log_nfa = new
                elif new > log_nfa:
                    log_nfa = new
                    rec[:] = r
            if phase < 5 and log_nfa > zero:
                return log_nfa, False
        return log_nfa, False

    # The main loop as a state machine, so that numba inlines each inner function once (each call
    # site of an inner function is a copy of it: fewer sites, a smaller kernel that compiles sooner):
    # per seed, region_grow; region2rect; refine (the density test, the angle tolerance tau,
    # region_grow again from the region's first pixel, region2rect); reduce_region_radius (shrink
    # the radius by 3/4, drop the pixels beyond it, region2rect) until the density is reached;
    # rect_improve; the segment.
    grow_seed, regrow, to_rect, improve = 0, 1, 2, 3
    density_th = f32(0.7)
    n_seeds = seeds_x.shape[0]
    rec = np.zeros(12, np.float32)
    scratch = np.zeros(12, np.float32)
    n_out = 0
    k = 0
    stage = 0  # 0 first rectangle, 1 after refine's region_grow, 2 reducing the radius
    tau = zero
    xc = zero
    yc = zero
    radius = zero
    count = 0
    reg_angle = zero
    state = grow_seed
    while True:
        if state == grow_seed or state == regrow:
            if state == grow_seed:
                sx, sy, start, stop, min_size, prec = seeds_x, seeds_y, k, n_seeds, min_reg_size, prec0
            else:
                sx, sy, start, stop, min_size, prec = first_x, first_y, 0, 1, 0, tau
            kk, count, reg_angle = region_grow(sx, sy, start, stop, min_size, prec)
            if state == grow_seed:
                if kk >= n_seeds:
                    break
                k = kk + 1
                stage = 0
            else:
                if count < 2:
                    state = grow_seed
                    continue
                stage = 1
            state = to_rect
            continue
        if state == to_rect:
            region2rect(count, reg_angle, prec0, p0, rec)
            dens = div(f32(count), dist(rec[X1], rec[Y1], rec[X2], rec[Y2]) * rec[WIDTH])
            if stage == 0:
                if dens >= density_th:
                    state = improve
                    continue
                # refine: the angle tolerance of the pixels near the first one, then grow again
                xc = f32(reg_x[0])
                yc = f32(reg_y[0])
                ang_c = angle_rad(reg_x[0], reg_y[0])
                s = zero
                s_sum = zero
                n = 0
                for i in range(count):
                    used[reg_y[i], reg_x[i]] = 0
                    if dist(xc, yc, f32(reg_x[i]), f32(reg_y[i])) < rec[WIDTH]:
                        ang_d = angle_diff(angle_rad(reg_x[i], reg_y[i]), ang_c, True)
                        s = s + ang_d
                        s_sum = s_sum + ang_d * ang_d
                        n += 1
                mean = div(s, f32(n))
                tau = f32(2.0) * np.sqrt(div(s_sum - f32(2.0) * mean * s, f32(n)) + mean * mean)
                first_x[0] = reg_x[0]
                first_y[0] = reg_y[0]
                state = regrow
                continue
            if not dens < density_th:  # reached (a NaN density ends here too, as in the C)
                state = improve
                continue
            if stage == 1:  # reduce_region_radius starts from the farther end of the rectangle
                xc = f32(reg_x[0])
                yc = f32(reg_y[0])
                rad1 = dist(xc, yc, rec[X1], rec[Y1])
                rad2 = dist(xc, yc, rec[X2], rec[Y2])
                radius = rad1 if rad1 > rad2 else rad2
                stage = 2
            radius = radius * f32(0.75)
            i = 0
            while i < count:
                if dist(xc, yc, f32(reg_x[i]), f32(reg_y[i])) > radius:
                    used[reg_y[i], reg_x[i]] = 0
                    reg_x[i] = reg_x[count - 1]
                    reg_y[i] = reg_y[count - 1]
                    count -= 1
                    continue
                i += 1
            if count < 2:
                state = grow_seed
                continue
            continue  # region2rect of the smaller region
        # improve
        log_nfa, stuck = rect_improve(rec, scratch)
        if stuck:
            return -1
        if log_nfa > zero:
            out[n_out, 0] = rec[X1] + half
            out[n_out, 1] = rec[Y1] + half
            out[n_out, 2] = rec[X2] + half
            out[n_out, 3] = rec[Y2] + half
            out[n_out, 4] = rec[WIDTH]
            out[n_out, 5] = rec[P]
            out[n_out, 6] = log_nfa
            n_out += 1
        state = grow_seed
    return n_out
