"""The pytest plugin maixemu registers (``pytest11`` entry point): the ``maixpy`` and ``maixpy_board`` fixtures.

Kept tiny on purpose: pytest imports every installed plugin at start-up, so the fixtures import
``maixemu.testing`` (numpy, OpenCV, the runner) only when a test asks for them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture
def maixpy(tmp_path: Path):
    """Run MaixPy scripts in-process: ``maixpy.run(path, camera=[...], flash={addr: model})``."""
    from .testing import MaixPyRunner

    return MaixPyRunner(tmp_path / "maixpy")


@pytest.fixture
def maixpy_board(tmp_path: Path) -> Iterator:
    """A freshly booted board: ``maixpy_board.sensor``, ``.image``, ``.lcd``, ``.KPU``, ``.time``."""
    from .testing import board

    with board(tmp_path / "board") as b:
        yield b
