"""Pixel maths through per-channel tables (``_channel_tables``) against the plain form.

``add``/``sub``/``mul``/``div``/``min``/``max``/``blend`` on RGB565 and gray look every channel
pair up in a table made by the same channel function (a compiled loop or numpy gathers);
``gamma_corr`` looks each RGB565 channel up; ``negate`` is ``v ^ 0xFFFF``. Each must give what
the channel planes computed one by one give (``by_channels``, the form these methods ran before),
bit for bit, on every pixel value.
"""

from __future__ import annotations

import numpy as np
import pytest

import maixemu.firmware.image as image
from maixemu.firmware.image import _channel_tables, _mathops
from maixemu.firmware.image._pixels import MAXES, channels, pack
from maixemu.firmware.pixformat import GRAYSCALE, RGB565
from firmware_c import FORMS, both_forms

OPS = {"add": _mathops._add, "sub": _mathops._sub, "sub(reverse)": _mathops._rsub, "mul": _mathops._mul,
       "mul(invert)": _mathops._screen, "min": _mathops._min, "max": _mathops._max,
       **{f"div({i}, {m})": _mathops._divider(bool(i), bool(m)) for i in (0, 1) for m in (0, 1)},
       **{f"blend({a})": _mathops._blender(np.float32(a) / np.float32(256)) for a in (0, 1, 77, 128, 255, 256)}}


@pytest.fixture(params=FORMS)
def jit(request, monkeypatch):
    return both_forms(request, monkeypatch, _channel_tables)


def _every_pair(fmt: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """RGB565: every 16-bit value against a permutation of them; gray: all 65536 value pairs."""
    if fmt == GRAYSCALE:
        a, b = np.meshgrid(np.arange(256, dtype=np.uint8), np.arange(256, dtype=np.uint8), indexing="ij")
        return a.reshape(256, 256), b.reshape(256, 256)
    a = np.arange(65536, dtype=np.uint16)
    return a.reshape(256, 256), np.random.default_rng(seed).permutation(a).reshape(256, 256)


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("fmt", [RGB565, GRAYSCALE], ids=["rgb565", "gray"])
def test_tables_equal_the_channel_planes_on_every_value_pair(name, fmt, jit):
    a, b = _every_pair(fmt, len(name))
    for x, y in ((a, b), (a, a), (b, a)):
        got = _channel_tables.pairwise(x, y, fmt, OPS[name])
        assert got.dtype == x.dtype and np.array_equal(got, _channel_tables.by_channels(x, y, fmt, OPS[name]))


@pytest.mark.parametrize("fmt", [RGB565, GRAYSCALE], ids=["rgb565", "gray"])
def test_the_lookup_kernels_python_twin(fmt):
    a, b = (v[:3, :50] for v in _every_pair(fmt, 9))  # a short stretch: the twin is per-pixel Python
    op = OPS["blend(77)"]
    t = _channel_tables.tables(op, fmt)
    out = np.zeros(a.size, a.dtype)
    _channel_tables._lookup_pairs.__wrapped__(a.reshape(-1), b.reshape(-1), fmt == RGB565,
                                              *(t if fmt == RGB565 else t * 3), out)
    assert np.array_equal(out.reshape(a.shape), _channel_tables.by_channels(a, b, fmt, op))


def _photo(seed: int) -> image.Image:
    img = image.Image(size=(37, 23))
    img._pix[...] = np.random.default_rng(seed).integers(0, 65536, img._pix.shape)
    return img


@pytest.mark.parametrize("call", ["add", "sub", "mul", "div", "min", "max", "blend"])
def test_methods_with_an_image_a_colour_and_a_mask(call, jit):
    other, mask = _photo(2), _photo(3).to_grayscale(True)
    for operand in (other, (200, 30, 90), 0x1234):
        img = _photo(1)
        want = _photo(1)._pix
        b = image.Image(size=(37, 23))
        b._pix[...] = other._pix if operand is other else img._pix * 0 + _colour(img, operand)
        op = {"add": _mathops._add, "sub": _mathops._sub, "mul": _mathops._mul, "div": _mathops._divider(False, False),
              "min": _mathops._min, "max": _mathops._max, "blend": _mathops._blender(np.float32(128) / np.float32(256))}[call]
        plain = _channel_tables.by_channels(want, b._pix, RGB565, op)
        white = mask.to_bitmap(copy=True)._pix.astype(bool)
        getattr(img, call)(operand, mask=mask)
        assert np.array_equal(img._pix, np.where(white, plain, want)), operand


def _colour(img, operand) -> int:
    from maixemu.firmware.image import _color

    return int(_color.color_value(operand, img._fmt))


def test_negate_and_gamma_are_their_channel_formulas():
    img = image.Image(size=(256, 256))
    img._pix[...] = np.arange(65536, dtype=np.uint16).reshape(256, 256)
    want = pack([m - c for c, m in zip(channels(img._pix, RGB565), MAXES[RGB565])], RGB565)
    assert np.array_equal(img.copy().negate()._pix, want)
    gray = img.to_grayscale(True)
    gray._pix[...] = np.arange(65536).reshape(256, 256) % 256
    assert np.array_equal(gray.copy().negate()._pix, 255 - gray._pix)
    luts = [np.arange(m + 1)[::-1] // 2 for m in MAXES[RGB565]]
    assert np.array_equal(_channel_tables.pointwise565(img._pix, luts),
                          pack([lut[c] for lut, c in zip(luts, channels(img._pix, RGB565))], RGB565))


@pytest.mark.parametrize("args", [(0.5, 1.2, 0.1), (1.0, 1.0, 0.0), (2.2, 0.8, -0.1), (0.0, 1.0, 0.0), (0.3, 3.0, 0.5)])
def test_gamma_corr_on_every_rgb565_value_is_its_channel_tables(args):
    img = image.Image(size=(256, 256))
    img._pix[...] = np.arange(65536, dtype=np.uint16).reshape(256, 256)
    g = np.float32(1.0) / np.float32(args[0]) if args[0] else np.float32(0)
    luts = _mathops._gamma_luts(RGB565, g, np.float32(args[1]), np.float32(args[2]))
    want = pack([lut[c] for lut, c in zip(luts, channels(img._pix, RGB565))], RGB565)
    assert np.array_equal(img.copy().gamma_corr(*args)._pix, want)
    assert np.array_equal(img.copy().gamma_corr(*args)._pix, want)  # (the kept table again)
