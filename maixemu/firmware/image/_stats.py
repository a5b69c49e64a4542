"""``get_histogram`` / ``get_statistics`` and the histogram, statistics, percentile and threshold
objects, computed as ``omv/img/stats.c`` computes them.

The firmware builds a float32 histogram first and derives everything else from it:

* bin of a value: ``(int)((v - MIN) * ((bins - 1) / (float)(MAX - MIN)))`` (gray 0..255, L 0..100,
  A/B -128..127; defaults: one bin per value);
* with ``thresholds`` every threshold is counted separately (a pixel inside two thresholds is
  counted twice) and the counts are divided by the ROI's area, not by the number of pixels counted;
* normalised bins are ``count * (1 / (float) area)`` in float32;
* statistics walk the bins once in float32 (mean, stdev, quartiles by cumulative sums, mode =
  the first largest bin), percentiles the same way, ``get_threshold`` is Otsu's method over the
  bins and reports the *bin index* scaled back (A/B therefore come out in 0..255 stored in an
  ``int8_t``: a midpoint threshold of bin 129 reads -127, as on the device).

Results are stored in the firmware's ``uint8_t``/``int8_t`` fields and wrap like them.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from . import _args
from . import _fmath as fm
from ._core import GRAYSCALE, RGB565
from ..pixformat import BINARY
from ._lab import keyword_thresholds, threshold_mask
from ._tables import lab_table
from ._host import ImageHost

F = np.float32

#: (MIN, MAX) per channel: a bitmap's bit (``COLOR_BINARY_MIN/MAX``), gray, then L, A, B.
_BINARY_RANGE = (0, 1)
_GRAY_RANGE = (0, 255)
_LAB_RANGES = ((0, 100), (-128, 127), (-128, 127))


def _one_channel(fmt: int) -> bool:
    """BINARY and GRAYSCALE images have one (L) channel; stats.c runs the gray code on a bitmap's
    0/1 values with MAX = 1."""
    return fmt == GRAYSCALE or fmt == BINARY


def _ranges_of(fmt: int) -> list[tuple[int, int]]:
    if fmt == BINARY:
        return [_BINARY_RANGE]
    return [_GRAY_RANGE] if fmt == GRAYSCALE else list(_LAB_RANGES)


# ---------------------------------------------------------------------- the histogram core
def _bin_index(values: np.ndarray, lo: int, hi: int, bins: int) -> np.ndarray:
    # (bins - 1) / (float) (MAX - MIN): -ffast-math turns the division by a constant into a
    # multiplication by its float32 reciprocal, which puts exact multiples one bin lower
    mult = F(bins - 1) * (F(1) / F(hi - lo))
    return fm.to_int((values.astype(np.int64) - lo).astype(F) * mult)


@lru_cache(maxsize=32)
def _bins_of_values(fmt: int, channel: int, n: int) -> np.ndarray:
    """The bin of every pixel value (``_bin_index``): indexed by the byte-swapped RGB565 value for
    the L/A/B channels of an RGB565 image (through the LAB table), by the gray or bit value (256
    entries) otherwise. Read-only, cached: the histogram becomes a count of the raw values, then
    one weighted count of their bins per channel."""
    lo, hi = _ranges_of(fmt)[channel]
    if fmt == RGB565:
        values = lab_table()[:, channel].astype(np.int64)
    else:
        values = np.arange(256, dtype=np.int64)  # a gray level, or a bitmap's 0/1 (only 0, 1 occur)
    out = _bin_index(values, lo, hi, n)
    out.flags.writeable = False
    return out


def _histogram(img, roi, thresholds, invert: bool, counts: list[int]) -> list[np.ndarray]:
    """``imlib_get_histogram``: float32 normalised bins per channel. The pixels are counted by raw
    value once (weighted by how many thresholds each passes), then each channel's bins are the
    counts of the values' bins: the same integers as binning every pixel."""
    x, y, w, h = roi
    pix = img._pix[y:y + h, x:x + w]
    if thresholds:
        weight = np.zeros(pix.shape, np.int64)
        for th in thresholds:
            weight += threshold_mask(pix, img._fmt, th, invert)
    else:
        weight = None
    n_values = 65536 if img._fmt == RGB565 else 256
    per_value = np.bincount(pix.ravel().astype(np.intp), weights=None if weight is None else weight.ravel(),
                            minlength=n_values)
    scale = F(1) / F(w * h)
    out = []
    for channel, n in enumerate(counts):
        cnt = np.bincount(_bins_of_values(img._fmt, channel, n), weights=per_value, minlength=n)
        cnt = np.rint(cnt[:n]).astype(np.int64)  # exact: integer counts far below 2**53
        out.append((cnt.astype(np.uint32).astype(F) * scale).astype(F))
    return out


