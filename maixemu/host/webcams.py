"""Which webcams OpenCV can open here, for ``maixemu cameras`` (what to pass to ``--camera N``).

OpenCV has no list of cameras: the only way is to open index 0, 1, ... and see. Done bounded:

* on Linux only the indices below ``count`` that have a ``/dev/videoN`` node are opened (opening a missing V4L
  device only prints OpenCV warnings, and a UVC camera often has a second, metadata-only node that
  opens no stream: it is listed as such);
* elsewhere (Windows, macOS) indices ``0 .. count-1`` are tried, stopping after
  :data:`MISSES_BEFORE_STOP` indices in a row open nothing (their indices are consecutive);
* each camera gets ``timeout`` seconds to open and deliver a frame on a helper thread: a driver that
  hangs ends the listing with a line that says which index, instead of hanging ``maixemu``.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2

#: Indices tried at most (``maixemu cameras --max``): OpenCV's own backends stop well below this.
MAX_INDICES = 64
#: Consecutive indices that open nothing before the probing stops (not Linux).
MISSES_BEFORE_STOP = 2
#: Seconds a camera may take to open and deliver its first frame (first frames are often slow).
PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Webcam:
    """What one index answered."""

    index: int
    opened: bool
    width: int = 0
    height: int = 0
    fps: float = 0.0
    backend: str = ""
    frame: bool = False  # a frame was read
    node: str = ""  # /dev/videoN on Linux
    note: str = ""

    @property
    def usable(self) -> bool:
        return self.opened and self.frame


def linux_nodes(dev: Path = Path("/dev")) -> list[int]:
    """Indices of the ``/dev/videoN`` nodes, in order."""
    found = [int(m.group(1)) for p in dev.glob("video*") if (m := re.fullmatch(r"video(\d+)", p.name))]
    return sorted(found)


def probe(index: int, open_capture: Callable[[int], Any] = cv2.VideoCapture, read_s: float = 2.0) -> Webcam:
    """Open webcam ``index``, read one frame (retrying for ``read_s`` seconds), close it."""
    cap = open_capture(index)
    try:
        if not cap.isOpened():
            return Webcam(index, opened=False, note="does not open")
        backend = ""
        try:
            backend = str(cap.getBackendName())
        except (cv2.error, AttributeError):
            pass
        deadline = time.monotonic() + read_s
        got = False
        while not got and time.monotonic() <= deadline:
            ok, frame = cap.read()
            got = bool(ok) and frame is not None
            if not got:
                time.sleep(0.05)
        width, height = int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT))
        fps = float(cap.get(cv2.CAP_PROP_FPS) or 0.0)
        note = "" if got else f"opened but gave no frame in {read_s:g} s (in use by another program, or a metadata node)"
        return Webcam(index, True, width, height, fps, backend, got, note=note)
    finally:
        cap.release()


def _probe_bounded(index: int, timeout: float, open_capture: Callable[[int], Any]) -> Webcam | None:
    """:func:`probe` on a helper thread; None when it did not answer in ``timeout`` seconds."""
    result: list[Webcam] = []

    def work() -> None:
        try:
            result.append(probe(index, open_capture, read_s=max(0.1, timeout * 0.6)))
        except Exception as exc:  # a driver's error is this index's answer, not the command's crash
            result.append(Webcam(index, opened=False, note=f"error: {exc}"))

    thread = threading.Thread(target=work, name=f"maixemu-webcam-{index}", daemon=True)
    thread.start()
    thread.join(timeout)
    return result[0] if result else None


def list_webcams(count: int = 16, timeout: float = PROBE_TIMEOUT_S, *, platform: str = sys.platform,
                 open_capture: Callable[[int], Any] = cv2.VideoCapture,
                 nodes: Callable[[], list[int]] = linux_nodes) -> Iterator[Webcam]:
    """Each index's answer, as it comes (see the module docstring for which indices are tried).

    Ends after a camera that hangs: it yields a :class:`Webcam` whose note says so, then stops.
    """
    count = max(1, min(int(count), MAX_INDICES))
    linux = platform.startswith("linux")
    indices = [i for i in nodes() if i < count] if linux else list(range(count))
    misses = 0
    for index in indices:
        found = _probe_bounded(index, timeout, open_capture)
        if found is None:
            yield Webcam(index, opened=False, note=f"did not answer in {timeout:g} s (a hung driver?); "
                                                   "probing stopped here")
            return
        if linux:
            found = Webcam(**{**found.__dict__, "node": f"/dev/video{index}"})
        yield found
        misses = 0 if found.opened else misses + 1
        if not linux and misses >= MISSES_BEFORE_STOP:
            return
