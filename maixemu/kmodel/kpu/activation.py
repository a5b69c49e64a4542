"""Batch-norm and activation tables (kpu-hardware.md §5.2-5.3): decoding, the exact int64
activation, and the lookup tables the fast paths use (shared and cached between layers)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import MutableMapping

import numpy as np

from ..errors import KmodelFormatError, KmodelRuntimeError
from .ram import to_centered

@dataclass(frozen=True)
class BatchNorm:
    """Per-output-channel ``norm_mul`` (s24), ``norm_add`` (s32), ``norm_shift`` (u4), int64 arrays."""

    mul: np.ndarray
    add: np.ndarray
    shift: np.ndarray


def decode_batchnorm(words: np.ndarray) -> BatchNorm:
    w = np.asarray(words, dtype=np.uint64)
    mul = (w & np.uint64(0xFFFFFF)).astype(np.int64)
    mul = np.where(mul >= 1 << 23, mul - (1 << 24), mul)
    add = ((w >> np.uint64(24)) & np.uint64(0xFFFFFFFF)).astype(np.int64)
    add = np.where(add >= 1 << 31, add - (1 << 32), add)
    shift = ((w >> np.uint64(56)) & np.uint64(0xF)).astype(np.int64)
    return BatchNorm(mul=mul, add=add, shift=shift)


@dataclass(frozen=True)
class ActivationTable:
    """16 segments: ``x_start`` (s36), ``y_mul`` (s16), ``shift`` (u8), ``bias`` (u8), int64 arrays."""

    x_start: np.ndarray
    y_mul: np.ndarray
    shift: np.ndarray
    bias: np.ndarray


def decode_activation(data: bytes | np.ndarray) -> ActivationTable:
    """Decode the 144-byte table (18 u64). Segments 8–15 take their bias from the second bias word."""
    raw = np.frombuffer(bytes(data), dtype="<u8") if not isinstance(data, np.ndarray) else np.asarray(data, dtype=np.uint64)
    if raw.size != 18:
        raise KmodelFormatError(f"activation table has {raw.size * 8} bytes, expected 144", field="activation table")
    seg = raw[:16]
    shift = (seg & np.uint64(0xFF)).astype(np.int64)
    y_mul = ((seg >> np.uint64(8)) & np.uint64(0xFFFF)).astype(np.int64)
    y_mul = np.where(y_mul >= 1 << 15, y_mul - (1 << 16), y_mul)
    xs = ((seg >> np.uint64(24)) & np.uint64((1 << 36) - 1)).astype(np.int64)
    xs = np.where(xs >= 1 << 35, xs - (1 << 36), xs)
    bias = np.frombuffer(raw[16:18].astype("<u8").tobytes(), dtype=np.uint8).astype(np.int64)
    return ActivationTable(x_start=xs, y_mul=y_mul, shift=shift, bias=bias)


def round_shift(t: np.ndarray, s: np.ndarray) -> np.ndarray:
    """nncase's banker-style ``round_shift`` (kpu-hardware.md §5.3), int64, vectorised.

    ``s`` is clamped to 60; for the |t| < 2**59 the KPU can produce that changes nothing.
    """
    t = np.asarray(t, dtype=np.int64)
    s = np.minimum(np.asarray(s, dtype=np.int64), 60)
    s1 = np.maximum(s, 1)
    q = t >> s1
    f = t & ((np.int64(1) << s1) - 1)
    half = np.int64(1) << (s1 - 1)
    sign = np.where(t < 0, -1, 1)
    r = np.where(f < half, q, np.where(f > half, q + sign, np.where(q & 1, q + sign, q)))
    return np.where(s == 0, t, r)


def activate(bn: np.ndarray, act: ActivationTable) -> np.ndarray:
    """Exact activation (kpu-hardware.md §5.3) of an int64 array → int64 values 0..255.

    Raises KmodelRuntimeError if some value lies at or below every ``x_start``.
    """
    bn = np.asarray(bn, dtype=np.int64)
    idx = np.full(bn.shape, -1, dtype=np.int64)
    for i in range(16):
        idx[bn > act.x_start[i]] = i
    if (idx < 0).any():
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start")
    t = (bn - act.x_start[idx]) * act.y_mul[idx]
    r = round_shift(t, act.shift[idx]) + act.bias[idx]
    return np.clip(r, 0, 255)


def _round_shift_int(t: int, s: int) -> int:
    if s == 0:
        return t
    q = t >> s
    f = t & ((1 << s) - 1)
    half = 1 << (s - 1)
    sign = -1 if t < 0 else 1
    if f < half:
        return q
    if f > half:
        return q + sign
    return q + sign if q & 1 else q


def _activate_scalar(bn: int, act: ActivationTable) -> int:
    """Python-int version of :func:`activate` for one value (used for bisection at load time)."""
    xs = act.x_start
    idx = -1
    for i in range(16):
        if bn > int(xs[i]):
            idx = i
    if idx < 0:
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start")
    t = (bn - int(xs[idx])) * int(act.y_mul[idx])
    r = _round_shift_int(t, min(int(act.shift[idx]), 60)) + int(act.bias[idx])
    return min(max(r, 0), 255)


#: Tables shared by the layers that hold them, weakly: a table outlived its models (and a second
#: load of a model found its tables already built, so ``maixemu bench`` counted none of them).
_LUT_CACHE: "MutableMapping[tuple, np.ndarray]" = weakref.WeakValueDictionary()
#: Bound its bytes too, not only its entry count (V4 tables reach 16 MB).
_LUT_CACHE_MAX_BYTES = 64 << 20
_LUT_CACHE_BYTES = 0
#: Table entries computed per numpy pass (bounds the int64 temporaries to a few MB).
_LUT_PIECE = 1 << 18


#: Tables between these sizes (bytes) are streamed into cache before a lookup pass that makes
#: at least ``size / _LUT_PREFETCH_PER`` lookups. Measured: the 254 KiB tables of the V3
#: models and the 0.5-8 MiB tables of the V4 ones (which then come from L3, not DRAM) both gain.
_LUT_PREFETCH_MIN = 32 << 10
_LUT_PREFETCH_MAX = 16 << 20
_LUT_PREFETCH_PER = 64
#: (weak: a table lives as long as a layer holds it, see ``_LUT_CACHE``)
_CENTERED_CACHE: "MutableMapping[tuple, np.ndarray]" = weakref.WeakValueDictionary()
_CENTERED_CACHE_BYTES = 0


def _live_bytes(cache: "MutableMapping[tuple, np.ndarray]") -> int:
    """Bytes of the tables a cache still holds (a weak cache forgets the dead ones itself)."""
    return sum(v.nbytes for v in list(cache.values()))


def _centered_lut(act: ActivationTable, lo: int, hi: int) -> np.ndarray:
    """``to_centered(activation_lut(...))``, one shared read-only array per table: layers with
    the same activation and range (most of a model's) then look up in the same cached memory
    instead of each evicting the other's copy. Bounded like the ``activation_lut`` cache."""
    global _CENTERED_CACHE_BYTES
    key = (act.x_start.tobytes(), act.y_mul.tobytes(), act.shift.tobytes(), act.bias.tobytes(), lo, hi)
    hit = _CENTERED_CACHE.get(key)
    if hit is not None:
        return hit
    lut = to_centered(activation_lut(act, lo, hi))
    lut.flags.writeable = False
    if len(_CENTERED_CACHE) > 64 or _live_bytes(_CENTERED_CACHE) + lut.nbytes > _LUT_CACHE_MAX_BYTES:
        _CENTERED_CACHE.clear()
        _CENTERED_CACHE_BYTES = 0
    _CENTERED_CACHE[key] = lut
    _CENTERED_CACHE_BYTES += lut.nbytes
    return lut


def activation_lut(act: ActivationTable, lo: int, hi: int) -> np.ndarray:
    """``activate(arange(lo, hi+1))`` as uint8, built segment by segment (cached per table).

    A table can have 16 M entries but at most 256 different values per segment, so it is not
    computed entry by entry: where ``y_mul >= 0`` a segment's output is a non-decreasing step
    function of bn whose steps ``_rising_steps`` finds exactly from the rounding's thresholds,
    and the table is filled as runs. Only a falling segment (``y_mul < 0``, whose rounding is
    not monotone) is evaluated entry by entry, and only where it is not clipped to 0.
    """
    key = (act.x_start.tobytes(), act.y_mul.tobytes(), act.shift.tobytes(), act.bias.tobytes(), lo, hi)
    hit = _LUT_CACHE.get(key)
    if hit is not None:
        return hit
    out = np.empty(hi - lo + 1, dtype=np.uint8)
    xs = [int(v) for v in act.x_start]
    covered = 0
    for i in range(16):
        d_lo = max(xs[i] + 1, lo)
        d_hi = min(min(xs[i + 1 :], default=hi), hi)
        if d_lo > d_hi:
            continue
        sh = min(int(act.shift[i]), 60)
        y, bias = int(act.y_mul[i]), int(act.bias[i])
        part = out[d_lo - lo : d_hi - lo + 1]
        if y >= 0:
            part[:] = np.repeat(_LEVELS, np.diff(_rising_steps(xs[i], y, sh, bias, d_lo, d_hi)))
        else:
            _falling_segment(part, xs[i], y, sh, bias, d_lo, d_hi)
        covered += d_hi - d_lo + 1
    if covered != hi - lo + 1:  # (the domains of the segments picked are disjoint)
        raise KmodelRuntimeError("a KPU batch-norm value lies below every activation segment start")
    global _LUT_CACHE_BYTES
    if len(_LUT_CACHE) > 64 or _live_bytes(_LUT_CACHE) + out.nbytes > _LUT_CACHE_MAX_BYTES:
        _LUT_CACHE.clear()
        _LUT_CACHE_BYTES = 0
    _LUT_CACHE[key] = out
    _LUT_CACHE_BYTES += out.nbytes
    return out


_LEVELS = np.arange(256, dtype=np.uint8)
_K_LEVELS = np.arange(1, 256, dtype=np.int64)


def _rising_steps(x0: int, y: int, s: int, bias: int, d_lo: int, d_hi: int) -> np.ndarray:
    """The run boundaries of a segment with ``y_mul = y >= 0`` on bn in ``[d_lo, d_hi]``:
    ``[d_lo, p_1, ..., p_255, d_hi + 1]`` where ``p_v`` (clamped to the domain) is the smallest
    bn whose output is at least ``v``, so output ``v`` fills ``[p_v, p_v+1)``.

    On the segment ``t = (bn − x0)·y > 0`` and ``round_shift(t, s)`` is round-half-to-even of
    ``t / 2**s``: it reaches ``k`` from ``t = k·2**s − 2**(s−1)`` (``+1`` for odd ``k``, whose
    tie rounds down to the even ``k−1``); ``s = 0`` is ``t`` itself. Output ``v`` (1..255) needs
    ``round_shift(t, s) >= v − bias``, i.e. ``bn >= x0 + ceil(T(v − bias) / y)``.
    """
    if y == 0:  # t = 0: the output is clip(bias) over the whole segment
        p = np.where(_K_LEVELS <= bias, d_lo, d_hi + 1)
    else:
        if s <= 50:  # |k| < 2**8, so k·2**s and the quotients below fit int64
            k = _K_LEVELS - bias
            t = k << s if s == 0 else (k << s) - (1 << (s - 1)) + (k & 1)
            p = x0 - ((-t) // y)  # x0 + ceil(t / y), exact in int64
        else:
            ks = [v - bias for v in range(1, 256)]
            p = np.array([x0 - ((-(((k << s) - (1 << (s - 1)) + (k & 1)))) // y) for k in ks], dtype=object)
        p = np.clip(p, d_lo, d_hi + 1).astype(np.int64)
    return np.concatenate(([d_lo], p, [d_hi + 1]))


def _falling_segment(part: np.ndarray, x0: int, y: int, s: int, bias: int, d_lo: int, d_hi: int) -> None:
    """Fill ``part`` (bn ``d_lo..d_hi``) for a segment with ``y_mul = y < 0``, entry by entry
    where the output can be above 0. There ``t = (bn − x0)·y < 0`` and ``round_shift(t, s)`` is
    below ``t / 2**s + 1``, so from ``t <= −(bias + 1)·2**s`` on the output is 0."""
    zero_from = x0 - ((-((bias + 1) << s)) // -y)  # x0 + ceil((bias + 1)·2**s / |y|)
    end = min(d_hi, zero_from - 1)
    part[max(end - d_lo + 1, 0) :] = 0
    for p_lo in range(d_lo, end + 1, _LUT_PIECE):
        # in pieces: the int64 temporaries of a 16M-entry table would otherwise take ~1 GB
        p_hi = min(p_lo + _LUT_PIECE - 1, end)
        bn = np.arange(p_lo, p_hi + 1, dtype=np.int64)
        r = round_shift((bn - x0) * y, np.int64(s)) + bias
        part[p_lo - d_lo : p_hi - d_lo + 1] = np.clip(r, 0, 255)


#: Tables bigger than this (entries) are looked up in two levels when they allow it: a random
#: take from a multi-MiB table costs more than the five passes over small ones.
BUCKET_MIN_ENTRIES = 1 << 20
#: ... and only with buckets at least this wide (smaller ones make the bucket tables big).
_BUCKET_MIN_WIDTH = 1 << 8


def unit_step_buckets(lut: np.ndarray) -> tuple[float, np.ndarray, np.ndarray] | None:
    """A table that only ever steps up by one, with steps at least ``2**j`` apart, as buckets.

    Bucket ``q`` covers indices ``[q*2**j, (q+1)*2**j)``; it holds at most one step, so
    ``lut[i] == first[q] + (i >= step[q])`` with ``q = i >> j`` (``step[q]`` the index where the
    value goes up, +inf if it does not in that bucket). Returns ``(2**-j, first, step)`` or None.
    """
    n = lut.size
    # (a boolean "changes here" array: numpy finds its few set entries ~15x faster than those
    # of an int16 difference)
    where = np.flatnonzero(lut[1:] != lut[:-1])
    if where.size == 0 or (lut[where + 1].astype(np.int16) - lut[where] != 1).any():
        return None
    steps = where + 1  # lut[steps[k]] == lut[steps[k] - 1] + 1
    gap = int(np.diff(steps).min()) if steps.size > 1 else n
    j = min(gap, n).bit_length() - 1
    if (1 << j) < _BUCKET_MIN_WIDTH:
        return None
    width = 1 << j
    nb = (n - 1) // width + 1
    first = np.ascontiguousarray(lut[::width][:nb])
    step = np.full(nb, np.inf)
    inner = steps[steps % width != 0]  # a step at a bucket start is already in first[q]
    step[inner >> j] = inner.astype(np.float64)
    return 1.0 / width, first, step


def centered_step_buckets(act: ActivationTable, lo: int, hi: int) -> tuple[float, np.ndarray, np.ndarray, np.ndarray | None] | None:
    """The numpy plan's two-level lookup of ``to_centered(activation_lut(act, lo, hi))`` without
    building the table: ``step_buckets`` finds the steps by bisection, so a layer whose bn spans
    millions of values holds a few KiB of buckets instead of a table of that many bytes (and two
    cached copies of it: V4's wide tables made a model's working memory 100+ MiB).

    ``(2**-j, first, step, inc)``: ``value(i) = first[q] + inc[q]·(i >= step[q])``, ``q = i >> j``
    (``step`` float64, +inf where a bucket has none; ``inc`` int8, None when every step is a unit
    one, as ``unit_step_buckets`` gives). None when buckets narrower than ``_BUCKET_MIN_WIDTH``
    would be needed."""
    found = step_buckets(act, lo, hi)
    if found is None:
        return None
    j, first, inc, at = found
    if (1 << j) < _BUCKET_MIN_WIDTH:
        return None
    step = np.where(inc > 0, at, np.inf).astype(np.float64)
    return 2.0**-j, to_centered(first), step, None if (inc <= 1).all() else inc.astype(np.int8)


@dataclass(frozen=True)
class SegmentTable:
    """The activation as intervals of bn for direct evaluation (no lookup table).

    For ``bp[j] < bn <= bp[j+1]`` the segment the device picks (the last ``i`` with
    ``bn > x_start[i]``) is fixed, so interval ``j`` carries that segment's ``x_start``,
    ``y_mul``, ``shift`` (clamped to 60, as ``round_shift``) and ``bias``; ``bn <= bp[0]`` lies
    below every segment start. All int64 arrays of the same length.
    """

    bp: np.ndarray
    sx: np.ndarray
    sm: np.ndarray
    ss: np.ndarray
    sb: np.ndarray


def segment_table(act: ActivationTable, lo: int | None = None, hi: int | None = None) -> SegmentTable:
    """The whole activation, or (``lo``/``hi`` given, ``lo`` above the first segment start) only
    the intervals that meet ``[lo, hi]``: the first kept one then starts at ``bp[0] = lo − 1``."""
    xs = [int(v) for v in act.x_start]
    bps = sorted(set(xs))
    chosen = [max(i for i in range(16) if xs[i] <= bp) for bp in bps]
    if lo is not None and hi is not None:
        keep = [j for j in range(len(bps)) if bps[j] < hi and (j + 1 == len(bps) or bps[j + 1] >= lo)]
        chosen = [chosen[j] for j in keep]
        bps = [lo - 1] + [bps[j] for j in keep[1:]]
    pick = np.array(chosen, dtype=np.int64)
    return SegmentTable(
        bp=np.array(bps, dtype=np.int64),
        sx=act.x_start[pick].astype(np.int64),
        sm=act.y_mul[pick].astype(np.int64),
        ss=np.minimum(act.shift[pick], 60).astype(np.int64),
        sb=act.bias[pick].astype(np.int64),
    )


def activate_segments(bn: np.ndarray, table: SegmentTable) -> tuple[np.ndarray, bool]:
    """``activate(bn)`` through a :class:`SegmentTable` (vectorised, exact): (uint8 values, any
    value below every segment start)."""
    bn = np.asarray(bn, dtype=np.int64)
    j = np.searchsorted(table.bp, bn, side="left") - 1
    bad = bool((j < 0).any())
    np.maximum(j, 0, out=j)
    t = (bn - table.sx[j]) * table.sm[j]
    r = round_shift(t, table.ss[j]) + table.sb[j]
    return np.clip(r, 0, 255).astype(np.uint8), bad


#: Most buckets a step table may have (see ``step_buckets``).
STEP_BUCKETS_MAX = 1 << 16


def step_buckets(act: ActivationTable, lo: int, hi: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray] | None:
    """A non-decreasing activation on ``[lo, hi]`` as buckets of ``2**j`` values, each holding at
    most one of its steps: ``act(lo + i) = first[q] + inc[q]·(i >= at[q])`` with ``q = i >> j``.

    The steps (the smallest bn of each output level above ``act(lo)``) are found by bisection,
    all levels at once with the vectorised ``activate``, so a table of millions of entries costs
    a few small passes instead of being built. Returns ``(j, first (uint8), inc, at)`` or None
    when the steps are too close together for ``STEP_BUCKETS_MAX`` buckets.
    """
    v_lo = int(activate(np.array([lo]), act)[0])
    v_hi = int(activate(np.array([hi]), act)[0])
    span = hi - lo
    levels = np.arange(v_lo + 1, v_hi + 1, dtype=np.int64)
    if levels.size == 0:  # constant: one bucket wider than the range
        return max(span, 1).bit_length(), np.array([v_lo], np.uint8), np.zeros(1, np.int64), np.full(1, 1 << 62, np.int64)
    a = np.full(levels.size, lo, dtype=np.int64)  # act(a) < level
    b = np.full(levels.size, hi, dtype=np.int64)  # act(b) >= level
    while True:
        open_ = b - a > 1
        if not open_.any():
            break
        mid = (a + b) // 2
        up = activate(mid, act) >= levels
        b = np.where(open_ & up, mid, b)
        a = np.where(open_ & ~up, mid, a)
    at_abs, counts = np.unique(b, return_counts=True)
    steps = at_abs - lo  # > 0: act(lo) < every level
    gap = int(np.diff(steps).min()) if steps.size > 1 else span + 1
    j = max(0, min(gap, span + 1).bit_length() - 1)
    width = 1 << j
    nb = span // width + 1
    if nb > STEP_BUCKETS_MAX:
        return None
    starts = np.arange(nb, dtype=np.int64) * width
    cum = np.concatenate([[0], np.cumsum(counts)])
    first = v_lo + cum[np.searchsorted(steps, starts, side="right")]
    at = np.full(nb, 1 << 62, dtype=np.int64)
    inc = np.zeros(nb, dtype=np.int64)
    inner = steps % width != 0  # a step at a bucket start is already in first[q]
    at[steps[inner] >> j] = steps[inner]
    inc[steps[inner] >> j] = counts[inner]
    return j, first.astype(np.uint8), inc, at
