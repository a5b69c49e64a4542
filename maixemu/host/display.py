"""Display sinks on the PC: where the emulated LCD's pixels go.

``maixemu.firmware.lcd`` keeps the panel's framebuffer and shows it as an RGB ``(H, W, 3) uint8``
array after every change on the board's display, a :class:`BoardDisplay`: it decides what a frame
of the :class:`DisplaySink` behind it is (every change for a live sink, one per finished picture for
a recording) and the sink shows, records or drops it. Sinks, chosen by :func:`open_sink` from the
``--lcd`` value:

* ``"window"`` — an OpenCV window titled ``maixemu LCD`` (scaled x2 for panels up to 400 pixels wide,
  so a 320x240 LCD is readable on a PC screen). ESC or closing the window ends the run: the sink sets
  ``closed`` and :meth:`DisplaySink.show` raises :class:`WindowClosed`.
* ``"record:PATH"`` — ``PATH`` ending ``.mp4``/``.avi`` is a video, any other ``PATH`` a folder of
  numbered PNGs (``frame_000001.png`` ...). Recordings survive every way a run ends: each frame is
  on disk once it is recorded (a video's frames go to an MJPEG journal next to it, encoded into the
  video by ``close()``, also at interpreter exit; each PNG is written under a temporary name and
  renamed), so a crash or SIGKILL loses at most the frame being written. Two runs recording to the
  same target at once get an error (an OS lock, released when a process dies), and frames of an
  earlier run are never mixed with new ones (see :class:`PngFolderSink`, :class:`VideoFileSink`).
* ``"none"`` — frames are counted and dropped.
* ``None`` / ``"auto"`` — a window when a display exists (``DISPLAY``/``WAYLAND_DISPLAY`` set, or not
  Linux), otherwise ``none`` with one notice.

This module imports nothing from ``maixemu.firmware``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from . import outputs
from . import screens
from .video_timing import hold_counts

Notice = Callable[[str], None]

WINDOW_TITLE = "maixemu LCD"
LCD_HINT = "use --lcd window|none|record:OUT.mp4|record:OUT.avi|record:FOLDER"

#: Frame rate written into recorded videos (MaixPy camera loops run at roughly this speed).
RECORD_FPS = 15.0

#: Pixels between the LCD window and a window opened beside it (``--show-ai``).
WINDOW_GAP = 16
#: Panels up to this width are shown at twice their size in the window.
SMALL_PANEL_WIDTH = 400

_ESC = 27


class DisplayError(RuntimeError):
    """A display sink could not be opened or written; the text says what to do."""


class WindowClosed(BaseException):
    """The user closed the LCD window (or pressed ESC): the run should end cleanly.

    Why ``BaseException``: MaixPy scripts often wrap their main loop in ``try: ... except Exception:``
    and would otherwise swallow the request and keep running. Like ``KeyboardInterrupt`` it passes
    through those handlers to the runner, which treats it as a normal end of the run (exit 0).
    """


@dataclass
class BoardControls:
    """What a window offers besides the picture: keyboard keys that press board keys, and LEDs.

    ``keys``: keyboard key code (``cv2.waitKey``'s, e.g. ``ord("a")``, 13 for Enter) -> (label shown,
    ``press(down)`` called with True at the key press and False when it is released, :data:`KEY_HOLD_S`
    later — OpenCV reports no key releases). ``leds()``: ``[(name, (r, g, b), lit), ...]`` now.
    ``help``: one line for the window's title.
    """

    keys: dict[int, tuple[str, Callable[[bool], None]]] = field(default_factory=dict)
    leds: Callable[[], list[tuple[str, tuple[int, int, int], bool]]] | None = None
    help: str = ""


#: How long a keyboard press holds a board key down (OpenCV gives presses only).
KEY_HOLD_S = 0.15
#: Width in panel pixels of the LED strip beside the picture.
LED_STRIP_W = 14


class DisplaySink:
    """Base of all sinks: ``show(rgb)`` one LCD frame, ``close()`` at the end, ``frames_shown``.

    ``closed`` becomes True when the user asked to stop (window sinks) or after ``close()``.
    """

    name = "sink"
    #: True for sinks that write a recording: the board's display (:class:`BoardDisplay`) hands them
    #: one frame per finished picture instead of every change of the panel.
    records = False

    def __init__(self) -> None:
        self.frames_shown = 0
        self.closed = False
        #: Why the sink closed, in words for the run's last line ("ESC pressed in the LCD window").
        self.close_reason = ""
        #: Runner hook, called when the script swallowed a :class:`WindowClosed` (a bare ``except:``)
        #: and used the LCD again; the runner then ends the run itself.
        self.on_close_ignored: Callable[[], None] | None = None
        self._close_errors = 0

    def closed_error(self) -> WindowClosed:
        """The :class:`WindowClosed` to raise for this closed sink (``on_close_ignored`` runs first
        when the script already got one and carried on)."""
        self._close_errors += 1
        if self._close_errors > 1 and self.on_close_ignored is not None:
            self.on_close_ignored()
        return WindowClosed(self.close_reason or f"the LCD output {self.name} is closed")

    def show(self, rgb: np.ndarray) -> None:
        """Take one frame (the sink must not keep a reference: the LCD reuses its buffer)."""
        if self.closed:
            raise self.closed_error()
        self._show(_check_frame(rgb))
        self.frames_shown += 1

    def _show(self, rgb: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def pump(self, delay_ms: int = 1) -> None:
        """Let a window process its events (keys, close button, repaint); a no-op for other sinks."""

    def set_controls(self, controls: BoardControls | None) -> None:
        """The board's keys and LEDs for sinks a person looks at (the window); others ignore them."""

    def close(self) -> None:
        """Finish (finalise files, destroy windows). Safe to call twice."""
        self.closed = True

    def __enter__(self) -> "DisplaySink":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} frames_shown={self.frames_shown}>"


