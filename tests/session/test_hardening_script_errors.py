"""Hardening: how ``python -m maixemu run`` ends for each way a script can fail or stop.

Exact stderr and exit codes: the script's own frames only, as MicroPython prints them (CPython's
format and maixemu's frames with ``--debug``), one ``[maixemu]`` line for clean ends, CPython's own
text for ``sys.exit("message")``.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _shared import split_summary, with_growing_timeout


def write(tmp_path: Path, body: str, name: str = "main.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body).lstrip("\n"))
    return path


def run(script: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", *args],
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def test_exception_shows_only_the_scripts_frames(tmp_path):
    script = write(tmp_path, """
        import sensor
        def helper():
            raise ValueError("boom")
        helper()
    """)
    proc = run(script)
    assert proc.returncode == 1
    rest, ended = split_summary(proc.stderr)
    assert ended == "the script failed with ValueError, exit 1"
    assert rest == textwrap.dedent("""\
        Traceback (most recent call last):
          File "/sd/main.py", line 4, in <module>
          File "/sd/main.py", line 3, in helper
        ValueError: boom
        """)  # as MicroPython prints it: device paths, no source lines


def test_exception_in_a_local_module_shows_its_line(tmp_path):
    write(tmp_path, """
        x = 1
        raise RuntimeError("in helper")
    """, name="helper.py")
    script = write(tmp_path, "import helper\n")
    proc = run(script)
    assert proc.returncode == 1
    assert split_summary(proc.stderr)[0] == textwrap.dedent("""\
        Traceback (most recent call last):
          File "/sd/main.py", line 1, in <module>
          File "/sd/helper.py", line 2, in <module>
        RuntimeError: in helper
        """)


def test_debug_shows_maixemu_frames(tmp_path):
    script = write(tmp_path, "import helper_missing\n")
    proc = run(script, "--debug")
    assert proc.returncode == 1
    assert "maixemu/session/run.py" in proc.stderr


def test_keyboard_interrupt_exits_130_with_one_line(tmp_path):
    proc = run(write(tmp_path, "raise KeyboardInterrupt\n"))
    assert proc.returncode == 130
    assert split_summary(proc.stderr) == ("", "interrupted (Ctrl-C), exit 130")


@pytest.mark.parametrize("call,code,printed,ended", [
    ("sys.exit(3)", 3, "", "the script called sys.exit(3); exit code 3"),
    ("raise SystemExit(0)", 0, "", "the script called sys.exit(0); exit code 0"),
    ("sys.exit()", 0, "", "the script called sys.exit(); exit code 0"),
    ('sys.exit("camera cable loose")', 1, "camera cable loose\n", "the script exited, exit 1"),
    ("raise SystemExit(2.5)", 1, "2.5\n", "the script exited, exit 1"),
])
def test_sys_exit(tmp_path, call, code, printed, ended):
    proc = run(write(tmp_path, f"import sys\nprint('before')\n{call}\nprint('after')\n"))
    assert proc.returncode == code
    assert proc.stdout == "before\n"
    assert split_summary(proc.stderr) == (printed, ended)


def test_timeout_ends_a_busy_loop(tmp_path):
    proc = run(write(tmp_path, "while True:\n    pass\n"), "--timeout", "0.5")
    assert proc.returncode == 0
    assert split_summary(proc.stderr) == ("", "--timeout of 0.5 s reached; run ended")


def test_timeout_ends_a_long_sleep(tmp_path):
    proc = run(write(tmp_path, "import time\ntime.sleep(30)\nprint('woke up')\n"), "--timeout", "0.5")
    assert proc.returncode == 0
    assert proc.stdout == ""  # the sleep was cut short: the script never woke up
    assert split_summary(proc.stderr) == ("", "--timeout of 0.5 s reached; run ended")


def test_timeout_swallowed_by_the_script_still_ends_the_run(tmp_path):
    script = write(tmp_path, """
        import time
        print("in the loop", flush=True)
        while True:
            try:
                time.sleep(30)
            except:
                print("caught", flush=True)
    """)
    # --timeout counts from before set-up: a loaded machine may need a longer one to reach the loop.
    proc = with_growing_timeout(lambda timeout: run(script, "--timeout", f"{timeout:g}"),
                                lambda proc: proc.stdout.startswith("in the loop"))
    timeout = re.search(r"--timeout of (\S+) s", proc.stderr).group(1)
    assert proc.returncode == 0
    assert proc.stdout == "in the loop\ncaught\n"
    assert proc.stderr == (f"[maixemu] --timeout of {timeout} s reached and the script caught the end request; "
                           "stopping it\n")


def test_sigterm_ends_the_run_cleanly(tmp_path):
    script = write(tmp_path, "import time\nprint('ready', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert split_summary(err) == ("", "terminated (SIGTERM); run ended, exit 143")


def test_syntax_error_points_at_the_script_line(tmp_path):
    script = write(tmp_path, """
        import lcd
        for i in range(3)
            print(i)
    """)
    proc = run(script)
    assert proc.returncode == 1
    assert proc.stderr == textwrap.dedent("""\
        Traceback (most recent call last):
          File "/sd/main.py", line 2
        SyntaxError: invalid syntax
        """)  # MicroPython's parser: one frame without a block name, "invalid syntax"


def test_missing_module_is_named(tmp_path):
    proc = run(write(tmp_path, "import lcd\nimport servo_driver\n"))
    assert proc.returncode == 1
    assert split_summary(proc.stderr)[0].splitlines()[-1] == "ImportError: no module named 'servo_driver'"  # MicroPython's words
    assert "maixemu/" not in proc.stderr


def test_missing_maixpy_module_says_it_is_not_emulated(tmp_path):
    script = write(tmp_path, "import speech_recognizer\n")
    proc = run(script)
    assert proc.returncode == 1
    assert split_summary(proc.stderr)[0] == textwrap.dedent("""\
        Traceback (most recent call last):
          File "/sd/main.py", line 1, in <module>
        ImportError: no module named 'speech_recognizer' ('speech_recognizer' is a MaixPy firmware module maixemu does not emulate yet)
        """)


def test_machine_reset_is_a_clean_end(tmp_path):
    proc = run(write(tmp_path, "import machine\nmachine.reset()\n"))
    assert proc.returncode == 0
    assert split_summary(proc.stderr) == ("[maixemu] machine.reset() called: the board would reboot; ending the run\n",
                                          "machine.reset() rebooted the board; run ended")


def test_freq_change_reboot_is_a_clean_end(tmp_path):
    proc = run(write(tmp_path, "from Maix import freq\nfreq.set(cpu=600)\nprint('after')\n"))
    assert proc.returncode == 0
    assert proc.stdout == "\nreboot now\n"
    assert split_summary(proc.stderr) == ("", "Maix.freq.set() rebooted the board; run ended")


def test_unreadable_script_is_one_line_exit_2(tmp_path):
    script = write(tmp_path, "print(1)\n")
    script.chmod(0)
    try:
        try:
            script.read_text()
            pytest.skip("running as a user who reads any file (root)")
        except PermissionError:
            pass
        proc = run(script)
    finally:
        script.chmod(0o644)
    assert proc.returncode == 2
    assert proc.stderr == f"maixemu: cannot read script {script}: Permission denied\n"


@pytest.mark.parametrize("value", ["0.0001", "1e-9"])
def test_a_timeout_shorter_than_the_set_up_ends_with_the_closing_line(tmp_path, value):
    """Issue 24: an alarm that fired while the handlers were being installed escaped as an internal
    ``RunEnded`` traceback (exit 1); it is the run's end during set-up like any other."""
    proc = run(write(tmp_path, "import time\nwhile True:\n    time.sleep(0.01)\n"), "--timeout", value)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert split_summary(proc.stderr) == ("", f"--timeout of {float(value):g} s reached; run ended")


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_timeout_must_be_positive(tmp_path, value):
    proc = run(write(tmp_path, "print('never')\n"), "--timeout", value)
    assert proc.returncode == 2
    assert proc.stderr == "maixemu: --timeout must be a number of seconds > 0\n"
