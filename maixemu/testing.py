"""pytest plugin: test MaixPy device code on the PC with scripted camera frames.

Registered through the ``pytest11`` entry point, so any project that has maixemu installed gets two
fixtures (see ``docs/testing.md`` for a worked example):

* ``maixpy`` — a :class:`MaixPyRunner`: ``maixpy.run("main.py", camera=[...], flash={0x300000: m})``
  runs a whole script in-process (fast: no subprocess, models stay cached) and returns a
  :class:`RunResult` with the exit code, printed text, LCD frames as numpy arrays and every KPU call.
* ``maixpy_board`` — a :class:`Board`: the firmware modules (``sensor``, ``image``, ``lcd``, ``KPU``,
  ``time``, ...) on a freshly booted board, for testing functions of your own that take them; while
  it is active ``import sensor`` etc. work in the test module too.

Why in-process: a subprocess per test costs a second of start-up and forgets loaded models; the
runner's :class:`~maixemu.runner.Session` already isolates a run (its own builtins, its own
``__import__``), and :func:`fresh_board` puts every piece of module-level firmware state back to
power-on before and after each run, so runs cannot see each other.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import tempfile
import types
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from .host import camera as camera_mod
from .host.display import DisplaySink
from .runner import FrameBudget, RunEnded, RunOptions, Session

#: What ``camera=`` accepts: a path (image, folder, video), ``"synthetic"``, one HxWx3 RGB array, an
#: NxHxWx3 array, or a sequence mixing image paths and arrays.
CameraSpec = Union[str, os.PathLike, np.ndarray, Sequence[Union[str, os.PathLike, np.ndarray]], None]

#: Default wall-clock limit of one test run (a script that never takes frames must still end).
DEFAULT_TIMEOUT_S = 120.0


# ---------------------------------------------------------------------------------- host adapters
class MemorySink(DisplaySink):
    """Keeps a copy of every LCD frame in memory (``frames``), newest last.

    ``keep`` bounds memory for long runs: only the last ``keep`` frames are kept (``None``: all);
    ``frames_shown`` still counts every frame.
    """

    name = "memory"

    def __init__(self, keep: int | None = None) -> None:
        super().__init__()
        self.keep = keep
        self.frames: list[np.ndarray] = []

    def _show(self, rgb: np.ndarray) -> None:
        self.frames.append(rgb.copy())  # the LCD reuses its buffer
        if self.keep is not None and len(self.frames) > self.keep:
            del self.frames[: len(self.frames) - self.keep]

    def close(self) -> None:  # keep the frames readable after the run
        self.closed = True


class MemoryAudioSink:
    """Keeps every stereo int16 frame the board's I2S sent (``frames``) and the first rate used."""

    name = "memory"

    def __init__(self) -> None:
        self.chunks: list[np.ndarray] = []
        self.rate: int | None = None
        self.frames_written = 0
        self.closed = False

    def write(self, frames: np.ndarray, rate: int) -> None:
        if len(frames):
            self.chunks.append(np.array(frames, dtype=np.int16, copy=True))
            self.rate = self.rate or int(rate)
            self.frames_written += len(frames)

    @property
    def frames(self) -> np.ndarray:
        return np.concatenate(self.chunks) if self.chunks else np.zeros((0, 2), dtype=np.int16)

    def close(self) -> None:  # keep the sound readable after the run
        self.closed = True


def _as_rgb_frame(item: np.ndarray | str | os.PathLike) -> np.ndarray:
    if isinstance(item, np.ndarray):
        arr = item
        if arr.ndim == 2:
            arr = np.repeat(arr[:, :, None], 3, axis=2)
        if arr.ndim != 3 or arr.shape[2] != 3:
            raise ValueError(f"camera frames must be HxWx3 RGB (or HxW gray) arrays, got shape {arr.shape}")
        if arr.dtype != np.uint8:
            if arr.dtype.kind == "f" and arr.size and float(arr.max()) <= 1.0:
                arr = arr * 255.0
            arr = np.clip(np.rint(arr), 0, 255).astype(np.uint8)
        arr = np.ascontiguousarray(arr)
        arr.setflags(write=False)
        return arr
    frame = camera_mod._read_image(Path(item))
    if frame is None:
        raise ValueError(f"camera frame {item}: not an image OpenCV or Pillow can read")
    frame.setflags(write=False)
    return frame


