"""The hand-written ONNX bytes of ``kpu.onnx_graph`` against the ``onnx`` package (a dev tool):
the same graph, valid for the checker. (What onnxruntime computes with them on this CPU is
``kpu.int8``'s load-time proof; ``test_products`` holds it to the exact sums.)"""

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


@pytest.mark.parametrize("k,n,b_zero", [(16, 32, 3), (300, 7, 255), (1, 1, 0)])
def test_u8u8_matmul_integer_bytes_parse_to_the_helper_graph(k, n, b_zero):
    """The u8u8 product's graph: B and its zero point uint8."""
    rng = np.random.default_rng(k + n)
    b = rng.integers(0, 256, (k, n), dtype=np.uint8)
    ours = onnx.load_from_string(onnx_graph.matmul_integer(b, 128, b_zero))
    onnx.checker.check_model(ours, full_check=True)
    init = {t.name: numpy_helper.to_array(t) for t in ours.graph.initializer}
    assert init["B"].dtype == np.uint8 and init["b_zero"].dtype == np.uint8 and init["a_zero"].dtype == np.uint8
    assert init["B"].tolist() == b.tolist() and int(init["b_zero"]) == b_zero and int(init["a_zero"]) == 128
