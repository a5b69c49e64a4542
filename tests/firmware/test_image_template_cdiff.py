"""``find_template`` against the firmware's own ``template.c`` (with ``integral.c``), on random scenes.

``imlib_template_match_ex``/``_ds`` are compiled from the MaixPy-v1 mirror with the firmware's
flags (``firmware_c.build_imlib``) and called on the same grayscale image, template, roi and step
as ``Image.find_template``; the correlation (float32 bits) and the rectangle must agree, with the
compiled kernel and with the numpy path. Skips cleanly without the mirror or gcc.
"""

from __future__ import annotations

import struct

import numpy as np
import pytest

from firmware_c import (FORMS, IMG_DIR, ImlibProcess, both_forms, build_imlib, firmware_function, firmware_source, have_firmware_c,
                        image_bytes, needs_firmware_c)

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _template

_MAIN = r"""
#include <stdio.h>
#include "imlib.h"
size_t io_nbytes(image_t *i); int io_int(void); float io_float(void);
void io_read_image(image_t *i);
int main(void) {
    for (;;) {
        image_t f, t;
        io_read_image(&f);
        int op = io_int();
        io_read_image(&t);
        rectangle_t roi, r = {0, 0, 0, 0};
        roi.x = io_int(); roi.y = io_int(); roi.w = io_int(); roi.h = io_int();
        int step = io_int();
        float corr = op ? imlib_template_match_ds(&f, &t, &r) : imlib_template_match_ex(&f, &t, &roi, step, &r);
        int out[5] = {r.x, r.y, r.w, r.h, 0};
        memcpy(&out[4], &corr, 4);
        fwrite(out, 4, 5, stdout);
        fflush(stdout);
    }
}
"""


@pytest.fixture(scope="module")
def firmware_template(tmp_path_factory):
    """``call(f, t, roi, step, ds) -> (corr float32, (x, y, w, h))`` from the firmware's template.c."""
    if not have_firmware_c():
        pytest.skip("needs the MaixPy-v1 mirror (../.mirror, developer machines) and gcc")
    sources = {name: firmware_source(f"{IMG_DIR}/{name}") for name in ("template.c", "integral.c", "fmath.c", "rgb2rgb_tab.c")}
    # imlib.c does not build here (MicroPython's file system); the template's mean is imlib_image_mean
    mean = '#include "imlib.h"\n' + firmware_function(f"{IMG_DIR}/imlib.c", "imlib_image_mean")
    proc = ImlibProcess(build_imlib(tmp_path_factory.mktemp("template"), "template",
                                    {**sources, "imlib_mean.c": mean, "main.c": _MAIN}))

    def call(f, t, roi, step, ds):
        assert proc.proc.stdin is not None and proc.proc.stdout is not None
        proc.proc.stdin.write(image_bytes(f) + struct.pack("<i", int(ds)) + image_bytes(t)
                              + struct.pack("<5i", *roi, step))
        proc.proc.stdin.flush()
        x, y, w, h, bits = struct.unpack("<5i", proc.proc.stdout.read(20))
        return np.int32(bits).view(np.float32), (x, y, w, h)

    yield call
    proc.close()


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    return both_forms(request, monkeypatch, _template)


def _scene(rng, h: int, w: int) -> np.ndarray:
    kind = rng.integers(0, 3)
    if kind == 0:
        return rng.integers(0, 256, (h, w)).astype(np.uint8)
    if kind == 1:  # smooth: long runs and flat patches (zero variance, ties)
        return (np.cumsum(rng.integers(-2, 3, (h, w)), axis=1) % 256).astype(np.uint8)
    return rng.choice(np.array([0, 255, 128], np.uint8), (h, w))


@needs_firmware_c
def test_find_template_equals_template_c(firmware_template, jit):
    rng = np.random.default_rng(1)
    for trial in range(160):
        h, w = (int(v) for v in rng.integers(8, 60, 2))
        f = image.Image._wrap(pixformat.GRAYSCALE, _scene(rng, h, w))
        th, tw = int(rng.integers(1, min(h, 20) + 1)), int(rng.integers(1, min(w, 20) + 1))
        if rng.random() < 0.5:  # a piece of the image itself (a strong match), else noise
            y0, x0 = int(rng.integers(0, h - th + 1)), int(rng.integers(0, w - tw + 1))
            tpix = f._pix[y0:y0 + th, x0:x0 + tw].copy()
        else:
            tpix = _scene(rng, th, tw)
        t = image.Image._wrap(pixformat.GRAYSCALE, tpix)
        rx, ry = int(rng.integers(0, w - tw + 1)), int(rng.integers(0, h - th + 1))
        roi = (rx, ry, int(rng.integers(tw, w - rx + 1)), int(rng.integers(th, h - ry + 1)))
        step = int(rng.choice([1, 2, 3, 4, 7]))
        ds = trial % 4 == 3
        corr, rect = firmware_template(f, t, roi, step, ds)
        if ds:
            got_corr, got_rect = _template.match_ds(f._pix, t._pix)
        else:
            got_corr, got_rect = _template.match_ex(f._pix, t._pix, roi, step)
            if got_rect is None:
                got_rect = (0, 0, 0, 0)  # the C leaves its rectangle as it was (zeroed here)
        assert np.float32(got_corr).view(np.int32) == corr.view(np.int32), (trial, ds, float(got_corr), float(corr))
        assert tuple(got_rect) == rect, (trial, ds)
        # the method returns the rectangle when the correlation beats the threshold
        threshold = float(corr) - 0.01
        method = f.find_template(t, threshold, roi=roi, step=step, search=image.SEARCH_DS if ds else image.SEARCH_EX)
        assert method == (rect if np.float32(corr) > np.float32(threshold) and (ds or corr > 0) else None), trial
