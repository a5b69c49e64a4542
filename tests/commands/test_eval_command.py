"""``maixemu eval``: the must-shows of issue 16 on real models and generated data.

* the digit dataset on mnist.kmodel gives, image by image, what ``maixemu forward`` gives
  (``--input file``) and what ``kpu.forward`` gives in a script run by maixemu (``--input device``);
* ulffd_landmark.kmodel against its .tflite on the face photos reports cosine and agreement;
* serial, ``--jobs 2`` and ``--dask`` give byte-identical results.json, and a resumed run too;
* bad images are skipped and listed, mismatched labels refused with what to do.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from _shared import shared_path
from eval_data import make_digits
from maixemu.cli import main

PER_CLASS = 3
FACE_ANCHORS = "1.889,2.5245,2.9465,3.94056,3.99987,5.3658,5.155437,6.92275,6.718375,9.01025"


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> Path:
    return make_digits(tmp_path_factory.mktemp("digits") / "digits", PER_CLASS, seed=7)


@pytest.fixture(scope="module")
def mnist() -> Path:
    return shared_path("models", "v3", "mnist.kmodel")


def run_eval(*args, expect: int = 0, capsys=None) -> None:
    code = main(["eval", *map(str, args), "-q"])
    assert code == expect, capsys.readouterr().err if capsys else code


def read_predictions(report: Path) -> list[dict]:
    with open(report / "predictions.csv", newline="") as fp:
        return list(csv.DictReader(fp))


def results(report: Path) -> dict:
    return json.loads((report / "results.json").read_text())


def test_file_input_matches_maixemu_forward(digits, mnist, tmp_path, capsys):
    report = tmp_path / "report"
    run_eval(mnist, digits, "--input", "file", "--report", report, "--jobs", "1")
    rows = read_predictions(report)
    assert len(rows) == 10 * PER_CLASS
    for row in rows:
        out = tmp_path / "out.npy"
        assert main(["forward", str(mnist), "--input", str(digits / row["path"]), "--out", str(out)]) == 0
        values = np.load(out).reshape(-1)
        assert int(row["prediction"]) == int(values.argmax()), row["path"]
        assert float(row["score"]) == float(values.max()), row["path"]
    capsys.readouterr()
    summary = results(report)
    assert summary["images"] == 10 * PER_CLASS
    assert summary["accuracy"] == sum(int(r["correct"]) for r in rows) / len(rows)


SCRIPT = """
import sensor, KPU as kpu
sensor.reset()
sensor.set_pixformat(sensor.GRAYSCALE)
sensor.set_framesize(sensor.B64X64)
task = kpu.load("/sd/mnist.kmodel")
for i in range({count}):
    img = sensor.snapshot()
    small = img.resize(28, 28)
    small.pix_to_ai()
    out = kpu.forward(task, small)[:]
    print("pred", out.index(max(out)), repr(max(out)))
