"""find_edges: Canny against edge.c (compiled from the mirror) and the K210's KPU blur from its C.

``imlib_edge_canny`` is compiled with ``imlib_sepconv3`` (the KPU convolution, which cannot run on
a PC) replaced by the identity on both sides, so Sobel, binning, hysteresis and suppression are
compared exactly; the KPU blur itself is checked against values worked out from sipeed_conv.c's
quantisation (the 1/16 is never applied, sums saturate at 255, rows are read 64-byte aligned).
"""

from __future__ import annotations

import numpy as np
import pytest

from firmware_c import FORMS, IMG_DIR, both_forms, build, firmware_source, imlib_shim, needs_firmware_c, run, strip_includes
from maixemu.firmware import image
from maixemu.firmware.image import _edges

_EXTRA = r"""
#define IMLIB_ENABLE_BINARY_OPS
typedef struct { int LMin, LMax, AMin, AMax, BMin, BMax; } color_thresholds_list_lnk_data_t;
static const int kernel_high_pass_3[9] = { 0 };
static const int8_t kernel_gauss_3[9] = { 0 };
static void imlib_morph(image_t *a, int b, const int *c, float d, float e, bool f, int g, bool h, void *i) { }
static void imlib_binary(image_t *a, image_t *b, list_t *c, bool d, bool e, void *f) { }
static void imlib_erode(image_t *a, int b, int c, void *d) { }
static void list_free(list_t *l) { }
static void imlib_sepconv3(image_t *img, const int8_t *krn, const float m, const int b) { }  /* the KPU */
"""

_MAIN = r"""
int main(void) {
    int w, h, rx, ry, rw, rh, lo, hi;
    if (scanf("%d %d %d %d %d %d %d %d", &w, &h, &rx, &ry, &rw, &rh, &lo, &hi) != 8) return 2;
    getchar();
    image_t img = { w, h, IMAGE_BPP_GRAYSCALE, malloc(w * h) };
    if (fread(img.data, 1, w * h, stdin) != (size_t) (w * h)) return 3;
    rectangle_t roi = { rx, ry, rw, rh };
    imlib_edge_canny(&img, &roi, lo, hi);
    fwrite(img.data, 1, w * h, stdout);
    return 0;
}
"""


@pytest.fixture(scope="module")
def firmware_canny(tmp_path_factory):
    source = imlib_shim() + _EXTRA + strip_includes(firmware_source(f"{IMG_DIR}/edge.c")) + _MAIN
    exe = build(tmp_path_factory.mktemp("edge"), "canny", source)

    def call(pix, roi, lo, hi):
        import subprocess

        h, w = pix.shape
        out = subprocess.run([str(exe)], input=f"{w} {h} {' '.join(map(str, roi))} {lo} {hi}\n".encode() + pix.tobytes(),
                             capture_output=True, check=True).stdout
        return np.frombuffer(out, np.uint8).reshape(h, w)

    return call


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    """``_canny_roi`` (compiled) and the array form of ``_edges``."""
    return both_forms(request, monkeypatch, _edges)


