"""The choice of a layer's product (``kpu.products``) and the int8 load-time proof (``kpu.int8``).

What onnxruntime's kernels do is a fact about the host CPU and the onnxruntime build, so nothing
here asserts it. Instead an AVX2-only CPU's u8s8 kernel is *simulated*: a session whose products
add neighbouring taps in saturating 16 bits as ``vpmaddubsw`` does (on the real graph bytes, read
back with ``onnx``). Against it the probe must see the saturation, the weights' pair bound and the
proof rows must each refuse what would be wrong, and whatever is accepted must be exact; with the
real onnxruntime every product handed out must be exact, whichever kinds this CPU allows.
"""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.kmodel.kpu import int8, products

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import numpy_helper  # noqa: E402


class SaturatingSession:
    """``MatMulInteger`` as MLAS computes u8s8 without VNNI: raw ``A·B`` with each pair of
    neighbouring taps summed in saturating int16, then the zero-point corrections in int32."""

    def __init__(self, model: bytes, threads: int):
        graph = onnx.load_from_string(model).graph
        init = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
        self.b = init["B"].astype(np.int64)
        self.a_zero, self.b_zero = int(init["a_zero"]), int(init["b_zero"])
        self.signed = init["B"].dtype == np.int8

    def run(self, _names, feeds):
        a = feeds["A"].astype(np.int64)
        k = a.shape[1]
        if self.signed:
            prod = a[:, :, None] * self.b[None]  # [P, K, N]
            if k % 2:
                prod = np.concatenate([prod, np.zeros_like(prod[:, :1])], axis=1)
            pairs = np.clip(prod[:, 0::2] + prod[:, 1::2], -32768, 32767)
            raw = pairs.sum(axis=1)
        else:
            raw = a @ self.b
        y = raw - self.b_zero * a.sum(axis=1)[:, None] - self.a_zero * self.b.sum(axis=0)[None] + k * self.a_zero * self.b_zero
        return [y.astype(np.int32)]


@pytest.fixture
def saturating(monkeypatch):
    """onnxruntime sessions replaced by the simulated AVX2 kernel (the probe re-run for it)."""
    monkeypatch.setattr(int8, "_session", SaturatingSession)
    monkeypatch.setattr(int8, "_SATURATES", {})


def exact(w: np.ndarray, b_zero: int, a: np.ndarray, a_zero: int = 128) -> np.ndarray:
    return (a.astype(np.int64) - a_zero) @ (w.astype(np.int64) - b_zero)


def big_weights(rng, k=72, n=24) -> np.ndarray:
    """Full-range weights with runs of large same-sign values (a real layer's worst case)."""
    w = rng.integers(0, 256, (k, n)).astype(np.uint8)
    w[0:2, 0] = 255
    w[4:6, 1] = 0
    return w


def test_the_probe_sees_a_saturating_kernel(saturating):
    assert int8.pair_saturation("u8s8") is True
    assert int8.pair_saturation("u8u8") is False


def test_saturating_u8s8_is_refused_and_u8u8_taken(saturating):
    rng = np.random.default_rng(1)
    w = big_weights(rng)
    wf = w.astype(np.int64) - 131
    plan = products.choose(w, wf, b_zero=131, a_zero=128, xmax=128, order=products.KINDS)
    assert plan.kind == "u8u8"
    assert plan.refused and plan.refused[0].startswith("u8s8: saturates 16-bit pair sums on this CPU")
    a = rng.integers(0, 256, (300, w.shape[0])).astype(np.uint8)
    assert np.array_equal(plan.gemm(a), exact(w, 131, a))


def test_the_proof_rows_alone_catch_the_saturation(saturating, monkeypatch):
    """With the probe out of the way, the layer's own proof must find the wrong sums."""
    monkeypatch.setattr(int8, "pair_saturation", lambda kind: False)
    rng = np.random.default_rng(2)
    for trial in range(5):
        w = big_weights(rng)
        gemm, why = int8.Int8Gemm.build(w, 128, "u8s8")
        assert gemm is None
        assert why.startswith("u8s8: not exact on this CPU,") and "proof sums" in why


def test_the_proof_catches_a_saturation_that_the_all_255_row_cancels(saturating, monkeypatch):
    """255 positive and 255 negative overflowing pairs in one channel whose errors cancel exactly
    on the all-255 row (Σ of the pair sums −1: 255·(32767 − 32768) = 255·(−1)); the channel's
    sign-masked rows do not cancel."""
    monkeypatch.setattr(int8, "pair_saturation", lambda kind: False)
    w = np.full((1020, 2), 128, np.uint8)  # b = w − 128
    w[:510, 0] = 255  # b = +127: 255 pairs of +254
    w[510:, 0] = 1  # b = −127: 254 pairs of −254 ...
    w[1018, 0] = 0  # ... and one of −255
    b = w.astype(np.int64) - 128
    ones = np.full((1, 1020), 255, np.uint8)
    assert np.array_equal(_simulated(w, 128, ones), exact(w, 128, ones))  # the all-255 row alone passes
    assert b[:, 0].sum() == -1
    gemm, why = int8.Int8Gemm.build(w, 128, "u8s8")
    assert gemm is None and "not exact" in why