"""


def test_device_input_matches_kpu_forward_in_a_script(digits, mnist, tmp_path, maixpy):
    report = tmp_path / "report"
    run_eval(mnist, digits, "--report", report, "--jobs", "1")
    rows = read_predictions(report)
    images = [digits / row["path"] for row in rows]
    result = maixpy.run(code=SCRIPT.format(count=len(images)), camera=images, files={"/sd/mnist.kmodel": mnist})
    assert result.ok, result.stderr
    printed = [line.split() for line in result.lines if line.startswith("pred")]
    assert len(printed) == len(rows)
    for row, (_, pred, score) in zip(rows, printed):
        assert int(row["prediction"]) == int(pred), row["path"]
        assert float(row["score"]) == float(score), row["path"]
    recipe = results(report)["input"]
    assert recipe["mode"] == "device" and recipe["pixformat"] == "grayscale"


def ulffd_and_faces(folder: Path, pattern: str) -> tuple[Path, Path, Path]:
    """The ULFD kmodel, its float .tflite and a folder with the shared face photos matching ``pattern``."""
    pytest.importorskip("ai_edge_litert", reason="LiteRT (ai-edge-litert, maixemu[eval]) not installed")
    model = shared_path("models", "v4", "ulffd_landmark.kmodel")
    tflite = shared_path("reference", "ulffd_landmark.tflite")
    folder.mkdir()
    for photo in sorted(shared_path("images").glob(pattern)):
        shutil.copy(photo, folder / photo.name)
    return model, tflite, folder


def test_ulffd_against_its_tflite_reports_cosine_and_agreement(tmp_path):
    model, tflite, faces = ulffd_and_faces(tmp_path / "faces", "face_*.jpg")
    report = tmp_path / "report"
    run_eval(model, faces, "--reference", tflite, "--mean", "127", "--std", "128", "--report", report, "--jobs", "1")
    summary = results(report)
    reference = summary["reference"]
    assert summary["task"] == "compare" and summary["images"] == len(list(faces.iterdir()))
    # Quantisation costs something but the network is the same: a wrong mean/std or layout gives < 0.5.
    assert 0.85 < reference["cosine_mean"] < 1.0
    assert 0.95 < reference["agreement"] <= 1.0
    assert reference["class_output"] == 2  # the (1, 3160, 2) face/background scores
    assert [o["shape"] for o in reference["outputs"]] == [[1, 3160, 4], [1, 3160, 10], [1, 3160, 2]]
    for output in reference["outputs"]:
        assert 0 < output["mean_abs"] < output["max_abs"]
        assert sum(output["error_histogram"]["counts"]) == summary["images"] * int(np.prod(output["shape"]))
    rows = read_predictions(report)
    assert all(0.5 < float(r["cosine"]) <= 1.0 for r in rows)
    html = (report / "index.html").read_text()
    assert "plots/error_histogram.png" in html and (report / "plots" / "error_histogram.png").is_file()



def test_without_mean_and_std_the_best_agreeing_usual_normalisation_is_used_and_named(tmp_path):
    """The kmodel does not keep its float model's normalisation; raw 0..255 (the old default) gave
    cosines near 0.1 on ULFD, which looks like a broken model. Unset, the usual ones are tried."""
    model, tflite, faces = ulffd_and_faces(tmp_path / "faces", "face_*.jpg")
    report = tmp_path / "report"
    run_eval(model, faces, "--reference", tflite, "--report", report, "--jobs", "1", "--limit", "3")
    reference = results(report)["reference"]
    assert reference["cosine_mean"] > 0.85
    assert reference["normalisation"].endswith("give --mean/--std to set it")
    assert reference["mean"] != [0.0] or reference["std"] != [1.0]
    raw = tmp_path / "raw"
    run_eval(model, faces, "--reference", tflite, "--mean", "0", "--report", raw, "--jobs", "1", "--limit", "3")
    assert results(raw)["reference"]["normalisation"] == "given"
    assert results(raw)["reference"]["cosine_mean"] < 0.5

def test_device_and_file_inputs_differ_by_the_input_path(tmp_path):
    """The float model always reads the file; the kmodel's device input adds RGB565 rounding."""
    model, tflite, faces = ulffd_and_faces(tmp_path / "faces", "face_21.jpg")
    cosines = {}
    for mode in ("device", "file"):
        run_eval(model, faces, "--reference", tflite, "--mean", "127", "--std", "128", "--input", mode,
                 "--report", tmp_path / mode, "--jobs", "1")
        cosines[mode] = results(tmp_path / mode)["reference"]["cosine_mean"]
    assert cosines["device"] != cosines["file"]


