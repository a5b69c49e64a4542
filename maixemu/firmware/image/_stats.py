"""``get_statistics`` / ``get_histogram`` and their result objects (OpenMV semantics: gray values
for grayscale images, L/A/B for RGB565 through the firmware's LAB table)."""

from __future__ import annotations

import numpy as np

from . import _args, _lab
from ._core import GRAYSCALE


class StatsMixin:
    def _stat_channels(self, args, kwargs) -> list[np.ndarray]:
        thresholds = _args.pick(args, 0, kwargs, "thresholds", None)
        invert = bool(_args.to_int(_args.pick(args, 1, kwargs, "invert", False)))
        x, y, w, h = _args.roi(self.width(), self.height(), _args.pick(args, 2, kwargs, "roi", None))
        pix = self._pix[y:y + h, x:x + w]
        sel = np.ones(pix.shape, bool)
        if thresholds is not None:
            sel = np.zeros(pix.shape, bool)
            for th in _lab.parse_thresholds(thresholds, self._fmt):
                sel |= _lab.threshold_mask(pix, self._fmt, th)
            sel ^= invert
        if self._fmt == GRAYSCALE:
            return [pix[sel].astype(np.int64)]
        L, A, B = _lab.lab_of(pix)
        return [L[sel].astype(np.int64), A[sel].astype(np.int64), B[sel].astype(np.int64)]

    def get_statistics(self, *args, **kwargs):
        """Mean/median/mode/stdev/min/max/quartiles of gray or L, A, B (OpenMV statistics object)."""
        chans = self._stat_channels(args, kwargs)
        return Statistics([_channel_stats(c, lo) for c, lo in zip(chans, (0, -128, -128))] if len(chans) == 3
                          else [_channel_stats(chans[0], 0)])

    def get_stats(self, *args, **kwargs):
        return self.get_statistics(*args, **kwargs)

    def statistics(self, *args, **kwargs):
        return self.get_statistics(*args, **kwargs)

    def get_histogram(self, *args, **kwargs):
        """Normalised histograms (gray: 256 bins; RGB565: L 101, A 256, B 256 bins)."""
        chans = self._stat_channels(args, kwargs)
        if len(chans) == 1:
            return Histogram([(chans[0], 0, 255)])
        return Histogram([(chans[0], 0, 100), (chans[1], -128, 127), (chans[2], -128, 127)])

    def get_hist(self, *args, **kwargs):
        return self.get_histogram(*args, **kwargs)

    def histogram(self, *args, **kwargs):
        return self.get_histogram(*args, **kwargs)


def _channel_stats(v: np.ndarray, lo: int) -> dict:
    if v.size == 0:
        return dict(mean=0, median=0, mode=0, stdev=0, min=0, max=0, lq=0, uq=0)
    s = np.sort(v)
    n = s.size
    vals, counts = np.unique(s, return_counts=True)
    return dict(mean=int(s.mean()), median=int(s[n // 2]), mode=int(vals[np.argmax(counts)]),
                stdev=int(s.std()), min=int(s[0]), max=int(s[-1]), lq=int(s[n // 4]), uq=int(s[(3 * n) // 4]))


class Statistics:
    """OpenMV ``statistics``: gray images fill the l_* values; tuple order as OpenMV's."""

    _keys = ("mean", "median", "mode", "stdev", "min", "max", "lq", "uq")

    def __init__(self, chans: list[dict]):
        self._c = chans + [dict.fromkeys(self._keys, 0)] * (3 - len(chans))

    def _tuple(self):
        return tuple(c[k] for c in self._c for k in self._keys)

    def __getitem__(self, i):
        return self._tuple()[i]

    def __len__(self):
        return 24

    def __repr__(self):
        parts = []
        for prefix, c in zip(("l_", "a_", "b_"), self._c):
            parts += [f'"{prefix}{k}":{c[k]}' for k in self._keys]
        return "{" + ", ".join(parts) + "}"


for _i, _p in enumerate(("l_", "a_", "b_")):
    for _k in Statistics._keys:
        setattr(Statistics, _p + _k, (lambda i, k: (lambda self: self._c[i][k]))(_i, _k))
for _k in Statistics._keys:
    setattr(Statistics, _k, (lambda k: (lambda self: self._c[0][k]))(_k))


class Histogram:
    def __init__(self, chans: list[tuple[np.ndarray, int, int]]):
        self._raw = chans
        self._bins = []
        for v, lo, hi in chans:
            counts = np.bincount(v - lo, minlength=hi - lo + 1)[: hi - lo + 1].astype(np.float64)
            tot = counts.sum()
            self._bins.append((counts / tot if tot else counts).tolist())

    def bins(self):
        return self._bins[0]

    def l_bins(self):
        return self._bins[0]

    def a_bins(self):
        return self._bins[1] if len(self._bins) > 1 else []

    def b_bins(self):
        return self._bins[2] if len(self._bins) > 2 else []

    def get_percentile(self, percentile):
        p = _args.to_float(percentile)
        vals = []
        for (v, lo, hi), bins in zip(self._raw, self._bins):
            c = np.cumsum(bins)
            idx = int(np.searchsorted(c, p)) if c.size else 0
            vals.append(lo + min(idx, hi - lo))
        return _Percentile(vals)

    def get_threshold(self):
        """Otsu threshold per channel."""
        vals = []
        for (v, lo, hi), bins in zip(self._raw, self._bins):
            b = np.asarray(bins)
            levels = np.arange(b.size)
            best, best_t = -1.0, 0
            for t in range(1, b.size):
                w0, w1 = b[:t].sum(), b[t:].sum()
                if w0 == 0 or w1 == 0:
                    continue
                m0 = (levels[:t] * b[:t]).sum() / w0
                m1 = (levels[t:] * b[t:]).sum() / w1
                var = w0 * w1 * (m0 - m1) ** 2
                if var > best:
                    best, best_t = var, t
            vals.append(lo + best_t)
        return _Percentile(vals)

    def get_statistics(self):
        return Statistics([_channel_stats(v, lo) for v, lo, hi in self._raw])


class _Percentile:
    def __init__(self, vals):
        self._v = list(vals) + [0] * (3 - len(vals))

    def value(self):
        return self._v[0]

    def l_value(self):
        return self._v[0]

    def a_value(self):
        return self._v[1]

    def b_value(self):
        return self._v[2]

    def __getitem__(self, i):
        return tuple(self._v)[i]

    def __repr__(self):
        return f'{{"l_value":{self._v[0]}, "a_value":{self._v[1]}, "b_value":{self._v[2]}}}'
