"""Issue 24: ``maixemu eval`` refuses what no image can go through, and a report that would replace
files it did not write, with one line and exit 2 before anything runs; a report kept inside the
dataset never becomes part of it; ``--jobs`` never starts more processes than there are cores."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from _shared import shared_path
from eval_data import make_digits
from maixemu.evaluate import executors


@pytest.fixture(scope="module")
def digits(tmp_path_factory) -> Path:
    return make_digits(tmp_path_factory.mktemp("digits") / "digits", 2, seed=3)


@pytest.fixture(scope="module")
def mnist() -> Path:
    return shared_path("models", "v3", "mnist.kmodel")


def _eval(*args, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", "eval", *map(str, args), "-q"], capture_output=True,
                          text=True, timeout=600, stdin=subprocess.DEVNULL, cwd=cwd)


@pytest.mark.parametrize("options, line", [
    (["--framesize", "99999x99999"], "maixemu eval: --framesize 99999x99999: the camera delivers at most 1600x1200 (UXGA)\n"),
    (["--crop", "0,0,100000,100000", "--resize", "28,28"],
     "maixemu eval: --crop 0,0,100000,100000: a 100000x100000 image does not fit the K210's memory (MemoryError: Out "
     "of normal MicroPython Heap Memory! Please reduce the resolution of the image you are running this algorithm on "
     "to bypass this issue!)\n"),
    (["--resize", "99999,99999"], None),
])
def test_sizes_no_image_can_take_are_one_line_and_exit_2(digits, mnist, tmp_path, options, line):
    """Today's main ran into a 30 GB allocation (a raw cv2/numpy traceback)."""
    proc = _eval(mnist, digits, "--report", tmp_path / "report", "--pixformat", "grayscale", *options)
    assert proc.returncode == 2
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    if line is not None:
        assert proc.stderr == line
    assert not (tmp_path / "report").exists()


def test_a_report_that_names_a_file_is_one_line(digits, mnist, tmp_path):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    proc = _eval(mnist, digits, "--report", target, "--pixformat", "grayscale")
    assert proc.returncode == 2
    assert proc.stderr == f"maixemu eval: --report {target}: it is a file, not a folder; give a folder name\n"
    assert target.read_text() == "mine\n"


def test_a_report_never_replaces_files_maixemu_did_not_write(digits, mnist, tmp_path):
    report = tmp_path / "report"
    report.mkdir()
    (report / "results.json").write_text('{"mine": true}\n')
    (report / "index.html").write_text("<p>my page</p>\n")
    proc = _eval(mnist, digits, "--report", report, "--pixformat", "grayscale")
    assert proc.returncode == 2
    assert proc.stderr == (f"maixemu eval: --report {report}: it holds index.html, results.json that maixemu did not "
                           "write; choose another name, or pass --overwrite to replace it\n")
    assert (report / "results.json").read_text() == '{"mine": true}\n'
    proc = _eval(mnist, digits, "--report", report, "--pixformat", "grayscale", "--overwrite")
    assert proc.returncode == 0, proc.stderr
    assert "accuracy" in json.loads((report / "results.json").read_text())
    again = _eval(mnist, digits, "--report", report, "--pixformat", "grayscale", "--fresh")
    assert again.returncode == 0, again.stderr  # maixemu's own report: replaced without --overwrite


def test_a_report_inside_the_dataset_does_not_feed_the_next_run(digits, mnist, tmp_path):
    """Today's main took the report folder (its plots) for one more class of the dataset."""
    data = tmp_path / "data"
    for folder in ("0", "1"):
        (data / folder).mkdir(parents=True)
        for image in sorted((digits / folder).iterdir()):
            (data / folder / image.name).write_bytes(image.read_bytes())
    report = data / "zz-report"
    for _ in range(2):
        proc = _eval(mnist, data, "--report", report, "--pixformat", "grayscale", "--labels", _labels(tmp_path))
        assert proc.returncode == 0, proc.stderr
        results = json.loads((report / "results.json").read_text())
        assert results["images"] == 4 and results["data"]["layout"] == "class folders"
    elsewhere = tmp_path / "other-report"
    proc = _eval(mnist, data, "--report", elsewhere, "--pixformat", "grayscale", "--labels", _labels(tmp_path))
    assert proc.returncode == 0, proc.stderr  # a marked report folder is never read, wherever the new report goes
    assert json.loads((elsewhere / "results.json").read_text())["images"] == 4


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.txt"
    path.write_text("".join(f"{n}\n" for n in range(10)))
    return path


def test_jobs_are_capped_at_the_cores(digits, mnist, tmp_path, monkeypatch, capsys):
    """Today's main started 16 processes for 20 images on 2 cores (8x slower than one)."""
    from maixemu.evaluate import EvalOptions, evaluate

    monkeypatch.setattr(executors, "default_jobs", lambda: 1)
    outcome = evaluate(EvalOptions(model=mnist, data=digits, report=tmp_path / "r", pixformat="grayscale", jobs=16))
    assert json.loads((outcome.report / "run.json").read_text())["executor"] == "serial"
    assert "--jobs 16: 1 worker process(es), one per core" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_a_labels_file_that_never_ends_is_refused(digits, mnist, tmp_path, kind):
    """``--labels /dev/zero`` (or a FIFO) hung today's main, reading for ever."""
    import os

    labels = Path("/dev/zero")
    if kind == "fifo":
        labels = tmp_path / "labels.txt"
        os.mkfifo(labels)
    proc = _eval(mnist, digits, "--report", tmp_path / "r", "--pixformat", "grayscale", "--labels", labels)
    assert proc.returncode == 2
    assert proc.stderr == f"maixemu eval: --labels {labels}: not a regular file (one class name per line)\n"
