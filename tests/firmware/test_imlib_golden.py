"""The golden imlib table: every case of ``../shared/golden/imlib/cases.json`` must give the firmware's answer.

The expected values were computed by MaixPy-v1's own imlib C code (see the folder's README), so a
pass here means "the board returns this", never "we return what we returned before". Floats are
compared bitwise as float32 (MicroPython on the K210 is single precision); cases marked
``fma_sensitive`` may match either the FMA build (``expected``) or the no-FMA build
(``expected_nofma``).

Cases that do not match yet are listed in :data:`KNOWN_MISMATCH` with a short reason; each is an
``xfail(strict=True)``, so a case that starts passing fails the run until its entry is removed.
Ownership of the entries (who fixes them): the finders (find_lines / find_circles /
find_line_segments / find_rects / find_qrcodes / find_apriltags / find_template / get_regression)
belong to the helper ``imgfind``, every other group to ``imgcore``.

Run this file as a script for the per-group table (exact / total) used in issue notes::

    python tests/firmware/test_imlib_golden.py
"""

from __future__ import annotations

import json
import math
import struct
import sys
from collections import Counter
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

if __name__ == "__main__":  # run as a script: make the tests' helpers importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _shared import SHARED_DIR  # noqa: E402

GOLDEN = SHARED_DIR / "golden" / "imlib"

#: Finder groups fixed by ``imgfind``; everything else is ``imgcore``'s.
FINDER_GROUPS = frozenset({"find_lines", "find_circles", "find_line_segments", "find_rects", "find_qrcodes",
                           "find_apriltags", "find_template", "get_regression"})

#: Cases that do not give the firmware's answer yet: id -> why. Remove an entry when it passes.
KNOWN_MISMATCH: dict[str, str] = {}


# ---------------------------------------------------------------------- loading
@lru_cache(maxsize=1)
def _cases() -> list[dict]:
    path = GOLDEN / "cases.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text())["cases"]


@lru_cache(maxsize=1)
def _inputs():
    return np.load(GOLDEN / "inputs.npz")


@lru_cache(maxsize=1)
def _expected_arrays():
    return np.load(GOLDEN / "expected.npz")


def _image_of(key: str):
    """A fresh image holding an input exactly as the K210 does (RGB565 byte-swapped / gray)."""
    from maixemu.firmware import image
    from maixemu.firmware.pixformat import GRAYSCALE, RGB565

    arr = np.array(_inputs()[key])
    fmt = RGB565 if arr.dtype == np.uint16 else GRAYSCALE
    return image.Image._wrap(fmt, arr)


def _resolve(value):
    """Arguments as a script writes them: ``{"$input": KEY}`` becomes the second image."""
    if isinstance(value, dict) and "$input" in value:
        return _image_of(value["$input"])
    if isinstance(value, list):
        return [_resolve(v) for v in value]
    return value


# ---------------------------------------------------------------------- running a case
def _call(obj, name: str):
    """``obj.name()`` for result objects (methods on the device), or the attribute itself."""
    value = getattr(obj, name)
    return value() if callable(value) else value


def _seq(v) -> list:
    return [_plain(x) for x in v]


def _plain(v):
    """Python/numpy scalars and tuples as JSON-like values (tuples -> lists)."""
    if isinstance(v, (tuple, list)):
        return _seq(v)
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, np.integer):
        return int(v)
    if isinstance(v, np.floating):
        return float(v)
    return v


_LINE = ("x1", "y1", "x2", "y2", "length", "magnitude", "theta", "rho")
_FIELDS = {
    "find_blobs": ("x", "y", "w", "h", "pixels", "cx", "cy", "rotation", "code", "count"),
    "find_lines": _LINE,
    "find_line_segments": _LINE,
    "find_circles": ("x", "y", "r", "magnitude"),
}
_STAT_KEYS = ("mean", "median", "mode", "stdev", "min", "max", "lq", "uq")


