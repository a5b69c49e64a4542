"""find_barcodes against the firmware's own zbar.c (compiled from the mirror) on generated barcodes.

The firmware's ``imlib_find_barcodes`` (its zbar 0.10 port plus the rect/rotation/merge code around
it) is built with a small allocator/list shim and run on the same grayscale pixels; maixemu (system
libzbar through pyzbar, the firmware's wrapper ported) must return the same list: rect, corners,
payload, type, rotation and quality. Codes are drawn from python-barcode's module patterns at
several module widths, heights, rotations, contrasts, noise levels and ROIs.
"""

from __future__ import annotations

import random
import re

import numpy as np
import pytest

from firmware_c import IMG_DIR, build, firmware_source, needs_firmware_c, run
from maixemu.firmware import image
from maixemu.firmware.image import _barcodes

needs_zbar = pytest.mark.skipif(not _barcodes.available(), reason="needs libzbar0 and pyzbar")

_SHIM = r"""
#include <stdlib.h>
#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <stdio.h>
#define IMLIB_ENABLE_BARCODES
#define IMAGE_BPP_BINARY 0
#define IMAGE_BPP_GRAYSCALE 1
#define IMAGE_BPP_RGB565 2
typedef struct { int w, h, bpp; uint8_t *data; } image_t;
typedef struct { int16_t x, y; } point_t;
typedef struct { int16_t x, y, w, h; } rectangle_t;
typedef struct { size_t n, len; char *d; } list_t;
typedef struct { point_t corners[4]; rectangle_t rect; size_t payload_len; char *payload;
                 uint16_t type, rotation; int quality; } find_barcodes_list_lnk_data_t;
static void *umm_malloc(size_t n) { return malloc(n); }
static void umm_free(void *p) { free(p); }
static void *umm_realloc(void *p, size_t n) { return realloc(p, n); }
static void *umm_calloc(size_t a, size_t b) { return calloc(a, b); }
static void umm_init_x(size_t n) { (void) n; }
static size_t fb_avail(void) { return 1 << 20; }
static void *fb_alloc(size_t n) { return malloc(n); }
static void fb_free(void) { }
static void fb_alloc_fail(void) { abort(); }
static void *xalloc(size_t n) { return malloc(n + 1); }
static void list_init(list_t *l, size_t len) { l->n = 0; l->len = len; l->d = NULL; }
static size_t list_size(list_t *l) { return l->n; }
static void list_push_back(list_t *l, void *v) {
    l->d = realloc(l->d, (l->n + 1) * l->len); memcpy(l->d + l->n * l->len, v, l->len); l->n++; }
static void list_pop_front(list_t *l, void *v) {
    memcpy(v, l->d, l->len); memmove(l->d, l->d + l->len, (l->n - 1) * l->len); l->n--; }
static void list_copy(list_t *dst, list_t *src) { *dst = *src; }
static void rectangle_init(rectangle_t *r, int x, int y, int w, int h) { r->x = x; r->y = y; r->w = w; r->h = h; }
static bool rectangle_overlap(rectangle_t *a, rectangle_t *b) {
    return a->x < b->x + b->w && a->y < b->y + b->h && b->x < a->x + a->w && b->y < a->y + a->h; }
static void rectangle_united(rectangle_t *a, rectangle_t *b) {
    int x = a->x < b->x ? a->x : b->x, y = a->y < b->y ? a->y : b->y;
    int r = a->x + a->w > b->x + b->w ? a->x + a->w : b->x + b->w;
    int t = a->y + a->h > b->y + b->h ? a->y + a->h : b->y + b->h;
    a->x = x; a->y = y; a->w = r - x; a->h = t - y; }
#define IMAGE_COMPUTE_BINARY_PIXEL_ROW_PTR(img, y) ((uint32_t *) 0)
#define IMAGE_GET_BINARY_PIXEL_FAST(row, x) 0
#define COLOR_BINARY_TO_GRAYSCALE(p) 0
#define IMAGE_COMPUTE_RGB565_PIXEL_ROW_PTR(img, y) ((uint16_t *) 0)
#define IMAGE_GET_RGB565_PIXEL_FAST(row, x) 0
#define COLOR_RGB565_TO_GRAYSCALE(p) 0
"""

