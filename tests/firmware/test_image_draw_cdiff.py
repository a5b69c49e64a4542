"""The drawing methods against the firmware's own ``draw.c`` and ``font.c``, on random shapes.

The firmware's ``imlib_draw_line``/``_rectangle``/``_circle``/``_ellipse``/``_image``/``_font`` and
``imlib_draw_ascii_string`` are compiled from the MaixPy-v1 mirror with the firmware's flags
(``firmware_c``) against its real ``imlib.h`` pixel macros, and called on the same image and
arguments as ``image.Image.draw_*`` (whose argument handling is py_image.c's). Every shape runs on
BINARY, GRAYSCALE and RGB565 images, with and without numba (``MAIXEMU_NO_JIT`` forms: the
compiled kernels and the numpy paths); the pixels must be identical. Skips cleanly without the
mirror or gcc.
"""

from __future__ import annotations

import numpy as np
import pytest

from firmware_c import (FORMS, IMG_DIR, ImlibProcess, both_forms, build_imlib, firmware_source, have_firmware_c, image_bytes,
                        needs_firmware_c)

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _draw

_MAIN = r"""
#include <stdio.h>
#include "font.h"
#include "imlib.h"
size_t io_nbytes(image_t *i); int io_int(void); float io_float(void);
void io_read_image(image_t *i); void io_write_image(image_t *i);
void imlib_draw_ascii_string(image_t *img, int x_off, int y_off, const char *str, int c, float scale,
                             int x_spacing, int y_spacing, bool mono_space);
void imlib_draw_font(image_t *img, int x_off, int y_off, int c, float scale, uint8_t font_h, uint8_t font_w,
                     const uint8_t *font);
int main(void) {
    for (;;) {
        image_t img, other, mask;
        io_read_image(&img);
        int op = io_int();
        if (op == 0) { int a = io_int(), b = io_int(), c = io_int(), d = io_int(), col = io_int(), t = io_int();
            imlib_draw_line(&img, a, b, c, d, col, t); }
        else if (op == 1) { int a = io_int(), b = io_int(), c = io_int(), d = io_int(), col = io_int(), t = io_int(),
            f = io_int(); imlib_draw_rectangle(&img, a, b, c, d, col, t, f); }
        else if (op == 2) { int a = io_int(), b = io_int(), r = io_int(), col = io_int(), t = io_int(), f = io_int();
            imlib_draw_circle(&img, a, b, r, col, t, f); }
        else if (op == 3) { int a = io_int(), b = io_int(), rx = io_int(), ry = io_int(), rot = io_int(), col = io_int(),
            t = io_int(), f = io_int(); imlib_draw_ellipse(&img, a, b, rx, ry, rot, col, t, f); }
        else if (op == 4) { int a = io_int(), b = io_int(), col = io_int(); float s = io_float();
            int xs = io_int(), ys = io_int(), mono = io_int(), n = io_int();
            char *text = calloc(n + 1, 1); if (fread(text, 1, n, stdin) != (size_t) n) exit(1);
            imlib_draw_ascii_string(&img, a, b, text, col, s, xs, ys, mono); free(text); }
        else if (op == 5) { int a = io_int(), b = io_int(), col = io_int(); float s = io_float(); int fh = io_int(),
            fw = io_int(), n = io_int();
            uint8_t *glyph = calloc(n + 4 * 256 + 64, 1); if (fread(glyph, 1, n, stdin) != (size_t) n) exit(1);
            imlib_draw_font(&img, a, b, col, s, fh, fw, glyph); free(glyph); }
        else if (op == 6) { io_read_image(&other); int has_mask = io_int(); if (has_mask) io_read_image(&mask);
            int a = io_int(), b = io_int(); float xs = io_float(), ys = io_float(), alpha = io_float();
            imlib_draw_image(&img, &other, a, b, xs, ys, alpha, has_mask ? &mask : NULL); }
        else if (op == 7) { int a = io_int(), b = io_int(); float xs = io_float(), ys = io_float(), alpha = io_float();
            imlib_draw_image(&img, &img, a, b, xs, ys, alpha, NULL); }
        io_write_image(&img);
    }
}
"""


def _font_c() -> str:
    """font.c's ASCII table, ``font_config`` and the two drawing functions (the UTF-8 and file parts
    need MicroPython's file system and are left out)."""
    text = firmware_source(f"{IMG_DIR}/font.c")
    head = text[text.index("static uint8_t ascii[]"):text.index("static inline void font_init")]
    draw_font = text[text.index("void imlib_draw_font("):text.index("// def draw_string")]
    ascii_fn = text[text.index("void imlib_draw_ascii_string("):text.index("inline void imlib_draw_string")]
    return '#include "font.h"\n' + head + draw_font + ascii_fn


