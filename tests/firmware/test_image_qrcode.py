"""find_qrcodes: the firmware's quirc (qrcode.c) on codes generated with segno.

The decoded fields are facts of the generated code (payload, version, ECC level, mask, mode, ECI),
so a decode that differs from the generator is a bug; the corners follow from the module size.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image
from maixemu.firmware.image import _qrcode

segno = pytest.importorskip("segno")

#: segno's ECC letters -> quirc's ecc_level (the 2 format bits: M=0, L=1, H=2, Q=3)
ECC = {"M": 0, "L": 1, "H": 2, "Q": 3}
MODE = {"numeric": 1, "alphanumeric": 2, "byte": 4, "kanji": 8}


def render(qr, scale=3, border=4, size=None, angle=0.0):
    m = np.array(qr.matrix, np.uint8)
    m = np.pad(m, border)
    a = np.where(np.kron(m, np.ones((scale, scale), np.uint8)) > 0, 20, 235).astype(np.uint8)
    if size is not None:
        canvas = np.full((size[1], size[0]), 235, np.uint8)
        y0, x0 = (size[1] - a.shape[0]) // 2, (size[0] - a.shape[1]) // 2
        canvas[y0:y0 + a.shape[0], x0:x0 + a.shape[1]] = a
        a = canvas
    if angle:
        import cv2

        h, w = a.shape
        rot = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
        a = cv2.warpAffine(a, rot, (w, h), flags=cv2.INTER_NEAREST, borderValue=235)
    return image.Image._wrap(image.GRAYSCALE, np.ascontiguousarray(a))


@pytest.mark.parametrize("payload,error,mask", [
    ("maixemu", "L", 7), ("12345678901234567890", "M", 2), ("HELLO WORLD 42", "Q", 5),
    ("https://example.com/a?b=c", "H", 0), ("x" * 60, "L", 4), ("0123456789" * 12, "M", 6),
])
def test_decoded_fields_are_the_generators(payload, error, mask):
    qr = segno.make(payload, error=error.lower(), mask=mask, micro=False, boost_error=False)
    codes = render(qr, size=(200, 200)).find_qrcodes()
    assert len(codes) == 1
    c = codes[0]
    assert c.payload() == payload
    assert c.version() == qr.version and c.ecc_level() == ECC[qr.error] and c.mask() == qr.mask
    assert c.data_type() == MODE[qr.mode] and c.eci() == 0
    assert c.is_numeric() == (qr.mode == "numeric") and c.is_binary() == (qr.mode == "byte")


def test_corners_and_rect_of_an_upright_code():
    qr = segno.make("maixemu", error="l", mask=1, micro=False, boost_error=False)
    scale, border = 4, 4
    img = render(qr, scale=scale, border=border, size=(160, 120))
    c = img.find_qrcodes()[0]
    side = 21 * scale
    x0, y0 = (160 - (21 + 2 * border) * scale) // 2 + border * scale, (120 - (21 + 2 * border) * scale) // 2 + border * scale
    for (cx, cy), (ex, ey) in zip(c.corners(), ((x0, y0), (x0 + side, y0), (x0 + side, y0 + side), (x0, y0 + side))):
        assert abs(cx - ex) <= 1 and abs(cy - ey) <= 1
    xs = [p[0] for p in c.corners()]
    ys = [p[1] for p in c.corners()]
    assert c.rect() == (min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
    assert c[0:4] == c.rect() and c[4] == "maixemu"


@pytest.mark.parametrize("angle", [15, -30, 90, 180])
def test_rotated_codes_decode(angle):
    qr = segno.make("ROTATE 2026", error="m", mask=3, micro=False, boost_error=False)
    codes = render(qr, scale=4, size=(240, 240), angle=angle).find_qrcodes()
    assert [c.payload() for c in codes] == ["ROTATE 2026"]


def test_version_7_and_above_with_alignment_patterns():
    qr = segno.make("V" * 120, error="l", micro=False, boost_error=False, version=7)
    codes = render(qr, scale=3, size=(220, 220)).find_qrcodes()
    assert len(codes) == 1 and codes[0].version() == 7 and codes[0].payload() == "V" * 120


def test_eci_and_kanji():
    qr = segno.make("Grüße", encoding="utf-8", eci=True, micro=False, boost_error=False, error="l")
    c = render(qr, size=(200, 200)).find_qrcodes()[0]
    assert c.eci() == 26 and c.payload() == "Grüße" and c.data_type() == 4
    qr = segno.make("漢字", mode="kanji", micro=False, boost_error=False, error="l")
    c = render(qr, size=(200, 200)).find_qrcodes()[0]
    assert c.is_kanji() and c.payload().encode("utf-8", "surrogateescape") == "漢字".encode("shift_jis")


def test_roi_and_nothing_found():
    qr = segno.make("ROI", error="l", micro=False, boost_error=False)
    img = render(qr, scale=3, size=(200, 120))
    assert img.find_qrcodes(roi=(0, 0, 40, 40)) == []
    found = img.find_qrcodes(roi=(40, 0, 120, 120))
    assert [c.payload() for c in found] == ["ROI"]
    assert image.Image(size=(80, 60)).find_qrcodes() == []


def test_rgb565_images_use_the_gray_of_each_pixel():
    qr = segno.make("COLOUR", error="l", micro=False, boost_error=False)
    g = render(qr, size=(160, 120))
    rgb = image.Image(size=(160, 120))
    rgb._pix[...] = g.to_rgb565(True)._pix
    assert [c.payload() for c in rgb.find_qrcodes()] == ["COLOUR"]


def test_version_table_and_fields():
    # data codewords of every version add up with the block structure (the firmware's table)
    for v in range(1, 41):
        info = _qrcode.VERSIONS[v]
        for bs, dw, ns in info["ecc"]:
            assert (info["data_bytes"] - bs * ns) % (bs + 1) == 0
    assert _qrcode.VERSIONS[21]["apat"] == [6, 28, 50, 72, 92]  # quirc's table (the standard: 94)
    assert _qrcode.GF256_LOG[1] == 255 and _qrcode.GF16_LOG[1] == 15


def test_qrcode_package_block_table_agrees():
    qrcode_base = pytest.importorskip("qrcode.base")
    order = {0: 1, 1: 0, 2: 3, 3: 2}  # quirc M, L, H, Q -> the qrcode package's L, M, Q, H rows
    for v in range(1, 41):
        for k, (bs, dw, ns) in enumerate(_qrcode.VERSIONS[v]["ecc"]):
            row = qrcode_base.RS_BLOCK_TABLE[(v - 1) * 4 + order[k]]
            assert (row[0], row[1], row[2]) == (ns, bs, dw)


def test_threshold_python_and_compiled_agree():
    rng = np.random.default_rng(5)
    g = rng.integers(0, 256, (30, 41)).astype(np.int64)
    a = _qrcode._threshold.__wrapped__(g, np.zeros(g.shape, np.uint8))
    b = _qrcode._threshold(g, np.zeros(g.shape, np.uint8))
    assert np.array_equal(a, b)