def _bin_counts(fmt: int, kwargs: dict) -> list[int]:
    """The ``bins`` / ``l_bins`` / ``a_bins`` / ``b_bins`` keywords (keywords only) and their checks."""
    def kw(name, default):
        return _args.to_int(kwargs[name]) if name in kwargs else default

    if _one_channel(fmt):
        bins = kw("bins", 2 if fmt == BINARY else 256)
        if bins < 2:
            raise OSError("bins must be >= 2")
        l_bins = kw("l_bins", bins)
        if l_bins < 2:
            raise OSError("l_bins must be >= 2")
        return [l_bins]
    out = []
    for name, default in (("l_bins", 101), ("a_bins", 256), ("b_bins", 256)):
        bins = kw("bins", default)
        if bins < 2:
            raise OSError("bins must be >= 2")
        n = kw(name, bins)
        if n < 2:
            raise OSError(f"{name} must be >= 2")
        out.append(n)
    return out


def _image_histogram(img, args: tuple, kwargs: dict) -> tuple[int, list[np.ndarray]]:
    """Argument parsing shared by ``get_histogram`` and ``get_statistics`` (py_image.c)."""
    if img._fmt not in (BINARY, GRAYSCALE, RGB565):
        raise OSError("Image format is not supported!")
    thresholds = keyword_thresholds(args, 0, kwargs)
    invert = bool(_args.to_int(_args.pick(args, 1, kwargs, "invert", False)))
    roi = _args.roi(img.width(), img.height(), _args.pick(args, 2, kwargs, "roi", None))
    counts = _bin_counts(img._fmt, kwargs)
    return img._fmt, _histogram(img, roi, thresholds, invert, counts)


# ---------------------------------------------------------------------- derived values
def _walk(bins: np.ndarray):
    """(count before bin i, count after bin i) as the firmware's running float32 sum gives them."""
    after = np.cumsum(bins, dtype=F)
    before = np.concatenate([np.zeros(1, F), after[:-1]])
    return before, after


def _first(cond: np.ndarray) -> int | None:
    hits = np.flatnonzero(cond)
    return int(hits[0]) if hits.size else None


def _channel_statistics(bins: np.ndarray, lo: int, hi: int) -> list[int]:
    """``imlib_get_statistics`` for one channel: [mean, median, mode, stdev, min, max, lq, uq]."""
    n = bins.size
    mult = F(hi - lo) / F(n - 1)
    value_f = (np.arange(n).astype(F) * mult + F(lo)).astype(F)
    value = fm.to_int(value_f)
    avg = np.cumsum((value_f * bins).astype(F), dtype=F)[-1]
    sq = np.cumsum((value_f * value_f * bins).astype(F), dtype=F)[-1]
    before, after = _walk(bins)

    def quantile(q: float) -> int:
        i = _first((before < F(q)) & (F(q) <= after))
        return int(value[i]) if i is not None else 0

    nz = np.flatnonzero(bins > 0)
    mode_i = _first(bins == bins.max()) if bins.size and bins.max() > 0 else None
    mean = int(fm.to_int(avg))
    stdev = int(fm.to_int(fm.fast_sqrtf(sq - avg * avg)))
    return [mean, quantile(0.5), int(value[mode_i]) if mode_i is not None else 0, stdev,
            int(value[nz[0]]) if nz.size else 0, int(value[nz[-1]]) if nz.size else 0,
            quantile(0.25), quantile(0.75)]


