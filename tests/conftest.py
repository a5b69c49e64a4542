"""Shared fixtures: where ``../shared`` (models, golden vectors, images, scripts) lives.

The shared folder sits next to the repository root. When it is absent (a bare clone), tests that
need it skip with a reason that says so instead of failing.

Every test runs on a board of its own: :func:`board_state` (autouse) powers one on before the test
and switches it off after, so no test sees another's camera, panel, pins, models or ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


def shared_path(*parts: str) -> Path:
    """A path inside ../shared, or skip the calling test if it is not there."""
    path = SHARED_DIR.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: the shared data folder (../shared next to the repo root) is absent")
    return path


@pytest.fixture(autouse=True)
def board_state():
    """The one fresh-board fixture: a powered-on ``BoardState`` that firmware calls of the test read.

    Plug adapters into it directly: ``board_state.storage = Storage(...)``,
    ``board_state.camera.plug(lambda: source)``, ``board_state.display = sink``,
    ``board_state.events.snapshot.append(hook)``, ``board_state.clock.use(now_ns, sleep_ns)``.
    """
    from maixemu.firmware import state

    board = state.BoardState()
    state.activate(board)
    try:
        yield board
    finally:
        state.deactivate(board)
        if "camera" in vars(board):
            board.camera.close()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return shared_path()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
