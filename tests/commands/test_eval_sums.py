"""eval's numbers have the same bits whatever BLAS's thread count at the moment: the serial run's
process and a ``--jobs`` or Dask worker have different counts (and a BLAS dot product splits a
long vector over its threads, each part rounded on its own), so a results.json made serially and
one made in processes differed in a digit (CI: ``test_layers_results_are_identical_serial_and_in_processes``)."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.evaluate.compare import compare_output
from maixemu.evaluate.layers import LayerMatch, _pearson, layer_sums
from maixemu.evaluate.sums import dot, norm, square_sum
from maixemu.kmodel.kpu import blas

pytest.importorskip("threadpoolctl")

#: long enough for any BLAS to split a dot product over its threads
N = 1 << 20


def _under_each_thread_count(compute):
    results = []
    for threads in (1, 2, 4):
        with blas.process_threads(threads):
            results.append(compute())
    return results


def test_layer_sums_and_correlations_do_not_follow_the_blas_threads():
    rng = np.random.default_rng(7)
    q = rng.integers(0, 256, N).astype(np.uint8)
    f = (q.astype(np.float32) * 0.05 - 3.0 + rng.normal(0, 0.2, N)).astype(np.float32)
    match = LayerMatch(0, "kpu_conv2d", (1, 16, 256, 256), "7", "conv", "CONV_2D", "same", 0.05, -3.0, True, 0.99, 0.1)
    first, *others = _under_each_thread_count(lambda: (layer_sums(match, q, f), _pearson(q.astype(np.float64), f.astype(np.float64))))
    assert all(o == first for o in others)


def test_output_comparison_does_not_follow_the_blas_threads():
    rng = np.random.default_rng(8)
    k = rng.normal(0, 2, N).astype(np.float32)
    r = (k + rng.normal(0, 0.1, N)).astype(np.float32)
    first, *others = _under_each_thread_count(lambda: compare_output(k, r)["cosine"])
    assert all(o == first for o in others)


def test_the_sums_are_the_float64_sums_of_products():
    assert dot(np.arange(5.0), np.arange(5.0)) == square_sum(np.arange(5.0)) == 30.0
    assert norm(np.array([3.0, 4.0])) == 5.0
    assert dot(np.array([], np.float64), np.array([], np.float64)) == 0.0
    assert dot(np.full(3, 0.5, np.float32), np.full(3, 2.0)) == 3.0  # float32 in, float64 sums
