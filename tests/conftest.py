"""Shared fixtures: where ``../shared`` (models, golden vectors, images, scripts) lives.

The shared folder sits next to the repository root. When it is absent (a bare clone), tests that
need it skip with a reason that says so instead of failing.
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


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    return shared_path()


@pytest.fixture(scope="session")
def repo_root() -> Path:
    return REPO_ROOT
