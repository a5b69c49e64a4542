"""image: storage, colour tables, AI-buffer rules (maixpy-api.md §0, §2.1-2.4).

Expected values are computed here from the spec's formulas, never from our own outputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from maixemu.firmware import image, pixformat


def t5(v):  # 5 -> 8: floor(v*255/31 + 0.5)
    return math.floor(v * 255 / 31 + 0.5)


def t6(v):
    return math.floor(v * 255 / 63 + 0.5)


def f5(v):  # 8 -> 5
    return math.floor(v * 31 / 255 + 0.5)


def f6(v):
    return math.floor(v * 63 / 255 + 0.5)


def decode(p):
    """Spec §2.1 field extraction of a byte-swapped RGB565 value -> 8-bit RGB."""
    r5 = (p >> 3) & 31
    g6 = ((p & 7) << 3) | (p >> 13)
    b5 = (p >> 8) & 31
    return (t5(r5), t6(g6), t5(b5))


def pack(r8, g8, b8):
    r5, g6, b5 = f5(r8), f6(g8), f5(b8)
    return (r5 << 3) | (g6 >> 3) | ((g6 & 7) << 13) | (b5 << 8)


def gray_of(r, g, b):
    """The firmware's YUV table: Y = floor(0.299 R + 0.587 G + 0.114 B) - 128 (yuv_tab.c), gray = Y + 128."""
    return math.floor(0.299 * r + 0.587 * g + 0.114 * b)


def test_tables_match_formulas():
    from maixemu.firmware.image import _color

    assert [int(v) for v in _color.T5TO8] == [t5(v) for v in range(32)]
    assert [int(v) for v in _color.T6TO8] == [t6(v) for v in range(64)]
    assert [int(v) for v in _color.T8TO5] == [f5(v) for v in range(256)]
    assert [int(v) for v in _color.T8TO6] == [f6(v) for v in range(256)]
    # the documented differences from bit replication
    assert [t5(v) for v in (3, 7, 24, 28)] != [(v << 3) | (v >> 2) for v in (3, 7, 24, 28)]
    assert t5(3) == 25 and t5(31) == 255 and t6(1) == 4


@pytest.mark.parametrize(
    "raw,rgb",
    [
        (0x00F8, (255, 0, 0)),
        (0xF800, (0, 28, 197)),
        (31, (25, 227, 0)),
        (0xE007, (0, 255, 0)),
        (0x1F00, (0, 0, 255)),
        (0x0F00, (0, 0, 123)),
        (0xFFFF, (255, 255, 255)),
    ],
)
def test_int_colours_are_raw_byte_swapped(raw, rgb):
    assert decode(raw) == rgb  # the spec's own examples
    img = image.Image(size=(4, 3))
    img.set_pixel(2, 1, raw)
    assert img.get_pixel(2, 1) == rgb
    assert img.get_pixel(2, 1, rgbtuple=False) == raw
    assert int(img._pix[1, 2]) == raw
    assert img._rgb888()[1, 2].tolist() == list(rgb)


def test_tuple_colours_use_rounding_tables():
    img = image.Image(size=(8, 8))
    for rgb in [(255, 0, 0), (10, 20, 30), (3, 250, 129), (300, -5, 128)]:
        img.set_pixel(0, 0, rgb)
        clamped = tuple(max(0, min(255, c)) for c in rgb)
        assert int(img._pix[0, 0]) == pack(*clamped)
        assert img.get_pixel(0, 0) == decode(pack(*clamped))


def test_to_bytes_is_byte_swapped_memory():
    img = image.Image(size=(2, 1))
    img.set_pixel(0, 0, (255, 0, 0))  # R5=31 -> first byte 0b11111000
    img.set_pixel(1, 0, (0, 0, 255))  # B5=31 -> second byte 0b00011111
    assert img.to_bytes() == bytes([0xF8, 0x00, 0x00, 0x1F])


def test_defaults_and_constructors():
    img = image.Image()
    assert (img.width(), img.height(), img.format()) == (320, 240, pixformat.RGB565)
    assert img.size() == 320 * 240 * 2
    assert not img._pix.any()
    assert img._ai_array() is None
    small = image.Image(size=(128, 64))
    assert (small.width(), small.height()) == (128, 64)
    assert small.format() == image.RGB565 == pixformat.RGB565


def test_grayscale_formula_rgb565_to_gray():
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (6, 7, 3), dtype=np.uint8)
    img = image.Image._from_rgb888(rgb)
    g = img.to_grayscale(True)
    assert g.format() == pixformat.GRAYSCALE
    for y in range(6):
        for x in range(7):
            r8, g8, b8 = decode(pack(*rgb[y, x].tolist()))
            assert g.get_pixel(x, y) == gray_of(r8, g8, b8)


