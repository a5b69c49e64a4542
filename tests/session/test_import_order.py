"""Import order as on the device: firmware modules win over the script's files and folders; missing
names get MicroPython's ``ImportError: no module named '...'``; no maixemu path in the messages."""

from __future__ import annotations

from _shared import split_summary


SCRIPT = """
import audio, sensor
print("audio", hasattr(audio, "Audio"), "sensor", hasattr(sensor, "snapshot"))
for name in ("cpufreq", "nes", "Maix.nothing", "sensor.sub"):
    try:
        __import__(name)
    except ImportError as e:
        print(type(e).__name__, e)
import helper
print("helper", helper.VALUE)
"""


def test_firmware_modules_win_and_missing_names_use_micropythons_words(maixpy):
    files = {"/sd/audio/__init__.py": "raise SystemExit('the data folder was imported')\n",
             "/sd/sensor.py": "raise SystemExit('the local sensor.py was imported')\n",
             "/sd/helper.py": "VALUE = 3\n"}
    result = maixpy.run(code=SCRIPT, files=files)
    assert result.ok, result.stderr
    assert result.lines == [
        "audio True sensor True",
        "ImportError no module named 'cpufreq'",
        "ImportError no module named 'nes' ('nes' is a MaixPy firmware module maixemu does not emulate yet)",
        "ImportError no module named 'Maix.nothing'",
        "ImportError no module named 'sensor.sub'",
        "helper 3",
    ]
    assert "maixemu/" not in result.stdout and "maixemu.firmware" not in result.stdout


def test_an_uncaught_missing_module_is_one_line_without_maixemu_paths(maixpy):
    result = maixpy.run(code="import Maix.nothing\n")
    assert result.exit_code == 1
    assert split_summary(result.stderr)[0].splitlines()[-1] == "ImportError: no module named 'Maix.nothing'"
    assert "maixemu/" not in result.stderr


def test_lvgl_says_it_is_out_of_scope(maixpy):
    result = maixpy.run(code="try:\n    import lvgl as lv\nexcept ImportError as e:\n    print(e)\nimport lvgl_helper\n")
    assert result.exit_code == 1
    assert result.lines == ["no module named 'lvgl' ('lvgl' is the LVGL GUI, built into some MaixPy firmwares only "
                            "(the *_with_lvgl builds); it is out of maixemu's scope)"]
    assert "no module named 'lvgl_helper' ('lvgl_helper' is the LVGL GUI" in result.stderr
