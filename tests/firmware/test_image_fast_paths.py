"""The fast paths of drawing, conversions, copies and resizing give the answers of their plain forms.

Lookup tables are compared with the per-pixel formulas they tabulate (on every input value where
that is 65536 values or fewer), compiled kernels with the numpy paths they replace (those run
when numba is missing, ``MAIXEMU_NO_JIT=1``) on random inputs, extremes and clipping included.
The firmware's own C checks the drawing itself (``test_image_draw_cdiff.py``); these tests also
run where the mirror and gcc are absent.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _binary, _bitmap, _color, _draw, _jit, _kinds, _lab, _pixels, _resize, _tables

FORMATS = (pixformat.BINARY, pixformat.GRAYSCALE, pixformat.RGB565)
ALL565 = np.arange(65536, dtype=np.uint16)


def _image(rng, fmt: int, w: int, h: int):
    top = {pixformat.BINARY: 2, pixformat.GRAYSCALE: 256, pixformat.RGB565: 65536}[fmt]
    return image.Image._wrap(fmt, rng.integers(0, top, (h, w)).astype(np.uint16 if fmt == pixformat.RGB565 else np.uint8))


# ---------------------------------------------------------------------- tables
def test_rgb565_through_8_bit_and_back_is_every_value_unchanged():
    # draw_image with alpha 256 converts each source pixel to R8/G8/B8 and back: it copies the pixel
    assert np.array_equal(_color.rgb888_to_565(_color.rgb565_to_888(ALL565)), ALL565)


def test_gray_and_binary_tables_equal_the_yuv_formulas():
    y = _tables.yuv_table()[:, 0].astype(np.int64)
    assert np.array_equal(_color.rgb565_to_gray(ALL565), (y + 128).astype(np.uint8))
    assert np.array_equal(_kinds.binary_of_rgb565(ALL565), (y > -1).astype(np.uint8))
    assert np.array_equal(_pixels.to_binary(ALL565.reshape(256, 256), pixformat.RGB565), (y + 128 >= 128).reshape(256, 256))
    levels = np.arange(256, dtype=np.uint8)
    packed = _color.pack565(_color.T8TO5[levels], _color.T8TO6[levels], _color.T8TO5[levels])
    assert np.array_equal(_color.gray_to_rgb565(levels.reshape(16, 16)), packed.reshape(16, 16))  # OpenCV LUT
    assert np.array_equal(_color.gray_to_rgb565(levels), packed)  # np.take
    assert int(_color.gray_to_rgb565(np.uint8(200))) == int(packed[200])


def test_rainbow_of_every_rgb565_value_is_the_rainbow_of_its_gray():
    assert np.array_equal(_bitmap.rainbow_of_rgb565(), _bitmap.rainbow_table()[_tables.gray_table()])
    img = _image(np.random.default_rng(1), pixformat.RGB565, 37, 11)
    gray = _tables.gray_table()[img._pix]
    assert np.array_equal(img.to_rainbow(copy=True)._pix, _bitmap.rainbow_table()[gray])
    g = image.Image._wrap(pixformat.GRAYSCALE, gray.copy())
    assert np.array_equal(g.to_rainbow(copy=True)._pix, _bitmap.rainbow_table()[gray])


def test_tuple_colours_equal_the_table_conversion():
    values = list(range(0, 256, 5)) + [255, -7, 300]
    for r, g, b in itertools.product(values, values, values):
        c8 = np.array([min(max(v, 0), 255) for v in (r, g, b)], np.uint8)
        p = int(_color.rgb888_to_565(c8))
        assert _color.color_value((r, g, b), pixformat.RGB565) == p
        assert _color.color_value((r, g, b), pixformat.GRAYSCALE) == int(_tables.gray_table()[p])
        assert _color.color_value((r, g, b), pixformat.BINARY) == int(_tables.yuv_table()[p, 0] > -1)


def test_binary_tables_equal_the_threshold_tests():
    rng = np.random.default_rng(2)
    for trial in range(60):
        fmt = FORMATS[trial % 3]
        img = _image(rng, fmt, int(rng.integers(1, 40)), int(rng.integers(1, 30)))
        n = int(rng.integers(1, 4))
        if fmt == pixformat.RGB565:
            raw = [tuple(int(v) for v in rng.integers(-130, 130, 6)) for _ in range(n)]
        else:
            raw = [tuple(int(v) for v in rng.integers(-5, 260, 2)) for _ in range(n)]
        ths = _lab.parse_thresholds(raw)
        invert, zero = bool(trial % 2), bool(trial % 5 == 0)
        inside = _lab.any_threshold(img._pix, fmt, ths, invert)
        white = _pixels.binary_max(fmt)
        want = np.where(inside, 0, img._pix) if zero else np.where(inside, white, 0)
        got = img.binary(raw, invert=invert, zero=zero)._pix
        assert np.array_equal(got, want.astype(got.dtype)), trial


# ---------------------------------------------------------------------- copies and resizing
def test_copies_and_crops_sample_the_same_pixels_as_a_2d_gather():
    rng = np.random.default_rng(3)
    for trial in range(80):
        fmt = FORMATS[1 + trial % 2]
        img = _image(rng, fmt, int(rng.integers(1, 50)), int(rng.integers(1, 40)))
        w, h = img.width(), img.height()
        roi = (int(rng.integers(-5, w)), int(rng.integers(-5, h)), int(rng.integers(6, w + 12)), int(rng.integers(6, h + 12)))
        xs, ys = (float(rng.choice([1.0, 1.0, 0.5, 2.0, float(rng.uniform(0.2, 3))])) for _ in range(2))
        x, y, rw, rh = image._args.roi(w, h, roi)
        ow, oh = int(np.floor(np.float32(rw) * np.float32(xs))), int(np.floor(np.float32(rh) * np.float32(ys)))
        if ow < 1 or oh < 1:
            continue
        sx = (np.arange(ow, dtype=np.float32) * np.float32(1.0 / float(np.float32(xs)))).astype(np.int64) + x
        sy = (np.arange(oh, dtype=np.float32) * (np.float32(1) / np.float32(ys))).astype(np.int64) + y
        got = img.copy(roi=roi, x_scale=xs, y_scale=ys)._pix
        assert np.array_equal(got, img._pix[sy[:, None], sx[None, :]]), trial
        assert got.flags.c_contiguous and not np.shares_memory(got, img._pix)


def test_cut_inside_the_image_equals_the_flat_copy():
    rng = np.random.default_rng(4)
    for trial in range(80):
        fmt = FORMATS[1 + trial % 2]
        img = _image(rng, fmt, int(rng.integers(1, 30)), int(rng.integers(1, 30)))
        W, H = img.width(), img.height()
        x, y = int(rng.integers(-3, W)), int(rng.integers(-3, H))
        w, h = int(rng.integers(1, W + 5)), int(rng.integers(1, H + 5))
        out = np.zeros((h, w), img._pix.dtype)
        flat = img._pix.reshape(-1)
        for r in range(y, min(y + h, H)):
            for c in range(x, min(x + w, W)):
                i = r * W + c
                out[r - y, c - x] = flat[i] if 0 <= i < flat.size else 0
        assert np.array_equal(img.cut(x, y, w, h)._pix, out), trial


def test_shrinking_gray_resize_kernel_equals_the_integral_image(monkeypatch):
    rng = np.random.default_rng(5)
    checked = 0
    while checked < 150:
        h0, w0, w, h = (int(v) for v in rng.integers(1, 70, 4))
        if w >= w0 or h >= h0:
            continue
        src = rng.choice(np.array([0, 1, 254, 255], np.uint8), (h0, w0)) if checked % 4 == 0 else \
            rng.integers(0, 256, (h0, w0)).astype(np.uint8)
        fast = _resize.resize_gray(src, w, h)
        monkeypatch.setattr(_resize, "compiled", lambda: False)
        assert np.array_equal(fast, _resize.resize_gray(src, w, h)), (h0, w0, w, h)
        monkeypatch.undo()
        checked += 1


def test_nearest_rgb565_resize_picks_the_truncated_sources():
    rng = np.random.default_rng(6)
    for _ in range(50):
        h0, w0, w, h = (int(v) for v in rng.integers(1, 60, 4))
        if not (w0 >= w or h0 > h) or (w0 == w and h0 == h):
            continue
        src = rng.integers(0, 65536, (h0, w0)).astype(np.uint16)
        xs = (np.arange(w, dtype=np.float32) * (np.float32(w0) / np.float32(w))).astype(np.int64)
        ys = (np.arange(h, dtype=np.float32) * (np.float32(h0) / np.float32(h))).astype(np.int64)
        assert np.array_equal(_resize.resize_rgb565(src, w, h), src[ys[:, None], xs[None, :]])


# ---------------------------------------------------------------------- drawing: kernels and numpy paths
def _draw_calls(rng, fmt, w, h):
    """A random drawing call of every kind (with its arguments), clipping and odd sizes included."""
    c = int(rng.integers(0, 2 if fmt == pixformat.BINARY else 256 if fmt == pixformat.GRAYSCALE else 65536))
    px = lambda: int(rng.integers(-15, w + 15))  # noqa: E731
    py = lambda: int(rng.integers(-15, h + 15))  # noqa: E731
    t = int(rng.choice([0, 1, 2, 3, 6]))
    other = _image(rng, FORMATS[int(rng.integers(0, 3))], int(rng.integers(1, 25)), int(rng.integers(1, 25)))
    mask = _image(rng, FORMATS[int(rng.integers(0, 3))], int(rng.integers(1, 25)), int(rng.integers(1, 25)))
    return [
        ("draw_line", (px(), py(), px(), py(), c, t), {}),
        ("draw_circle", (px(), py(), int(rng.integers(0, 30)), c, t, False), {}),
        ("draw_circle", (px(), py(), int(rng.integers(0, 30)), c, t, True), {}),
        ("draw_ellipse", (px(), py(), int(rng.integers(0, 25)), int(rng.integers(0, 25)), int(rng.integers(-200, 200)), c, t,
                          bool(rng.random() < 0.5)), {}),
        ("draw_cross", (px(), py(), c, int(rng.integers(0, 12)), t), {}),
        ("draw_arrow", (px(), py(), px(), py(), c, int(rng.integers(0, 12)), t), {}),
        ("draw_string", (px(), py(), "Hi!\n~ x\x01", c, float(rng.choice([0.6, 1.0, 1.5, 2.0, 7.3])), 1, 2,
                         bool(rng.random() < 0.3)), {}),
        ("draw_font", (px(), py(), 16, 16, bytes(rng.integers(0, 256, 32).astype(np.uint8)), float(rng.choice([0.6, 1.0, 2.5]))),
         {"color": c}),
        ("draw_image", (other, px(), py(), float(rng.choice([1.0, 0.5, 2.0, 1.3])), float(rng.choice([1.0, 0.7, 2.0])),
                        int(rng.choice([256, 128, 0, 200])), mask if rng.random() < 0.4 else None), {}),
    ]


@pytest.mark.skipif(not _jit.compiled(), reason="numba is not installed: only the numpy paths exist here")
def test_drawing_kernels_equal_the_numpy_paths(monkeypatch):
    rng = np.random.default_rng(7)
    for trial in range(70):
        fmt = FORMATS[trial % 3]
        w, h = (int(v) for v in rng.integers(1, 50, 2))
        base = _image(rng, fmt, w, h)
        for name, args, kwargs in _draw_calls(rng, fmt, w, h):
            fast = image.Image._wrap(fmt, base._pix.copy())
            getattr(fast, name)(*args, **dict(kwargs))
            monkeypatch.setattr(_draw, "compiled", lambda: False)
            plain = image.Image._wrap(fmt, base._pix.copy())
            getattr(plain, name)(*args, **dict(kwargs))
            monkeypatch.undo()
            assert np.array_equal(fast._pix, plain._pix), (trial, fmt, name, args)


def test_drawing_far_off_the_image_allocates_nothing_big():
    img = image.Image(size=(40, 30))
    img.draw_image(image.Image(size=(8, 8)), -10, -10, x_scale=1e30, y_scale=1e30)  # INT32_MAX columns on the device
    img.draw_string(-5, -5, "A", scale=3000.0)
    img.draw_font(0, 0, 8, 8, bytes(range(8)), scale=1e6)
    assert img._pix.shape == (30, 40)


def test_binary_lookup_tables_are_cached_per_thresholds():
    _binary._binary_table.cache_clear()
    img = image.Image(size=(8, 8))
    for _ in range(3):
        img.binary([(10, 60, -20, 20, -20, 20)])
    assert _binary._binary_table.cache_info().hits == 2


# ---------------------------------------------------------------------- geometric corrections: kept source maps
def _remap_reference(pix: np.ndarray, sx: np.ndarray, sy: np.ndarray) -> np.ndarray:
    h, w = pix.shape
    ok = (sx >= 0) & (sx < w) & (sy >= 0) & (sy < h)
    out = np.zeros_like(pix)
    out[ok] = pix[sy[ok], sx[ok]]
    return out


def test_kept_correction_maps_give_the_pixels_of_freshly_computed_ones():
    from maixemu.firmware.image import _polar, _rotation

    rng = np.random.default_rng(8)
    for trial in range(12):
        fmt = FORMATS[1 + trial % 2]
        w, h = int(rng.integers(5, 60)), int(rng.integers(5, 50))
        for call in range(2):  # the second call reads the kept map
            img = _image(rng, fmt, w, h)
            before = img._pix.copy()
            reverse = bool(trial % 3 == 0)
            img.logpolar(reverse=reverse)
            sx, sy = _polar.polar_map(w, h, False, reverse, reverse and fmt == pixformat.RGB565)
            assert np.array_equal(img._pix, _remap_reference(before, sx, sy)), (trial, call)
            img = image.Image._wrap(fmt, before.copy())
            zr = float(rng.choice([0.0, 30.0, 90.0, 180.0]))
            img.rotation_corr(x_rotation=5.0, z_rotation=zr, zoom=0.9)
            F = np.float32
            rad = lambda v: F(F(F(v) * F(np.pi)) / F(180))  # noqa: E731
            T4 = _rotation.transform(w, h, rad(5.0), rad(0.0), rad(zr), F(0), F(0), F(0.9), rad(60.0))
            assert np.array_equal(img._pix, _remap_reference(before, *_rotation.source_map(T4, w, h))), (trial, call)


def test_lens_corr_kept_map_equals_the_per_call_formula():
    rng = np.random.default_rng(9)
    F = np.float32
    for trial in range(8):
        w, h = int(rng.integers(4, 50)), int(rng.integers(4, 40))
        strength, zoom = float(rng.choice([1.8, 0.5, 3.0])), float(rng.choice([1.0, 0.7, 2.0]))
        img = _image(rng, FORMATS[1 + trial % 2], w, h)
        before = img._pix.copy()
        for _ in range(2):
            img = image.Image._wrap(img._fmt, before.copy())
            img.lens_corr(strength, zoom)
            hw, hh = w // 2, h // 2
            yy, xx = np.mgrid[0:h, 0:w]
            nx, ny = xx - hw, yy - hh
            r = (F(strength) / np.sqrt(F(w * w + h * h))) * np.sqrt((nx * nx + ny * ny).astype(F))
            with np.errstate(divide="ignore", invalid="ignore"):
                theta = np.where(r < F(1e-7), F(1.0), image._fmath.fast_atanf(r) / np.where(r == 0, F(1), r)).astype(F)
            z = F(1.0) / F(zoom)
            sx = hw + np.trunc(theta * (nx.astype(F) * z)).astype(np.int64)
            sy = hh + np.trunc(theta * (ny.astype(F) * z)).astype(np.int64)
            assert np.array_equal(img._pix, _remap_reference(before, sx, sy)), trial


# ---------------------------------------------------------------------- window filters: kernels and numpy paths
def test_box_sums_equal_the_integral_image():
    rng = np.random.default_rng(10)
    for _ in range(300):
        h, w, k = int(rng.integers(1, 30)), int(rng.integers(1, 30)), int(rng.integers(0, 12))
        c = rng.integers(0, 256, (h, w)).astype(np.uint8)
        n = 2 * k + 1
        cum = np.pad(np.pad(c.astype(np.int64), k, mode="edge").cumsum(0).cumsum(1), ((1, 0), (1, 0)))
        ref = cum[n:, n:] - cum[:-n, n:] - cum[n:, :-n] + cum[:-n, :-n]
        assert np.array_equal(_pixels.box_sum(c, k), ref), (h, w, k)


@pytest.mark.skipif(not _jit.compiled(), reason="numba is not installed: only the numpy paths exist here")
@pytest.mark.parametrize("call", [
    lambda i: i.morph(1, [3, -1, 0, 7, -9, 2, 1, 1, -4], mul=0.3, add=2.5), lambda i: i.gaussian(2, unsharp=True),
    lambda i: i.laplacian(1, sharpen=True), lambda i: i.median(1, percentile=0.2), lambda i: i.median(2, percentile=0.9),
    lambda i: i.median(3, percentile=0.0), lambda i: i.mean_pooled(3, 2), lambda i: i.midpoint_pooled(2, 3, bias=0.3),
    lambda i: i.morph(1, [1] * 9, mul=1e30), lambda i: i.bilateral(2, 0.2, 2.0),
], ids=["morph", "unsharp", "sharpen", "rank_low", "rank_high", "rank_min", "mean_pool", "midpoint_pool",
        "morph_saturating", "bilateral"])
def test_filter_kernels_equal_the_numpy_paths(call, monkeypatch, request):
    from maixemu.firmware.image import _filters, _pool

    rng = np.random.default_rng(11)
    for trial in range(24):
        fmt = FORMATS[trial % 3]
        if fmt == pixformat.BINARY and "pool" in request.node.callspec.id:
            continue  # pool.c has no BINARY case (not emulated)
        base = _image(rng, fmt, int(rng.integers(4, 45)), int(rng.integers(4, 35)))
        fast = call(image.Image._wrap(fmt, base._pix.copy()))._pix
        for module in (_filters, _pool):
            monkeypatch.setattr(module, "compiled", lambda: False)
        plain = call(image.Image._wrap(fmt, base._pix.copy()))._pix
        monkeypatch.undo()
        assert np.array_equal(fast, plain), (trial, fmt)
