"""find_features against the firmware's haar.c + integral_mw.c + rectangle_merge (compiled from the
mirror) with its built-in cascades from cascade.h; and our cascades, generated from OpenCV's XML,
against cascade.h's arrays."""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from firmware_c import ARRAY_SHIM, IMG_DIR, build, firmware_source, have_firmware_c, imlib_shim, needs_firmware_c, shared_gray, strip_includes
from maixemu.firmware import image
from maixemu.firmware.image import _color, _haar

_EXTRA = r"""
struct size { int w; int h; };
typedef struct { int w; int h; int y_offs; int x_ratio; int y_ratio; uint32_t **data; uint32_t **swap; } mw_image_t;
typedef struct cascade {
    int std; int step; float threshold; float scale_factor; int n_stages; int n_features; int n_rectangles;
    struct size window; image_t *img; mw_image_t *sum; mw_image_t *ssq;
    uint8_t *stages_array; int16_t *stages_thresh_array; int16_t *tree_thresh_array; int16_t *alpha1_array;
    int16_t *alpha2_array; int8_t *num_rectangles_array; int8_t *weights_array; int8_t *rectangles_array;
} cascade_t;
#define IM_TO_GS_PIXEL(img, x, y) ((img)->data[((y) * (img)->w) + (x)])
void imlib_integral_mw_alloc(mw_image_t *sum, int w, int h);
void imlib_integral_mw_free(mw_image_t *sum);
void imlib_integral_mw_scale(rectangle_t *roi, mw_image_t *sum, int w, int h);
void imlib_integral_mw_ss(image_t *src, mw_image_t *sum, mw_image_t *ssq, rectangle_t *roi);
void imlib_integral_mw_shift_ss(image_t *src, mw_image_t *sum, mw_image_t *ssq, rectangle_t *roi, int n);
long imlib_integral_mw_lookup(mw_image_t *sum, int x, int y, int w, int h);
array_t *rectangle_merge(array_t *rectangles);
"""

_MAIN = r"""
int main(void) {
    int w, h, rx, ry, rw, rh, which, stages; float thr, sf;
    if (scanf("%d %d %d %d %d %d %d %d %f %f", &w, &h, &rx, &ry, &rw, &rh, &which, &stages, &thr, &sf) != 10) return 2;
    getchar();
    image_t img = { w, h, IMAGE_BPP_GRAYSCALE, malloc(w * h) };
    if (fread(img.data, 1, w * h, stdin) != (size_t) (w * h)) return 3;
    cascade_t c;
    if (which == 0) {
        c.window.w = frontalface_window_w; c.window.h = frontalface_window_h; c.n_stages = frontalface_n_stages;
        c.stages_array = (uint8_t *) frontalface_stages_array; c.stages_thresh_array = (int16_t *) frontalface_stages_thresh_array;
        c.tree_thresh_array = (int16_t *) frontalface_tree_thresh_array; c.alpha1_array = (int16_t *) frontalface_alpha1_array;
        c.alpha2_array = (int16_t *) frontalface_alpha2_array; c.num_rectangles_array = (int8_t *) frontalface_num_rectangles_array;
        c.weights_array = (int8_t *) frontalface_weights_array; c.rectangles_array = (int8_t *) frontalface_rectangles_array;
    } else {
        c.window.w = eye_window_w; c.window.h = eye_window_h; c.n_stages = eye_n_stages;
        c.stages_array = (uint8_t *) eye_stages_array; c.stages_thresh_array = (int16_t *) eye_stages_thresh_array;
        c.tree_thresh_array = (int16_t *) eye_tree_thresh_array; c.alpha1_array = (int16_t *) eye_alpha1_array;
        c.alpha2_array = (int16_t *) eye_alpha2_array; c.num_rectangles_array = (int8_t *) eye_num_rectangles_array;
        c.weights_array = (int8_t *) eye_weights_array; c.rectangles_array = (int8_t *) eye_rectangles_array;
    }
    if (stages > 0 && stages < c.n_stages) c.n_stages = stages;
    c.threshold = thr; c.scale_factor = sf;
    rectangle_t roi = { rx, ry, rw, rh };
    array_t *o = imlib_detect_objects(&img, &c, &roi);
    for (int i = 0; i < array_length(o); i++) { rectangle_t *r = array_at(o, i); printf("%d %d %d %d\n", r->x, r->y, r->w, r->h); }
    return 0;
}
"""


def _function(text: str, signature: str) -> str:
    start = text.index(signature)
    end = text.index("\n}\n", start) + 3
    return text[start:end]


