"""A project's own run options: ``maixemu.toml``, or ``[tool.maixemu]`` in ``pyproject.toml``.

So ``maixemu run main.py`` needs no options in a configured project::

    # maixemu.toml (next to main.py, or in a folder above it inside the same project)
    flash = { 0x300000 = "models/face.kmodel" }   # paths are relative to this file's folder
    firmware = "minimum"
    camera = "clips/desk.mp4"
    lcd = "window"
    ai-memory = "warn"
    frames = 300

The file is looked for in the script's own project only (:func:`project_folders`): the script's
folder, and the folders above it up to the project's top, a folder holding a version-control
checkout (``.git``, ``.hg``, ...) or a ``pyproject.toml``. Without such a top below the user's home
only the script's own folder counts; the home folder and the folders above it, and folders anyone
may write to (a shared temp folder), never do — a file there would apply to every script below it.
A file past :data:`MAX_PROJECT_FILE_BYTES` is one line, not read. In one folder ``maixemu.toml``
wins over a ``pyproject.toml`` with a ``[tool.maixemu]`` table, and a ``pyproject.toml`` without
one is passed over (it still marks the project's top). Options given on the command line override
the file. The pytest plugin reads the same file for the options a test inherits
(``maixemu.session.spec.inherited_by_tests``: the models, firmware, camera, board, wiring, timeout
and quietness): a test's own arguments override it, and a test's ``/sd`` and ``/flash``, outputs
and frame budget stay its own. The keys, what each allows and how values merge are
:class:`maixemu.session.spec.RunSpec`'s. A file that switches copy-on-write off (``writable``,
``sd``, ``flash-dir``) says so in one line even with ``quiet = true`` (:func:`copy_on_write_line`).
A mistake in the file is one line naming the file, the key and what is allowed
(:class:`ProjectFileError`; ``maixemu run`` exits 2).
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .spec import ProjectValueError, option_of, read_project_table

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the ``tomli`` package (a dependency there)
    import tomli as tomllib

PROJECT_FILE = "maixemu.toml"
PYPROJECT = "pyproject.toml"
#: What marks the top folder of a project: a version-control checkout, or a Python project.
PROJECT_TOP_MARKERS = (".git", ".hg", ".svn", ".bzr", "_darcs", ".fslckout", PYPROJECT)


class ProjectFileError(Exception):
    """A project file that cannot be used: ``FILE: key: what is allowed`` (one line)."""


@dataclass
class ProjectFile:
    """A project file and the run options it sets, by :class:`~maixemu.session.spec.RunSpec` field
    name (paths absolute)."""

    file: Path
    values: dict[str, Any] = field(default_factory=dict)


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, KeyError, OSError):  # no HOME and no password entry
        return None


def _is_project_top(folder: Path) -> bool:
    return any(os.path.lexists(folder / marker) for marker in PROJECT_TOP_MARKERS)


def _others_may_write(folder: Path) -> bool:
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return True


def project_folders(start: Path) -> list[Path]:
    """The folders whose project file may apply to a script in ``start``, nearest first.

    The script's folder, then its parents up to the first that is a project's top
    (:data:`PROJECT_TOP_MARKERS`); when no such top comes before the user's home (or a folder anyone
    may write to, or the file system's root), the script's folder alone. Why: a project file can
    switch copy-on-write off, so one in a shared or home folder must not reach every script below it.
    """
    folder = Path(start).resolve()
    if not folder.is_dir():
        folder = folder.parent
    if _is_project_top(folder):
        return [folder]
    home = _home()
    above: list[Path] = []
    for parent in folder.parents:
        if home is not None and (parent == home or parent in home.parents):
            break
        if _others_may_write(parent) or parent == Path(parent.anchor):
            break
        above.append(parent)
        if _is_project_top(parent):
            return [folder, *above]
    return [folder]


def find_project_file(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest project file of ``start``'s project (:func:`project_folders`) and its maixemu
    table, or None."""
    for place in project_folders(start):
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


#: A project file (or a pyproject.toml) past this size is not read: options take a few hundred bytes.
MAX_PROJECT_FILE_BYTES = 1024 * 1024


def _read(path: Path) -> dict[str, Any]:
    try:
        size = path.stat().st_size
        if size > MAX_PROJECT_FILE_BYTES:
            raise ProjectFileError(f"{path}: {size} bytes is too large for a project file "
                                   f"(at most {MAX_PROJECT_FILE_BYTES})")
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


#: RunSpec fields that make the script write into the user's real folders, and their project keys
COPY_ON_WRITE_OFF = {"writable": "writable", "sd_dir": "sd", "flash_dir": "flash-dir"}


def _flag(name: str) -> str:
    flag = option_of(name).cli
    return flag if isinstance(flag, str) else name


def copy_on_write_line(file: Path, used: Mapping[str, Any], given: Mapping[str, Any]) -> str | None:
    """The line said even with ``quiet`` when a project file's values make the script write into real
    folders, or when the file's ``quiet = true`` would hide that the given options do.

    ``used``: the file's values that were merged into the run (all of them for ``maixemu run``, the
    inherited ones for the plugin); ``given``: what the command line or the test gave (it wins).
    Why never hidden: a file the user may not have read must not switch copy-on-write off silently.
    """
    def said(name: str, value: Any) -> str:
        return f"{COPY_ON_WRITE_OFF[name]} = {'true' if value is True else repr(str(value))}"

    from_file = [said(name, used[name]) for name in COPY_ON_WRITE_OFF
                 if used.get(name) and name not in given]
    if from_file:
        return (f"[maixemu] {file} sets {', '.join(from_file)}: the script writes into real folders, its "
                "writes and deletions change the files there (remove the key to keep your files copy-on-write)")
    from_given = [name for name in COPY_ON_WRITE_OFF if given.get(name)]
    if from_given and used.get("quiet") and not given.get("quiet"):
        flags = ", ".join(_flag(name) if name == "writable" else f"{_flag(name)} {given[name]}" for name in from_given)
        return (f"[maixemu] {flags}: the script writes into real folders, its writes and deletions change the "
                f"files there (said although {file} sets quiet = true)")
    return None


__all__ = ["COPY_ON_WRITE_OFF", "MAX_PROJECT_FILE_BYTES", "PROJECT_FILE", "PROJECT_TOP_MARKERS", "ProjectFile",
           "ProjectFileError", "copy_on_write_line", "find_project_file", "load_project", "parse",
           "project_folders"]