@needs_firmware_c
def test_canny_after_the_blur_equals_edge_c(firmware_canny, monkeypatch, jit):
    import cv2

    monkeypatch.setattr(_edges, "kpu_blur", lambda pix: pix.copy())
    rng = np.random.default_rng(3)
    for trial in range(6):
        h, w = [(40, 60), (64, 64), (30, 90), (120, 160), (17, 23), (48, 64)][trial]
        a = cv2.GaussianBlur((rng.random((h, w)) * 255).astype(np.uint8), (5, 5), 1.5)
        cv2.rectangle(a, (w // 4, h // 4), (w // 2, h // 2), int(rng.integers(0, 256)), -1)
        cv2.circle(a, (2 * w // 3, h // 2), h // 5, int(rng.integers(0, 256)), 2)
        roi = (0, 0, w, h) if trial % 2 == 0 else (3, 2, w - 7, h - 5)
        lo, hi = [(100, 200), (20, 60), (50, 100), (10, 300), (0, 0), (200, 400)][trial]
        assert np.array_equal(_edges.canny(a, roi, lo, hi), firmware_canny(a, roi, lo, hi)), trial


#: a 3x3 neighbourhood whose Sobel gradient is (vx, vy) = (-544, 198): 159.99998 degrees, where
#: numpy's float32 arctan2 on AVX-512 (SVML) says 160 (bin 0) and libm's atan2f 159 (bin 135)
_NEAR_160 = np.array([[0, 82, 34], [0, 128, 255], [0, 0, 0]], np.uint8)


@needs_firmware_c
def test_canny_directions_are_libm_atan2f_not_numpy_arctan2(firmware_canny, monkeypatch, jit):
    monkeypatch.setattr(_edges, "kpu_blur", lambda pix: pix.copy())
    rng = np.random.default_rng(11)
    for trial in range(40):
        a = (rng.random((12, 12)) * rng.integers(1, 256)).astype(np.uint8)
        y, x = (int(v) for v in rng.integers(1, 8, 2))
        a[y:y + 3, x:x + 3] = _NEAR_160
        lo, hi = int(rng.integers(0, 300)), int(rng.integers(100, 600))
        assert np.array_equal(_edges.canny(a, (0, 0, 12, 12), lo, hi), firmware_canny(a, (0, 0, 12, 12), lo, hi)), trial


def test_canny_kernels_python_twin_equals_the_array_form():
    rng = np.random.default_rng(8)
    for trial in range(4):
        a = (rng.random((14, 19)) * 255).astype(np.uint8)
        a[3:6, 4:7] = _NEAR_160
        roi = [(0, 0, 19, 14), (2, 1, 12, 10), (0, 0, 2, 14), (5, 5, 3, 3)][trial]
        out = a.copy()
        rh, rw = roi[3], roi[2]
        _edges._canny_roi.__wrapped__(out, *roi, 40, 120, _edges.degree_table(), np.zeros((rh, rw), np.int32),
                                      np.zeros((rh, rw), np.int32))
        assert np.array_equal(out, _edges._canny_arrays(a, roi, 40, 120)), trial


def test_truncated_degrees_are_libm_atan2f():
    from maixemu.firmware.image import _fmath, _gradient_angle

    rng = np.random.default_rng(2)
    y = np.concatenate([[198, -198, 0, 0, 7, -1020], rng.integers(-1020, 1021, 3000)])
    x = np.concatenate([[-544, -544, -5, 5, 7, -1020], rng.integers(-1020, 1021, 3000)])
    want = [int(abs(_fmath.atan2f(a, b) * np.float32(180.0) / np.float32(np.pi))) for a, b in zip(y.tolist(), x.tolist())]
    assert _gradient_angle.truncated_degrees(y, x).tolist() == want
    with pytest.raises(ValueError, match="1020"):
        _gradient_angle.truncated_degrees(np.array([1021]), np.array([0]))


def test_kpu_blur_sums_without_the_sixteenth_and_saturates():
    flat = np.full((8, 64), 10, np.uint8)
    out = _edges.kpu_blur(flat)
    assert out[3, 10] == 160 and out[0, 0] == 90 and out[0, 10] == 120  # 16v, 9v, 12v (zero padding)
    assert _edges.kpu_blur(np.full((8, 64), 16, np.uint8))[3, 10] == 255  # 256 saturates
    skew = _edges.kpu_blur(np.full((8, 60), 10, np.uint8))  # rows read 64 bytes apart
    assert skew[3, 10] == 160 and skew[7, 40] < 120  # the last KPU row runs past the image: zeros
    assert skew[7, 5] == 120


def test_find_edges_modes():
    e = image.Image(size=(64, 32)).to_grayscale(True)
    e.draw_rectangle(10, 8, 30, 16, color=20, fill=True)
    out = e.copy().find_edges(image.EDGE_CANNY, roi=(4, 4, 50, 24))
    assert out.get_pixel(0, 0) == 0 and out.get_pixel(60, 30) == 0  # outside the ROI: the blurred pixels
    assert (out._pix == 255).sum() > 40 and out.get_pixel(20, 14) == 0  # the outline only
    s = image.Image(size=(32, 16)).to_grayscale(True)
    s.draw_rectangle(8, 4, 12, 8, color=255, fill=True)
    s.find_edges(image.EDGE_SIMPLE, threshold=(100, 255))
    assert set(np.unique(s._pix)) <= {0, 255}
    with pytest.raises(OSError, match="Image format is not supported!"):
        image.Image(size=(4, 4)).find_edges(image.EDGE_CANNY)
