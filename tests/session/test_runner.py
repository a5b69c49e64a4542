"""``maixemu run``: module names, storage mapping, the frame budget and clean ends, as a user meets them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from maixemu.runner import RunSpec, run_script


def write_script(tmp_path: Path, body: str, name: str = "main.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def run_cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "maixemu", *args],
        capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
    )


CAMERA_LOOP = """
import sensor, lcd
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
lcd.init()
n = 0
while True:
    {guard}
        img = sensor.snapshot()
        n += 1
        print("frame", n, flush=True)
        lcd.display(img)
    {handler}
"""


@pytest.mark.parametrize(
    "guard,handler",
    [
        ("if True:", ""),
        ("try:", "except Exception:\n        pass"),
        ("try:", "except:\n        pass"),  # a bare except swallows even BaseException
        ("try:", "except BaseException:\n        pass"),
    ],
    ids=["plain", "except-Exception", "bare-except", "except-BaseException"],
)
def test_frame_budget_ends_the_run_even_when_the_script_catches_everything(tmp_path, guard, handler):
    script = write_script(tmp_path, CAMERA_LOOP.format(guard=guard, handler=handler))
    lcd_dir = tmp_path / "lcd"
    proc = run_cli("run", str(script), "--camera", "synthetic", "--lcd", f"record:{lcd_dir}", "--frames", "7")
    assert proc.returncode == 0, proc.stderr
    frames = [line for line in proc.stdout.splitlines() if line.startswith("frame ")]
    assert frames[-1] == "frame 7"
    # The recording is finalised: lcd.init() pushes one frame, then one per display.
    assert len(list(lcd_dir.glob("*.png"))) == 8


def test_script_exception_shows_the_scripts_own_lines_and_exits_1(tmp_path):
    script = write_script(tmp_path, """
        import image
        def helper():
            raise ValueError("boom")
        helper()
    """)
    proc = run_cli("run", str(script), "--lcd", "none")
    assert proc.returncode == 1
    assert 'File "/sd/main.py", line 5, in <module>' in proc.stderr  # the device's path, MicroPython's format
    assert 'File "/sd/main.py", line 4, in helper' in proc.stderr
    assert "ValueError: boom" in proc.stderr
    assert "maixemu" not in proc.stderr.replace("[maixemu]", "")


def test_firmware_errors_point_at_the_script_line(tmp_path):
    script = write_script(tmp_path, """
        import sensor
        img = sensor.snapshot()
    """)
    proc = run_cli("run", str(script), "--lcd", "none")
    assert proc.returncode == 1
    assert 'File "/sd/main.py", line 3' in proc.stderr
    assert "TypeError: not found sensor" in proc.stderr  # the device: no camera probed yet
    assert "/maixemu/" not in proc.stderr


def test_debug_shows_maixemu_frames(tmp_path):
    script = write_script(tmp_path, "import sensor\nsensor.snapshot()\n")
    proc = run_cli("run", str(script), "--lcd", "none", "--debug")
    assert proc.returncode == 1
    assert "maixemu/firmware/sensor.py" in proc.stderr


def test_timeout_ends_a_loop_without_frames(tmp_path):
    script = write_script(tmp_path, "while True:\n    pass\n")
    proc = run_cli("run", str(script), "--lcd", "none", "--timeout", "1", timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "--timeout of 1 s reached" in proc.stderr


def test_keyboard_interrupt_is_a_clean_exit_130(tmp_path):
    script = write_script(tmp_path, "raise KeyboardInterrupt\n")
    proc = run_cli("run", str(script), "--lcd", "none")
    assert proc.returncode == 130
    assert "Traceback" not in proc.stderr


def test_machine_reset_ends_cleanly(tmp_path):
    script = write_script(tmp_path, "import machine\nprint('before')\nmachine.reset()\nprint('after')\n")
    proc = run_cli("run", str(script), "--lcd", "none")
    assert proc.returncode == 0
    assert proc.stdout.splitlines() == ["before"]


def test_script_args_after_double_dash(tmp_path):
    script = write_script(tmp_path, "import sys\nprint(sys.argv[1:])\n")
    proc = run_cli("run", str(script), "--lcd", "none", "--", "a", "--frames")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['a', '--frames']"


def test_micropython_names_do_not_leak_into_the_process(tmp_path, capsys):
    script = write_script(tmp_path, """
        import time, os, gc, sys
        print(time.ticks_diff(time.ticks_ms(), 0) >= 0, os.listdir("/"), gc.mem_free() > 0, hasattr(sys, "print_exception"))
    """)
    assert run_script(RunSpec(lcd="none", quiet=True), script) == 0
    assert capsys.readouterr().out.strip() == "True ['flash', 'sd'] True True"
    import gc
    import os
    import time

    assert not hasattr(time, "ticks_ms") and not hasattr(gc, "mem_free") and os.listdir is not None
    assert sys.modules["time"] is time


def test_sd_and_flash_map_to_folders_and_cannot_escape(tmp_path, capsys):
    sd = tmp_path / "card"
    flash = tmp_path / "flash"
    sd.mkdir()
    flash.mkdir()
    (flash / "labels.txt").write_text("cat\ndog\n")
    (tmp_path / "secret.txt").write_text("no")
    script = write_script(tmp_path, """
        import os
        with open("/sd/out.txt", "w") as f:
            f.write("written")
        print(open("/flash/labels.txt").read().split())
        print(os.getcwd())
        for bad in ("/sd/../secret.txt", "../secret.txt", "/etc/passwd"):
            try:
                open(bad)
                print("ESCAPED", bad)
            except OSError as e:
                print("refused", e.args[0])
    """)
    code = run_script(RunSpec(lcd="none", sd_dir=sd, flash_dir=flash, quiet=True), script)
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    assert (sd / "out.txt").read_text() == "written"
    assert lines[0] == "['cat', 'dog']"
    assert lines[1] == "/sd"
    assert lines[2:] == ["refused 2"] * 3


def test_script_local_modules_import_with_maixpy_names(tmp_path, capsys):
    write_script(tmp_path, "import utime\ndef ms():\n    return utime.ticks_ms() >= 0\n", name="mylib.py")
    script = write_script(tmp_path, "import mylib\nprint(mylib.ms())\n")
    assert run_script(RunSpec(lcd="none", quiet=True), script) == 0
    assert capsys.readouterr().out.strip() == "True"


def test_default_sample_runs_on_the_bundled_model(tmp_path):
    lcd_dir = tmp_path / "lcd"
    proc = run_cli("run", "--frames", "5", "--lcd", f"record:{lcd_dir}")
    assert proc.returncode == 0, proc.stderr
    assert "running the bundled sample" in proc.stderr
    assert len(list(lcd_dir.glob("*.png"))) >= 5


def test_missing_script_and_bad_flash_option():
    proc = run_cli("run", "no_such_script.py", "--lcd", "none")
    assert proc.returncode == 2 and "no such script" in proc.stderr
    proc = run_cli("run", "--flash", "0x300000", "--lcd", "none")
    assert proc.returncode == 2 and "ADDRESS=FILE" in proc.stderr


def test_python_dash_m_and_version():
    proc = run_cli("--version")
    assert proc.returncode == 0 and proc.stdout.startswith("maixemu ")
