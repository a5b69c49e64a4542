"""Issue 17: every pitfall a MaixPy user meets prints the device's message first, then one ``[maixemu]``
line saying what to do — by default; ``quiet`` (``--quiet``) keeps only the device's message."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from _shared import shared_path
from maixemu.testing import MaixPyRunner

NO_AI = """
import KPU as kpu, image
task = kpu.load(0xF00000)
img = image.Image(size=(320, 240))
kpu.forward(task, img)
"""

WRONG_SIZE = """
import sensor, KPU as kpu
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QQVGA)
task = kpu.load(0xF00000)
kpu.forward(task, sensor.snapshot())
"""

STALE = """
import sensor, KPU as kpu
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
task = kpu.load(0xF00000)
for i in range(3):
    img = sensor.snapshot()
    img.draw_rectangle(0, 0, 50, 50, fill=True)
    kpu.forward(task, img)
print("done")
"""

FLASH_NOTHING = """
import KPU as kpu
kpu.load(0x300000)
"""


def _run(tmp_path, code, **options):
    return MaixPyRunner(tmp_path).run(code=textwrap.dedent(code), frames=5, **options)


@pytest.mark.parametrize("code, device, advice", [
    (NO_AI, "ValueError: [MAIXPY]kpu: check img format err!", "Call img.pix_to_ai() first"),
    (WRONG_SIZE, "ValueError: [MAIXPY]kpu: check img format err!", "img.resize(320, 240) then img.pix_to_ai()"),
    (FLASH_NOTHING, "load error:2002, ERR_KMODEL_VERSION", "nothing is mapped at flash address 0x300000"),
])
def test_a_device_error_has_one_hint_line_after_it_by_default(tmp_path, code, device, advice):
    result = _run(tmp_path, code)
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    at = next(i for i, line in enumerate(lines) if device in line)
    after = [line for line in lines[at + 1:] if line]  # a message ending in \r\n leaves the device's blank line
    assert after[0].startswith("[maixemu] ") and advice in after[0], result.stderr


@pytest.mark.parametrize("code, advice", [(NO_AI, "pix_to_ai"), (WRONG_SIZE, "img.resize"),
                                          (FLASH_NOTHING, "nothing is mapped")])
def test_quiet_keeps_the_device_message_only(tmp_path, code, advice):
    result = _run(tmp_path, code, quiet=True)
    assert result.exit_code == 1
    assert "[MAIXPY]kpu:" in result.stderr and "[maixemu]" not in result.stderr, result.stderr
    assert advice not in result.stderr


def test_the_wrong_size_device_line_comes_first(tmp_path):
    result = _run(tmp_path, WRONG_SIZE)
    assert result.stdout == "[MAIXPY]kpu: img w=160,h=120, but model w=320,h=240\r\n"


def test_stale_ai_memory_gets_one_hint_per_line_by_default_and_none_when_quiet(tmp_path):
    result = _run(tmp_path, STALE)
    assert result.exit_code == 0, result.stderr
    hints = [line for line in result.stderr.splitlines() if "older than its pixels" in line]
    assert len(hints) == 1 and hints[0].startswith("[maixemu] main.py:8: kpu.forward"), result.stderr
    quiet = _run(tmp_path, STALE, quiet=True)
    assert quiet.exit_code == 0 and "older than its pixels" not in quiet.stderr


def test_set_outputs_mistakes_say_what_the_model_has(tmp_path):
    model = shared_path("models", "v4", "iris.kmodel")
    code = """
    import KPU as kpu
    task = kpu.load(0x400000)
    print(kpu.set_outputs(task, 0, 1, 1, 99))
    print(kpu.set_outputs(task, 5, 1, 1, 3))
    """
    result = MaixPyRunner(tmp_path).run(code=textwrap.dedent(code), flash={0x400000: model})
    assert result.exit_code == 0, result.stderr
    assert result.lines[0].startswith("[MAIXPY]kpu: set_outputs arg value error: w,c,ch size not match")
    assert "[maixemu] output 0 has 3 values; w*h*ch = 1*1*99 = 99" in result.stderr
    assert "[maixemu] the model has 1 output(s), numbered from 0" in result.stderr


def test_set_outputs_on_a_v3_model_says_to_leave_it_out(tmp_path):
    code = """
    import KPU as kpu
    task = kpu.load(0xF00000)
    print(kpu.set_outputs(task, 0, 1, 1, 3))
    """
    result = _run(tmp_path, code)
    assert result.lines[-1] == "False"
    assert "[maixemu] set_outputs is for V4 models; this is a V3 model" in result.stderr


def test_the_cli_quiet_option_silences_the_hint(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(NO_AI))
    base = [sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "--camera", "synthetic"]
    loud = subprocess.run(base, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    quiet = subprocess.run(base + ["--quiet"], capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert "[maixemu] kpu.forward got an image without AI memory" in loud.stderr
    assert "check img format err!" in quiet.stderr and "[maixemu]" not in quiet.stderr


def test_a_pc_path_gets_one_hint_saying_where_files_live(tmp_path):
    code = """
    for path in ("/home/me/data.txt", "/home/me/other.txt", "/sd/missing.txt"):
        try:
            open(path)
        except OSError as e:
            print(e.args[0])
    """
    result = _run(tmp_path, code)
    assert result.lines == ["2", "2", "2"]  # the device's ENOENT, unchanged
    hints = [line for line in result.stderr.splitlines() if "is not on the device" in line]
    assert len(hints) == 1 and hints[0].startswith("[maixemu] '/home/me/data.txt' is not on the device: MaixPy sees "
                                                   "only /sd and /flash"), result.stderr
    assert "missing.txt" not in result.stderr  # a missing file on /sd is the script's own business
    assert "is not on the device" not in _run(tmp_path, code, quiet=True).stderr


def test_sensor_and_lcd_pitfalls_name_the_missing_call(tmp_path):
    result = _run(tmp_path, "import sensor\nsensor.snapshot()\n")
    assert "TypeError: not found sensor\n[maixemu] call sensor.reset() first" in result.stderr
    # the stock boot of a board with a panel leaves the LCD initialised; UnitV has none
    result = _run(tmp_path, "import lcd\nlcd.draw_string(0, 0, 'hi')\n", board="unitv")
    assert "ValueError: not init\n[maixemu] call lcd.init() first" in result.stderr