class ArraySource(camera_mod.FrameSource):
    """Camera frames from memory: each ``read()`` returns the next one, looping at the end.

    Looping matches the folder and video sources of ``maixemu run``; the frame budget (by default
    exactly one pass) decides how many the script gets.
    """

    def __init__(self, frames: Sequence[np.ndarray | str | os.PathLike]):
        if len(frames) == 0:
            raise ValueError("camera= got an empty list of frames")
        self.frames = [_as_rgb_frame(f) for f in frames]
        self.name = f"{len(self.frames)} scripted frame(s)"
        self.index = 0

    def read(self) -> np.ndarray:
        frame = self.frames[self.index % len(self.frames)]
        self.index += 1
        return frame


def _frame_list(camera: CameraSpec) -> list | None:
    """The frames of an in-memory camera spec, or None for specs ``maixemu run --camera`` takes."""
    if isinstance(camera, np.ndarray):
        return list(camera) if camera.ndim == 4 else [camera]
    if isinstance(camera, (list, tuple)):
        return list(camera)
    return None


def _one_pass(camera: CameraSpec) -> int | None:
    """How many frames one pass over the camera source is (the default frame budget), if finite."""
    frames = _frame_list(camera)
    if frames is not None:
        return len(frames)
    if camera is None or (isinstance(camera, str) and camera.strip().lower() in ("synthetic", "auto", "")):
        return None
    path = Path(camera)
    if path.is_dir():
        return sum(1 for p in path.iterdir() if p.is_file() and p.suffix.lower() in camera_mod.IMAGE_SUFFIXES) or None
    if path.is_file() and path.suffix.lower() in camera_mod.IMAGE_SUFFIXES:
        return 1
    if path.is_file():
        import cv2

        cap = cv2.VideoCapture(str(path))
        count = int(cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0)
        cap.release()
        return count or None
    return None


def _source_factory(camera: CameraSpec, on_notice) -> Any:
    frames = _frame_list(camera)
    if frames is not None:
        return lambda: ArraySource(frames)
    if camera is None:
        return lambda: camera_mod.SyntheticSource()  # never the webcam in a test
    return lambda: camera_mod.open_source(os.fspath(camera), on_notice=on_notice)


#: What ``keys=`` accepts: ``{camera frame: key}`` with a key being a ``board_info`` name
#: (``"BOOT_KEY"``; ``"BOOT"`` works too), a physical pin number, or ``(key, frames_held)``.
KeySpec = Union[str, int, tuple]


class KeyPresses:
    """Scripted key presses at camera frames: pressed when frame N is taken, released ``held`` frames later.

    Keys are the board's active-low buttons: "pressed" drives the pin to 0 and "released" back to 1,
    through :func:`maixemu.firmware.Maix.gpio.set_input`, so a script's GPIO IRQ handlers run (falling
    edge at the press, rising edge at the release) and ``key.value()`` reads 0 in between, exactly
    as if someone pressed the key while that frame was on screen.
    """

    def __init__(self, keys: Mapping[int, KeySpec]):
        self.events: dict[int, list[tuple[str | int, int]]] = {}
        for frame, spec in sorted(keys.items()):
            key, held = (spec if isinstance(spec, tuple) else (spec, 1))
            if int(frame) < 1 or int(held) < 1:
                raise ValueError(f"keys={{{frame}: {spec!r}}}: frames count from 1 and a press lasts at least 1 frame")
            self.events.setdefault(int(frame), []).append((key, 0))
            self.events.setdefault(int(frame) + int(held), []).append((key, 1))
        self.pressed: list[tuple[int, str | int]] = []

    @staticmethod
    def _pin(key: str | int) -> str | int:
        if isinstance(key, str):
            from .firmware import board

            if not hasattr(board.board_info, key) and hasattr(board.board_info, key + "_KEY"):
                return key + "_KEY"
        return key

    def on_frame(self, frame: int) -> None:
        from .firmware.Maix import gpio

        for key, level in self.events.get(frame, ()):
            gpio.set_input(self._pin(key), level)
            if level == 0:
                self.pressed.append((frame, key))


