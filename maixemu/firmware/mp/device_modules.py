"""The face a firmware module shows a script: its MaixPy name, no host file, CPython's "did you mean".

A script's ``import KPU`` is served by ``maixemu.firmware.KPU``, but what the script holds is a
:class:`DeviceModule` named ``KPU`` that reads every attribute from it. So what a script can print or
catch names the device's module, never maixemu's or a host path::

    >>> print(kpu)                      # <module 'KPU'>            (as MicroPython prints it)
    >>> kpu.__file__                    # AttributeError, as for the firmware's built-in modules
    >>> kpu.lod("/sd/m.kmodel")         # AttributeError: 'module' object has no attribute 'lod'

The AttributeError carries ``name`` and ``obj``, so CPython's suggestion machinery (and the
runner's traceback on Python < 3.12) adds ``Did you mean: 'load'?``. Reading and writing go to the
firmware module each time (a test that patches ``maixemu.firmware.sensor.snapshot`` is seen by
scripts, and a view never keeps anything of one run for the next).
"""

from __future__ import annotations

import threading
import types
from typing import Any

from .. import state as _state

#: What MicroPython's built-in modules do not have (and would give away the host's paths).
HIDDEN = frozenset({"__file__", "__cached__", "__path__", "__builtins__"})
_FIRMWARE = _state.__name__.rpartition(".")[0] + "."  # "maixemu.firmware.": the board's package

_views: dict[tuple[str, str], DeviceModule] = {}
_targets: dict[int, types.ModuleType] = {}
_lock = threading.Lock()


class DeviceModule(types.ModuleType):
    """A firmware module as the script sees it (see the module docstring)."""

    def __getattr__(self, attr: str) -> Any:
        target = _targets[id(self)]
        if attr in HIDDEN:
            raise AttributeError(f"'module' object has no attribute '{attr}'", name=attr, obj=self)
        if attr == "__all__" and not hasattr(target, "__all__"):  # ``from sensor import *``
            return [n for n in dir(target) if not n.startswith("_")
                    and not (isinstance(getattr(target, n), types.ModuleType) and not getattr(target, n).__name__.startswith(_FIRMWARE))]
        try:
            value = getattr(target, attr)
        except AttributeError:
            raise AttributeError(f"'module' object has no attribute '{attr}'", name=attr, obj=self) from None
        if isinstance(value, types.ModuleType) and not isinstance(value, DeviceModule) \
                and value.__name__.startswith(_FIRMWARE):
            return view(f"{self.__name__}.{attr}", value)
        return value

    def __setattr__(self, attr: str, value: Any) -> None:
        # The view is shared by every run: what a script sets goes where it went before views existed
        # (the firmware module, with its own rules: usys's read-only names), never onto the view.
        setattr(_targets[id(self)], attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(_targets[id(self)], attr)

    def __dir__(self) -> list[str]:
        names = set(dir(_targets[id(self)])) | set(vars(self))
        return sorted(n for n in names if n not in HIDDEN)


def view(name: str, target: types.ModuleType) -> types.ModuleType:
    """The script's view of firmware module ``target`` under its MaixPy ``name`` (one per pair);
    anything that is not a maixemu firmware module is returned as it is."""
    if isinstance(target, DeviceModule) or not target.__name__.startswith(_FIRMWARE):
        return target
    key = (name, target.__name__)
    found = _views.get(key)
    if found is not None:
        return found
    with _lock:
        found = _views.get(key)
        if found is None:
            found = DeviceModule(name, target.__doc__)
            _targets[id(found)] = target
            _views[key] = found
    return found


def target_of(module: types.ModuleType) -> types.ModuleType:
    """The firmware module behind a view (the module itself when it is not one)."""
    return _targets.get(id(module), module) if isinstance(module, DeviceModule) else module


__all__ = ["DeviceModule", "HIDDEN", "target_of", "view"]
