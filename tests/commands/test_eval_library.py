"""The pieces under ``maixemu eval`` (``maixemu.evaluate``), each against numbers worked out by hand."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from _shared import shared_path
from maixemu.evaluate import EvalError
from maixemu.evaluate.ap import average_precision, detection_metrics, iou
from maixemu.evaluate.checkpoint import Checkpoint
from maixemu.evaluate.compare import agreement, compare_output, cosine, default_class_output
from maixemu.evaluate.geometry import Geometry
from maixemu.evaluate.labels import map_names, read_labels
from maixemu.evaluate.metrics import classification_metrics
from maixemu.evaluate.recipe import parse_framesize
from maixemu.evaluate.reference import align, match_outputs


def test_iou_and_voc_average_precision():
    assert iou([0, 0, 10, 10], [5, 0, 10, 10]) == pytest.approx(50 / 150)
    assert iou([0, 0, 10, 10], [10, 0, 10, 10]) == 0.0
    # recall steps 0.5 (precision 1) then 1.0 (precision 2/3): area 0.5 * 1 + 0.5 * 2/3
    assert average_precision(np.array([0.5, 0.5, 1.0]), np.array([1.0, 0.5, 2 / 3])) == pytest.approx(0.5 + 1 / 3)


def test_detection_metrics_count_duplicates_and_difficult_objects():
    records = [
        {"index": 0, "gt": [[0, 0, 10, 10, 0, 0], [50, 50, 10, 10, 0, 1]],
         "boxes": [[0, 0, 10, 10, 0, 0.9], [1, 0, 10, 10, 0, 0.8], [50, 50, 10, 10, 0, 0.7]]},
        {"index": 1, "gt": [[20, 20, 10, 10, 0, 0]], "boxes": [[80, 80, 5, 5, 0, 0.95]]},
    ]
    m = detection_metrics(records, ["face"])
    face = m["per_class_ap"][0]
    # by score: FP (image 1) 0.95, TP 0.9, duplicate FP 0.8; the difficult find is ignored.
    assert (face["objects"], face["detections"], face["true_positives"]) == (2, 4, 1)
    assert face["ap"] == pytest.approx(0.5 * 0.5)
    assert m["map50"] == face["ap"] and m["recall"] == 0.5


def test_classification_metrics():
    records = [
        {"label": 0, "top": [0, 1], "scores": [0.9, 0.1]},
        {"label": 0, "top": [1, 0], "scores": [0.6, 0.4]},
        {"label": 2, "top": [2, 0], "scores": [0.7, 0.2]},
    ]
    m = classification_metrics(records, ["a", "b", "c"])
    assert m["accuracy"] == pytest.approx(2 / 3) and m["top5"] == 1.0
    assert m["confusion"] == {"classes": [0, 1, 2], "names": ["a", "b", "c"], "matrix": [[1, 1, 0], [0, 0, 0], [0, 0, 1]]}
    assert [(p["name"], p["accuracy"]) for p in m["per_class"]] == [("a", 0.5), ("c", 1.0)]


def test_geometry_maps_boxes_back_through_fit_crop_and_resize():
    g = Geometry().fit(640, 480, 320, 240).crop(48, 8).resize(224, 224, 112, 112)
    # (100, 50) in the photo: /2 by the camera, -48/-8 by the cut, /2 by the resize
    assert (100 * g.sx + g.tx, 50 * g.sy + g.ty) == ((50 - 48) / 2, (25 - 8) / 2)
    assert g.to_source(1.0, 8.5, 10, 10) == pytest.approx((100, 50, 40, 40))
    wide = Geometry().fit(640, 360, 320, 240)  # 16:9 → 4:3 loses the sides
    assert wide.to_source(0, 0, 320, 240) == pytest.approx((80, 0, 480, 360))


def test_compare_numbers():
    a = np.array([1.0, 0.0, 0.0], np.float32)
    assert cosine(a, a) == 1.0 and cosine(a, np.array([0, 1, 0])) == 0.0 and cosine(a * 0, a * 0) == 1.0
    out = compare_output(np.array([1, 2, 3], np.float32), np.array([1, 2.5, 2], np.float32))
    assert (out["max_abs"], out["mean_abs"], sum(out["hist"])) == (1.0, 0.5, 3)
    assert agreement(np.array([[0.1, 0.9], [0.8, 0.2]]), np.array([[0.2, 0.7], [0.1, 0.3]])) == 0.5
    assert default_class_output([(1, 3160, 4), (1, 3160, 10), (1, 3160, 2)]) == 2
    assert default_class_output([(10,)]) == 0


def test_reference_outputs_are_matched_and_laid_out_like_the_kmodel():
    nhwc = np.arange(2 * 3 * 4, dtype=np.float32).reshape(1, 3, 4, 2)
    assert np.array_equal(align(nhwc, (2, 3, 4)), nhwc[0].transpose(2, 0, 1))
    assert align(np.zeros((1, 10)), (10,)).shape == (10,)
    assert match_outputs([(4,), (2,)], [np.zeros(2), np.zeros(4)]) == [1, 0]
    with pytest.raises(EvalError, match="no output of the reference has that many"):
        match_outputs([(5,)], [np.zeros(4)])


def test_labels(tmp_path):
    f = tmp_path / "labels.txt"
    f.write_text("cat\r\ndog\r\n\r\n")
    assert read_labels(f) == ["cat", "dog"]
    assert map_names(["dog"], ["cat", "dog"], 2, "x") == {"dog": 1}
    assert map_names(["3", "10"], None, 11, "x") == {"3": 3, "10": 10}
    with pytest.raises(EvalError, match="not an output of the model"):
        map_names(["10"], None, 10, "x")
    with pytest.raises(EvalError, match="--labels"):
        map_names(["03"], None, 10, "x")


def test_framesize_names_come_from_the_sensor_table():
    assert parse_framesize("qvga") == (320, 240) and parse_framesize("B64X64") == (64, 64)
    assert parse_framesize("224x224") == (224, 224)
    with pytest.raises(EvalError):
        parse_framesize("huge")


def test_checkpoint_keeps_complete_lines_only(tmp_path):
    cp = Checkpoint(tmp_path, "abc")
    cp.open(fresh=True)
    cp.append([{"key": "a", "index": 0}, {"key": "b", "index": 1}])
    cp.close()
    with open(cp.path, "a") as fp:
        fp.write('{"key": "c", "ind')
    assert sorted(Checkpoint(tmp_path, "abc").load(fresh=False)) == ["a", "b"]
    assert Checkpoint(tmp_path, "abc").load(fresh=True) == {}
    with pytest.raises(EvalError, match="--fresh"):
        Checkpoint(tmp_path, "other").load(fresh=False)
    cp.open(fresh=False)  # appending after a cut line starts a new line
    cp.append([{"key": "d", "index": 3}])
    cp.close()
    assert sorted(Checkpoint(tmp_path, "abc").load(fresh=False)) == ["a", "b", "d"]


DETECT_SCRIPT = """
import sensor, KPU as kpu
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
task = kpu.load("/sd/face.kmodel")
kpu.init_yolo2(task, 0.5, 0.3, 5, ({anchors}))
for i in range({count}):
    found = kpu.run_yolo2(task, sensor.snapshot())
    print("boxes", [list(b.rect()) + [b.classid(), b.value()] for b in found] if found else [])
