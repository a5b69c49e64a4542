"""find_barcodes against the firmware's own zbar.c (compiled from the mirror) on generated barcodes.

The firmware's ``imlib_find_barcodes`` (its zbar 0.10 port plus the rect/rotation/merge code around
it) is built with a small allocator/list shim and run on the same grayscale pixels; maixemu (system
libzbar through pyzbar, the firmware's wrapper ported) must return the same list: rect, corners,
payload, type, rotation and quality. Codes are drawn from python-barcode's module patterns at
several module widths, heights, rotations, contrasts, noise levels and ROIs.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from firmware_c import IMG_DIR, build, firmware_source, imlib_shim, needs_firmware_c, run
from maixemu.firmware import image
from maixemu.firmware.image import _barcodes

needs_zbar = pytest.mark.skipif(not _barcodes.available(), reason="needs libzbar0 and pyzbar")

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
    zbar = firmware_source(f"{IMG_DIR}/zbar.c").replace('#include "imlib.h"', "#define IMLIB_ENABLE_BARCODES")
    shim = imlib_shim("find_barcodes_list_lnk_data", "barcodes")  # the firmware's struct and numbering
    exe = build(tmp_path_factory.mktemp("zbar"), "find_barcodes", shim + zbar + _MAIN)

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