def _check_frame(rgb: np.ndarray) -> np.ndarray:
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise DisplayError(f"a display frame must be an (H, W, 3) uint8 RGB array, got {rgb.dtype} {rgb.shape}")
    return rgb


class NullSink(DisplaySink):
    """Counts frames and drops them (no display, tests, benchmarks of the script alone)."""

    name = "none"

    def _show(self, rgb: np.ndarray) -> None:
        pass


def _lock(path: Path, target: Path) -> int | None:
    """An exclusive OS lock on ``path`` (a file or a folder) held while recording to ``target``.

    Why ``flock``: the OS drops it when the process ends, however it ends, so a killed run never
    leaves a stale lock behind. Returns the descriptor to close, or None where there is no flock.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no second-run check
        return None
    flags = os.O_RDONLY if path.is_dir() else os.O_RDWR | os.O_CREAT
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as e:
        raise DisplayError(f"cannot record to {target}: {e.strerror or e}; {LCD_HINT}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise DisplayError(f"another maixemu run is recording to {target} right now; choose another name "
                           f"(record:OTHER) or wait for it to end") from None
    return fd


def _write_whole(path: Path, data: bytes) -> None:
    """Write a file under a temporary name and rename it: readers (and a killed run) never see half of it."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _unlock(fd: int | None) -> None:
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