# ---------------------------------------------------------------------------------- board state
def fresh_board() -> None:
    """Put every piece of module-level firmware state back to power-on (before and after a run).

    ``registry.reset_state`` covers the helper modules; the camera, panel, KPU model budget and
    call log keep their own state, reset here too so a test never sees the previous test's board.
    """
    from .firmware import KPU, audio_device, kpu_calls, kpu_loader, lcd, registry, sensor

    registry.reset_state()
    audio_device.configure()
    sensor.configure(source_factory=None, frame_hook=None, windowing=None)
    lcd.configure(sink=None, frame_hook=None)
    KPU.configure(ai_memory="device", firmware="full")
    kpu_loader.budget.used.clear()
    kpu_calls.configure()
    kpu_calls.input_listeners.clear()


class _InProcessBudget(FrameBudget):
    """The runner's frame budget without its last resort ``os._exit`` (which would end pytest itself).

    A script that swallows :class:`RunEnded` simply gets it again on every later frame request.
    """

    def _check(self, count: int) -> None:
        if self.limit is None or count <= self.limit:
            return
        self.ended = True
        raise RunEnded(f"frame budget of {self.limit} frames reached")


class _TestSession(Session):
    """A :class:`Session` whose camera, LCD and KPU log stay in memory."""

    #: pytest keeps its own signals; only SIGTERM ends a run (issue 11 puts pytest fully in charge)
    FATAL_SIGNALS = ("SIGTERM",)

    def __init__(self, options: RunOptions, camera: CameraSpec, sink: MemorySink, *, keep_ai: bool,
                 keys: KeyPresses | None = None, given_folders: frozenset[str] = frozenset(),
                 audio_sink: MemoryAudioSink | None = None):
        self.notices: list[str] = []
        self.keys = keys
        self.audio_sink = audio_sink or MemoryAudioSink()
        super().__init__(options, stdout=sys.stdout, stderr=sys.stderr)
        self.budget = _InProcessBudget(options.frames, self.finalize)
        self.memory_sink = sink
        self.camera = camera
        self.keep_ai = keep_ai
        self.kpu_calls: list[dict[str, Any]] = []
        self.kpu_inputs: list[np.ndarray] = []
        self.given_folders = given_folders

    def _announce_storage(self, store) -> None:
        """Fresh per-run folders are the test's own: only folders the test passed are worth a notice."""
        given = [f"/{name} is {store.mount(name).root}" for name in ("sd", "flash") if name in self.given_folders]
        if given:
            self.notice(" and ".join(given) + ": the script's writes and deletions change the files there")

    def notice(self, message: str) -> None:
        self.notices.append(message.removeprefix("maixemu: "))
        super().notice(message)

    def _stop_now(self, why: str, exit_code: int) -> None:
        """The command line leaves the process when a script swallows an end request; a test must not."""
        self.notice(f"{why} and the script caught the end request; ending it again")
        import signal

        if hasattr(signal, "setitimer") and "timeout" in why:  # keep asking until the script gives up
            signal.setitimer(signal.ITIMER_REAL, getattr(self, "END_GRACE_S", 2.0))
            self._alarm_armed = True
        raise RunEnded(why, exit_code)

    def _setup_devices(self) -> None:
        super()._setup_devices()
        from .firmware import kpu_calls, lcd, sensor

        lcd.configure(sink=self.memory_sink, frame_hook=self.budget.on_lcd_frame)
        self.sink = self.memory_sink  # what the runner reports LCD failures against
        make = _source_factory(self.camera, self.notice)

        def source_factory():
            source = make()
            self._finalizers.append(source.close)
            return source

        frame_hook = self.budget.on_snapshot
        if self.keys is not None:
            keys, budget = self.keys, self.budget

            def frame_hook() -> None:
                budget.on_snapshot()
                keys.on_frame(budget.snapshots)

        sensor.configure(source_factory=source_factory, frame_hook=frame_hook)
        from .firmware import audio_device
        from .host import audio as host_audio

        audio_in = self.options.audio_in
        audio_device.configure(sink_factory=lambda: self.audio_sink,
                               source_factory=lambda: host_audio.open_source(audio_in, on_notice=self.notice))
        kpu_calls.configure(str(self.options.kpu_log) if self.options.kpu_log else None, keep=True)
        if self.keep_ai:
            listener = lambda ai, call: self.kpu_inputs.append(np.array(ai, copy=True))  # noqa: E731
            kpu_calls.input_listeners.append(listener)
            self._finalizers.append(lambda: kpu_calls.input_listeners.remove(listener))
        # Finalizers run newest first: collect the calls before the runner's own reset clears them.
        self._finalizers.append(lambda: self.kpu_calls.extend(kpu_calls.calls))


