"""The colour-conversion tables, checked on every one of the 65536 RGB565 values.

Three independent references per table:

* the generator formulas (OpenMV ``tools/gen_rgb2yuv.py`` / ``gen_rgb2lab.py`` as documented in
  ``yuv_tab.c`` / ``lab_tab.c``), evaluated here value by value with Python's ``math`` in double
  precision: Y = floor(0.299 R + 0.587 G + 0.114 B) - 128, U/V truncated, L/A/B rounded half away
  from zero (the ``#if 0`` C variant of the Y function truncates toward zero instead; the shipped
  table, and the golden cases, are the floor);
* the golden imlib cases (``../shared/golden/imlib``: the firmware's own ``to_grayscale`` over all
  values, its LAB threshold bands, ``get_pixel`` samples);
* when the MaixPy-v1 mirror is present (developer machines), the tables as shipped in the
  firmware's C source.

Plus the consumers: every gray/LAB path of the image library reads these tables, while the LCD
driver shows gray images through its own ``gray2rgb565[g >> 2]`` table.
"""

from __future__ import annotations

import math
import re
import subprocess
from functools import lru_cache

import numpy as np
import pytest

from _shared import REPO_ROOT, SHARED_DIR
from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _color, _lab, _tables

MIRROR = REPO_ROOT.parent / ".mirror" / "sipeed+MaixPy-v1" / "repo"
GOLDEN = SHARED_DIR / "golden" / "imlib"


def _expand(p: int) -> tuple[int, int, int]:
    """rb528/g628: ``(uint8_t)((v * 255 + 15.5) / 31)`` and ``(v * 255 + 31.5) / 63``."""
    r5, g6, b5 = (p >> 3) & 31, ((p & 7) << 3) | (p >> 13), (p >> 8) & 31
    return int((r5 * 255 + 15.5) / 31), int((g6 * 255 + 31.5) / 63), int((b5 * 255 + 15.5) / 31)


def _round_half_away(x: float) -> int:
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _linear(c8: int) -> float:
    c = c8 / 255.0
    return 100.0 * (c / 12.92) if c <= 0.04045 else 100.0 * ((c + 0.055) / 1.055) ** 2.4


def _lab_f(t: float) -> float:
    return t ** (1.0 / 3.0) if t > 0.008856 else 7.787037 * t + 0.137931


@lru_cache(maxsize=1)
def reference_tables() -> tuple[np.ndarray, np.ndarray]:
    """(yuv, lab) as (65536, 3) int arrays from the generator formulas, one value at a time."""
    yuv = np.zeros((65536, 3), np.int64)
    lab = np.zeros((65536, 3), np.int64)
    for p in range(65536):
        r, g, b = _expand(p)
        yuv[p] = (math.floor(r * 0.299 + g * 0.587 + b * 0.114) - 128,
                  math.trunc(-(r * 0.168736) - (g * 0.331264) + (b * 0.5)),
                  math.trunc((r * 0.5) - (g * 0.418688) - (b * 0.081312)))
        rl, gl, bl = _linear(r), _linear(g), _linear(b)
        x = _lab_f((rl * 0.4124 + gl * 0.3576 + bl * 0.1805) / 95.047)
        y = _lab_f((rl * 0.2126 + gl * 0.7152 + bl * 0.0722) / 100.0)
        z = _lab_f((rl * 0.0193 + gl * 0.1192 + bl * 0.9505) / 108.883)
        lab[p] = (_round_half_away(116 * y) - 16, _round_half_away(500 * (x - y)), _round_half_away(200 * (y - z)))
    return yuv, lab


def test_expansion_tables_are_the_firmware_formulas():
    for p in (0, 0x00F8, 0xE007, 0x1F00, 0xFFFF, 0x1234):
        assert tuple(int(v) for v in _color.rgb565_to_888(np.uint16(p))) == _expand(p)