def test_from_rgb888_grayscale_uses_formula_on_8bit():
    rgb = np.array([[[10, 200, 30], [255, 255, 255], [0, 0, 0], [100, 100, 101]]], dtype=np.uint8)
    img = image.Image._from_rgb888(rgb, pixformat.GRAYSCALE)
    assert img._pix.tolist() == [[gray_of(*px) for px in rgb[0].tolist()]]


def test_gray_int_colour_is_level_and_tuple_goes_through_565():
    g = image.Image(size=(4, 4)).to_grayscale(True)
    g.set_pixel(0, 0, 77)
    assert g.get_pixel(0, 0) == 77
    g.set_pixel(1, 0, (200, 10, 50))
    assert g.get_pixel(1, 0) == gray_of(*decode(pack(200, 10, 50)))
    g.set_pixel(2, 0)  # default -1 -> 255
    assert g.get_pixel(2, 0) == 255


# ---------------------------------------------------------------- AI buffer
def _frame(h=4, w=5, seed=0):
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def test_pix_to_ai_layout_planar_rgb():
    rgb = _frame()
    img = image.Image._from_rgb888(rgb)
    assert img._ai_array() is None
    assert img.pix_to_ai() is None
    ai = img._ai_array()
    assert ai.shape == (3, 4, 5) and ai.dtype == np.uint8
    flat = ai.reshape(-1)  # planes back to back: R[w*h], G[w*h], B[w*h]
    for y in range(4):
        for x in range(5):
            i = y * 5 + x
            expect = decode(int(img._pix[y, x]))
            assert (flat[i], flat[20 + i], flat[40 + i]) == expect


def test_ai_to_pix_inverse_with_tables():
    img = image.Image(size=(3, 2))
    img.pix_to_ai()
    ai = img._ai_array()
    ai[0] = 200
    ai[1] = 100
    ai[2] = 7
    img.ai_to_pix()
    assert int(img._pix[1, 2]) == pack(200, 100, 7)
    assert not img._ai_is_stale()


def test_ai_to_pix_without_buffer_does_nothing():
    img = image.Image(size=(3, 2))
    img.set_pixel(0, 0, 0x1234)
    assert img.ai_to_pix() is None
    assert int(img._pix[0, 0]) == 0x1234


def test_snapshot_frame_fills_ai_and_aliases():
    fb = image.Image._from_rgb888(_frame(seed=1))
    fb._load_frame(_frame(seed=2), pixformat.RGB565)
    old = fb._alias()
    before = old._pix.copy()
    ai = fb._ai_array()
    assert ai is not None and not fb._ai_is_stale()
    # filled like pix_to_ai would: pix_to_ai on an unmodified frame changes nothing
    copy = ai.copy()
    fb.pix_to_ai()
    assert np.array_equal(copy, fb._ai_array())
    fb._load_frame(_frame(seed=3), pixformat.RGB565)
    assert not np.array_equal(before, old._pix)  # the old reference sees the new frame
    assert np.array_equal(old._pix, fb._pix)


def test_drawing_leaves_rgb565_ai_stale_until_pix_to_ai():
    img = image.Image._from_rgb888(_frame())
    img._load_frame(_frame(seed=5), pixformat.RGB565)
    gen = img._ai_gen
    ai_before = img._ai_array().copy()
    img.set_pixel(0, 0, (255, 255, 255))
    assert img._ai_is_stale()
    assert np.array_equal(img._ai_array(), ai_before)  # KPU still sees the undrawn frame
    assert img._pix_gen > gen
    img.pix_to_ai()
    assert not img._ai_is_stale()
    assert img._ai_array()[:, 0, 0].tolist() == [255, 255, 255]


def test_grayscale_snapshot_shares_pixels_and_ai():
    img = image.Image._from_rgb888(_frame())
    img._load_frame(_frame(seed=7), pixformat.GRAYSCALE)
    assert img.format() == pixformat.GRAYSCALE
    ai = img._ai_array()
    assert ai.shape == (1, 4, 5)
    assert np.shares_memory(ai, img._pix)
    img.set_pixel(1, 1, 9)
    assert int(img._ai_array()[0, 1, 1]) == 9
    assert not img._ai_is_stale()


@pytest.mark.parametrize(
    "make",
    [
        lambda i: i.resize(3, 3),
        lambda i: i.cut(0, 0, 2, 2),
        lambda i: i.copy(),
        lambda i: i.crop(copy=True),
        lambda i: i.copy(roi=(1, 1, 2, 2)),
    ],
)
def test_new_images_have_no_ai_buffer(make):
    img = image.Image._from_rgb888(_frame())
    img._load_frame(_frame(seed=4), pixformat.RGB565)
    assert make(img)._ai_array() is None


