"""The one line every run ends with: how it ended, frames, PC fps, the K210 time estimate, where things went.

::

    [maixemu] frame budget of 100 frames reached; run ended: 100 frames in 8.3 s (12.0 fps on this PC);
    KPU 100 calls, ~12.7 ms each on a K210 (estimate); LCD recorded to out.mp4; the script wrote /sd/log.txt ...

``maixemu run`` prints it (unless ``--quiet``), the pytest plugin keeps it in ``RunResult.summary``
(a :class:`RunSummary`, its fields for assertions) and ``RunResult.notices``. The K210 time is
``maixemu.kmodel.estimate`` per model the KPU ran (an analytical estimate, never a measurement).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from ..firmware.state import BoardState


class ModelTimes:
    """The estimated K210 milliseconds of one run of each model (computed once per model)."""

    def __init__(self) -> None:
        self._cache: dict[int, tuple[Any, float | None]] = {}

    def ms(self, model: Any) -> float | None:
        key = id(model)
        if key not in self._cache:
            try:
                from ..kmodel.estimate import estimate

                self._cache[key] = (model, estimate(model).total_ms)
            except Exception:  # noqa: BLE001 - a model the estimate does not know: no number, no crash
                self._cache[key] = (model, None)
        return self._cache[key][1]

    def clear(self) -> None:
        self._cache.clear()


@dataclass
class RunSummary:
    """What the closing line says, as values."""

    #: how the run ended ("script finished", "frame budget of 5 frames reached; run ended", ...)
    ended: str
    exit_code: int
    #: camera frames (LCD frames for a script that never took one)
    frames: int
    seconds: float
    kpu_calls: int = 0
    #: estimated K210 time of all KPU calls (None: no call, or no model the estimate knows)
    device_ms: float | None = None
    #: where the LCD was recorded (``--lcd record:PATH``), if it was
    recording: str | None = None
    #: the storage layer's line: what the script wrote or deleted and where it went
    writes: str | None = None

    @property
    def pc_fps(self) -> float | None:
        return self.frames / self.seconds if self.frames and self.seconds > 0 else None

    @property
    def device_ms_per_call(self) -> float | None:
        return self.device_ms / self.kpu_calls if self.device_ms is not None and self.kpu_calls else None

    def line(self) -> str:
        parts = [f"{self.frames} frame{'s' if self.frames != 1 else ''} in {self.seconds:.1f} s"]
        if self.pc_fps is not None:
            parts[0] += f" ({self.pc_fps:.1f} fps on this PC)"
        if self.kpu_calls:
            kpu = f"KPU {self.kpu_calls} call{'s' if self.kpu_calls != 1 else ''}"
            each = self.device_ms_per_call
            if each is not None:
                kpu += f", ~{each:.1f} ms each on a K210 (estimate)"
            parts.append(kpu)
        if self.recording:
            parts.append(f"LCD recorded to {self.recording}")
        if self.writes:
            parts.append(self.writes)
        ended = self.ended if self.exit_code == 0 or "exit code" in self.ended else f"{self.ended}, exit {self.exit_code}"
        return f"{ended}: " + "; ".join(parts)


class RunTally:
    """Counts one run's KPU calls and their estimated K210 time (a listener of ``events.kpu_call``)."""

    def __init__(self, board: BoardState):
        self.board = board
        self.started = time.monotonic()
        self.kpu_calls = 0
        self.device_ms: float | None = None
        self._times = ModelTimes()
        self._lock = threading.Lock()
        board.events.kpu_call.append(self.on_kpu_call)

    def on_kpu_call(self, call: str, model: Any) -> None:
        ms = self._times.ms(model)
        with self._lock:
            self.kpu_calls += 1
            if ms is not None:
                self.device_ms = (self.device_ms or 0.0) + ms

    def detach(self) -> None:
        try:
            self.board.events.kpu_call.remove(self.on_kpu_call)
        except ValueError:
            pass

    def summary(self, ended: str, exit_code: int, frames: int, writes: str | None) -> RunSummary:
        return RunSummary(ended=ended, exit_code=exit_code, frames=frames,
                          seconds=time.monotonic() - self.started, kpu_calls=self.kpu_calls,
                          device_ms=self.device_ms, recording=recording_of(self.board.display), writes=writes)


def recording_of(sink: Any) -> str | None:
    """The file or folder a display sink recorded to (``record:PATH``, also inside a tee), if it got a frame."""
    seen = 0
    while sink is not None and seen < 8:
        name = getattr(sink, "name", "")
        shown: object = getattr(sink, "frames_shown", 1)  # (a sink without the count: assume it got one)
        if isinstance(name, str) and name.startswith("record:") and shown:
            return name.removeprefix("record:")
        sink = getattr(sink, "inner", None)
        seen += 1
    return None


__all__ = ["ModelTimes", "RunSummary", "RunTally", "recording_of"]
