"""find_blobs' fast forms give the answers of the forms they replaced, bit for bit.

* the regions: the compiled span fill (``_blob_regions._grow``), the same statements run as Python
  (``__wrapped__``) and OpenCV's connected-component labelling (the path without numba) grow the
  same regions in the same order and claim the same pixels, over random images, ROIs, strides,
  several thresholds and ``invert``;
* the merge: the array-search merge equals the pairwise loop it replaced (kept below), with and
  without ``merge_cb`` and margins.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.firmware import image, pixformat
from maixemu.firmware.image import _blob, _blob_regions
from maixemu.firmware.image import _fmath as fm
from maixemu.firmware.image._jit import compiled, python_twin

F = np.float32
COLOURS = np.array([0x0000, 0x00F8, 0xE007, 0x1F00, 0xFFFF, 0x1084, 0x38E7], np.uint16)


def _random_case(rng, trial):
    h, w = (int(v) for v in rng.integers(1, 48, 2))
    if trial % 3 == 0:
        fmt = pixformat.RGB565
        pix = rng.choice(COLOURS, (h, w))
        ths = [(30, 100, 15, 127, 15, 127), (0, 60, -128, 127, -128, 0), (50, 100, -128, 127, -128, 127)]
    else:
        fmt = pixformat.GRAYSCALE if trial % 3 == 1 else pixformat.BINARY
        top = 255 if fmt == pixformat.GRAYSCALE else 1
        pix = np.where(rng.random((h, w)) < rng.random(), top, 0).astype(np.uint8)
        ths = [(1, 255), (0, 0), (0, 255)]
    ths = ths[: int(rng.integers(1, 4))]
    rx, ry = int(rng.integers(0, w)), int(rng.integers(0, h))
    roi = (rx, ry, int(rng.integers(1, w - rx + 1)), int(rng.integers(1, h - ry + 1)))
    return pix, fmt, ths, roi, int(rng.integers(1, 5)), int(rng.integers(1, 4)), bool(rng.integers(0, 2))


def _grow_all(pix, fmt, ths, roi, xs, ys, invert, *, use_kernel):
    grower = _blob_regions.RegionGrower(pix, fmt, roi, xs, ys, invert, use_kernel=use_kernel)
    return [grower.grow(th) for th in ths], grower.claimed.copy()


@pytest.mark.parametrize("seed", range(4))
def test_the_span_fill_the_python_twin_and_the_labelling_grow_the_same_regions(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    for trial in range(60):
        case = _random_case(rng, trial)
        labelled = _grow_all(*case, use_kernel=False)
        kernel = _grow_all(*case, use_kernel=True)
        with monkeypatch.context() as m:
            m.setattr(_blob_regions, "_grow", python_twin(_blob_regions._grow))
            python = _grow_all(*case, use_kernel=True)
        for other in (kernel, python):
            assert all(np.array_equal(a, b) for a, b in zip(labelled[0], other[0])), case
            assert np.array_equal(labelled[1], other[1]), case


def test_the_kernel_runs_compiled_when_numba_is_there():
    pytest.importorskip("numba")
    if not compiled():
        pytest.skip("MAIXEMU_NO_JIT is set")
    img = image.Image._wrap(pixformat.GRAYSCALE, np.full((8, 8), 200, np.uint8))
    assert img.find_blobs([(128, 255)], pixels_threshold=1, area_threshold=1)[0].pixels() == 64
    assert hasattr(_blob_regions._grow, "__wrapped__")


def test_a_photo_gives_the_same_blobs_with_and_without_the_kernel(monkeypatch):
    from _shared import shared_path

    path = shared_path("images", "dog.bmp")
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    from maixemu.tools import image_bench

    rgb = image_bench._read_rgb(path)
    thresholds = [(20, 100, 15, 127, -20, 127), (60, 100, -30, 10, 20, 127), (80, 100, -10, 10, -10, 10)]
    for fmt in (image.RGB565, image.GRAYSCALE):
        img = image.Image._from_rgb888(rgb, fmt)
        ths = thresholds if fmt == image.RGB565 else [(0, 60), (120, 200)]
        for kw in ({}, {"merge": True, "margin": 3}, {"x_stride": 1, "roi": (40, 30, 200, 150), "invert": True}):
            fast = [b[:] for b in img.find_blobs(ths, **kw)]
            with monkeypatch.context() as m:
                m.setattr(_blob_regions, "compiled", lambda: False)
                plain = [b[:] for b in img.find_blobs(ths, **kw)]
            assert fast == plain and fast


# ---------------------------------------------------------------------- merge
def _old_merge(blobs, margin, merge_cb):
    """The pairwise merge the array search replaced."""
    while True:
        merged = False
        out = []
        pending = list(blobs)
        while pending:
            a = pending.pop(0)
            keep = []
            for b in pending:
                bx, by, bw, bh = b.rect()
                grown = (max(min(bx - margin, 32767), -32768), max(min(by - margin, 32767), -32768),
                         max(min(bw + 2 * margin, 32767), 0), max(min(bh + 2 * margin, 32767), 0))
                if _blob._overlap(a.rect(), grown) and (merge_cb is None or merge_cb(a, b)):
                    a = _old_fold(a, b)
                    merged = True
                else:
                    keep.append(b)
            pending = keep
            out.append(a)
        blobs = out
        if not merged:
            return blobs


def _old_fold(a, b):
    ax, ay, aw, ah = a.rect()
    bx, by, bw, bh = b.rect()
    x1, y1 = min(ax, bx), min(ay, by)
    x2, y2 = max(ax + aw, bx + bw), max(ay + ah, by + bh)
    pa, pb = a.pixels(), b.pixels()
    p = pa + pb
    s = (fm.sinf(a.rotation()) * F(pa) + fm.sinf(b.rotation()) * F(pb)) / F(p)
    c = (fm.cosf(a.rotation()) * F(pa) + fm.cosf(b.rotation()) * F(pb)) / F(p)
    i16 = _blob._int16
    return _blob.Blob(i16(x1), i16(y1), i16(x2 - x1), i16(y2 - y1), p & 0xFFFFFFFF,
                      i16(((a.cx() * pa + b.cx() * pb) & 0xFFFFFFFF) // p),
                      i16(((a.cy() * pa + b.cy() * pb) & 0xFFFFFFFF) // p),
                      fm.fast_atan2f(F(s), F(c)), a.code() | b.code(), min(a.count() + b.count(), 0xFFFF))


def _random_blobs(rng, n, extent):
    out = []
    for _ in range(n):
        x, y = (int(v) for v in rng.integers(-20, extent, 2))
        w, h = (int(v) for v in rng.integers(0, extent // 4, 2))
        out.append(_blob.Blob(x, y, w, h, int(rng.integers(1, 5000)), x + w // 2, y + h // 2,
                              float(F(rng.uniform(0, np.pi))), 1 << int(rng.integers(0, 16)), 1))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_array_merge_equals_the_pairwise_merge(seed):
    rng = np.random.default_rng(100 + seed)
    callbacks = [None, lambda a, b: a.pixels() % 3 != b.pixels() % 3, lambda a, b: b.code() & 0x5555 != 0]
    for trial in range(40):
        blobs = _random_blobs(rng, int(rng.integers(0, 40)), int(rng.choice([40, 200, 1000])))
        margin = int(rng.choice([0, 0, 2, 10, -3, 40000]))
        cb = callbacks[trial % 3]
        assert [b[:] for b in _blob._merge(blobs, margin, cb)] == [b[:] for b in _old_merge(blobs, margin, cb)]


def test_merge_cb_sees_the_grown_head_in_the_firmwares_order():
    calls = []

    def cb(a, b):
        calls.append((a[:], b[:]))
        return b.pixels() != 7

    blobs = [_blob.Blob(0, 0, 10, 10, 5, 5, 5, 0.0, 1, 1), _blob.Blob(5, 5, 10, 10, 7, 9, 9, 0.0, 1, 1),
             _blob.Blob(12, 12, 5, 5, 3, 14, 14, 0.0, 2, 1), _blob.Blob(8, 8, 3, 3, 2, 9, 9, 0.0, 4, 1)]
    old_calls = []

    def old_cb(a, b):
        old_calls.append((a[:], b[:]))
        return b.pixels() != 7

    assert [b[:] for b in _blob._merge(blobs, 0, cb)] == [b[:] for b in _old_merge(blobs, 0, old_cb)]
    assert calls == old_calls and len(calls) >= 3
