"""Issue 17: one closing line for every run (how it ended, frames, PC fps, the K210 estimate, where the
recording and the script's writes went), and the same values in the plugin's ``RunResult.summary``."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from maixemu.session.summary import RunSummary, recording_of
from maixemu.testing import MaixPyRunner

LOOP = """
import sensor, lcd, KPU as kpu
sensor.reset(); sensor.set_pixformat(sensor.RGB565); sensor.set_framesize(sensor.QVGA)
lcd.init()
task = kpu.load(0xF00000)
with open("/sd/log.txt", "w") as f:
    f.write("ran")
while True:
    img = sensor.snapshot()
    kpu.forward(task, img)
    lcd.display(img)
"""


def test_the_cli_ends_with_one_summary_line(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(LOOP))
    video = tmp_path / "out.mp4"
    proc = subprocess.run(
        [sys.executable, "-m", "maixemu", "run", str(script), "--camera", "synthetic", "--lcd", f"record:{video}",
         "--frames", "4"], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    last = proc.stderr.splitlines()[-1]
    assert last.startswith("[maixemu] frame budget of 4 frames reached; run ended: 4 frames in "), last
    assert " fps on this PC)" in last
    assert "; KPU 4 calls, ~" in last and "ms each on a K210 (estimate)" in last
    assert f"LCD recorded to {video}" in last
    assert "the script wrote /sd/log.txt" in last and str(tmp_path / ".maixemu") in last
    assert sum("/sd/log.txt" in line for line in proc.stderr.splitlines()) == 1  # one line, not two


def test_a_failing_script_gets_a_summary_after_its_traceback(tmp_path):
    result = MaixPyRunner(tmp_path).run(code="print('hi')\nraise ValueError('boom')\n")
    assert result.exit_code == 1
    lines = result.stderr.splitlines()
    assert lines[-2] == "ValueError: boom"
    assert lines[-1].startswith("[maixemu] the script failed with ValueError, exit 1: 0 frames in ")
    assert result.summary.ended == "the script failed with ValueError" and result.summary.exit_code == 1


def test_the_plugin_result_has_the_summary_values(tmp_path):
    result = MaixPyRunner(tmp_path).run(code=textwrap.dedent(LOOP), frames=3)
    assert result.ok, result.stderr
    summary = result.summary
    assert isinstance(summary, RunSummary)
    assert summary.ended == "frame budget of 3 frames reached; run ended"
    assert summary.frames == 3 and summary.kpu_calls == 3
    assert summary.device_ms is not None and summary.device_ms_per_call == pytest.approx(summary.device_ms / 3)
    assert summary.seconds > 0 and summary.pc_fps == pytest.approx(3 / summary.seconds)
    assert summary.recording is None and summary.writes is None  # the plugin's folders are the test's own
    assert result.notices[-1] == summary.line()


def test_a_script_that_finishes_says_so(tmp_path):
    result = MaixPyRunner(tmp_path).run(code="x = 1\n")
    assert result.summary.ended == "script finished" and result.summary.frames == 0
    assert result.notices[-1].startswith("script finished: 0 frames in ")


def test_the_estimate_is_the_kmodel_estimate_per_call(tmp_path):
    from maixemu.kmodel import load_kmodel
    from maixemu.kmodel.estimate import estimate
    from maixemu.session.board import DEMO_MODEL

    per_call = estimate(load_kmodel(DEMO_MODEL.read_bytes())).total_ms
    result = MaixPyRunner(tmp_path).run(code=textwrap.dedent(LOOP), frames=2)
    assert result.summary.device_ms == pytest.approx(2 * per_call)


def test_recording_is_found_through_a_tee():
    from maixemu.host.display import NullSink, TeeSink

    inner = NullSink()
    inner.name = "record:/tmp/x.mp4"
    assert recording_of(TeeSink(inner)) is None  # nothing shown: nothing recorded
    inner.frames_shown = 2
    assert recording_of(TeeSink(inner)) == "/tmp/x.mp4"
    assert recording_of(NullSink()) is None


def test_quiet_prints_no_summary(tmp_path):
    script = tmp_path / "main.py"
    script.write_text("print('hello')\n")
    proc = subprocess.run([sys.executable, "-m", "maixemu", "run", str(script), "--lcd", "none", "--quiet"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and proc.stdout == "hello\n" and proc.stderr == ""
