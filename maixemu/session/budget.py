"""``--frames N``: the frame budget of a run, counted on every thread of the board.

Frames are snapshots; a script that only draws to the LCD (no camera) counts LCD updates instead,
so ``--frames`` ends LCD-only animations too. When the limit is reached the *next* frame request
ends the run: the request raises the run's end (:class:`~maixemu.firmware.state.RunEnded`) on the
thread that made it, and every other script thread gets it at its next firmware call (the main
thread in its ``time.sleep``), so a camera loop running in a ``_thread`` ends the run as well.
"""

from __future__ import annotations

import threading

from ..firmware.state import BoardState


class FrameBudget:
    """Counts the frames of one board and ends its run after ``limit`` (None: no limit)."""

    def __init__(self, limit: int | None):
        self.limit = limit
        self.snapshots = 0
        self.lcd_frames = 0
        #: the budget was spent (the run was asked to end for it)
        self.ended = False
        self._board: BoardState | None = None
        self._lock = threading.Lock()

    def attach(self, board: BoardState) -> None:
        """Count the frames of ``board`` (its ``snapshot`` and ``lcd_push`` events)."""
        self._board = board
        board.events.snapshot.append(self.on_snapshot)
        board.events.lcd_push.append(self.on_lcd_frame)

    def _check(self, count: int) -> None:
        if self.limit is None or count <= self.limit or self._board is None:
            return
        self.ended = True
        self._board.run.end(f"frame budget of {self.limit} frames reached")
        self._board.run.check()

    def on_snapshot(self) -> None:
        with self._lock:  # threads take frames too
            self.snapshots += 1
            count = self.snapshots
        self._check(count)

    def on_lcd_frame(self) -> None:
        with self._lock:
            self.lcd_frames += 1
            count, camera = self.lcd_frames, self.snapshots
        if camera == 0:
            self._check(count)


__all__ = ["FrameBudget"]
