"""Speed rewrites of the image library give the answers of the code they replaced, bit for bit.

Each test keeps the replaced implementation (when it is small) as a reference and compares on
many random inputs, extremes included; the larger rewrites are pinned by the C oracles and golden
cases elsewhere (``test_jpeg_decode_oracle.py``, ``test_imlib_golden.py``) plus the compiled kernels'
equality with their Python twins here.
"""

from __future__ import annotations

import types

import numpy as np
import pytest

from firmware_c import FORMS, both_forms
from maixemu.firmware.image import _color, _jpeg_decode


# ---------------------------------------------------------------------- picojpeg IDCT and colour
def _int16(v):
    return ((np.asarray(v, dtype=np.int64) + 0x8000) & 0xFFFF) - 0x8000


def _old_imul(w, c):
    return _int16((w * c + 128) >> 8)


def _old_pass(s):
    x4, x7 = _int16(s[5] - s[3]), _int16(s[5] + s[3])
    x5, x6 = _int16(s[1] + s[7]), _int16(s[1] - s[7])
    tmp1 = _old_imul(_int16(x4 - x6), 196)
    stg26 = _int16(_old_imul(x6, 277) - tmp1)
    x24 = _int16(tmp1 - _old_imul(x4, 669))
    x15, x17 = _int16(x5 - x7), _int16(x5 + x7)
    tmp2 = _int16(stg26 - x17)
    tmp3 = _int16(_old_imul(x15, 362) - tmp2)
    x44 = _int16(tmp3 + x24)
    x30, x31 = _int16(s[0] + s[4]), _int16(s[0] - s[4])
    x12, x13 = _int16(s[2] - s[6]), _int16(s[2] + s[6])
    x32 = _int16(_old_imul(x12, 362) - x13)
    x40, x43 = _int16(x30 + x13), _int16(x30 - x13)
    x41, x42 = _int16(x31 + x32), _int16(x31 - x32)
    return [x40 + x17, x41 + tmp2, x42 + tmp3, x43 - x44, x43 + x44, x42 - tmp3, x41 - tmp2, x40 - x17]


def old_idct(coef):
    """The int64 IDCT the int16 one replaced (every int16 assignment wrapped by hand)."""
    c = coef.reshape(-1, 8, 8).astype(np.int64)
    rows = [_int16(v) for v in _old_pass([c[:, :, k] for k in range(8)])]
    r = np.stack(rows, axis=2)
    cols = _old_pass([r[:, k, :] for k in range(8)])
    out = np.stack([np.clip(_int16(((v + 64) >> 7) + 128), 0, 255) for v in cols], axis=1)
    return out.reshape(-1, 64).astype(np.uint8)


def _coefficient_blocks(rng: np.random.Generator, n: int) -> np.ndarray:
    """Blocks as the decoder makes them (int16 values): typical sparse ones, dense ones over the
    whole int16 range, and blocks made of the extremes (where int16 wrapping decides)."""
    sparse = np.where(rng.random((n, 64)) < 0.15, rng.integers(-2048, 2048, (n, 64)), 0)
    dense = rng.integers(-32768, 32768, (n, 64))
    extreme = rng.choice(np.array([-32768, -32767, -16384, -1, 0, 1, 16383, 32766, 32767]), (n, 64))
    dc_only = np.zeros((n, 64), np.int64)
    dc_only[:, 0] = rng.integers(-32768, 32768, n)
    return np.concatenate([sparse, dense, extreme, dc_only]).astype(np.int64)


def test_int16_idct_equals_the_int64_one():
    rng = np.random.default_rng(3)
    coef = _coefficient_blocks(rng, 20000)
    assert np.array_equal(_jpeg_decode.idct(coef), old_idct(coef))