_MAIN = r"""
int main(void) {
    int w, h, rx, ry, rw, rh;
    if (scanf("%d %d %d %d %d %d", &w, &h, &rx, &ry, &rw, &rh) != 6) return 2;
    getchar();
    image_t img = { w, h, IMAGE_BPP_GRAYSCALE, malloc(w * h) };
    if (fread(img.data, 1, w * h, stdin) != (size_t) (w * h)) return 3;
    rectangle_t roi = { rx, ry, rw, rh };
    list_t out;
    imlib_find_barcodes(&out, &img, &roi);
    while (list_size(&out)) {
        find_barcodes_list_lnk_data_t c;
        list_pop_front(&out, &c);
        printf("%d %d %d %d %d %d %d|", c.rect.x, c.rect.y, c.rect.w, c.rect.h, c.type, c.rotation, c.quality);
        for (size_t i = 0; i < c.payload_len; i++) printf("%02x", (unsigned char) c.payload[i]);
        printf("\n");
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def firmware_find_barcodes(tmp_path_factory):
    zbar = firmware_source(f"{IMG_DIR}/zbar.c").replace('#include "imlib.h"', "")
    header = firmware_source(f"{IMG_DIR}/include/imlib.h")
    enum = re.search(r"typedef enum barcodes \{.*?\} barcodes_t;", header, re.S).group(0)  # the firmware's numbering
    exe = build(tmp_path_factory.mktemp("zbar"), "find_barcodes", _SHIM + enum + zbar + _MAIN)

    def call(gray: np.ndarray, roi) -> list[tuple]:
        h, w = gray.shape
        text = run(exe, f"{w} {h} {roi[0]} {roi[1]} {roi[2]} {roi[3]}\n".encode() + gray.tobytes())
        found = []
        for line in text.splitlines():
            head, payload = line.split("|")
            x, y, bw, bh, kind, rot, quality = map(int, head.split())
            found.append(((x, y, bw, bh), kind, rot, quality, bytes.fromhex(payload).decode("latin-1")))
        return found

    return call


def _ours(gray: np.ndarray, roi) -> list[tuple]:
    img = image.Image(size=(gray.shape[1], gray.shape[0])).to_grayscale(True)
    img._pix[...] = gray
    out = []
    for b in img.find_barcodes(roi=roi):
        x, y, w, h = b.rect()
        assert b.corners() == ((x, y), (x + w, y), (x + w, y + h), (x, y + h))
        deg = {0.0: 0, float(np.float32(np.pi / 2)): 90, float(np.float32(np.pi)): 180,
               float(np.float32(3 * np.pi / 2)): 270}[b.rotation()]
        out.append(((x, y, w, h), b.type(), deg, b.quality(), b.payload()))
    return out


def _random_code(rng: random.Random) -> tuple[str, str]:
    digits = lambda n: "".join(rng.choice("0123456789") for _ in range(n))  # noqa: E731
    kind = rng.choice(["ean13", "ean8", "upca", "code39", "code128", "isbn13", "itf", "codabar", "ean14"])
    data = {"ean13": lambda: digits(12), "ean8": lambda: digits(7), "upca": lambda: digits(11),
            "code39": lambda: "".join(rng.choice("ABCDEFGHIJ0123456789") for _ in range(rng.randint(3, 8))),
            "code128": lambda: "".join(rng.choice("abcdefXYZ0123456789-") for _ in range(rng.randint(3, 10))),
            "isbn13": lambda: rng.choice(["978" + digits(9), "9791" + digits(8)]), "itf": lambda: digits(rng.choice([6, 8, 10])),
            "codabar": lambda: rng.choice("ABCD") + digits(rng.randint(3, 9)) + rng.choice("ABCD"),
            "ean14": lambda: digits(13)}[kind]()
    return kind, data


def _render(kind: str, data: str, rng: random.Random, seed: int) -> np.ndarray:
    """The code's modules as a gray picture: module width, quiet zone, height, rotation, contrast, noise."""
    barcode = pytest.importorskip("barcode")
    from PIL import Image as PILImage

    modules = np.array([c == "1" for c in barcode.get(kind, data).build()[0]])
    mw = rng.choice([1, 2, 2, 3])
    quiet = np.zeros(rng.choice([4, 8, 10]), bool)
    row = np.repeat(np.concatenate([quiet, modules, quiet]), mw)
    picture = PILImage.fromarray(np.where(np.tile(row, (rng.choice([6, 12, 30, 60]), 1)), 0, 255).astype(np.uint8))
    if rng.random() < 0.3:
        picture = picture.resize((int(picture.width * rng.uniform(0.7, 1.3)), picture.height), PILImage.BILINEAR)
    picture = picture.rotate(rng.choice([0, 0, 0, 90, 180, 270]), expand=True)
    a = np.asarray(picture, np.float64) * rng.uniform(0.5, 1) + rng.uniform(0, 60)
    a += np.random.default_rng(seed).normal(0, rng.choice([0, 5, 15]), a.shape)
    return a.clip(0, 255).astype(np.uint8)