@pytest.fixture(scope="module")
def firmware_draw(tmp_path_factory):
    """The firmware's draw.c and font.c drawing: ``call(img, op, *fields) -> pixels after the call``."""
    if not have_firmware_c():
        pytest.skip("needs the MaixPy-v1 mirror (../.mirror, developer machines) and gcc")
    sources = {name: firmware_source(f"{IMG_DIR}/{name}") for name in ("draw.c", "fmath.c", "rgb2rgb_tab.c", "yuv_tab.c")}
    exe = build_imlib(tmp_path_factory.mktemp("draw"), "draw", {**sources, "font_part.c": _font_c(), "main.c": _MAIN})
    proc = ImlibProcess(exe)
    yield proc
    proc.close()


_image_bytes = image_bytes


def _random_image(rng, fmt: int, w: int, h: int):
    top = {pixformat.BINARY: 2, pixformat.GRAYSCALE: 256, pixformat.RGB565: 65536}[fmt]
    dtype = np.uint16 if fmt == pixformat.RGB565 else np.uint8
    return image.Image._wrap(fmt, rng.integers(0, top, (h, w)).astype(dtype))


FORMATS = (pixformat.BINARY, pixformat.GRAYSCALE, pixformat.RGB565)


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    """Both forms of the drawing code: the compiled kernels (when numba is there) and the numpy paths."""
    return both_forms(request, monkeypatch, _draw)


def _colour(rng, fmt: int) -> int:
    return int(rng.integers(0, 2 if fmt == pixformat.BINARY else 256 if fmt == pixformat.GRAYSCALE else 65536))


def _cases(seed: int, n: int):
    rng = np.random.default_rng(seed)
    for trial in range(n):
        fmt = FORMATS[trial % 3]
        w, h = (int(v) for v in rng.integers(1, 48, 2))
        yield trial, rng, fmt, w, h


@needs_firmware_c
def test_lines_rectangles_circles_equal_draw_c(firmware_draw, jit):
    for trial, rng, fmt, w, h in _cases(1, 240):
        img = _random_image(rng, fmt, w, h)
        c = _colour(rng, fmt)
        t = int(rng.choice([-1, 0, 1, 1, 2, 3, 5]))
        kind = trial % 4
        if kind == 0:
            x0, x1 = (int(v) for v in rng.integers(-20, w + 20, 2))
            y0, y1 = (int(v) for v in rng.integers(-20, h + 20, 2))
            want = firmware_draw(img, 0, x0, y0, x1, y1, c, t)
            img.draw_line(x0, y0, x1, y1, c, t)
        elif kind == 1:
            x, y = int(rng.integers(-10, w + 5)), int(rng.integers(-10, h + 5))
            rw, rh = (int(v) for v in rng.integers(-3, 40, 2))
            fill = bool(rng.random() < 0.3)
            want = firmware_draw(img, 1, x, y, rw, rh, c, t, fill)
            img.draw_rectangle(x, y, rw, rh, c, t, fill)
        else:
            x, y = int(rng.integers(-10, w + 10)), int(rng.integers(-10, h + 10))
            r = int(rng.integers(-2, 40))
            fill = kind == 3
            want = firmware_draw(img, 2, x, y, r, c, t, fill)
            img.draw_circle(x, y, r, c, t, fill)
        assert np.array_equal(img._pix, want), (trial, fmt, w, h)


@needs_firmware_c
def test_ellipses_equal_draw_c(firmware_draw, jit):
    for trial, rng, fmt, w, h in _cases(2, 150):
        img = _random_image(rng, fmt, w, h)
        c = _colour(rng, fmt)
        x, y = int(rng.integers(-10, w + 10)), int(rng.integers(-10, h + 10))
        rx, ry = (int(v) for v in rng.integers(-1, 30, 2))
        rot = int(rng.choice([0, 90, 180, -45, int(rng.integers(-400, 400))]))
        t = int(rng.choice([0, 1, 2, 4]))
        fill = bool(trial % 2)
        want = firmware_draw(img, 3, x, y, rx, ry, rot, c, t, fill)
        img.draw_ellipse(x, y, rx, ry, rot, c, t, fill)
        assert np.array_equal(img._pix, want), (trial, fmt, (x, y, rx, ry, rot, t, fill))


_TEXTS = (b"Hello maixemu 12345!", b"a\nb\r\nc\rd", b"~}|{ `_^]\\[@?>", b"\x01\x7f\xc3\xa9x", b"mono  sp",
          bytes(range(32, 127)), b"ab\x00cd")


