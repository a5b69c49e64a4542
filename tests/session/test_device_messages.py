"""Issue 28: a device exception's ``args`` and ``str()`` are the firmware's, byte for byte; maixemu's
advice for the PC is kept beside the exception (``maixemu.advice(e)``) and printed on its own
``[maixemu]`` line when the exception ends the run — never inside the exception's text."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

import maixemu
from maixemu.testing import MaixPyRunner

#: (the statement that fails, the firmware's exception text, words of maixemu's advice) — one per
#: kind of advice site: the KPU (legacy and CanMV), sensor, lcd and maix modules.
SITES = [
    pytest.param("import KPU as kpu, image\ntask = kpu.load(0xF00000)\nkpu.forward(task, image.Image(size=(320, 240)))",
                 "[MAIXPY]kpu: check img format err!\r\n", "Call img.pix_to_ai() first", id="pix_to_ai"),
    pytest.param("import KPU as kpu\nkpu.load(0x300000)",
                 "[MAIXPY]kpu: load error:2002, ERR_KMODEL_VERSION: only support kmodel V3/V4 now",
                 "nothing is mapped at flash address 0x300000", id="kpu.load-unmapped"),
    pytest.param("import KPU as kpu\ntask = kpu.load(0xF00000)\nkpu.run_yolo2(task, None)",
                 "[MAIXPY]kpu: kpu_net has no yolo2 args", "call kpu.init_yolo2(", id="run_yolo2"),
    pytest.param("import sensor\nsensor.snapshot()", "not found sensor", "call sensor.reset() first",
                 id="sensor-not-reset"),
    pytest.param("import sensor\nsensor.reset()\nsensor.set_pixformat(sensor.RGB565)\n"
                 "sensor.set_framesize(sensor.QVGA)\nsensor.set_windowing((0, 0, 100, 64))",
                 "value must be multiple of 8", "multiples of 8", id="set_windowing"),
    pytest.param("import lcd\nlcd.deinit()\nlcd.draw_string(0, 0, 'x')", "not init", "call lcd.init() first", id="lcd-not-init"),
    pytest.param("from maix import camera", "cannot import name camera", "MaixPy v4's API", id="maix-v4"),
    pytest.param("from maix import KPU\nk = KPU()\nk.load_kmodel(0x300000, 1000)", "Failed to init model",
                 "0x300000", id="canmv-kpu"),
]


def _run(tmp_path: Path, code: str, **options):
    return MaixPyRunner(tmp_path).run(code=textwrap.dedent(code), frames=3, **options)


def _caught(code: str) -> str:
    """``code`` whose last statement runs in a try: the script prints what it caught."""
    *setup, last = code.split("\n")
    return "\n".join([*setup, "import maixemu", "try:", f"    {last}", "except Exception as e:",
                      "    print(repr(e.args))", "    print(repr(str(e)))", "    print('advice:', maixemu.advice(e))"])


@pytest.mark.parametrize("code, device, advice", SITES)
def test_a_caught_device_exception_has_the_firmwares_text_and_the_advice_beside_it(tmp_path, code, device, advice):
    result = _run(tmp_path, _caught(code))
    assert result.exit_code == 0, result.stderr
    out = result.stdout.split("\n")
    at = out.index(repr((device,)))  # the firmware may print a line of its own first
    assert out[at + 1] == repr(device)  # str(e): the board's words, no [maixemu] text
    assert out[at + 2].startswith("advice: ") and advice in out[at + 2]
    assert "[maixemu]" not in result.stdout
    assert advice not in result.stderr  # caught: nothing printed for it


@pytest.mark.parametrize("code, device, advice", SITES)
def test_an_uncaught_device_exception_gets_its_advice_on_a_line_of_its_own(tmp_path, code, device, advice):
    result = _run(tmp_path, code)
    assert result.exit_code == 1, result.stderr
    lines = result.stderr.splitlines()
    last = next(i for i, line in enumerate(lines) if line.endswith(device.rstrip("\r\n")) and ": " in line)
    after = [line for line in lines[last + 1:] if line]  # "...err!\r\n" leaves the device's blank line
    assert after[0].startswith("[maixemu] ") and advice in after[0], result.stderr
    assert sum(advice in line for line in lines) == 1, result.stderr


@pytest.mark.parametrize("code, device, advice", SITES[:3])
def test_quiet_prints_no_advice_but_the_channel_keeps_it(tmp_path, code, device, advice):
    loud = _run(tmp_path, code, quiet=True)
    assert loud.exit_code == 1 and advice not in loud.stderr and "[maixemu]" not in loud.stderr, loud.stderr
    caught = _run(tmp_path, _caught(code), quiet=True)
    assert advice in caught.stdout  # maixemu.advice(e) still answers


def test_a_thread_and_a_callback_report_the_device_text_then_the_advice(tmp_path):
    code = """
    import _thread, time, sensor
    def work():
        sensor.snapshot()
    _thread.start_new_thread(work, ())
    time.sleep_ms(300)
    """
    result = _run(tmp_path, code)
    lines = result.stderr.splitlines()
    at = lines.index("TypeError: not found sensor")
    assert lines[at + 1] == "[maixemu] call sensor.reset() first (it finds the camera)", result.stderr


def test_no_firmware_message_embeds_a_maixemu_line():
    """The advice never rides inside a message: no firmware source puts a ``[maixemu]`` line after a
    device's text (the old ``with_advice`` did, and ``'...\\n[maixemu] ...'`` literals did too)."""
    root = Path(maixemu.__file__).parent / "firmware"
    offenders = [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py"))
                 for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if re.search(r"\\n\[maixemu\]", line) or "with_advice(" in line]
    assert offenders == []


def test_advice_travels_with_the_exception_and_is_never_its_text():
    from maixemu.firmware.notices import advice_line, advised

    exc = advised(OSError("Failed to init model"), "map it with --flash")
    assert exc.args == ("Failed to init model",) and str(exc) == "Failed to init model"
    assert maixemu.advice(exc) == "map it with --flash"
    assert advice_line(exc) == "[maixemu] map it with --flash\n" and advice_line(exc, False) == ""
    assert maixemu.advice(ValueError("x")) is None and advice_line(None) == ""


def test_the_package_reads_the_advice_where_the_firmware_keeps_it():
    """``maixemu.advice`` spells the attribute itself (the package root imports no layer)."""
    import maixemu
    from maixemu.firmware import notices

    assert maixemu.ADVICE_ATTRIBUTE == notices.ADVICE_ATTRIBUTE
    assert maixemu.advice(notices.advised(ValueError("[MAIXPY]kpu: check img format err!"), "call pix_to_ai()")) == "call pix_to_ai()"
    assert maixemu.advice(ValueError("x")) is None
