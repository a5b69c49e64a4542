"""pytest stays in charge of a session using the plugin, and one test's board never reaches the next
(issue 11).

Each case runs a small test file in a pytest subprocess, because what is checked is the pytest
session itself: what the *next* test sees, whether the session stops on a signal, whether a
``timeout=`` holds. The subprocess timeouts are hang guards, not time assertions.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

HANG_GUARD_S = 240


def _write_tests(folder: Path, body: str) -> Path:
    path = folder / "test_probe.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def _pytest(folder: Path, *extra: str) -> list[str]:
    # Its own basetemp: pytest keeps only the last three numbered temp folders, and the inner
    # sessions would otherwise rotate away the outer test's own tmp_path.
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-s", "--basetemp", str(folder / "inner"),
            str(folder / "test_probe.py"), *extra]


def _run_pytest(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(_pytest(folder), cwd=folder, capture_output=True, text=True, timeout=HANG_GUARD_S,
                          stdin=subprocess.DEVNULL)


THREAD_LEAK_PROBE = '''
    import numpy as np

    def test_a_starts_a_thread(maixpy):
        code = """
    import sensor, time, _thread
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)
    def loop():
        n = 0
        while True:
            try:                  # a robust camera thread: it keeps going whatever fails
                sensor.snapshot()
                n += 1
                print("thread of test a", n)
            except Exception:
                pass
            time.sleep_ms(5)
    _thread.start_new_thread(loop, ())
    time.sleep_ms(100)
    """
        result = maixpy.run(code=code, timeout=60)
        assert result.exit_code == 0, result.stderr

    def test_b_takes_one_frame(maixpy):
        code = """
    import sensor, time
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)
    img = sensor.snapshot()
    time.sleep_ms(300)
    print("b done")
    """
        frame = np.zeros((240, 320, 3), np.uint8)
        result = maixpy.run(code=code, camera=[frame, frame], frames=5, timeout=60)
        assert result.exit_code == 0, result.stderr
        assert result.lines == ["b done"], result.stdout
        assert result.snapshots == 1
'''


def test_a_thread_started_by_one_test_never_reaches_the_next(tmp_path):
    done = _run_pytest(_write_tests(tmp_path, THREAD_LEAK_PROBE).parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    # After test a, nothing of its thread appears any more (test b's output comes after "b done").
    tail = done.stdout.split("b done", 1)[-1]
    assert "thread of test a" not in tail


SIGNAL_PROBE = '''
    from pathlib import Path

    HERE = Path(__file__).parent

    def test_1_runs_a_long_script(maixpy):
        (HERE / "started").write_text(str(maixpy.workdir / "run1" / "sd" / "looping"))
        code = "import time\\nopen('/sd/looping', 'w').close()\\nwhile True:\\n    time.sleep_ms(20)\\n"
        result = maixpy.run(code=code, timeout=600)
        (HERE / "test1-returned").write_text(str(result.exit_code))

    def test_2_must_not_run(maixpy):
        (HERE / "test2-ran").write_text("yes")
'''


def _interrupt_session(tmp_path: Path, signum: int) -> tuple[subprocess.CompletedProcess, Path]:
    folder = _write_tests(tmp_path, SIGNAL_PROBE).parent
    proc = subprocess.Popen(_pytest(folder), cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + HANG_GUARD_S
        started = folder / "started"
        while not (started.exists() and started.read_text() and Path(started.read_text()).exists()):
            if proc.poll() is not None:
                pytest.fail(f"the session ended before the script's loop: {proc.communicate()}")
            if time.monotonic() > deadline:  # a hang guard, not a time measurement
                pytest.fail("the first test's script never started its loop")
            time.sleep(0.05)
        time.sleep(0.5)  # inside the script's loop
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=HANG_GUARD_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), folder


def test_sigterm_stops_the_pytest_session_as_without_the_plugin(tmp_path):
    done, folder = _interrupt_session(tmp_path, signal.SIGTERM)
    assert done.returncode == -signal.SIGTERM, (done.returncode, done.stdout, done.stderr)
    assert not (folder / "test2-ran").exists()
    assert not (folder / "test1-returned").exists()  # the test did not go on as if the script had ended


def test_ctrl_c_stops_the_pytest_session_as_without_the_plugin(tmp_path):
    done, folder = _interrupt_session(tmp_path, signal.SIGINT)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)  # pytest's "interrupted"
    assert "KeyboardInterrupt" in done.stdout + done.stderr
    assert not (folder / "test2-ran").exists()
    assert not (folder / "test1-returned").exists()


BARE_EXCEPT_PROBE = '''
    def test_timeout_holds(maixpy):
        code = """
    import time
    while True:
        try:
            time.sleep_ms(10)
        except:
            pass
    """
        result = maixpy.run(code=code, timeout=3)
        print("RESULT", result.exit_code, result.notices)
        assert any("--timeout of 3 s reached" in notice for notice in result.notices)

    def test_a_tighter_loop_too(maixpy):
        code = """
    n = 0
    while True:
        try:
            while True:
                n += 1
        except:
            pass
    """
        result = maixpy.run(code=code, timeout=3)
        assert any("--timeout of 3 s reached" in notice for notice in result.notices)
'''


def test_a_timeout_holds_against_a_bare_except(tmp_path):
    # The subprocess timeout is only a hang guard: the runs end a few seconds after their 3 s.
    done = _run_pytest(_write_tests(tmp_path, BARE_EXCEPT_PROBE).parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


def test_the_plugin_leaves_the_signal_handlers_as_it_found_them(maixpy):
    before = {name: signal.getsignal(getattr(signal, name)) for name in ("SIGINT", "SIGTERM", "SIGALRM", "SIGHUP")}
    result = maixpy.run(code="print('hi')\n", timeout=30)
    assert result.check().lines == ["hi"]
    after = {name: signal.getsignal(getattr(signal, name)) for name in before}
    assert after == before


MODULE_LEAK_PROBE = '''
    import math, re, string

    NL = chr(10)
    SETS = ["math.pi = 3", "ujson.dumps = None", "image.Image = None", "sensor.snapshot = None", "ure.compile = None",
            "umath.sqrt = None", "json.loads = None"]

    def test_a_sets_module_attributes(maixpy):
        lines = ["import math, ujson, image, sensor, ure, umath, json, string, board"]
        for line in SETS:
            lines += ["try:", "    " + line, "    print('set')", "except AttributeError as e:", "    print(e)"]
        lines += ["string.digits = 'x'", "board.mine = 1", "print(string.digits, board.mine)"]
        result = maixpy.run(code=NL.join(lines) + NL, timeout=60)
        assert result.exit_code == 0, result.stderr
        print("A:", result.lines)

    def test_b_sees_every_module_as_it_was(maixpy):
        code = ("import math, ujson, image, sensor, ure, json, string, board" + NL +
                "print(math.pi, callable(ujson.dumps), isinstance(image.Image, type), callable(sensor.snapshot),"
                " callable(ure.compile), callable(json.loads), string.digits, hasattr(board, 'mine'))" + NL)
        result = maixpy.run(code=code, timeout=60)
        assert result.exit_code == 0, result.stderr
        print("B:", result.lines)

    def test_c_the_test_process_modules_are_untouched(maixpy_board):
        import json
        assert math.pi == 3.141592653589793 and callable(re.compile) and string.digits == "0123456789"
        assert callable(json.loads)
        try:
            maixpy_board.sensor.snapshot = None
        except AttributeError as e:
            print("C:", e)
        assert callable(maixpy_board.sensor.snapshot)
'''


def test_module_attributes_set_by_one_test_never_reach_the_next_or_pytest(tmp_path):
    """Issue 24: ``math.pi = 3``, ``ujson.dumps = None``, ``image.Image = None``, ``sensor.snapshot =
    None`` in one test's script carried into the next test; ``ure.compile = None`` broke pytest's own
    clean-up (an INTERNALERROR). On the board those modules are built in: the store fails."""
    done = _run_pytest(_write_tests(tmp_path, MODULE_LEAK_PROBE).parent)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 passed" in done.stdout and "INTERNALERROR" not in done.stdout + done.stderr
    said = dict(re.findall(r"([ABC]): (.*)", done.stdout))  # each test's line (after the dot of the one before)
    refused = [f"'module' object has no attribute '{name}'" for name in
               ("pi", "dumps", "Image", "snapshot", "compile", "sqrt", "loads")]
    assert said["A"] == repr(refused + ["x 1"])
    assert said["B"] == repr(["3.141592653589793 True True True True True 0123456789 False"])
    assert said["C"] == "'module' object has no attribute 'snapshot'"
