"""Kmodel vs float model, one image: cosine similarity, absolute errors, top-1 agreement.

All per-image numbers are computed in float64 from the two float32 outputs (sums of products by
:mod:`.sums`: the same bits in every process), and the error
histogram uses fixed bin edges, so summing per-image histograms gives the same totals whatever
order the images came back in.
"""

from __future__ import annotations

import numpy as np

from .sums import dot, norm

#: Edges of the absolute-error histogram: 0, then 1e-6 ... 1e3 in 27 log steps, then infinity.
HIST_EDGES = np.concatenate([[0.0], np.logspace(-6, 3, 28), [np.inf]])


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a = a.reshape(-1).astype(np.float64)
    b = b.reshape(-1).astype(np.float64)
    na, nb = norm(a), norm(b)
    if na == 0.0 and nb == 0.0:
        return 1.0
    if na == 0.0 or nb == 0.0:
        return 0.0
    return float(np.clip(dot(a, b) / (na * nb), -1.0, 1.0))


def rows(values: np.ndarray) -> np.ndarray:
    """Class scores as rows: a vector is one row; (..., K) gives one row per position."""
    squeezed = values.reshape(tuple(s for s in values.shape if s != 1) or (1,))
    return squeezed.reshape(1, -1) if squeezed.ndim == 1 else squeezed.reshape(-1, squeezed.shape[-1])


def row_count(shape: tuple[int, ...]) -> int:
    """How many rows of scores :func:`rows` makes of an output of ``shape`` (1 for a class vector)."""
    squeezed = [int(s) for s in shape if s != 1] or [1]
    return 1 if len(squeezed) == 1 else int(np.prod(squeezed[:-1]))


def agreement(k: np.ndarray, r: np.ndarray) -> float:
    """Share of rows whose arg-max agrees (1.0/0.0 for a classifier's single row)."""
    kr, rr = rows(k), rows(r)
    return float(np.mean(kr.argmax(axis=1) == rr.argmax(axis=1)))


def compare_output(k: np.ndarray, r: np.ndarray) -> dict:
    diff = np.abs(k.astype(np.float64).reshape(-1) - r.astype(np.float64).reshape(-1))
    hist, _ = np.histogram(diff, bins=HIST_EDGES)
    return {
        "cosine": cosine(k, r),
        "max_abs": float(diff.max()) if diff.size else 0.0,
        "mean_abs": float(diff.mean()) if diff.size else 0.0,
        "hist": [int(v) for v in hist],
    }


def default_class_output(shapes: list[tuple[int, ...]]) -> int:
    """Which output holds class scores when the user did not say: the only one, else the one with
    the fewest values along its last axis (ULFD's (1, N, 2) face/background scores, not its boxes)."""
    if len(shapes) <= 1:
        return 0
    widths = [(s[-1] if len(s) and s[-1] >= 2 else 1 << 30, i) for i, s in enumerate(shapes)]
    return min(widths)[1]


def prediction_pairs(reference: np.ndarray, kmodel: np.ndarray) -> list[list[int]]:
    """``[float class, kmodel class, rows]`` for every pair of arg-maxes the rows give (sorted)."""
    rr, kr = rows(reference).argmax(axis=1), rows(kmodel).argmax(axis=1)
    pairs, counts = np.unique(np.stack([rr, kr], axis=1), axis=0, return_counts=True)
    return [[int(a), int(b), int(n)] for (a, b), n in zip(pairs, counts)]
