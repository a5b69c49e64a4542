"""find_keypoints against the firmware's orb.c + fast.c + agast.c + array.c (compiled from the mirror).

The KPU blur (``imlib_sepconv3`` on the K210) cannot run on a PC: both sides skip it here (the C gets
an identity, ours is patched the same way); the blur itself is tested with find_edges. Everything
else — scaling, both corner detectors with their scores and suppression, angles, descriptors, the
quicksort — must give the same keypoints, in the same order, with the same 32 descriptor bytes.
The sampling pattern read out of OpenCV is checked against the firmware's table.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

from firmware_c import IMG_DIR, build, firmware_source, have_firmware_c, imlib_shim, needs_firmware_c, shared_gray, strip_includes
from maixemu.firmware import image
from maixemu.firmware.image import _edges, _orb

_EXTRA = r"""
#define MP_STACK_CHECK()
#define IM_MIN(a, b) ((a) < (b) ? (a) : (b))
#define IMLIB_ENABLE_FAST
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define byte uint8_t
typedef enum { CORNER_FAST, CORNER_AGAST } corner_detector_t;
typedef struct { int w; int h; } size_unused_t;
static void *xalloc0(size_t n) { return calloc(1, n); }
static void *xrealloc(void *p, size_t n) { return realloc(p, n); }
static void xfree(void *p) { free(p); }
typedef struct { size_t free; } gc_info_t;
static void gc_info(gc_info_t *i) { i->free = 1 << 30; }
static void gc_collect(void) { }
typedef struct kp { uint16_t x, y, score, octave, angle, matched; uint8_t desc[32]; } kp_t;
extern const float sin_table[360];
extern const float cos_table[360];
static const int8_t kernel_gauss_3[9] = { 1, 2, 1, 2, 4, 2, 1, 2, 1 };
static void imlib_sepconv3(image_t *img, const int8_t *krn, const float m, const int b) { }  /* the KPU */
#define IM_TO_GS_PIXEL(img, x, y) ((img)->data[((y) * (img)->w) + (x)])
"""

_MAIN = r"""
int main(void) {
    int w, h, rx, ry, rw, rh, thr, norm, maxk, det; float sf;
    if (scanf("%d %d %d %d %d %d %d %d %f %d %d", &w, &h, &rx, &ry, &rw, &rh, &thr, &norm, &sf, &maxk, &det) != 11) return 2;
    getchar();
    image_t img = { w, h, IMAGE_BPP_GRAYSCALE, malloc(w * h) };
    if (fread(img.data, 1, w * h, stdin) != (size_t) (w * h)) return 3;
    rectangle_t roi = { rx, ry, rw, rh };
    array_t *k = orb_find_keypoints(&img, norm, thr, sf, maxk, det, &roi);
    for (int i = 0; i < array_length(k); i++) {
        kp_t *p = array_at(k, i);
        printf("%d %d %d %d %d ", p->x, p->y, p->score, p->octave, p->angle);
        for (int j = 0; j < 32; j++) printf("%02x", p->desc[j]);
        printf("\n");
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def firmware_orb(tmp_path_factory):
    parts = [imlib_shim(), strip_includes(firmware_source("components/micropython/port/src/omv/include/array.h")), _EXTRA,
             strip_includes(firmware_source("components/micropython/port/src/omv/array.c")),
             strip_includes(firmware_source(f"{IMG_DIR}/sincos_tab.c"))]
    for name in ("fast.c", "agast.c", "orb.c"):
        text = strip_includes(firmware_source(f"{IMG_DIR}/{name}"))
        if name != "orb.c":  # both define the same static helpers
            text = text.replace("nonmax_suppression", f"nonmax_suppression_{name[:-2]}") \
                       .replace("alloc_keypoint", f"alloc_keypoint_{name[:-2]}").replace("corner_t", f"{name[:-2]}_corner_t")
        else:
            text = text[:text.index("// This is a modifed popcount")] + "\n#endif\n"  # up to the matcher
        parts.append(text)
    exe = build(tmp_path_factory.mktemp("orb"), "orb", "\n".join(parts) + _MAIN)

    def call(gray, roi, thr, norm, sf, maxk, det):
        h, w = gray.shape
        head = f"{w} {h} {roi[0]} {roi[1]} {roi[2]} {roi[3]} {thr} {int(norm)} {sf} {maxk} {det}\n".encode()
        out = subprocess.run([str(exe)], input=head + gray.tobytes(), capture_output=True, check=True, timeout=300)
        rows = []
        for line in out.stdout.decode().splitlines():
            *nums, desc = line.split()
            rows.append((*map(int, nums), bytes.fromhex(desc)))
        return rows

    return call



@needs_firmware_c
@pytest.mark.parametrize("case", [
    ("face_group.jpg", (320, 240), None, 20, False, 1.5, 100, 1),
    ("face_group.jpg", (320, 240), None, 10, False, 1.5, 60, 0),
    ("face_21.jpg", (320, 240), (20, 10, 260, 200), 15, True, 1.5, 200, 1),
    ("face_21.jpg", (240, 200), None, 30, False, 1.2, 500, 0),
])
def test_find_keypoints_equals_orb_c(firmware_orb, monkeypatch, case):
    name, size, roi, thr, norm, sf, maxk, det = case
    monkeypatch.setattr(_edges, "kpu_blur", lambda pix: pix.copy())
    gray = shared_gray(name, size)
    roi = roi or (0, 0, size[0], size[1])
    expected = firmware_orb(gray, roi, thr, norm, sf, maxk, det)
    img = image.Image(size=size).to_grayscale(True)
    img._pix[...] = gray
    kp = img.find_keypoints(roi=roi, threshold=thr, normalized=norm, scale_factor=sf, max_keypoints=maxk,
                            corner_detector=det)
    got = [] if kp is None else [(k.x, k.y, k.score, k.octave, k.angle, k.desc) for k in kp._kpts]
    assert len(expected) > 10 and got == expected


def test_the_sampling_pattern_read_from_opencv_is_the_firmwares():
    pts = _orb.sampling_pattern()
    assert pts.shape == (512, 2) and pts[:4].tolist() == [[8, -3], [9, 5], [4, 2], [7, -12]]
    assert _orb.u_max()[:17] == [15, 15, 15, 15, 14, 14, 14, 13, 13, 12, 11, 10, 9, 8, 6, 3, 0]
    if not have_firmware_c():
        pytest.skip("the MaixPy-v1 mirror is only on developer machines")
    text = firmware_source(f"{IMG_DIR}/orb.c")
    body = text[text.index("sample_pattern[256*4] = {"):]
    body = re.sub(r"/\*.*?\*/", "", body[:body.index("};")].split("{", 1)[1])
    table = [int(v) for v in body.replace("\n", " ").split(",") if v.strip()]
    assert pts.ravel().tolist() == table


def test_find_keypoints_arguments():
    flat = image.Image(size=(160, 120)).to_grayscale(True)
    assert flat.find_keypoints() is None  # 120 - 2*31 leaves no room for a patch: no octave runs
    big = image.Image(size=(200, 200)).to_grayscale(True)
    assert big.find_keypoints() is None  # a flat image has no corners
    with pytest.raises(OSError, match="scale_factor"):
        big.find_keypoints(scale_factor=1.0)