def _percentile_value(bins: np.ndarray, lo: int, hi: int, p: np.float32) -> int:
    n = bins.size
    mult = F(hi - lo) / F(n - 1)
    before, after = _walk(bins)
    i = _first((before < p) & (p <= after))
    return int(fm.to_int(F(i) * mult + F(lo))) if i is not None else 0


def _otsu(bins: np.ndarray) -> int:
    """``ostu()`` in stats.c: the bin with the largest between-class variance (first on ties)."""
    n = bins.size
    cdf = np.cumsum(bins, dtype=F)
    weighted = np.cumsum((np.arange(n).astype(F) * bins).astype(F), dtype=F)
    c, wc = cdf[:-1], weighted[:-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        num = (c * weighted[-1] - wc).astype(F)
        var = ((num * num) / (c * (F(1) - c))).astype(F)
    var = np.where((c != F(0)) & (c != F(1)) & ~np.isnan(var), var, F(0))
    # the firmware keeps the first bin whose variance beats the running maximum (which starts at 0)
    if var.size == 0 or not var.max() > F(0):
        return 0
    return int(np.argmax(var))


def _store(fmt: int, vals: list[list[int]]) -> list[int]:
    """The 24 (or 3) values as the firmware's uint8_t L / int8_t A, B fields hold them."""
    out: list[int] = []
    for ch, v in enumerate(vals):
        conv = fm.uint8 if ch == 0 else fm.int8
        out.extend(int(conv(x)) for x in v)
    return out


def statistics_of(fmt: int, bins: list[np.ndarray]) -> "Statistics":
    vals = [_channel_statistics(b, lo, hi) for b, (lo, hi) in zip(bins, _ranges_of(fmt))]
    flat = _store(fmt, vals)
    return Statistics(fmt, flat + [0] * (24 - len(flat)))


# ---------------------------------------------------------------------- the mixin
class StatsMixin(ImageHost):
    def get_histogram(self, *args, **kwargs):
        """``get_histogram(thresholds, invert=False, roi, bins, l_bins, a_bins, b_bins)`` -> histogram."""
        fmt, bins = _image_histogram(self, args, kwargs)
        return Histogram(fmt, [[float(v) for v in b] for b in bins])

    def get_statistics(self, *args, **kwargs):
        """``get_statistics(thresholds, invert=False, roi, bins, l_bins, a_bins, b_bins)`` -> statistics."""
        fmt, bins = _image_histogram(self, args, kwargs)
        return statistics_of(fmt, bins)

    get_hist = get_histogram
    histogram = get_histogram
    get_stats = get_statistics
    statistics = get_statistics


# ---------------------------------------------------------------------- result objects
class _FieldTuple:
    """Firmware result objects indexed like a tuple (``obj[i]``, ``obj[a:b]``); no ``len()``."""

    _type_name = "object"
    _values: list

    def __getitem__(self, index):
        vals = self._values
        if isinstance(index, slice):
            if index.step not in (None, 1):
                raise OSError("only slices with step=1 (aka None) are supported")
            return tuple(vals[index])
        i = _args.to_int(index)
        if i < 0:
            i += len(vals)
        if not 0 <= i < len(vals):
            raise IndexError(f"{self._type_name} index out of range")
        return vals[i]


_STAT_KEYS = ("mean", "median", "mode", "stdev", "min", "max", "lq", "uq")


class Statistics(_FieldTuple):
    """The firmware's ``statistics``: 24 values (L, A, B x mean, median, mode, stdev, min, max, lq,
    uq); gray images fill the L ones and read them through ``mean()`` & co."""

    _type_name = "statistics"

    def __init__(self, fmt: int, values: list[int]):
        self._fmt = fmt
        self._values = list(values)

    def __repr__(self) -> str:
        v = self._values
        if _one_channel(self._fmt):
            return "{" + ", ".join(f'"{k}":{v[i]}' for i, k in enumerate(_STAT_KEYS)) + "}"
        return "{" + ", ".join(f'"{p}{k}":{v[j * 8 + i]}' for j, p in enumerate(("l_", "a_", "b_"))
                               for i, k in enumerate(_STAT_KEYS)) + "}"


for _i, _k in enumerate(_STAT_KEYS):
    setattr(Statistics, _k, (lambda i: lambda self: self._values[i])(_i))
    for _j, _p in enumerate(("l_", "a_", "b_")):
        setattr(Statistics, _p + _k, (lambda i: lambda self: self._values[i])(_j * 8 + _i))


class Percentile(_FieldTuple):
    """``histogram.get_percentile(p)``: ``value()``/``l_value()``, ``a_value()``, ``b_value()``."""

    _type_name = "percentile"

    def __init__(self, fmt: int, values: list[int]):
        self._fmt = fmt
        self._values = list(values)

    def value(self):
        return self._values[0]

    l_value = value

    def a_value(self):
        return self._values[1]

    def b_value(self):
        return self._values[2]

    def __repr__(self) -> str:
        v = self._values
        if _one_channel(self._fmt):
            return f'{{"value":{v[0]}}}'
        return f'{{"l_value:{v[0]}", "a_value":{v[1]}, "b_value":{v[2]}}}'  # sic: the firmware's quote


class Threshold(Percentile):
    """``histogram.get_threshold()`` (Otsu): same accessors as a percentile."""

    _type_name = "threshold"

    def __repr__(self) -> str:
        v = self._values
        if _one_channel(self._fmt):
            return f'{{"value":{v[0]}}}'
        return f'{{"l_value":{v[0]}, "a_value":{v[1]}, "b_value":{v[2]}}}'


class Histogram(_FieldTuple):
    """The firmware's ``histogram``: lists of float bins (float32 values) and the derived queries."""

    _type_name = "histogram"

    def __init__(self, fmt: int, bins: list[list[float]]):
        self._fmt = fmt
        lists = [list(b) for b in bins]
        self._values = lists + [[] for _ in range(3 - len(lists))]

    def bins(self):
        return self._values[0]

    l_bins = bins

    def a_bins(self):
        return self._values[1]

    def b_bins(self):
        return self._values[2]

    def _arrays(self) -> list[np.ndarray]:
        """The bins as the firmware reads them back (``mp_obj_get_float`` -> float32)."""
        n = 1 if _one_channel(self._fmt) else 3
        return [np.array([_args.to_float(v) for v in b], dtype=F) for b in self._values[:n]]

    def _ranges(self):
        return _ranges_of(self._fmt)

    def get_percentile(self, percentile):
        p = F(_args.to_float(percentile))
        vals = [_percentile_value(b, lo, hi, p) if b.size > 1 else 0
                for b, (lo, hi) in zip(self._arrays(), self._ranges())]
        return Percentile(self._fmt, _store(self._fmt, [[v] for v in vals]) + [0] * (3 - len(vals)))

    def get_threshold(self):
        vals = []
        for b, (lo, hi) in zip(self._arrays(), self._ranges()):
            vals.append(int(fm.c_div(_otsu(b) * (hi - lo), b.size - 1)) if b.size > 1 else 0)
        return Threshold(self._fmt, _store(self._fmt, [[v] for v in vals]) + [0] * (3 - len(vals)))

    def get_statistics(self):
        return statistics_of(self._fmt, self._arrays())

    get_stats = get_statistics
    statistics = get_statistics

    def __repr__(self) -> str:
        def lst(v):
            return "[" + ", ".join(_float_text(x) for x in v) + "]"

        if _one_channel(self._fmt):
            return f'{{"bins":{lst(self._values[0])}}}'
        return (f'{{"l_bins":{lst(self._values[0])}, "a_bins":{lst(self._values[1])}, '
                f'"b_bins":{lst(self._values[2])}}}')


def _float_text(v: float) -> str:
    """A float32 value printed as MicroPython's single-precision repr does (``%g`` with 7 digits)."""
    text = f"{F(v):.7g}"
    if "." not in text and "e" not in text and "n" not in text:
        text += ".0"
    return text
