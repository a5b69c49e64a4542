"""The hand-written ONNX bytes of ``kpu.onnx_graph`` against the ``onnx`` package (a dev tool):
the same graph, valid for the checker, and the same products in onnxruntime."""

from __future__ import annotations

import numpy as np
import pytest

from maixemu.kmodel.kpu import onnx_graph

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def _helper_model(b: np.ndarray, b_zero: int) -> "onnx.ModelProto":
    k, n = b.shape
    graph = helper.make_graph(
        [helper.make_node("MatMulInteger", ["A", "B", "a_zero", "b_zero"], ["Y"])],
        "kpu_conv",
        [helper.make_tensor_value_info("A", TensorProto.UINT8, [None, k])],
        [helper.make_tensor_value_info("Y", TensorProto.INT32, [None, n])],
        [numpy_helper.from_array(b, "B"), numpy_helper.from_array(np.array(128, np.uint8), "a_zero"),
         numpy_helper.from_array(np.array(b_zero, np.int8), "b_zero")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_graph.OPSET)])
    model.ir_version = onnx_graph.IR_VERSION
    return model


@pytest.mark.parametrize("k,n,b_zero", [(16, 32, -3), (36, 32, 0), (300, 7, 127), (1, 1, -128)])
def test_matmul_integer_bytes_parse_to_the_helper_graph(k, n, b_zero):
    rng = np.random.default_rng(k * n)
    b = rng.integers(-128, 128, (k, n), dtype=np.int8)
    ours = onnx.load_from_string(onnx_graph.matmul_integer(b, 128, b_zero))
    onnx.checker.check_model(ours, full_check=True)
    want = _helper_model(b, b_zero)
    assert ours.ir_version == want.ir_version
    assert [(o.domain, o.version) for o in ours.opset_import] == [(o.domain, o.version) for o in want.opset_import]
    g, w = ours.graph, want.graph
    assert [(x.op_type, list(x.input), list(x.output)) for x in g.node] == [(x.op_type, list(x.input), list(x.output)) for x in w.node]
    assert {t.name: numpy_helper.to_array(t).tolist() for t in g.initializer} == {t.name: numpy_helper.to_array(t).tolist() for t in w.initializer}
    assert {t.name: numpy_helper.to_array(t).dtype for t in g.initializer} == {t.name: numpy_helper.to_array(t).dtype for t in w.initializer}
    for ours_vi, want_vi in zip(list(g.input) + list(g.output), list(w.input) + list(w.output)):
        assert ours_vi.name == want_vi.name
        assert ours_vi.type.tensor_type.elem_type == want_vi.type.tensor_type.elem_type
        assert [d.dim_value for d in ours_vi.type.tensor_type.shape.dim] == [d.dim_value for d in want_vi.type.tensor_type.shape.dim]


def test_matmul_integer_runs_exactly_in_onnxruntime_where_no_kernel_can_saturate():
    """Our bytes compute ``(A - 128) @ (B - b_zero)`` in onnxruntime. The weights are kept within
    [-64, 63], so two adjacent u8 x s8 products always fit 16 bits: every onnxruntime kernel is exact
    then (VNNI, AVX2's saturating ``vpmaddubsw``, ARM), and the test says nothing about the host CPU."""
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(5)
    b = rng.integers(-64, 64, (40, 24), dtype=np.int8)
    a = rng.integers(0, 256, (33, 40), dtype=np.uint8)
    a[0] = 255  # the largest pairs there are with these weights: |255*64 + 255*64| < 2**15
    session = ort.InferenceSession(onnx_graph.matmul_integer(b, 128, -9), providers=["CPUExecutionProvider"])
    got = session.run(None, {"A": a})[0]
    np.testing.assert_array_equal(got, (a.astype(np.int64) - 128) @ (b.astype(np.int64) + 9))


def test_the_int8_path_is_taken_only_where_this_cpus_kernel_is_exact():
    """Full-range weights overflow AVX2's 16-bit pair sums (exact with VNNI or AMX): whichever this
    host has, ``Int8Gemm.build`` either refuses the layer or gives exact sums — never wrong ones."""
    pytest.importorskip("onnxruntime")
    from maixemu.kmodel.kpu.int8 import Int8Gemm

    rng = np.random.default_rng(7)
    for w, zp in ((np.full((64, 8), 255, np.uint8), 0), (rng.integers(0, 256, (300, 16), dtype=np.uint8), 3)):
        gemm = Int8Gemm.build(w, zp)
        if gemm is None:
            continue  # refused at load: the layer runs on the float or int64 path instead
        a = rng.integers(0, 256, (50, w.shape[0]), dtype=np.uint8)
        a[:5] = 255
        np.testing.assert_array_equal(gemm(a), (a.astype(np.int64) - 128) @ (w.astype(np.int64) - zp))