def _encode_return(method: str, value):
    """The return value in the README's encoding of ``expected``."""
    if method in _FIELDS:
        return [[_plain(_call(o, f)) for f in _FIELDS[method]] for o in value]
    if method == "get_regression":
        return None if value is None else [_plain(_call(value, f)) for f in _LINE]
    if method == "get_statistics":
        return [_plain(_call(value, p + k)) for p in ("l_", "a_", "b_") for k in _STAT_KEYS]
    if method == "find_rects":
        return [{"rect": _seq(r.rect()), "magnitude": _plain(r.magnitude()), "corners": _seq(r.corners())}
                for r in value]
    if method == "find_qrcodes":
        return [{"rect": _seq(q.rect()), "corners": _seq(q.corners()), "payload": q.payload(),
                 **{k: _plain(_call(q, k)) for k in ("version", "ecc_level", "mask", "data_type", "eci")}}
                for q in value]
    if method == "find_apriltags":
        out = []
        for t in value:
            d = {"rect": _seq(t.rect())}
            for k in ("id", "family", "cx", "cy", "hamming"):
                d[k] = _plain(_call(t, k))
            d["corners"] = _seq(t.corners())
            for k in ("rotation", "decision_margin", "goodness"):
                d[k] = _plain(_call(t, k))
            d["translation"] = [_plain(_call(t, a + "_translation")) for a in "xyz"]
            d["rotations"] = [_plain(_call(t, a + "_rotation")) for a in "xyz"]
            out.append(d)
        return out
    if method == "find_template":
        return None if value is None else _seq(value)
    return _plain(value)


def _pixels(img) -> np.ndarray:
    return np.asarray(img._pix)


