"""find_displacement against the firmware's phasecorrelation.c + fft.c (compiled from the mirror).

The firmware's own float32 FFT, log-polar resampling, correlation peak and centroid run on the same
gray pixels; maixemu's vectorised port must give the same five float32 values bit for bit (the PC
build has no fused multiply-adds: the no-FMA arithmetic). ``fix_rotation_scale`` is compared with
``imlib_rotation_corr`` replaced on both sides by the identity (the rotation correction is
imgrest's port, tested with rotation_corr); its rotation/scale estimate is compared as computed.
"""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from firmware_c import FORMS, IMG_DIR, both_forms, build, firmware_source, imlib_shim, needs_firmware_c, run, strip_includes
from maixemu.firmware import image
from maixemu.firmware.image import _phasecorr

_EXTRA = r"""
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define IMLIB_ENABLE_FIND_DISPLACEMENT
#define IM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define IM_MAX(a, b) ((a) > (b) ? (a) : (b))
#define isnanf(x) isnan(x)
#define isinff(x) isinf(x)
#define IMAGE_COMPUTE_GRAYSCALE_PIXEL_ROW_PTR(img, y) (((uint8_t *) (img)->data) + ((img)->w * (y)))
#define IMAGE_GET_GRAYSCALE_PIXEL_FAST(row, x) ((row)[x])
#define IMAGE_PUT_GRAYSCALE_PIXEL_FAST(row, x, v) ((row)[x] = (v))
#define IMAGE_PUT_GRAYSCALE_PIXEL(img, x, y, v) (((uint8_t *) (img)->data)[((img)->w * (y)) + (x)] = (v))
#define IMAGE_PUT_BINARY_PIXEL_FAST(row, x, v) ((void) 0)
#define IMAGE_PUT_BINARY_PIXEL(img, x, y, v) ((void) 0)
#undef IMAGE_COMPUTE_RGB565_PIXEL_ROW_PTR
#undef IMAGE_GET_RGB565_PIXEL_FAST
#define IMAGE_COMPUTE_RGB565_PIXEL_ROW_PTR(img, y) (((uint16_t *) (img)->data) + ((img)->w * (y)))
#define IMAGE_GET_RGB565_PIXEL_FAST(row, x) ((row)[x])
#define IMAGE_PUT_RGB565_PIXEL_FAST(row, x, v) ((row)[x] = (v))
#define IMAGE_PUT_RGB565_PIXEL(img, x, y, v) (((uint16_t *) (img)->data)[((img)->w * (y)) + (x)] = (v))
#define IM_IS_GS(img) ((img)->bpp == IMAGE_BPP_GRAYSCALE)
#define IM_GET_GS_PIXEL(img, x, y) (((uint8_t *) (img)->data)[((img)->w * (y)) + (x)])
#define IM_GET_RGB565_PIXEL(img, x, y) (((uint16_t *) (img)->data)[((img)->w * (y)) + (x)])
static size_t image_size(image_t *img) { return img->w * img->h * (img->bpp == IMAGE_BPP_RGB565 ? 2 : 1); }
static void fs_no_intersection(void *p) { (void) p; abort(); }
static bool rectangle_subimg(image_t *img, rectangle_t *r, rectangle_t *o) { *o = *r; return true; }
static float rc_args[2];
static void imlib_rotation_corr(image_t *img, float xr, float yr, float zr, float xt, float yt, float zoom,
                                float fov, float *corners) { rc_args[0] = zr; rc_args[1] = zoom; }
"""