class PngFolderSink(DisplaySink):
    """Writes every frame as ``frame_000001.png``, ``frame_000002.png``, ... into a folder.

    Each frame is written under a temporary name and renamed, so a killed run leaves only whole
    pictures. A marker file (``.maixemu-recording.json``) says whether the folder's frames are a
    finished recording: those are replaced by a new run (as a video file would be overwritten), but
    frames of a recording that never finished (the run was killed) or that maixemu did not write
    are refused, never mixed with new ones or deleted.
    """

    records = True
    MARKER = ".maixemu-recording.json"
    FRAME = re.compile(r"frame_\d{6}\.png")

    def __init__(self, folder: str | os.PathLike, *, on_notice: Notice | None = None):
        super().__init__()
        self.folder = Path(folder)
        self.name = f"record:{self.folder}"
        self._notice = on_notice
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DisplayError(f"cannot create the recording folder {self.folder}: {e}; {LCD_HINT}") from None
        self._lock = _lock(self.folder, self.folder)
        try:
            self._clear_earlier_recording()
            self._write_marker("recording")
        except BaseException:
            _unlock(self._lock)
            raise

    def _clear_earlier_recording(self) -> None:
        names = os.listdir(self.folder)
        frames = sorted(n for n in names if self.FRAME.fullmatch(n))
        if not frames:
            return
        try:
            state = json.loads((self.folder / self.MARKER).read_text(encoding="utf-8")).get("state")
        except (OSError, ValueError, AttributeError):
            state = None
        others = [n for n in names if n not in frames and not n.startswith(".")]
        if state != "finished" or others:
            why = ("an earlier recording that did not finish (was the run killed?)" if state == "recording"
                   else "pictures maixemu did not record" if state is None else "other files")
            raise DisplayError(f"cannot record into {self.folder}: it holds {len(frames)} frames "
                               f"({frames[0]} ...) of {why}; record into an empty folder or move them first")
        for name in frames:
            (self.folder / name).unlink()
        if self._notice is not None:
            self._notice(f"maixemu: replaced the {len(frames)} frames of the earlier recording in {self.folder}")

    def _write_marker(self, state: str) -> None:
        _write_whole(self.folder / self.MARKER, json.dumps({"state": state, "frames": self.frames_shown}).encode())

    def _show(self, rgb: np.ndarray) -> None:
        path = self.folder / f"frame_{self.frames_shown + 1:06d}.png"
        ok, data = cv2.imencode(".png", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
        if not ok:
            raise DisplayError(f"cannot encode {path} as PNG")
        try:
            _write_whole(path, data.tobytes())
        except OSError as e:
            raise DisplayError(f"cannot write {path}: {e.strerror or e} (disk full or no permission?)") from None

    def close(self) -> None:
        if not self.closed:
            _tell_if_empty(self, self.folder)
            try:
                if self.frames_shown:
                    self._write_marker("finished")
                else:
                    (self.folder / self.MARKER).unlink(missing_ok=True)
            except OSError:
                pass
            _unlock(self._lock)
            self._lock = None
        super().close()


def _tell_if_empty(sink: DisplaySink, target: Path) -> None:
    """A recording of a run that never drew on the LCD is empty: say so instead of leaving the user
    looking for a video that was never written."""
    notice = getattr(sink, "_notice", None)
    if sink.frames_shown == 0 and notice is not None:
        notice(f"maixemu: the LCD showed no frame; nothing was recorded to {target}")


class _Journal:
    """The frames of a video being recorded, as an MJPEG stream on disk, and how to finish it.

    Why: an .mp4 or .avi is readable only once its index is written at the end, so a run that
    crashes or is killed would lose every frame. A stream of JPEGs has no index: every frame is
    complete on disk once written (OpenCV, ffmpeg and VLC play the journal as it is).
    ``finish`` encodes the journal into the video and removes it; it runs once, from ``close()`` or,
    as a safety net, when the sink is garbage collected or the interpreter exits.
    """

    QUALITY = 95

    def __init__(self, target: Path, fourcc: int, fps: float, *, timed: bool = False):
        self.target = target
        self.path = target.with_name(target.name + ".unfinished.mjpeg")
        self.fourcc, self.fps = fourcc, fps
        self.size: tuple[int, int] | None = None
        self.lengths: list[int] = []  # bytes of each frame, in order
        self.bytes = 0  # their sum
        #: ``timed``: when each frame came and when the recording ended; the video then plays in
        #: real time (:func:`~maixemu.host.video_timing.hold_counts`), else one video frame per frame
        self.times: list[float] | None = [] if timed else None
        self.end: float | None = None
        self._lock = _lock(self.path, target)
        try:
            if self.path.stat().st_size:
                raise DisplayError(
                    f"cannot record to {target}: {self.path} holds the frames of an earlier recording that never "
                    f"finished (was the run killed?); it plays as an MJPEG video: move or delete it first")
            self._handle = open(self.path, "ab")
        except BaseException:
            _unlock(self._lock)
            raise

    def append(self, bgr: np.ndarray, at: float | None = None) -> None:
        if self.times is not None and at is None:
            raise ValueError("a timed recording needs each frame's time")
        ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, self.QUALITY])
        if not ok:
            raise DisplayError(f"cannot encode a frame for {self.target}")
        try:
            self._handle.write(data.tobytes())
            self._handle.flush()  # in the OS's hands: survives the process being killed
        except OSError as e:
            raise DisplayError(f"cannot write {self.path} ({e.strerror or e}: disk full?)") from None
        self.lengths.append(int(data.size))
        self.bytes += int(data.size)
        if self.times is not None and at is not None:
            self.times.append(float(at))

    def finish(self) -> None:
        """Encode the journal into the video, then remove it; on failure the journal stays."""
        try:
            self._handle.close()
            if self.lengths and self.size is not None:
                self._encode()
            self.path.unlink(missing_ok=True)
        finally:
            _unlock(self._lock)
            self._lock = None

    def _encode(self) -> None:
        temporary = self.target.with_name(f".{self.target.stem}.maixemu-encoding{self.target.suffix}")
        size = self.size
        assert size is not None  # (finish() encodes only once a frame gave the size)
        writer = cv2.VideoWriter(str(temporary), self.fourcc, self.fps, size)
        if not writer.isOpened():
            raise DisplayError(f"OpenCV cannot write {self.target} (no {self.target.suffix} encoder in this OpenCV "
                               f"build?); the frames are kept in {self.path}")
        counts = (hold_counts(self.times, self.end, self.fps) if self.times is not None
                  else np.ones(len(self.lengths), dtype=np.int64))
        try:
            with open(self.path, "rb") as journal:
                for length, count in zip(self.lengths, counts.tolist()):
                    data = journal.read(length)
                    if not count:
                        continue  # a picture the video's rate has no room for
                    frame = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
                    if frame is not None:
                        for _ in range(count):
                            writer.write(frame)
        finally:
            writer.release()
        with open(temporary, "ab") as video:  # maixemu's mark: the next run may replace this file
            video.write(outputs.video_mark(self.target.suffix))
        os.replace(temporary, self.target)


