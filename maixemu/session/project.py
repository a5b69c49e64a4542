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
In one folder ``maixemu.toml`` wins over a ``pyproject.toml`` with a ``[tool.maixemu]`` table, and a
``pyproject.toml`` without one is passed over (it still marks the project's top). Options given on the command line override the file. The pytest plugin reads the same file
for its run options (``flash``, ``flash-image``, ``firmware``, ``ai-memory``, ``camera``, ``timeout``,
``quiet``): a test's own arguments override it, and a test's ``/sd`` and ``/flash`` stay its own
fresh folders. A mistake in the file is one line naming the file, the key and what is allowed
(:class:`ProjectFileError`; ``maixemu run`` exits 2).
"""

from __future__ import annotations

import math
import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the same parser, as the ``tomli`` package (a dependency there)
    import tomli as tomllib

PROJECT_FILE = "maixemu.toml"
PYPROJECT = "pyproject.toml"
#: What marks the top folder of a project: a version-control checkout, or a Python project.
PROJECT_TOP_MARKERS = (".git", ".hg", ".svn", ".bzr", "_darcs", ".fslckout", PYPROJECT)

AI_MEMORY_MODES = ("device", "warn", "strict")
FIRMWARES = ("full", "minimum", "none")


class ProjectFileError(Exception):
    """A project file that cannot be used: ``FILE: key: what is allowed`` (one line)."""


@dataclass
class ProjectOptions:
    """The options a project file sets (None: not set). Paths are absolute."""

    file: Path
    flash: dict[int, Path] = field(default_factory=dict)
    flash_image: Path | None = None
    firmware: str | None = None
    camera: str | None = None
    lcd: str | None = None
    ai_memory: str | None = None
    sd_dir: Path | None = None
    flash_dir: Path | None = None
    writable: bool | None = None
    frames: int | None = None
    timeout: float | None = None
    quiet: bool | None = None
    audio_out: str | None = None
    audio_in: str | None = None

    def copy_on_write_off(self) -> list[str]:
        """The keys of this file that make the script write into real folders (``writable = true``,
        ``sd``, ``flash-dir``): never applied without saying so, ``quiet`` or not."""
        keys = ["writable = true"] if self.writable else []
        keys += [f"{key} = {str(path)!r}" for key, path in (("sd", self.sd_dir), ("flash-dir", self.flash_dir))
                 if path is not None]
        return keys


#: key in the file -> (field, what is allowed, how to read it)
def _text(choices: tuple[str, ...] | None = None):
    def read(value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise ValueError
        if choices is not None and value not in choices:
            raise ValueError
        return value
    return read


def _path(base: Path):
    def read(value: Any) -> Path:
        if not isinstance(value, str) or not value.strip():
            raise ValueError
        path = Path(value).expanduser()
        return path if path.is_absolute() else (base / path)
    return read


def _camera(base: Path):
    def read(value: Any) -> str:
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return str(value)  # a webcam index
        text = _text()(value)
        if text.isdigit() or text.lower() in ("synthetic", "auto"):
            return text
        path = Path(text).expanduser()
        return str(path if path.is_absolute() else base / path)
    return read


def _lcd(base: Path):
    def read(value: Any) -> str:
        text = _text()(value)
        if text.startswith("record:"):
            target = Path(text.removeprefix("record:")).expanduser()
            return "record:" + str(target if target.is_absolute() else base / target)
        return text
    return read


def _boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError
    return value


def _frames(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError
    return value


def _seconds(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1e9 or math.isnan(value):
        raise ValueError
    return float(value)


def _keys(base: Path) -> dict[str, tuple[str, str, Any]]:
    return {
        "flash-image": ("flash_image", "a path to a .kfpkg file", _path(base)),
        "firmware": ("firmware", f"one of {', '.join(map(repr, FIRMWARES))}", _text(FIRMWARES)),
        "camera": ("camera", "a webcam index, \"synthetic\", or a path to a video, image or folder", _camera(base)),
        "lcd": ("lcd", "\"window\", \"none\" or \"record:PATH\"", _lcd(base)),
        "ai-memory": ("ai_memory", f"one of {', '.join(map(repr, AI_MEMORY_MODES))}", _text(AI_MEMORY_MODES)),
        "sd": ("sd_dir", "a path to a folder", _path(base)),
        "flash-dir": ("flash_dir", "a path to a folder", _path(base)),
        "writable": ("writable", "true or false", _boolean),
        "frames": ("frames", "a whole number >= 0", _frames),
        "timeout": ("timeout", "a number of seconds > 0", _seconds),
        "quiet": ("quiet", "true or false", _boolean),
        "audio-out": ("audio_out", "a sink as --audio-out takes it (wav:PATH, speaker, none)", _text()),
        "audio-in": ("audio_in", "a source as --audio-in takes it (silence, tone:HZ, FILE.wav, mic)", _text()),
    }


ALLOWED_KEYS = ("flash", *_keys(Path(".")))


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


def parse(file: Path, table: dict[str, Any]) -> ProjectOptions:
    """Check every key of a project file's table; :class:`ProjectFileError` on the first mistake."""
    base = file.resolve().parent
    prefix = "tool.maixemu." if file.name == PYPROJECT else ""
    options = ProjectOptions(file=file)
    keys = _keys(base)
    for key, value in table.items():
        if key == "flash":
            options.flash = _flash_map(file, f"{prefix}flash", value, base)
            continue
        known = keys.get(key)
        if known is None:
            allowed = ", ".join(ALLOWED_KEYS)
            raise ProjectFileError(f"{file}: {prefix}{key}: not a maixemu option (allowed: {allowed})")
        name, allowed_text, read = known
        try:
            setattr(options, name, read(value))
        except ValueError:
            raise ProjectFileError(f"{file}: {prefix}{key} = {value!r}: must be {allowed_text}") from None
    for key, path in (("flash-image", options.flash_image),):
        if path is not None and not path.is_file():
            raise ProjectFileError(f"{file}: {prefix}{key}: no such file {path}")
    for key, path in (("sd", options.sd_dir), ("flash-dir", options.flash_dir)):
        if path is not None and not path.is_dir():
            raise ProjectFileError(f"{file}: {prefix}{key}: no such folder {path}")
    return options


def _flash_map(file: Path, key: str, value: Any, base: Path) -> dict[int, Path]:
    if not isinstance(value, dict):
        raise ProjectFileError(f"{file}: {key}: must be a table of address = \"file\", e.g. "
                               "flash = { 0x300000 = \"face.kmodel\" }")
    mapping: dict[int, Path] = {}
    for address_text, path_text in value.items():
        try:
            address = int(address_text, 0)
        except ValueError:
            address = -1
        if address <= 0:
            raise ProjectFileError(f"{file}: {key}.{address_text}: the address must be a number > 0 (e.g. 0x300000)")
        if not isinstance(path_text, str) or not path_text:
            raise ProjectFileError(f"{file}: {key}.{address_text}: must be a path to a model file")
        path = Path(path_text).expanduser()
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise ProjectFileError(f"{file}: {key}.{address_text}: no such file {path}")
        mapping[address] = path
    return mapping


def load_project(start: Path) -> ProjectOptions | None:
    """The project options for a script in (or below) ``start``, or None when there is no file."""
    found = find_project_file(start)
    if found is None:
        return None
    return parse(*found)


#: fields a project file fills in ``maixemu run``'s parsed options when the command line left them unset
RUN_FIELDS = ("flash_image", "firmware", "camera", "lcd", "ai_memory", "sd_dir", "flash_dir", "frames", "timeout",
              "audio_out", "audio_in")
#: ... and the ones the pytest plugin takes as its defaults (a test's folders stay its own)
PLUGIN_FIELDS = ("flash_image", "firmware", "camera", "ai_memory", "timeout", "quiet")


def apply_project(args: Any, start: Path) -> Path | None:
    """Fill ``maixemu run``'s parsed ``args`` from the project file of ``start``; the file's path."""
    project = apply_project_file(args, start)
    return None if project is None else project.file


def apply_project_file(args: Any, start: Path) -> ProjectOptions | None:
    """Fill ``maixemu run``'s parsed ``args`` from the project file of ``start``; what it set.

    A value given on the command line wins; ``flash`` maps merge (the command line's addresses win);
    ``--quiet`` and ``--writable`` are on when either sets them.
    """
    project = load_project(start)
    if project is None:
        return None
    for name in RUN_FIELDS:
        if getattr(args, name, None) is None and getattr(project, name) is not None:
            setattr(args, name, getattr(project, name))
    for name in ("quiet", "writable"):
        if getattr(project, name):
            setattr(args, name, True)
    merged = dict(project.flash)
    merged.update(dict(getattr(args, "flash", None) or []))
    args.flash = list(merged.items())
    return project


def copy_on_write_line(project: ProjectOptions, given: Sequence[str] = ()) -> str | None:
    """The line ``maixemu run`` always prints (``--quiet`` or not) when the project file makes the
    script write into real folders, or when its ``quiet = true`` would hide that the command line's
    ``given`` options (``--writable``, ``--sd DIR``...) do."""
    overridden = {flag.split()[0].lstrip("-") for flag in given}
    keys = [key for key in project.copy_on_write_off() if key.split(" = ")[0] not in overridden]
    if keys:
        return (f"[maixemu] {project.file} sets {', '.join(keys)}: the script writes into real folders, its "
                "writes and deletions change the files there (remove the key to keep your files copy-on-write)")
    if given and project.quiet:
        return (f"[maixemu] {', '.join(given)}: the script writes into real folders, its writes and deletions "
                f"change the files there (said although {project.file} sets quiet = true)")
    return None


__all__ = ["ALLOWED_KEYS", "PLUGIN_FIELDS", "PROJECT_TOP_MARKERS", "RUN_FIELDS", "apply_project", "apply_project_file",
           "copy_on_write_line", "PROJECT_FILE", "ProjectFileError", "ProjectOptions", "find_project_file",
           "load_project", "parse", "project_folders"]
