"""find_line_segments: the firmware's LSD (lsd.c) and its merging (line.c merge_alot)."""

from __future__ import annotations

import numpy as np

from maixemu.firmware import image
from maixemu.firmware.image import _lsd


def gray(a):
    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a, np.uint8))


def box(w=80, h=60):
    a = np.full((h, w), 40, np.uint8)
    a[15:45, 20:60] = 210
    return a


def test_the_edges_of_a_box_are_found():
    segs = gray(box()).find_line_segments()
    horizontal = [s for s in segs if s.theta() in (89, 90, 91)]
    assert len(horizontal) == 2 and {s.y1() for s in horizontal} == {14, 44}
    # this LSD (whole-degree int16 angles, no sub-sampling) reports a vertical step as a
    # zero-length segment, as the golden case of the shapes image shows for its square
    vertical = [s for s in segs if s.theta() in (0, 1, 179)]
    assert vertical and all(s.length() == 0 for s in vertical)
    # every segment lies on the box outline (LSD's gradient sits between two pixel rows/columns)
    for s in segs:
        for x, y in ((s.x1(), s.y1()), (s.x2(), s.y2())):
            assert 18 <= x <= 61 and 13 <= y <= 46
    assert all(s.magnitude() > 0 for s in segs)  # (int) -log10(NFA)
    assert segs[0].length() == int(np.hypot(segs[0].x2() - segs[0].x1(), segs[0].y2() - segs[0].y1()))


def test_flat_image_has_no_segments_and_roi_moves_them():
    assert gray(np.full((40, 50), 90, np.uint8)).find_line_segments() == []
    a = np.zeros((80, 120), np.uint8)
    a[10:70, 30:110] = box(80, 60)
    inner = gray(a).find_line_segments(roi=(30, 10, 80, 60))
    base = gray(box()).find_line_segments()
    assert [(s.x1() - 30, s.y1() - 10, s.x2() - 30, s.y2() - 10) for s in inner] == [s.line() for s in base]


def test_merge_distance_joins_collinear_pieces():
    a = np.full((40, 120), 30, np.uint8)
    a[20:, 5:50] = 220
    a[20:, 54:115] = 220  # one edge at y = 20 with a gap of 4 pixels
    apart = [s for s in gray(a).find_line_segments() if s.theta() in (89, 90, 91)]
    joined = [s for s in gray(a).find_line_segments(merge_distance=10) if s.theta() in (89, 90, 91)]
    assert len(joined) < len(apart)
    assert max(s.length() for s in joined) > max(s.length() for s in apart)


def test_nfa_limits():
    F = np.float32
    # no point or no aligned point: the NFA is the number of tests
    assert _lsd.nfa(0, 0, F(0.125), F(10)) == F(-10)
    assert _lsd.nfa(10, 10, F(0.125), F(10)) == -F(10) - F(10) * _lsd._log10(F(0.125))
    # more aligned points: more meaningful
    assert _lsd.nfa(40, 30, F(0.125), F(10)) > _lsd.nfa(40, 20, F(0.125), F(10))


def test_the_lsd_kernels_equal_their_python_and_the_pixel_iterator():
    """``_rect_count`` counts what ``_rect_pixels`` visits (the firmware's iterator, kept as the
    reference), and both kernels give their Python's answer when compiled."""
    from maixemu.firmware.image import _fmath as fm
    from maixemu.firmware.image import _lsd

    F = np.float32
    rng = np.random.default_rng(5)
    angles = rng.integers(-180, 180, (40, 60)).astype(np.int64)
    angles[rng.random((40, 60)) < 0.1] = int(np.int16(fm.ftoi(_lsd.NOTDEF * _lsd.DEG)))
    for _ in range(200):
        r = _lsd._Rect()
        r.x1, r.y1, r.x2, r.y2 = (F(v) for v in rng.uniform(-5, 65, 4))
        r.width = F(rng.uniform(0.5, 6))
        r.theta = F(rng.uniform(-3.2, 3.2))
        r.dx, r.dy = F(np.cos(r.theta)), F(np.sin(r.theta))
        r.prec = F(rng.uniform(0.05, 0.6))
        vx, vy = _lsd._rect_corners(r)
        pts = alg = 0
        for x, y in _lsd._rect_pixels(r):
            if 0 <= x < 60 and 0 <= y < 40:
                pts += 1
                a = F(angles[y, x]) * _lsd.RAD
                if a != _lsd.NOTDEF:
                    t = abs(r.theta - a)
                    if t > _lsd.M_3_2_PI:
                        t = abs(t - _lsd.M_2__PI)
                    alg += bool(t <= r.prec)
        assert _lsd._rect_count(angles, vx, vy, r.theta, r.prec) == (pts, alg)
        assert _lsd._rect_count.__wrapped__(angles, vx, vy, r.theta, r.prec) == (pts, alg)
    cos0, sin0 = _lsd.seed_cos_sin(angles)
    for trial in range(20):
        seeds_x = rng.integers(0, 60, 30).astype(np.int64)
        seeds_y = rng.integers(0, 40, 30).astype(np.int64)
        min_size = int(rng.integers(0, 12))
        outs = []
        for fn in (_lsd._grow, _lsd._grow.__wrapped__):
            used = np.zeros((40, 60), np.uint8)
            rx, ry = np.empty(2400, np.int64), np.empty(2400, np.int64)
            steps, k = [], 0
            while k < 30:
                k, n, ang = fn(angles, used, fm.COS, fm.SIN, cos0, sin0, seeds_x, seeds_y, k, min_size, F(0.4), rx, ry)
                steps.append((k, n, F(ang).tobytes(), rx[:n].tolist(), ry[:n].tolist()))
                k += 1
            outs.append((steps, used.tobytes()))
        assert outs[0] == outs[1]
        # a kept region's seed is the first unused one whose region reaches min_size; its sums start
        # from the libm cos/sin of the seed's own angle
        for k, n, _, xs, ys in outs[0][0]:
            if k < 30:
                assert n >= min_size and (xs[0], ys[0]) == (seeds_x[k], seeds_y[k])
                a0 = F(angles[ys[0], xs[0]]) * _lsd.RAD
                assert (cos0[angles[ys[0], xs[0]] + 32768], sin0[angles[ys[0], xs[0]] + 32768]) == (fm.cosf(a0), fm.sinf(a0))


