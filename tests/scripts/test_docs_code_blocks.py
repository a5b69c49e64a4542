"""Every code block of README.md, docs/*.md and stubs/README.md runs as written, or says why not.

The ``python`` and ``sh`` blocks are cut into units: each command of an ``sh`` block (continuation
lines joined, comments dropped), each ``python`` block whole. A unit is either run here, in a
scratch folder holding the files the docs name (``face.kmodel``, ``dog.jpg``, ``photos/``,
``my_script.py`` ... made from ``../shared`` and drawn digits), or listed in :data:`NOT_RUN` with
the reason. ``python`` blocks that start with ``# NAME.py`` (and the README's test example) are
files of one small project: they are written there and run together by a fresh pytest process (no
conftest, the plugin found through its entry point). Any other block is run, so a new block that
cannot run here fails until it gets a reason; a reason that matches no block any more fails
``test_every_block_is_run_or_has_a_reason``.

Untagged blocks (printed output, in troubleshooting.md) are not code. The YAML of docs/ci.md is
checked by ``test_ci_example.py``.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from _digits import draw_digit
from _shared import REPO_ROOT, SHARED_DIR

DOCUMENTS = [REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")), REPO_ROOT / "stubs" / "README.md"]
LANGUAGES = ("python", "sh")

#: Start of a unit -> why this test does not run it (and what does).
NOT_RUN = {
    'python3 -m venv .venv && . .venv/bin/activate && pip install -e ".[dev]"':
        "creates the venv and installs from the package index: .ci/run runs this line as written",
    ". .venv/bin/activate && python -m pytest": "the whole test suite, which this test is part of",
    "python -m maixemu.tools.image_bench --markdown docs/image-speed.md":
        "rewrites docs/image-speed.md of a checkout (the scratch project has no docs/): the same table "
        "without --markdown runs here, and tests/firmware/test_bench_image.py times the same cases",
    "maixemu bench": "benchmarks for minutes; tests/kmodel/test_bench_kmodel.py runs the command",
    "MAIXEMU_KPU_PRODUCTS=u8u8,f32,f64 maixemu bench":
        "benchmarks for minutes (docs/benchmarks.md); tests/kmodel/test_bench_kmodel.py runs the command and "
        "the kpu_engine fixture forces each product kind",
    "python -m maixemu.tools.emulated_cpu --cpu Haswell":
        "loads models under qemu-x86_64 for minutes; tests/kmodel/test_products.py holds the proof it reports on",
    "MAIXEMU_CACHE_DIR=$(mktemp -d) /usr/bin/time -v maixemu run samples/face_detect.py":
        "a timing of the whole process (docs/benchmarks.md); tests/scripts run the face sample itself",
    "python -m maixemu.tools.soak --frames 5000":
        "5000 frames take minutes; tests/session/test_hardening_soak.py runs the soak on a few frames",
    "pip install ./stubs":
        "installs into this environment; tests/firmware/test_stubs_install.py installs the stubs' wheel "
        "into a fresh venv and runs the MYPYPATH=$(python -m maixpy_stubs) command there",
    "MYPYPATH=$(python -m maixpy_stubs) mypy": "needs the stubs installed: tests/firmware/test_stubs_install.py",
    'pip install -e ".[eval]"': "installs into this environment (the dev set-up has the eval extra already)",
    "maixemu eval face.kmodel faces/":
        "needs face photos annotated with boxes; tests/commands/test_eval_command.py runs detection eval (mAP)",
    "maixemu run samples/ide_tour.py --ide":
        "serves the IDE page until stopped; tests/session/test_ide_run.py and test_ide_browser.py run it",
    "python -m pytest tests/firmware/test_stubs.py": "part of this test suite",
    "python -m pytest tests/firmware/test_stubs_install.py": "part of this test suite",
}
#: Python blocks that are files of the example project, by their first line -> file name.
PROJECT_FILES = {
    "# face_count.py": "face_count.py",
    "# test_face_count.py": "test_face_count.py",
    "# test_biggest_face.py": "test_biggest_face.py",
    "def test_counts_faces(maixpy):": "test_readme_counts_faces.py",
}

#: A finite MaixPy script for the README's `maixemu run my_script.py ...` lines.
MY_SCRIPT = """\
import sensor, lcd
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
for i in range(3):
    lcd.display(sensor.snapshot())