# ---------------------------------------------------------------------------------- results
@dataclass
class RunResult:
    """What one script run did, for assertions."""

    exit_code: int
    stdout: str
    stderr: str
    lcd_frames: list[np.ndarray]
    kpu_calls: list[dict[str, Any]]
    notices: list[str]
    snapshots: int
    budget_spent: bool
    sd_dir: Path
    flash_dir: Path
    kpu_inputs: list[np.ndarray] = field(default_factory=list)
    #: Stereo int16 frames the script sent out over I2S (``(N, 2)``) and the rate they ran at.
    audio: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int16))
    audio_rate: int | None = None
    #: ``(camera frame, key)`` of every scripted key press that happened (``keys=``).
    key_presses: list[tuple[int, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    @property
    def lines(self) -> list[str]:
        """The script's printed lines (stdout)."""
        return self.stdout.splitlines()

    @property
    def lcd(self) -> np.ndarray | None:
        """The last LCD frame (H, W, 3) RGB, or None when the script never drew."""
        return self.lcd_frames[-1] if self.lcd_frames else None

    def calls(self, call: str | None = None) -> list[dict[str, Any]]:
        """The KPU calls, optionally only one kind (``"kpu.forward"``, ``"kpu.run_yolo2"``)."""
        return [c for c in self.kpu_calls if call is None or c["call"] == call]

    def detections(self) -> list[list[dict[str, Any]]]:
        """Boxes of each ``kpu.run_yolo2`` call: ``[{"rect": [x, y, w, h], "classid", "value"}, ...]``."""
        return [c["boxes"] for c in self.calls("kpu.run_yolo2")]

    def check(self) -> "RunResult":
        """Raise AssertionError with the script's stderr unless it ended cleanly; returns self."""
        if self.exit_code != 0:
            raise AssertionError(f"the script exited with {self.exit_code}:\n{self.stderr}")
        return self


# ---------------------------------------------------------------------------------- runner
class MaixPyRunner:
    """Runs device scripts in-process with scripted frames (the ``maixpy`` fixture).

    ``workdir`` holds the default ``/sd`` and ``/flash`` folders and scripts given as text.
    """

    def __init__(self, workdir: str | os.PathLike):
        self.workdir = Path(workdir)
        self._runs = 0

    def run(
        self,
        script: str | os.PathLike | None = None,
        *,
        code: str | None = None,
        camera: CameraSpec = None,
        frames: int | None = None,
        sd: str | os.PathLike | None = None,
        flash_dir: str | os.PathLike | None = None,
        flash: Mapping[int, str | os.PathLike] | None = None,
        flash_image: str | os.PathLike | None = None,
        files: Mapping[str, str | bytes | os.PathLike] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT_S,
        ai_memory: str = "device",
        firmware: str = "full",
        argv: Iterable[str] = (),
        keep_lcd: int | None = None,
        keep_ai: bool = False,
        keys: Mapping[int, KeySpec] | None = None,
        audio_in: str | os.PathLike | None = None,
        debug: bool = False,
    ) -> RunResult:
        """Run ``script`` (a path) or ``code`` (script text) once and return what happened.

        * ``camera``: image path, folder, video, ``"synthetic"``, an HxWx3 RGB array, an NxHxWx3
          array or a list of paths/arrays (looped). Default: the synthetic pattern, never a webcam.
        * ``frames``: the frame budget (``--frames``); default one pass over ``camera`` when that is
          a list, an image, a folder or a video, else no budget (``timeout`` still applies).
        * ``sd``/``flash_dir``: folders seen as ``/sd`` and ``/flash`` — as with ``maixemu run --sd``,
          the script's writes change them (said in ``result.notices``). Default: fresh empty folders
          per run (``result.sd_dir``/``result.flash_dir``), so a script's writes never reach your
          files; ``files`` copies ``{"/sd/labels.txt": "text" | b"bytes" | Path}`` into them first.
        * ``flash``: ``{0x300000: "face.kmodel"}`` for ``kpu.load(address)``; ``flash_image``: a
          ``.kfpkg`` whose files are mapped at the addresses its ``flash-list.json`` gives.
        * ``keep_lcd``: keep only the last N LCD frames; ``keep_ai``: keep a copy of every AI buffer
          the KPU read (``result.kpu_inputs``, CHW uint8).
        * ``keys``: scripted key presses, ``{5: "BOOT_KEY"}`` presses BOOT when camera frame 5 is
          taken and releases it at frame 6; ``{5: ("BOOT_KEY", 40)}`` holds it 40 frames (see
          :class:`KeyPresses`). Presses made are in ``result.key_presses``.
        * ``audio_in``: what the microphone hears (``"silence"``, ``"tone:1000"``, a WAV path, as
          ``--audio-in``); everything played over I2S is in ``result.audio`` / ``result.audio_rate``.
        """
        self._runs += 1
        run_dir = self.workdir / f"run{self._runs}"
        run_dir.mkdir(parents=True, exist_ok=True)
        if (script is None) == (code is None):
            raise TypeError("give either a script path or code=")
        if code is not None:
            script_path = run_dir / "main.py"
            script_path.write_text(code, encoding="utf-8")
        else:
            script_path = Path(script)
        sd_dir = Path(sd) if sd is not None else run_dir / "sd"
        flash_path = Path(flash_dir) if flash_dir is not None else run_dir / "flash"
        for folder in (sd_dir, flash_path):
            folder.mkdir(parents=True, exist_ok=True)
        _copy_files(files or {}, sd_dir, flash_path)
        if frames is None:
            frames = _one_pass(camera)
        options = RunOptions(
            script=script_path,
            camera=None,
            lcd="none",
            sd_dir=sd_dir,
            flash_dir=flash_path,
            flash={int(a): Path(p) for a, p in (flash or {}).items()},
            flash_image=Path(flash_image) if flash_image is not None else None,
            frames=frames,
            timeout=timeout,
            ai_memory=ai_memory,
            firmware=firmware,
            debug=debug,
            audio_in=None if audio_in is None else os.fspath(audio_in),
            argv=list(argv),
        )
        sink = MemorySink(keep_lcd)
        presses = KeyPresses(keys) if keys else None
        given = frozenset(name for name, value in (("sd", sd), ("flash", flash_dir)) if value is not None)
        audio_sink = MemoryAudioSink()
        session = _TestSession(options, camera, sink, keep_ai=keep_ai, keys=presses, given_folders=given,
                               audio_sink=audio_sink)
        out, err = io.StringIO(), io.StringIO()
        fresh_board()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                session.stdout, session.stderr = out, err
                exit_code = session.run()
        finally:
            fresh_board()
        return RunResult(
            exit_code=exit_code,
            stdout=out.getvalue(),
            stderr=err.getvalue(),
            lcd_frames=sink.frames,
            kpu_calls=session.kpu_calls,
            notices=session.notices,
            snapshots=session.budget.snapshots,
            budget_spent=session.budget.ended,
            sd_dir=sd_dir,
            flash_dir=flash_path,
            kpu_inputs=session.kpu_inputs,
            key_presses=list(presses.pressed) if presses else [],
            audio=audio_sink.frames,
            audio_rate=audio_sink.rate,
        )


def _copy_files(files: Mapping[str, str | bytes | os.PathLike], sd_dir: Path, flash_dir: Path) -> None:
    roots = {"sd": sd_dir, "flash": flash_dir}
    for device_path, content in files.items():
        mount, _, rest = device_path.strip("/").partition("/")
        if mount not in roots or not rest or ".." in rest.split("/"):
            raise ValueError(f"files= keys are device paths under /sd or /flash, got {device_path!r}")
        target = roots[mount] / rest
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        elif isinstance(content, str):
            target.write_text(content, encoding="utf-8")
        else:
            target.write_bytes(Path(content).read_bytes())


# ---------------------------------------------------------------------------------- import mode
class Board:
    """The firmware modules of a freshly booted board, for calling device code directly from a test.

    ``board.sensor``, ``board.image``, ``board.lcd``, ``board.KPU``, ``board.time``, ... are the
    modules a MaixPy script would import (``board.module("Maix")`` for any other name). While the
    board is active the names that do not shadow CPython modules are also importable
    (``import sensor``); ``time``/``os``/``sys``/``gc`` stay CPython's — use ``board.time``.
    """

    def __init__(self, workdir: Path, *, camera: CameraSpec, flash: Mapping[int, str | os.PathLike],
                 ai_memory: str, firmware: str):
        self.workdir = workdir
        self.sd_dir = workdir / "sd"
        self.flash_dir = workdir / "flash"
        self._camera = camera
        self._flash = {int(a): Path(p) for a, p in flash.items()}
        self._ai_memory = ai_memory
        self._firmware = firmware
        self.sink = MemorySink()
        self._installed: dict[str, types.ModuleType | None] = {}
        self._previous_storage = None

    @property
    def lcd_frames(self) -> list[np.ndarray]:
        return self.sink.frames

    @property
    def kpu_calls(self) -> list[dict[str, Any]]:
        from .firmware import kpu_calls

        return kpu_calls.calls

    def module(self, name: str) -> types.ModuleType:
        """The module a script's ``import name`` gets (``"sensor"``, ``"time"``, ``"Maix"``...)."""
        from .firmware import registry

        target = registry.MAIXPY_MODULES.get(name)
        if target is None:
            raise KeyError(f"{name!r} is not a MaixPy module maixemu provides")
        return importlib.import_module(target)

    def __getattr__(self, name: str) -> types.ModuleType:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self.module(name)
        except KeyError:
            raise AttributeError(name) from None

    def set_camera(self, camera: CameraSpec) -> None:
        """Change the scripted camera (the next ``sensor.reset()`` opens it)."""
        from .firmware import sensor

        self._camera = camera
        sensor.configure(source_factory=_source_factory(camera, print))

    def __enter__(self) -> "Board":
        from .firmware import KPU, kpu_calls, lcd, registry
        from .host import storage
        from .runner import DEMO_MODEL, DEMO_MODEL_ADDRESS

        fresh_board()
        for folder in (self.sd_dir, self.flash_dir):
            folder.mkdir(parents=True, exist_ok=True)
        flash_map = {DEMO_MODEL_ADDRESS: DEMO_MODEL, **self._flash}
        self._previous_storage = storage._current
        storage.install(storage.Storage(sd_dir=self.sd_dir, flash_dir=self.flash_dir, cwd="/sd", flash_map=flash_map))
        lcd.configure(sink=self.sink)
        self.set_camera(self._camera)
        KPU.configure(ai_memory=self._ai_memory, firmware=self._firmware)
        kpu_calls.configure(keep=True)
        for name, target in registry.MAIXPY_MODULES.items():
            if name in registry.SHADOWS_STDLIB:
                continue
            self._installed[name] = sys.modules.get(name)
            sys.modules[name] = importlib.import_module(target)
        return self

    def __exit__(self, *exc: object) -> None:
        from .host import storage

        for name, previous in self._installed.items():
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous
        self._installed.clear()
        fresh_board()
        storage.install(self._previous_storage)


@contextlib.contextmanager
def board(workdir: str | os.PathLike | None = None, *, camera: CameraSpec = None,
          flash: Mapping[int, str | os.PathLike] | None = None, ai_memory: str = "device",
          firmware: str = "full") -> Iterator[Board]:
    """A freshly booted board for in-process tests (``with board(camera=[img]) as b: b.sensor...``)."""
    with contextlib.ExitStack() as stack:
        folder = Path(workdir) if workdir is not None else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        yield stack.enter_context(Board(folder, camera=camera, flash=flash or {}, ai_memory=ai_memory,
                                        firmware=firmware))


# The fixtures themselves live in maixemu.pytest_plugin (registered with pytest11), which imports
# this module only when a test uses them.


__all__ = ["ArraySource", "Board", "KeyPresses", "MaixPyRunner", "MemorySink", "RunResult", "board", "fresh_board"]
