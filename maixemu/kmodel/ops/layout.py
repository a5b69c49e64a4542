"""Data-movement layers: TensorFlow flatten (CHW→HWC) and nearest-neighbour resize."""

from __future__ import annotations

import numpy as np


def tf_flatten(x: np.ndarray, channels: int, height: int, width: int) -> np.ndarray:
    """KL_TENSORFLOW_FLATTEN: CHW in, HWC order out (flat)."""
    return np.ascontiguousarray(x.reshape(channels, height, width).transpose(1, 2, 0)).reshape(-1)


def resize_nearest_indices(in_size: int, out_size: int) -> np.ndarray:
    """``min(floorf(o * (float)in/out), in-1)`` computed in float32 as the device does."""
    with np.errstate(all="ignore"):
        scale = np.float32(in_size) / np.float32(out_size) if out_size else np.float32(0)
        pos = np.arange(out_size, dtype=np.float32) * scale
    idx = np.floor(pos).astype(np.int64)
    return np.clip(idx, 0, max(in_size - 1, 0))


def resize_nearest(x: np.ndarray, out_h: int, out_w: int) -> np.ndarray:
    """KL_RESIZE_NEAREST_NEIGHBOR (f32) / QUANTIZED_ (u8) on CHW; ``align_corners`` is ignored."""
    c, h, w = x.shape
    iy = resize_nearest_indices(h, out_h)
    ix = resize_nearest_indices(w, out_w)
    return np.ascontiguousarray(x[:, iy][:, :, ix])
