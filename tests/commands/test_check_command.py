"""``maixemu check``: nncase v0.1/v0.2 convertibility, KPU or CPU per op, memory against the budgets.

The float models are written here with LiteRT's schema (tests/_tflite.py) or onnx's helpers; the
real ones (ulffd_landmark.tflite and the kmodels nncase made) come from ../shared. The check's KPU
decisions for ulffd_landmark.tflite are compared with the V4 kmodel nncase v0.2 compiled from it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _shared import shared_path
from _tflite import TFLiteBuilder, big_cnn, small_cnn
from maixemu.cli import main


def run_check(capsys, *args) -> tuple[int, str, str]:
    code = main(["check", *map(str, args)])
    out = capsys.readouterr()
    return code, out.out, out.err


def verdict(text: str) -> str:
    return text.strip().splitlines()[-1]


def test_a_small_cnn_converts_and_fits_with_its_pool_fused(tmp_path, capsys):
    code, out, _ = run_check(capsys, small_cnn(tmp_path / "small.tflite"))
    assert code == 0
    assert verdict(out).startswith("verdict: OK")
    assert "nncase v0.2 → kmodel V4 converts it (3 KPU / 3 CPU ops) and fits" in verdict(out)
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()[:1].isdigit()}
    assert "fused: into the KPU conv 0 as its pool [v01-pool-fuse]" in rows["1"]
    assert "fused: into the KPU conv 0 as its pool [v02-pool-fuse]" in rows["1"]
    # the KPU's matmul needs at least 1024 weights (--output-quantize-threshold); v0.1 takes any FC <= 1024
    assert "CPU: matmul on the CPU (160 weights < 1024)" in rows["5"] and "KPU: 16x10 fully connected" in rows["5"]
    # every rule is printed with the source lines it follows
    assert "src/transforms/hlir/k210/fuse_kpu_conv2d_pool.cpp:43-72" in out
    assert "K210Conv2dWithMaxAvgPoolTransform.cs:18-48" in out


def test_an_op_nncase_refuses_is_exit_1_with_the_importers_message(tmp_path, capsys):
    code, out, _ = run_check(capsys, small_cnn(tmp_path / "sq.tflite", extra="SQUARED_DIFFERENCE"))
    assert code == 1
    assert "'Not supported tflite opcode: SQUARED_DIFFERENCE'" in out
    assert "src/importer/tflite/opcode.def:1-40" in out
    assert "LayerNotSupportedException: SQUARED_DIFFERENCE" in out
    assert verdict(out).startswith("verdict: NO")


def test_a_model_too_big_for_the_full_firmware_fits_the_minimum_one(tmp_path, capsys):
    model = big_cnn(tmp_path / "big.tflite", channels=256, convs=4)  # 4 x 9 x 256^2 uint8 weights, 2.36 MB
    code, out, _ = run_check(capsys, model)
    assert code == 1 and "does NOT fit" in verdict(out)
    assert "of the full firmware's 2.00 MiB: does NOT fit" in out
    code, out, _ = run_check(capsys, model, "--firmware", "minimum")
    assert code == 0 and "of the minimum firmware's 4.00 MiB: fits" in out


def _one_conv(path: Path, *, kernel: int = 3, height: int = 32, width: int = 32, scale: float = 0.3,
              dilation: int = 1, act: str = "RELU") -> Path:
    b = TFLiteBuilder()
    S = b.schema
    x = b.tensor("input", (1, height, width, 8))
    b.inputs = [x]
    rng = np.random.default_rng(1)
    w = b.constant("w", rng.normal(0, scale, (8, kernel, kernel, 8)).astype(np.float32))
    bias = b.constant("b", np.zeros(8, np.float32))
    y = b.tensor("y", (1, height, width, 8))
    b.op("CONV_2D", [x, w, bias], [y], "Conv2DOptions", padding=S.Padding.SAME, strideW=1, strideH=1,
         fusedActivationFunction=getattr(S.ActivationFunctionType, act), dilationWFactor=dilation, dilationHFactor=dilation)
    b.outputs = [y]
    return b.write(path)


@pytest.mark.parametrize("case, v02, v01", [
    (dict(kernel=5), "CPU: 5x5 kernel (the KPU has 1x1 and 3x3)", "refused"),
    (dict(width=640), "CPU: input 8x32x640 outside the KPU's c<=1024, 4<=h<=256, 4<=w<=512", "KPU"),
    (dict(height=2, width=2), "CPU: input 8x2x2 outside", "refused"),
    (dict(scale=40.0), "CPU: weights range", "KPU"),
    (dict(dilation=2), "CPU: dilation 2x2", "KPU"),
    (dict(act="TANH"), "refused: fused activation TANH", "refused"),
])
def test_the_kpu_rules_of_each_compiler(tmp_path, capsys, case, v02, v01):
    code, out, _ = run_check(capsys, _one_conv(tmp_path / "one.tflite", **case), "--no-sources")
    row = next(line for line in out.splitlines() if line.strip().startswith("0 "))
    v01_unit = row.split("CONV_2D", 1)[1].split("[v0", 1)[0].split(":")[0].split()[-1]  # the first verdict column
    assert v02 in row
    assert v01_unit == v01


def test_onnx_has_no_v01_importer_and_goes_through_v02(tmp_path, capsys):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 32, 32])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 16, 16])
    w = numpy_helper.from_array(np.random.default_rng(0).normal(0, 0.2, (8, 3, 3, 3)).astype(np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])]
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w])), str(path))
    code, out, _ = run_check(capsys, path)
    assert code == 0
    assert "nncase v0.1 has no ONNX importer" in out and "src/NnCase.Cli/Program.cs:91-119" in out
    assert "KPU: 3x3 conv" in out and "nncase v0.2 → kmodel V4 converts it" in verdict(out)
    # ONNX's Relu is imported as a binary max on the CPU, so the pool after it stays on the CPU too
    assert "CPU: reduce_window2d on the CPU" in next(line for line in out.splitlines() if "MaxPool" in line)


def test_relu6_after_a_conv_is_its_activation_and_the_pool_after_it_fuses(tmp_path, capsys):
    b = TFLiteBuilder()
    S = b.schema
    x = b.tensor("input", (1, 16, 16, 3))
    b.inputs = [x]
    y = b.conv(x, "c", 8, 3, act="NONE")
    r = b.tensor("r6", (1, 16, 16, 8))
    b.op("RELU6", [y], [r])
    p = b.tensor("p", (1, 8, 8, 8))
    b.op("MAX_POOL_2D", [r], [p], "Pool2DOptions", padding=S.Padding.VALID, strideW=2, strideH=2, filterWidth=2,
         filterHeight=2, fusedActivationFunction=S.ActivationFunctionType.NONE)
    b.outputs = [p]
    code, out, _ = run_check(capsys, b.write(tmp_path / "r6.tflite"))
    rows = {line.split()[0]: line for line in out.splitlines() if line.strip()[:1].isdigit()}
    assert "fused: into conv 0's activation [v02-clamp-fuse]" in rows["1"] and "fuse_clamp.cpp:38-66" in out
    assert "fused: into the KPU conv 0 as its pool [v02-pool-fuse]" in rows["2"]
    assert "refused: LayerNotSupportedException: RELU6" in rows["1"]  # not in v0.1's TFLite importer
    assert code == 0


def test_ulffd_tflite_puts_on_the_kpu_what_nncase_v02_put_there():
    """The check's KPU count for the float model equals the kpu_conv2d layers of the V4 kmodel nncase
    v0.2 compiled from it; v0.1 refuses it (a standalone RELU and concatenations on axis 1)."""
    pytest.importorskip("ai_edge_litert")
    from maixemu.check import check_path
    from maixemu.kmodel import load_kmodel

    result = check_path(shared_path("reference", "ulffd_landmark.tflite"))
    kmodel = load_kmodel(shared_path("models", "v4", "ulffd_landmark.kmodel"))
    on_kpu = sum(1 for layer in kmodel.layers if layer.on_kpu)
    assert on_kpu == 43
    assert f"nncase v0.2 → kmodel V4 converts it ({on_kpu} KPU" in result.verdict
    assert "nncase v0.1 → kmodel V3 refuses it (op 26 RELU: LayerNotSupportedException: RELU)" in result.verdict
    assert result.ok


def test_kmodel_files_give_the_same_verdicts_from_the_file(capsys):
    code, out, _ = run_check(capsys, shared_path("models", "v4", "ulffd_landmark.kmodel"), "--no-sources")
    assert code == 0 and "kmodel V4 runs on MaixPy's kpu.load with 43 of 99 layers on the KPU and fits" in verdict(out)
    code, out, _ = run_check(capsys, shared_path("models", "v5", "mnist.kmodel"))
    assert code == 1 and "ERR_KMODEL_VERSION: only support kmodel V3/V4 now" in verdict(out)
    assert "Maix_kpu.c:193-195" in out


def test_files_it_cannot_read_are_exit_2(tmp_path, capsys):
    (tmp_path / "bad.tflite").write_bytes(b"\0" * 64)
    (tmp_path / "bad.onnx").write_bytes(b"not a protobuf at all \xff\xff")
    (tmp_path / "bad.kmodel").write_bytes(b"hello")
    for name in ("bad.tflite", "bad.onnx", "bad.kmodel", "missing.tflite"):
        code, out, err = run_check(capsys, tmp_path / name)
        assert code == 2, (name, out, err)
        assert err.startswith("maixemu check: ") and len(err.strip().splitlines()) == 1
    code, _, err = run_check(capsys, tmp_path, "--board", "dock")
    assert code == 2 and "is a folder" in err
    code, _, err = run_check(capsys, small_cnn(tmp_path / "s.tflite"), "--board", "nosuchboard")
    assert code == 2 and "unknown board" in err


def test_the_board_names_the_target(tmp_path, capsys):
    code, out, _ = run_check(capsys, small_cnn(tmp_path / "s.tflite"), "--board", "m5stickv", "--no-sources")
    assert code == 0 and "on the M5Stack M5StickV" in out.splitlines()[0]
