"""usys/registry: print_exception's MicroPython format, sys forwarding, the import-name mapping."""

from __future__ import annotations

import importlib
import io
import sys
from pathlib import Path

import pytest

from maixemu.firmware import registry, tracebacks, usys
from maixemu.host import storage


def _raise_in_function():
    raise ValueError("bad value")


def _caught(func):
    try:
        func()
    except BaseException as exc:  # noqa: BLE001 - the test wants whatever was raised
        return exc
    raise AssertionError("did not raise")


def test_print_exception_format_with_traceback(tmp_path, board_state):
    here = Path(__file__).resolve().parent
    board_state.storage = storage.Storage(sd_dir=here, flash_dir=tmp_path)  # this file shows as /sd/...
    exc = _caught(_raise_in_function)
    out = io.StringIO()
    usys.print_exception(exc, out)
    caller_line = _caught.__code__.co_firstlineno + 2
    raise_line = _raise_in_function.__code__.co_firstlineno + 1
    name = "/sd/" + Path(__file__).name
    assert out.getvalue() == (
        "Traceback (most recent call last):\n"
        f'  File "{name}", line {caller_line}, in _caught\n'
        f'  File "{name}", line {raise_line}, in _raise_in_function\n'
        "ValueError: bad value\n"
    )


def test_print_exception_defaults_to_current_stdout(capsys):
    usys.print_exception(KeyError("k"))
    assert capsys.readouterr().out == "KeyError: k\n"


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (ValueError(), "ValueError: \n"),
        (OSError(2), "OSError: [Errno 2] ENOENT\n"),
        (OSError(2, "No such file or directory"), "OSError: [Errno 2] ENOENT\n"),
        (OSError("sensor reset fail"), "OSError: sensor reset fail\n"),
        (ValueError("a", 1), "ValueError: ('a', 1)\n"),
        (ModuleNotFoundError("no module named 'x'"), "ImportError: no module named 'x'\n"),
    ],
)
def test_print_exception_last_line(exc, line):
    out = io.StringIO()
    usys.print_exception(exc, out)
    assert out.getvalue() == line


def test_library_frames_are_hidden():
    import json

    exc = _caught(lambda: json.loads("{"))
    text = tracebacks.format_exception(exc)
    assert "decoder.py" not in text
    assert text.endswith("\n") and text.splitlines()[-1].startswith("JSONDecodeError: ")


def test_usys_is_the_boards_own_and_never_the_hosts(monkeypatch, board_state):
    assert usys.implementation.name == "micropython"
    assert usys.implementation.version == (0, 6, 2)
    assert usys.implementation[1] == (0, 6, 2)
    assert usys.platform == "MaixPy"
    assert sys.platform != "MaixPy"
    assert sys.implementation.name == "cpython"
    assert not hasattr(sys, "print_exception")
    assert usys.argv is board_state.system.sys_argv and usys.argv is not sys.argv
    assert usys.path == ["", ".", "/sd", "/flash"] and usys.path is not sys.path
    assert usys.modules is board_state.system.sys_modules and usys.modules == {}
    with pytest.raises(SystemExit):
        usys.exit()
    with pytest.raises(AttributeError, match="^'module' object has no attribute 'setrecursionlimit'$"):
        usys.setrecursionlimit  # noqa: B018 - MicroPython has none
    with pytest.raises(AttributeError):
        usys.path = []  # a built-in module's names cannot be replaced on the device
    replacement = io.StringIO()
    monkeypatch.setattr(sys, "stdout", replacement)
    assert usys.stdout is replacement  # the board console is the process's stream unless given one


def test_registry_maps_helper_names_to_importable_modules():
    mapping = registry.MAIXPY_MODULES
    assert mapping["time"] == mapping["utime"] == "maixemu.firmware.utime"
    assert mapping["os"] == mapping["uos"] == "maixemu.firmware.uos"
    assert mapping["sys"] == mapping["usys"] == "maixemu.firmware.usys"
    assert mapping["gc"] == "maixemu.firmware.mgc"
    # json is CPython's (it covers ujson); struct is ustruct, more lenient than CPython's
    assert "json" not in mapping and mapping["struct"] == mapping["ustruct"]
    for name in ("time", "gc", "Maix", "fpioa_manager", "board", "machine", "uos", "ujson", "ustruct",
                 "micropython", "usys"):
        module = importlib.import_module(mapping[name])
        assert module.__name__ == mapping[name]
    for name in ("image", "sensor", "lcd", "KPU"):
        assert mapping[name] == f"maixemu.firmware.{name}"


def test_helper_modules_do_not_shadow_the_standard_library():
    import gc
    import os
    import time

    for name in registry.MAIXPY_MODULES.values():
        if name.split(".")[-1] in ("image", "sensor", "lcd", "KPU"):
            continue
        importlib.import_module(name)
    assert sys.modules["time"] is time and not hasattr(time, "ticks_ms")
    assert sys.modules["os"] is os and sys.modules["gc"] is gc and not hasattr(gc, "mem_free")


def test_script_reset_is_a_clean_end_base_exception():
    assert issubclass(registry.ScriptReset, BaseException)
    assert not issubclass(registry.ScriptReset, Exception)
    assert registry.ScriptReset in registry.CLEAN_END_EXCEPTIONS
    assert registry.ScriptReset("machine.reset()").reason == "machine.reset()"


def test_ujson_ustruct_micropython():
    from maixemu.firmware import micropython, ujson, ustruct

    assert ujson.dumps({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert ujson.loads(b'{"a": 1}') == {"a": 1}
    with pytest.raises(ValueError):
        ujson.loads("{")
    assert ustruct.unpack("<HB", ustruct.pack("<HB", 513, 7)) == (513, 7)
    assert micropython.const(3) == 3

    @micropython.native
    def f():
        return 1

    assert f() == 1
    seen = []
    micropython.schedule(seen.append, 5)
    assert seen == []  # queued: it runs at the next soft-IRQ point
    from maixemu.firmware.state import current

    current().checkpoint()
    assert seen == [5]
    for n in range(8):
        micropython.schedule(seen.append, n)
    with pytest.raises(RuntimeError, match="^schedule queue full$"):
        micropython.schedule(seen.append, 9)


def test_boot_globals_are_the_helper_objects():
    from maixemu.firmware import board, fpioa_manager, utime, uos
    from maixemu.firmware.Maix import GPIO

    values = registry.boot_globals()
    assert set(values) == {"os", "sys", "time", "gc", "machine", "board_info", "fm", "FPIOA", "GPIO",  # v0.4/v0.5 _boot.py
                           "uos", "UART", "lcd", "Maix", "image", "json"}  # v0.4 uos, IDE mode, stock main.py, ide_debug.py
    from maixemu.firmware.device_modules import target_of

    assert target_of(values["sys"]) is usys and target_of(values["os"]) is uos and target_of(values["time"]) is utime
    assert values["board_info"] is board.board_info and values["fm"] is fpioa_manager.fm
    assert values["GPIO"] is GPIO
