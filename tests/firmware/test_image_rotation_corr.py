"""rotation_corr against apriltag.c's imlib_rotation_corr built as the K210 build computes it: with
fused multiply-adds.

The firmware is built for ``-march=rv64imafc`` with ``-ffast-math`` and GCC's default contraction,
so ``a * b + c`` becomes ``fmadd.s`` (riscv64 GCC 12 with the firmware's flags, run under
qemu-riscv64, gives exactly the pictures of the x86 build with ``-mfma -ffp-contract=fast`` on 120
random cases; the build without contraction differs on 42 of them). A rotation by 180 degrees puts
most source coordinates on integers, where the last bit decides the truncation: the non-fused build
moves a third to a half of the pixels of some odd-sized images by one, the fused one -- the
device's arithmetic, which ``_rotation`` models -- none.
"""

from __future__ import annotations

import math
import platform
import subprocess

import numpy as np
import pytest

from firmware_c import _APRILTAG_SHIM, IMG_DIR, build, firmware_source, imlib_shim, needs_firmware_c
from maixemu.firmware import image

F = np.float32


def _fma_flags() -> tuple[str, ...] | None:
    """Compiler flags for fused multiply-adds this machine can run, or None."""
    machine = platform.machine().lower()
    if machine in ("aarch64", "arm64"):
        return ("-ffp-contract=fast",)
    if machine in ("x86_64", "amd64"):
        try:
            with open("/proc/cpuinfo") as f:
                if " fma " in f.read().replace("\n", " "):
                    return ("-mfma", "-ffp-contract=fast")
        except OSError:
            return None
    return None


_DRIVER = r"""
static float rdf(void) { unsigned u; if (scanf("%x", &u) != 1) exit(3); float f; memcpy(&f, &u, 4); return f; }
int main(void) {
    int w, h;
    while (scanf("%d %d", &w, &h) == 2) {
        float p[7]; for (int i = 0; i < 7; i++) p[i] = rdf();
        uint8_t *buf = malloc(w * h);
        for (int i = 0; i < w * h; i++) { int v; if (scanf("%d", &v) != 1) return 2; buf[i] = v; }
        image_t img; img.w = w; img.h = h; img.bpp = IMAGE_BPP_GRAYSCALE; img.data = buf;
        imlib_rotation_corr(&img, p[0], p[1], p[2], p[3], p[4], p[5], p[6], NULL);
        for (int i = 0; i < w * h; i++) printf("%d ", buf[i]);
        printf("\n");
        free(buf);
    }
    return 0;
}
"""


def _hex(values) -> str:
    return " ".join("%08x" % v for v in np.asarray(values, F).view(np.uint32))


@needs_firmware_c
@pytest.mark.skipif(_fma_flags() is None, reason="this CPU cannot run fused multiply-add code")
def test_rotation_corr_equals_the_fused_build(tmp_path):
    text = firmware_source(f"{IMG_DIR}/apriltag.c")
    text = text.replace('#include "imlib.h"', "").replace("#ifdef IMLIB_ENABLE_APRILTAGS", "", 1)
    text = text[:text.rindex("#endif")].replace("#ifdef IMLIB_ENABLE_FIND_RECTS", "#if 0")
    text = text.replace("#ifdef IMLIB_ENABLE_ROTATION_CORR", "").replace("#endif //IMLIB_ENABLE_ROTATION_CORR", "")
    shim = imlib_shim("find_apriltags_list_lnk_data") + _APRILTAG_SHIM + r"""
#define IMAGE_PUT_GRAYSCALE_PIXEL_FAST(row, x, v) ((row)[x] = (v))
#define IMAGE_PUT_BINARY_PIXEL_FAST(row, x, v) ((void) 0)
#define IMAGE_PUT_RGB565_PIXEL_FAST(row, x, v) ((void) 0)
static size_t image_size(image_t *img) { return img->w * img->h * (img->bpp == IMAGE_BPP_RGB565 ? 2 : 1); }
"""
    exe = build(tmp_path, "rotation_corr", shim + text + _DRIVER, _fma_flags())
    rng = np.random.default_rng(6)
    cases = [((w, h), (0, 0, zr, 0, 0, 1, 60)) for w, h in ((31, 23), (33, 25), (65, 49), (161, 121), (32, 24))
             for zr in (180, -180, 90, 0)]
    cases += [((int(rng.integers(8, 90)), int(rng.integers(8, 70))),
               (0, 0, float(rng.uniform(-180, 180)), float(rng.uniform(-4, 4)), float(rng.uniform(-4, 4)),
                float(rng.uniform(0.6, 1.6)), float(rng.uniform(30, 120)))) for _ in range(20)]
    lines, ours = [], []
    for (w, h), params in cases:
        g = rng.integers(0, 256, (h, w)).astype(np.uint8)
        radians = [F(F(F(v) * F(math.pi)) / F(180)) if i in (0, 1, 2, 6) else F(v) for i, v in enumerate(params)]
        lines.append(f"{w} {h} {_hex(radians)} " + " ".join(map(str, g.ravel().tolist())))
        img = image.Image._wrap(image.GRAYSCALE, g.copy())
        img.rotation_corr(*params)
        ours.append(img._pix.ravel().tolist())
    out = subprocess.run([str(exe)], input=("\n".join(lines) + "\n").encode(), capture_output=True, check=True,
                         timeout=120).stdout.decode().splitlines()
    assert [list(map(int, line.split())) for line in out] == ours
