"""MicroPython language and builtin differences scripts meet (MaixPy's MicroPython, commit ced340d):
``NAME = const(v)`` without an import, tab indentation, ``bytearray(str)``, lenient ``ustruct``.
Each case is a script that fails under CPython's rules (the old behaviour) and runs on the device."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from test_nothing_lost_storage import run_here


def _run(tmp_path: Path, body: str, modules: dict[str, str] | None = None) -> tuple[int, str, str]:
    for name, text in (modules or {}).items():
        (tmp_path / f"{name}.py").write_text(text)
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(body) if isinstance(body, str) else body)
    return run_here(script, quiet=True)


def test_const_assignment_folds_without_an_import_in_the_script_and_its_modules(tmp_path):
    module = "_MASK = const(0x03)\nGAIN = const(1 << 2)\ndef mask(v):\n    LOCAL = const(7)\n    return v & _MASK & LOCAL\n"
    code, out, err = _run(tmp_path, """
        import drv
        X = const(5)
        print(X, drv.GAIN, drv.mask(0xFF))
    """, {"drv": module})
    assert code == 0, err
    assert out.split() == ["5", "4", "3"]


def test_const_elsewhere_is_an_ordinary_missing_name(tmp_path):
    code, out, err = _run(tmp_path, "y = 1 + const(2)\n")
    assert code == 1
    assert "NameError" in err and "const" in err


def test_const_of_a_non_integer_is_the_firmwares_syntax_error(tmp_path):
    code, out, err = _run(tmp_path, "NAME = const('text')\n")
    assert code == 1
    assert "SyntaxError" in err and "constant must be an integer" in err


def test_const_imported_from_micropython_still_works(tmp_path):
    code, out, err = _run(tmp_path, "from micropython import const\nA = const(9)\nprint(A, const(3))\n")
    assert code == 0, err
    assert out.split() == ["9", "3"]


def test_indentation_mixing_tabs_and_spaces_counts_a_tab_to_the_next_multiple_of_8(tmp_path):
    # the body of the if mixes 8 spaces and a tab: one block for MicroPython, TabError for CPython
    body = "def f(n):\n        if n:\n                a = n\n\t\tb = a * 2\n\t\treturn b\n\treturn -1\nprint(f(3), f(0))\n"
    code, out, err = _run(tmp_path, body, {"tabbed": body.replace("print(f(3), f(0))\n", "")})
    assert code == 0, err
    assert out.split() == ["6", "-1"]
    code, out, err = _run(tmp_path, "import tabbed\nprint(tabbed.f(2))\n")
    assert code == 0, err
    assert out.split() == ["4"]


def test_a_real_indentation_error_is_micropythons_syntax_error(tmp_path):
    code, out, err = _run(tmp_path, "if True:\nprint(1)\n")
    assert code == 1
    assert err.splitlines()[-1] == "SyntaxError: invalid syntax"  # no INDENT token where the parser wants one


def test_bytearray_of_a_str_copies_its_utf8_bytes_and_stays_a_bytearray(tmp_path):
    code, out, err = _run(tmp_path, """
        data = bytearray("AT+RST")
        print(data, len(bytearray("é")), bytearray(3), bytearray([1, 2]), bytearray("ab", "utf-8"))
        print(isinstance(data, bytearray), isinstance(bytearray(b"x"), (bytes, bytearray)))
        print(isinstance(data, (bytes, bytearray)), data.decode())
        import ustruct
        print(isinstance(bytearray(ustruct.pack("<H", 1)), bytearray))
    """)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "bytearray(b'AT+RST') 2 bytearray(b'\\x00\\x00\\x00') bytearray(b'\\x01\\x02') bytearray(b'ab')"
    assert lines[1] == "True True"
    assert lines[2] == "True AT+RST"
    assert lines[3] == "True"


def test_isinstance_bytearray_accepts_bytearrays_the_firmware_builds(tmp_path):
    from maixemu.firmware.mp_builtins import bytearray as mp_bytearray

    assert isinstance(bytearray(b"x"), mp_bytearray)
    assert issubclass(bytearray, mp_bytearray)
    assert not isinstance(b"x", mp_bytearray)


@pytest.mark.parametrize("expr,expected", [
    ('ustruct.pack(">sf", "f", 1.0)', b"f?\x80\x00\x00"),  # a str for 's' (uartTrans pack_num)
    ('ustruct.pack("<3s", b"abcdef")', b"abc"),
    ('ustruct.pack("<4s", "ab")', b"ab\x00\x00"),
    ('ustruct.pack("<B", 0x1FF)', b"\xff"),                # truncated, no range error
    ('ustruct.pack("<b", 200)', b"\xc8"),
    ('ustruct.pack("<HH", 1)', b"\x01\x00\x00\x00"),        # a missing argument packs zero
    ('ustruct.pack("<H", 1, 2, 3)', b"\x01\x00"),           # extra arguments are ignored
    (r'ustruct.unpack("<H", b"\x01\x00\xff\xff")', (1,)),   # a longer buffer is fine
    (r'ustruct.unpack("<H", b"\x01\x00\xff", 1)', (0xFF00,)),
    ('struct.pack("<sB", "k", 300)', b"k,"),                # import struct is ustruct
])
def test_ustruct_is_as_lenient_as_the_firmware(tmp_path, expr, expected):
    code, out, err = _run(tmp_path, f"import ustruct, struct\nprint(repr({expr}))\n")
    assert code == 0, err
    assert out.strip() == repr(expected)


def test_ustruct_unpack_of_a_short_buffer_is_the_firmwares_error(tmp_path):
    code, out, err = _run(tmp_path, 'import ustruct\nustruct.unpack("<I", b"ab")\n')
    assert code == 1
    assert "ValueError: buffer too small" in err


@pytest.mark.parametrize("module", ["lvgl", "nes", "speech_recognizer", "pye_mp", "lvgl_helper"])
def test_firmware_modules_not_emulated_say_so_in_one_line(tmp_path, module):
    code, out, err = _run(tmp_path, f"import {module}\n")
    assert code == 1
    why = ("is the LVGL GUI, built into some MaixPy firmwares only (the *_with_lvgl builds); it is out of maixemu's "
           "scope" if module.startswith("lvgl") else "is a MaixPy firmware module maixemu does not emulate yet")
    assert f"ImportError: no module named {module!r} ({module!r} {why})" in err.splitlines()


@pytest.mark.parametrize("module", ["network", "socket", "usocket", "touchscreen", "modules"])
def test_firmware_modules_now_emulated_import(tmp_path, module):
    code, out, err = _run(tmp_path, f"import {module}\nprint({module}.__name__ != '')\n")
    assert code == 0, err
    assert out.strip() == "True"


def test_execfile_runs_a_device_file_in_the_callers_globals(tmp_path):
    (tmp_path / "conf.py").write_text("LEVEL = const(3)\nNAME = 'cam'\n")
    code, out, err = _run(tmp_path, """
        execfile("conf.py")
        print(NAME, LEVEL)
        scope = {}
        execfile("conf.py", scope)
        print(sorted(k for k in scope if not k.startswith("__")))
    """)
    assert code == 0, err
    assert out.splitlines() == ["cam 3", "['LEVEL', 'NAME']"]


def test_bytes_have_format(tmp_path):
    """objstr.c: str and bytes share mp_obj_str_format (tests/cpydiff/types_bytes_format.py)."""
    code, out, err = _run(tmp_path, """
        x, y = 3, 4
        packet = b'{},{}'.format(x, y)
        fmt = b'<{:>4}|{name}>'.format
        print(packet, type(packet).__name__, fmt(7, name='n'), b'{}'.format(b'raw'), '{}-{}'.format(1, 2))
        class Job:
            format = 'jpeg'
        print(Job().format)
        try:
            (5).format
        except AttributeError as e:
            print(e)
    """)
    assert code == 0, err
    assert out.splitlines() == ["b'3,4' bytes b'<   7|n>' b\"b'raw'\" 1-2", "jpeg", "'int' object has no attribute 'format'"]


def test_a_module_whose_import_failed_stays_imported(tmp_path):
    """py/builtinimport.c registers the module before running it and keeps it when it raises
    (tests/cpydiff/core_import_prereg.py): the second import succeeds with the half-made module."""
    code, out, err = _run(tmp_path, """
        try:
            import half
        except NameError as e:
            print("first:", e)
        import half
        print("second:", half.A, hasattr(half, "B"))
        import sys
        del sys.modules["half"]
        try:
            import half
        except NameError:
            print("loaded again")
    """, {"half": "A = 1\nundefined_name\nB = 2\n"})
    assert code == 0, err
    assert out.splitlines() == ["first: name 'undefined_name' is not defined", "second: 1 False", "loaded again"]
