"""Issue 25: the display sink decides what a recorded frame is, and camera code never calls LCD code.

A runtime trace of a one-frame run shows who calls whom: ``sensor`` reaches the PC only through
``host/camera`` and ``lcd`` only through ``host/display``; no LCD code runs inside ``snapshot()``
or ``time.sleep`` (the board wires their frame boundary and idle time to the display itself), and
no firmware module names a sink's internals."""

from __future__ import annotations

import re
import sys
import textwrap
from collections import defaultdict
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from maixemu.host.display import BoardDisplay, DisplaySink, NullSink, WindowClosed
from maixemu.session import Plugs, RunSpec, execute

PACKAGE = Path(__file__).resolve().parents[2] / "maixemu"

ONE_FRAME = """
import sensor, lcd, time
sensor.reset()
sensor.set_pixformat(sensor.RGB565)
sensor.set_framesize(sensor.QVGA)
lcd.init()
img = sensor.snapshot()
lcd.display(img)
lcd.draw_string(4, 4, "one frame", lcd.WHITE, lcd.RED)
time.sleep_ms(40)
img = sensor.snapshot()
"""


_MODULES: dict[str, str | None] = {}


def _module(frame: FrameType | None) -> str | None:
    """``firmware.sensor``, ``host.camera`` ... for a frame of maixemu's own code, else None."""
    if frame is None:
        return None
    filename = frame.f_code.co_filename
    if filename not in _MODULES:
        try:
            parts = Path(filename).relative_to(PACKAGE).with_suffix("").parts
        except ValueError:
            _MODULES[filename] = None
        else:
            _MODULES[filename] = ".".join(parts[:2]) if parts[0] in ("firmware", "host") else parts[0]
    return _MODULES[filename]


def _tracer() -> tuple[Any, dict[str, set[str]], list[str]]:
    """A profile function, and what it finds: caller module -> callee modules, and the LCD calls
    made under ``snapshot()`` or ``time.sleep``."""
    edges: dict[str, set[str]] = defaultdict(set)
    inside: list[str] = []

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        callee, caller = _module(frame), _module(frame.f_back)
        if callee is None or caller is None:
            return
        if callee != caller:
            edges[caller].add(callee)
        if callee == "firmware.lcd":
            outer = frame.f_back
            while outer is not None:
                if _module(outer) in ("firmware.sensor", "firmware.utime"):
                    inside.append(f"{frame.f_code.co_name} under {outer.f_code.co_name}")
                outer = outer.f_back

    return profile, edges, inside


def test_a_one_frame_trace_shows_sensor_to_camera_and_lcd_to_display_only(tmp_path):
    script = tmp_path / "main.py"
    script.write_text(textwrap.dedent(ONE_FRAME))
    spec = RunSpec(camera="synthetic", lcd=f"record:{tmp_path / 'frames'}", frames=1, quiet=True)
    profile, edges, inside = _tracer()

    def trace(board: Any) -> Any:  # the script's thread, from its start to its end
        sys.setprofile(profile)
        return lambda: sys.setprofile(None)

    assert execute(spec, script, services=[trace]).exit_code == 0
    host = {name: {callee for callee in edges[name] if callee.startswith("host.")}
            for name in ("firmware.sensor", "firmware.lcd")}
    assert host == {"firmware.sensor": {"host.camera"}, "firmware.lcd": {"host.display"}}
    assert "firmware.lcd" not in edges["firmware.sensor"] and "firmware.sensor" not in edges["firmware.lcd"]
    assert "firmware.lcd" not in edges["firmware.utime"]
    assert inside == []  # no LCD code ran inside snapshot() or time.sleep
    # ... and still the recording got the finished picture (the text box included) at the frame boundary
    frames = sorted((tmp_path / "frames").glob("frame_*.png"))
    assert len(frames) == 2  # lcd.init's screen, then the one picture


def test_firmware_names_no_sink_internals():
    found = [f"{path.relative_to(PACKAGE)}:{n}: {line.strip()}"
             for path in sorted((PACKAGE / "firmware").rglob("*.py"))
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
             if re.search(r"\.(records|closed_error|pending|frames_shown)\b|display_lock", line)]
    assert found == []


class _Recorder(DisplaySink):
    name = "record:memory"
    records = True

    def __init__(self) -> None:
        super().__init__()
        self.frames: list[int] = []

    def _show(self, rgb: np.ndarray) -> None:
        self.frames.append(int(rgb[0, 0, 0]))


def _picture(value: int) -> np.ndarray:
    return np.full((2, 2, 3), value, np.uint8)


def test_a_recording_gets_one_frame_per_finished_picture():
    sink, shown = _Recorder(), []
    display = BoardDisplay(sink, on_shown=lambda rgb: shown.append(int(rgb[0, 0, 0])))
    display.show(_picture(1), new_picture=True)
    display.show(_picture(2))  # drawn over the same picture (a caption)
    display.show(_picture(3), new_picture=True)  # the next picture starts: 2 was finished
    display.frame_boundary()  # a camera frame: 3 is finished
    display.frame_boundary()  # nothing pending: nothing written
    display.show(_picture(4))
    display.idle()  # the script sleeps: 4 is finished
    display.show(_picture(5))
    display.close()  # the run ends: 5 is written, then the sink closes
    assert sink.frames == [2, 3, 4, 5] and shown == [2, 3, 4, 5] and sink.closed


def test_a_live_sink_gets_every_change_and_idle_reports_its_close():
    sink = NullSink()
    display = BoardDisplay(sink)
    for value in range(3):
        display.show(_picture(value), new_picture=value == 0)
    assert display.frames_shown == sink.frames_shown == 3
    display.idle()
    sink.close()
    try:
        display.idle()
    except WindowClosed:
        pass
    else:
        raise AssertionError("idle time must report the closed sink")