@needs_zbar
@needs_firmware_c
def test_find_barcodes_equals_the_firmwares_zbar_on_generated_codes(firmware_find_barcodes):
    rng = random.Random(13)
    decoded = 0
    for trial in range(120):
        kind, data = _random_code(rng)
        gray = _render(kind, data, rng, trial)
        h, w = gray.shape
        if rng.random() < 0.5:
            roi = (0, 0, w, h)
        else:  # a window onto part of the code
            x, y = rng.randint(0, w // 4), rng.randint(0, h // 4)
            roi = (x, y, w - w // 4 - x // 2, h - h // 4 - y // 2)
        if rng.random() < 0.3:  # two copies side by side: two symbols, or one merged symbol
            gray = np.concatenate([gray, gray], axis=1 if h > w else 0)
            roi = (0, 0, gray.shape[1], gray.shape[0])
        expected = firmware_find_barcodes(gray, roi)
        assert _ours(gray, roi) == expected, (trial, kind, data, gray.shape, roi)
        decoded += bool(expected)
    assert decoded >= 40  # many generated codes are readable: the comparison is not only of empty lists


@needs_zbar
def test_find_barcodes_reads_codes_in_short_windows():
    """An EAN-13 only 6 pixels high, and one seen through a ROI: payload, type, and image coordinates."""
    barcode = pytest.importorskip("barcode")
    modules = np.array([c == "1" for c in barcode.get("ean13", "590123412345").build()[0]])
    row = np.repeat(np.concatenate([np.zeros(10, bool), modules, np.zeros(10, bool)]), 2)
    gray = np.full((40, row.size + 20), 255, np.uint8)
    gray[20:26, 10:10 + row.size] = np.where(row, 0, 255)
    img = image.Image(size=(gray.shape[1], gray.shape[0])).to_grayscale(True)
    img._pix[...] = gray
    (code,) = img.find_barcodes()
    assert (code.payload(), code.type(), code.rotation()) == ("5901234123457", image.EAN13, 0.0)
    assert 20 <= code.y() and code.y() + code.h() <= 26 and code.x() >= 10
    assert img.find_barcodes(roi=(0, 0, gray.shape[1], 20)) == []
    # the same pixels in RGB565: the firmware converts the ROI to gray and shifts the points back
    rgb = image.Image(size=(gray.shape[1], gray.shape[0]))
    rgb._pix[...] = np.where(gray > 0, 0xFFFF, 0).astype(np.uint16)
    (rcode,) = rgb.find_barcodes(roi=(5, 15, gray.shape[1] - 5, 20))
    (gcode,) = img.find_barcodes(roi=(5, 15, gray.shape[1] - 5, 20))
    assert rcode.rect() == gcode.rect() and rcode.payload() == gcode.payload()


def test_isbn10_check_digit_as_zbar_computes_it():
    # ISBN 0-306-40615-2 and 0-8044-2957-X (the check digit 10 is written X)
    assert _barcodes.isbn10_check(b"030640615") == b"2"
    assert _barcodes.isbn10_check(b"080442957") == b"X"


def test_merge_overlapping_keeps_the_firmwares_order_and_sums():
    a = {"rect": [0, 0, 10, 2], "payload": b"1", "type": 6, "rotation": 0, "quality": 3}
    b = {"rect": [5, 1, 10, 4], "payload": b"1", "type": 6, "rotation": 90, "quality": 2}
    c = {"rect": [50, 0, 5, 5], "payload": b"1", "type": 6, "rotation": 0, "quality": 1}
    d = {"rect": [1, 1, 3, 3], "payload": b"2", "type": 6, "rotation": 0, "quality": 1}
    merged = _barcodes._merge_overlapping([a, b, c, d])
    assert merged[0] == {"rect": [0, 0, 15, 5], "payload": b"1", "type": 6, "rotation": 90, "quality": 5}
    assert merged[1:] == [c, d]


def test_find_barcodes_without_zbar_names_the_packages(monkeypatch):
    def missing():
        raise NotImplementedError(_barcodes.MISSING_ZBAR)

    monkeypatch.setattr(_barcodes, "_zbar", missing)
    with pytest.raises(NotImplementedError, match="libzbar0.*pyzbar"):
        image.Image(size=(20, 20)).find_barcodes()