def test_jobs_and_dask_give_identical_results(digits, mnist, tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask[distributed] (maixemu[eval]) not installed")
    run_eval(mnist, digits, "--report", tmp_path / "serial", "--jobs", "1")
    run_eval(mnist, digits, "--report", tmp_path / "jobs", "--jobs", "2")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        run_eval(mnist, digits, "--report", tmp_path / "dask", "--dask", cluster.scheduler_address)
    serial = (tmp_path / "serial" / "results.json").read_bytes()
    assert (tmp_path / "jobs" / "results.json").read_bytes() == serial
    assert (tmp_path / "dask" / "results.json").read_bytes() == serial
    assert (tmp_path / "dask" / "predictions.csv").read_bytes() == (tmp_path / "serial" / "predictions.csv").read_bytes()
    runs = {name: json.loads((tmp_path / name / "run.json").read_text()) for name in ("serial", "jobs", "dask")}
    assert runs["jobs"]["executor"] == "processes x2" and runs["dask"]["executor"] == "dask"
    assert all(r["computed"] == 10 * PER_CLASS for r in runs.values())


def test_an_interrupted_run_resumes_where_it_stopped(digits, mnist, tmp_path, monkeypatch, capsys):
    from maixemu.evaluate import executors

    run_eval(mnist, digits, "--report", tmp_path / "whole", "--jobs", "1")
    real = executors.run_serial

    def interrupted(spec, samples):
        for count, batch in enumerate(real(spec, samples)):
            if count == 7:
                raise KeyboardInterrupt
            yield batch

    monkeypatch.setattr(executors, "run_serial", interrupted)
    report = tmp_path / "report"
    run_eval(mnist, digits, "--report", report, "--jobs", "1", expect=130)
    assert "run the same command again to resume" in capsys.readouterr().err
    assert not (report / "results.json").exists()
    lines = (report / "checkpoint.jsonl").read_text().splitlines()
    assert len(lines) == 1 + 7  # the header and the seven finished images
    with open(report / "checkpoint.jsonl", "a") as fp:
        fp.write('{"index": 8, "rel": "2/2_0')  # a record cut short by a kill
    monkeypatch.setattr(executors, "run_serial", real)
    run_eval(mnist, digits, "--report", report, "--jobs", "1")
    run = json.loads((report / "run.json").read_text())
    assert (run["resumed"], run["computed"]) == (7, 10 * PER_CLASS - 7)
    assert (report / "results.json").read_bytes() == (tmp_path / "whole" / "results.json").read_bytes()
    # Other options: the checkpoint is not mixed in, the user is told what to do.
    run_eval(mnist, digits, "--report", report, "--input", "file", expect=2)
    assert "--fresh" in capsys.readouterr().err


def test_undecodable_images_are_listed_and_skipped(mnist, tmp_path, capsys):
    data = make_digits(tmp_path / "data", 1, seed=3)
    (data / "4" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n not really a picture")
    report = tmp_path / "report"
    assert main(["eval", str(mnist), str(data), "--report", str(report), "--jobs", "1", "-q"]) == 0
    out = capsys.readouterr().out
    assert "4/broken.png" in out and "skipped" in out
    summary = results(report)
    assert summary["images"] == 10
    assert [s["path"] for s in summary["skipped"]] == ["4/broken.png"]
    rows = {r["path"]: r for r in read_predictions(report)}
    assert rows["4/broken.png"]["status"] == "skipped" and rows["4/broken.png"]["prediction"] == ""


def test_labels_that_do_not_match_the_model_are_refused(mnist, tmp_path, capsys):
    data = make_digits(tmp_path / "data", 1, seed=4)
    nine = tmp_path / "nine.txt"
    nine.write_text("\n".join(str(i) for i in range(9)) + "\n")
    assert main(["eval", str(mnist), str(data), "--labels", str(nine), "--report", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "has 9 class names but output 0 (10 values) has 10" in err and "--labels FILE with exactly 10 names" in err

    named = tmp_path / "named"
    for name in ("cat", "dog"):
        shutil.copytree(data / "1", named / name)
    assert main(["eval", str(mnist), str(named), "--report", str(tmp_path / "r")]) == 2
    assert "pass --labels FILE" in capsys.readouterr().err

    words = tmp_path / "words.txt"
    words.write_text("\n".join(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]))
    assert main(["eval", str(mnist), str(named), "--labels", str(words), "--report", str(tmp_path / "r")]) == 2
    assert "'cat', 'dog'" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_a_csv_of_paths_and_labels(mnist, digits, tmp_path):
    rows = sorted(p.relative_to(digits).as_posix() for p in digits.rglob("*.png"))[:12]
    (digits.parent / "list.csv").write_text("path,label\n" + "".join(f"digits/{r},{r.split('/')[0]}\n" for r in rows))
    run_eval(mnist, digits.parent / "list.csv", "--report", tmp_path / "csv", "--jobs", "1")
    run_eval(mnist, digits, "--report", tmp_path / "folders", "--limit", "12", "--jobs", "1")
    by_csv = [r["prediction"] for r in read_predictions(tmp_path / "csv")]
    by_folders = [r["prediction"] for r in read_predictions(tmp_path / "folders")]
    assert by_csv == by_folders and results(tmp_path / "csv")["data"]["layout"] == "csv"


FACE_BOXES = {  # hand-placed face boxes (x, y, w, h) on the shared face photos
    "face_21": [(45, 45, 170, 180)],
    "face_23": [(35, 75, 90, 130)],
    "face_27": [(45, 65, 115, 135)],
}


def _face_dataset(folder: Path, fmt: str) -> Path:
    folder.mkdir()
    for name, boxes in FACE_BOXES.items():
        shutil.copy(shared_path("images", f"{name}.jpg"), folder / f"{name}.jpg")
        if fmt == "voc":
            objects = "".join(
                f"<object><name>face</name><bndbox><xmin>{x}</xmin><ymin>{y}</ymin><xmax>{x + w}</xmax>"
                f"<ymax>{y + h}</ymax></bndbox></object>" for x, y, w, h in boxes
            )
            (folder / f"{name}.xml").write_text(f"<annotation><filename>{name}.jpg</filename>{objects}</annotation>")
        else:
            lines = "".join(f"0 {(x + w / 2) / 320} {(y + h / 2) / 240} {w / 320} {h / 240}\n" for x, y, w, h in boxes)
            (folder / f"{name}.txt").write_text(lines)
    return folder


def test_detection_map_with_the_firmware_region_layer(tmp_path, capsys):
    model = shared_path("models", "v3", "face_detect_320x240.kmodel")
    labels = tmp_path / "labels.txt"
    labels.write_text("face\n")
    maps = {}
    for fmt in ("voc", "yolo"):
        data = _face_dataset(tmp_path / fmt, fmt)
        run_eval(model, data, "--labels", labels, "--anchors", FACE_ANCHORS, "--report", tmp_path / f"r-{fmt}", "--jobs", "1")
        summary = results(tmp_path / f"r-{fmt}")
        assert summary["task"] == "detect" and summary["images"] == 3 and summary["objects"] == 3
        maps[fmt] = summary["map50"]
        assert summary["per_class_ap"][0]["name"] == "face"
    assert maps["voc"] == maps["yolo"] and maps["voc"] > 0.5  # these three faces are big and clear
    # The boxes are what kpu.run_yolo2 returns for the same input, mapped back to the photo.
    rows = read_predictions(tmp_path / "r-voc")
    assert all(json.loads(r["boxes"]) for r in rows)
    assert main(["eval", str(model), str(tmp_path / "voc"), "--labels", str(labels), "--report", str(tmp_path / "x")]) == 2
    assert "--anchors" in capsys.readouterr().err


def test_missing_extras_name_the_package(digits, mnist, tmp_path, monkeypatch, capsys):
    import sys

    tflite = tmp_path / "model.tflite"
    tflite.write_bytes(b"\0" * 16)
    monkeypatch.setitem(sys.modules, "ai_edge_litert", None)
    monkeypatch.setitem(sys.modules, "ai_edge_litert.interpreter", None)
    assert main(["eval", str(mnist), str(digits), "--reference", str(tflite), "--report", str(tmp_path / "r")]) == 2
    assert "pip install ai-edge-litert" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "distributed", None)
    assert main(["eval", str(mnist), str(digits), "--dask", "tcp://127.0.0.1:1", "--report", str(tmp_path / "d"), "-q"]) == 2
    assert "pip install dask[distributed]" in capsys.readouterr().err


def test_report_files(digits, mnist, tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (maixemu[eval]) not installed")
    report = tmp_path / "report"
    run_eval(mnist, digits, "--report", report, "--jobs", "1")
    html = (report / "index.html").read_text()
    for plot in ("confusion.png", "per_class.png", "worst.png"):
        assert f"plots/{plot}" in html and (report / "plots" / plot).stat().st_size > 1000
    summary = results(report)
    confusion = np.asarray(summary["confusion"]["matrix"])
    assert confusion.sum() == summary["images"] and np.trace(confusion) == summary["correct"]
    assert sum(p["images"] for p in summary["per_class"]) == summary["images"]
    assert summary["top5"] >= summary["accuracy"]


def test_without_the_eval_extra_plain_eval_still_works(digits, mnist, tmp_path, monkeypatch):
    """No tqdm, no matplotlib: the text progress line and a report with tables and a note."""
    import sys

    for name in ("tqdm", "matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)
    report = tmp_path / "report"
    assert main(["eval", str(mnist), str(digits), "--report", str(report), "--jobs", "1", "--limit", "5"]) == 0
    html = (report / "index.html").read_text()
    assert "Plots need matplotlib" in html and not (report / "plots").exists()
    assert results(report)["images"] == 5