def run_case(case: dict):
    """What maixemu answers for ``case``, encoded as the case's ``expected`` is."""
    from maixemu.firmware import image

    method, kind = case["method"], case["result"]
    args = [_resolve(a) for a in case["args"]]
    kwargs = {k: _resolve(v) for k, v in case["kwargs"].items()}

    if kind == "ai":  # src.pix_to_ai(); dst = Image(size=(w, h)); dst.pix_to_ai(); image.fn(src, dst, T)
        fn = getattr(image, method.removeprefix("image."))
        src = _image_of(case["input"])
        w, h, matrix = args
        dst = image.Image(size=(w, h))
        if src.format() != dst.format():
            dst = dst.to_grayscale()
        src.pix_to_ai()
        dst.pix_to_ai()
        fn(src, dst, matrix, **kwargs)
        return np.array(dst._ai_array())
    if method.startswith("image."):
        fn = getattr(image, method.removeprefix("image."))
        if kind == "map":
            return [_plain(fn(v)) for v in args[0]]
        if kind == "affine_T":
            return [float(v) for v in fn(*args, **kwargs)]
        raise AssertionError(f"unknown module-function result kind {kind!r}")

    img = _image_of(case["input"])
    if method == "get_pixel_all":  # get_pixel(x, y) on every 64th RGB565 value of the all-values image
        w = img.width()
        return [_plain(img.get_pixel(v % w, v // w, **kwargs)) for v in range(0, img.width() * img.height(), 64)]

    ret = getattr(img, method)(*args, **kwargs)
    if kind == "return":
        return _encode_return(method, ret)
    if kind == "image":
        return _pixels(img)
    if kind == "return_image":
        return _pixels(ret)
    if kind == "hist":
        return [[float(v) for v in ret.l_bins()], [float(v) for v in ret.a_bins()],
                [float(v) for v in ret.b_bins()]]
    if kind.startswith("percentile:"):
        p = ret.get_percentile(float(kind.split(":", 1)[1]))
        return [p.l_value(), p.a_value(), p.b_value()]
    if kind == "otsu":
        t = ret.get_threshold()
        return [t.l_value(), t.a_value(), t.b_value()]
    raise AssertionError(f"unknown result kind {kind!r}")


# ---------------------------------------------------------------------- comparing
def _f32_bits(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def _diff(expected, actual, path: str = "") -> str | None:
    """None when equal (floats bitwise as float32), else where and how they differ."""
    where = path or "result"
    if isinstance(expected, dict) and "$array" in expected:
        exp = _expected_arrays()[expected["$array"]]
        act = np.asarray(actual)
        if act.shape != exp.shape or act.dtype != exp.dtype:
            return f"{where}: {act.dtype}{act.shape} instead of {exp.dtype}{exp.shape}"
        bad = act != exp
        if bad.any():
            first = tuple(int(i) for i in np.argwhere(bad)[0])
            return (f"{where}: {int(bad.sum())}/{bad.size} values differ, first at {first}: "
                    f"{act[first]} instead of {exp[first]}")
        return None
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{where}: {type(actual).__name__} instead of a dict"
        if set(actual) != set(expected):
            return f"{where}: keys {sorted(actual)} instead of {sorted(expected)}"
        for k in expected:
            d = _diff(expected[k], actual[k], f"{path}.{k}")
            if d:
                return d
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{where}: {actual!r} instead of a list"
        if len(actual) != len(expected):
            return f"{where}: {len(actual)} items instead of {len(expected)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            d = _diff(e, a, f"{path}[{i}]")
            if d:
                return d
        return None
    if isinstance(expected, float):
        if isinstance(actual, bool) or not isinstance(actual, (int, float)):
            return f"{where}: {actual!r} instead of float {expected!r}"
        if math.isnan(expected) and math.isnan(actual):
            return None
        if _f32_bits(float(actual)) != _f32_bits(expected):
            return f"{where}: {float(actual)!r} instead of {expected!r} (float32 bits differ)"
        return None
    if isinstance(expected, int):
        if isinstance(actual, float) or actual != expected:
            return f"{where}: {actual!r} instead of {expected!r}"
        return None
    if actual != expected:
        return f"{where}: {actual!r} instead of {expected!r}"
    return None


def mismatch(case: dict) -> str | None:
    """None if maixemu gives the firmware's answer for ``case`` (either build where FMA-sensitive)."""
    actual = run_case(case)
    d = _diff(case["expected"], actual)
    if d and case.get("fma_sensitive") and "expected_nofma" in case:
        if _diff(case["expected_nofma"], actual) is None:
            return None
    return d


# ---------------------------------------------------------------------- the tests
def _params():
    out = []
    for case in _cases():
        marks = []
        if case["id"] in KNOWN_MISMATCH:
            marks.append(pytest.mark.xfail(strict=True, reason=KNOWN_MISMATCH[case["id"]]))
        out.append(pytest.param(case, id=case["id"], marks=marks))
    return out


@pytest.mark.skipif(not (GOLDEN / "cases.json").is_file(), reason=f"{GOLDEN} not found (../shared absent)")
@pytest.mark.parametrize("case", _params())
def test_golden_case(case):
    d = mismatch(case)
    assert d is None, f"{case['id']} {case['method']}({case['args']!r:.80}, {case['kwargs']!r}): {d}"


def test_known_mismatches_are_real_cases():
    """Every KNOWN_MISMATCH id names a case (a stale entry would hide nothing and mislead)."""
    if not _cases():
        pytest.skip(f"{GOLDEN} not found (../shared absent)")
    ids = {c["id"] for c in _cases()}
    assert sorted(set(KNOWN_MISMATCH) - ids) == []


def test_comparison_is_bitwise():
    """The comparison itself: one float32 ulp, one pixel or one list item apart is a mismatch."""
    one_ulp = float(np.nextafter(np.float32(1.5), np.float32(2)))
    assert _diff(1.5, 1.5) is None
    assert _diff(1.5, one_ulp) is not None
    assert _diff(3, 3.0) is not None
    assert _diff([1, 2], [1, 2, 3]) is not None
    assert _diff({"a": [1]}, {"a": [2]}) is not None


# ---------------------------------------------------------------------- the per-group table
def group_table() -> dict[str, tuple[int, int]]:
    """group -> (exact, total) on this checkout."""
    exact: Counter = Counter()
    total: Counter = Counter()
    for case in _cases():
        total[case["group"]] += 1
        try:
            ok = mismatch(case) is None
        except Exception:  # noqa: BLE001 - a raising method is simply not exact
            ok = False
        exact[case["group"]] += ok
    return {g: (exact[g], total[g]) for g in total}


def _report_cases() -> None:
    """Each case's outcome on one line (what KNOWN_MISMATCH should hold)."""
    for case in _cases():
        try:
            d = mismatch(case)
        except Exception as e:  # noqa: BLE001
            d = f"raises {type(e).__name__}: {e}"
        print(f"{case['id']:28s} {'exact' if d is None else d[:160]}")


if __name__ == "__main__":  # pragma: no cover - a report for issue notes
    if "--cases" in sys.argv:
        _report_cases()
    table = group_table()
    for g, (e, t) in sorted(table.items()):
        print(f"{g:24s} {e:3d} / {t:3d}")
    print(f"{'total':24s} {sum(e for e, _ in table.values()):3d} / {sum(t for _, t in table.values()):3d}")
