"""How a run ended, and what ``maixemu run`` prints and returns for it.

Exit codes: 0 the script finished, or a clean end (``--frames``, ``--timeout``, the window closed,
``machine.reset()``, ``sys.exit(0)``); 1 the script failed (its traceback, script frames only) or
the camera/LCD failed mid-run; 2 a run that could not start (bad ``--flash-image``, ``--lcd``, a
camera that never worked); 130 Ctrl-C; 128 + N a fatal signal N (143 for SIGTERM).
"""

from __future__ import annotations

import difflib
import importlib
import os
import traceback
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..firmware.state import RunEnded

#: Why ``lvgl`` is not there: the GUI library is built only into MaixPy's ``with_lvgl`` firmware
#: (``projects/maixpy_k210/config_with_lvgl.mk``, CONFIG_MAIXPY_LVGL_ENABLE), and a GUI toolkit
#: with its own display driver is outside what maixemu emulates.
_LVGL = ("is the LVGL GUI, built into some MaixPy firmwares only (the *_with_lvgl builds); it is out of "
         "maixemu's scope")

#: MaixPy firmware modules maixemu does not provide, and what the ImportError adds about each
#: (MaixPy-v1 ``mpconfigport.h`` built-in modules and its frozen ``builtin_py`` helpers).
NOT_EMULATED_REASONS: dict[str, str] = {
    "lvgl": _LVGL,
    "lvgl_helper": _LVGL,
    **{name: "is a MaixPy firmware module maixemu does not emulate yet"
       for name in ("nes", "speech_recognizer", "gif", "fpioa", "lodepng",
                    "pye_mp")},  # pye_mp: the firmware's frozen full-screen editor (builtin_py/pye_mp.py)
}
NOT_EMULATED_MODULES = frozenset(NOT_EMULATED_REASONS)


class SetupError(Exception):
    """A run cannot start (bad --flash-image, --lcd ...): ``maixemu run`` prints it as one line, exit 2."""


@dataclass
class Outcome:
    """What one run of a script did: its exit code, and why it ended (for the closing notice)."""

    exit_code: int
    #: the end request that ended it ("frame budget of 5 frames reached"), None if the script returned
    reason: str | None = None
    #: the exception the script ended with (its own failure, SystemExit, KeyboardInterrupt ...)
    error: BaseException | None = None
    #: script threads that did not end when the run did (left behind, ended at their next firmware call)
    stray_threads: int = 0
    #: lines printed to stderr, for the caller to show (a traceback, a one-line device fault)
    messages: list[str] = field(default_factory=list)
    #: the closing line's values (:class:`~maixemu.session.summary.RunSummary`), once the run is over
    summary: Any = None

    @property
    def interrupted(self) -> bool:
        """The run ended on Ctrl-C (the plugin hands it back to pytest)."""
        return isinstance(self.error, KeyboardInterrupt)


def _script_frames_only(tb: traceback.StackSummary, script_files: set[str]) -> traceback.StackSummary:
    frames = [f for f in tb if os.path.realpath(f.filename) in script_files or f.filename in script_files]
    return traceback.StackSummary.from_list(frames)


def format_script_error(exc: BaseException, script_files: set[str], debug: bool,
                        device_name: Callable[[str], str] | None = None, *, hints: bool = True) -> str:
    """The traceback of a script that failed, as MicroPython prints it (``mp_obj_print_exception``):
    the script's own frames as ``File "/sd/main.py", line 5, in f`` (no source lines), ``Type:
    message`` in MicroPython's names and words, only the last exception (MicroPython does not chain
    them, so an error the firmware raised from an internal one shows the device's only). maixemu's
    frames and CPython's own format only with ``--debug``.

    ``script_files`` are the script and the local modules it imported; ``device_name`` names their
    files as the device does (default: their path in the board's mounts). A name the script misspelt
    gets CPython's suggestion on a line of its own (``[maixemu] Did you mean: 'load'?``), and a
    device error maixemu has advice for gets it on its own line after the device's text
    (``[maixemu] call img.pix_to_ai() first``; :func:`maixemu.firmware.notices.advised`), unless
    ``hints`` is off (``--quiet``). The exception's own text is never changed.
    """
    from ..firmware.notices import advice_line

    if debug:
        return "".join(traceback.format_exception(exc)) + advice_line(exc, hints)
    from ..firmware.tracebacks import format_exception

    def is_script(filename: str) -> bool:
        return filename in script_files or os.path.realpath(filename) in script_files

    text = format_exception(exc, is_script=is_script, device_name=device_name)
    hint = did_you_mean(exc)
    if hint:
        text += f"[maixemu] Did you mean: {hint!r}?\n"
    return text + advice_line(exc, hints)


