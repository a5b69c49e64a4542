"""The IDE page's Record button: the frame-buffer stream written to a new video file.

Frames are taken from the channel's latest-frame slot by a worker thread, so a recording never
slows the script and never queues frames (a frame that arrives while the previous one is being
encoded replaces it). Files get a fresh name in the recording folder and never overwrite anything.

The video plays in real time: each frame is kept with the moment the run published it, and the
file, at :data:`~maixemu.host.display.RECORD_FPS`, shows every picture as long as the run did (a
5 fps script's frames are held three video frames each, pauses are held, frames faster than the
video's rate are dropped; :mod:`maixemu.host.video_timing`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from .. import display
from .channel import IdeChannel

#: Largest number of recordings one session keeps track of (the page lists them for download).
MAX_RECORDINGS = 100


def unique_path(folder: Path, stem: str, suffix: str) -> Path:
    """``folder/stem-N.suffix`` that did not exist, reserved by creating it (never overwrites)."""
    for n in range(1, 10_000):
        path = folder / (f"{stem}{suffix}" if n == 1 else f"{stem}-{n}{suffix}")
        try:
            with open(path, "x"):
                return path
        except FileExistsError:
            continue
    raise OSError(f"no free file name for {stem}{suffix} in {folder}")


class FrameRecorder:
    """Start/stop recordings of one stream of an :class:`IdeChannel` into ``folder``."""

    def __init__(self, channel: IdeChannel, folder: Path, *, stream: str = "fb",
                 on_notice: Callable[[str], None] | None = None):
        self.channel = channel
        self.folder = Path(folder)
        self.stream = stream
        self.files: list[Path] = []
        self._notice = on_notice or (lambda message: None)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.frames_written = 0

    @property
    def active(self) -> bool:
        return self._thread is not None

    def start(self) -> Path:
        """Begin a new recording; returns its file. A running one is kept (and returned)."""
        with self._lock:
            if self._thread is not None:
                return self.files[-1]
            if len(self.files) >= MAX_RECORDINGS:
                raise OSError(f"{MAX_RECORDINGS} recordings in this session already; restart maixemu for more")
            path = unique_path(self.folder, time.strftime("maixemu-ide-%Y%m%d-%H%M%S"), ".mp4")
            sink = display.VideoFileSink(path, on_notice=self._notice, timed=True)
            self.files.append(path)
            self._stop.clear()
            self.frames_written = 0
            self._thread = threading.Thread(target=self._record, args=(sink,), name="maixemu-ide-recorder",
                                            daemon=True)
            self._thread.start()
        self.channel.set_state("recording", {"active": True, "file": str(path), "index": len(self.files) - 1})
        self._notice(f"recording the frame buffer to {path}")
        return path

    def stop(self) -> Path | None:
        """End the recording (the file is finalised before this returns); None when none ran."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None:
                return None
            self._stop.set()
        thread.join(timeout=30)
        path = self.files[-1]
        if self.frames_written == 0 and path.is_file() and path.stat().st_size == 0:
            path.unlink()  # our own reserved, never written file: no empty video left behind
        self.channel.set_state("recording", {"active": False, "file": str(path), "index": len(self.files) - 1,
                                             "frames": self.frames_written})
        self._notice(f"recorded {self.frames_written} frames to {path}")
        return path

    def _record(self, sink: display.VideoFileSink) -> None:
        seq = 0
        began = self.channel.clock()
        try:
            while not self._stop.is_set():
                new_seq, frame, published = self.channel.wait_frame_at(self.stream, seq, timeout=0.2)
                if new_seq == seq or frame is None:
                    seq = new_seq
                    continue
                seq = new_seq
                # the picture on screen when Record was pressed starts the video then, not when it came
                sink.show_at(frame.rgb888(), max(published, began))
                self.frames_written += 1
        except Exception as exc:  # a full disk: say so, keep the run going
            self._notice(f"the IDE recording stopped: {exc}")
        finally:
            sink.end_at(self.channel.clock())  # the last picture stays on screen until Stop
            sink.close()
