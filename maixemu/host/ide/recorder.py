"""The IDE page's Record button: the frame-buffer stream written to a new video file.

Frames are taken from the channel's latest-frame slot by a worker thread, so a recording never
slows the script and never queues frames (a frame that arrives while the previous one is being
encoded replaces it). Files get a fresh name in the recording folder and never overwrite anything.

Bounded: at most the video's own frame rate (:data:`~maixemu.host.display.RECORD_FPS`: a faster
script's frames in between are skipped, as the video could not show them) and at most
:data:`MAX_RECORDING_BYTES` of frames or :data:`MAX_RECORDING_S` seconds, after which it stops by
itself and says so. Stop returns once the video is finished (encoding a long recording takes a
while); until then the recording counts as running, and the end of the session waits for it, so a
recording is never a half-written file.

Within those bounds the video plays in real time: each frame is kept with the moment the run published it, and the
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
#: One recording ends by itself past this much of frames (JPEGs in its journal) ...
MAX_RECORDING_BYTES = 512 * 1024 * 1024
#: ... or past this long.
MAX_RECORDING_S = 30 * 60.0


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
                 on_notice: Callable[[str], None] | None = None, clock: Callable[[], float] = time.monotonic):
        """``clock``: seconds for the rate and duration bounds (tests give a clock of their own)."""
        self.channel = channel
        self.folder = Path(folder)
        self.stream = stream
        self.files: list[Path] = []
        self._notice = on_notice or (lambda message: None)
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._finishing: threading.Thread | None = None
        self._stop = threading.Event()
        self.frames_written = 0
        self.limit_reached = ""
        self._clock = clock

    @property
    def active(self) -> bool:
        """A recording runs, or is being finished (its file is not complete yet)."""
        return self._thread is not None or (self._finishing is not None and self._finishing.is_alive())

    def start(self) -> Path:
        """Begin a new recording; returns its file. A running one is kept (and returned)."""
        with self._lock:
            if self._thread is not None or (self._finishing is not None and self._finishing.is_alive()):
                return self.files[-1]
            if len(self.files) >= MAX_RECORDINGS:
                raise OSError(f"{MAX_RECORDINGS} recordings in this session already; restart maixemu for more")
            path = unique_path(self.folder, time.strftime("maixemu-ide-%Y%m%d-%H%M%S"), ".mp4")
            sink = display.VideoFileSink(path, on_notice=self._notice, timed=True)
            self.files.append(path)
            self._stop.clear()
            self.frames_written = 0
            self.limit_reached = ""
            self._thread = threading.Thread(target=self._record, args=(sink,), name="maixemu-ide-recorder",
                                            daemon=True)
            self._thread.start()
        self.channel.set_state("recording", {"active": True, "file": str(path), "index": len(self.files) - 1})
        self._notice(f"recording the frame buffer to {path}")
        return path

    def stop(self) -> Path | None:
        """End the recording; returns once its file is finished (also a recording another call is
        finishing right now); None when none ran."""
        with self._lock:
            thread, self._thread = self._thread, None
            if thread is None:
                finishing = self._finishing
                if finishing is not None and finishing is not threading.current_thread():
                    finishing.join()  # the end of the session waits for a video being encoded
                return None
            self._finishing = thread
            self._stop.set()
        path = self.files[-1]
        self.channel.set_state("recording", {"active": True, "finishing": True, "file": str(path),
                                             "index": len(self.files) - 1, "frames": self.frames_written})
        thread.join()  # no timeout: a long recording takes a while to encode, and must be whole
        if self.frames_written == 0 and path.is_file() and path.stat().st_size == 0:
            path.unlink()  # our own reserved, never written file: no empty video left behind
        self.channel.set_state("recording", {"active": False, "file": str(path), "index": len(self.files) - 1,
                                             "frames": self.frames_written})
        self._notice(f"recorded {self.frames_written} frames to {path}")
        return path

    def _record(self, sink: display.VideoFileSink) -> None:
        seq = 0
        started = self._clock()
        next_at = started
        began = self.channel.clock()
        try:
            while not self._stop.is_set():
                new_seq, frame, published = self.channel.wait_frame_at(self.stream, seq, timeout=0.2)
                if new_seq == seq or frame is None:
                    seq = new_seq
                    continue
                now = self._clock()
                if now < next_at:  # faster than the video's rate: wait, then take the newest frame
                    self._stop.wait(next_at - now)
                    continue
                seq = new_seq
                next_at = max(next_at + 1.0 / display.RECORD_FPS, now - 1.0 / display.RECORD_FPS)
                # the picture on screen when Record was pressed starts the video then, not when it came
                sink.show_at(frame.rgb888(), max(published, began))
                self.frames_written += 1
                self.limit_reached = self._limit(sink, now - started)
                if self.limit_reached:
                    self._notice(f"the IDE recording stopped at its limit ({self.limit_reached}); press Record "
                                 "again for another one")
                    break
        except Exception as exc:  # a full disk: say so, keep the run going
            self._notice(f"the IDE recording stopped: {exc}")
        finally:
            sink.end_at(self.channel.clock())  # the last picture stays on screen until Stop
            sink.close()
        if self.limit_reached:  # stopped by itself: the page hears of it as of a Stop
            threading.Thread(target=self.stop, name="maixemu-ide-recorder-limit", daemon=True).start()

    @staticmethod
    def _limit(sink: display.VideoFileSink, seconds: float) -> str:
        """Why the recording must end now ("" while it may go on)."""
        if sink.journal_bytes >= MAX_RECORDING_BYTES:
            return f"{MAX_RECORDING_BYTES // (1024 * 1024)} MiB of frames"
        if seconds >= MAX_RECORDING_S:
            return f"{MAX_RECORDING_S / 60:g} minutes"
        return ""
