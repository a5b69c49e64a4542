"""The stubs as a pip user gets them: built into a wheel, installed non-editable into a fresh venv,
and mypy run over the samples with the documented commands.

The documented set-up is ``MYPYPATH=$(python -m maixpy_stubs) mypy main.py`` (or the ``[mypy]``
section ``python -m maixpy_stubs --mypy-config`` prints, in ``mypy.ini``). mypy refuses any
MYPYPATH/``mypy_path`` entry inside site-packages, so the plain stub tree is installed as data files
in ``<venv>/share/maixpy-stubs/typings``; the test also shows that the old in-site-packages path is
refused, so it would catch a regression to it.

The fresh venv gets the stubs from the wheel and borrows mypy from this test's environment (no
download; see ``tests/_venvs.py``); ``python`` on PATH is the fresh venv's, as after
``. venv/bin/activate``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from _shared import REPO_ROOT
from _venvs import build_wheel, fresh_venv, pip_install, run

pytest.importorskip("mypy", reason="mypy is not installed (pip install -e .[dev])")

STUBS = REPO_ROOT / "stubs"
SAMPLES = sorted((REPO_ROOT / "maixemu" / "samples").glob("*.py"))
#: A script with three mistakes only the stubs can see, and one line that is right only on a board:
#: ``time.ticks_ms`` exists in MaixPy's time (utime), not in CPython's.
MISTAKES = """\
import sensor, image, time
import KPU as kpu

start = time.ticks_ms()
sensor.snapshott()
img = image.Image(size=(320, 240))
img.draw_rectangle(0, 0, 10, 10, colour=(255, 0, 0))
task = kpu.load(0x300000)
for face in kpu.run_yolo2(task, img):
    print(face.rect())
"""


def _run(cmd: str | list, **kwargs) -> subprocess.CompletedProcess:
    return run(cmd, **kwargs)


@pytest.fixture(scope="module")
def stubs_wheel(tmp_path_factory) -> Path:
    names = tuple(p.name for p in STUBS.iterdir() if p.name not in ("build", "__pycache__") and not p.name.endswith(".egg-info"))
    return build_wheel(STUBS, names, tmp_path_factory.mktemp("stubs-build"))


@pytest.fixture(scope="module")
def project(stubs_wheel, tmp_path_factory) -> tuple[dict, Path, Path]:
    """(environment with the fresh venv activated, the venv, a project folder with the samples)."""
    env_dir = tmp_path_factory.mktemp("venv")
    python = fresh_venv(env_dir, borrow=["mypy"])
    pip_install(python, str(stubs_wheel))
    folder = tmp_path_factory.mktemp("project")
    for sample in SAMPLES:
        shutil.copy(sample, folder / sample.name)
    env = dict(os.environ, PATH=f"{env_dir / 'bin'}{os.pathsep}{os.environ['PATH']}", VIRTUAL_ENV=str(env_dir),
               MYPY_CACHE_DIR=str(folder / ".mypy_cache"))
    env.pop("MYPYPATH", None)
    return env, env_dir, folder


def test_the_wheel_ships_the_tree_outside_site_packages(stubs_wheel):
    names = zipfile.ZipFile(stubs_wheel).namelist()
    data = [n for n in names if "/data/share/maixpy-stubs/typings/" in n]
    assert any(n.endswith("/typings/time.pyi") for n in data) and any(n.endswith("/typings/Maix/__init__.pyi") for n in data)
    assert {"sensor-stubs/__init__.pyi", "KPU-stubs/__init__.pyi", "maixpy_stubs/__builtins__.pyi"} <= set(names)
    assert not any(n.startswith("maixpy_stubs/typings/") for n in names)  # the copy mypy refused


def test_python_m_maixpy_stubs_prints_the_installed_tree(project):
    env, env_dir, folder = project
    proc = _run("python -m maixpy_stubs", shell=True, env=env, cwd=folder)
    assert proc.returncode == 0, proc.stderr
    tree = Path(proc.stdout.strip())
    assert tree == (env_dir / "share" / "maixpy-stubs" / "typings").resolve()
    assert (tree / "sensor.pyi").is_file() and (tree / "time.pyi").is_file()


def test_documented_mypypath_command_checks_the_samples(project):
    env, _, folder = project
    proc = _run("MYPYPATH=$(python -m maixpy_stubs) python -m mypy *.py", shell=True, env=env, cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"no issues found in {len(SAMPLES)} source files" in proc.stdout


def test_mypy_config_section_checks_the_samples(project):
    env, _, folder = project
    proc = _run("python -m maixpy_stubs --mypy-config > mypy.ini && python -m mypy *.py", shell=True, env=env, cwd=folder)
    (folder / "mypy.ini").unlink(missing_ok=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_installed_stubs_catch_the_mistakes(project, tmp_path):
    env, _, _ = project
    (tmp_path / "main.py").write_text(MISTAKES)
    proc = _run("MYPYPATH=$(python -m maixpy_stubs) python -m mypy --show-error-codes main.py", shell=True, env=env,
                cwd=tmp_path)
    out = proc.stdout
    assert proc.returncode == 1
    assert 'Module has no attribute "snapshott"' in out
    assert 'Unexpected keyword argument "colour"' in out
    assert 'main.py:9: error: Item "None" of' in out and "(not iterable)" in out  # run_yolo2 gives None, not []
    assert "ticks_ms" not in out  # MaixPy's time, from the tree
    # Without the path, mypy takes CPython's time (the stub packages alone cannot override it):
    plain = _run("python -m mypy main.py", shell=True, env=env, cwd=tmp_path)
    assert 'Module has no attribute "ticks_ms"' in plain.stdout


def test_a_path_inside_site_packages_is_refused(project):
    """What the old layout documented (the tree inside site-packages): mypy stops at once."""
    env, env_dir, folder = project
    purelib = _run(["python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], env=env).stdout.strip()
    inside = Path(purelib) / "maixpy_stubs"
    proc = _run(["python", "-m", "mypy", SAMPLES[0].name], env=dict(env, MYPYPATH=str(inside)), cwd=folder)
    assert proc.returncode != 0 and "is in the MYPYPATH" in proc.stderr + proc.stdout
