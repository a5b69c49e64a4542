"""Issue 17: what a script sees names the device, never maixemu — no chained internal tracebacks, no
maixemu module names or host paths, and "Did you mean" for misspelt firmware names."""

from __future__ import annotations

import textwrap

import pytest

from _shared import split_summary

from maixemu.testing import MaixPyRunner


def _run(tmp_path, code, **options):
    return MaixPyRunner(tmp_path).run(code=textwrap.dedent(code), frames=3, **options)


def test_a_truncated_kmodel_shows_the_device_error_only(tmp_path, shared_dir):
    model = (shared_dir / "models" / "v3" / "face_detect_320x240.kmodel").read_bytes()
    code = """
    import KPU as kpu
    try:
        kpu.load("/sd/trunc.kmodel")
    except ValueError as e:
        print("cause", e.__cause__, e.__suppress_context__)
    kpu.load("/sd/trunc.kmodel")
    """
    result = _run(tmp_path, code, files={"/sd/trunc.kmodel": model[:3000]})
    assert result.exit_code == 1
    assert result.lines[0] == "cause None True"
    assert "During handling" not in result.stderr and "KmodelFormatError" not in result.stderr, result.stderr
    assert result.stderr.startswith("Traceback (most recent call last):")
    lines = result.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("ValueError: [MAIXPY]kpu: load error:2003"))
    assert lines[at + 1].startswith("[maixemu] /sd/trunc.kmodel is damaged")


def test_a_misspelt_firmware_name_gets_did_you_mean(tmp_path):
    result = _run(tmp_path, "import KPU as kpu\nkpu.lod('/sd/x.kmodel')\n")
    assert result.exit_code == 1
    assert split_summary(result.stderr)[0].splitlines()[-2:] == [
        "AttributeError: 'module' object has no attribute 'lod'", "[maixemu] Did you mean: 'load'?"]


def test_a_caught_attribute_error_has_name_and_obj_for_cpythons_suggestions(tmp_path):
    code = """
    import sensor
    try:
        sensor.snapshoot()
    except AttributeError as e:
        print(e)
        print(e.name, e.obj is sensor)
    """
    result = _run(tmp_path, code)
    assert result.lines == ["'module' object has no attribute 'snapshoot'", "snapshoot True"]  # MicroPython's words


def test_a_misspelt_global_gets_did_you_mean(tmp_path):
    result = _run(tmp_path, "counter = 1\nprint(countr)\n")
    assert split_summary(result.stderr)[0].splitlines()[-2:] == [
        "NameError: name 'countr' isn't defined", "[maixemu] Did you mean: 'counter'?"]


@pytest.mark.parametrize("name", ["KPU", "sensor", "lcd", "image", "time", "os", "Maix", "machine", "maix", "sys"])
def test_modules_print_as_the_device_names_them_and_have_no_host_file(tmp_path, name):
    code = f"""
    import {name}
    print(repr({name}))
    print(hasattr({name}, "__file__"))
    print([n for n in dir({name}) if "maixemu" in n or "/" in n])
    """
    result = _run(tmp_path, code)
    assert result.exit_code == 0, result.stderr
    assert result.lines == [f"<module '{name}'>", "False", "[]"]


def test_nothing_the_script_prints_of_the_firmware_names_maixemu_or_a_host_path(tmp_path):
    code = """
    import KPU as kpu, sensor, lcd, image, time, os
    from Maix import GPIO
    import Maix
    print(kpu, sensor, lcd, time, os, Maix, kpu.load, sensor.snapshot)  # classes: see the report
    try:
        from KPU import lod
    except ImportError as e:
        print(e)
    try:
        kpu.__file__
    except AttributeError as e:
        print(e)
    """
    result = _run(tmp_path, code)
    assert result.exit_code == 0, result.stderr
    assert "maixemu" not in result.stdout and str(tmp_path) not in result.stdout, result.stdout
    assert "cannot import name 'lod' from 'KPU'" in result.stdout


def test_boot_globals_are_device_modules_too(tmp_path):
    result = _run(tmp_path, "print(repr(os), repr(sys), repr(time))\n")
    assert result.lines == ["<module 'os'> <module 'sys'> <module 'time'>"]


def test_a_script_setting_a_module_attribute_does_not_reach_the_next_run(tmp_path):
    """A built-in module's globals are a fixed table on the board (``py/objmodule.c``): the store
    fails as there (issue 24: it used to change the firmware module for every later run); a frozen
    Python module (``board``) takes the name, for its own run only."""
    runner = MaixPyRunner(tmp_path)
    first = runner.run(code="import sensor\ntry:\n    sensor.my_flag = 1\nexcept AttributeError as e:\n    print(e)\n"
                            "import board\nboard.my_flag = 2\nprint(board.my_flag)\n")
    assert first.lines == ["'module' object has no attribute 'my_flag'", "2"]
    second = runner.run(code="import sensor, board\nprint(hasattr(sensor, 'my_flag'), hasattr(board, 'my_flag'))\n")
    assert second.lines == ["False False"]


def test_maixemu_exception_classes_are_shown_by_their_own_name(tmp_path):
    code = """
    import sensor, image, KPU as kpu
    sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
    task = kpu.load(0xF00000)
    img = sensor.snapshot()
    img.draw_rectangle(0, 0, 9, 9)
    kpu.forward(task, img)
    """
    result = _run(tmp_path, code, ai_memory="strict")
    assert result.exit_code == 1
    assert split_summary(result.stderr)[0].splitlines()[-1].startswith("StaleAIMemoryError: [maixemu] main.py:7:"), result.stderr
    assert "maixemu.firmware" not in result.stderr


def test_lcd_and_the_ide_boot_names_need_no_import(maixpy):
    """ide_debug.py imports gc, lcd and json before every IDE script; the stock main.py image, GPIO, fm."""
    code = ("lcd.init()\nlcd.clear(lcd.RED)\nimg = image.Image(size=(8, 8))\nprint(json.dumps({'w': lcd.width()}))\n"
            "print(type(fm.fpioa).__name__, GPIO.OUT, gc.mem_free() > 0, Maix.FPIOA is FPIOA, UART.UART1)\n")
    result = maixpy.run(code=code)
    assert result.ok, result.stderr
    assert result.lines == ['{"w": 320}', "FPIOA 3 True True 0"]


def test_the_m5stickv_boot_leaves_its_demo_imports(maixpy):
    code = "print(repr(kpu), repr(sensor), repr(audio), axp192.__name__, I2S.DEVICE_0, board_info.BUTTON_A)\n"
    result = maixpy.run(code=code, board="m5stickv")
    assert result.ok, result.stderr
    assert result.lines == ["<module 'KPU'> <module 'sensor'> <module 'audio'> axp192 0 36"]
    plain = maixpy.run(code="print(kpu)\n")  # a Maix board's boot never imports KPU
    assert plain.exit_code == 1 and "NameError: name 'kpu' isn't defined" in plain.stderr


def test_a_local_json_module_is_what_the_boot_imported(maixpy):
    """The boot's `import json` goes through the device's import: a json.py on /sd wins, as it does there."""
    result = maixpy.run(code="print(json.MINE)\n", files={"/sd/json.py": "MINE = 'local'\n"})
    assert result.lines == ["local"], result.stderr
