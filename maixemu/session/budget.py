"""``--frames N``: the frame budget of a run, counted on every thread of the board.

The rule that ends every kind of loop (the first of these to pass ``N`` ends the run):

* **camera frames**: ``sensor.snapshot()`` calls;
* **LCD frames without a camera frame**: LCD updates since the last snapshot (all of them for a
  script that never takes one);
* **sleeping without any frame**: sleeps (``time.sleep*``) since the last camera or LCD frame; a
  sleep counts as one idle frame when it completes a frame time (1/30 s) of sleeping, and never as
  more than one, so a loop that only prints and sleeps ends after ``N`` of its sleeps (or ``N`` × 33 ms
  of short ones) while one long start-up ``time.sleep(2)`` is a single idle frame. Waiting for the
  hardware (a WAV or AVI playing, the I2S DMA) is not sleeping: it never counts.

Once the camera has delivered a frame, the last two rules only end a loop that has stopped taking
camera frames: ``N`` frames of LCD updates or of sleeping are then ``N`` camera frames' worth, and
a camera frame is worth :data:`CAMERA_FRAME_WORTH` (30) of them, or the most one camera frame has
had so far when that is more. A camera loop whose LCD updates or sleeps per frame vary (one
``lcd.display`` per detection: 1 on an empty frame, 21 on a busy one; an LED blinked on a find)
gets its ``N`` camera frames, and one that takes a snapshot and then redraws forever ends after
``30 × N`` more pictures.

A loop that neither takes frames, draws nor sleeps is not a frame loop: ``--timeout`` ends it.
When the limit is reached the *next* request ends the run: it raises the run's end
(:class:`~maixemu.firmware.state.RunEnded`) on the thread that made it, and every other script
thread gets it at its next firmware call, so a camera loop running in a ``_thread`` ends the run as well.
"""

from __future__ import annotations

import threading

from ..firmware.state import BoardState

#: LCD updates (or idle frames) one camera frame is worth at least, once the camera has delivered one.
CAMERA_FRAME_WORTH = 30
#: One frame time (1/30 s) in nanoseconds: the unit of the sleeping rule.
FRAME_NS = 1_000_000_000 // 30


class FrameBudget:
    """Counts the frames of one board and ends its run after ``limit`` (None: no limit)."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self.snapshots = 0
        self.lcd_frames = 0
        #: LCD updates since the last snapshot, and the most seen between two snapshots
        self.lcd_since_snapshot = 0
        self.lcd_per_camera_frame = 0
        #: sleeping since the last camera or LCD frame: idle frames, and the nanoseconds towards the next
        self.idle_frames = 0
        self.idle_ns = 0
        #: idle frames since the last snapshot, and the most seen between two snapshots
        self.idle_since_snapshot = 0
        self.idle_per_camera_frame = 0
        #: which rule ended the run ("camera", "lcd", "sleep"), None while it goes on
        self.ended_by: str | None = None
        #: the budget was spent (the run was asked to end for it)
        self.ended = False
        self._board: BoardState | None = None
        self._lock = threading.Lock()

    def attach(self, board: BoardState) -> None:
        """Count the frames of ``board`` (its ``snapshot`` and ``lcd_push`` events); once per board."""
        if self._board is board:
            return
        self._board = board
        board.events.snapshot.append(self.on_snapshot)
        board.events.lcd_push.append(self.on_lcd_frame)
        board.events.sleep.append(self.on_sleep)

    _WHY = {"camera": "frame budget of {n} frames reached",
            "lcd": "frame budget of {n} frames reached (LCD frames without a new camera frame)",
            "sleep": "frame budget of {n} frames reached (the script slept {n} frame times without a frame)",
            "sleep after camera": "frame budget of {n} frames reached (the script stopped taking camera frames "
                                  "and slept {n} camera frames' worth)"}

    def _allowed(self, most_per_camera_frame: int) -> int | None:
        """How many LCD updates (or idle frames) without a camera frame end the run (None: no limit)."""
        if self.limit is None:
            return None
        if self.snapshots == 0:
            return self.limit
        return self.limit * max(CAMERA_FRAME_WORTH, most_per_camera_frame)

    def _check(self, count: int, limit: int | None, rule: str) -> None:
        if limit is None or count <= limit or self._board is None:
            return
        self.ended = True
        if self.ended_by is None:
            self.ended_by = rule
        why = self._WHY["sleep after camera" if rule == "sleep" and self.snapshots else rule]
        self._board.run.end(why.format(n=self.limit))
        self._board.run.check()

    def on_snapshot(self) -> None:
        with self._lock:  # threads take frames too
            self.snapshots += 1
            count = self.snapshots
            if count > 1:
                self.lcd_per_camera_frame = max(self.lcd_per_camera_frame, self.lcd_since_snapshot)
                self.idle_per_camera_frame = max(self.idle_per_camera_frame, self.idle_since_snapshot)
            self.lcd_since_snapshot = self.idle_since_snapshot = 0
            self.idle_ns = self.idle_frames = 0
        self._check(count, self.limit, "camera")

    def on_lcd_frame(self) -> None:
        with self._lock:
            self.lcd_frames += 1
            self.lcd_since_snapshot += 1
            self.idle_ns = self.idle_frames = 0
            count = self.lcd_since_snapshot
            allowed = self._allowed(self.lcd_per_camera_frame)
        self._check(count, allowed, "lcd")

    def on_sleep(self, ns: int) -> None:
        with self._lock:
            self.idle_ns += max(0, int(ns))
            if self.idle_ns >= FRAME_NS:  # at most one idle frame per sleep: a long start-up sleep is one
                self.idle_ns = 0
                self.idle_frames += 1
                self.idle_since_snapshot += 1
            frames = self.idle_frames
            allowed = self._allowed(self.idle_per_camera_frame)
        self._check(frames, allowed, "sleep")


__all__ = ["FrameBudget"]
