"""Which module a MaixPy ``import`` name gets, and how firmware code ends a script cleanly.

The runner serves a script's imports from :data:`MAIXPY_MODULES` (MaixPy name → dotted path of the
maixemu module) through the script's own ``__import__``; nothing is put into ``sys.modules`` under
the MaixPy name, so CPython's ``time``, ``os``, ``sys`` and ``gc`` stay intact for every library.

``os``, ``io`` and ``sys`` are mapped on purpose: on the device ``import os`` *is* ``uos`` (device paths,
``listdir("/") == ['flash', 'sd']``), ``io.open`` is the device's ``open`` and ``import sys`` is the
board's own ``sys`` (its ``path``, ``argv``, ``modules``; never the host's). ``_thread`` is
MicroPython's (threads that belong to the board). ``json`` and ``struct`` are left to CPython: the
device's weak links point them at ``ujson``/``ustruct``, whose behaviour CPython's modules already
cover.
"""

from __future__ import annotations

from typing import Any

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
    # ulab 0.26 (MaixPy-v1 and kendryte/canmv full builds): numpy-like arrays, flat API
    "ulab": _F + "ulab",
}

#: Names the firmware's frozen ``_boot.py`` leaves in the globals ``main.py`` runs in, so scripts use
#: them without importing (``hello_wrold.py`` calls ``sys.implementation`` with no ``import sys``).
#: Value: ``"module"`` or ``"module:attribute"`` in MaixPy import names.
BOOT_GLOBALS: dict[str, str] = {
    "os": "os",
    "sys": "sys",
    "time": "time",
    "gc": "gc",
    "machine": "machine",
    "board_info": "board:board_info",
    "fm": "fpioa_manager:fm",
    "FPIOA": "Maix:FPIOA",
    "GPIO": "Maix:GPIO",
}

#: MaixPy names that are also CPython standard modules: never install these in ``sys.modules``.
SHADOWS_STDLIB: frozenset[str] = frozenset({"time", "gc", "os", "sys", "io", "_thread"})


def boot_globals() -> dict[str, Any]:
    """The objects of :data:`BOOT_GLOBALS`, for the runner to put into a script's globals."""
    import importlib

    values: dict[str, Any] = {}
    for name, spec in BOOT_GLOBALS.items():
        module_name, _, attribute = spec.partition(":")
        module = importlib.import_module(MAIXPY_MODULES[module_name])
        values[name] = getattr(module, attribute) if attribute else module
    return values


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