"""
#: ... and one that calls the KPU (maixemu's pre-flashed demo model), for the --show-ai lines.
KPU_SCRIPT = """\
import sensor, lcd
import KPU as kpu
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
task = kpu.load(0xF00000)
for i in range(3):
    img = sensor.snapshot()
    fmap = kpu.forward(task, img)
    lcd.display(img)
"""
#: A script written as MaixPy's examples are (every call assigned to `a`), for stubs/README.md.
EXAMPLE_STYLE = """\
import sensor, image, lcd
lcd.init()
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
img = sensor.snapshot()
a = img.draw_rectangle(0, 0, 10, 10)
a = lcd.display(img)
"""


@dataclass(frozen=True)
class Unit:
    document: str  # path relative to the repository
    line: int
    language: str
    text: str

    @property
    def id(self) -> str:
        first = self.text.strip().splitlines()[0]
        return f"{self.document}:{self.line}: {first[:60]}"


def _commands(text: str) -> list[tuple[int, str]]:
    """(line offset, command) of an sh block: continuations joined, comments and blank lines dropped."""
    out: list[tuple[int, str]] = []
    pending, start = "", 0
    for offset, raw in enumerate(text.splitlines()):
        line = re.sub(r"\s+#\s.*$", "", raw).rstrip() if not raw.lstrip().startswith("#") else ""
        if not pending:
            start = offset
        if line.endswith("\\"):
            pending += line[:-1].rstrip() + " "
            continue
        command = (pending + line.strip()).strip()
        pending = ""
        if command:
            out.append((start, command))
    return out


def all_units() -> list[Unit]:
    units = []
    for doc in DOCUMENTS:
        text = doc.read_text(encoding="utf-8")
        for match in re.finditer(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M):
            language, body = match.group(1), match.group(2)
            if language not in LANGUAGES:
                continue
            line = text[: match.start()].count("\n") + 2
            name = doc.relative_to(REPO_ROOT).as_posix()
            if language == "python":
                units.append(Unit(name, line, language, body))
            else:
                units += [Unit(name, line + offset, language, command) for offset, command in _commands(body)]
    return units


def _reason(unit: Unit) -> str | None:
    return next((why for start, why in NOT_RUN.items() if unit.text.strip().startswith(start)), None)


def _project_file(unit: Unit) -> str | None:
    first = unit.text.strip().splitlines()[0]
    return next((name for start, name in PROJECT_FILES.items() if first.startswith(start)), None)


UNITS = all_units()
COMMANDS = [u for u in UNITS if _reason(u) is None and _project_file(u) is None]


def test_every_block_is_run_or_has_a_reason():
    assert len(UNITS) > 20
    used = {start for start in NOT_RUN if any(u.text.strip().startswith(start) for u in UNITS)}
    assert used == set(NOT_RUN), f"NOT_RUN entries that match no block any more: {set(NOT_RUN) - used}"
    files = {_project_file(u) for u in UNITS} - {None}
    assert files == set(PROJECT_FILES.values()), "a project file of the docs is gone or renamed"


# ------------------------------------------------------------------------------------ the scratch project
def _link(target: Path, link: Path) -> None:
    if not target.exists():
        pytest.skip(f"{target} not found: the docs' examples need ../shared next to the repository")
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    """The files the docs' examples name, in one folder (the user's project)."""
    w = tmp_path_factory.mktemp("docs-world")
    models, images = SHARED_DIR / "models" / "v3", SHARED_DIR / "images"
    _link(models / "face_detect_320x240.kmodel", w / "face.kmodel")
    _link(models / "face_detect_320x240.kmodel", w / "face_detect_320x240.kmodel")
    # "model.kmodel" and its float source: the V4 ULFD face model (its .tflite is in ../shared/reference)
    _link(SHARED_DIR / "models" / "v4" / "ulffd_landmark.kmodel", w / "model.kmodel")
    _link(SHARED_DIR / "reference" / "ulffd_landmark.tflite", w / "float.tflite")
    _link(models / "mnist.kmodel", w / "mnist.kmodel")
    _link(models / "mobilenet_v1_0.75_1000class.kmodel", w / "mbnet.kmodel")
    _link(models / "mobilenet_v1_labels.txt", w / "labels.txt")
    _link(SHARED_DIR / "models" / "v4" / "ulffd_landmark.kmodel", w / "ulffd_landmark.kmodel")
    _link(SHARED_DIR / "reference" / "ulffd_landmark.tflite", w / "ulffd_landmark.tflite")
    faces = sorted(images.glob("face_2*.jpg"))
    if not faces or not (images / "dog.bmp").exists():
        pytest.skip("../shared/images is absent")
    for face in faces:
        _link(face, w / "photos" / face.name)
        _link(face, w / "faces" / face.name)  # docs/eval.md's --layers example
    _link(SHARED_DIR / "reference" / "ulffd_landmark.tflite", w / "model.tflite")  # maixemu check's examples
    _link(images / "face_21.jpg", w / "face_21.jpg")
    _link(images / "face_21.jpg", w / "face.jpg")
    with Image.open(images / "dog.bmp") as dog:
        dog.convert("RGB").save(w / "dog.jpg")
    (w / "DATA").mkdir()
    shutil.copy(w / "dog.jpg", w / "DATA" / "dog.jpg")
    shutil.copy(images / "face_21.jpg", w / "DATA" / "face_21.jpg")
    labels = (models / "mobilenet_v1_labels.txt").read_text().splitlines()
    with open(w / "list.csv", "w", newline="") as f:  # path,label with the labels' spelling
        csv.writer(f).writerows([("dog.jpg", labels[208]), ("face.jpg", labels[0])])
    for digit in range(10):
        folder = w / "digits" / str(digit)
        folder.mkdir(parents=True)
        Image.fromarray(draw_digit(digit)).save(folder / f"{digit}.png")
    (w / "my_script.py").write_text(MY_SCRIPT)
    (w / "script.py").write_text(KPU_SCRIPT)
    (w / "main.py").write_text(EXAMPLE_STYLE)
    (w / "stubs").symlink_to(REPO_ROOT / "stubs")
    (w / "samples").symlink_to(REPO_ROOT / "samples")
    return w


def _env(world: Path) -> dict:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
               MYPY_CACHE_DIR=str(world / ".mypy_cache"), MPLBACKEND="Agg")
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "MYPYPATH"):
        env.pop(name, None)  # a CI machine: no display
    return env


@pytest.mark.parametrize("unit", COMMANDS, ids=[u.id for u in COMMANDS])
def test_block_runs_as_written(unit: Unit, world: Path, tmp_path):
    if unit.language == "python":
        script = tmp_path / "block.py"
        script.write_text(unit.text)
        cmd = [sys.executable, str(script)]
    else:
        cmd = ["bash", "-euo", "pipefail", "-c", unit.text]
    project = tmp_path / "project"  # a copy per command: what one writes (reports, recordings) stays its own
    shutil.copytree(world, project, symlinks=True)
    proc = subprocess.run(cmd, cwd=project, env=_env(project), capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{unit.id}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]


def test_the_example_project_passes_its_tests(world: Path, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(world, project, symlinks=True)
    for unit in UNITS:
        name = _project_file(unit)
        if name:
            (project / name).write_text(unit.text)
    (project / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:benchmark"],
                          cwd=project, env=_env(world), capture_output=True, text=True, timeout=900,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    tests = sum(unit.text.count("\ndef test_") + unit.text.startswith("def test_") for unit in UNITS
                if (_project_file(unit) or "").startswith("test_"))
    assert f"{tests} passed" in proc.stdout, proc.stdout[-1000:]


def test_the_readme_states_the_input_shape_load_kmodel_gives():
    """The README's ``load_kmodel`` example says which shape its face model's input has: the one it has."""
    from maixemu.kmodel import load_kmodel

    line = next(line for line in (REPO_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
                if line.startswith("print(m.inputs[0].shape)"))
    stated = tuple(int(v) for v in re.search(r"# \(([\d, ]+)\)", line).group(1).split(","))
    assert load_kmodel(SHARED_DIR / "models" / "v3" / "face_detect_320x240.kmodel").inputs[0].shape == stated