_MAIN = r"""
static void bits(float f) { uint32_t u; memcpy(&u, &f, 4); printf("%08x ", u); }
int main(void) {
    int w0, h0, w1, h1, r0[4], r1[4], lp, fix, bpp0, bpp1;
    if (scanf("%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d", &w0, &h0, &w1, &h1, &r0[0], &r0[1], &r0[2], &r0[3],
              &r1[0], &r1[1], &r1[2], &r1[3], &lp, &fix, &bpp0, &bpp1) != 16) return 2;
    getchar();
    image_t a = { w0, h0, bpp0, malloc(w0 * h0 * bpp0) }, b = { w1, h1, bpp1, malloc(w1 * h1 * bpp1) };
    if (fread(a.data, 1, w0 * h0 * bpp0, stdin) != (size_t) (w0 * h0 * bpp0)) return 3;
    if (fread(b.data, 1, w1 * h1 * bpp1, stdin) != (size_t) (w1 * h1 * bpp1)) return 3;
    rectangle_t ra = { r0[0], r0[1], r0[2], r0[3] }, rb = { r1[0], r1[1], r1[2], r1[3] };
    float x, y, r, s, resp;
    imlib_phasecorrelate(&a, &b, &ra, &rb, lp, fix, &x, &y, &r, &s, &resp);
    bits(x); bits(y); bits(r); bits(s); bits(resp); bits(rc_args[0]); bits(rc_args[1]); printf("\n");
    return 0;
}
"""


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    """The butterflies as a kernel (``_butterfly_rows``) and as one numpy operation per stage."""
    return both_forms(request, monkeypatch, _phasecorr)


def test_the_butterfly_kernels_python_twin():
    rng = np.random.default_rng(3)
    cos, sin = _phasecorr.fft_tables()
    for n_pow2, inverse in ((1, False), (3, True), (5, False), (6, True)):
        re = rng.standard_normal((3, 1 << n_pow2)).astype(np.float32) * 100
        im = rng.standard_normal((3, 1 << n_pow2)).astype(np.float32) * 100
        want_r, want_i = re.copy(), im.copy()
        monkey = _phasecorr.compiled
        try:
            _phasecorr.compiled = lambda: False
            _phasecorr._butterflies(want_r, want_i, n_pow2, inverse)
        finally:
            _phasecorr.compiled = monkey
        _phasecorr._butterfly_rows.__wrapped__(re, im, n_pow2, inverse, cos, sin)
        assert np.array_equal(re, want_r) and np.array_equal(im, want_i), (n_pow2, inverse)


@pytest.fixture(scope="module")
def firmware_phasecorrelate(tmp_path_factory):
    yuv = firmware_source(f"{IMG_DIR}/yuv_tab.c")  # the full build's 196608-entry table
    yuv = yuv[yuv.index("const int8_t yuv_table[196608]"):]
    yuv = yuv[:yuv.index("};") + 2] + "\n"
    source = (imlib_shim() + _EXTRA + yuv + strip_includes(firmware_source(f"{IMG_DIR}/sincos_tab.c"))
              + strip_includes(firmware_source(f"{IMG_DIR}/include/omv_fft.h")) + strip_includes(firmware_source(f"{IMG_DIR}/fft.c")) + strip_includes(firmware_source(f"{IMG_DIR}/phasecorrelation.c")) + _MAIN)
    exe = build(tmp_path_factory.mktemp("phasecorr"), "phasecorrelate", source)

    def call(a: np.ndarray, b: np.ndarray, roi0, roi1, logpolar: bool, fix: bool) -> list[np.float32]:
        """a, b: uint8 (grayscale) or uint16 (RGB565 as the K210 stores it) pixels."""
        head = [a.shape[1], a.shape[0], b.shape[1], b.shape[0], *roi0, *roi1, int(logpolar), int(fix),
                a.itemsize, b.itemsize]
        text = run(exe, (" ".join(map(str, head)) + "\n").encode() + a.tobytes() + b.tobytes())
        return [np.frombuffer(struct.pack("<I", int(v, 16)), np.float32)[0] for v in text.split()]

    return call


