"""Every name of the firmware's module and class tables exists in maixemu, or is listed here with why.

The names are read from the firmware's C sources (``maixemu/tools/firmware_names.py`` walks the
``*_module_globals_table`` / ``*_locals_dict_table`` entries of MaixPy-v1 master and kendryte/canmv
main from the modules ``mpconfigport.h`` builds in). ``firmware_names.json`` next to this file is the
committed snapshot of that result (names are facts, not code), so CI without the mirrors still
checks them; where the mirrors are present, the snapshot must equal a fresh read of the sources.
Rewrite it with ``python -m maixemu.tools.firmware_names``.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from _shared import REPO_ROOT
from maixemu.firmware import registry
from maixemu.session.importer import MICROPYTHON_ALIASES

SNAPSHOT = Path(__file__).with_name("firmware_names.json")
MIRROR = Path(os.environ.get("MAIXEMU_MIRROR", REPO_ROOT.parent / ".mirror"))

#: Whole firmware modules maixemu does not emulate (yet): importing one ends the run with a line
#: naming it (session.outcome.NOT_EMULATED_MODULES). Value: why.
MODULES_NOT_EMULATED: dict[str, str] = {
    "lvgl_helper": "LVGL GUI binding: not emulated",
    "nes": "the NES emulator: not emulated",
    "speech_recognizer": "speech recognition (isolated_word, maix_asr): not emulated",
}

#: Single names missing from an emulated module. Value: why (and who builds it).
NAMES_NOT_EMULATED: dict[str, str] = {
    # FAT on a block device: the constructor checks the block device, then raises NotImplementedError
    # naming the class (uos.VfsSpiffs is emulated: firmware/vfs_spiffs.py)
    **{f"{mod}.{cls}.{name}": "uos block-device file systems: FAT's on-disk format is not emulated"
       for mod in ("os", "uos") for cls in ("VfsFat",)
       for name in ("chdir", "getcwd", "ilistdir", "mkdir", "mount", "open", "remove", "rename", "rmdir",
                    "stat", "statvfs", "umount")},
    **{f"{mod}.set_REPLio": "moving the REPL to another machine.UART: the PC's terminal stays the REPL"
       for mod in ("os", "uos")},
    # CanMV's audio codec driver: its constructor raises NotImplementedError naming it
    **{f"modules.ES8311.{name}": "the ES8311 codec (CanMV) is not emulated"
       for name in ("CODEC_MODE_BOTH", "CODEC_MODE_DECODE", "CODEC_MODE_ENCODE", "FORMAT_I2S_DSP",
                    "FORMAT_I2S_LEFT", "FORMAT_I2S_NORMAL", "FORMAT_I2S_RIGHT", "MIC_GAIN_0DB", "MIC_GAIN_6DB",
                    "MIC_GAIN_12DB", "MIC_GAIN_18DB", "MIC_GAIN_24DB", "MIC_GAIN_30DB", "MIC_GAIN_36DB",
                    "MIC_GAIN_42DB", "bits_per_sample", "format", "mic_gain", "sample_rate", "start", "volume")},
    # served by CPython's modules under MicroPython's names (session.importer.MICROPYTHON_ALIASES)
    **{f"{mod}.sha256.calculate_hard": "the K210's SHA-256 accelerator entry point; hashlib.sha256 digests the same"
       for mod in ("hashlib", "uhashlib")},
    **{f"ucryptolib.{name}": "AES (ucryptolib) is not emulated" for name in ("aes", "MODE_CBC", "MODE_ECB", "MODE_GCM")},
}


def _snapshot() -> dict[str, dict[str, list[str]]]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def _module(top: str) -> Any:
    """What a script's ``import top`` gets: a firmware module, or CPython's under a MicroPython alias."""
    if top in registry.MAIXPY_MODULES:
        return importlib.import_module(registry.MAIXPY_MODULES[top])
    if top in MICROPYTHON_ALIASES:
        return importlib.import_module(MICROPYTHON_ALIASES[top])
    if top == "hashlib":  # the weak link to uhashlib, served by CPython's
        return importlib.import_module(top)
    return None


def _missing(table: str, names: list[str]) -> list[str]:
    top, *rest = table.split(".")
    obj = _module(top)
    if obj is None:
        return [top]
    for part in rest:
        if not hasattr(obj, part):
            return [table]
        obj = getattr(obj, part)
        if isinstance(obj, type(len)) and top not in registry.MAIXPY_MODULES:
            obj = type(obj())  # CPython's hashlib.sha256 is a factory function: its objects' type
    return [f"{table}.{name}" for name in names if not hasattr(obj, name)]


def _tables() -> list[tuple[str, str]]:
    return [(build, table) for build, tables in sorted(_snapshot().items()) for table in tables]


@pytest.mark.parametrize("build,table", _tables(), ids=[f"{b}:{t}" for b, t in _tables()])
def test_every_firmware_name_exists_or_is_listed(build: str, table: str) -> None:
    names = _snapshot()[build][table]
    unexplained = [m for m in _missing(table, names)
                   if m not in MODULES_NOT_EMULATED and m not in NAMES_NOT_EMULATED]
    assert not unexplained, (f"{build} firmware names missing from maixemu (build them from the firmware "
                             f"source, or list them with the reason): {unexplained}")


def test_the_snapshot_is_the_firmware_sources() -> None:
    from maixemu.tools.firmware_names import SOURCES, all_firmware_names

    if not all((MIRROR / repo).is_dir() for repo, *_ in SOURCES.values()):
        pytest.skip(f"firmware mirrors not under {MIRROR} (set MAIXEMU_MIRROR): the committed snapshot stands")
    assert all_firmware_names(MIRROR) == _snapshot(), \
        "firmware sources changed: run `python -m maixemu.tools.firmware_names` and review the diff"


def test_the_snapshot_covers_the_modules_scripts_use() -> None:
    """A reader that silently found nothing would make the table test pass: the tables of the
    modules every script uses are there with the names the firmware is known to have."""
    names = _snapshot()["maixpy"]
    assert {"sensor", "lcd", "image", "image.Image", "KPU", "machine.I2C", "Maix.GPIO", "utime"} <= set(names)
    assert len(names["image.Image"]) >= 120
    assert {"I2C_SOFT", "MODE_MASTER_SOFT", "readfrom_mem"} <= set(names["machine.I2C"])
    assert "network" in names and "touchscreen" in names
    assert {"connect", "ifconfig", "scan", "adc", "ping", "version"} <= set(names["network.ESP32_SPI"])


def test_listed_modules_are_the_ones_the_run_names_as_not_emulated() -> None:
    from maixemu.session.outcome import NOT_EMULATED_MODULES

    assert set(MODULES_NOT_EMULATED) <= NOT_EMULATED_MODULES