class VideoFileSink(DisplaySink):
    """Writes frames into an ``.mp4`` (MPEG-4, ``mp4v``) or ``.avi`` (Motion-JPEG) file.

    The video's size is fixed by the first frame; later frames of another size (``lcd.init`` with a
    different panel) are scaled to it. Odd sizes are padded by one black row/column because common
    codecs need even dimensions. Frames go to an MJPEG journal (``OUT.mp4.unfinished.mjpeg``) as
    they come, and ``close()`` — also when the sink is garbage collected or the interpreter exits —
    encodes them into the video: a run that is killed keeps its frames in the journal, and the next
    run to the same name refuses to start until the user has moved it.

    ``timed=True`` (the IDE page's Record): frames come with their times (:meth:`show_at`, then
    :meth:`end_at`) and the video plays in real time at ``fps``: frames are held or dropped so each
    stays on screen as long as it did (:mod:`maixemu.host.video_timing`). Otherwise every frame is
    one video frame (the LCD recording: one per finished picture).
    """

    records = True

    FOURCC = {".mp4": "mp4v", ".avi": "MJPG"}

    def __init__(self, path: str | os.PathLike, fps: float = RECORD_FPS, *, on_notice: Notice | None = None,
                 overwrite: bool = False, timed: bool = False):
        """``overwrite``: replace a video maixemu did not write (``--overwrite``); without it only an
        earlier recording of maixemu's (its mark at the end, :mod:`maixemu.host.outputs`) is replaced.
        ``timed``: frames come with their moments (:meth:`show_at`) and the video plays in real time."""
        super().__init__()
        self._notice = on_notice
        self.path = Path(path)
        self.name = f"record:{self.path}"
        self.fps = float(fps)
        suffix = self.path.suffix.lower()
        if suffix not in self.FOURCC:
            raise DisplayError(f"cannot record video to {self.path}: use a name ending .mp4 or .avi")
        try:
            outputs.check_file(self.path, "cannot record to", ours=outputs.is_maixemu_video, overwrite=overwrite)
        except outputs.OutputRefused as exc:
            raise DisplayError(str(exc)) from None
        if not self.path.parent.exists():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise DisplayError(f"cannot create {self.path.parent}: {e}") from None
        self._journal = _Journal(self.path, cv2.VideoWriter.fourcc(*self.FOURCC[suffix]), self.fps, timed=timed)
        self._at: float | None = None
        self._finalizer: weakref.finalize | None = weakref.finalize(self, self._journal.finish)

    @property
    def _size(self) -> tuple[int, int] | None:
        return self._journal.size

    @property
    def journal_bytes(self) -> int:
        """Bytes of frames recorded so far (the MJPEG journal's size)."""
        return self._journal.bytes

    def show_at(self, rgb: np.ndarray, at: float) -> None:
        """A frame of a timed recording and the moment it came (seconds of any one clock)."""
        self._at = at
        try:
            self.show(rgb)
        finally:
            self._at = None

    def end_at(self, at: float) -> None:
        """When a timed recording stopped: its last frame is held until then."""
        self._journal.end = float(at)

    def _show(self, rgb: np.ndarray) -> None:
        h, w = rgb.shape[:2]
        if self._journal.size is None:
            self._journal.size = (w + (w & 1), h + (h & 1))
        vw, vh = self._journal.size
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        if (w, h) == (vw, vh):
            frame = bgr
        elif (vw - w, vh - h) in ((1, 0), (0, 1), (1, 1)):  # the odd-size padding of this very panel
            frame = cv2.copyMakeBorder(bgr, 0, vh - h, 0, vw - w, cv2.BORDER_CONSTANT, value=(0, 0, 0))
        else:
            frame = cv2.resize(bgr, (vw, vh), interpolation=cv2.INTER_NEAREST)
        self._journal.append(frame, self._at)

    def close(self) -> None:
        if not self.closed:
            _tell_if_empty(self, self.path)
        if self._finalizer is not None:
            finalizer, self._finalizer = self._finalizer, None
            finalizer()  # encodes the video exactly once
        super().close()


