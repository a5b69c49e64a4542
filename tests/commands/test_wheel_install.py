"""maixemu installed from a wheel (not editable) ships its samples, and they run from there.

``pip wheel . --no-deps`` builds the wheel as ``pip install .`` would; the test reads its file list,
installs it into a fresh virtual environment and runs ``maixemu samples`` and ``maixemu run
--sample ...`` with that environment's console script, from a folder outside the repository, so
nothing can come from the checkout. The fresh environment gets maixemu itself from the wheel and
borrows numpy, Pillow and OpenCV from this test's environment through a ``.pth`` line (no
download; the line adds only that folder, not its editable-install hooks, and the test checks that
``import maixemu`` resolves to the wheel's copy).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

from _shared import REPO_ROOT

SAMPLES = sorted(p.name for p in (REPO_ROOT / "maixemu" / "samples").glob("*.py"))


def _run(argv: list, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600,
                          stdin=subprocess.DEVNULL, **kwargs)


#: What the build reads from the checkout; copied so that setuptools' build/ and egg-info folders
#: land in the copy, never in the repository.
SOURCES = ("maixemu", "setup.cfg", "pyproject.toml", "README.md")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("wheel")
    for name in SOURCES:
        if (REPO_ROOT / name).is_dir():
            shutil.copytree(REPO_ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(REPO_ROOT / name, src / name)
    proc = _run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "-q", "-w", out], cwd=out)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (found,) = out.glob("maixemu-*.whl")
    return found


@pytest.fixture(scope="module")
def fresh_env(wheel, tmp_path_factory) -> Path:
    env = tmp_path_factory.mktemp("venv")
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    purelib = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    (Path(purelib) / "_borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    proc = _run([sys.executable, "-m", "pip", "--python", python, "install", "--no-deps", "--no-index", "-q", wheel])
    assert proc.returncode == 0, proc.stderr[-3000:]
    where = _run([python, "-c", "import maixemu; print(maixemu.__file__)"], cwd=env)
    assert where.stdout.strip().startswith(purelib), where
    return env


def test_the_wheel_holds_every_sample_and_the_data(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {f"maixemu/samples/{name}" for name in SAMPLES} <= names
    assert {"maixemu/data/default_sample.py", "maixemu/data/edge_filters.kmodel", "maixemu/py.typed"} <= names
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
