"""Element-wise additions: float ADD and the integer QUANTIZED_ADD of the SDK runner."""

from __future__ import annotations

import numpy as np


def add_f32(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return a.astype(np.float32) + b.astype(np.float32)


def sdk_carry_shift(v: np.ndarray, shift: int) -> np.ndarray:
    """SDK ``kpu_carry_shift``, including its non-rounding for negative odd intermediates."""
    v = np.asarray(v, dtype=np.int64)
    if shift <= 0:
        return v
    v = v >> min(shift - 1, 63)
    odd = (v & 1) == 1
    half = v >> 1
    return np.where(odd, np.where(v < 0, half - 1, half + 1), half)


def quantized_add(
    a: np.ndarray,
    b: np.ndarray,
    in_a_offset: int,
    in_a_mul: int,
    in_a_shift: int,
    in_b_offset: int,
    in_b_mul: int,
    in_b_shift: int,
    out_offset: int,
    out_mul: int,
    out_shift: int,
) -> np.ndarray:
    """KL_QUANTIZED_ADD on u8 vectors, int64 arithmetic exactly as kmodel-v3.md §3.6."""
    a = a.astype(np.int64)
    b = b.astype(np.int64)
    sa = min(max(in_a_shift, 0), 63)
    sb = min(max(in_b_shift, 0), 63)
    if in_a_shift == in_b_shift:
        v = ((a + in_a_offset) * in_a_mul + (b + in_b_offset) * in_b_mul) >> sa
    else:
        v = (((a + in_a_offset) * in_a_mul) >> sa) + (((b + in_b_offset) * in_b_mul) >> sb)
    v = v * out_mul
    v = sdk_carry_shift(v, out_shift)
    v = v + out_offset
    return np.clip(v, 0, 255).astype(np.uint8)