def test_yuv_table_all_values():
    yuv, _ = reference_tables()
    assert np.array_equal(_tables.yuv_table().astype(np.int64), yuv)
    assert np.array_equal(_tables.gray_table().astype(np.int64), yuv[:, 0] + 128)
    # the facts the golden README pins: (0, 0, 255) is gray 29, and gray is the floor
    assert int(_color.rgb565_to_gray(np.uint16(0x1F00))) == 29


def test_lab_table_all_values():
    _, lab = reference_tables()
    assert np.array_equal(_tables.lab_table().astype(np.int64), lab)
    L, A, B = _lab.lab_of(np.arange(65536, dtype=np.uint16))
    assert np.array_equal(np.stack([L, A, B], 1).astype(np.int64), lab)
    # pure green: L rounds to 88 (a floor would give 87 and miss find_blobs([(88, 100)]))
    assert int(_lab.lab_of(np.uint16(0xE007))[0]) == 88


def test_xyz_table_is_the_six_decimal_linearisation():
    t = _tables.xyz_table()
    assert t.dtype == np.float32 and t.shape == (256,)
    for v in range(256):
        assert float(t[v]) == float(np.float32(f"{_linear(v):.6f}"))
    assert float(t[255]) == 100.0 and float(t[0]) == 0.0


def test_tables_are_read_only():
    with pytest.raises(ValueError):
        _tables.gray_table()[0] = 1


# ---------------------------------------------------------------------- golden
@pytest.fixture(scope="module")
def golden():
    if not (GOLDEN / "cases.json").is_file():
        pytest.skip(f"{GOLDEN} not found (../shared absent)")
    import json

    cases = {c["id"]: c for c in json.loads((GOLDEN / "cases.json").read_text())["cases"]}
    return cases, np.load(GOLDEN / "inputs.npz"), np.load(GOLDEN / "expected.npz")


def test_gray_table_equals_the_firmware_to_grayscale_of_every_value(golden):
    cases, inputs, expected = golden
    allv = inputs["all565_256x256"].ravel()
    assert np.array_equal(np.sort(allv), np.arange(65536))
    fw = expected[cases["000_tables"]["expected"]["$array"]].ravel()
    assert np.array_equal(_tables.gray_table()[allv], fw)


def test_lab_a_bands_equal_the_firmware(golden):
    """binary([(0, 100, lo, hi)]) over every value is white exactly where lo <= A <= hi."""
    cases, inputs, expected = golden
    allv = inputs["all565_256x256"].ravel()
    A = _tables.lab_table()[allv, 1]
    for cid in ("002_tables", "004_tables", "006_tables", "008_tables"):
        lo, hi = cases[cid]["args"][0][0][2:4]
        fw = expected[cases[cid]["expected"]["$array"]].ravel() == 0xFFFF
        assert np.array_equal((A >= lo) & (A <= hi), fw), cid


# ---------------------------------------------------------------------- the C source
def _c_table(path: str, name: str) -> np.ndarray:
    try:
        text = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{path}"], check=True,
                              capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"MaixPy-v1 source not readable: {e}")
    start = text.index(name)
    body = text[text.index("{", start) + 1:text.index("};", start)]
    return np.array([float(v) if "." in v else int(v) for v in re.findall(r"-?\d+(?:\.\d+)?", body)])


@pytest.mark.skipif(not MIRROR.is_dir(), reason="the MaixPy-v1 mirror (../.mirror) is only on developer machines")
def test_tables_equal_the_firmware_source():
    base = "components/micropython/port/src/omv/img/"
    assert np.array_equal(_c_table(base + "yuv_tab.c", "yuv_table[196608]").reshape(65536, 3),
                          _tables.yuv_table())
    assert np.array_equal(_c_table(base + "lab_tab.c", "lab_table[196608]").reshape(65536, 3),
                          _tables.lab_table())
    assert np.array_equal(_c_table(base + "xyz_tab.c", "xyz_table[256]").astype(np.float32), _tables.xyz_table())
    for name, ours in (("rb528_table", _color.T5TO8), ("g628_table", _color.T6TO8),
                       ("rb825_table", _color.T8TO5), ("g826_table", _color.T8TO6)):
        assert np.array_equal(_c_table(base + "rgb2rgb_tab.c", name), ours), name


