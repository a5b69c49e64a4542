"""selective_search against the firmware's selective_search.c + omv's qsort.c (compiled from the mirror).

The proposals depend on the order the firmware's own qsort leaves equal edge weights in, on its
union-find and on float32 similarities; maixemu's port must return the same list on synthetic
scenes and on a photo, small (read directly) and large (downscaled by four).
"""

from __future__ import annotations

import numpy as np
import pytest

from _shared import shared_path
from firmware_c import ARRAY_SHIM, IMG_DIR, build, firmware_source, imlib_shim, needs_firmware_c, run, strip_includes
from maixemu.firmware import image
from maixemu.firmware.image import _color

_EXTRA = r"""
#define IMLIB_ENABLE_SELECTIVE_SEARCH
#define qsort omv_qsort
static void fb_free_all(void) { }
static int mp_plat_print;
#define mp_printf(p, ...) printf(__VA_ARGS__)
#define IMAGE_GET_RGB565_PIXEL(img, x, y) (((uint16_t *) (img)->data)[((img)->w * (y)) + (x)])
#define COLOR_R5_TO_R8(c) rb528_table[c]
#define COLOR_G6_TO_G8(c) g628_table[c]
#define COLOR_B5_TO_B8(c) rb528_table[c]
#define COLOR_RGB565_TO_R8(p) COLOR_R5_TO_R8((((p) >> 3) & 0x1F))
#define COLOR_RGB565_TO_G8(p) COLOR_G6_TO_G8(((((p) & 0x07) << 3) | ((p) >> 13)))
#define COLOR_RGB565_TO_B8(p) COLOR_B5_TO_B8((((p) >> 8) & 0x1F))
"""

_MAIN = r"""
int main(void) {
    int w, h, t, s; float a1, a2, a3;
    if (scanf("%d %d %d %d %f %f %f", &w, &h, &t, &s, &a1, &a2, &a3) != 7) return 2;
    getchar();
    image_t img = { w, h, IMAGE_BPP_RGB565, malloc(w * h * 2) };
    if (fread(img.data, 2, w * h, stdin) != (size_t) (w * h)) return 3;
    array_t *p = imlib_selective_search(&img, t, s, a1, a2, a3);
    printf("\n");
    for (int i = 0; i < array_length(p); i++) {
        rectangle_t *r = array_at(p, i);
        printf("%d %d %d %d\n", r->x, r->y, r->w, r->h);
    }
    return 0;
}
"""


@pytest.fixture(scope="module")
def firmware_selective_search(tmp_path_factory):
    source = (imlib_shim() + ARRAY_SHIM + _EXTRA + strip_includes(firmware_source(f"{IMG_DIR}/rgb2rgb_tab.c"))
              + strip_includes(firmware_source(f"{IMG_DIR}/selective_search.c")) + strip_includes(firmware_source(f"{IMG_DIR}/qsort.c"))
              + _MAIN)
    exe = build(tmp_path_factory.mktemp("selective"), "selective_search", source)

    def call(pix: np.ndarray, t=500, size=20, a1=1.0, a2=1.0, a3=1.0):
        h, w = pix.shape
        text = run(exe, f"{w} {h} {t} {size} {a1} {a2} {a3}\n".encode() + pix.astype("<u2").tobytes())
        printed, _, rects = text.partition("\n")
        return printed, [tuple(map(int, line.split())) for line in rects.splitlines() if line.strip()]

    return call


def _rgb(a: np.ndarray):
    img = image.Image(size=(a.shape[1], a.shape[0]))
    img._pix[...] = _color.rgb888_to_565(a)
    return img


