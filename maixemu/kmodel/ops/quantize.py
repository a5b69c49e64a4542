"""Quantisation kernels (V3 conventions: ``real = q * scale + bias``).

The device computes these in float32 one operation at a time; numpy float32 ufuncs round after
every operation exactly like that, so the outputs are bit-identical to an unfused C build.
"""

from __future__ import annotations

import numpy as np

F32 = np.float32


def round_half_away(t: np.ndarray) -> np.ndarray:
    """C ``roundf``: halves go away from zero (numpy's ``round`` is half-to-even)."""
    t64 = t.astype(np.float64)
    return np.copysign(np.floor(np.abs(t64) + 0.5), t64)


def quantize_v3(x: np.ndarray, scale: float, bias: float) -> np.ndarray:
    """KL_QUANTIZE: ``inv = 1.0f/scale``; ``q = roundf((x - bias) * inv)`` clamped to 0..255."""
    with np.errstate(all="ignore"):
        inv = F32(1.0) / F32(scale)
        t = (x.astype(F32) - F32(bias)) * inv
        r = round_half_away(t)
        r = np.nan_to_num(r, nan=0.0)
    return np.clip(r, 0, 255).astype(np.uint8)


def dequantize_v3(q: np.ndarray, scale: float, bias: float) -> np.ndarray:
    """KL_DEQUANTIZE: ``float(q) * scale + bias`` in float32 with two roundings (golden README)."""
    with np.errstate(all="ignore"):
        out = q.astype(F32) * F32(scale)
        out += F32(bias)
    return out


def channelwise_dequantize(q: np.ndarray, scales: np.ndarray, biases: np.ndarray) -> np.ndarray:
    """KL_CHANNELWISE_DEQUANTIZE: ``q`` shaped [C, channel_size]; per channel ``q*scale+bias``."""
    with np.errstate(all="ignore"):
        out = q.astype(F32) * scales.astype(F32)[:, None]
        out += biases.astype(F32)[:, None]
    return out


def requantize(q: np.ndarray, table: np.ndarray) -> np.ndarray:
    """KL_REQUANTIZE: a 256-entry u8 lookup."""
    return table[q]