class SinkWrapper(DisplaySink):
    """Another sink behind a wrapper: the inner sink keeps the state (closed, why, frames shown, the
    hook for a swallowed close), and the wrapper reads and forwards it. A caller's own sink needs
    only the methods that are used (``show``; a window's ``pointer`` ...): what it lacks reads as a
    live sink's default."""

    def __init__(self, inner: DisplaySink):
        super().__init__()
        self.inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.records = bool(getattr(inner, "records", False))

    def show(self, rgb: np.ndarray) -> None:
        self.inner.show(rgb)

    def pump(self, delay_ms: int = 1) -> None:
        pump = getattr(self.inner, "pump", None)
        if pump is not None:
            pump(delay_ms)

    def set_controls(self, controls: BoardControls | None) -> None:
        set_controls = getattr(self.inner, "set_controls", None)
        if set_controls is not None:
            set_controls(controls)

    def pointer(self) -> tuple[int, int] | None:
        """The inner sink's pointer (a window's held mouse button), if it has one."""
        pointer = getattr(self.inner, "pointer", None)
        return pointer() if callable(pointer) else None

    @property
    def frames_shown(self) -> int:
        return int(getattr(self.inner, "frames_shown", 0))

    @frames_shown.setter
    def frames_shown(self, value: int) -> None:
        pass  # set by DisplaySink.__init__ only; the inner sink counts

    @property
    def closed(self) -> bool:
        return bool(getattr(self.inner, "closed", False))

    @closed.setter
    def closed(self, value: bool) -> None:
        pass  # set by DisplaySink.__init__ only; the inner sink owns the state

    @property
    def close_reason(self) -> str:
        return str(getattr(self.inner, "close_reason", ""))

    @close_reason.setter
    def close_reason(self, value: str) -> None:
        pass

    @property
    def on_close_ignored(self) -> Callable[[], None] | None:
        return getattr(self.inner, "on_close_ignored", None)

    @on_close_ignored.setter
    def on_close_ignored(self, hook: Callable[[], None] | None) -> None:
        if "inner" in vars(self):  # DisplaySink.__init__ sets None before the inner sink is known
            self.inner.on_close_ignored = hook

    def closed_error(self) -> WindowClosed:
        closed_error = getattr(self.inner, "closed_error", None)
        return closed_error() if closed_error is not None else WindowClosed(f"the LCD output {self.name} is closed")

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()


class TeeSink(SinkWrapper):
    """Another sink, unchanged, plus calls after every frame it shows and every pump.

    For views that follow the LCD (``--show-ai``, the IDE page's LCD pane): ``after_show(rgb)``
    gets the very frame the inner sink got (it must copy what it keeps), ``on_pump()`` runs when the
    LCD pumps events (also while the script sleeps). The inner sink keeps its own state.
    """

    def __init__(self, inner: DisplaySink, after_show: Callable[[np.ndarray], None] | None = None,
                 on_pump: Callable[[], None] | None = None):
        super().__init__(inner)
        self._after_show = after_show
        self._on_pump = on_pump

    def show(self, rgb: np.ndarray) -> None:
        self.inner.show(rgb)
        if self._after_show is not None:
            self._after_show(rgb)

    def pump(self, delay_ms: int = 1) -> None:
        super().pump(delay_ms)
        if self._on_pump is not None:
            self._on_pump()


