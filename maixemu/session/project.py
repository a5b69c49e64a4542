"""A project's own run options: ``maixemu.toml``, or ``[tool.maixemu]`` in ``pyproject.toml``.

So ``maixemu run main.py`` needs no options in a configured project::

    # maixemu.toml (next to main.py, or in any folder above it)
    flash = { 0x300000 = "models/face.kmodel" }   # paths are relative to this file's folder
    firmware = "minimum"
    camera = "clips/desk.mp4"
    lcd = "window"
    ai-memory = "warn"
    frames = 300

The file is looked for from the script's folder upwards; in one folder ``maixemu.toml`` wins over a
``pyproject.toml`` with a ``[tool.maixemu]`` table, and a ``pyproject.toml`` without one is passed
over. Options given on the command line override the file. The pytest plugin reads the same file
for the options a test inherits (``maixemu.session.spec.inherited_by_tests``: the models, firmware,
camera, board, wiring, timeout and quietness): a test's own arguments override it, and a test's
``/sd`` and ``/flash``, outputs and frame budget stay its own. The keys, what each allows and how
values merge are :class:`maixemu.session.spec.RunSpec`'s. A mistake in the file is one line naming
the file, the key and what is allowed (:class:`ProjectFileError`; ``maixemu run`` exits 2).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spec import ProjectValueError, read_project_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the ``tomli`` package (a dependency there)
    import tomli as tomllib

PROJECT_FILE = "maixemu.toml"
PYPROJECT = "pyproject.toml"


class ProjectFileError(Exception):
    """A project file that cannot be used: ``FILE: key: what is allowed`` (one line)."""


@dataclass
class ProjectFile:
    """A project file and the run options it sets, by :class:`~maixemu.session.spec.RunSpec` field
    name (paths absolute)."""

    file: Path
    values: dict[str, Any] = field(default_factory=dict)


def find_project_file(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest project file from ``start`` upwards and its maixemu table, or None."""
    folder = Path(start).resolve()
    if not folder.is_dir():
        folder = folder.parent
    for place in (folder, *folder.parents):
        own = place / PROJECT_FILE
        if own.is_file():
            return own, _read(own)
        pyproject = place / PYPROJECT
        if pyproject.is_file():
            try:
                data = _read(pyproject)
            except ProjectFileError:
                continue  # a broken pyproject.toml may belong to anything; ours is only [tool.maixemu]
            table = data.get("tool", {}).get("maixemu") if isinstance(data.get("tool"), dict) else None
            if table is not None:
                if not isinstance(table, dict):
                    raise ProjectFileError(f"{pyproject}: tool.maixemu: must be a table ([tool.maixemu])")
                return pyproject, table
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError as exc:
        raise ProjectFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ProjectFileError(f"{path}: not valid TOML: {exc}") from None


def parse(file: Path, table: dict[str, Any]) -> ProjectFile:
    """Check every key of a project file's table; :class:`ProjectFileError` on the first mistake."""
    prefix = "tool.maixemu." if file.name == PYPROJECT else ""
    try:
        values = read_project_table(table, file.resolve().parent, prefix=prefix)
    except ProjectValueError as exc:
        raise ProjectFileError(f"{file}: {exc}") from None
    return ProjectFile(file, values)


def load_project(start: Path) -> ProjectFile | None:
    """The project file for a script in (or below) ``start``, or None when there is none."""
    found = find_project_file(start)
    if found is None:
        return None
    return parse(*found)


__all__ = ["PROJECT_FILE", "ProjectFile", "ProjectFileError", "find_project_file", "load_project", "parse"]
