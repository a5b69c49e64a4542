"""MaixPy ``sys`` (``py/modsys.c`` with MaixPy's ``mpconfigport.h``): the board's own, never the host's.

The script importer serves this module for ``import sys``/``import usys``. It has exactly the names
MicroPython's ``sys`` has on a MaixPy build — ``argv``, ``byteorder``, ``exit``, ``implementation``,
``maxsize``, ``modules``, ``path``, ``platform``, ``print_exception``, ``stderr``, ``stdin``,
``stdout``, ``version``, ``version_info`` — and nothing of CPython's (no ``setrecursionlimit``,
no ``exc_info``: those builds leave them out).

``path``, ``argv`` and ``modules`` are the active board's (``current().system``): ``sys.path``
starts as ``_boot.py`` leaves it (``['', '.', '/sd', '/flash']``), ``sys.modules`` holds the
script's own modules, and what a script appends or deletes ends with its run. As on the device a
built-in module's attributes cannot be replaced: ``sys.path = [...]`` is ``AttributeError``.
``stdout``/``stderr``/``stdin`` are the board console's streams at the time of use.

``print_exception(e, file=sys.stdout)`` writes MicroPython's format (:mod:`.tracebacks`).
"""

from __future__ import annotations

import sys as _sys
import types as _types
from collections import namedtuple as _namedtuple
from typing import Any, TextIO

from .state import current as _current
from .mp.tracebacks import format_exception as _format_exception


class _Implementation(_namedtuple("implementation", ["name", "version"])):
    __slots__ = ()

    def __repr__(self) -> str:
        return f"(name={self.name!r}, version={self.version!r})"


implementation = _Implementation("micropython", (0, 6, 2))
platform = "MaixPy"
version = "3.4.0"
version_info = (3, 4, 0)
byteorder = "little"
#: ``MP_SSIZE_MAX`` of the 64-bit K210 port (MPZ long ints)
maxsize = (1 << 63) - 1


def exit(*args: Any) -> None:  # noqa: A001 - the device's name
    """``sys.exit([retval])``: raise ``SystemExit`` (with ``retval`` when given)."""
    if len(args) > 1:
        raise TypeError(f"function expected at most 1 arguments, got {len(args)}")
    raise SystemExit(*args)


def print_exception(exc: BaseException, file: TextIO | None = None) -> None:
    """Write ``exc`` with its traceback in MicroPython's format to ``file`` (default ``sys.stdout``)."""
    out = file if file is not None else _current().console.stdout
    out.write(_format_exception(exc))


#: The names a script sees (``dir(sys)``), as on the device.
_DEVICE_NAMES = ("argv", "byteorder", "exit", "implementation", "maxsize", "modules", "path", "platform",
                "print_exception", "stderr", "stdin", "stdout", "version", "version_info")


class _DeviceSys(_types.ModuleType):
    """The module type of ``usys``: the board's ``path``/``argv``/``modules``/streams, read-only names."""

    @property
    def path(self) -> list[str]:
        return _current().system.sys_path

    @property
    def argv(self) -> list[str]:
        return _current().system.sys_argv

    @property
    def modules(self) -> dict[str, Any]:
        return _current().system.sys_modules

    @property
    def stdin(self) -> TextIO:
        return _current().console.stdin

    @property
    def stdout(self) -> TextIO:
        return _current().console.stdout

    @property
    def stderr(self) -> TextIO:
        return _current().console.stderr

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"'module' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__"):  # the import system's own bookkeeping (__spec__, __loader__...)
            super().__setattr__(name, value)
            return
        raise AttributeError(f"'module' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"'module' object has no attribute '{name}'")

    def __dir__(self) -> list[str]:
        return ["__name__", *_DEVICE_NAMES]


_sys.modules[__name__].__class__ = _DeviceSys
