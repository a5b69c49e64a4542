"""``maixemu eval --layers`` and the wrong combinations eval refuses (issue 27).

The real pair is ulffd_landmark.kmodel (nncase v0.2) and the .tflite it was compiled from; the
matching and the numbers are also checked on synthetic layers whose answer is known.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from _shared import shared_path
from eval_data import make_digits
from maixemu.cli import main
from maixemu.evaluate.layers import (LayerMatch, error_jump, layer_sums, match_layers, output_errors,
                                     summarise_layers)
from maixemu.evaluate.reference import TappedTensor
from maixemu.kmodel import LayerInfo
from test_eval_command import FACE_ANCHORS, results, ulffd_and_faces

LAYER_KEYS = {"index", "kind", "shape", "float_tensor", "cosine", "sqnr_db", "saturated"}


def eval_code(capsys, *args) -> tuple[int, str]:
    code = main(["eval", *map(str, args), "-q"])
    return code, capsys.readouterr().err


@pytest.fixture(scope="module")
def ulffd_layers(tmp_path_factory):
    root = tmp_path_factory.mktemp("ulffd")
    model, tflite, faces = ulffd_and_faces(root / "faces", "face_2[0-3].jpg")
    reports = {}
    for jobs in ("1", "2"):
        reports[jobs] = root / f"report{jobs}"
        assert main(["eval", str(model), str(faces), "--reference", str(tflite), "--mean", "127.5", "--std", "127.5",
                     "--layers", "--report", str(reports[jobs]), "--jobs", jobs, "-q"]) == 0
    return reports


def test_ulffd_layers_are_matched_to_the_tflite_tensors_in_model_order(ulffd_layers):
    r = results(ulffd_layers["1"])
    layers = r["layers"]
    assert all(LAYER_KEYS <= set(e) for e in layers)
    assert [e["index"] for e in layers] == sorted(e["index"] for e in layers)
    by_index = {e["index"]: e for e in layers}
    # V4 keeps the float model's order and shapes: the first conv is the first conv's ReLU output
    assert by_index[0]["float_tensor"] == "model_1/conv_bn_0_relu/Relu" and by_index[0]["shape"] == [1, 16, 120, 160]
    assert by_index[98]["float_tensor"] == "Identity_2"  # the last concat is the (1, 3160, 2) scores output
    mapping = r["layer_mapping"]
    assert mapping["matched"] == len(layers) >= 40
    unmatched = {u["index"]: u["reason"] for u in mapping["unmatched"]}
    # the stride-1 half of a split stride-2 depthwise conv has no float tensor; conversions are not compared
    assert "no float tensor of this shape agrees" in unmatched[3]
    assert unmatched[16].startswith("moves or converts")
    for e in layers:
        assert 0.5 < e["cosine"] <= 1.0 and e["sqnr_db"] is not None and 0.0 <= e["saturated"] <= 1.0
        assert e["float_range"][0] <= e["float_range"][1]
    jump = r["layer_summary"]["jump"]
    assert jump["index"] in by_index and jump["drop_db"] > 0
    assert len(r["layer_summary"]["worst_layers"]) == 5


def test_ulffd_output_error_is_split_and_the_verdict_is_one_line(ulffd_layers):
    r = results(ulffd_layers["1"])
    assert r["quantisation_error"]["sqnr_db"] > 0 and r["input_error"]["sqnr_db"] > 0
    # the device path (RGB565, the firmware's resize) changes the kmodel's outputs less than quantisation does
    assert r["input_error"]["sqnr_db"] > r["quantisation_error"]["sqnr_db"]
    matrix = r["reference"]["agreement_matrix"]
    assert matrix["classes"] == [0, 1] and sum(map(sum, matrix["matrix"])) == matrix["rows"] == 4 * 3160
    assert math.isclose(matrix["agreement"], r["reference"]["agreement"], rel_tol=1e-9)
    text = r["verdict"]["text"]
    assert "\n" not in text and text.startswith("verdict: ") and r["verdict"]["level"] in ("ready", "check", "not ready")
    assert "quantisation costs more" in text
    html = (ulffd_layers["1"] / "index.html").read_text()
    assert "Layer by layer" in html and "plots/layers.png" in html and "plots/agreement.png" in html
    assert (ulffd_layers["1"] / "plots" / "layers.png").stat().st_size > 1000


def test_layers_results_are_identical_serial_and_in_processes(ulffd_layers):
    assert (ulffd_layers["1"] / "results.json").read_bytes() == (ulffd_layers["2"] / "results.json").read_bytes()


def test_layers_needs_a_reference(tmp_path, capsys):
    code, err = eval_code(capsys, shared_path("models", "v3", "mnist.kmodel"), make_digits(tmp_path / "d", 1),
                          "--layers", "--report", tmp_path / "r")
    assert code == 2 and "--layers compares the kmodel's layers with the float model's: give --reference" in err


# --- wrong combinations: one line, exit 2 ---------------------------------------------------------

def test_a_detector_on_class_folders_is_refused(tmp_path, capsys):
    folders = tmp_path / "classes"
    for name in ("0", "1"):
        (folders / name).mkdir(parents=True)
    for i, photo in enumerate(sorted(shared_path("images").glob("face_2*.jpg"))[:2]):
        (folders / str(i) / photo.name).write_bytes(photo.read_bytes())
    for model in (shared_path("models", "v3", "yolo_20class.kmodel"), shared_path("models", "v4", "ulffd_landmark.kmodel")):
        code, err = eval_code(capsys, model, folders, "--report", tmp_path / "r")
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "rows of scores (a detector's per-position map" in err


def test_anchors_that_do_not_fit_the_region_layer_are_refused(tmp_path, capsys):
    faces = tmp_path / "faces"
    faces.mkdir()
    photo = shared_path("images", "face_20.jpg")
    (faces / photo.name).write_bytes(photo.read_bytes())
    (faces / "face_20.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    three_pairs = ",".join(FACE_ANCHORS.split(",")[:6])
    code, err = eval_code(capsys, shared_path("models", "v3", "face_detect_320x240.kmodel"), faces,
                          "--anchors", three_pairs, "--report", tmp_path / "r")
    assert code == 2 and "region output has 30 channels but --anchors gives 3 anchor(s)" in err


def test_an_empty_dataset_is_refused(tmp_path, capsys):
    for folder in (tmp_path / "empty", tmp_path / "nested"):
        folder.mkdir()
    (tmp_path / "nested" / "cats").mkdir()
    for folder in (tmp_path / "empty", tmp_path / "nested"):
        code, err = eval_code(capsys, shared_path("models", "v3", "mnist.kmodel"), folder, "--report", tmp_path / "r")
        assert code == 2 and "the folder holds no images" in err


# --- the matching and the numbers on layers whose answer is known -----------------------------------

def _layer(index: int, shape: tuple[int, ...], kind: str = "kpu_conv2d") -> LayerInfo:
    return LayerInfo(index=index, kind=kind, on_kpu=True, input_shapes=(shape,), output_shapes=(shape,))


def test_match_layers_finds_the_tensor_by_values_and_leaves_the_rest_unmatched():
    rng = np.random.default_rng(3)
    real = [rng.normal(1.0, 1.0, (1, 6, 5, 4)).astype(np.float32) for _ in range(2)]  # NHWC float tensor
    decoy = [rng.normal(1.0, 1.0, (1, 6, 5, 4)).astype(np.float32) for _ in range(2)]
    codes = [np.clip(np.round(np.moveaxis(r[0], -1, 0) / 0.05 + 40), 0, 255).astype(np.uint8)[None] for r in real]
    other = [rng.integers(0, 255, (1, 4, 6, 5), dtype=np.uint8) for _ in range(2)]
    flat = [np.moveaxis(r[0], -1, 0).reshape(-1) for r in real]  # a float layer holding the same values, flat
    layers = [_layer(0, (1, 4, 6, 5)), _layer(1, (1, 4, 6, 5)), _layer(2, (120,), "dequantize")]
    tapped = [TappedTensor(0, "a", "decoy", "CONV_2D", (1, 6, 5, 4)), TappedTensor(1, "b", "real", "CONV_2D", (1, 6, 5, 4))]
    probes = [([codes[i], other[i], flat[i]], {"a": decoy[i], "b": real[i]}) for i in range(2)]
    matches, unmatched = match_layers(layers, tapped, probes)
    assert [(m.index, m.tensor_name, m.arrangement) for m in matches] == [(0, "real", "channels_last")]
    assert math.isclose(matches[0].scale, 0.05, rel_tol=0.02) and math.isclose(-matches[0].offset / matches[0].scale, 40, abs_tol=1)
    reasons = {u.index: u.reason for u in unmatched}
    assert "no float tensor of this shape agrees" in reasons[1]
    assert "no tensor of 120 values in this arrangement" in reasons[2]  # flat CHW order is not the NHWC tensor


def test_layer_sums_count_what_the_codes_clipped():
    match = LayerMatch(0, "kpu_conv2d", (1, 1, 1, 6), "k", "t", "CONV_2D", "same", 0.1, 0.0, True, 1.0, tolerance=0.1)
    codes = np.array([0, 10, 100, 255, 255, 0], np.uint8)
    floats = np.array([0.0, 1.0, 10.0, 25.5, 40.0, -3.0], np.float32)  # the last two lie far beyond codes 255 / 0
    n, ff, kk, fk, ee, sat, fmin, fmax, kmin, kmax = layer_sums(match, codes, floats)
    assert n == 6 and sat == 2 and (fmin, fmax) == (-3.0, 40.0) and (kmin, kmax) == (0.0, 25.5)
    assert math.isclose(ee, (40.0 - 25.5) ** 2 + 3.0 ** 2, rel_tol=1e-6)


def test_the_jump_is_the_largest_drop_and_the_first_layer_is_held_to_its_rounding_floor():
    entries = [{"index": 0, "kind": "a", "sqnr_db": 40.0, "rmse_steps": 0.3}, {"index": 2, "kind": "b", "sqnr_db": 38.0},
               {"index": 5, "kind": "c", "sqnr_db": 20.0}, {"index": 7, "kind": "d", "sqnr_db": 19.0}]
    jump = error_jump(entries)
    assert (jump["index"], jump["after"], round(jump["drop_db"], 6)) == (5, 2, 18.0)
    entries[0]["rmse_steps"] = 30.0  # 100x a rounding's error from the first layer on: 40 dB below its floor
    assert error_jump(entries)["index"] == 0 and error_jump(entries)["after"] is None


def test_summaries_add_images_up_in_order():
    match = LayerMatch(3, "kpu_conv2d", (4,), "k", "t", "CONV_2D", "same", 1.0, 0.0, False, 1.0)
    records = [{"index": i, "rel": f"{i}.png", "layers": [layer_sums(match, np.arange(4.0) + i, np.arange(4.0))],
                "errors": [[14.0, 14.0, 14.0, 0.0, 30.0, 20.0, 4.0]]} for i in range(2)]
    summary = summarise_layers((match,), records, 5)
    layer = summary["layers"][0]
    assert layer["float_range"] == [0.0, 3.0] and layer["kmodel_range"] == [0.0, 4.0]
    assert math.isclose(layer["sqnr_db"], 10 * math.log10(28.0 / 4.0))  # image 0 exact, image 1 off by 1 everywhere
    assert summary["layer_summary"]["worst_samples"][0]["path"] == "1.png"
    inp, quant = output_errors(records)
    assert quant["sqnr_db"] is None and math.isclose(inp["sqnr_db"], 10 * math.log10(28.0 / 8.0))


def test_an_onnx_reference_exposes_every_node_output(tmp_path):
    onnx = pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper

    from maixemu.evaluate.reference import open_reference

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 4, 4])
    w = numpy_helper.from_array(np.ones((2, 1, 3, 3), np.float32), "w")
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["y"])]
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(helper.make_graph(nodes, "g", [x], [y], [w])), str(path))
    ref = open_reference(str(path), (0.0,), (1.0,), tensors=True)
    assert [(t.key, t.op) for t in ref.tapped] == [("c", "Conv"), ("y", "Relu")]
    outputs, tensors = ref.run_tensors(np.full((1, 4, 4), 2, np.uint8), ["c"])
    assert len(outputs) == 1 and outputs[0].shape == (1, 2, 4, 4)
    assert tensors["c"][0, 0, 1, 1] == 18.0 and tensors["c"][0, 0, 0, 0] == 8.0


def test_a_v3_classifier_maps_its_layers_to_the_onnx_ops_it_fused(tmp_path):
    """V3 layers map to the float ops by shape and values: each KPU conv (pool fused) is the float pool's
    output, the DEQUANTIZE the flatten, then the FC and softmax; the classifier's numbers follow."""
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnx")
    from _classifier_pair import make_pair

    kmodel, onnx_model = make_pair(tmp_path / "pair")
    data = make_digits(tmp_path / "digits", 3, seed=5)
    report = tmp_path / "report"
    assert main(["eval", str(kmodel), str(data), "--reference", str(onnx_model), "--mean", "0", "--std", "255", "--layers",
                 "--report", str(report), "--jobs", "1", "-q"]) == 0
    r = results(report)
    assert [(e["index"], e["kind"], e["float_tensor"]) for e in r["layers"]] == [
        (0, "K210_CONV", "pool1"), (1, "K210_CONV", "pool2"), (2, "DEQUANTIZE", "flat"), (3, "FULLY_CONNECTED", "logits"),
        (4, "SOFTMAX", "scores")]
    assert r["layers"][0]["sqnr_db"] > 30 and r["layers"][0]["rmse_steps"] < 1.0  # little more than its own rounding
    assert r["reference"]["float_accuracy"] is not None and r["accuracy"] is not None
    assert r["reference"]["agreement_matrix"]["rows"] == 30
    assert "top-1 agrees with the float model" in r["verdict"]["text"]
