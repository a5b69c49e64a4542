"""``maixemu samples`` lists the installed samples; ``maixemu run --sample NAME`` runs one.

The listing is read from the scripts themselves (their first comment line, and the files their
``maixemu run`` line maps), so these tests check it against the files in ``maixemu/samples``.
"""

from __future__ import annotations

import os

import pytest

from _shared import REPO_ROOT
from maixemu.cli import main
from maixemu.commands import samples

PACKAGED = REPO_ROOT / "maixemu" / "samples"


def test_the_repository_samples_folder_is_the_packaged_one():
    # samples/ at the root is a link, so the docs' and tests' `samples/X.py` paths are the installed files
    assert (REPO_ROOT / "samples").resolve() == PACKAGED.resolve()
    assert samples.SAMPLES_DIR.resolve() == PACKAGED.resolve()


def test_listing_has_one_line_per_sample(capsys):
    assert main(["samples"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = ["default"] + sorted(p.stem for p in PACKAGED.glob("*.py"))
    listed = [line.split()[0] for line in out[: len(names)]]
    assert listed == names
    for line, name in zip(out, names):
        assert line.endswith("]") and ("[runs as is]" in line or "[needs " in line), line
        summary = line[len(name):].strip()
        assert len(summary) > 30, line  # the first comment line says what the sample shows
    assert "maixemu run --sample NAME" in out[-1]


def test_what_each_sample_needs_comes_from_its_run_line():
    found = {s.name: s for s in samples.all_samples()}
    assert found["default"].runs_as_is and found["pix_to_ai_pitfall"].runs_as_is
    assert found["face_detect"].needs == ("face_model_at_0x300000.kfpkg",)
    assert found["mnist_fmaps"].needs == ("mnist.kmodel",)
    assert found["classifier_class_api"].needs == ("mnist.kmodel on /sd",)
    assert found["mobilenet_top1"].needs == ("mobilenet_v1_0.75_1000class.kmodel", "mobilenet_v1_labels.txt on /sd")


def test_one_sample_shows_its_path_and_header(capsys):
    assert main(["samples", "face_detect.py"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"face_detect: {PACKAGED.resolve() / 'face_detect.py'}\n")
    assert "kpu.load(0x300000)" not in out  # the header, not the code
    assert "--flash-image" in out and "cp " in out


def test_an_unknown_name_says_which_exist(capsys):
    assert main(["samples", "face_detct"]) == 2
    err = capsys.readouterr().err
    assert "no sample named 'face_detct'; did you mean 'face_detect'?" in err
    assert "pix_to_ai_pitfall" in err


def test_run_sample_runs_the_installed_script(capsys):
    code = main(["run", "--sample", "pix_to_ai_pitfall", "--frames", "2", "--lcd", "none", "--camera", "synthetic"])
    assert code == 0
    assert "resize() result has no AI memory" in capsys.readouterr().out


def test_run_sample_default_is_the_bundled_sample(tmp_path):
    out = tmp_path / "lcd"
    assert main(["run", "--sample", "default", "--frames", "2", "--lcd", f"record:{out}", "--camera", "synthetic", "-q"]) == 0
    assert len(list(out.glob("*.png"))) >= 2


@pytest.mark.parametrize("argv, message", [
    (["run", "x.py", "--sample", "default"], "give a SCRIPT or --sample NAME, not both"),
    (["run", "--sample", "nope"], "no sample named 'nope'"),
])
def test_bad_sample_options_exit_2(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_samples_are_plain_files_not_modules():
    # shipped as package data: no __init__.py, so `import maixemu.samples.x` cannot run a script by accident
    assert not (PACKAGED / "__init__.py").exists()
    assert all(os.access(p, os.R_OK) for p in PACKAGED.glob("*.py"))