def test_to_grayscale_copy_gets_zero_ai_and_in_place_keeps_stale():
    img = image.Image._from_rgb888(_frame())
    img._load_frame(_frame(seed=4), pixformat.RGB565)
    g = img.to_grayscale(1)
    assert g._ai_array() is not None and not g._ai_array().any()
    kept = img._ai_array().copy()
    same = img.to_grayscale()
    assert img.format() == pixformat.GRAYSCALE and same.format() == pixformat.GRAYSCALE
    assert img._ai_is_stale()
    assert np.array_equal(img._buf.ai, kept)


def test_grayscale_pix_to_ai_copies_plane():
    g = image.Image(size=(3, 2)).to_grayscale(True)
    g.set_pixel(2, 1, 99)
    g.pix_to_ai()
    assert g._ai_array().shape == (1, 2, 3)
    assert int(g._ai_array()[0, 1, 2]) == 99
    g.set_pixel(2, 1, 1)
    assert g._ai_is_stale()



# ---------------------------------------------------------------- K210 additions
def test_get_affine_transform_matches_similarity_least_squares():
    src = [(0, 0), (240, 0), (240, 240)]
    dst = [(60, 60), (240, 0), (220, 200)]
    m = image.get_affine_transform(src, dst)
    assert len(m) == 9 and m[6:] == (0.0, 0.0, 1.0)
    # Umeyama similarity mapping dst -> src, computed independently in float64
    P = np.array(dst, float)
    Q = np.array(src, float)
    mp, mq = P.mean(0), Q.mean(0)
    cov = (Q - mq).T @ (P - mp) / len(P)
    U, S, Vt = np.linalg.svd(cov)
    d = np.sign(np.linalg.det(U @ Vt))
    D = np.diag([1, d])
    R = U @ D @ Vt
    c = (S * np.diag(D)).sum() / ((P - mp) ** 2).sum(1).mean()
    t = mq - c * R @ mp
    expect = [c * R[0, 0], c * R[0, 1], t[0], c * R[1, 0], c * R[1, 1], t[1]]
    assert np.allclose(m[:6], expect, atol=1e-3)
    with pytest.raises(OSError, match="Need input"):
        image.get_affine_transform(tuple(src), dst)


def test_warp_affine_ai_identity_and_shift():
    rgb = _frame(6, 8, seed=11)
    src = image.Image._from_rgb888(rgb)
    src.pix_to_ai()
    dst = image.Image(size=(8, 6))
    dst.pix_to_ai()
    image.warp_affine_ai(src, dst, (1, 0, 0, 0, 1, 0, 0, 0, 1))
    a, b = src._ai_array(), dst._ai_array()
    assert np.array_equal(b, a)  # weights (256,0) -> exact copy, last row/col included
    image.warp_affine_ai(src, dst, (1, 0, 2.5, 0, 1, 0, 0, 0, 1))
    b = dst._ai_array()
    # x = 2.5 + j: fraction 128 -> ((128*c00 + 128*c10) * 256) >> 16
    for j in range(0, 5):
        for i in range(6):
            for k in range(3):
                c00 = int(a[k, i, j + 2])
                c10 = int(a[k, i, j + 3]) if j + 3 < 8 else int(a.reshape(-1)[k * 48 + i * 8 + j + 3])
                assert b[k, i, j] == ((128 * 256 * c00 + 128 * 256 * c10) >> 16)
    assert not b[:, :, 6:].any()  # source x >= 8 -> left at 0
    with pytest.raises(ValueError, match="only support ai image affine"):
        image.warp_affine_ai(src, image.Image(size=(8, 6)), (1, 0, 0, 0, 1, 0, 0, 0, 1))


def test_conv3_reads_ai_buffer_and_rebuilds_pixels_with_shifts(capsys):
    img = image.Image._from_rgb888(np.full((4, 4, 3), 100, np.uint8))
    assert img.conv3([0, 0, 0, 0, 1, 0, 0, 0, 0]) is None
    assert "pix_ai or pixels is NULL!" in capsys.readouterr().out
    img.pix_to_ai()
    img.draw_rectangle(0, 0, 4, 4, color=(255, 255, 255), fill=True)  # AI still the old frame
    img.conv3([0, 0, 0, 0, 1, 0, 0, 0, 0])
    ai = img._ai_array()
    # identity kernel on the *AI* planes (the old frame, not the white rectangle)
    assert tuple(int(v) for v in ai[:, 1, 1]) == (t5(f5(100)), t6(f6(100)), t5(f5(100)))
    R, G, B = (int(ai[c, 2, 2]) for c in range(3))
    expect = ((R >> 3) << 3) + (G >> 5) + ((B >> 3) << 8) + ((G & 0x1C) << 11)
    assert int(img._pix[2, 2]) == expect