@needs_firmware_c
def test_ascii_strings_equal_font_c(firmware_draw, jit):
    for trial, rng, fmt, w, h in _cases(3, 120):
        w, h = w + 40, h + 20
        img = _random_image(rng, fmt, w, h)
        c = _colour(rng, fmt)
        text = _TEXTS[trial % len(_TEXTS)]
        x, y = int(rng.integers(-20, w)), int(rng.integers(-15, h))
        scale = np.float32(rng.choice([1.0, 2.0, 0.5, 0.6, 0.7, 1.2, 1.9, 3.3, float(rng.uniform(0.2, 4))]))
        xs, ys, mono = int(rng.integers(-2, 4)), int(rng.integers(-2, 5)), int(trial % 5 == 0)
        want = firmware_draw(img, 4, x, y, c, scale, xs, ys, mono, len(text), text)
        img.draw_string(x, y, text, c, float(scale), xs, ys, mono)
        assert np.array_equal(img._pix, want), (trial, fmt, text, float(scale))


@needs_firmware_c
def test_big_ascii_scales_equal_font_c(firmware_draw, jit):
    # int(8 * scale) columns are counted in a uint8_t: at 32 and above the glyph is narrower (or gone)
    rng = np.random.default_rng(4)
    for trial, scale in enumerate((7.0, 12.5, 31.9, 32.0, 33.0, 40.0)):
        fmt = FORMATS[trial % 3]
        img = _random_image(rng, fmt, 90, 70)
        want = firmware_draw(img, 4, -100, -200, 1, np.float32(scale), 0, 2, 0, 3, b"A#~")
        img.draw_string(-100, -200, "A#~", 1, scale)
        assert np.array_equal(img._pix, want), scale


@needs_firmware_c
def test_draw_font_equals_font_c(firmware_draw, jit):
    for trial, rng, fmt, w, h in _cases(5, 60):
        img = _random_image(rng, fmt, w + 20, h + 20)
        fw = int(rng.choice([8, 16, 24, 32]))
        fh = int(rng.choice([8, 16, 24]))
        glyph = rng.integers(0, 256, (fw // 8) * (fh // 8) * 8).astype(np.uint8).tobytes()
        scale = np.float32(rng.choice([1.0, 2.0, 0.6, 1.5]))
        x, y, c = int(rng.integers(-10, w)), int(rng.integers(-10, h)), _colour(rng, fmt)
        want = firmware_draw(img, 5, x, y, c, scale, fh, fw, len(glyph), glyph)
        img.draw_font(x, y, fw, fh, glyph, scale=float(scale), color=c)
        assert np.array_equal(img._pix, want), (trial, fw, fh, float(scale))


@needs_firmware_c
def test_draw_image_equals_draw_c(firmware_draw, jit):
    for trial, rng, fmt, w, h in _cases(6, 240):
        img = _random_image(rng, fmt, w, h)
        ofmt = FORMATS[int(rng.integers(0, 3))]
        ow, oh = (int(v) for v in rng.integers(1, 30, 2))
        other = _random_image(rng, ofmt, ow, oh)
        mask = None
        if trial % 3 == 0:
            mfmt = FORMATS[int(rng.integers(0, 3))]
            mw, mh = (int(v) for v in rng.integers(1, 35, 2))
            mask = _random_image(rng, mfmt, mw, mh)
        x, y = int(rng.integers(-20, w + 5)), int(rng.integers(-20, h + 5))
        xs = np.float32(rng.choice([1.0, 1.0, 2.0, 0.5, 0.33, 1.7, 3.0, 0.0, float(rng.uniform(0.1, 3))]))
        ys = np.float32(rng.choice([1.0, 2.0, 0.75, float(rng.uniform(0.1, 3))]))
        alpha = int(rng.choice([256, 256, 128, 0, 1, 255, int(rng.integers(0, 257))]))
        a32 = np.float32(alpha) / np.float32(256.0)
        fields = [_image_bytes(other), int(mask is not None)] + ([_image_bytes(mask)] if mask is not None else [])
        want = firmware_draw(img, 6, *fields, x, y, xs, ys, a32)
        img.draw_image(other, x, y, float(xs), float(ys), alpha, mask)
        assert np.array_equal(img._pix, want), (trial, fmt, ofmt, float(xs), float(ys), alpha, mask is not None)


@needs_firmware_c
def test_draw_image_onto_itself_reads_what_it_drew(firmware_draw, jit):
    # the C reads each source pixel when it gets there: drawing an image onto itself sees the pixels
    # it has already overwritten
    rng = np.random.default_rng(7)
    for trial in range(30):
        fmt = FORMATS[trial % 3]
        img = _random_image(rng, fmt, 20, 16)
        x, y = (int(v) for v in rng.integers(-4, 5, 2))
        xs = np.float32(rng.choice([1.0, 2.0, 0.5]))
        alpha = int(rng.choice([256, 100]))
        a32 = np.float32(alpha) / np.float32(256.0)
        want = firmware_draw(img, 7, x, y, xs, xs, a32)
        img.draw_image(img, x, y, float(xs), float(xs), alpha)
        assert np.array_equal(img._pix, want), trial
