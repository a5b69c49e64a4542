"""Sums of products for eval's numbers, with the same bits in every process and thread.

A BLAS dot product (``a @ b``, ``np.linalg.norm``) splits a long vector over the threads BLAS has
at that moment and rounds each part on its own, so its last bits follow the thread count: the
serial run's process (``MAIXEMU_THREADS``, default 1) and a ``--jobs`` worker or a Dask worker
(their own count) gave results.json files that differed in a digit. numpy's pairwise summation of
the products has one order for a given length, whatever the threads, the executor or the BLAS.
"""

from __future__ import annotations

import math

import numpy as np


def dot(a: np.ndarray, b: np.ndarray) -> float:
    """Σ a·b in float64 (flat arrays of the same length)."""
    return float(np.add.reduce(np.multiply(a, b, dtype=np.float64), axis=None))


def square_sum(a: np.ndarray) -> float:
    """Σ a² in float64."""
    return dot(a, a)


def norm(a: np.ndarray) -> float:
    """The Euclidean norm √Σ a²."""
    return math.sqrt(square_sum(a))
