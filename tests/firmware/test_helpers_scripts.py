"""The basic helper scripts of MaixPy-v1_scripts run unchanged against the helper modules.

Scripts run in-process with a virtual clock (sleeps advance it instantly, so ``demo_time.py``'s
``time.sleep(1)`` and ``demo_gpio_led.py``'s 20 blinking rounds are exact and fast), the script's
imports served from :data:`maixemu.firmware.mp.registry.MAIXPY_MODULES` and ``open`` from
:func:`maixemu.firmware.uos.open_device`, as the runner does.
"""

from __future__ import annotations

import builtins
import contextlib
import importlib
import io
import re
import warnings
from pathlib import Path

import pytest

from maixemu.firmware.mp import registry
from maixemu.firmware import uos
from maixemu.firmware.state import BoardState, activate, deactivate
from maixemu.host import storage

_ALIASES = {"uio": "io", "uerrno": "errno"}


class _Result:
    def __init__(self, stdout: str, reset: bool):
        self.stdout = stdout
        self.lines = stdout.splitlines()
        self.reset = reset


def run_helper_script(script: Path, sd: Path, flash: Path) -> _Result:
    """Exec ``script`` as the runner would, on a freshly booted board with a virtual clock."""
    board = BoardState(storage=storage.Storage(sd_dir=sd, flash_dir=flash, cwd="/sd"))
    clock = {"ns": 0}
    board.clock.use(lambda: clock["ns"], lambda ns: clock.__setitem__("ns", clock["ns"] + ns))
    activate(board)
    real_import = builtins.__import__

    def script_import(name, globals=None, locals=None, fromlist=(), level=0):
        top = name.partition(".")[0]
        if level == 0 and top in registry.MAIXPY_MODULES:
            return importlib.import_module(registry.MAIXPY_MODULES[top])
        if level == 0 and name in _ALIASES:
            return importlib.import_module(_ALIASES[name])
        return real_import(name, globals, locals, fromlist, level)

    script_builtins = dict(vars(builtins), __import__=script_import, open=uos.open_device)
    out = io.StringIO()
    reset = False
    try:
        with contextlib.redirect_stdout(out):
            with warnings.catch_warnings():  # MicroPython does not warn about '\/' in docstrings
                warnings.simplefilter("ignore", (DeprecationWarning, SyntaxWarning))
                code = compile(script.read_text(encoding="utf-8"), str(script), "exec")
            exec(code, {"__name__": "__main__", "__builtins__": script_builtins})
    except registry.ScriptReset:
        reset = True
    finally:
        deactivate(board)
    return _Result(out.getvalue(), reset)


@pytest.fixture()
def folders(tmp_path):
    sd, flash = tmp_path / "sd", tmp_path / "flash"
    sd.mkdir()
    flash.mkdir()
    return sd, flash


def _basic(shared_dir: Path, name: str) -> Path:
    return shared_dir / "scripts" / "MaixPy-v1_scripts" / name


def _embedded_output(script: Path) -> list[str]:
    """The REPL output pasted into the script's closing docstring (between ``>OK`` and ``>``)."""
    text = script.read_text(encoding="utf-8")
    match = re.search(r">OK\n(.*?)\n>\s*\n", text, re.S)
    assert match, f"no embedded output in {script}"
    return match.group(1).splitlines()


def test_demo_time_matches_embedded_output(shared_dir, folders):
    script = _basic(shared_dir, "basic/demo_time.py")
    expected = _embedded_output(script)
    result = run_helper_script(script, *folders)
    assert len(result.lines) == len(expected) == 6
    # lines 1 and 4 print the running RTC, which on the device had been set by an earlier run
    assert result.lines[0] == "0" and expected[0] == "74"
    assert int(result.lines[3]) == 0
    for index in (1, 2, 4, 5):
        assert result.lines[index] == expected[index]


def test_demo_view_mem(shared_dir, folders):
    result = run_helper_script(_basic(shared_dir, "basic/demo_view_mem.py"), *folders)
    assert result.lines == ["352.09375", "4640.0"]  # the device prints float32: 352.0937 and 4640.0


def test_demo_set_gc_heap_size_reboots(shared_dir, folders):
    result = run_helper_script(_basic(shared_dir, "basic/demo_set_gc_heap_size.py"), *folders)
    assert result.reset
    assert result.lines == [
        "config micropython gc stack 1M (1024KB) if not",
        "updates take effect when you reboot the system. ",
    ]


def test_demo_files(shared_dir, folders):
    sd, _flash = folders
    (sd / "main.py").write_bytes(b"print('hi')\r\n")
    result = run_helper_script(_basic(shared_dir, "basic/demo_files.py"), *folders)
    assert result.lines == [
        "------------", " dir: flash",
        "------------", " dir: sd",
        "b\"print('hi')\\r\\n\"",
    ]


def test_demo_fs_info(shared_dir, folders):
    result = run_helper_script(_basic(shared_dir, "basic/demo_fs_info.py"), *folders)
    # MaixPy's SPIFFS reports 21 blocks of 128 KiB (2 794 153 bytes of data pages), not the raw 3 MiB
    assert result.lines == ["/flash total=2.6MB free=2.6MB", "/sd total=7.4GB free=7.4GB"]


def test_demo_gpio_led(shared_dir, folders):
    result = run_helper_script(_basic(shared_dir, "hardware/demo_gpio_led.py"), *folders)
    assert result.lines[:3] == ["13", "12", "14"]
    body = result.lines[3:]
    assert len(body) == 40
    for i in range(20):
        level = i % 2  # written before the toggle: 0, 1, 0, ...
        assert body[2 * i] == f"LED RGB({level},{level},{level})"
        assert body[2 * i + 1] == "key_input: 1"
