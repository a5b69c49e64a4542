"""image drawing: colours, rectangle/line/circle geometry, draw_string metrics, draw_font, draw_image.

Expected pixels come from the firmware's geometry (MaixPy v0.6.2 draw.c / font.c, where
``fast_roundf`` is a truncation) computed here with small explicit loops.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image

# glyph rows from the firmware's font.c (Envy Code B 10pt), MSB = left column
GLYPH_A = [0x00, 0x38, 0x44, 0x44, 0x44, 0x7C, 0x44, 0x44, 0x44, 0x44, 0x00, 0x00]
GLYPH_I_LOWER = [0x00, 0x10, 0x00, 0x30, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x00, 0x00]


def on(img):
    return img._pix != 0


def ref_glyph(rows, x_off, y_off, scale, W, H):
    """imlib_draw_font with truncating fast_roundf, plus the proportional left shift."""
    out = np.zeros((H, W), bool)
    s = np.float32(scale)
    first = min(c for c in range(8) for r in rows if r & (1 << (7 - c)))
    x_off -= int(np.float32(first) * s)
    for y in range(int(np.float32(12) * s)):
        pos = int(np.float32(y) / s)
        for x in range(int(np.float32(8) * s)):
            col = int(np.float32(x) / s)
            if rows[pos] & (1 << (7 - col)) and 0 <= x_off + x < W and 0 <= y_off + y < H:
                out[y_off + y, x_off + x] = True
    return out


@pytest.mark.parametrize("scale", [1, 2, 1.5, 2.5, 0.75])
def test_draw_string_single_glyph_matches_reference(scale):
    img = image.Image(size=(60, 40))
    img.draw_string(5, 3, "A", scale=scale)
    assert np.array_equal(on(img), ref_glyph(GLYPH_A, 5, 3, scale, 60, 40))


def _advance(rows, scale, x_spacing=0):
    last = max(c for c in range(8) for r in rows if r & (1 << (7 - c)))
    return int(np.float32(last + 2) * np.float32(scale)) + x_spacing


@pytest.mark.parametrize("scale,spacing", [(1, 0), (2, 0), (1.5, 3), (3, -1)])
def test_proportional_advance(scale, spacing):
    img = image.Image(size=(120, 50))
    img.draw_string(4, 2, "Ai", scale=scale, x_spacing=spacing)
    expect = ref_glyph(GLYPH_A, 4, 2, scale, 120, 50)
    # the pen moved left by A's first column (x scale) before advancing
    pen = 4 - int(np.float32(1) * np.float32(scale)) + _advance(GLYPH_A, scale, spacing)
    expect |= ref_glyph(GLYPH_I_LOWER, pen, 2, scale, 120, 50)
    assert np.array_equal(on(img), expect)


def test_space_advances_three_scaled_without_spacing():
    a = image.Image(size=(80, 20))
    a.draw_string(0, 0, " A", scale=2, x_spacing=5)
    b = image.Image(size=(80, 20))
    b.draw_string(int(np.float32(3) * np.float32(2)), 0, "A", scale=2)
    assert np.array_equal(on(a), on(b))


def test_mono_space_advance():
    img = image.Image(size=(80, 20))
    img.draw_string(0, 0, "AA", mono_space=True, scale=1)
    first = on(image.Image(size=(80, 20)).draw_string(0, 0, "A", mono_space=True))
    second = on(image.Image(size=(80, 20)).draw_string(8, 0, "A", mono_space=True))
    assert np.array_equal(on(img), first | second)
    # mono: no left shift, so column 0 of the cell is x itself ('A' starts at column 1)
    assert first[:, 1].any() and not first[:, 0].any()


@pytest.mark.parametrize("sep", ["\n", "\r", "\r\n"])
def test_newline_returns_to_x_and_moves_down(sep):
    img = image.Image(size=(60, 60))
    img.draw_string(7, 1, "A" + sep + "A", scale=2, y_spacing=3)
    expect = ref_glyph(GLYPH_A, 7, 1, 2, 60, 60) | ref_glyph(GLYPH_A, 7, 1 + 24 + 3, 2, 60, 60)
    assert np.array_equal(on(img), expect)


def test_unknown_character_draws_box_without_advance():
    img = image.Image(size=(40, 20))
    img.draw_string(2, 2, "\t")
    # rectangle(x+1, y+1, w=12-2, h=8-2) (width and height swapped), thickness 1
    expect = np.zeros((20, 40), bool)
    x, y, w, h = 3, 3, 10, 6
    expect[y, x:x + w] = expect[y + h - 1, x:x + w] = True
    expect[y:y + h, x] = expect[y:y + h, x + w - 1] = True
    assert np.array_equal(on(img), expect)
    a = on(image.Image(size=(40, 20)).draw_string(2, 2, "\tA"))
    assert np.array_equal(a, expect | on(image.Image(size=(40, 20)).draw_string(2, 2, "A")))


def test_scale_must_be_positive():
    with pytest.raises(OSError, match="Error: 0 < scale!"):
        image.Image(size=(8, 8)).draw_string(0, 0, "x", scale=0)


def test_draw_returns_self_for_chaining():
    img = image.Image(size=(20, 20))
    assert img.draw_rectangle(1, 1, 5, 5).draw_string(0, 0, "a") is img


@pytest.mark.parametrize(
    "color,raw",
    [((255, 0, 0), 0x00F8), (0x00F8, 0x00F8), (0xF800, 0xF800), (31, 31), (-1, 0xFFFF), (None, 0xFFFF)],
)
def test_rectangle_colour_int_raw_vs_tuple(color, raw):
    img = image.Image(size=(10, 10))
    if color is None:
        img.draw_rectangle((2, 2, 4, 4), fill=True)
    else:
        img.draw_rectangle((2, 2, 4, 4), color=color, fill=True)
    expect = np.zeros((10, 10), np.uint16)
    expect[2:6, 2:6] = raw
    assert np.array_equal(img._pix, expect)


@pytest.mark.parametrize("t", [1, 2, 3, 4])
def test_rectangle_outline_thickness(t):
    img = image.Image(size=(30, 30))
    rx, ry, rw, rh = 8, 9, 10, 7
    img.draw_rectangle(rx, ry, rw, rh, thickness=t)
    expect = np.zeros((30, 30), bool)
    t0, t1 = t // 2, (t - 1) // 2
    for i in range(rx - t0, rx + rw + t1):  # the firmware's yLine loops
        for yy in list(range(ry - t0, ry + t1 + 1)) + list(range(ry + rh - 1 - t0, ry + rh - 1 + t1 + 1)):
            expect[yy, i] = True
    for i in range(ry - t0, ry + rh + t1):
        for xx in list(range(rx - t0, rx + t1 + 1)) + list(range(rx + rw - 1 - t0, rx + rw - 1 + t1 + 1)):
            expect[i, xx] = True
    assert np.array_equal(on(img), expect)


def test_rectangle_clipped_at_border():
    img = image.Image(size=(10, 10))
    img.draw_rectangle(-5, -5, 8, 30, fill=True)
    assert on(img)[:, :3].all() and not on(img)[:, 3:].any()


def bresenham(x0, y0, x1, y1):
    pts = []
    dx, sx = abs(x1 - x0), 1 if x0 < x1 else -1
    dy, sy = abs(y1 - y0), 1 if y0 < y1 else -1
    err = int((dx if dx > dy else -dy) / 2)
    while True:
        pts.append((x0, y0))
        if (x0, y0) == (x1, y1):
            return pts
        e2 = err
        if e2 > -dx:
            err -= dy
            x0 += sx
        if e2 < dy:
            err += dx
            y0 += sy


@pytest.mark.parametrize("line", [(1, 1, 18, 7), (18, 2, 3, 15), (5, 5, 5, 5), (0, 19, 19, 0)])
def test_line_thickness_one_is_bresenham(line):
    img = image.Image(size=(20, 20))
    img.draw_line(line, color=(255, 255, 255))
    expect = np.zeros((20, 20), bool)
    for x, y in bresenham(*line):
        expect[y, x] = True
    assert np.array_equal(on(img), expect)


def test_thick_line_uses_point_fill_disc():
    img = image.Image(size=(20, 20))
    img.draw_line(10, 10, 10, 10, thickness=5)
    expect = np.zeros((20, 20), bool)
    for y in range(-2, 3):
        for x in range(-2, 3):
            if x * x + y * y <= 4:
                expect[10 + y, 10 + x] = True
    assert np.array_equal(on(img), expect)


def test_cross():
    img = image.Image(size=(20, 20))
    img.draw_cross(10, 10, size=3)
    expect = np.zeros((20, 20), bool)
    expect[10, 7:14] = True
    expect[7:14, 10] = True
    assert np.array_equal(on(img), expect)


def test_filled_circle_and_outline_radius():
    img = image.Image(size=(40, 40))
    img.draw_circle(20, 20, 6, fill=True)
    yy, xx = np.mgrid[0:40, 0:40]
    assert np.array_equal(on(img), (xx - 20) ** 2 + (yy - 20) ** 2 <= 36)
    ring = image.Image(size=(40, 40)).draw_circle(20, 20, 6)
    m = on(ring)
    assert m[20, 26] and m[20, 14] and m[26, 20] and m[14, 20] and not m[20, 20]
    d = np.sqrt((xx[m] - 20) ** 2 + (yy[m] - 20) ** 2)
    assert np.all(np.abs(d - 6) < 1.0)


def test_drawing_on_grayscale_uses_levels():
    g = image.Image(size=(10, 10)).to_grayscale(True)
    g.draw_rectangle(0, 0, 2, 2, color=100, fill=True)
    g.draw_line(5, 5, 6, 5, color=(255, 255, 255))
    assert g.get_pixel(1, 1) == 100 and g.get_pixel(5, 5) == 255


def test_draw_font_8x8_and_16x16_layout():
    img = image.Image(size=(40, 40))
    glyph = bytes([0x80, 0x40, 0x20, 0x10, 0x08, 0x04, 0x02, 0x01])
    img.draw_font(3, 4, 8, 8, glyph, scale=1, color=(255, 255, 255))
    expect = np.zeros((40, 40), bool)
    for i in range(8):
        expect[4 + i, 3 + i] = True
    assert np.array_equal(on(img), expect)
    # 16x16: left 8 columns of all rows first, then the right halves
    left = bytes([0x80] * 16)
    right = bytes([0x01] * 16)
    img2 = image.Image(size=(40, 40)).draw_font(0, 0, 16, 16, left + right)
    m = on(img2)
    assert m[:16, 0].all() and m[:16, 15].all() and m.sum() == 32
    with pytest.raises(OSError):
        img2.draw_font(0, 0, 8, 8, b"\x00" * 7)


def test_draw_image_copies_raw_values_and_scales():
    src = image.Image(size=(4, 3))
    for y in range(3):
        for x in range(4):
            src.set_pixel(x, y, 0x0100 * (x + 1) + 8 * y)
    dst = image.Image(size=(20, 20))
    dst.draw_image(src, 5, 6)
    assert np.array_equal(dst._pix[6:9, 5:9], src._pix)
    big = image.Image(size=(20, 20)).draw_image(src, 0, 0, x_scale=2, y_scale=2)
    for y in range(6):
        for x in range(8):
            assert big._pix[y, x] == src._pix[int(np.float32(y) * np.float32(0.5)), int(np.float32(x) * np.float32(0.5))]
    assert not big._pix[6:, :].any() and not big._pix[:, 8:].any()


@pytest.mark.parametrize("alpha, scale", [(256, 1.0), (128, 1.5), (240, 0.7)])
def test_draw_image_clips_a_source_hanging_over_the_edges(alpha, scale):
    """A scaled, blended source partly outside the target draws its inside part only (it raised a
    numpy shape error: canmv_examples' image_drawing_advanced.py bounces a copy off the edges)."""
    rng = np.random.default_rng(7)
    src = image.Image(size=(6, 6))
    src._pix[:] = rng.integers(0, 0x10000, (6, 6), dtype=np.uint16)
    small = image.Image(size=(10, 10))
    small.draw_rectangle(0, 0, 10, 10, color=(40, 90, 200), fill=True)
    small.draw_image(src, -3, -2, x_scale=scale, y_scale=scale, alpha=alpha)
    wide = image.Image(size=(30, 30))
    wide.draw_rectangle(0, 0, 30, 30, color=(40, 90, 200), fill=True)
    wide.draw_image(src, 7, 8, x_scale=scale, y_scale=scale, alpha=alpha)
    assert np.array_equal(small._pix, wide._pix[10:20, 10:20])
    assert not np.array_equal(small._pix[0, 0], np.uint16(small._pix[9, 9]))  # the source landed


def test_draw_image_grayscale_source_is_not_converted():
    g = image.Image(size=(2, 1)).to_grayscale(True)
    g.set_pixel(0, 0, 200)
    dst = image.Image(size=(2, 1)).draw_image(g, 0, 0)
    assert int(dst._pix[0, 0]) == 200  # raw value reinterpreted as RGB565, as on the device


def test_drawing_marks_ai_stale_but_keeps_contents():
    img = image.Image._from_rgb888(np.zeros((8, 8, 3), np.uint8))
    img.pix_to_ai()
    img.draw_rectangle(0, 0, 8, 8, fill=True)
    assert img._ai_is_stale() and not img._ai_array().any()
