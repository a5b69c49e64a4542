"""maixemu installed from a wheel (not editable) ships its samples, and they run from there.

``pip wheel . --no-deps`` builds the wheel as ``pip install .`` would; the test reads its file list,
installs it into a fresh virtual environment and runs ``maixemu samples`` and ``maixemu run
--sample ...`` with that environment's console script, from a folder outside the repository, so
nothing can come from the checkout. The fresh environment gets maixemu itself from the wheel and
borrows numpy, Pillow, OpenCV and tqdm from this test's environment (no download; see
``tests/_venvs.py``), and the test checks that ``import maixemu`` resolves to the wheel's copy.
"""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

import pytest

from _shared import REPO_ROOT
from _venvs import fresh_venv, maixemu_wheel, pip_install, run

SAMPLES = sorted(p.name for p in (REPO_ROOT / "maixemu" / "samples").glob("*.py"))


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    return run([str(a) for a in argv], **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    return maixemu_wheel(tmp_path_factory.mktemp("build"))


@pytest.fixture(scope="module")
def fresh_env(wheel, tmp_path_factory) -> Path:
    env = tmp_path_factory.mktemp("venv")
    python = fresh_venv(env, borrow=["numpy", "pillow", "opencv-python", "tqdm", "threadpoolctl"])
    pip_install(python, str(wheel))
    where = run([str(python), "-c", "import maixemu; print(maixemu.__file__)"], cwd=env)
    assert where.stdout.strip().startswith(str(env / "lib")), where
    return env


def test_the_wheel_holds_every_sample_and_the_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"maixemu/samples/{name}" for name in SAMPLES} <= names
    assert {"maixemu/data/default_sample.py", "maixemu/data/edge_filters.kmodel", "maixemu/py.typed"} <= names
    page = REPO_ROOT / "maixemu" / "host" / "ide" / "page"
    assert {f"maixemu/host/ide/page/{p.name}" for p in page.glob("*") if p.is_file()} <= names  # the IDE page
    assert not any(n.startswith(("samples/", "tests/", "docs/")) or "__pycache__" in n for n in names)


def test_maixemu_samples_lists_them_from_the_installed_copy(fresh_env, tmp_path):
    proc = _run([fresh_env / "bin" / "maixemu", "samples"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0] for line in proc.stdout.splitlines()[: len(SAMPLES) + 1]]
    assert listed == ["default"] + [n[:-3] for n in SAMPLES]
    shown = _run([fresh_env / "bin" / "maixemu", "samples", "face_detect"], cwd=tmp_path)
    assert "site-packages/maixemu/samples/face_detect.py" in shown.stdout


@pytest.mark.parametrize("argv", [["--sample", "pix_to_ai_pitfall"], []], ids=["pitfall-sample", "default"])
def test_samples_run_from_the_installed_copy(fresh_env, tmp_path, argv):
    out = tmp_path / "lcd"
    proc = _run([fresh_env / "bin" / "maixemu", "run", *argv, "--frames", "2", "--camera", "synthetic",
                 "--lcd", f"record:{out}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert len(list(out.glob("*.png"))) >= 2
    assert "Traceback" not in proc.stderr
