"""``maixemu run --ide``: a run wired to its page (the page played by a WebSocket client here).

Terminal output and input, Stop as the IDE's (``Exception: IDE interrupt`` in the script, MicroPython
traceback on the page), Run again, board buttons reaching GPIO IRQs on the script's thread, LEDs,
the numbers of the board pane, the frame-buffer semantics through HTTP, recordings; and the run
with no page at all behaving as without ``--ide``; the process ending with the run (the page
closed, killed or frozen after the script ended; a ``--frames``/``--timeout`` budget spent with a
page still open). Every wait is for a condition, bounded.
"""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

import cv2
import numpy as np
import pytest

pytest.importorskip("aiohttp", reason="the IDE server needs the 'ide' extra (aiohttp)")

from ide_harness import IdeProcess, PageClient, wait_until  # noqa: E402

from maixemu.runner import RunSpec  # noqa: E402
from maixemu.session.ide import board_controls, rerun_spec  # noqa: E402


def script(tmp_path: Path, body: str, name: str = "main.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


@pytest.fixture()
def run(tmp_path):
    started: list[tuple[IdeProcess, list[PageClient]]] = []

    def start(body: str, *args: str, page: bool = True, terminal_open: bool = False):
        ide = IdeProcess(script(tmp_path, body), "--lcd", "none", *args, cwd=tmp_path, terminal_open=terminal_open)
        _ = ide.url
        pages: list[PageClient] = [PageClient(ide)] if page else []
        started.append((ide, pages))
        return (ide, pages[0]) if page else ide

    yield start
    for ide, pages in started:
        for page in pages:
            try:
                page.close()
            except Exception:
                pass
        ide.close()


def test_without_a_page_the_run_ends_as_usual(run):
    ide = run("""
        print("no page needed")
    """, page=False)
    assert ide.wait() == 0
    assert "no page needed" in "".join(ide.stdout)
    assert any("IDE page: http://127.0.0.1:" in line for line in ide.stderr)


def test_terminal_output_input_and_run_again(run):
    ide, page = run("""
        print("ready")
        name = input("name? ")
        print("hello", name)
    """)
    page.wait_terminal("name? ")
    page.send(type="input", text="maix")
    page.wait_terminal("hello maix")
    page.wait_state("status", lambda s: s["state"] == "ended" and s["exit_code"] == 0)
    assert ide.proc.poll() is None  # a page is open: the board waits for the next run, as in the IDE
    page.send(type="run")
    wait_until(lambda: page.terminal().count("name? ") == 2, what="the second run's prompt")
    page.send(type="input", text="again")
    page.wait_terminal("hello again")
    page.close()
    assert ide.wait() == 0  # the page closed: maixemu ends
    assert "".join(ide.stdout).count("ready") == 2


def test_stop_raises_the_ide_interrupt_and_shows_the_device_traceback(run):
    ide, page = run("""
        import time
        print("looping")
        while True:
            time.sleep_ms(5)
    """)
    page.wait_terminal("looping")
    page.send(type="stop")
    status = page.wait_state("status", lambda s: s["state"] == "ended")
    assert status["exit_code"] == 130
    error = status["error"]
    assert error["summary"] == "Exception: IDE interrupt" and error["interrupt"] and error["line"] == 5
    text = page.terminal()
    assert 'main.py", line 5, in <module>\nException: IDE interrupt' in text
    assert "Traceback (most recent call last):\n  File \"/" in text  # device paths, no source lines: MicroPython's format


def test_stop_reaches_a_busy_loop_without_firmware_calls(run):
    ide, page = run("""
        print("spinning")
        n = 0
        while True:
            n += 1
    """)
    page.wait_terminal("spinning")
    page.send(type="stop")
    status = page.wait_state("status", lambda s: s["state"] == "ended")
    assert status["error"]["summary"] == "Exception: IDE interrupt"


def test_a_script_can_catch_the_first_stop_as_on_the_board_and_the_second_ends_it(run):
    ide, page = run("""
        import time
        print("start")
        while True:
            try:
                time.sleep_ms(5)
            except Exception as e:
                print("caught", e)
    """)
    page.wait_terminal("start")
    page.send(type="stop")
    page.wait_terminal("caught IDE interrupt")
    assert page.latest("status")["state"] == "running"
    page.send(type="stop")
    status = page.wait_state("status", lambda s: s["state"] == "ended")
    assert status["exit_code"] == 130


def test_script_error_shows_microPython_traceback_on_the_page_and_here(run):
    ide, page = run("""
        def helper():
            raise ValueError("boom")
        helper()
    """)
    status = page.wait_state("status", lambda s: s["state"] == "ended")
    assert status["exit_code"] == 1
    assert status["error"]["summary"] == "ValueError: boom" and status["error"]["line"] == 3
    assert 'main.py", line 3, in helper\nValueError: boom' in page.terminal()
    page.close()
    assert ide.wait() == 1
    here = "".join(ide.stderr)  # the PC terminal prints it as MicroPython does too (--debug: Python's)
    assert '  File "/sd/main.py", line 3, in helper\nValueError: boom\n' in here and "raise ValueError" not in here


BUTTONS = """
    import time, _thread
    from Maix import GPIO
    from fpioa_manager import fm
    from board import board_info
    MAIN = _thread.get_ident()
    fm.register(board_info.BOOT_KEY, fm.fpioa.GPIOHS0)
    key = GPIO(GPIO.GPIOHS0, GPIO.IN, GPIO.PULL_UP)
    fm.register(board_info.LED_R, fm.fpioa.GPIO0)
    led = GPIO(GPIO.GPIO0, GPIO.OUT)
    count = 0
    def on_key(pin):
        global count
        count += 1
        led.value(pin.value())
        print("IRQ", count, "level", pin.value(), "on the script's thread:", _thread.get_ident() == MAIN)
    key.irq(on_key, GPIO.IRQ_BOTH)
    print("waiting for BOOT")
    while True:
        {loop}
"""


@pytest.mark.parametrize("loop, on_script_thread", [("time.sleep_ms(5)", True), ("pass", False)],
                         ids=["sleeping-loop", "busy-loop"])
def test_board_buttons_reach_the_gpio_irq(run, loop, on_script_thread):
    ide, page = run(BUTTONS.format(loop=loop))
    page.wait_terminal("waiting for BOOT")
    board = page.latest("board")
    assert board["buttons"][0]["name"] == "BOOT_KEY" and board["buttons"][0]["pin"] == 16
    page.send(type="button", name="BOOT_KEY", pressed=True)
    page.wait_terminal("IRQ 1 level 0")
    page.wait_state("leds", lambda leds: leds.get("LED_R") == 0)
    page.send(type="button", name="BOOT_KEY", pressed=False)
    text = page.wait_terminal("IRQ 2 level 1")
    if on_script_thread:  # at the script's next soft-IRQ point, as MicroPython schedules IRQs
        assert "IRQ 1 level 0 on the script's thread: True" in text
    page.wait_state("leds", lambda leds: leds.get("LED_R") == 1)
    page.send(type="button", name="NOT_A_BUTTON", pressed=True)
    wait_until(lambda: any(m["type"] == "error" for m in page.messages), what="the refusal")


def test_frame_buffer_is_the_previous_snapshot_with_its_drawings_not_the_lcd(run, tmp_path):
    ide, page = run("""
        import sensor, lcd, image, time
        lcd.init()
        sensor.reset()
        sensor.set_pixformat(sensor.RGB565)
        sensor.set_framesize(sensor.QVGA)
        n = 0
        clock = time.clock()
        while True:
            clock.tick()
            img = sensor.snapshot()
            img.draw_rectangle(0, 0, 40, 30, color=(255, 0, 0), fill=True)
            lcd.display(image.Image(size=(320, 240)))  # the LCD shows black, the IDE the camera picture
            n += 1
            if n == 3:
                print("three frames")
            time.sleep_ms(2)
            clock.fps()
    """, "--camera", "synthetic")
    page.wait_terminal("three frames")
    fb = cv2.imdecode(np.frombuffer(ide.get("/frame/fb.png"), np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    lcd = cv2.imdecode(np.frombuffer(ide.get("/frame/lcd.png"), np.uint8), cv2.IMREAD_COLOR)[..., ::-1]
    assert fb.shape == (240, 320, 3)
    assert (fb[:30, :40] == (255, 0, 0)).all()  # the drawing made after the snapshot is in the IDE's picture
    assert fb[100:, 40:].std() > 20  # ... on the camera's picture
    assert (lcd == 0).all()
    stats = page.wait_state("stats", lambda s: s.get("pc_fps") and s.get("script_fps") is not None)
    assert stats["frames"] >= 2


def test_kpu_estimate_per_frame_is_the_models_device_time(run):
    from maixemu.kmodel import load_kmodel
    from maixemu.kmodel.estimate import estimate
    from maixemu.runner import DEMO_MODEL

    expected = round(estimate(load_kmodel(DEMO_MODEL)).total_ms * 2, 2)
    ide, page = run("""
        import sensor, KPU as kpu
        sensor.reset()
        sensor.set_pixformat(sensor.RGB565)
        sensor.set_framesize(sensor.QVGA)
        task = kpu.load(0xF00000)
        while True:
            img = sensor.snapshot()
            kpu.forward(task, img)
            kpu.forward(task, img)
    """, "--camera", "synthetic")
    stats = page.wait_state("stats", lambda s: s.get("kpu_calls"))
    assert stats["kpu_calls"] == ["kpu.forward x2"]
    assert stats["kpu_ms"] == pytest.approx(expected, abs=0.011)


def test_record_button_writes_a_new_video_and_serves_it(run, tmp_path):
    ide, page = run("""
        import sensor
        sensor.reset()
        sensor.set_pixformat(sensor.RGB565)
        sensor.set_framesize(sensor.QQVGA)
        while True:
            sensor.snapshot()
    """, "--camera", "synthetic")
    page.send(type="record", on=True)
    page.wait_state("recording", lambda r: r["active"])
    page.wait_state("stats", lambda s: s.get("frames", 0) > 40)
    page.send(type="record", on=False)
    recording = page.wait_state("recording", lambda r: not r["active"])
    path = Path(recording["file"])
    assert path.parent == tmp_path and path.name.startswith("maixemu-ide-") and recording["frames"] > 0
    video = cv2.VideoCapture(str(path))
    ok, frame = video.read()
    video.release()
    assert ok and frame.shape[:2] == (120, 160)
    assert ide.get(f"/recording/{recording['index']}") == path.read_bytes()


def test_port_in_use_is_exit_2(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        import subprocess
        import sys

        proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script(tmp_path, "print(1)")),
                               "--ide", str(port), "--lcd", "none"], capture_output=True, text=True, timeout=120,
                              stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "--ide 0" in proc.stderr and "1\n" not in proc.stdout


def test_second_runs_record_to_files_of_their_own(tmp_path):
    options = RunSpec(lcd="record:out/lcd.mp4", show_ai="record:ai", kpu_log=tmp_path / "calls.jsonl")
    second = rerun_spec(options, 2)
    assert second.lcd == "record:out/lcd-run2.mp4"
    assert second.show_ai == "record:ai-run2"
    assert second.kpu_log == tmp_path / "calls-run2.jsonl"
    assert rerun_spec(RunSpec(lcd="window"), 3).lcd == "window"


def test_board_pane_buttons_and_leds_come_from_the_profile():
    from maixemu.firmware import board

    try:
        board.use_profile("m5stickv")
        controls = board_controls()
        assert [b["name"] for b in controls["buttons"]] == ["BUTTON_A", "BUTTON_B"]
        assert {led["name"] for led in controls["leds"]} == {"LED_W", "LED_R", "LED_G", "LED_B"}
        board.use_profile("default")
        names = {b["label"]: b["pin"] for b in board_controls()["buttons"]}
        assert names["BOOT_KEY / NEXT"] == 16  # two names of one pin share one button
    finally:
        board.use_profile("default")


def test_sigterm_while_waiting_for_run_ends_with_143_and_a_finished_recording(run, tmp_path):
    ide, page = run("""
        import sensor
        print("waiting for the page")
        input()  # (the page is connected and recording before the frames come: no race with its start)
        sensor.reset()
        sensor.set_pixformat(sensor.RGB565)
        sensor.set_framesize(sensor.QQVGA)
        for _ in range(60):
            sensor.snapshot()
        print("done")
    """, "--camera", "synthetic")
    page.wait_terminal("waiting for the page")
    page.send(type="record", on=True)
    recording = page.wait_state("recording", lambda r: r["active"])
    page.send(type="input", text="go")
    page.wait_state("status", lambda s: s["state"] == "ended")
    wait_until(lambda: any("can Run it again" in line for line in ide.stderr), what="the wait for Run")
    ide.proc.terminate()
    assert ide.wait() == 143
    video = cv2.VideoCapture(recording["file"])
    ok, _ = video.read()
    video.release()
    assert ok  # the recording was finalised on the way out


# ------------------------------------------------------------------ the process ends with the run
WAITS_FOR_ITS_PAGE = """
    import time
    print("waiting for the page")
    print("typed:", input())
    {rest}
"""


def page_process(ide):
    from ide_harness import PageProcess

    return PageProcess(ide)


def test_closing_the_page_after_the_run_ends_the_process(run):
    ide, page = run(WAITS_FOR_ITS_PAGE.format(rest="print('done')"))
    page.wait_terminal("waiting for the page")
    page.send(type="input", text="hello")
    page.wait_state("status", lambda s: s["state"] == "ended")
    wait_until(lambda: any("can Run it again" in line for line in ide.stderr), what="the wait for Run")
    page.close()
    assert ide.wait() == 0  # on its own: the page was the only thing it waited for
    assert "typed: hello" in "".join(ide.stdout)


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGSTOP"), reason="freezing a page needs SIGSTOP")
@pytest.mark.parametrize("how", ["killed", "frozen"])
def test_a_page_that_vanished_without_closing_is_noticed(run, how):
    """A browser killed (socket closed, no close handshake) or frozen (socket open, silent): the
    server's heartbeat drops it, and the ended run's process ends."""
    import signal

    ide = run(WAITS_FOR_ITS_PAGE.format(rest="print('done')"), page=False, terminal_open=True)
    page = page_process(ide)
    try:
        wait_until(lambda: any("can Run it again" in line for line in ide.stderr), what="the wait for Run")
        page.proc.send_signal(signal.SIGKILL if how == "killed" else signal.SIGSTOP)
        assert ide.wait() == 0
    finally:
        page.close()
    assert "typed: page here" in "".join(ide.stdout)


def test_frames_budget_ends_the_process_with_a_page_open(run):
    ide, page = run(WAITS_FOR_ITS_PAGE.format(rest="""
    import sensor
    sensor.reset()
    sensor.set_pixformat(sensor.RGB565)
    sensor.set_framesize(sensor.QQVGA)
    while True:
        sensor.snapshot()
    """), "--camera", "synthetic", "--frames", "5")
    page.wait_terminal("waiting for the page")
    page.send(type="input", text="go")
    assert ide.wait() == 0  # the page stays connected: the budget, not the page, ends the process
    assert "--frames 5" in ide.text() and "can Run it again" not in ide.text()
    assert page.latest("status")["state"] == "ended"


def test_timeout_budget_ends_the_process_with_a_page_open(run):
    from _shared import with_growing_timeout

    def attempt(timeout: float):
        ide, page = run(WAITS_FOR_ITS_PAGE.format(rest="""
    print("looping")
    while True:
        time.sleep(0.05)
        """), "--timeout", f"{timeout:g}")
        page.wait_terminal("waiting for the page")
        page.send(type="input", text="go")
        code = ide.wait()  # the page stays connected: the budget ends the process
        return code, ide.text()

    code, text = with_growing_timeout(attempt, lambda result: "looping" in result[1])
    assert code == 0 and "looping" in text
    assert "reached" in text and "can Run it again" not in text