@pytest.fixture(scope="module")
def firmware_detect(tmp_path_factory):
    haar = strip_includes(firmware_source(f"{IMG_DIR}/haar.c"))
    haar = haar[:haar.index("int imlib_load_cascade_from_file")].replace("#ifndef OMV_MINIMUM", "")
    mw = strip_includes(firmware_source(f"{IMG_DIR}/integral_mw.c"))
    rect_c = firmware_source(f"{IMG_DIR}/rectangle.c")
    merge = "".join(_function(rect_c, sig) for sig in ("bool rectangle_intersects(", "static void rectangle_add(",
                                                          "static void rectangle_div(", "array_t *rectangle_merge("))
    cascades = strip_includes(firmware_source(f"{IMG_DIR}/include/cascade.h"))
    exe = build(tmp_path_factory.mktemp("haar"), "haar", imlib_shim() + ARRAY_SHIM + _EXTRA + cascades + mw + merge + haar + _MAIN)

    def call(gray, roi, which, stages, thr, sf):
        h, w = gray.shape
        head = f"{w} {h} {roi[0]} {roi[1]} {roi[2]} {roi[3]} {which} {stages} {thr} {sf}\n".encode()
        out = subprocess.run([str(exe)], input=head + gray.tobytes(), capture_output=True, check=True, timeout=300)
        return [tuple(map(int, line.split())) for line in out.stdout.decode().splitlines()]

    return call



@needs_firmware_c
@pytest.mark.parametrize("case", [
    ("face_21.jpg", (320, 240), None, 0, 25, 0.75, 1.25),
    ("face_21.jpg", (160, 120), None, 0, 25, 0.5, 1.5),
    ("face_group.jpg", (320, 240), None, 0, 10, 0.5, 1.25),
    ("face_group.jpg", (320, 240), (40, 20, 200, 180), 0, 25, 0.6, 1.35),
    ("face_21.jpg", (320, 240), None, 1, 24, 0.5, 1.5),
    ("face_group.jpg", (160, 120), (10, 10, 140, 100), 1, 12, 0.4, 1.2),
])
def test_find_features_equals_the_firmwares_detector(firmware_detect, case):
    name, size, roi, which, stages, thr, sf = case
    gray = shared_gray(name, size)
    roi = roi or (0, 0, size[0], size[1])
    img = image.Image(size=size).to_grayscale(True)
    img._pix[...] = gray
    cascade = image.HaarCascade("frontalface" if which == 0 else "eye", stages=stages)
    ours = img.find_features(cascade, threshold=thr, scale_factor=sf, roi=roi)
    assert ours == firmware_detect(gray, roi, which, stages, thr, sf)


def test_generated_cascades_equal_the_firmwares_header():
    ff = _haar.builtin("frontalface")
    assert (ff.window, ff.n_stages, ff.n_features, ff.n_rectangles) == ((24, 24), 25, 2913, 6383)
    assert int(ff.stage_thresh[0]) == -1290 and int(ff.tree_thresh[0]) == -129  # -5.04255 * 256, -0.0315 * 4096
    if not have_firmware_c():
        pytest.skip("the MaixPy-v1 mirror is only on developer machines")
    text = firmware_source(f"{IMG_DIR}/include/cascade.h")

    def arr(name):
        body = re.search(name + r"\[\]\s*=\s*\{(.*?)\};", text, re.S).group(1)
        return [int(v) for v in body.replace("\n", " ").split(",") if v.strip()]

    for prefix in ("frontalface", "eye"):
        c = _haar.builtin(prefix)
        for ours, name in ((c.stages, "stages_array"), (c.stage_thresh, "stages_thresh_array"),
                           (c.tree_thresh, "tree_thresh_array"), (c.alpha1, "alpha1_array"), (c.alpha2, "alpha2_array"),
                           (c.num_rects, "num_rectangles_array"), (c.weights, "weights_array"),
                           (c.rects.ravel(), "rectangles_array")):
            assert list(ours) == arr(f"{prefix}_{name}"), (prefix, name)


def test_cascade_object_and_arguments(sd_card):
    import struct

    c = image.HaarCascade("eye", stages=10)
    full = c._cascade  # the print shows the whole cascade's features/rectangles, the limited stages
    assert repr(c) == f'{{"width":20, "height":20, "n_stages":10, "n_features":{full.n_features}, "n_rectangles":{full.n_rectangles}}}'
    assert full.n_features == int(full.stages.sum()) == 1066 and full.n_rectangles == int(full.num_rects.sum())
    assert repr(image.HaarCascade("eye", stages=99)).count('"n_stages":24') == 1
    img = image.Image(size=(40, 30)).to_grayscale(True)
    with pytest.raises(OSError, match="smaller than detector window"):
        img.find_features(image.HaarCascade("frontalface"), roi=(0, 0, 24, 30))
    assert img.find_features(c) == []  # flat: every window fails the variance test
    with pytest.raises(TypeError):
        img.find_features("eye")
    # an OpenMV binary cascade on the card: one stage, one feature, one rectangle, always true
    data = struct.pack("<iii", 4, 4, 1) + bytes([1]) + struct.pack("<h", -100) + struct.pack("<hhh", -32000, 10, 10)
    data += struct.pack("<b", 1) + struct.pack("<b", 1) + struct.pack("<4b", 0, 0, 2, 2)
    (sd_card / "tiny.cascade").write_bytes(data)
    tiny = image.HaarCascade("tiny.cascade")
    assert repr(tiny) == '{"width":4, "height":4, "n_stages":1, "n_features":1, "n_rectangles":1}'
    noisy = image.Image(size=(12, 10)).to_grayscale(True)
    noisy._pix[...] = (np.indices((10, 12)).sum(axis=0) % 2) * 255
    assert len(noisy.find_features(tiny, scale_factor=2.0)) >= 1
