"""Build pieces of the firmware's own C (read from the MaixPy-v1 mirror at test time) into small PC
programs, so a test can compare maixemu with what the firmware's code computes on the same input.

Nothing of the firmware is kept in the project: the sources are read from ``../.mirror`` (developer
machines) and compiled into ``tmp_path`` with the firmware's flags (``compile_flags.cmake``: gnu11,
-Os, -ffast-math, -fsingle-precision-constant, -ffloat-store, and unsigned ``char`` as on RISC-V).
On the PC the compiler does not contract ``a*b+c`` into FMA, so these builds are the firmware's
*no-FMA* arithmetic. Tests using this skip cleanly when the mirror or a C compiler is absent.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from _shared import REPO_ROOT

MIRROR = REPO_ROOT.parent / ".mirror" / "sipeed+MaixPy-v1" / "repo"
IMG_DIR = "components/micropython/port/src/omv/img"
FIRMWARE_FLAGS = ["-std=gnu11", "-Os", "-ffast-math", "-fsingle-precision-constant", "-ffloat-store",
                  "-funsigned-char", "-w"]


def have_firmware_c() -> bool:
    return MIRROR.is_dir() and shutil.which("gcc") is not None


needs_firmware_c = pytest.mark.skipif(
    not have_firmware_c(), reason="needs the MaixPy-v1 mirror (../.mirror, developer machines) and gcc")


def firmware_source(path: str) -> str:
    """A file of the firmware at the golden commit's tree (``HEAD`` of the mirror)."""
    return subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


def build(tmp_path: Path, name: str, source: str, extra_flags: tuple[str, ...] = ()) -> Path:
    """Compile one C translation unit (already assembled by the test) into ``tmp_path/name``."""
    src = tmp_path / f"{name}.c"
    src.write_text(source)
    exe = tmp_path / name
    subprocess.run(["gcc", *FIRMWARE_FLAGS, *extra_flags, "-o", str(exe), str(src), "-lm"], check=True,
                   capture_output=True, text=True)
    return exe


def run(exe: Path, stdin: bytes) -> str:
    return subprocess.run([str(exe)], input=stdin, capture_output=True, check=True, timeout=120).stdout.decode("latin-1")