# ---------------------------------------------------------------------- consumers
def _all_values_image():
    return image.Image._wrap(pixformat.RGB565, np.arange(65536, dtype=np.uint16).reshape(256, 256).copy())


def test_every_gray_path_reads_the_yuv_table():
    gray = _tables.gray_table().reshape(256, 256)
    img = _all_values_image()
    assert np.array_equal(img.to_grayscale(copy=True)._pix, gray)
    # (r, g, b) colours on gray images: COLOR_RGB565_TO_GRAYSCALE of the packed colour
    g = image.Image(size=(4, 1)).to_grayscale(copy=True)
    g.draw_line(0, 0, 3, 0, color=(0, 0, 255))
    assert g.get_pixel(0, 0) == 29
    # in-place conversion of a frame, then the MNIST-style AI path: to_grayscale -> resize -> pix_to_ai
    img.to_grayscale()
    small = img.resize(28, 28)
    small.pix_to_ai()
    assert np.array_equal(small._ai_array()[0], small._pix)
    assert np.array_equal(np.unique(img._pix), np.unique(gray))


def test_lab_paths_read_the_lab_table():
    lab = _tables.lab_table()
    img = _all_values_image()
    stats = img.get_statistics()
    assert (stats.l_min(), stats.l_max()) == (int(lab[:, 0].min()), int(lab[:, 0].max()))
    assert (stats.a_min(), stats.a_max()) == (int(lab[:, 1].min()), int(lab[:, 1].max()))
    out = img.binary([(88, 100)], copy=True)._pix.ravel()
    assert np.array_equal(out == 0xFFFF, lab[:, 0] >= 88)


def test_lcd_shows_gray_through_the_driver_table_not_the_yuv_one():
    """lcd.display(gray image): the driver's gray2rgb565[g >> 2] (R5 = g >> 3, G6 = g >> 2), which
    is not the image library's gray -> RGB565 conversion (rb825/g826 rounding)."""
    from maixemu.firmware import lcd

    g = np.arange(256)
    shown = lcd._gray_lut()
    assert np.array_equal(shown[:, 0], _color.T5TO8[g >> 3])
    assert np.array_equal(shown[:, 1], _color.T6TO8[g >> 2])
    converted = _color.rgb565_to_888(_color.gray_to_rgb565(g.astype(np.uint8)))
    assert not np.array_equal(shown, converted)


def test_scalar_twins_of_the_fast_math_helpers_give_the_same_bits():
    """The one-value helpers the sequential finders call equal the array versions everywhere."""
    import warnings

    from maixemu.firmware.image import _fmath as fm

    rng = np.random.default_rng(0)
    special = np.array([0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 2.414213562373095, 0.4142135623730950,
                        1e30, -1e30, 3e9, -3e9], np.float32)
    vals = np.concatenate([rng.normal(0, 100, 5000).astype(np.float32), special])
    xs = np.roll(vals, 7)
    xs[::5] = 0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        pairs = [(fm.fast_atanf(vals), [fm.fast_atanf_1(v) for v in vals]),
                 (fm.fast_atan2f(vals, xs), [fm.fast_atan2f_1(y, x) for y, x in zip(vals, xs)]),
                 (fm.fast_log(np.abs(vals) + np.float32(1e-3)), [fm.fast_log_1(v) for v in np.abs(vals) + np.float32(1e-3)]),
                 (fm.fast_expf(vals / np.float32(10)), [fm.fast_expf_1(v) for v in vals / np.float32(10)])]
        for array, scalars in pairs:
            assert np.array_equal(np.asarray(array, np.float32).view(np.uint32), np.array(scalars, np.float32).view(np.uint32))
        assert [fm.ftoi(v) for v in vals * np.float32(1e7)] == fm.to_int(vals * np.float32(1e7)).tolist()
