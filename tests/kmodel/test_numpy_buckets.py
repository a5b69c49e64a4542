"""The numpy plan's wide activation tables: step buckets found from the segments, the table never built.

V4 layers (nncase v0.2) have batch-norm ranges of millions of values; the numpy plan looked them
up in tables of that many bytes, kept twice in the activation caches (ulffd_landmark: 108 MiB for
a 0.4 MiB file). ``activation.centered_step_buckets`` gives the same two-level lookup straight
from the segments; it is held here to the segments' own evaluation (``activate``), entry by entry.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.kmodel.build import Activation
from maixemu.kmodel.kpu import activation as A
from maixemu.kmodel.kpu.ram import to_centered

from conftest import shared_path


def _rising(rng: np.random.Generator) -> Activation:
    """A continuous non-decreasing activation of a few gentle segments (slopes below one step
    per 2**8 bn values, as the V4 tables that take buckets), 0 below its first start."""
    lowest = -(1 << 35)
    starts = np.sort(rng.choice(np.arange(1, 1 << 20), size=3, replace=False))
    xs = [lowest] * 12 + [0] + [int(s) for s in starts]
    ym = [0] * 12 + [int(rng.integers(1, 64)) for _ in range(4)]
    sh = [0] * 12 + [int(rng.integers(16, 20)) for _ in range(4)]
    bias = [0] * 16
    act = A.decode_activation(np.frombuffer(Activation(xs, ym, sh, bias).encode(), "<u8"))
    # biases that keep it continuous: each segment starts where the previous one ends
    for i in range(13, 16):
        end = int(A.activate(np.array([xs[i]]), act)[0])
        bias[i] = min(end, 255)
        act = A.decode_activation(np.frombuffer(Activation(xs, ym, sh, bias).encode(), "<u8"))
    return Activation(xs, ym, sh, bias)


def _lookup(buckets, span: int) -> np.ndarray:
    scale, first, step, inc = buckets if len(buckets) == 4 else (*buckets, None)
    i = np.arange(span + 1, dtype=np.float64)
    q = (i * scale).astype(np.intp)
    up = (i >= step.take(q)).astype(np.int16)
    return (first.take(q) + up * (1 if inc is None else inc.take(q))).astype(np.int8)


@pytest.mark.parametrize("seed", range(4))
def test_direct_buckets_are_the_activation(seed):
    rng = np.random.default_rng(seed)
    spec = Activation.relu(scale_shift=int(rng.integers(0, 5))) if seed % 2 == 0 else _rising(rng)
    act = A.decode_activation(np.frombuffer(spec.encode(), "<u8"))
    lo = int(rng.integers(-5000, 5000))
    hi = lo + int(rng.integers(A.BUCKET_MIN_ENTRIES, 3 * A.BUCKET_MIN_ENTRIES))
    want = to_centered(A.activate(np.arange(lo, hi + 1, dtype=np.int64), act).astype(np.uint8))
    assert np.unique(want).size > 8  # the range is not one constant
    buckets = A.centered_step_buckets(act, lo, hi)
    assert buckets is not None
    np.testing.assert_array_equal(_lookup(buckets, hi - lo), want)
    # the same buckets the table itself gives
    table = A.unit_step_buckets(to_centered(A.activation_lut(act, lo, hi)))
    assert table is not None
    np.testing.assert_array_equal(_lookup(table, hi - lo), want)


def test_steps_of_several_levels_are_buckets_too():
    """A jump of two output levels where a segment starts (10 -> 12 at bn 40001): buckets with
    increments, not a table."""
    top = [(1 << 35) - 16 + i for i in range(13)]
    spec = Activation([-(1 << 35), 0, 40_000] + top, [0, 1, 1] + [0] * 13, [0, 12, 12] + [0] * 13, [0, 0, 12] + [0] * 13)
    act = A.decode_activation(np.frombuffer(spec.encode(), "<u8"))
    lo, hi = -1000, 90_000
    want = to_centered(A.activate(np.arange(lo, hi + 1, dtype=np.int64), act).astype(np.uint8))
    buckets = A.centered_step_buckets(act, lo, hi)
    assert buckets is not None and buckets[3] is not None and buckets[3].max() == 2
    np.testing.assert_array_equal(_lookup(buckets, hi - lo), want)
    identity = A.decode_activation(np.frombuffer(Activation.identity().encode(), "<u8"))
    assert A.centered_step_buckets(identity, 0, 200) is None  # buckets narrower than _BUCKET_MIN_WIDTH


def test_v4_model_on_the_numpy_path_holds_no_wide_table(monkeypatch):
    """ulffd_landmark on the numpy plans: every wide table is buckets (it held 16 M-entry tables)."""
    monkeypatch.setenv("MAIXEMU_KPU_ENGINE", "numpy")
    from maixemu.kmodel import load_kmodel
    from maixemu.tools.emulated_cpu import _convs

    model = load_kmodel(shared_path("models", "v4", "ulffd_landmark.kmodel"))
    plans = [c._fast for c in _convs(model) if c._fast is not None]
    assert plans and any(p.buckets is not None for p in plans)
    assert all(p.lut is None or p.lut.size <= A.BUCKET_MIN_ENTRIES for p in plans)
