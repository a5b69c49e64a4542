"""The one object a run and the IDE page's server share: latest frames, terminal, controls, numbers.

Why a channel: the run (the script's thread) and the web server (its own thread and event loop)
must never wait for each other. Everything here is a small, bounded, lock-protected slot:

* **frames** — only the *latest* frame-buffer copy and LCD picture are kept, with a sequence
  number; a page (or the recorder) that cannot keep up simply skips to the newest one, so many
  frames per second never grow memory;
* **terminal** — the script's output as one ring of at most :data:`TERMINAL_CHARS` characters
  (older text is dropped and a reader that fell behind is told how much);
* **input** — lines typed in the page, at most :data:`INPUT_LINES` waiting;
* **status / numbers / LEDs / view** — small dicts replaced whole, each with a version counter
  (``view``: the page's "Disable preview" — while it is off and nothing records, the run copies
  no picture for the page at all, so it runs as fast as without a page).

The run side publishes with ``publish_framebuffer``/``publish_lcd``/``write``/``set_*`` and reads
with ``read_input``; it gives the page's requests a handler with :meth:`IdeChannel.set_handlers`
(stop, run again, buttons, frame analysis). The server side reads ``latest``/``read_terminal``/
``snapshot_state`` and is woken through :meth:`add_waker`. Nothing here knows the firmware: a
frame is any object with ``width``, ``height`` and ``rgb888()``.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

#: Characters of terminal output kept for pages that (re)connect.
TERMINAL_CHARS = 200_000
#: Lines typed in the page that wait for the script's input() at most; more are refused.
INPUT_LINES = 256
#: The frame streams the page shows.
STREAMS = ("fb", "lcd")


class Frame(Protocol):
    """A picture the page can show: its size and its pixels as (H, W, 3) uint8 RGB."""

    width: int
    height: int

    def rgb888(self) -> np.ndarray: ...


class ArrayFrame:
    """A frame that already is an RGB array (the LCD's pictures)."""

    def __init__(self, rgb: np.ndarray, info: dict[str, Any] | None = None):
        self._rgb = rgb
        self.height, self.width = int(rgb.shape[0]), int(rgb.shape[1])
        self.info = info or {"format": "RGB888"}

    def rgb888(self) -> np.ndarray:
        return self._rgb


@dataclass
class Handlers:
    """What the run side does with the page's requests (each may be None: the page says so)."""

    stop: Callable[[], None] | None = None
    run: Callable[[], None] | None = None
    button: Callable[[str, bool], None] | None = None
    #: ``analyze(frame, request) -> dict | bytes``: histogram, statistics, pixel, binary preview ...
    analyze: Callable[[Any, dict[str, Any]], Any] | None = None
    #: ``picture(data, name) -> frame``: a picture file's bytes decoded for the threshold editor
    #: (ValueError with the reason when it is no picture or too large)
    picture: Callable[[bytes, str], Any] | None = None


class IdeChannel:
    """Thread-safe meeting point of one ``maixemu run --ide`` session (see the module docstring)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        """``clock``: the seconds frames are stamped with (tests give one of their own)."""
        self.clock = clock
        self._lock = threading.Lock()
        self._frame_changed = threading.Condition(self._lock)
        self._frames: dict[str, tuple[int, Frame | None, float]] = {name: (0, None, 0.0) for name in STREAMS}
        self._term: deque[tuple[int, str, str]] = deque()  # (offset of first char, stream, text)
        self._term_start = 0  # offset of the oldest character kept
        self._term_end = 0  # offset after the newest character
        self._input: deque[str] = deque()
        self._input_ready = threading.Condition(self._lock)
        self._state: dict[str, dict[str, Any]] = {"status": {"state": "starting"}, "stats": {}, "leds": {},
                                                  "board": {}, "recording": {"active": False},
                                                  "view": {"preview": True}}
        self._versions: dict[str, int] = {key: 1 for key in self._state}
        self._wakers: list[Callable[[], None]] = []
        self._viewers = 0
        self.handlers = Handlers()
        self.frames_published = {name: 0 for name in STREAMS}

    # ------------------------------------------------------------------ wake-ups (server side)
    def add_waker(self, waker: Callable[[], None]) -> None:
        """``waker()`` is called (from any thread, must not block) after every change."""
        with self._lock:
            self._wakers.append(waker)

    def remove_waker(self, waker: Callable[[], None]) -> None:
        with self._lock:
            if waker in self._wakers:
                self._wakers.remove(waker)

    def _wake(self) -> None:
        for waker in list(self._wakers):
            try:
                waker()
            except Exception:  # a closed server must never break the run
                pass

    # ------------------------------------------------------------------ viewers
    def viewer_joined(self) -> None:
        with self._lock:
            self._viewers += 1

    def viewer_left(self) -> None:
        with self._lock:
            self._viewers = max(0, self._viewers - 1)

    @property
    def viewers(self) -> int:
        """Pages open now (their WebSockets; a picture stream is no page of its own)."""
        return self._viewers

    # ------------------------------------------------------------------ preview (the page's "Disable")
    def set_preview(self, on: bool) -> None:
        """The page's preview toggle, as the IDE's Disable button (``USBDBG_FB_ENABLE``): every page
        shows the same setting."""
        self.set_state("view", {"preview": bool(on)})

    @property
    def preview(self) -> bool:
        return bool(self._state["view"].get("preview", True))

    def frames_wanted(self) -> bool:
        """Whether the run should hand pictures to the page: the preview is on, or a recording runs."""
        return self.preview or bool(self._state["recording"].get("active"))

    # ------------------------------------------------------------------ frames
    def publish_framebuffer(self, frame: Frame) -> None:
        """The IDE's copy of the frame buffer changed (see ``maixemu.firmware.ide_events``)."""
        self._publish("fb", frame)

    def publish_lcd(self, rgb: np.ndarray) -> None:
        """The LCD shows ``rgb`` now; the array is copied (the LCD reuses its memory)."""
        self._publish("lcd", ArrayFrame(np.array(rgb, dtype=np.uint8, copy=True)))

    def _publish(self, name: str, frame: Frame) -> None:
        with self._lock:
            seq = self._frames[name][0] + 1
            self._frames[name] = (seq, frame, self.clock())
            self.frames_published[name] += 1
            self._frame_changed.notify_all()
        self._wake()

    def latest(self, name: str) -> tuple[int, Frame | None]:
        """``(sequence number, frame)`` of the newest frame of stream ``name`` (0, None before any)."""
        seq, frame, _ = self._frames[name]
        return seq, frame

    def wait_frame(self, name: str, after: int, timeout: float) -> tuple[int, Frame | None]:
        """Block (a worker thread, never the event loop) until stream ``name`` passes ``after``."""
        seq, frame, _ = self.wait_frame_at(name, after, timeout)
        return seq, frame

    def wait_frame_at(self, name: str, after: int, timeout: float) -> tuple[int, Frame | None, float]:
        """:meth:`wait_frame`, and when that frame was published (:attr:`clock` seconds): a recording
        keeps each picture on screen as long as the run showed it."""
        with self._frame_changed:
            self._frame_changed.wait_for(lambda: self._frames[name][0] > after, timeout)
            return self._frames[name]

    def clear_frames(self) -> None:
        """A new run starts: the old pictures are not the new board's."""
        with self._lock:
            for name in STREAMS:
                seq = self._frames[name][0] + 1
                self._frames[name] = (seq, None, self.clock())
            self._frame_changed.notify_all()
        self._wake()

    # ------------------------------------------------------------------ terminal
    def write(self, text: str, stream: str = "out") -> None:
        """Append the script's output (``stream``: ``out``, ``err`` or ``notice``) to the terminal."""
        if not text:
            return
        with self._lock:
            self._term.append((self._term_end, stream, text))
            self._term_end += len(text)
            while self._term and self._term_end - self._term[0][0] > TERMINAL_CHARS:
                start, _, old = self._term.popleft()
                self._term_start = start + len(old)
            if not self._term:
                self._term_start = self._term_end
        self._wake()

    def read_terminal(self, offset: int) -> tuple[int, list[tuple[str, str]], int]:
        """``(new offset, [(stream, text), ...], characters lost)`` of the output after ``offset``."""
        with self._lock:
            lost = max(0, self._term_start - offset)
            chunks: list[tuple[str, str]] = []
            for start, stream, text in self._term:
                end = start + len(text)
                if end <= offset:
                    continue
                chunks.append((stream, text[max(0, offset - start):]))
            return self._term_end, chunks, lost

    # ------------------------------------------------------------------ input (page -> script)
    def send_input(self, text: str) -> bool:
        """A line typed in the page; False when :data:`INPUT_LINES` lines already wait."""
        with self._input_ready:
            if len(self._input) >= INPUT_LINES:
                return False
            self._input.append(text if text.endswith("\n") else text + "\n")
            self._input_ready.notify_all()
        return True

    def read_input(self, timeout: float) -> str | None:
        """The next typed line (with its newline), or None after ``timeout`` seconds."""
        with self._input_ready:
            if not self._input_ready.wait_for(lambda: bool(self._input), timeout):
                return None
            return self._input.popleft()

    def clear_input(self) -> None:
        with self._lock:
            self._input.clear()

    # ------------------------------------------------------------------ state dicts
    def set_state(self, key: str, value: dict[str, Any]) -> None:
        """Replace one of ``status``, ``stats``, ``leds``, ``board``, ``recording``, ``view``."""
        with self._lock:
            self._state[key] = dict(value)
            self._versions[key] += 1
        self._wake()

    def update_state(self, key: str, **changes: Any) -> None:
        with self._lock:
            merged = dict(self._state[key])
            merged.update(changes)
            self._state[key] = merged
            self._versions[key] += 1
        self._wake()

    def state(self, key: str) -> dict[str, Any]:
        return dict(self._state[key])

    def versions(self) -> dict[str, int]:
        with self._lock:
            return dict(self._versions)

    # ------------------------------------------------------------------ run side registration
    def set_handlers(self, **handlers: Any) -> None:
        """Set the run side's handlers (``stop``, ``run``, ``button``, ``analyze``, ``picture``); None removes one."""
        for name, value in handlers.items():
            if not hasattr(self.handlers, name):
                raise TypeError(f"unknown IDE handler {name!r}")
            setattr(self.handlers, name, value)
