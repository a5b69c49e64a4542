"""Compiled kernels are cached in the user's cache folder (``kmodel.kpu.fast.cache_dir()``:
``$MAIXEMU_CACHE_DIR/numba`` here), never next to the installed sources (with ``pip install -e``
that is the user's checkout): the KPU's kernels and the image module's (``firmware.image._jit``)
alike."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("numba") is None, reason="numba (the fast extra) is not installed")

#: one small kernel of each family, compiled in a fresh process
CHILD = """
import numpy as np
from maixemu.kmodel.kpu import fast
fast.kernels().chw_to_hwc(np.zeros((2, 3, 4), np.uint8), np.empty((3, 4, 2), np.uint8))
from maixemu.firmware import image
image.Image(size=(8, 8)).mode(1)
"""


def test_compiled_kernels_are_cached_in_the_cache_folder_only(tmp_path):
    import maixemu

    package = Path(maixemu.__file__).parent
    before = set(package.rglob("*.nbi"))
    env = dict(os.environ, MAIXEMU_CACHE_DIR=str(tmp_path), MAIXEMU_KPU_ENGINE="auto")
    for name in ("MAIXEMU_NO_JIT", "NUMBA_DISABLE_JIT", "NUMBA_CACHE_DIR"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-c", CHILD], env=env, check=True, timeout=900, cwd=tmp_path)
    cached = {p.name.split("-")[0] for p in (tmp_path / "numba").rglob("*.nbi")}
    assert {"kernels.chw_to_hwc", "_filters._mode_kernel"} <= cached, cached
    assert set(package.rglob("*.nbi")) == before, "a kernel was cached next to maixemu's sources"