def did_you_mean(exc: BaseException) -> str | None:
    """The closest name to a misspelt attribute or global (CPython's suggestion, for every version)."""
    name = getattr(exc, "name", None)
    if not isinstance(name, str) or not name:
        return None
    candidates: list[str] = []
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)
        if obj is None:
            return None
        try:
            candidates = [c for c in dir(obj) if isinstance(c, str)]
        except Exception:  # noqa: BLE001 - a suggestion must never fail the report
            return None
    elif isinstance(exc, NameError):
        tb = exc.__traceback__
        while tb is not None and tb.tb_next is not None:
            tb = tb.tb_next
        if tb is None:
            return None
        frame = tb.tb_frame
        scope_builtins = frame.f_globals.get("__builtins__", {})
        if isinstance(scope_builtins, types.ModuleType):
            scope_builtins = vars(scope_builtins)
        candidates = [*frame.f_locals, *frame.f_globals, *scope_builtins]
    else:
        return None
    if name.startswith("_"):
        pool = candidates
    else:
        pool = [c for c in candidates if not c.startswith("_")]
    found = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return found[0] if found and found[0] != name else None


def _script_location(exc: BaseException, script_files: set[str]) -> str:
    """`` at main.py line 7`` for the innermost script frame of ``exc``, or "" when there is none."""
    frames = _script_frames_only(traceback.extract_tb(exc.__traceback__), script_files)
    if not frames:
        return ""
    last = frames[-1]
    return f" at {Path(last.filename).name} line {last.lineno}"


def device_fault(exc: BaseException, script_files: set[str], sink: Any) -> tuple[str, int] | None:
    """(one line, exit code) when ``exc`` is a PC camera/LCD failure rather than the script's own bug.

    The firmware turns a camera failure into the device's error (``OSError("Reset Failed ...")``,
    ``RuntimeError("Sensor timeout! ...")``) raised *from* a ``CameraError``, so a script can still
    catch it; only when it reaches the runner uncaught is it shown as one line. Exit 2 when the
    chosen ``--camera``/``--lcd`` never worked (choose another), 1 when it failed mid-run.
    """
    from ..host.camera import CameraError, CameraLost
    from ..host.display import DisplayError

    where = _script_location(exc, script_files)
    context = exc.__context__
    if isinstance(context, CameraError) and exc.__suppress_context__:
        return f"maixemu: camera failed{where}: {context}", 1 if isinstance(context, CameraLost) else 2
    if isinstance(exc, DisplayError):
        never_shown = getattr(sink, "frames_shown", 0) == 0
        return f"maixemu: LCD output failed{where}: {exc}", 2 if never_shown else 1
    return None


def clean_end_types() -> tuple[type[BaseException], ...]:
    """Exceptions from firmware modules that end a run cleanly (``machine.reset()``, closed window)."""
    found: list[type[BaseException]] = []
    for module_name, attr in (
        ("maixemu.firmware.registry", "ScriptReset"),
        ("maixemu.host.display", "WindowClosed"),
    ):
        try:
            value = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError):
            continue
        if isinstance(value, type) and issubclass(value, BaseException):
            found.append(value)
    return tuple(found)


def system_exit_code(exc: SystemExit) -> tuple[int, str | None]:
    """``sys.exit(n)`` / ``sys.exit("message")`` as CPython reports them: (exit code, text to print)."""
    value = exc.code
    if value is None:
        return 0, None
    if isinstance(value, int):  # bool included, as in CPython
        return int(value), None
    return 1, str(value)  # CPython prints any other value and exits 1


__all__ = ["NOT_EMULATED_MODULES", "NOT_EMULATED_REASONS", "Outcome", "RunEnded", "SetupError", "clean_end_types", "device_fault",
           "did_you_mean", "format_script_error", "system_exit_code"]