def _scene(rng, h, w) -> np.ndarray:
    """Coloured rectangles on a gradient, with some noise: many segments, many equal edge weights."""
    yy, xx = np.mgrid[0:h, 0:w]
    a = np.stack([xx * 200 // w, yy * 200 // h, (xx + yy) * 100 // (w + h)], axis=-1).astype(np.float64)
    for _ in range(rng.integers(8, 20)):
        y, x = rng.integers(0, h - 4), rng.integers(0, w - 4)
        a[y:y + rng.integers(3, h // 3), x:x + rng.integers(3, w // 3)] = rng.integers(0, 256, 3)
    noise = rng.normal(0, rng.choice([0, 3, 8]), a.shape)
    return np.clip(a + noise, 0, 255).astype(np.uint8)


@needs_firmware_c
def test_selective_search_equals_the_firmwares(firmware_selective_search, capsys):
    rng = np.random.default_rng(5)
    checked = 0
    for trial in range(8):
        h, w = [(40, 60), (60, 80), (48, 64), (120, 160), (30, 30), (60, 80), (240, 320), (50, 70)][trial]
        img = _rgb(_scene(rng, h, w))
        params = [dict(), dict(t=200, size=10), dict(a1=0.5, a2=2.0, a3=1.0), dict(), dict(t=900, size=5),
                  dict(size=40), dict(), dict(t=50)][trial]
        printed, expected = firmware_selective_search(img._pix, **params)
        kw = {k: v for k, v in params.items() if k in ("t", "size")}
        args = (kw.get("t", 500), kw.get("size", 20), params.get("a1", 1.0), params.get("a2", 1.0), params.get("a3", 1.0))
        capsys.readouterr()
        got = img.selective_search(*args)
        assert got == expected, trial
        assert capsys.readouterr().out.strip() == printed.strip()
        checked += len(expected)
        print(trial, len(expected), repr(printed))
    assert checked > 40  # measured: the scenes give several proposals each


@needs_firmware_c
def test_selective_search_on_a_photo(firmware_selective_search):
    path = shared_path("images", "face_group.jpg")
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    from PIL import Image as PILImage

    a = np.asarray(PILImage.open(path).convert("RGB").resize((320, 240)))
    img = _rgb(a)
    assert img.selective_search() == firmware_selective_search(img._pix)[1]


def test_selective_search_keywords_as_the_firmware_reads_them():
    rng = np.random.default_rng(2)
    img = _rgb(_scene(rng, 40, 60))
    assert img.selective_search(a2=5.0, a3=5.0) == img.selective_search()  # a2/a3 keywords are not read
    assert img.selective_search(a1=0.5) == img.selective_search(500, 20, 0.5, 0.5, 0.5)  # a1= sets all three
    assert all(isinstance(r, tuple) and len(r) == 4 for r in img.selective_search(threshold=100, size=5))
    with pytest.raises(TypeError):
        img.selective_search(threshold=1.5)


def test_the_sort_and_segmentation_kernels_agree_with_their_python():
    from maixemu.firmware.image import _selective

    rng = np.random.default_rng(8)
    keys = np.sqrt(rng.integers(0, 30, 3000).astype(np.float32)).astype(np.float32)  # many ties
    recs = np.stack([np.arange(3000), rng.integers(0, 3000, 3000)], axis=1)
    k1, r1, k2, r2 = keys.copy(), recs.copy(), keys.copy(), recs.copy()
    _selective._qsort(k1, r1)
    _selective._qsort.__wrapped__(k2, r2)
    assert np.array_equal(k1, k2) and np.array_equal(r1, r2) and np.all(np.diff(k1) >= 0)
    assert sorted(map(tuple, r1)) == sorted(map(tuple, recs))  # a permutation of the records
    ends = rng.integers(0, 500, (3000, 2))
    p1, n1 = _selective._segment(k1, ends.copy(), 500, np.float32(3.0), 4)
    p2, n2 = _selective._segment.__wrapped__(k1, ends.copy(), 500, np.float32(3.0), 4)
    assert n1 == n2 and np.array_equal(p1, p2)


def _grouping_case(rng, n: int):
    """Segments as the grouping sees them: histograms on a coarse grid (many equal similarities,
    so the first-best-pair rule decides), positive counts, boxes, a symmetric adjacency."""
    hist = (rng.integers(0, 5, (n, 75)) / np.float32(4)).astype(np.float32)
    counts = rng.integers(1, 60, n).astype(np.int64)
    y0, x0 = rng.integers(0, 40, n), rng.integers(0, 60, n)
    regions = np.stack([y0, y0 + rng.integers(0, 20, n), x0, x0 + rng.integers(0, 20, n)], axis=1).astype(np.int64)
    adj = rng.random((n, n)) < rng.uniform(0.05, 0.6)
    adj = np.triu(adj, 1)
    adj = adj | adj.T
    return hist, counts, regions, adj


def test_the_grouping_kernel_its_twin_and_the_array_form_merge_alike():
    """``_selective_group``: the compiled kernel, its Python twin and the array form give the same
    boxes, stop alike and leave the same regions, counts, histograms and adjacency."""
    from maixemu.firmware.image import _selective_group as sg

    rng = np.random.default_rng(12)
    for trial in range(60):
        n = int(rng.integers(1, 28))
        case = _grouping_case(rng, n)
        a1, a2, a3 = (float(v) for v in rng.choice([1.0, 0.5, 2.0, -1.0], 3))
        size = int(rng.integers(200, 5000))
        states, answers = [], []
        for form in ("arrays", "kernel", "twin"):
            hist, counts, regions, adj = (v.copy() for v in case)
            if form == "arrays":
                boxes, failed = sg.group_arrays(hist, counts, regions, adj, size, a1, a2, a3)
            else:
                fn = sg._group_kernel if form == "kernel" else sg._group_kernel.__wrapped__
                boxes = np.empty((max(n - 1, 0), 4), np.int64)
                made, failed = fn(hist, counts, regions, adj, np.zeros((n, n), np.float32), size, np.float32(a1),
                                  np.float32(a2), np.float32(a3), boxes)
                boxes = boxes[:made]
            answers.append((boxes.tolist(), bool(failed)))
            states.append((hist, counts, regions, adj))
        assert answers[1] == answers[0] and answers[2] == answers[0], trial
        for other in states[1:]:
            assert all(np.array_equal(a, b) for a, b in zip(states[0], other)), trial


def test_selective_search_serves_the_array_grouping_while_the_kernel_is_not_compiled(monkeypatch):
    """What a cold start gives (the kernel answers NOT_SERVED) is what the kernel gives."""
    from maixemu.firmware.image import _jit, _selective_group as sg

    path = shared_path("images", "face_group.jpg")
    if not path.is_file():
        pytest.skip(f"{path} not found (../shared is absent)")
    from PIL import Image as PILImage

    img = _rgb(np.asarray(PILImage.open(path).convert("RGB").resize((320, 240))))
    served = img.selective_search(100, 5)
    assert len(served) > 20
    monkeypatch.setattr(sg, "_group_kernel", type("Cold", (), {"attempt": staticmethod(lambda *a: _jit.NOT_SERVED)}))
    assert img.selective_search(100, 5) == served
