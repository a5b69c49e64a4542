"""The package type-checks: mypy over ``maixemu`` with the settings of ``pyproject.toml``
(``[tool.mypy]``) reports no error, so CI (``.ci/run`` runs the tests) holds every change to it.

The settings are read from the project file itself, never restated here, and the cache goes to
a temporary folder (nothing is written into the repository). Skipped only when mypy is not
installed (it is in the ``dev`` extra: ``pip install -e ".[dev]"``).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = ROOT / "pyproject.toml"


def _mypy_settings() -> dict:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    with open(PYPROJECT, "rb") as fh:
        return tomllib.load(fh)["tool"]["mypy"]


def test_mypy_settings_are_honest() -> None:
    """No blanket switch hides errors: the package is checked whole, and untyped third-party modules
    are excused one by one (``[[tool.mypy.overrides]]``), never all at once."""
    settings = _mypy_settings()
    assert settings["files"] == ["maixemu"]
    assert settings["python_version"] == "3.10"  # the oldest Python setup.cfg accepts
    assert settings.get("warn_unused_ignores") is True
    assert "ignore-without-code" in settings.get("enable_error_code", [])
    assert settings.get("check_untyped_defs") is True  # unannotated bodies are checked too
    assert not settings.get("ignore_errors") and not settings.get("ignore_missing_imports")
    for override in settings.get("overrides", []):
        assert not override.get("ignore_errors"), override
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert not any(m.startswith("maixemu") for m in modules), override  # only third-party modules


def test_package_is_mypy_clean(tmp_path: Path) -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip('mypy is not installed (pip install -e ".[dev]")')
    # a fresh process (mypy's own state and memory stay out of the test run), the project's config,
    # its file list, a cache under the test's temporary folder
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(PYPROJECT), "--cache-dir", str(tmp_path / "cache"),
         "--no-color-output", "--show-error-codes"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800,
    )
    report = (result.stdout + result.stderr).strip()
    assert result.returncode == 0, f"mypy found errors (run `mypy` in the repository root):\n{report}"
    assert report.startswith("Success: no issues found"), report
