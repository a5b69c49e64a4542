"""MicroPython's traceback format (``mp_obj_print_exception``), for ``sys.print_exception`` and the
messages the firmware prints itself (an exception in a ``_thread``, in an IRQ handler)::

    Traceback (most recent call last):
      File "/sd/main.py", line 12, in <module>
    ValueError: bad value

Only the script's own frames are listed (MicroPython shows no frames for built-in code; here
maixemu's modules, the standard library and site-packages play that part). File names inside the
mapped folders are shown as device paths. The last line is ``Type: message`` — always with the
colon, even for an empty message — with OSErrors as ``[Errno 2] ENOENT`` and CPython-only
exception classes named as MicroPython names them (``FileNotFoundError`` → ``OSError``).
"""

from __future__ import annotations

import errno as _errno
import functools as _functools
import os as _os
import sysconfig as _sysconfig
import traceback as _traceback

from .script_paths import PACKAGE_DIR as _PACKAGE_DIR
from .script_paths import is_shipped_script as _is_shipped_script

_RENAMED = {
    "ModuleNotFoundError": "ImportError",
    "RecursionError": "RuntimeError",
}


@_functools.lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    paths = _sysconfig.get_paths()
    dirs = {_PACKAGE_DIR}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            dirs.add(_os.path.realpath(paths[key]))
    return tuple(d.rstrip(_os.sep) + _os.sep for d in dirs)


def _is_script_frame(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return False
    real = _os.path.realpath(filename) if _os.path.isabs(filename) else filename
    if _os.path.isabs(filename) and _is_shipped_script(real):
        return True  # scripts shipped inside the package (samples, the default sample)
    return not any(real.startswith(d) for d in _library_dirs())


def _device_name(filename: str) -> str:
    try:
        from .state import current

        mapped = current().storage.to_device(filename) if _os.path.isabs(filename) else None
    except Exception:  # naming a frame must never fail
        mapped = None
    return mapped or filename


def _type_name(exc: BaseException) -> str:
    cls = type(exc)
    if cls.__module__ == "builtins":
        if issubclass(cls, OSError):
            return "OSError"
        return _RENAMED.get(cls.__name__, cls.__name__)
    return cls.__name__


def _message(exc: BaseException) -> str:
    args = exc.args
    if not args:
        return ""
    if isinstance(exc, OSError) and len(args) <= 2 and isinstance(args[0], int) and args[0] in _errno.errorcode:
        return f"[Errno {args[0]}] {_errno.errorcode[args[0]]}"
    if len(args) == 1:
        return str(args[0])
    return repr(tuple(args))


def format_exception(exc: BaseException) -> str:
    """The text ``print_exception`` writes."""
    lines = []
    frames = [f for f in _traceback.extract_tb(exc.__traceback__) if _is_script_frame(f.filename)]
    if frames:
        lines.append("Traceback (most recent call last):\n")
        for frame in frames:
            lines.append(f'  File "{_device_name(frame.filename)}", line {frame.lineno}, in {frame.name}\n')
    lines.append(f"{_type_name(exc)}: {_message(exc)}\n")
    return "".join(lines)


__all__ = ["format_exception"]
