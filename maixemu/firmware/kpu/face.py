"""``kpu.face_encode`` / ``kpu.face_compare``: the firmware's int8 face features and their score."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def face_encode(feature: Sequence[float]) -> bytearray:
    values = np.asarray(list(feature), dtype=np.float64)
    if values.size > 512:
        raise ValueError("feature dim <=200\r\n")
    peak = float(np.max(np.abs(values))) if values.size else 0.0
    scale = 127.0 / peak if peak > 0 else 0.0
    quantised = np.clip(np.round(values * scale), -128, 127).astype(np.int8)
    return bytearray(quantised.tobytes())


def face_compare(a, b) -> float:
    va = np.frombuffer(bytes(a), dtype=np.int8).astype(np.float64)
    vb = np.frombuffer(bytes(b), dtype=np.int8).astype(np.float64)
    if va.size != vb.size:
        raise ValueError("compare feature must in same dim!\r\n")
    norm = math.sqrt(float(va @ va) * float(vb @ vb))
    cosine = float(va @ vb) / norm if norm else 0.0
    return (cosine / 2 + 0.5) * 100


__all__ = ["face_compare", "face_encode"]
