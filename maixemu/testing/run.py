"""``maixpy.run(...)``: a whole MaixPy script in-process, with scripted camera frames, keys and storage.

Why in-process: a subprocess per test costs a second of start-up and forgets loaded models. Every
run builds its own board (:class:`maixemu.session.Board`: a power-on reset), so runs cannot see
each other, and pytest stays in charge of the process (no signal handler of its own but a Ctrl-C
that chains to pytest's; the ``timeout=`` holds even against a script's bare ``except:``).
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Union

import numpy as np

from ..host import camera as camera_mod
from ..host.display import DisplaySink
from ..session.board import Board, Plugs
from ..session.keys import KeyPresses, KeySpec, LedWatch
from ..session.lifecycle import execute
from ..session.motion import ImuScript
from ..session.project import load_project
from ..session.spec import RunSpec, given_by_plugin, inherited_by_tests, plugin_help, with_plugin_signature
from ..session.summary import RunSummary

#: What ``camera=`` accepts: a path (image, folder, video), ``"synthetic"``, one HxWx3 RGB array, an
#: NxHxWx3 array, or a sequence mixing image paths and arrays.
CameraSpec = Union[str, os.PathLike, np.ndarray, Sequence[Union[str, os.PathLike, np.ndarray]], None]

#: Default wall-clock limit of one test run (a script that never takes frames must still end).
DEFAULT_TIMEOUT_S = 120.0


#: The plugin's own defaults under the project file and a test's arguments: never a webcam, and a
#: time limit (a script that never takes frames must still end).
TEST_DEFAULTS = RunSpec(camera="synthetic", timeout=DEFAULT_TIMEOUT_S)


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
    if isinstance(camera, Sequence) and not isinstance(camera, str):
        return list(camera)
    return None


def _one_pass(camera: CameraSpec) -> int | None:
    """How many frames one pass over the camera source is (the default frame budget), if finite."""
    frames = _frame_list(camera)
    if frames is not None:
        return len(frames)
    if not isinstance(camera, (str, os.PathLike)) or (isinstance(camera, str)
                                                      and camera.strip().lower() in ("synthetic", "auto", "")):
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
    assert isinstance(camera, (str, os.PathLike))  # (the in-memory forms are frame lists above)
    path = os.fspath(camera)
    return lambda: camera_mod.open_source(path, on_notice=on_notice)


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
    #: the board profile the run used (``board=``), the last level of each of its LEDs
    #: (``{"LED_R": 0, ...}``, None: never written; the LEDs are active low), and every LED write as
    #: ``(camera frames taken so far, LED name, level)``
    board: str = "default"
    leds: dict[str, int | None] = field(default_factory=dict)
    led_changes: list[tuple[int, str, int]] = field(default_factory=list)
    #: bytes the script wrote on each UART, by firmware name (``{"UART1": b"..."}``)
    uart_sent: dict[str, bytes] = field(default_factory=dict)
    #: the run's closing line as values: how it ended, frames, seconds, ``pc_fps``, ``kpu_calls``,
    #: ``device_ms`` (the K210 estimate), ``recording``, ``writes`` (:class:`maixemu.session.RunSummary`)
    summary: RunSummary | None = None
    #: the script file that ran (a ``code=`` run's is written in the run's folder)
    script: Path | None = None

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
        """Raise AssertionError unless the script ended cleanly (exit 0); returns self.

        The message is what a failing test needs (:meth:`failure`): pytest shows it at the test's
        own line, without this method's frame or the result's long repr.
        """
        __tracebackhide__ = True
        if self.exit_code != 0:
            raise AssertionError(self.failure())
        return self

    def failure(self) -> str:
        """Why the run failed, in a few lines: the error and its script line first (the line pytest's
        short summary shows), then the script's stderr with the source line under each frame of the
        script's traceback (MicroPython prints none), without the run's closing line."""
        closing = f"[maixemu] {self.summary.line()}" if self.summary is not None else None
        body = [line for line in self.stderr.rstrip("\n").splitlines() if line != closing]
        where = ""
        error = next((line for line in reversed(body) if line and not line.startswith(("[maixemu]", " "))), "")
        shown: list[str] = []
        for line in body:
            shown.append(line)
            frame = re.match(r'\s*File "(/(?:sd|flash)/[^"]+)", line (\d+)', line)
            if frame:
                source = self._script_line(frame.group(1), int(frame.group(2)))
                where = f" ({frame.group(1)}, line {frame.group(2)})"
                if source:
                    shown.append(f"    {source}")
        head = f"{error}{where}" if error else (self.summary.ended if self.summary is not None else "the run failed")
        return f"{head} — exit {self.exit_code}\n" + "\n".join(shown)

    def _script_line(self, device_path: str, number: int) -> str:
        """Line ``number`` of a script file the run saw at ``device_path`` (``/sd/main.py``)."""
        root, _, rest = device_path.lstrip("/").partition("/")
        folder = {"sd": self.sd_dir, "flash": self.flash_dir}.get(root)
        found = folder / rest if folder is not None else None
        if (found is None or not found.is_file()) and self.script is not None and Path(rest).name == self.script.name:
            found = self.script  # the script itself, shown at /sd/ as the board runs it from the card
        try:
            lines = found.read_text(encoding="utf-8", errors="replace").splitlines() if found is not None else []
        except OSError:
            return ""
        return lines[number - 1].strip() if 0 < number <= len(lines) else ""


# ---------------------------------------------------------------------------------- runner
class MaixPyRunner:
    """Runs device scripts in-process with scripted frames (the ``maixpy`` fixture).

    ``workdir`` holds the default ``/sd`` and ``/flash`` folders and scripts given as text.
    """

    def __init__(self, workdir: str | os.PathLike):
        self.workdir = Path(workdir)
        self._runs = 0

    @with_plugin_signature
    def run(
        self,
        script: str | os.PathLike | None = None,
        *,
        code: str | None = None,
        camera: CameraSpec = None,
        files: Mapping[str, str | bytes | os.PathLike] | None = None,
        argv: Iterable[str] = (),
        keep_lcd: int | None = None,
        keep_ai: bool = False,
        keys: Mapping[int, KeySpec] | None = None,
        clock: tuple[Callable[[], int], Callable[[int], None]] | None = None,
        uart: Mapping[Any, Any] | None = None,
        imu: Mapping[int, Mapping[str, Any]] | None = None,
        i2c: Mapping[tuple[int, int], str] | None = None,
        **options: Any,
    ) -> RunResult:
        """Run ``script`` (a path) or ``code`` (script text) once and return what happened.

        The run options are ``maixemu run``'s, as keywords (:class:`maixemu.session.spec.RunSpec`;
        each is listed below the ones only a test has):

        * ``camera``: image path, folder, video, ``"synthetic"``, an HxWx3 RGB array, an NxHxWx3
          array or a list of paths/arrays (looped). Default: the synthetic pattern, never a webcam.
        * ``frames``: the frame budget (``--frames``); default one pass over ``camera`` when that is
          a list, an image, a folder or a video, else no budget (``timeout`` still applies).
        * ``sd``/``flash_dir``: folders seen as ``/sd`` and ``/flash`` — as with ``maixemu run --sd``,
          the script's writes change them (said in ``result.notices``). Default: fresh empty folders
          per run (``result.sd_dir``/``result.flash_dir``), so a script's writes never reach your
          files; ``files`` copies ``{"/sd/labels.txt": "text" | b"bytes" | Path}`` into them first.
        * ``keep_lcd``: keep only the last N LCD frames; ``keep_ai``: keep a copy of every AI buffer
          the KPU read (``result.kpu_inputs``, CHW uint8).
        * ``keys``: scripted key presses, ``{5: "BOOT_KEY"}`` presses BOOT when camera frame 5 is
          taken and releases it at frame 6; ``{5: ("BOOT_KEY", 40)}`` holds it 40 frames (see
          :class:`KeyPresses`). Presses made are in ``result.key_presses``.
        * ``audio_in``: what the microphone hears (as ``--audio-in``); everything played over I2S is
          in ``result.audio`` / ``result.audio_rate``.
        * ``clock``: ``(now_ns, sleep_ns)``, a virtual clock for the board (``time.ticks_ms()`` reads
          ``now_ns()`` nanoseconds since power-on, ``time.sleep`` calls ``sleep_ns(ns)``).
        * ``board``: LED levels are in ``result.leds``/``result.led_changes``.
        * ``uart``: what is on the other end of UARTs: ``{1: b"AT\\r\\n"}`` (bytes waiting on
          ``UART.UART1`` from power-on) or ``{1: callable}`` (called with every write, may answer
          bytes). Written bytes: ``result.uart_sent``.
        * ``imu``: what the board's motion sensors feel from camera frame N on (0: from power-on):
          ``{0: {"accel": (0, 0, 1), "gyro": (0, 0, 0), "temperature": 25.0}}`` in g, °/s and °C
          (default: at rest); ``i2c``: chips plugged into SCL/SDA pins, ``{(10, 11): "MPU6050"}``
          (``"MPU6886"``, ``"SH200Q"`` too; see :mod:`maixemu.firmware.imu`).
        * ``quiet``: no ``[maixemu]`` hints after device messages (``--quiet``); notices still reach
          ``result.notices``.
        * ``timeout``: default :data:`DEFAULT_TIMEOUT_S`; ``None``: no limit.

        The project file (``maixemu.toml`` or ``[tool.maixemu]``, of the script's own project —
        :func:`maixemu.session.project.project_folders` — or of the working directory for ``code=``) gives the defaults of the options a test inherits
        (:func:`maixemu.session.spec.inherited_by_tests`); the arguments given here win.

        Every option keyword:

        {options}
        """
        self._runs += 1
        run_dir = self.workdir / f"run{self._runs}"
        run_dir.mkdir(parents=True, exist_ok=True)
        if (script is None) == (code is None):
            raise TypeError("give either a script path or code=")
        script_path = Path(script) if script is not None else run_dir / "main.py"
        if code is not None:
            script_path.write_text(code, encoding="utf-8")
        scripted = _frame_list(camera)
        given = given_by_plugin(options if scripted is not None or camera is None else {**options, "camera": camera})
        project = load_project(script_path.resolve().parent if script is not None else Path.cwd())
        spec = TEST_DEFAULTS.merged(inherited_by_tests(project.values) if project is not None else None, given)
        if spec.frames is None:
            spec = replace(spec, frames=_one_pass(scripted if scripted is not None else spec.camera))
        sd_dir = spec.sd_dir if spec.sd_dir is not None else run_dir / "sd"
        flash_path = spec.flash_dir if spec.flash_dir is not None else run_dir / "flash"
        for folder in (sd_dir, flash_path):
            folder.mkdir(parents=True, exist_ok=True)
        _copy_files(files or {}, sd_dir, flash_path)
        sink = MemorySink(keep_lcd)
        presses = KeyPresses(keys) if keys else None
        motion = ImuScript(imu, i2c) if imu or i2c else None
        leds: list[LedWatch] = []
        kpu_inputs: list[np.ndarray] = []
        audio_sink = MemoryAudioSink()
        out, err = io.StringIO(), io.StringIO()
        notices: list[str] = []

        def watch(board: Board) -> None:
            """The test's own views of the run: scripted keys and motion, LED writes, the AI buffers the KPU read."""
            budget = board.budget
            assert budget is not None
            if presses is not None:
                presses.attach(board.state, budget)
            if motion is not None:
                motion.attach(board.state, budget)
            leds.append(LedWatch(board.state, budget))
            if keep_ai:
                board.state.events.kpu_input.append(lambda ai, call: kpu_inputs.append(np.array(ai, copy=True)))

        plugs = Plugs(stdout=out, stderr=err, display=sink, audio_out=lambda: audio_sink, sd_dir=sd_dir,
                      flash_dir=flash_path, keep_kpu_calls=True, clock=clock, uart_input=dict(uart or {}))
        if scripted is not None:
            plugs.camera = _source_factory(scripted, notices.append)
        record = execute(spec, script_path, argv=argv, plugs=plugs, services=[watch], listeners=[notices.append])
        if record.interrupted:
            raise KeyboardInterrupt  # Ctrl-C belongs to pytest: the session stops, as without the plugin
        board, budget = record.board, record.budget
        return RunResult(
            exit_code=record.exit_code,
            stdout=out.getvalue(),
            stderr=err.getvalue(),
            lcd_frames=sink.frames,
            kpu_calls=list(board.state.kpu.log.calls) if "kpu" in vars(board.state) else [],
            notices=notices,
            snapshots=budget.snapshots,
            budget_spent=budget.ended,
            sd_dir=sd_dir,
            flash_dir=flash_path,
            kpu_inputs=kpu_inputs,
            audio=audio_sink.frames,
            audio_rate=audio_sink.rate,
            key_presses=list(presses.pressed) if presses else [],
            board=board.state.pins.profile,
            leds=leds[0].levels() if leds else {},
            uart_sent=_uart_sent(board),
            led_changes=list(leds[0].changes) if leds else [],
            summary=record.summary,
            script=script_path,
        )

    if run.__doc__:
        run.__doc__ = run.__doc__.replace("{options}", plugin_help().replace("\n", "\n        "))


def _uart_sent(board: Board) -> dict[str, bytes]:
    if "uart" not in vars(board.state):
        return {}
    names = {0: "UART1", 1: "UART2", 2: "UART3", 4: "UARTHS"}  # the firmware's numbers (firmware.uart_bus.UART_IDS)
    return {names.get(device, str(device)): bytes(data) for device, data in sorted(board.state.uart.sent.items())
            if data}


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


__all__ = ["ArraySource", "CameraSpec", "DEFAULT_TIMEOUT_S", "KeyPresses", "KeySpec", "MaixPyRunner",
           "MemoryAudioSink", "MemorySink", "RunResult"]
