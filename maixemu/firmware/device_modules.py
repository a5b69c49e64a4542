"""The face a module shows a script: its MaixPy name, no host file, CPython's "did you mean", and a
fresh set of them for every board — what one run sets on a module never reaches the next run, nor
the process around it (pytest, maixemu itself).

A script's ``import KPU`` is served by ``maixemu.firmware.KPU``, but what the script holds is a
:class:`DeviceModule` named ``KPU`` that reads every attribute from it. So what a script can print or
catch names the device's module, never maixemu's or a host path::

    >>> print(kpu)                      # <module 'KPU'>            (as MicroPython prints it)
    >>> kpu.__file__                    # AttributeError, as for the firmware's built-in modules
    >>> kpu.lod("/sd/m.kmodel")         # AttributeError: 'module' object has no attribute 'lod'

The AttributeError carries ``name`` and ``obj``, so CPython's suggestion machinery (and the
runner's traceback on Python < 3.12) adds ``Did you mean: 'load'?``. Reading goes to the firmware
module each time (a test that patches ``maixemu.firmware.sensor.snapshot`` is seen by scripts).

Writing follows the firmware (MicroPython ``py/objmodule.c``, ``module_attr``): a built-in module's
globals are a fixed ROM table, so ``sensor.snapshot = None`` or ``math.pi = 3`` raises MicroPython's
``AttributeError: 'module' object has no attribute 'pi'``; the frozen Python modules of
``builtin_py`` (``board``, ``fpioa_manager``, ``pmu``) take the name, for this board only. The views
are the board's (``current().system.module_views``): a new board, a new set. :func:`host_view` gives
a script the Python library's modules the same way (read-only for MicroPython's built-in names,
``math``, ``re``, ``json`` ..., a board-own overlay for the rest), so no script reaches into the
module objects of the process (``ure.compile = None`` broke pytest's own clean-up).
"""

from __future__ import annotations

import types
import weakref
from dataclasses import dataclass
from typing import Any

#: What MicroPython's built-in modules do not have (and would give away the host's paths).
HIDDEN = frozenset({"__file__", "__cached__", "__path__", "__builtins__"})
_FIRMWARE = __name__.rpartition(".")[0] + "."

#: The frozen Python modules of MaixPy's ``builtin_py`` (their globals are an ordinary dict): a script
#: may set names on them. Every other firmware module is a C module with a fixed globals table.
FROZEN_PYTHON = frozenset({"board", "fpioa_manager", "pmu"})


@dataclass(frozen=True)
class _Facts:
    target: types.ModuleType
    #: a script may set names (they stay on this view: this board's)
    writable: bool
    #: attributes are read from the target each time (firmware modules); else copied at creation
    live: bool


#: What stands behind each view (weak: a board's views go with the board).
_facts: weakref.WeakKeyDictionary[types.ModuleType, _Facts] = weakref.WeakKeyDictionary()


def _no_attribute(view: types.ModuleType, attr: str) -> AttributeError:
    """MicroPython's words for a missing module attribute (``mp_load_attr``), with ``name``/``obj``
    for CPython's "did you mean"."""
    return AttributeError(f"'module' object has no attribute '{attr}'", name=attr, obj=view)


class DeviceModule(types.ModuleType):
    """A module as one board's script sees it (see the module docstring)."""

    def __getattr__(self, attr: str) -> Any:
        facts = _facts[self]
        target = facts.target
        if attr in HIDDEN:
            raise _no_attribute(self, attr)
        if attr == "__all__" and not hasattr(target, "__all__"):  # ``from sensor import *``
            return [n for n in dir(target) if not n.startswith("_")
                    and not (isinstance(getattr(target, n), types.ModuleType) and not getattr(target, n).__name__.startswith(_FIRMWARE))]
        try:
            value = getattr(target, attr)
        except AttributeError:
            raise _no_attribute(self, attr) from None
        if isinstance(value, types.ModuleType) and not isinstance(value, DeviceModule):
            if value.__name__.startswith(_FIRMWARE):
                return view(f"{self.__name__}.{attr}", value)
            if not facts.live:
                return host_view(value, writable=facts.writable)
        return value

    def __setattr__(self, attr: str, value: Any) -> None:
        if attr.startswith("__") and attr.endswith("__") and attr not in HIDDEN:
            super().__setattr__(attr, value)  # the import system's own bookkeeping (__spec__ ...)
        elif _facts[self].writable:
            super().__setattr__(attr, value)  # on this board's view only
        else:
            raise AttributeError(f"'module' object has no attribute '{attr}'")

    def __delattr__(self, attr: str) -> None:
        if _facts[self].writable and attr in vars(self):
            super().__delattr__(attr)
        else:
            raise AttributeError(f"'module' object has no attribute '{attr}'")

    def __dir__(self) -> list[str]:
        names = set(dir(_facts[self].target)) | set(vars(self))
        return sorted(n for n in names if n not in HIDDEN)


def _board_views() -> dict[tuple[str, str], DeviceModule]:
    from .state import current

    return current().system.module_views


def _new_view(name: str, target: types.ModuleType, facts: _Facts) -> DeviceModule:
    found = DeviceModule(name, target.__doc__)
    _facts[found] = facts
    if not facts.live:  # a library module: its names now, as plain attributes (fast to read);
        for key, value in vars(target).items():  # its submodules get views of their own when read
            if key not in HIDDEN and not (key.startswith("__") and key.endswith("__")) \
                    and not isinstance(value, types.ModuleType):
                types.ModuleType.__setattr__(found, key, value)
    return found


def view(name: str, target: types.ModuleType) -> types.ModuleType:
    """The active board's view of firmware module ``target`` under its MaixPy ``name`` (one per pair and
    board); anything that is not a maixemu firmware module is returned as it is."""
    if isinstance(target, DeviceModule) or not target.__name__.startswith(_FIRMWARE):
        return target
    views = _board_views()
    key = (name, target.__name__)
    found = views.get(key)
    if found is None:
        found = views[key] = _new_view(name, target, _Facts(target, name.partition(".")[0] in FROZEN_PYTHON, True))
    return found


def host_view(target: types.ModuleType, *, writable: bool, name: str | None = None) -> types.ModuleType:
    """The active board's view of a module of Python's library that a script imports (``math`` for
    ``import umath``): read-only for the names MicroPython has built in (``writable=False``), a
    board-own overlay for the rest; the process's module object is never changed."""
    if isinstance(target, DeviceModule):
        return target
    shown = name or target.__name__
    views = _board_views()
    key = (shown, f"host:{target.__name__}")
    found = views.get(key)
    if found is None:
        found = views[key] = _new_view(shown, target, _Facts(target, writable, False))
    return found


def target_of(module: types.ModuleType) -> types.ModuleType:
    """The module behind a view (the module itself when it is not one)."""
    facts = _facts.get(module) if isinstance(module, DeviceModule) else None
    return facts.target if facts is not None else module


__all__ = ["DeviceModule", "FROZEN_PYTHON", "HIDDEN", "host_view", "target_of", "view"]
