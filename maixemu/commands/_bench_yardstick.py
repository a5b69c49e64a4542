"""The float64 matmuls ``maixemu bench`` times next to a model: the yardsticks of its ratios.

Two, because one alone is unfair at one end or the other:

* ``square_runner`` — one ``n×n @ n×n`` with about the model's MACs, at least 64³: what this
  machine's BLAS reaches on a big product. Fair to a big model; for iris (70 MACs in two layers)
  it times 262 144 MACs in one call against a model that pays two layers' per-call costs for 70,
  so its ratio says nothing (0.00 whatever the emulator does).
* ``own_shapes_runner`` — one matmul *per layer with MACs*, each of that layer's own size:
  ``[M, K] @ [K, N]`` with ``N`` the layer's output channels, ``M`` its output pixels and ``K``
  its MACs per output (taps × input channels; a depthwise layer's nine taps). The same MACs,
  the same number of calls and outputs as the model: what numpy would cost if each layer were
  one float64 product, per-call overhead included. A layer's own product times it on its own
  (``layer_seconds``), with the same clock the layer is timed with.

Neither is the emulator's work (the layers are integer products with a batch-norm, activation
and pool on top); both say how close it gets to plain BLAS on this machine, in the same run.
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from ..kmodel.kpu.blas import blas_threads


def square_runner(macs: int) -> tuple[Callable[[], object], int]:
    """A float64 ``A @ B`` with about ``macs`` MACs (at least 64³) on one BLAS thread, and its MACs."""
    n = max(64, int(round(max(macs, 1) ** (1 / 3))))
    rng = np.random.default_rng(0)
    a = rng.random((n, n))
    b = rng.random((n, n))

    def run() -> object:
        with blas_threads(1):
            return a @ b

    return run, n**3


def layer_shape(layer) -> tuple[int, int, int] | None:
    """``(M, K, N)`` of the matmul standing for a layer with MACs (None without): ``N`` the
    output's channels (dimension -3 of an image, the last of a vector or matrix), ``M`` the
    other output elements, ``K`` the MACs per output element (at least 1)."""
    macs = int(layer.macs or 0)
    if macs <= 0 or not layer.output_shapes:
        return None
    dims = [int(d) for d in layer.output_shapes[0]]
    while len(dims) > 1 and dims[0] == 1:
        dims = dims[1:]
    outputs = max(1, math.prod(dims))
    n = dims[-3] if len(dims) >= 3 else dims[-1]
    n = max(1, n)
    m = max(1, outputs // n)
    k = max(1, int(round(macs / (m * n))))
    return m, k, n


def _operands(shape: tuple[int, int, int], rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, k, n = shape
    return rng.random((m, k)), rng.random((k, n)), np.empty((m, n))


def own_shapes_runner(layers) -> tuple[Callable[[], object], int]:
    """One float64 matmul per layer with MACs, of its own shape (``layer_shape``), into
    preallocated outputs, all on one BLAS thread; and their MACs together."""
    rng = np.random.default_rng(0)
    products = [_operands(s, rng) for s in (layer_shape(layer) for layer in layers) if s is not None]
    macs = sum(a.shape[0] * a.shape[1] * b.shape[1] for a, b, _ in products)
    matmul = np.matmul

    def run() -> object:
        with blas_threads(1):
            for a, b, out in products:
                matmul(a, b, out=out)
        return None

    return run, macs


def layer_seconds(layers, runs: int, clock: Callable[[], float] = time.process_time) -> dict[int, float]:
    """Per layer with MACs (by index): the median ``clock`` seconds of its own-shape matmul,
    timed call by call as ``Model.layer_times`` times a layer."""
    rng = np.random.default_rng(0)
    out: dict[int, float] = {}
    with blas_threads(1):
        for layer in layers:
            shape = layer_shape(layer)
            if shape is None:
                continue
            a, b, c = _operands(shape, rng)
            np.matmul(a, b, out=c)
            samples = []
            for _ in range(max(runs, 1)):
                start = clock()
                np.matmul(a, b, out=c)
                samples.append(clock() - start)
            out[layer.index] = float(np.median(samples))
    return out