def test_merging_a_zero_length_segment_divides_by_zero_as_the_k210_does():
    """line.c merge_alot divides by the first segment's x extent; for a zero-length segment that
    is 0/0, which RISC-V's ``div`` answers with -1 instead of trapping. Worked by hand from the C:
    lnk = (10,10)-(10,10), tmp = (11,10)-(30,10), both theta 0: merge_line finds (11,10) within 10
    of (10,10); the horizontal branch keeps tmp's ends (length_0 <= length_1):
    y1 = 10 - (0 / 0) = 11, y2 = 10 + (0 / 0) = 9, x from min(10, 11) to max(30, 10)."""
    line = dict(x1=10, y1=10, x2=10, y2=10, length=0, magnitude=5, theta=0, rho=10)
    other = dict(x1=11, y1=10, x2=30, y2=10, length=19, magnitude=7, theta=0, rho=11)
    merged = _lsd.merge_alot([line, other], 10, 25)
    assert [(m["x1"], m["y1"], m["x2"], m["y2"]) for m in merged] == [(10, 11, 30, 9)]
    assert merged[0]["magnitude"] == 5  # the first line's fields stay



def test_ll_angle_kernel_its_twin_and_the_array_form_agree(monkeypatch):
    """``_lsd_angles._ll_angle`` (compiled), its Python twin and ``_LSD._ll_angle_arrays``: the same
    angles, norms and seed order on random, flat, striped and tiny images (the ordering's ties are
    most of a frame's seeds: the bins of equal norms keep the transposed raster order)."""
    from maixemu.firmware.image import _jit, _lsd, _lsd_angles

    rng = np.random.default_rng(41)
    shapes = [(1, 1), (1, 7), (6, 1), (2, 2), (9, 13), (40, 33), (120, 160)]
    for trial, (h, w) in enumerate(shapes * 3):
        kind = trial % 3
        if kind == 0:
            a = rng.integers(0, 256, (h, w))
        elif kind == 1:
            a = np.full((h, w), int(rng.integers(0, 256)))
        else:
            a = (np.add.outer(np.arange(h) * int(rng.integers(0, 7)), np.arange(w) * int(rng.integers(0, 9))) // 3) * 40
        a = np.ascontiguousarray(np.clip(a, 0, 255), np.uint8)
        forms = []
        for form in ("arrays", "kernel", "twin"):
            with monkeypatch.context() as m:
                if form == "arrays":
                    m.setattr(_lsd, "compiled", lambda: False)
                else:
                    m.setattr(_lsd, "compiled", lambda: True)
                    if form == "twin":
                        m.setattr(_lsd_angles, "_ll_angle", _jit.python_twin(_lsd_angles._ll_angle))
                    elif not _jit.compiled():
                        continue
                lsd = _lsd._LSD(a)
            forms.append((lsd.angles, lsd.modgrad, lsd.seeds_x, lsd.seeds_y, lsd.seed_cos, lsd.seed_sin))
        for other in forms[1:]:
            assert all(np.array_equal(x, y) for x, y in zip(forms[0], other)), (trial, h, w)


def test_segment_lines_kernel_its_twin_and_the_python_loop_agree():
    """``_lsd_lines._segment_lines`` (compiled) and its twin against ``_segment_lines_python`` on
    random segment rows: inside, crossing and outside the roi, vertical and horizontal, and the
    float-to-int conversion's edges (NaN, infinities, beyond int32)."""
    from maixemu.firmware.image import _fmath as fm, _jit, _lsd_lines

    rng = np.random.default_rng(44)
    specials = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 0.5, -0.5], np.float32)
    for trial in range(40):
        n = int(rng.integers(1, 60))
        rows = rng.uniform(-30, 130, (n, 7)).astype(np.float32)
        rows[:, 6] = rng.uniform(-5, 500, n)
        if trial % 4 == 1:
            vertical = rng.random(n) < 0.3
            rows[vertical, 2] = rows[vertical, 0]  # some vertical ones (and horizontal: y below)
            rows[~vertical, 3] = rows[~vertical, 1]
        if trial % 4 == 2:
            pick = rng.random((n, 7)) < 0.1
            rows[pick] = rng.choice(specials, int(pick.sum()))
        roi = (int(rng.integers(0, 20)), int(rng.integers(0, 20)), int(rng.integers(1, 120)), int(rng.integers(1, 90)))
        segs = [tuple(r) for r in rows]
        want = _lsd._segment_lines_python(segs, roi)
        keys = ("x1", "y1", "x2", "y2", "magnitude", "theta", "rho")
        for fn in (_lsd_lines._segment_lines, _lsd_lines._segment_lines.__wrapped__):
            out = np.empty((n, 7), np.int64)
            k = fn(rows, *roi, fm.COS, fm.SIN, out)
            got = [dict(zip(keys, r)) for r in out[:k].tolist()]
            assert got == want, (trial, roi)
        # the caller's form: the kernel's answer where kernels are served (the tests' wait mode),
        # None without numba (MAIXEMU_NO_JIT=1), where find_line_segments takes the Python loop
        assert _lsd._segment_lines(segs, roi) == (want if _jit.compiled() else None)
