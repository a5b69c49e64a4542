"""CanMV's ``kpu_algorithm.c``: the float post-processing both ``maix.KPU`` APIs share.

Everything is single precision, as on the K210 (MicroPython floats there are C ``float``): the
activations, the L2 normalisation of a feature, the face-feature score and the licence-plate heads.
Sums run in the firmware's order (one running float32 accumulator, element by element), so results
match the device up to the last bit of ``expf``/``sqrtf`` and any fused multiply-add the compiler
chose, which the source does not pin down.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

F32 = np.float32

#: Largest feature ``run_with_output(get_feature=True)`` / ``Feat.calculate`` accept (MAX_FEATURE_LEN).
MAX_FEATURE_LEN = 256

#: The seven fully connected heads of the licence-plate recogniser (``lp_recog_process``): logits per
#: head — 31 provinces, 24 letters, then five heads of 34 letters/digits.
LP_HEAD_LOGITS = (31, 24, 34, 34, 34, 34, 34)
#: Weight counts per head as the firmware hard-codes them (WEIGHTn_LEN): logits x 1664 features.
LP_HEAD_WEIGHTS = (51584, 39936, 56576, 56576, 56576, 56576, 56576)
#: Bytes of ``lp_weight.bin``: every head's weights followed by its biases, float32.
LP_WEIGHT_BYTES = 4 * (sum(LP_HEAD_WEIGHTS) + sum(LP_HEAD_LOGITS))


def running_sum(values: np.ndarray) -> F32:
    """``float sum = 0; for (...) sum += v[i];`` — a float32 accumulator, element by element."""
    flat = np.asarray(values, dtype=F32).reshape(-1)
    if flat.size == 0:
        return F32(0.0)
    return np.cumsum(flat, dtype=F32)[-1]


def sigmoid(x: float) -> float:
    """``1.f / (1.f + expf(-x))`` with ``x`` first rounded to float (``mp_obj_get_float``)."""
    v = F32(x)
    with np.errstate(over="ignore"):
        return float(F32(1.0) / (F32(1.0) + np.exp(-v, dtype=F32)))


def softmax(values: Sequence[float]) -> list[float]:
    """``maix_kpu_helper_softmax``: subtract the maximum, ``expf``, divide by the running sum."""
    x = np.asarray([F32(v) for v in values], dtype=F32)
    if x.size == 0:
        return []
    e = np.exp(x - x.max(), dtype=F32)
    total = running_sum(e)
    return [float(v) for v in (e / total).astype(F32)]


def l2normalize(values: np.ndarray) -> np.ndarray:
    """``l2normalize``: each value over ``sqrtf`` of the running sum of squares (float32).

    A zero vector gives NaNs, as the C division by 0.0 does.
    """
    x = np.asarray(values, dtype=F32).reshape(-1)
    norm = np.sqrt(running_sum(x * x), dtype=F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x / norm).astype(F32)


def feature_score(f0: Sequence[float], f1: Sequence[float]) -> float:
    """``calCosinDistance``: ``(0.5 + 0.5 * dot) * 100`` — a 0..100 score for L2-normalised features.

    The dot product accumulates in float32; the affine step is C double arithmetic (``0.5`` is a
    double literal) and the result is returned as float.
    """
    a = np.asarray([F32(v) for v in f0], dtype=F32)
    b = np.asarray([F32(v) for v in f1], dtype=F32)
    dot = running_sum(a * b)
    return float(F32((0.5 + 0.5 * float(dot)) * 100))


def lp_recog(features: np.ndarray, weights: bytes | np.ndarray) -> list[tuple[float, ...]]:
    """``lp_recog_process``: seven fully connected heads over seven equal slices of the features.

    The firmware splits the recogniser's output into ``size // 7`` features per head and reads each
    head's weights and bias at the fixed offsets of ``lp_weight.bin``; a weight blob too short for
    those offsets would be read past its end on the device, so it is refused here.
    """
    x = np.asarray(features, dtype=F32).reshape(-1)
    w = np.frombuffer(weights, dtype="<f4") if isinstance(weights, (bytes, bytearray, memoryview)) else np.asarray(weights, dtype=F32)
    chunk = x.size // 7
    heads: list[tuple[float, ...]] = []
    offset = 0
    for head, (logits, weight_count) in enumerate(zip(LP_HEAD_LOGITS, LP_HEAD_WEIGHTS)):
        need = offset + max(logits * chunk, weight_count + logits)
        if need > w.size:
            raise ValueError(
                f"[maixemu] lp_recog head {head + 1} reads float {need} of the weight data, which has only "
                f"{w.size} ({w.size * 4} bytes; lp_weight.bin has {LP_WEIGHT_BYTES}): load the demo's lp_weight.bin"
            )
        matrix = w[offset : offset + logits * chunk].reshape(logits, chunk)
        bias = w[offset + weight_count : offset + weight_count + logits]
        products = matrix * x[head * chunk : (head + 1) * chunk][None, :]
        sums = np.cumsum(products, axis=1, dtype=F32)[:, -1] if chunk else np.zeros(logits, F32)
        heads.append(tuple(float(v) for v in (sums + bias).astype(F32)))
        offset += weight_count + logits
    return heads


__all__ = [
    "MAX_FEATURE_LEN", "LP_HEAD_LOGITS", "LP_HEAD_WEIGHTS", "LP_WEIGHT_BYTES",
    "running_sum", "sigmoid", "softmax", "l2normalize", "feature_score", "lp_recog",
]
