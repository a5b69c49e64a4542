"""Frames that came at their own times, written to a video of one fixed frame rate.

Why: a video file plays at one rate, but a script's frames come when the script makes them (5
per second for a detector, 30 for a camera loop, none while it waits). A video whose rate is
simply a constant (15 fps) plays a 5 fps script three times too fast. Here every output frame
``k`` of a video at ``fps`` shows the picture that was current at ``start + k / fps`` — the last
frame that had come by then — so the video lasts as long as the recording did and every picture
stays on screen as long as it did: a slow script's frames are repeated, a fast script's frames in
between two output frames are dropped (the video could not show them), a pause is held.
"""

from __future__ import annotations

import numpy as np

#: Output frames one recording may have at most (a day at 30 fps): a clock that jumped (a machine
#: that slept) must not turn one frame into an endless video.
MAX_OUTPUT_FRAMES = 30 * 60 * 60 * 24


def hold_counts(times: np.ndarray | list[float], end: float | None, fps: float) -> np.ndarray:
    """How many times each frame is written to a video at ``fps`` so that it plays in real time.

    ``times``: when each frame came (seconds, non-decreasing, any clock); ``end``: when the
    recording stopped (the last frame is held until then; None: one output frame after it).
    Returns one non-negative count per frame (0: a frame the video's rate has no room for),
    summing to the video's frame count, at least 1 when there is any frame.
    """
    at = np.asarray(times, dtype=np.float64)
    if at.ndim != 1:
        raise ValueError("times must be one list of seconds")
    if at.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not fps > 0 or not np.isfinite(fps):
        raise ValueError(f"fps must be a positive number, not {fps!r}")
    at = np.maximum.accumulate(at - at[0])  # from the first frame; a clock that stepped back holds
    length = at[-1] + 1.0 / fps if end is None else max(float(end) - float(np.asarray(times)[0]), at[-1])
    ticks = min(max(1, int(round(length * fps))), MAX_OUTPUT_FRAMES)
    shown = np.searchsorted(at, np.arange(ticks) / fps + 1e-9, side="right") - 1  # last frame come by tick k
    return np.bincount(shown, minlength=at.size).astype(np.int64)
