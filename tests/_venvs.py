"""Fresh virtual environments for the tests that install maixemu (or its stubs) as a user would.

Installing numpy, OpenCV or mypy from an index in every test run would download hundreds of MB, so a
fresh venv *borrows* chosen distributions from this test's environment: their top-level files are
linked into one folder that a ``.pth`` line puts on the fresh venv's path. Only the distributions
asked for (and what they require) are visible there, so pip and ``import`` in the fresh venv never
see this environment's editable maixemu.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import sysconfig
import venv
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

from _shared import REPO_ROOT

#: What building maixemu's wheel reads from the checkout; copied so that setuptools' build/ and
#: egg-info folders land in the copy, never in the repository.
MAIXEMU_SOURCES = ("maixemu", "setup.cfg", "pyproject.toml", "README.md")


def run(cmd, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL, **kwargs)


def build_wheel(sources: Path, names: tuple[str, ...], work: Path) -> Path:
    """``pip wheel SOURCE --no-deps`` of a copy of ``names`` under ``sources``; the wheel's path."""
    src, out = work / "src", work / "wheel"
    src.mkdir(parents=True)
    for name in names:
        if (sources / name).is_dir():
            shutil.copytree(sources / name, src / name, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        else:
            shutil.copy(sources / name, src / name)
    proc = run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "-q", "-w", str(out)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = out.glob("*.whl")
    return wheel


def maixemu_wheel(work: Path) -> Path:
    return build_wheel(REPO_ROOT, MAIXEMU_SOURCES, work)


def _closure(names: list[str]) -> list[metadata.Distribution]:
    """The distributions ``names`` and everything they require (no extras), from this environment."""
    found: dict[str, metadata.Distribution] = {}
    todo = list(names)
    while todo:
        name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
        if name in found:
            continue
        dist = metadata.distribution(name)
        found[name] = dist
        for text in dist.requires or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return list(found.values())


def fresh_venv(path: Path, *, borrow: list[str], with_pip: bool = False) -> Path:
    """A new venv at ``path`` that sees only ``borrow`` (and their requirements) from this one;
    returns its python."""
    venv.EnvBuilder(with_pip=with_pip).create(path)
    python = path / "bin" / "python"
    purelib = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    here = Path(sysconfig.get_paths()["purelib"])
    shelf = path / "borrowed"
    shelf.mkdir()
    for dist in _closure(borrow):
        for top in {Path(str(f)).parts[0] for f in dist.files or []}:
            source = here / top
            if top not in ("..", "__pycache__") and source.exists() and not (shelf / top).exists():
                (shelf / top).symlink_to(source)
    (purelib / "_borrowed.pth").write_text(f"{shelf}\n")
    return python


def pip_install(python: Path, *args: str) -> None:
    proc = run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", *args])
    assert proc.returncode == 0, proc.stderr[-3000:]
