"""The names a script finds defined when it starts: what the firmware's boot scripts leave in the
globals of ``__main__``, per board and firmware.

MicroPython runs the frozen ``_boot.py``, then ``boot.py`` and ``main.py`` from the file system,
all in the one ``__main__`` dict (``maixpy_main.c``: ``pyexec_frozen_module("_boot.py")``,
``pyexec_file_if_exists``), and a script the IDE sends runs in that same dict after the frozen
``ide_debug.py`` (``pyexec_str``). So whatever those scripts import and do not ``del`` is there:
a script written in the IDE can use ``lcd`` without importing it, because ``ide_debug.py`` (and
the stock ``main.py``) imported it.

The tables below are read from the firmware sources, one entry per boot script that a stock
IDE run passes through (both IDE paths: the normal boot the IDE interrupts, and "IDE mode" where
``_boot.py`` finds ``/flash/ide_mode.conf`` and stops early), for each MaixPy release (git tags
v0.4.0 .. v0.6.3 and master) and for CanMV. A board's names are the union over its firmware's
scripts: whichever release or path the script was written with, the names it used are there.

Only modules and the objects that are part of a module (classes such as ``GPIO``, ``fm``,
``board_info``) are listed. Left out on purpose: values the boot computes for itself (loop
counters, file names, the ``config`` dict Amigo/CanMV boots write to ``config.json``, the
SD-card message ``tf``) and objects that drive hardware (the stock ``main.py``'s ``test_gpio``
and ``lcd_en``, IDE mode's ``repl`` UART, the M5StickV demo's speaker, buttons and loaded model):
a script does not read them, and making them would need the boot's side effects on the pins.
The M5StickV's ``pye`` (the frozen ``pye_mp`` editor) is not emulated.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

_MAIXPY = "MaixPy-v1 components/micropython/port/builtin_py"
_CANMV = "kendryte/canmv components/micropython/port/builtin_py and projects/canmv_*/builtin_py"

#: Boot script -> the names it leaves: ``name: "module"`` or ``name: "module:attribute"`` (MaixPy
#: import names, resolved as the script's own ``import`` resolves them).
SOURCES: Mapping[str, Mapping[str, str]] = MappingProxyType({
    # MaixPy v0.4.0 _boot.py: everything imported at the top, then the stock main.py it writes
    f"{_MAIXPY}/_boot.py v0.4.0": {
        "gc": "gc", "uos": "uos", "os": "os", "sys": "sys", "time": "time", "machine": "machine",
        "board_info": "board:board_info", "fm": "fpioa_manager:fm", "FPIOA": "Maix:FPIOA", "GPIO": "Maix:GPIO"},
    # v0.5.x: os, sys, time first; IDE mode stops after `from machine import UART; import lcd`;
    # otherwise the same imports as v0.4.0 follow
    f"{_MAIXPY}/_boot.py v0.5.0-v0.5.1": {
        "os": "os", "sys": "sys", "time": "time", "UART": "machine:UART", "lcd": "lcd", "gc": "gc",
        "machine": "machine", "board_info": "board:board_info", "fm": "fpioa_manager:fm", "FPIOA": "Maix:FPIOA",
        "GPIO": "Maix:GPIO"},
    # the stock script v0.4.0 writes as boot.py and v0.5.x as main.py:
    # `from fpioa_manager import *; import os, Maix, lcd, image; from Maix import FPIOA, GPIO`
    f"{_MAIXPY}/_boot.py boot_py/main_py v0.4.0-v0.5.1": {
        "fm": "fpioa_manager:fm", "board_info": "board:board_info", "os": "os", "Maix": "Maix", "lcd": "lcd",
        "image": "image", "FPIOA": "Maix:FPIOA", "GPIO": "Maix:GPIO"},
    # v0.6.0 .. master: os, sys, time; IDE mode: UART and lcd
    f"{_MAIXPY}/_boot.py v0.6.0-master": {"os": "os", "sys": "sys", "time": "time", "UART": "machine:UART", "lcd": "lcd"},
    # the stock main.py of v0.6.3 and master (v0.6.0-v0.6.2 import a subset: gc, lcd, image, sys)
    f"{_MAIXPY}/_boot.py main_py v0.6.0-master": {
        "gc": "gc", "lcd": "lcd", "image": "image", "sys": "sys", "os": "os", "GPIO": "Maix:GPIO", "fm": "fpioa_manager:fm"},
    # run before every script the IDE sends
    f"{_MAIXPY}/ide_debug.py": {"gc": "gc", "lcd": "lcd", "json": "json"},
    # the Amigo builds: json and lcd at the top, I2C for the AXP173 (IPS panel build)
    "MaixPy-v1 projects/maixpy_amigo_ips|tft/builtin_py/_boot.py": {
        "os": "os", "sys": "sys", "time": "time", "json": "json", "UART": "machine:UART", "lcd": "lcd",
        "I2C": "machine:I2C"},
    "MaixPy-v1 projects/maixpy_amigo_ips|tft/builtin_py/_boot.py main_py": {
        "gc": "gc", "lcd": "lcd", "image": "image", "sys": "sys", "os": "os", "GPIO": "Maix:GPIO", "fm": "fpioa_manager:fm"},
    # the M5StickV build: v0.4-style imports, then the demo boot.py it writes to /flash (the IDE
    # interrupts its camera loop; everything it imported stays)
    "MaixPy-v1 projects/maixpy_m5stickv/builtin_py/_boot.py": {
        "os": "os", "sys": "sys", "time": "time", "UART": "machine:UART", "lcd": "lcd", "gc": "gc", "uos": "uos",
        "machine": "machine", "board_info": "board:board_info", "fm": "fpioa_manager:fm", "FPIOA": "Maix:FPIOA",
        "GPIO": "Maix:GPIO"},
    "MaixPy-v1 projects/maixpy_m5stickv/builtin_py/_boot.py boot_py": {
        "lcd": "lcd", "image": "image", "time": "time", "uos": "uos", "sys": "sys", "axp192": "pmu:axp192",
        "I2S": "Maix:I2S", "GPIO": "Maix:GPIO", "audio": "audio", "fm": "fpioa_manager:fm", "FPIOA": "Maix:FPIOA",
        "sensor": "sensor", "kpu": "KPU"},
    # CanMV: os, sys, time (json on the project builds); IDE mode: UART and lcd; stock main.py; ide_debug.py
    f"{_CANMV}/_boot.py": {"os": "os", "sys": "sys", "time": "time", "json": "json", "UART": "machine:UART", "lcd": "lcd"},
    f"{_CANMV}/_boot.py main_py": {"gc": "gc", "lcd": "lcd", "image": "image"},
    f"{_CANMV}/ide_debug.py": {"gc": "gc", "lcd": "lcd", "json": "json"},
})

_GENERIC = (f"{_MAIXPY}/_boot.py v0.4.0", f"{_MAIXPY}/_boot.py v0.5.0-v0.5.1",
            f"{_MAIXPY}/_boot.py boot_py/main_py v0.4.0-v0.5.1", f"{_MAIXPY}/_boot.py v0.6.0-master",
            f"{_MAIXPY}/_boot.py main_py v0.6.0-master", f"{_MAIXPY}/ide_debug.py")
_CANMV_SCRIPTS = (f"{_CANMV}/_boot.py", f"{_CANMV}/_boot.py main_py", f"{_CANMV}/ide_debug.py")

#: Board profile -> the boot scripts of its firmware builds (``maixpy_k210`` for the Maix boards,
#: the board's own project where it has one; CanMV's scripts are the same on every K210 board).
BOARD_SOURCES: Mapping[str, tuple[str, ...]] = MappingProxyType({
    **{name: _GENERIC + _CANMV_SCRIPTS for name in ("default", "bit", "dock", "go", "duino", "cube", "unitv")},
    "amigo": _GENERIC + ("MaixPy-v1 projects/maixpy_amigo_ips|tft/builtin_py/_boot.py",
                         "MaixPy-v1 projects/maixpy_amigo_ips|tft/builtin_py/_boot.py main_py",
                         f"{_MAIXPY}/ide_debug.py") + _CANMV_SCRIPTS,
    "m5stickv": ("MaixPy-v1 projects/maixpy_m5stickv/builtin_py/_boot.py",
                 "MaixPy-v1 projects/maixpy_m5stickv/builtin_py/_boot.py boot_py") + _CANMV_SCRIPTS,
})


def names(board: str) -> dict[str, str]:
    """The boot names of ``board`` (a profile name): ``{name: spec}``, later scripts winning."""
    merged: dict[str, str] = {}
    for source in BOARD_SOURCES[board]:
        merged.update(SOURCES[source])
    return merged


#: Every name any board's boot leaves (the editor stubs declare these: ``stubs/extras/__builtins__.pyi``).
ALL_NAMES: Mapping[str, str] = MappingProxyType({k: v for board in BOARD_SOURCES for k, v in names(board).items()})


def resolve(board: str, import_module: Callable[[str], Any]) -> dict[str, Any]:
    """The objects of ``board``'s boot names, imported with ``import_module(name)`` (the script's own
    import, so ``json`` is what ``import json`` gives the script and ``sys`` is the board's)."""
    values: dict[str, Any] = {}
    for name, spec in names(board).items():
        module_name, _, attribute = spec.partition(":")
        module = import_module(module_name)
        values[name] = getattr(module, attribute) if attribute else module
    return values


__all__ = ["ALL_NAMES", "BOARD_SOURCES", "SOURCES", "names", "resolve"]
