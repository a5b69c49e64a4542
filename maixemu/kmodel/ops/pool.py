"""CPU pooling layers of V3: global average, quantized max pool, float average pool.

Windows are clipped to the input as the SDK runner does; float sums run in window order
(``ky`` then ``kx``) in float32, divided by the number of valid taps.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def global_average_pool(x: np.ndarray, channels: int, kernel_size: int) -> np.ndarray:
    """KL_GLOBAL_AVERAGE_POOL2D: per channel, sequential f32 sum of ``kernel_size`` values / size."""
    x = x.astype(F32).reshape(channels, kernel_size)
    with np.errstate(all="ignore"):
        if kernel_size == 0:
            return np.full(channels, np.nan, dtype=F32)
        s = np.add.accumulate(x, axis=1)[:, -1]
        return s / F32(kernel_size)


def _windows(in_hw, out_hw, kernel, stride, padding):
    """Per output axis: (start, k_lo, k_hi) arrays for clipped windows."""
    res = []
    for n_in, n_out, k, s, p in zip(in_hw, out_hw, kernel, stride, padding):
        o = np.arange(n_out, dtype=np.int64)
        start = o * s - p
        lo = np.maximum(0, -start)
        hi = np.minimum(k, n_in - start)
        res.append((start, lo, hi))
    return res


def _pool(x, out_hw, kernel, stride, padding, reduce):
    c, h, w = x.shape
    oh, ow = out_hw
    (ys, ylo, yhi), (xs, xlo, xhi) = _windows((h, w), (oh, ow), kernel, stride, padding)
    acc = None
    count = np.zeros((oh, ow), dtype=np.int64)
    for ky in range(kernel[0]):
        vy = (ky >= ylo) & (ky < yhi)
        iy = np.clip(ys + ky, 0, max(h - 1, 0))
        for kx in range(kernel[1]):
            vx = (kx >= xlo) & (kx < xhi)
            ix = np.clip(xs + kx, 0, max(w - 1, 0))
            valid = vy[:, None] & vx[None, :]
            if not valid.any():
                continue
            vals = x[:, iy][:, :, ix]
            acc = reduce(acc, vals, valid)
            count += valid
    return acc, count


def quantized_max_pool2d(x, out_shape, kernel, stride, padding) -> np.ndarray:
    """KL_QUANTIZED_MAX_POOL2D on u8 CHW; the max starts at 0, so an empty window gives 0."""
    c = x.shape[0]
    oh, ow = out_shape

    def red(acc, vals, valid):
        vals = np.where(valid[None], vals, 0)
        return vals if acc is None else np.maximum(acc, vals)

    if x.shape[1] == 0 or x.shape[2] == 0:
        return np.zeros((c, oh, ow), dtype=np.uint8)
    acc, _ = _pool(x.astype(np.uint8), (oh, ow), kernel, stride, padding, red)
    if acc is None:
        return np.zeros((c, oh, ow), dtype=np.uint8)
    return acc.astype(np.uint8)


def average_pool2d(x, out_shape, kernel, stride, padding) -> np.ndarray:
    """KL_AVERAGE_POOL2D on f32 CHW: f32 sum of valid taps / count (the ``act`` field is ignored)."""
    c = x.shape[0]
    oh, ow = out_shape

    def red(acc, vals, valid):
        vals = np.where(valid[None], vals, F32(0)).astype(F32)
        if acc is None:
            return vals
        with np.errstate(all="ignore"):
            return acc + vals

    if x.shape[1] == 0 or x.shape[2] == 0:
        return np.full((c, oh, ow), np.nan, dtype=F32)
    acc, count = _pool(x.astype(F32), (oh, ow), kernel, stride, padding, red)
    with np.errstate(all="ignore"):
        if acc is None:
            return np.full((c, oh, ow), np.nan, dtype=F32)
        return acc / count.astype(F32)[None]