class BoardDisplay(SinkWrapper):
    """The board's display: decides what a frame of the sink behind it is.

    The LCD shows every change of its panel (:meth:`show`, ``new_picture=True`` when the whole
    screen is redrawn: ``init``, ``clear``, ``display`` without an offset). A live sink (window,
    memory, none) gets every change. A recording sink (``records``) gets one frame per finished
    picture: scripts often call ``lcd.display(img)`` and then ``lcd.draw_string(...)``, and a
    recording that took every change would alternate frames with and without the text (a flicker
    nobody sees on the glass, where the text stays up). So the picture being composed is held and
    written when the next whole-screen picture starts, at a frame boundary (the board wires the
    camera's: :meth:`frame_boundary`), while the script is idle (:meth:`idle`, its sleeps) and when
    the run ends (:meth:`flush`, :meth:`close`).

    ``on_shown(rgb)`` hears every picture the sink got (the board's ``lcd_shown`` event). One
    thread at a time shows (script threads share the display), and nothing once it is closed.
    """

    def __init__(self, inner: DisplaySink, on_shown: Callable[[np.ndarray], None] | None = None):
        super().__init__(inner)
        self.on_shown = on_shown
        self._pending: np.ndarray | None = None
        self._lock = threading.RLock()

    def show(self, rgb: np.ndarray, *, new_picture: bool = False) -> None:
        """One change of the panel (``rgb`` is the panel's buffer: copied when it is kept)."""
        if not self.records:
            with self._lock:
                self.inner.show(rgb)
            self._shown(rgb)
            return
        if new_picture:
            self.flush()
        with self._lock:
            self._pending = np.array(rgb, copy=True)

    def flush(self) -> None:
        """Hand a recording the picture composed so far (nothing when none is pending)."""
        with self._lock:
            frame = self._pending
            if frame is None:
                return
            # Cleared only once shown: a signal handler that finalises the run in between (second
            # Ctrl-C) flushes the same picture instead of losing it; a Ctrl-C raised inside show()
            # leaves it pending for the closing flush.
            try:
                self.inner.show(frame)
            except Exception:  # the sink failed (a full disk): reported once, not again at close
                if self._pending is frame:
                    self._pending = None
                raise
            if self._pending is frame:
                self._pending = None
        self._shown(frame)

    def frame_boundary(self) -> None:
        """A new camera frame is being taken: the picture on the glass is finished."""
        self.flush()

    def idle(self, delay_ms: int = 1) -> None:
        """The script sleeps: its picture is finished, and a window processes its events (ESC, the
        close button) — :class:`WindowClosed` when the user closed it."""
        self.flush()
        self.pump(delay_ms)
        if self.closed:
            raise self.closed_error()

    def close(self) -> None:
        """The last picture, then the sink's own close (never while another thread shows)."""
        with self._lock:
            try:
                self.flush()
            finally:
                super().close()

    def _shown(self, rgb: np.ndarray) -> None:
        if self.on_shown is not None:
            self.on_shown(rgb)


def board_display(sink: DisplaySink) -> BoardDisplay:
    """``sink`` as a board's display (itself when it is one already)."""
    return sink if isinstance(sink, BoardDisplay) else BoardDisplay(sink)


def display_available() -> bool:
    """True when an OpenCV window can be shown: not Linux, or an X11/Wayland display is set.

    A local X display (``:N``) must also have its socket: OpenCV's Qt aborts the whole process
    (losing recordings and the script's output) when it cannot connect, so we check first.
    """
    if not sys.platform.startswith("linux"):
        return True
    x11 = os.environ.get("DISPLAY", "")
    if x11:
        host, _, rest = x11.rpartition(":")
        number = rest.split(".", 1)[0]
        if host in ("", "unix") and number.isdigit():
            return Path(f"/tmp/.X11-unix/X{number}").exists()
        return True
    return bool(os.environ.get("WAYLAND_DISPLAY"))


def _quiet_qt_fonts() -> None:
    """opencv-python's Qt ships no fonts and warns on every window unless told where fonts are."""
    if "QT_QPA_FONTDIR" in os.environ or not sys.platform.startswith("linux"):
        return
    for folder in ("/usr/share/fonts/truetype/dejavu", "/usr/share/fonts/truetype", "/usr/share/fonts"):
        if Path(folder).is_dir():
            os.environ["QT_QPA_FONTDIR"] = folder
            return


