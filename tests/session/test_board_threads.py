"""Threads a script starts belong to its board (issue 11): they end with the run, the frame budget
counts their frames, nothing crashes at exit, and ``_thread`` behaves as MicroPython's
(``py/modthread.c``: a thread's uncaught exception is printed as ``Unhandled exception in thread
started by <function>`` followed by the exception; ``SystemExit`` ends a thread silently;
``start_new_thread`` returns None and starts a thread even for a non-callable, which then fails).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import cv2

THREAD_RECORDS = textwrap.dedent("""
    import sensor, lcd, time, _thread
    lcd.init()
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QVGA)
    def draw():
        n = 0
        while True:
            img = sensor.snapshot()
            img.draw_string(10, 10, "frame %d" % n)
            lcd.display(img)
            n += 1
    _thread.start_new_thread(draw, ())
    time.sleep_ms(300)
    print("main ends")
""")


def _frames_in(path: Path) -> int:
    cap = cv2.VideoCapture(str(path))
    count = 0
    while cap.isOpened() and cap.read()[0]:
        count += 1
    cap.release()
    return count


def test_a_script_ending_while_its_thread_records_exits_0_with_a_readable_video_20_times(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(THREAD_RECORDS)
    outcomes = []
    for n in range(20):
        video = tmp_path / f"out{n}.mp4"
        done = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--camera", "synthetic",
                               "--lcd", f"record:{video}"], capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)
        outcomes.append((done.returncode, _frames_in(video) if video.exists() else 0, done.stderr[-400:]))
    failed = [(n, code, frames, err) for n, (code, frames, err) in enumerate(outcomes) if code != 0 or frames == 0]
    assert not failed, failed


def test_frames_ends_a_run_whose_camera_loop_runs_in_a_thread(maixpy):
    code = """
import sensor, time, _thread
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
def camera():
    while True:
        sensor.snapshot()
_thread.start_new_thread(camera, ())
while True:
    time.sleep_ms(10)
"""
    result = maixpy.run(code=code, frames=5, timeout=120)
    assert result.exit_code == 0, result.stderr
    assert result.budget_spent
    assert result.snapshots == 6  # the sixth request ended the run
    assert any("frame budget of 5 frames reached" in notice for notice in result.notices)
    assert not any("--timeout" in notice for notice in result.notices)


def test_frames_ends_a_threaded_camera_loop_from_the_command_line(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent("""
        import sensor, time, _thread
        sensor.reset()
        sensor.set_pixformat(sensor.RGB565)
        sensor.set_framesize(sensor.QVGA)
        def camera():
            while True:
                sensor.snapshot()
        _thread.start_new_thread(camera, ())
        while True:
            time.sleep(1)
    """))
    done = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--camera", "synthetic",
                           "--lcd", "none", "--frames", "5"], capture_output=True, text=True, timeout=180,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "frame budget of 5 frames reached" in done.stderr


def test_threads_end_with_their_run_and_the_run_waits_for_them(maixpy):
    code = """
import time, _thread
def worker():
    try:
        while True:
            time.sleep_ms(5)
    finally:
        print("worker ended")
_thread.start_new_thread(worker, ())
time.sleep_ms(50)
print("main ended")
"""
    result = maixpy.run(code=code, timeout=60)
    assert result.check().lines == ["main ended", "worker ended"]


def test_an_uncaught_exception_in_a_thread_is_printed_as_micropython_prints_it(maixpy):
    code = """
import time, _thread
def boom(a, b=0):
    raise ValueError("bad %d" % (a + b))
def quiet():
    raise SystemExit
print(_thread.start_new_thread(boom, (1,), {"b": 2}))
_thread.start_new_thread(quiet, ())
_thread.start_new_thread(5, ())
time.sleep_ms(200)
print("main goes on")
"""
    result = maixpy.run(code=code, timeout=60)
    assert result.check().lines == ["None", "main goes on"]
    err = result.stderr
    assert "Unhandled exception in thread started by <function boom at 0x" in err
    assert "ValueError: bad 3" in err
    assert "Unhandled exception in thread started by 5\n" in err
    assert "TypeError: 'int' object isn't callable" in err
    assert err.count("Unhandled exception") == 2  # SystemExit ends a thread silently


def test_thread_module_is_micropythons(maixpy):
    code = """
import _thread
lock = _thread.allocate_lock()
print(lock.acquire(), lock.locked(), lock.acquire(0))
lock.release()
print(lock.locked())
try:
    lock.release()
except RuntimeError as e:
    print("RuntimeError", e.args)
with lock:
    print("inside", lock.locked())
print(type(_thread.get_ident()).__name__, _thread.stack_size(8192), _thread.stack_size())
try:
    _thread.start_new_thread(print, 5)
except TypeError as e:
    print(e)
try:
    _thread.start_new_thread(print, (), 5)
except TypeError as e:
    print(e)
print(sorted(n for n in dir(_thread) if not n.startswith("__")))
"""
    result = maixpy.run(code=code, timeout=60)
    assert result.check().lines == [
        "True True False",
        "False",
        "RuntimeError ()",
        "inside True",
        "int 0 8192",
        "object 'int' isn't a tuple or list",
        "expecting a dict for keyword args",
        "['LockType', 'allocate_lock', 'exit', 'get_ident', 'stack_size', 'start_new_thread']",
    ]
