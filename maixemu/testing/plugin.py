"""The pytest plugin's fixtures: ``maixpy`` (whole scripts, :class:`~maixemu.testing.MaixPyRunner`) and
``maixpy_board`` (the firmware modules of a fresh board, :class:`~maixemu.testing.Board`).

Kept tiny on purpose: pytest imports every installed plugin at start-up, so the fixtures import the
runner (numpy, OpenCV, the session layer) only when a test asks for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def maixpy(tmp_path: Path):
    """Run MaixPy scripts in-process: ``maixpy.run(path, camera=[...], flash={addr: model})``."""
    from .run import MaixPyRunner

    return MaixPyRunner(tmp_path / "maixpy")


@pytest.fixture
def maixpy_board(tmp_path: Path) -> Iterator:
    """A freshly booted board: ``maixpy_board.sensor``, ``.image``, ``.lcd``, ``.KPU``, ``.time``."""
    from .board_fixture import board

    with board(tmp_path / "board") as b:
        yield b