def _scene(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A smooth random texture: blurred noise plus a few bright blobs."""
    import cv2

    base = cv2.GaussianBlur((rng.random((h, w)) * 255).astype(np.uint8), (9, 9), 2.5).astype(np.float64)
    for _ in range(4):
        cy, cx, r = rng.integers(0, h), rng.integers(0, w), rng.integers(3, 10)
        yy, xx = np.mgrid[0:h, 0:w]
        base += 120 * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r))
    return np.clip(base, 0, 255).astype(np.uint8)


def _gray(a: np.ndarray):
    img = image.Image(size=(a.shape[1], a.shape[0])).to_grayscale(True)
    img._pix[...] = a
    return img


def _bits(v) -> int:
    return int(np.float32(v).view(np.uint32))


@needs_firmware_c
@pytest.mark.parametrize("mode", ["translation", "logpolar", "fix_rotation_scale"])
def test_find_displacement_equals_the_firmwares_float32_fft(firmware_phasecorrelate, mode, jit):
    import cv2

    rng = np.random.default_rng({"translation": 1, "logpolar": 2, "fix_rotation_scale": 3}[mode])
    logpolar, fix = mode == "logpolar", mode == "fix_rotation_scale"
    for trial in range(6):
        h, w = [(64, 64), (48, 80), (60, 100), (40, 40), (120, 160), (33, 57)][trial]
        scene = _scene(rng, h + 20, w + 20)
        a = np.ascontiguousarray(scene[10:10 + h, 10:10 + w])
        if logpolar:  # rotated and scaled about the centre
            m = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-20, 20)), float(rng.uniform(0.9, 1.1)))
            b = cv2.warpAffine(a, m, (w, h), borderMode=cv2.BORDER_REFLECT)
        else:  # shifted by a few pixels
            dy, dx = rng.integers(-6, 7, size=2)
            b = np.ascontiguousarray(scene[10 + dy:10 + dy + h, 10 + dx:10 + dx + w])
        roi0 = roi1 = (0, 0, w, h)
        if trial == 3 and not fix:  # ROIs inside larger images, at different places
            big_a, big_b = np.zeros((h + 9, w + 5), np.uint8), np.zeros((h + 3, w + 11), np.uint8)
            big_a[4:4 + h, 2:2 + w], big_b[1:1 + h, 7:7 + w] = a, b
            a, b, roi0, roi1 = big_a, big_b, (2, 4, w, h), (7, 1, w, h)
        expected = firmware_phasecorrelate(a, b, roi0, roi1, logpolar, fix)
        seen = []

        def identity(pixels, z_rotation, zoom):
            seen.extend([z_rotation, zoom])
            return pixels

        got = _phasecorr.phasecorrelate(_gray(a), _gray(b), roi0, roi1, logpolar, fix, identity)
        assert [_bits(v) for v in got] == [_bits(v) for v in expected[:5]], (trial, got, expected)
        if fix:
            assert [_bits(v) for v in seen] == [_bits(v) for v in expected[5:]]


def _rgb_scene(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """Three of :func:`_scene`'s textures as the R, G, B planes: a colour picture with edges and blobs."""
    return np.stack([_scene(rng, h, w) for _ in range(3)], axis=-1)


@needs_firmware_c
@pytest.mark.parametrize("mode", ["translation", "logpolar", "fix_rotation_scale"])
def test_rgb565_correlates_the_signed_luma_in_a_byte(firmware_phasecorrelate, mode, jit):
    """fft2d_run reads an RGB565 pixel as ``yuv_table[pixel * 3]``: the signed Y (gray - 128) stored
    into a uint8_t, i.e. the brightness wrapped half-way round. RGB565 images (and one against a
    grayscale template) give the firmware's five floats bit for bit."""
    import cv2

    rng = np.random.default_rng({"translation": 11, "logpolar": 12, "fix_rotation_scale": 13}[mode])
    logpolar, fix = mode == "logpolar", mode == "fix_rotation_scale"
    for trial in range(4):
        h, w = [(64, 64), (48, 80), (40, 40), (60, 100)][trial]
        scene = _rgb_scene(rng, h + 20, w + 20)
        a = np.ascontiguousarray(scene[10:10 + h, 10:10 + w])
        if logpolar:
            m = cv2.getRotationMatrix2D((w / 2, h / 2), float(rng.uniform(-20, 20)), float(rng.uniform(0.9, 1.1)))
            b = cv2.warpAffine(a, m, (w, h), borderMode=cv2.BORDER_REFLECT)
        else:
            dy, dx = rng.integers(-6, 7, size=2)
            b = np.ascontiguousarray(scene[10 + dy:10 + dy + h, 10 + dx:10 + dx + w])
        img_a = image.Image._from_rgb888(a)
        img_b = image.Image._from_rgb888(b, image.GRAYSCALE if trial == 3 else image.RGB565)
        roi = (0, 0, w, h)
        expected = firmware_phasecorrelate(img_a._pix, img_b._pix, roi, roi, logpolar, fix)
        got = _phasecorr.phasecorrelate(img_a, img_b, roi, roi, logpolar, fix, lambda pixels, z, zoom: pixels)
        assert [_bits(v) for v in got] == [_bits(v) for v in expected[:5]], (trial, got, expected)


def test_fft_tables_are_the_firmwares():
    """Our generated 512-entry cos/sin tables equal fft.c's, when the mirror is here to read them."""
    from firmware_c import have_firmware_c

    cos, sin = _phasecorr.fft_tables()
    assert cos[0] == 1 and sin[256] == 1 and cos[256] == 0 and abs(cos[85] - math.cos(math.pi * 85 / 512)) < 1e-6
    if not have_firmware_c():
        pytest.skip("the MaixPy-v1 mirror is only on developer machines")
    import re

    text = firmware_source(f"{IMG_DIR}/fft.c")
    for name, ours in (("fft_cos_table", cos), ("fft_sin_table", sin)):
        body = re.search(name + r"\[512\] = \{(.*?)\};", text, re.S).group(1)
        theirs = np.array([float(v.strip().rstrip("f")) for v in body.replace("\n", " ").split(",") if v.strip()], np.float32)
        assert np.array_equal(theirs, ours)


def test_find_displacement_arguments_and_result():
    rng = np.random.default_rng(4)
    scene = _scene(rng, 64, 64)
    a, b = _gray(scene), _gray(np.roll(np.roll(scene, 3, axis=0), -4, axis=1))  # 4 left, 3 down (periodic)
    d = a.find_displacement(b)
    assert (round(d.x_translation(), 3), round(d.y_translation(), 3)) == (4.0, 3.0) and d.response() > 0.99
    assert d.rotation() == 0.0 and d.scale() == 0.0  # rotation and scale are only estimated with logpolar/fix
    assert d[0] == d.x_translation() and len(d[0:5]) == 5
    assert repr(d).startswith('{"x_translation":')
    with pytest.raises(OSError, match=r"ROI\(w,h\) != TEMPLATE_ROI\(w,h\)"):
        a.find_displacement(b, roi=(0, 0, 32, 32))
    assert a.find_displacement(b, roi=(0, 0, 32, 32), template_roi=(0, 0, 32, 32)).response() > 0
    with pytest.raises(TypeError):
        a.find_displacement("b")
    lp = a.find_displacement(a, logpolar=True)
    assert lp.x_translation() == 0.0 and abs(lp.rotation()) < 1e-6 and abs(lp.scale() - 1) < 1e-6  # the same image
    fixed = a.find_displacement(b, fix_rotation_scale=True)
    assert math.isfinite(fixed.x_translation()) and math.isfinite(fixed.scale())
    rgb = image.Image(size=(64, 64))
    rgb._pix[...] = 0
    assert rgb.find_displacement(rgb).response() == 0.0  # a flat image: no peak, the noise filter's zeros