def test_strech_char_formula():
    g = image.Image(size=(4, 2)).to_grayscale(True)
    vals = [10, 20, 30, 40, 50, 60, 70, 80]
    for i, v in enumerate(vals):
        g.set_pixel(i % 4, i // 4, v)
    assert g.strech_char(0) is None
    gate = sum(vals) // 4 // 2
    for i, v in enumerate(vals):
        num = (v - gate) * 255
        q = int(num / (80 - gate))  # C truncation toward zero
        assert g.get_pixel(i % 4, i // 4) == max(0, min(255, q))


def test_rgb_to_grayscale_and_back():
    # imlib_rgb_to_grayscale: float32 sRGB luminance, gamma with powf, then (int) truncation, so
    # white gives 254.99... -> 254 on the device (golden case 013_colors has the whole grid)
    assert image.rgb_to_grayscale((255, 255, 255)) == 254
    assert image.grayscale_to_rgb(0) == (0, 0, 0)
    assert image.grayscale_to_rgb(300) == (44, 44, 44)  # stored in a uint8_t first
    assert image.rgb_to_lab((255, 0, 0))[0] in (53, 54)


def test_copy_to_fb_aliases_main_frame():  # the test's board is fresh: no frame buffer yet
    a = image.Image(copy_to_fb=True)
    b = image.Image(copy_to_fb=1)
    a.set_pixel(0, 0, 0x1234)
    assert b.get_pixel(0, 0, rgbtuple=False) == 0x1234
    assert image._main_frame().get_pixel(0, 0, rgbtuple=False) == 0x1234


def test_internal_hooks_contract():
    rgb = _frame(4, 6, seed=21)
    img = image.Image._from_rgb888(rgb)
    assert img._pix.dtype == np.uint16 and img._pix.shape == (4, 6)
    assert img._rgb888().shape == (4, 6, 3) and img._rgb888().dtype == np.uint8
    assert img._ai_array() is None and not img._ai_is_stale()
    # fill_ai=False keeps the old AI memory, which is then older than the pixels
    img._load_frame(rgb, pixformat.RGB565)
    old = img._ai_array().copy()
    img._load_frame(_frame(4, 6, seed=22), pixformat.RGB565, fill_ai=False)
    assert img._ai_is_stale() and np.array_equal(img._ai_array(), old)
    # a new frame size replaces the memory; aliases follow
    alias = img._alias()
    img._load_frame(_frame(8, 10, seed=23), pixformat.RGB565)
    assert (alias.width(), alias.height()) == (10, 8) and alias._ai_array().shape == (3, 8, 10)
    # YUV422 frames are stored and reported as RGB565
    img._load_frame(rgb, pixformat.YUV422)
    assert img.format() == pixformat.RGB565
    # kpu.fmap images: grayscale views without AI memory
    plane = np.arange(12, dtype=np.uint8).reshape(3, 4)
    fm = image.Image._from_gray_view(plane)
    assert fm.format() == pixformat.GRAYSCALE and fm._ai_array() is None
    assert np.shares_memory(fm._pix, plane) and fm.get_pixel(1, 2) == 9


def test_constructor_size_fallback_and_errors():
    assert (image.Image(size=(0, 5)).width(), image.Image(size=(0, 5)).height()) == (320, 240)
    with pytest.raises(TypeError):
        image.Image(size=(1, 2)).get_pixel(0.5, 0)
    with pytest.raises(OSError, match="ROI does not overlap on the image!"):
        image.Image(size=(4, 4)).copy(roi=(10, 10, 2, 2))
    with pytest.raises(OSError, match="Invalid ROI dimensions!"):
        image.Image(size=(4, 4)).copy(roi=(0, 0, 0, 2))
    assert image.Image(size=(4, 4)).get_pixel(4, 0) is None
    img = image.Image(size=(4, 4))
    assert img.set_pixel(-1, 0, 0x1234) is img and not img._pix.any()
    assert repr(img) == '{"w":4, "h":4, "type"="rgb565", "size":32}'


def test_conv3_kpu_quantised_edge_kernel():
    rgb = np.full((7, 9, 3), 100, np.uint8)
    rgb[3, 4] = (120, 120, 120)
    img = image.Image._from_rgb888(rgb)
    img.pix_to_ai()
    ai0 = img._ai_array().astype(int).copy()
    img.conv3([-1, -1, -1, -1, 8, -1, -1, -1, -1])
    ai = img._ai_array().astype(int)
    for c in range(3):
        real = 8 * ai0[c, 3, 4] - (ai0[c, 2:5, 3:6].sum() - ai0[c, 3, 4])
        assert abs(ai[c, 3, 4] - real) <= 1  # 16-bit weights: within one step of the real value
        assert ai[c, 2, 4] == 0  # negative responses -> 0 (activation segment 0)
        assert abs(int(ai[c, 5, 5])) <= 1  # flat interior: ~0
        # the image border sees zero padding: a large positive response, clamped to 255
        assert ai[c, 0, 0] == 255