"""


def test_device_detections_are_what_run_yolo2_returns_in_a_script(tmp_path, maixpy):
    """RGB565 frame, AI buffer, region layer: eval's boxes are the script's, value for value."""
    from maixemu.cli import main

    model = shared_path("models", "v3", "face_detect_320x240.kmodel")
    anchors = "1.889,2.5245,2.9465,3.94056,3.99987,5.3658,5.155437,6.92275,6.718375,9.01025"
    data = tmp_path / "faces"
    data.mkdir()
    names = ["face_20", "face_21", "face_26", "face_27"]
    for name in names:
        shutil.copy(shared_path("images", f"{name}.jpg"), data / f"{name}.jpg")
        (data / f"{name}.txt").write_text("0 0.5 0.5 0.2 0.2\n")
    report = tmp_path / "report"
    assert main(["eval", str(model), str(data), "--anchors", anchors, "--report", str(report), "--jobs", "1", "-q"]) == 0
    import csv

    with open(report / "predictions.csv", newline="") as fp:
        rows = list(csv.DictReader(fp))
    result = maixpy.run(code=DETECT_SCRIPT.format(anchors=anchors, count=len(names)),
                        camera=[data / f"{n}.jpg" for n in names], files={"/sd/face.kmodel": model})
    assert result.ok, result.stderr
    printed = [json.loads(line[len("boxes "):]) for line in result.lines if line.startswith("boxes")]
    assert [json.loads(r["boxes"]) for r in rows] == printed
    assert any(printed)


def _linear_onnx(path, weights: np.ndarray) -> None:
    """An ONNX float model ``(1, 1, 28, 28) -> flatten -> @ weights -> (1, 10)``, built with onnx's helpers."""
    onnx = pytest.importorskip("onnx", reason="onnx (dev extra) builds the test model")
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Flatten", ["x"], ["flat"], axis=1), helper.make_node("MatMul", ["flat", "w"], ["y"])],
        "linear",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 1, 28, 28])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 10])],
        [numpy_helper.from_array(weights.astype(np.float32), "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))


def test_onnx_reference_gets_the_normalised_file_input_in_nchw(tmp_path):
    """The .onnx path: NCHW layout, (x - mean) / std, a dynamic batch dimension, outputs matched by size."""
    pytest.importorskip("onnxruntime", reason="onnxruntime (maixemu[eval]) not installed")
    import csv

    from eval_data import make_digits
    from maixemu.cli import main
    from maixemu.evaluate.file_input import pil_to_chw
    from maixemu.kmodel import load_kmodel
    from PIL import Image

    mnist = shared_path("models", "v3", "mnist.kmodel")
    weights = np.random.default_rng(5).normal(size=(784, 10))
    _linear_onnx(tmp_path / "linear.onnx", weights)
    data = make_digits(tmp_path / "digits", 1, seed=9)
    report = tmp_path / "report"
    assert main(["eval", str(mnist), str(data), "--reference", str(tmp_path / "linear.onnx"), "--mean", "33",
                 "--std", "2", "--input", "file", "--report", str(report), "--jobs", "1", "-q"]) == 0
    with open(report / "predictions.csv", newline="") as fp:
        rows = list(csv.DictReader(fp))
    model = load_kmodel(mnist)
    for row in rows:
        with Image.open(data / row["path"]) as img:
            file_chw = pil_to_chw(img, 1, 28, 28)
        expected = ((file_chw.astype(np.float32) - 33) / 2).reshape(1, 784) @ weights.astype(np.float32)
        kmodel_out = model.run(file_chw)[0]
        assert float(row["cosine"]) == pytest.approx(cosine(kmodel_out, expected), abs=1e-6)
        assert int(row["reference_top1"]) == int(expected.argmax())