class WindowSink(DisplaySink):
    """An OpenCV window showing the LCD. ESC or the window's close button end the run.

    The window is created with the first frame (its size follows the panel); ``scale`` defaults to 2
    for panels up to :data:`SMALL_PANEL_WIDTH` pixels wide and 1 otherwise. Scaling is nearest
    neighbour, so every LCD pixel stays a sharp block of exactly one colour.
    """

    name = "window"

    def __init__(self, title: str = WINDOW_TITLE, scale: int | None = None, *, fallback: Notice | None = None,
                 beside: str | None = None):
        """``fallback``: when set (``--lcd auto``), a window that cannot be created turns the sink into
        a "none" sink after telling ``fallback`` once, instead of raising :class:`DisplayError`.
        ``beside``: the title of a window this one opens to the right of (when that one is open)."""
        super().__init__()
        if not display_available():
            raise DisplayError("no display to open a window on (DISPLAY/WAYLAND_DISPLAY unset or the X server "
                               "is not running); use --lcd record:OUT.mp4 or --lcd none")
        self.title = title
        self.scale = scale
        self.controls: BoardControls | None = None
        self._held: dict[int, float] = {}  # key code -> when its board key is released
        self._created = False
        self._fallback = fallback
        self._disabled = False
        self._beside = beside
        self._shown_scale = 1
        self._pressed_at: tuple[int, int] | None = None  # LCD pixel under the held left button

    def _create(self, w: int, h: int) -> None:
        _quiet_qt_fonts()
        try:
            # GUI_NORMAL: no toolbar/status bar in Qt builds, the window is just the panel.
            cv2.namedWindow(self.title, cv2.WINDOW_AUTOSIZE | cv2.WINDOW_GUI_NORMAL)
        except cv2.error as e:
            detail = (getattr(e, "msg", None) or str(e)).strip().splitlines()[-1:] or ["no detail"]
            raise DisplayError(f"OpenCV cannot open a window ({detail[0]}); "
                               f"is opencv-python-headless installed instead of opencv-python? {LCD_HINT}") from None
        try:
            cv2.setMouseCallback(self.title, self._on_mouse)
        except cv2.error:
            pass  # a window without mouse events: no touches from it
        self._created = True
        if self.controls is not None and self.controls.help:
            try:
                cv2.setWindowTitle(self.title, f"{self.title} - {self.controls.help}")
            except cv2.error:
                pass
        if self._beside:
            scale = self.scale or (2 if w <= SMALL_PANEL_WIDTH else 1)
            leds = self.controls.leds() if self.controls is not None and self.controls.leds is not None else []
            self._move_beside(self._beside, ((w + (LED_STRIP_W if leds else 0)) * scale, h * scale))

    def set_controls(self, controls: BoardControls | None) -> None:
        self.controls = controls

    def _with_led_strip(self, rgb: np.ndarray) -> np.ndarray:
        """The picture with the board's LEDs as a strip on its right (dark: off, colour: lit)."""
        controls = self.controls
        leds = controls.leds() if controls is not None and controls.leds is not None else []
        if not leds:
            return rgb
        h = rgb.shape[0]
        strip = np.full((h, LED_STRIP_W, 3), 24, dtype=np.uint8)
        size = max(2, min(LED_STRIP_W - 4, h // max(1, len(leds)) - 4))
        for i, (_, colour, lit) in enumerate(leds):
            y = 2 + i * (size + 4)
            if y + size > h:
                break
            strip[y:y + size, 2:2 + size] = colour if lit else tuple(c // 6 for c in colour)
        return np.concatenate([rgb, strip], axis=1)

    def _move_beside(self, other: str, size: tuple[int, int]) -> None:
        """Open next to window ``other``: to its right, tops aligned, or under it when the screen is too
        narrow (:func:`maixemu.host.screens.place_beside`): both stay visible (a window manager would
        otherwise stack a new window on the first one)."""
        try:
            x, y, w, h = cv2.getWindowImageRect(other)
            if w > 0:
                cv2.moveWindow(self.title, *screens.place_beside(screens.Rect(x, y, w, h), size, WINDOW_GAP,
                                                                  screens.monitors()))
        except cv2.error:
            pass  # no such window (the LCD records or is off): leave the placement to the desktop

    def _on_mouse(self, event: int, x: int, y: int, flags: int, _param: object = None) -> None:
        held = event in (cv2.EVENT_LBUTTONDOWN, cv2.EVENT_MOUSEMOVE) and bool(flags & cv2.EVENT_FLAG_LBUTTON)
        if event == cv2.EVENT_LBUTTONDOWN or held:
            self._pressed_at = (max(0, x) // self._shown_scale, max(0, y) // self._shown_scale)
        elif event == cv2.EVENT_LBUTTONUP or event == cv2.EVENT_MOUSEMOVE:
            self._pressed_at = None

    def pointer(self) -> tuple[int, int] | None:
        """The LCD pixel the left mouse button holds down in the window (the touch panel's finger)."""
        return self._pressed_at

    def _show(self, rgb: np.ndarray) -> None:
        if self._disabled:
            return
        h, w = rgb.shape[:2]
        if not self._created:
            try:
                self._create(w, h)
            except DisplayError as e:
                if self._fallback is None:
                    raise
                self._fallback(f"maixemu: {e}; the LCD is not shown")
                self._disabled = True
                return
        scale = self.scale or (2 if w <= SMALL_PANEL_WIDTH else 1)
        self._shown_scale = scale
        rgb = self._with_led_strip(rgb)
        w = rgb.shape[1]
        bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
        if scale != 1:
            bgr = cv2.resize(bgr, (w * scale, h * scale), interpolation=cv2.INTER_NEAREST)
        cv2.imshow(self.title, bgr)
        self.pump(1)
        if self.closed:
            raise self.closed_error()

    def pump(self, delay_ms: int = 1) -> None:
        if not self._created or self.closed:
            return
        key = cv2.waitKey(max(1, int(delay_ms)))
        self._board_keys(key)
        if key != -1 and key & 0xFF == _ESC:
            self.closed = True
            self.close_reason = "ESC pressed in the LCD window"
        else:
            try:
                visible = cv2.getWindowProperty(self.title, cv2.WND_PROP_VISIBLE)
            except cv2.error:
                visible = 0
            if visible < 1:
                self.closed = True
                self.close_reason = "the LCD window was closed"
        if self.closed:
            self._destroy()

    def _board_keys(self, key: int) -> None:
        """A keyboard key bound to a board key presses it; it is released :data:`KEY_HOLD_S` later."""
        controls = self.controls
        if controls is None or not controls.keys:
            return
        now = time.monotonic()
        for code, until in list(self._held.items()):
            if now >= until:
                del self._held[code]
                controls.keys[code][1](False)
        code = key & 0xFF if key != -1 else -1
        if code in controls.keys:
            if code not in self._held:
                controls.keys[code][1](True)
            self._held[code] = now + KEY_HOLD_S

    def _destroy(self) -> None:
        if self._created:
            try:
                cv2.destroyWindow(self.title)
                cv2.waitKey(1)
            except cv2.error:
                pass
            self._created = False

    def close(self) -> None:
        self._destroy()
        super().close()


def open_sink(spec: str | None, *, on_notice: Notice = print, overwrite: bool = False) -> DisplaySink:
    """The display sink for a ``--lcd`` value (see the module docstring for the forms).

    Raises :class:`DisplayError` with what to pass instead when the choice cannot be honoured.
    ``None``/``"auto"`` never raises for a missing display: it falls back to ``none`` with one notice.
    ``overwrite`` (``--overwrite``): a video maixemu did not write may be replaced.
    """
    text = (spec or "auto").strip()
    low = text.lower()
    if low == "auto":
        if display_available():
            return WindowSink(fallback=on_notice)
        on_notice("maixemu: no display found (DISPLAY is unset or its X server is not running): the LCD is "
                  "not shown; use --lcd record:OUT.mp4 to save it")
        return NullSink()
    if low == "window":
        return WindowSink()
    if low == "none":
        return NullSink()
    if low.startswith("record:"):
        target = text[len("record:"):].strip()
        if not target:
            raise DisplayError(f"record: needs a path, e.g. record:out.mp4 or record:frames/; {LCD_HINT}")
        path = Path(target).expanduser()
        if path.suffix.lower() in VideoFileSink.FOURCC:
            return VideoFileSink(path, on_notice=on_notice, overwrite=overwrite)
        if path.exists() and not path.is_dir():
            raise DisplayError(f"cannot record into {path}: it is a file but not .mp4/.avi; {LCD_HINT}")
        return PngFolderSink(path, on_notice=on_notice)
    raise DisplayError(f"unknown LCD output {spec!r}; {LCD_HINT}")
