"""What to say when the thing given as a script is not one: a folder, a misspelt name, a missing ``run``.

The board boots ``main.py`` from ``/sd`` or ``/flash``; a project folder given where a script is
expected most likely means its ``main.py``, and a name that does not exist most likely is a near
miss of a script next to it. The suggestion is a command the user can paste.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

#: Scripts of a folder listed at most when it has no main.py.
LISTED = 5


def _scripts_in(folder: Path) -> list[str]:
    try:
        return sorted(entry.name for entry in os.scandir(folder) if entry.name.endswith(".py") and entry.is_file())
    except OSError:
        return []


def _as_given(folder: str, name: str) -> str:
    """``folder/name`` written as the user wrote the folder (no resolving, no ``./``)."""
    return f"{folder.rstrip('/' + os.sep)}{os.sep}{name}" if folder not in ("", ".") else name


def folder_hint(folder: Path, shown: str, command: str = "maixemu run") -> str:
    """Why a folder is no script, and which of its files to run instead."""
    scripts = _scripts_in(folder)
    if "main.py" in scripts:
        return f"{shown} is a folder, not a script; the board runs its main.py: {command} {_as_given(shown, 'main.py')}"
    if scripts:
        listed = ", ".join(scripts[:LISTED]) + (", ..." if len(scripts) > LISTED else "")
        return (f"{shown} is a folder, not a script; give one of its scripts ({listed}), e.g. "
                f"{command} {_as_given(shown, scripts[0])}")
    return f"{shown} is a folder with no .py script in it; give the path of a MaixPy script"


def missing_script_message(path: Path, shown: str, command: str = "maixemu run") -> str:
    """The one line for a script path that is no file: a folder's script, or the closest name next to it."""
    if path.is_dir():
        return folder_hint(path, shown, command)
    message = f"no such script: {shown}"
    parent = path.parent if str(path.parent) else Path(".")
    close = difflib.get_close_matches(path.name, _scripts_in(parent), n=1, cutoff=0.6)
    if close:
        folder = os.path.dirname(shown)
        message += f"; did you mean {command} {_as_given(folder, close[0])}?"
    return message


def not_a_command_hint(word: str) -> str | None:
    """For ``maixemu WORD`` where WORD is no command: the ``maixemu run`` the user most likely meant
    (WORD is a script or a folder), or None when WORD does not look like one."""
    path = Path(word)
    if path.is_file() or word.endswith(".py"):
        return f"'{word}' is not a command; to run the script: maixemu run {word}"
    if path.is_dir():
        return f"'{word}' is not a command; {folder_hint(path, word)}"
    return None


__all__ = ["folder_hint", "missing_script_message", "not_a_command_hint"]
