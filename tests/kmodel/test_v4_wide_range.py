"""Issue 14: a KPU layer whose activation table would need ~10**9 entries (the class of the
1082 M MAC V4 detectors that fell back to int64) takes an exact table-free path on every engine.

The models come from ``wide_range_v4`` (synthetic V4 files); every layer's output is held to the
int64 reference (``KpuConv.run_reference``, the document's arithmetic) layer by layer.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.kmodel import kpu as K
from maixemu.kmodel.build import encode_batchnorm
from maixemu.kmodel.v4 import load_v4
from wide_range_v4 import WIDE_SPAN, big_wide_model, wide_range_model


def reference_conv(spec) -> K.KpuConv:
    bn = np.frombuffer(encode_batchnorm(spec.bn_mul, spec.bn_add, spec.bn_shift), "<u8")
    return K.KpuConv.prepare(K.decode_registers(spec.registers()), spec.weights, bn, spec.activation.encode())


def table_free(path: str) -> bool:
    return path != "int64" and ("segments" in path or "steps" in path)


def test_wide_range_layers_are_exact_without_int64_or_tables(kpu_engine):
    data, specs = wide_range_model()
    m = load_v4(data)
    paths = [layer.details["path"] for layer in m.layers]
    assert all(table_free(p) for p in paths), paths
    if kpu_engine != "numpy":  # the compiled path: step buckets for the monotone layers
        assert "steps" in paths[0] and "segments" in paths[1] and "steps" in paths[2], paths
    rng = np.random.default_rng(3)
    for trial in range(2):
        x = rng.integers(0, 256, m.inputs[0].shape, dtype=np.uint8)
        steps = list(m.trace(x))
        prev = x[0]
        for spec, step in zip(specs, steps):
            want = reference_conv(spec).run_reference(prev)
            assert np.unique(want).size > 60  # the wide activation is exercised, not saturated
            assert np.array_equal(step.output[0], want), step.index
            prev = want
        (out,) = m.run(x)
        assert np.array_equal(out.reshape(prev.shape), prev)


def test_wide_range_tables_would_be_huge():
    """The point of the model: a table over the layers' active range is ~4x the issue's 266 M."""
    assert WIDE_SPAN > 4 * 266_000_000
    _, specs = wide_range_model()
    conv = reference_conv(specs[0])
    assert conv.table_entries < 1 << 20  # what it holds instead (step-bucket words, or nothing)


@pytest.mark.kpu_engines("numpy", "fast-u8s8", "fast-u8u8")
def test_gigamac_wide_range_model_stays_off_int64(kpu_engine):
    data, specs = big_wide_model()
    m = load_v4(data)
    macs = sum(layer.macs for layer in m.layers)
    assert macs > 1_000_000_000
    paths = [layer.details["path"] for layer in m.layers]
    assert all(table_free(p) for p in paths), paths
    if kpu_engine != "numpy":  # one run of the whole model, exact against the int64 chain
        x = np.random.default_rng(5).integers(0, 256, m.inputs[0].shape, dtype=np.uint8)
        (out,) = m.run(x)
        want = x[0]
        for spec in specs:
            want = reference_conv(spec).run_reference(want)
        assert np.array_equal(out.reshape(want.shape), want)
