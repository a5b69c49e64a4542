"""Which module a MaixPy ``import`` name gets, and how firmware code ends a script cleanly.

The runner serves a script's imports from :data:`MAIXPY_MODULES` (MaixPy name → dotted path of the
maixemu module) through the script's own ``__import__``; nothing is put into ``sys.modules`` under
the MaixPy name, so CPython's ``time``, ``os``, ``sys`` and ``gc`` stay intact for every library.

``os``, ``io`` and ``sys`` are mapped on purpose: on the device ``import os`` *is* ``uos`` (device paths,
``listdir("/") == ['flash', 'sd']``), ``io.open`` is the device's ``open`` and ``import sys`` is the
board's own ``sys`` (its ``path``, ``argv``, ``modules``; never the host's). ``_thread`` is
MicroPython's (threads that belong to the board). ``struct`` is ``ustruct`` (MicroPython's
packing is more lenient than CPython's); ``json`` is left to CPython, whose behaviour covers
``ujson``'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import boot_names

_F = "maixemu.firmware."

#: MaixPy import name -> maixemu module path (imported lazily by the runner).
MAIXPY_MODULES: dict[str, str] = {
    # helpers (this file's neighbours)
    "time": _F + "utime",
    "utime": _F + "utime",
    "gc": _F + "mgc",
    "Maix": _F + "Maix",
    "fpioa_manager": _F + "fpioa_manager",
    "board": _F + "board",
    "machine": _F + "machine",
    "uos": _F + "uos",
    "os": _F + "uos",
    "ujson": _F + "ujson",
    "uio": _F + "uio",
    "io": _F + "uio",
    "ustruct": _F + "ustruct",
    "struct": _F + "ustruct",
    "micropython": _F + "micropython",
    "usys": _F + "usys",
    "sys": _F + "usys",
    "_thread": _F + "mthread",
    # camera / LCD / image / KPU
    "image": _F + "image",
    "sensor": _F + "sensor",
    "lcd": _F + "lcd",
    "KPU": _F + "KPU",
    # CanMV firmware: ``maix`` = MaixPy's ``Maix`` plus both CanMV ``KPU`` class APIs
    "maix": _F + "maix",
    # multimedia: WAV/I2S audio, MJPEG AVI video
    "audio": _F + "audio",
    "video": _F + "video",
    # the M5StickV firmware's frozen power-chip module (AXP192 over machine.I2C)
    "pmu": _F + "pmu",
    # the firmware's C drivers for add-on parts (ws2812, ultrasonic, onewire, htpa, amg88xx)
    "modules": _F + "modules",
    # the touch panel over the LCD (the LCD window's mouse)
    "touchscreen": _F + "touchscreen",
    # WiFi/Ethernet co-processors and their sockets, over the PC's network
    "network": _F + "network",
    "usocket": _F + "usocket",
    "socket": _F + "usocket",
    # ulab 0.26 (MaixPy-v1 and kendryte/canmv full builds): numpy-like arrays, flat API
    "ulab": _F + "ulab",
}

#: Names the firmware's boot scripts leave in the globals a script runs in, so scripts use them
#: without importing (``hello_wrold.py`` calls ``sys.implementation`` with no ``import sys``, IDE
#: scripts use ``lcd``): every board's, as ``{name: "module"}`` or ``"module:attribute"`` in MaixPy
#: import names. Per board and where they come from: :mod:`maixemu.firmware.boot_names`.
BOOT_GLOBALS: dict[str, str] = dict(boot_names.ALL_NAMES)

#: MaixPy names that are also CPython standard modules: never install these in ``sys.modules``.
SHADOWS_STDLIB: frozenset[str] = frozenset({"time", "gc", "os", "sys", "io", "_thread", "struct", "socket"})


def boot_globals(import_module: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """The boot names of the active board (its profile) with their objects, for the runner to put
    into a script's globals. ``import_module(name)`` imports as the script does (the run's
    ``__import__``); by default firmware modules are taken as the script sees them and others from
    Python's library."""
    from .state import current

    return boot_names.resolve(current().pins.profile, import_module or _import_as_script)


def _import_as_script(name: str) -> Any:
    import importlib

    from .device_modules import view

    if name in MAIXPY_MODULES:
        return view(name, importlib.import_module(MAIXPY_MODULES[name]))
    return importlib.import_module(name)


class ScriptReset(BaseException):
    """The script asked the board to reboot (``machine.reset()``, ``Maix.freq.set`` with a change).

    On the device the script simply stops and the board restarts; on the PC the run ends cleanly
    (exit 0). A BaseException so a script's ``except Exception:`` does not swallow the reboot.
    ``reason`` names the call that rebooted.
    """

    def __init__(self, reason: str = "machine.reset()"):
        super().__init__(f"{reason} rebooted the board")
        self.reason = reason


#: Exceptions raised by helper modules that mean "the script ended normally".
CLEAN_END_EXCEPTIONS: tuple[type[BaseException], ...] = (ScriptReset,)
