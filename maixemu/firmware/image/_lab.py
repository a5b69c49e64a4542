"""LAB values of pixels and colour thresholds as the firmware reads them (``py_helper_arg_to_thresholds``).

A threshold is always stored as six values ``(LMin, LMax, AMin, AMax, BMin, BMax)``: missing values
take the defaults (0, 255, -128, 127, -128, 127), L (or gray) is clamped to 0..255 and A/B to
-128..127, then each pair is sorted. An empty tuple is skipped silently; the firmware's
``COLOR_THRESHOLD_*`` tests are inclusive on both ends.
"""

from __future__ import annotations

import numpy as np

from . import _args
from ._core import GRAYSCALE
from ..pixformat import BINARY
from ._tables import lab_table

Threshold = tuple[int, int, int, int, int, int]


def lab_of(pix565: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(L, A, B) int8 arrays of byte-swapped RGB565 pixels (``COLOR_RGB565_TO_L/A/B``)."""
    t = lab_table()
    p = np.asarray(pix565, dtype=np.uint16)
    return t[p, 0], t[p, 1], t[p, 2]


from ..mp.mp_args import items_of as _seq  # noqa: E402 - mp_obj_get_array


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(min(v, hi), lo)


def parse_thresholds(thresholds, fmt: int | None = None) -> list[Threshold]:
    """``py_helper_arg_to_thresholds``: the list of 6-value thresholds (``fmt`` is not needed; kept
    for callers that pass it)."""
    out: list[Threshold] = []
    for t in _seq(thresholds):
        vals = [_args.to_int(v) for v in _seq(t)]
        if not vals:
            continue
        n = len(vals)
        l0 = _clamp(vals[0], 0, 255) if n > 0 else 0
        l1 = _clamp(vals[1], 0, 255) if n > 1 else 255
        a0 = _clamp(vals[2], -128, 127) if n > 2 else -128
        a1 = _clamp(vals[3], -128, 127) if n > 3 else 127
        b0 = _clamp(vals[4], -128, 127) if n > 4 else -128
        b1 = _clamp(vals[5], -128, 127) if n > 5 else 127
        out.append((min(l0, l1), max(l0, l1), min(a0, a1), max(a0, a1), min(b0, b1), max(b0, b1)))
    return out


def keyword_thresholds(args: tuple, index: int, kwargs: dict) -> list[Threshold]:
    """``py_helper_keyword_thresholds``: the ``thresholds`` keyword, else positional ``index``, else []."""
    if "thresholds" in kwargs:
        return parse_thresholds(kwargs.pop("thresholds"))
    if len(args) > index:
        return parse_thresholds(args[index])
    return []


def threshold_mask(pix: np.ndarray, fmt: int, th: Threshold, invert: bool = False) -> np.ndarray:
    """``COLOR_THRESHOLD_BINARY/GRAYSCALE/RGB565(pixel, th, invert)`` for every pixel (bounds
    inclusive; a bitmap's 0/1 is compared with the L bounds as a gray level is)."""
    if fmt == GRAYSCALE or fmt == BINARY:
        m = (pix >= th[0]) & (pix <= th[1])
    else:
        L, A, B = lab_of(pix)
        m = (L >= th[0]) & (L <= th[1]) & (A >= th[2]) & (A <= th[3]) & (B >= th[4]) & (B <= th[5])
    return m ^ bool(invert)


def any_threshold(pix: np.ndarray, fmt: int, thresholds: list[Threshold], invert: bool = False) -> np.ndarray:
    """True where at least one threshold's (possibly inverted) test passes, as binary.c loops do."""
    out = np.zeros(np.shape(pix), bool)
    for th in thresholds:
        out |= threshold_mask(pix, fmt, th, invert)
    return out