def _old_colour(y, cb, cr):
    """The int64 per-pixel colour conversion the tables replaced (clamp after each step)."""
    cb_g, cb_b, cr_r, cr_g = _jpeg_decode._chroma_terms(cb, cr)
    clamp = lambda v: np.clip(_int16(v), 0, 255)  # noqa: E731
    g = clamp(clamp(y.astype(np.int64) - cb_g) - cr_g)
    b = clamp(y.astype(np.int64) + cb_b)
    r = clamp(y.astype(np.int64) + cr_r)
    return _color.pack565(r.astype(np.uint8) >> 3, g.astype(np.uint8) >> 2, b.astype(np.uint8) >> 3)


def test_colour_tables_equal_the_per_pixel_formulas_on_every_input():
    red, blue, green1, green = _jpeg_decode._colour_tables()
    cb, cr = np.meshgrid(np.arange(256), np.arange(256), indexing="ij")
    cb, cr = cb.ravel(), cr.ravel()
    for y in range(256):  # all 2**24 (Y, Cb, Cr)
        yy = np.full(cb.shape, y, np.intp) << 8
        got = red[yy | cr] | blue[yy | cb] | green[(green1[yy | cb].astype(np.intp) << 8) | cr]
        assert np.array_equal(got, _old_colour(np.full(cb.shape, y), cb, cr)), y


def test_kernel_python_path_converts_lists_and_writes_back():
    from maixemu.firmware.image._jit import kernel

    @kernel(lists=(0, 1), writes=(1,))
    def scale(src, dst, k):
        for i in range(len(src)):
            dst[i] = src[i] * k
        return len(src)

    src, dst = np.arange(5, dtype=np.int64), np.zeros(5, np.int64)
    assert scale.__wrapped__(src, dst, 3) == 5 and dst.tolist() == [0, 3, 6, 9, 12]
    dst2 = np.zeros(5, np.int64)
    assert scale(src, dst2, 3) == 5 and np.array_equal(dst, dst2)


@pytest.mark.parametrize("name", ["face_20.jpg", "coco_436511.jpg"])
def test_decode_python_path_equals_compiled_path_on_photos(name):
    from _shared import SHARED_DIR

    path = SHARED_DIR / "images" / name
    if not path.is_file():
        pytest.skip("../shared/images is absent")
    data = path.read_bytes()
    compiled = _jpeg_decode.decode(data)
    try:
        _jpeg_decode._KERNEL_PYTHON = True
        python = _jpeg_decode.decode(data)
    finally:
        _jpeg_decode._KERNEL_PYTHON = False
    assert compiled[0] == python[0] and np.array_equal(compiled[1], python[1])


# ---------------------------------------------------------------------- HOG and batched thin lines
def _gray(a):
    from maixemu.firmware import image

    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a, np.uint8))


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    """The compiled kernels (HOG's blocks, the batch of thin lines) and the array forms."""
    from maixemu.firmware.image import _draw, _features

    return both_forms(request, monkeypatch, _draw, _features)


def test_thin_lines_equal_line_by_line_drawing(jit):
    rng = np.random.default_rng(5)
    for _ in range(40):
        h, w = (int(v) for v in rng.integers(5, 60, 2))
        n = int(rng.integers(1, 200))
        x0, x1 = rng.integers(-10, w + 10, (2, n))
        y0, y1 = rng.integers(-10, h + 10, (2, n))
        if rng.random() < 0.5:  # many lines of few shapes, as find_hog draws them
            x1, y1 = x0 + rng.integers(-3, 4, n), y0 + rng.integers(-3, 4, n)
        colours = rng.integers(0, 256, n)
        one, batch = _gray(np.zeros((h, w))), _gray(np.zeros((h, w)))
        for a, b, c, d, col in zip(x0, y0, x1, y1, colours):
            one._line(int(a), int(b), int(c), int(d), int(col), 1)
        batch._thin_lines(x0, y0, x1, y1, colours)
        assert np.array_equal(one._pix, batch._pix)