def _simulated(w: np.ndarray, b_zero: int, a: np.ndarray) -> np.ndarray:
    from maixemu.kmodel.kpu import onnx_graph

    b, bz = int8.b_operand(w, b_zero, "u8s8")
    return SaturatingSession(onnx_graph.matmul_integer(b, 128, bz), 1).run(None, {"A": a})[0]


def test_weights_within_the_pair_bound_keep_u8s8_on_a_saturating_cpu(saturating):
    rng = np.random.default_rng(3)
    w = rng.integers(128 - 64, 128 + 64, (90, 16)).astype(np.uint8)  # |b| <= 64: no pair can overflow
    assert int8.pair_safe(int8.b_operand(w, 128, "u8s8")[0]).all()
    plan = products.choose(w, w.astype(np.int64) - 128, b_zero=128, a_zero=128, xmax=128, order=products.KINDS)
    assert plan.kind == "u8s8" and plan.refused == []
    a = rng.integers(0, 256, (500, 90)).astype(np.uint8)
    a[:3] = 255
    assert np.array_equal(plan.gemm(a), exact(w, 128, a))


@pytest.mark.parametrize("kind", int8.INT8_KINDS)
@pytest.mark.parametrize("shape,b_zero,a_zero", [((27, 16), 120, 128), ((144, 32), 0, 128), ((300, 7), 255, 0), ((9, 1), 128, 255)])
def test_a_product_handed_out_is_exact_on_this_cpu(kind, shape, b_zero, a_zero):
    """Whatever this CPU's onnxruntime can do: ``build`` returns an exact product or a reason."""
    rng = np.random.default_rng(shape[0])
    w = rng.integers(0, 256, shape).astype(np.uint8)
    gemm, why = int8.Int8Gemm.build(w, b_zero, kind, a_zero=a_zero)
    if gemm is None:
        assert why and why.startswith(f"{kind}: ")
        return
    assert gemm.kind == kind and why is None
    a = rng.integers(0, 256, (1000, shape[0])).astype(np.uint8)
    a[0], a[1] = 255, 0
    out = np.full((1000, shape[1]), -7, np.int32)
    assert gemm(a, out) is out
    assert np.array_equal(out, exact(w, b_zero, a, a_zero))
    assert np.array_equal(gemm(a[::2]), exact(w, b_zero, a[::2], a_zero))  # a strided view


def test_the_order_comes_from_the_environment(monkeypatch):
    monkeypatch.delenv("MAIXEMU_KPU_INT8", raising=False)
    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", "u8u8, f64")
    assert products.product_order() == ("u8u8", "f64")
    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", "auto")
    assert products.product_order() == products.KINDS
    monkeypatch.setenv("MAIXEMU_KPU_INT8", "0")
    assert products.product_order() == ("f32", "f64")
    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", "u8s8")
    assert products.product_order() == ("f32", "f64")
    monkeypatch.delenv("MAIXEMU_KPU_INT8")
    monkeypatch.setenv("MAIXEMU_KPU_PRODUCTS", "int8")
    with pytest.raises(ValueError, match="MAIXEMU_KPU_PRODUCTS='int8': unknown kind 'int8'"):
        products.product_order()


def test_forced_float_kinds_and_what_they_say():
    rng = np.random.default_rng(4)
    w = rng.integers(0, 256, (64, 8)).astype(np.uint8)
    wf = w.astype(np.int64) - 100
    f32 = products.choose(w, wf, b_zero=100, a_zero=128, xmax=128, order=("f32",))
    assert f32.kind == "f32" and f32.dtype == np.float32 and f32.chunks == [(0, 64)]
    assert f32.refused == ["u8s8, u8u8: off (MAIXEMU_KPU_PRODUCTS / MAIXEMU_KPU_INT8)"]
    f64 = products.choose(w, wf, b_zero=100, a_zero=128, xmax=128, order=("f64",))
    assert f64.kind == "f64" and f64.chunks == [(0, 64)]
    wide = np.full((600, 2), 60000, np.int64)  # 16-bit weights: float32 chunks of ~2 taps, too many
    plan = products.choose(None, wide, b_zero=0, a_zero=128, xmax=128, order=products.KINDS)
    assert plan.kind == "f64"
    assert plan.refused[:2] == ["u8s8: weights or zero points are not 8-bit", "u8u8: weights or zero points are not 8-bit"]
    assert plan.refused[2].startswith("f32: sums need more than")
    with pytest.raises(products.ProductsInexact):
        products.choose(None, np.full((3, 1), 1 << 52, np.int64), b_zero=0, a_zero=128, xmax=128)