def _hog_loops(a, roi, cs):
    """hog.c's loops one pixel and one bin at a time (float32 as the C), with the emulator's
    model of the histogram memory (a zeroed buffer large enough for the spills), then each
    cell's bins drawn weakest first with draw_line."""
    from maixemu.firmware.image._fmath import COS, SIN, atan2f, ftoi

    F = np.float32
    rx, ry, rw, rh = roi
    s_w, s_h = a.shape[1], a.shape[0]
    wl, hl = rx + rw - 1, ry + rh - 1
    block, x_cells, y_cells = cs * 2, rw // cs, rh // cs
    n_blocks = len(range(ry, hl, block)) * len(range(rx, wl, block))
    span = 9 * (((block - 1) // 8) * 2 + (block - 1) // 8 + 1)
    hog = np.zeros(max(n_blocks * 36 + span, x_cells * y_cells * 9) + 36, F)
    index = 0
    for y in range(ry, hl, block):
        for x in range(rx, wl, block):
            k = F(0)
            for cy in range(block):
                for cx in range(block):
                    if 0 < y + cy < hl and 0 < x + cx < wl:
                        vx = int(a[y + cy, x + cx + 1]) - int(a[y + cy, x + cx - 1])
                        vy = int(a[y + cy + 1, x + cx]) - int(a[y + cy - 1, x + cx])
                        m = np.sqrt(F(vx * vx + vy * vy))
                        if int(m) > 1:
                            k = F(k + F(m * m))
                            t = int(abs(atan2f(vx, vy) * F(180.0) / F(np.pi))) // 20  # libm's, as hog.c
                            t = 0 if t == 9 else t
                            at = index + ((cy // 8) * 2 + cx // 8) * 9 + t
                            hog[at] = F(hog[at] + m)
            k = np.sqrt(k)
            with np.errstate(invalid="ignore", divide="ignore"):
                hog[index:index + 36] = hog[index:index + 36] / k
            index += 36
    img = _gray(np.zeros((s_h, s_w)))
    l, index = cs // 2, 0
    for by in range(0, y_cells, 2):
        for bx in range(0, x_cells, 2):
            for yy in range(2):
                for xx in range(2):
                    cell = [min(max(ftoi(v * F(255)), 0), 255) for v in hog[index:index + 9]]
                    for i in sorted(range(len(cell)), key=lambda i: cell[i]):
                        x1, y1 = (xx + bx) * cs + l, (yy + by) * cs + l
                        x2, y2 = ftoi(F(l) * COS[i * 20]), ftoi(F(l) * SIN[i * 20])
                        img.draw_line(x1 - x2, y1 + y2, x1 + x2, y1 - y2, color=cell[i], thickness=1)
                    index += 9
    return img._pix


def test_the_hog_and_thin_line_kernels_python_twins():
    from maixemu.firmware.image import _draw_kernels, _features, _gradient_angle

    rng = np.random.default_rng(12)
    a = rng.integers(0, 256, (21, 26)).astype(np.uint8)
    for cs in (2, 3, 9):
        block = 2 * cs
        want = np.zeros(2000, np.float32)
        got = np.zeros(2000, np.float32)
        bys, bxs = np.arange(1, 1 + 19 - 1, block), np.arange(2, 2 + 23 - 1, block)
        _features._hog_arrays(a, bys, bxs, 1 + 19 - 1, 2 + 23 - 1, block, want)
        _features._hog_blocks.__wrapped__(a, 2, 1, 2 + 23 - 1, 1 + 19 - 1, block, _gradient_angle.degree_table(), got)
        assert np.array_equal(got, want, equal_nan=True), cs
    x0, y0, x1, y1 = rng.integers(-5, 30, (4, 25))
    colours = rng.integers(0, 256, 25)
    one = _gray(np.zeros((21, 26)))
    for p, q, r, t, c in zip(x0, y0, x1, y1, colours):
        one._line(int(p), int(q), int(r), int(t), int(c), 1)
    pix = np.zeros((21, 26), np.uint8)
    _draw_kernels.point_fill_lines.__wrapped__(pix, x0, y0, x1, y1, 0, 0, colours)
    assert np.array_equal(pix, one._pix)


def test_find_hog_equals_hog_c_loops(jit):
    rng = np.random.default_rng(6)
    for trial in range(24):
        h, w = (int(v) for v in rng.integers(6, 41, 2))
        if trial % 2:
            a = rng.integers(0, 256, (h, w))
        else:
            a = np.add.outer(np.arange(h) * int(rng.integers(0, 30)), np.arange(w) * int(rng.integers(0, 30))) % 256
        cs = int(rng.choice([1, 2, 3, 4, 8, 9]))
        rx, ry = int(rng.integers(0, w - 2)), int(rng.integers(0, h - 2))
        roi = (rx, ry, int(rng.integers(2, w - rx + 1)), int(rng.integers(2, h - ry + 1)))
        assert np.array_equal(_gray(a).find_hog(roi, cs)._pix, _hog_loops(a, roi, cs)), (trial, roi, cs)


# ---------------------------------------------------------------------- cartoon
def _old_scanline_fill(vals, near, out, x, y, cb):
    """The run-by-run Python fill the cartoon kernel replaced (``imlib_flood_fill_int``)."""
    h, w = len(vals), len(vals[0])
    seed = vals[y][x]
    stack = []
    while True:
        row, orow = vals[y], out[y]
        left = right = x
        while left > 0 and not orow[left - 1] and near(row[left - 1], seed, True) and near(row[left - 1], row[left], False):
            left -= 1
        while right < w - 1 and not orow[right + 1] and near(row[right + 1], seed, True) and near(row[right + 1], row[right], False):
            right += 1
        orow[left:right + 1] = b"\x01" * (right - left + 1)
        while True:
            old, found = vals[y], None
            for ny in (y - 1, y + 1):
                if 0 <= ny < h:
                    for i in range(left, right + 1):
                        if not out[ny][i] and near(vals[ny][i], seed, True) and near(vals[ny][i], old[i], False):
                            found = (i, ny)
                            break
                if found:
                    break
            if found:
                stack.append((x, y, left, right))
                x, y = found
                break
            cb(y, left, right)
            if not stack:
                return
            x, y, left, right = stack.pop()


def _old_cartoon(pix, rgb, seed_t, float_t, walls):
    def fields(p):
        return (((p >> 3) & 31), (((p & 7) << 3) | (p >> 13)), ((p >> 8) & 31)) if rgb else (p,)

    def near(a, b, seed):
        t = seed_t if seed else float_t
        return all(abs(u - v) <= k for u, v, k in zip(fields(a), fields(b), t))

    h, w = pix.shape
    vals = pix.astype(np.int64).tolist()
    mean_img = [bytearray(w) for _ in range(h)]
    fill_img = [bytearray(r.astype(np.uint8).tobytes()) for r in walls]
    for y in range(h):
        for x in range(w):
            if mean_img[y][x]:
                continue
            acc = []
            _old_scanline_fill(vals, near, mean_img, x, y, lambda line, l, r: acc.extend(vals[line][l:r + 1]))
            sums = [sum(c) // len(acc) for c in zip(*(fields(p) for p in acc))]
            mean = int(_color.pack565(*sums)) if rgb else sums[0]

            def paint(line, l, r, mean=mean):
                vals[line][l:r + 1] = [mean] * (r - l + 1)

            _old_scanline_fill(vals, near, fill_img, x, y, paint)
    return np.array(vals, pix.dtype)


def test_cartoon_kernel_equals_the_run_by_run_fill():
    from maixemu.firmware import image
    from maixemu.firmware.image import _flood

    rng = np.random.default_rng(8)
    for trial in range(30):
        h, w = (int(v) for v in rng.integers(1, 24, 2))
        rgb = trial % 2 == 0
        levels = int(rng.choice([2, 4, 16, 65536 if rgb else 256]))
        pix = (rng.integers(0, levels, (h, w)) * ((65535 if rgb else 255) // max(levels - 1, 1)))
        if trial % 3 == 0:  # smooth ramps: long floating chains
            pix = np.add.outer(np.arange(h), np.arange(w)) * int(rng.integers(1, 400 if rgb else 9))
        pix = pix.astype(np.uint16 if rgb else np.uint8)
        seed, floating = (float(v) for v in rng.choice([0.0, 0.05, 0.1, 0.3, 1.0], 2))
        walls = rng.random((h, w)) < (0.2 if trial % 4 == 1 else 0.0)
        fmt = image.RGB565 if rgb else image.GRAYSCALE
        img = image.Image._wrap(fmt, pix.copy())
        mask = image.Image._wrap(image.GRAYSCALE, (walls * 255).astype(np.uint8)) if walls.any() else None
        img.cartoon(seed, floating, mask=mask) if mask is not None else img.cartoon(seed, floating)
        seed_t, float_t = _flood.thresholds(fmt, seed, floating)
        assert np.array_equal(img._pix, _old_cartoon(pix, rgb, seed_t, float_t, walls)), trial


def test_flood_fill_region_equals_the_scanline_fill():
    """flood_fill's region (two OpenCV fills: near the seed, then floating inside that) is the one
    ``imlib_flood_fill_int``'s scan-line traversal reaches, on RGB565, gray and binary pixels, with
    walls (a mask) and a seed on a wall."""
    from maixemu.firmware import image
    from maixemu.firmware.image import _flood

    rng = np.random.default_rng(21)
    for trial in range(60):
        h, w = (int(v) for v in rng.integers(1, 28, 2))
        fmt = (image.RGB565, image.GRAYSCALE, _flood.BINARY)[trial % 3]
        top = {image.RGB565: 65536, image.GRAYSCALE: 256, _flood.BINARY: 2}[fmt]
        levels = int(rng.choice([2, 4, 16, top])) if top > 2 else 2
        pix = rng.integers(0, levels, (h, w)) * ((top - 1) // max(levels - 1, 1))
        if trial % 4 == 0:  # smooth ramps: long floating chains
            pix = np.add.outer(np.arange(h), np.arange(w)) * int(rng.integers(1, 400 if top > 256 else 9)) % top
        pix = pix.astype(np.uint16 if fmt == image.RGB565 else np.uint8)
        seed, floating = (float(v) for v in rng.choice([0.0, 0.05, 0.1, 0.3, 1.0], 2))
        walls = rng.random((h, w)) < (0.25 if trial % 5 == 1 else 0.0)
        x, y = int(rng.integers(0, w)), int(rng.integers(0, h))
        if trial % 7 == 3:
            walls[y, x] = True
        seed_t, float_t = _flood.thresholds(fmt, seed, floating)
        img = image.Image._wrap(fmt, pix.copy())
        got = _flood.component(_flood.channels(img), walls, x, y, seed_t, float_t)
        rgb = fmt == image.RGB565

        def fields(p):
            return (((p >> 3) & 31), (((p & 7) << 3) | (p >> 13)), ((p >> 8) & 31)) if rgb else (p,)

        def near(a, b, to_seed):
            t = seed_t if to_seed else float_t
            return all(abs(u - v) <= k for u, v, k in zip(fields(a), fields(b), t))

        out = [bytearray(r.astype(np.uint8).tobytes()) for r in walls]
        out[y][x] = 0
        _old_scanline_fill(pix.astype(np.int64).tolist(), near, out, x, y, lambda *_: None)
        want = (np.array([list(r) for r in out], bool) & ~walls)
        want[y, x] = True
        assert np.array_equal(got, want), trial


def test_cartoon_python_path_equals_compiled_path():
    from maixemu.firmware import image
    from maixemu.firmware.image import _flood

    rng = np.random.default_rng(9)
    pix = (np.add.outer(np.arange(40), np.arange(50)) * 37 + rng.integers(0, 300, (40, 50))).astype(np.uint16)
    outs = []
    for fn in (_flood._cartoon_kernel, _flood._cartoon_kernel.__wrapped__):
        saved = _flood._cartoon_kernel
        _flood._cartoon_kernel = fn
        try:
            img = image.Image._wrap(image.RGB565, pix.copy())
            outs.append(img.cartoon(0.2, 0.1)._pix.copy())
        finally:
            _flood._cartoon_kernel = saved
    assert np.array_equal(outs[0], outs[1])


# ---------------------------------------------------------------------- rank, min/max and mode filters
def _random_channels(rng, trials):
    for t in range(trials):
        h, w = (int(v) for v in rng.integers(1, 30, 2))
        c = rng.integers(0, int(rng.choice([2, 8, 32, 64, 256])), (h, w)).astype(np.uint8)
        if t % 3 == 0:  # long runs of equal values: ties everywhere
            c = (c // 4 * 4).astype(np.uint8)
        yield c, int(rng.integers(0, 5))


def test_rank_and_min_max_filters_equal_the_stacked_window():
    from maixemu.firmware.image import _filters
    from maixemu.firmware.image._pixels import Window

    rng = np.random.default_rng(10)
    for c, k in _random_channels(rng, 300):
        n = (2 * k + 1) ** 2
        stack = Window(c, k).stack()
        for idx in ((n - 1) // 2, int(rng.integers(0, n))):
            assert np.array_equal(_filters._rank_filter(c, k, idx), np.partition(stack, idx, axis=2)[:, :, idx])
        lo, hi = _filters._window_min_max(c, k)
        assert np.array_equal(lo, stack.min(axis=2)) and np.array_equal(hi, stack.max(axis=2))


def test_mode_kernel_equals_the_running_counts():
    from maixemu.firmware.image import _filters
    from maixemu.firmware.image._pixels import Window

    rng = np.random.default_rng(11)
    for t, (c, k) in enumerate(_random_channels(rng, 150)):
        k = max(k, 1)
        win = Window(c, k)
        reference = _filters._mode(win)
        assert np.array_equal(_filters._mode_filter(c, k), reference)
        if t < 15:  # the kernel's Python twin (slow; what runs compiled)
            out = np.empty_like(c)
            _filters._mode_kernel.__wrapped__(win.padded, k, out)
            assert np.array_equal(out, reference)


# ---------------------------------------------------------------------- find_domain's labelling
def _old_domain_labels(img):
    """The labelling loop find_domain had: one general flood fill (``_fill_region``) per region."""
    w, h = img.width(), img.height()
    counts, label = [], 0
    for y in range(h):
        x = 0
        while x < w and label < 254:
            candidates = np.nonzero(img._pix[y, x:] > label)[0]
            if candidates.size == 0:
                break
            x += int(candidates[0])
            counts.append(img._fill_region(x, y, 0.0, 0.0, label + 1, False, False, None) & 0xFFFF)
            label += 1
            x += 1
        if label >= 254:
            break
    return img._pix.copy(), counts


def test_find_domain_labels_regions_as_the_general_fill_did():
    from maixemu.firmware import image

    rng = np.random.default_rng(12)
    for trial in range(40):
        h, w = (int(v) for v in rng.integers(2, 60, 2))
        pix = rng.integers(0, int(rng.choice([2, 3, 5, 256])), (h, w)) * int(rng.choice([1, 60, 120]))
        if trial % 2:  # blocky regions, some touching
            pix = np.kron(pix[: (h + 3) // 4, : (w + 3) // 4], np.ones((4, 4), np.int64))[:h, :w]
        pix = np.clip(pix, 0, 255).astype(np.uint8)
        ref_pix, ref_counts = _old_domain_labels(image.Image._wrap(image.GRAYSCALE, pix.copy()))
        img = image.Image._wrap(image.GRAYSCALE, pix.copy())
        out = img.find_domain(0.7)
        assert np.array_equal(img._pix, ref_pix), trial
        assert (out is None) == (max(ref_counts, default=0) == 0)


# ---------------------------------------------------------------------- find_circles' votes
def test_circle_votes_compiled_equal_numpy(monkeypatch):
    from maixemu.firmware.image import _hough
    from maixemu.tools.image_bench import synthetic_scene

    rng = np.random.default_rng(13)
    scene = synthetic_scene(160, 120)
    gray = (scene.astype(np.int64).sum(axis=2) // 3).astype(np.uint8)
    noisy = np.clip(gray + rng.integers(-60, 60, gray.shape), 0, 255).astype(np.uint8)
    for g in (gray, noisy):
        for roi, stride, thr in (((0, 0, 160, 120), 2, 500), ((7, 9, 90, 70), 1, 300)):
            args = (g, roi, stride, 1, thr, 10, 10, 10, 2, 40, 1)
            monkeypatch.setattr(_hough, "compiled", lambda: True)
            fast = _hough.find_circles(*args)
            monkeypatch.setattr(_hough, "compiled", lambda: False)
            assert fast == _hough.find_circles(*args) and fast


def test_bilateral_compiled_sums_equal_numpy(monkeypatch):
    from maixemu.firmware import image
    from maixemu.firmware.image import _filters

    rng = np.random.default_rng(14)
    for trial in range(12):
        h, w = (int(v) for v in rng.integers(1, 40, 2))
        rgb = trial % 2 == 0
        pix = rng.integers(0, 65536 if rgb else 256, (h, w)).astype(np.uint16 if rgb else np.uint8)
        k = int(rng.integers(1, 4))
        sigmas = (float(rng.choice([0.02, 0.1, 0.5])), float(rng.choice([0.3, 1.0, 3.0])))
        outs = []
        for fast in (True, False):
            monkeypatch.setattr(_filters, "compiled", lambda fast=fast: fast)
            img = image.Image._wrap(image.RGB565 if rgb else image.GRAYSCALE, pix.copy())
            with np.errstate(all="ignore"):  # tiny sigmas overflow float32 weights (on the device too)
                outs.append(img.bilateral(k, *sigmas)._pix.copy())
        assert np.array_equal(outs[0], outs[1]), trial


# ---------------------------------------------------------------------- find_eye's votes
def test_iris_votes_kernel_equals_the_vectorised_loop():
    from maixemu.firmware.image import _features

    F = np.float32
    rng = np.random.default_rng(15)
    for trial in range(6):
        h, w = (int(v) for v in rng.integers(3, 40, 2))
        py, px = np.mgrid[5:5 + h, 7:7 + w]
        weight = rng.integers(0, 256, (h, w)).astype(F)
        n = int(rng.integers(1, 60))
        gcx = rng.integers(5, 9 + w, n)  # centres inside and around the box (0/0 directions included)
        gcy = rng.integers(3, 7 + h, n)
        ang = rng.random(n) * 2 * np.pi
        gx, gy = np.cos(ang).astype(F), np.sin(ang).astype(F)
        ref = np.zeros((h, w), F)
        with np.errstate(invalid="ignore", divide="ignore"):
            for i in range(n):
                dx, dy = (px - int(gcx[i])).astype(F), (py - int(gcy[i])).astype(F)
                mag = np.sqrt(dx * dx + dy * dy)
                t = (dx / mag) * gx[i] + (dy / mag) * gy[i]
                ref = ref + np.where(t > F(0.0), t * t * weight, F(0))
        for fn in (_features._iris_votes, _features._iris_votes.__wrapped__):
            got = np.zeros(h * w, F)
            fn(px.ravel(), py.ravel(), weight.ravel(), gcx, gcy, gx, gy, got)
            assert np.array_equal(got.reshape(h, w), ref), trial


def test_filter_gradients_erasures_equal_the_loop_that_erases_in_place():
    """find_iris's filter_gradients (array_erase inside a loop that then steps past the moved-in
    element) against that loop itself on random flag patterns."""
    from maixemu.firmware.image._features import _erased

    rng = np.random.default_rng(21)
    for _ in range(3000):
        far = rng.random(int(rng.integers(0, 40))) < rng.random()
        alive, i = list(range(far.size)), 0
        while i < len(alive):
            if far[alive[i]]:
                del alive[i]
            i += 1
        want = np.ones(far.size, bool)
        want[alive] = False
        assert np.array_equal(_erased(far), want), far.tolist()


def test_lbp_kernel_and_array_form_and_twin(monkeypatch):
    """``_lbp_counts`` (compiled), its Python twin and the array form of ``lbp_desc`` on random
    images and ROIs (offset ones read past row ends and past the buffer, as lbp.c does)."""
    from maixemu.firmware.image import _features

    rng = np.random.default_rng(17)
    for trial in range(30):
        h, w = (int(v) for v in rng.integers(8, 70, 2))
        a = rng.integers(0, 256, (h, w)).astype(np.uint8) if trial % 2 else (
            np.add.outer(np.arange(h), np.arange(w)) * int(rng.integers(1, 9)) % 256).astype(np.uint8)
        rx, ry = int(rng.integers(0, w - 7)), int(rng.integers(0, h - 7))
        roi = (rx, ry, int(rng.integers(7, w - rx + 1)), int(rng.integers(7, h - ry + 1)))
        monkeypatch.setattr(_features, "compiled", lambda: False)
        arrays = _features.lbp_desc(a, roi)
        monkeypatch.setattr(_features, "_lbp_counts", types.SimpleNamespace(attempt=_features._lbp_counts.__wrapped__))
        monkeypatch.setattr(_features, "compiled", lambda: True)
        twin = _features.lbp_desc(a, roi)
        monkeypatch.undo()
        assert np.array_equal(twin, arrays), (trial, roi)
        if _features.compiled():
            assert np.array_equal(_features.lbp_desc(a, roi), arrays), (trial, roi)


def test_lsd_seed_order_is_lexsorts():
    """``_ll_angle``'s pseudo-ordering (bins of the norm, highest first, x-major inside a bin) as a
    stable 16-bit sort of the transposed raster against the three-key lexsort it replaced."""
    rng = np.random.default_rng(30)
    for h, w in ((5, 7), (40, 33), (239, 319)):
        b = rng.integers(0, 1024, (h, w)) if h < 200 else rng.integers(0, 3, (h, w)) * 511
        yy, xx = np.mgrid[0:h, 0:w]
        want = np.lexsort((yy.T.ravel(), xx.T.ravel(), -b.T.ravel()))
        assert np.array_equal(np.argsort((1023 - b.T.ravel()).astype(np.uint16), kind="stable"), want)


def test_a_kernels_attempt_is_its_compiled_answer_or_not_served(monkeypatch):
    from maixemu.firmware.image import _jit
    from maixemu.firmware.image._jit import kernel

    @kernel
    def twice(v, out):
        for i in range(v.size):
            out[i] = v[i] * 2
        return v.size

    v, out = np.arange(4, dtype=np.int64), np.zeros(4, np.int64)
    monkeypatch.setenv("MAIXEMU_NO_JIT", "1")
    assert twice.attempt(v, out) is _jit.NOT_SERVED and not out.any()  # nothing ran
    assert twice(v, out) == 4 and out.tolist() == [0, 2, 4, 6]  # the call itself: the Python twin
    monkeypatch.delenv("MAIXEMU_NO_JIT")
    monkeypatch.setenv("MAIXEMU_KERNELS", "wait")
    if _jit.compiled():
        out[:] = 0
        assert twice.attempt(v, out) == 4 and out.tolist() == [0, 2, 4, 6]
