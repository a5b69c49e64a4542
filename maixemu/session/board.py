"""The one place that builds a board: :class:`BoardConfig` → :class:`Board` (a powered-on K210 plus its
host adapters), activated for the firmware while in use, and every adapter closed at the end.

::

    with Board(BoardConfig(project=script.parent, camera="synthetic", lcd="none")) as board:
        outcome = run_script(script, board, budget=FrameBudget(100))

``maixemu run``, the pytest plugin, soak, ``--show-ai`` and the IDE page all build their boards
here. Optional services (the IDE link, the AI view) are composed with :meth:`Board.attach`: a
service is a function that wires itself to the board's event hooks and returns its detach step.
Nothing else wires adapters into firmware modules.
"""

from __future__ import annotations

import functools
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from ..firmware import state as state_mod
from ..firmware.state import BoardState, Console
from ..host import storage as storage_mod
from .outcome import SetupError

PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: maixemu's own demo model is "pre-flashed" here (near the end of the 16 MiB flash, an area MaixPy
#: builds leave free), so samples can ``kpu.load(0xF00000)`` with no option; --flash overrides it.
DEMO_MODEL_ADDRESS = 0xF00000
DEMO_MODEL = PACKAGE_DIR / "data" / "edge_filters.kmodel"

#: A service: wires itself to a board (its event hooks) and returns the step that undoes it.
Service = Callable[["Board"], Callable[[], None] | None]


@dataclass
class BoardConfig:
    """What one board is built from. Every field has the default a user gets with no option."""

    #: the script's folder: /sd and /flash show it through copy-on-write layers (None: the cwd)
    project: Path | None = None
    #: folders mounted as /sd and /flash instead (the script's writes change them)
    sd_dir: Path | None = None
    flash_dir: Path | None = None
    #: write into ``project`` itself instead of its ``.maixemu`` copy-on-write layer
    writable: bool = False
    #: where copy-on-write layers live (None: ``project/.maixemu``, or a private folder)
    layer_home: Path | None = None
    #: a ready-made storage (tests); replaces the fields above
    storage: storage_mod.Storage | None = None
    #: flash address -> file (``--flash``), and a ``.kfpkg`` whose files are mapped too
    flash: dict[int, Path] = field(default_factory=dict)
    flash_image: Path | None = None
    #: map maixemu's demo model at :data:`DEMO_MODEL_ADDRESS` (unless something else is there)
    demo_model: bool = True
    #: ``--camera`` spec (``"0"``, a video, folder, image, ``"synthetic"``) or a source factory
    camera: str | Callable[[], Any] | None = None
    #: ``--lcd`` spec (``"window"``, ``"none"``, ``"record:PATH"``) or a display sink
    lcd: str | Any = None
    #: the camera chip's windowing (``"ov2640"``, or ``"centred"`` as a GC0328)
    windowing: str = "ov2640"
    ai_memory: str = "device"
    firmware: str = "full"
    #: write one JSON line per KPU call here (``--kpu-log``); ``keep_kpu_calls``: keep them in memory
    kpu_log: Path | None = None
    keep_kpu_calls: bool = False
    #: the script's ``sys.argv``
    argv: list[str] = field(default_factory=list)
    #: the board console (None: the process's streams at the time of use)
    stdout: TextIO | None = None
    stderr: TextIO | None = None
    stdin: TextIO | None = None
    #: ``--quiet``: no ``[maixemu]`` notices
    quiet: bool = False
    #: ``--audio-out`` / ``--audio-in`` specs (``wav:PATH``, ``speaker``, ``none`` / ``silence``, ``tone:HZ``,
    #: a WAV file, ``mic``) or factories of a sink / source (``maixemu.host.audio``)
    audio_out: str | Callable[[], Any] | None = None
    audio_in: str | Callable[[], Any] | None = None
    #: ``--board NAME``: the board profile (pins, LCD, keys, LEDs, power chip; ``maixemu.firmware.board_profiles``)
    board: str | None = None
    #: ``--uart-loop TX:RX``: UART lines wired TX -> RX (``"1:2"``, ``"UART1:UART1"``; see ``firmware.uart_bus``)
    uart_loop: list[str] = field(default_factory=list)
    #: scripted UART peers: ``{UART: bytes waiting at power-on | callable(written) -> answer bytes}``
    #: (keys as ``--uart-loop`` names them: ``1`` or ``"UART1"`` is ``UART.UART1``)
    uart_input: dict[Any, Any] = field(default_factory=dict)
    #: a virtual clock ``(now_ns, sleep_ns)`` instead of real time (tests of timing-driven scripts)
    clock: tuple[Callable[[], int], Callable[[int], None]] | None = None
    #: ``--overwrite``: outputs (a recording, a WAV file, the KPU log) may replace files maixemu did not
    #: write; without it only maixemu's own earlier outputs are replaced (``maixemu.host.outputs``)
    overwrite: bool = False


class Board:
    """A board built from a :class:`BoardConfig`: its :class:`~maixemu.firmware.state.BoardState`
    (``board.state``) and the host adapters it opened, all closed by :meth:`close`.

    Use it as a context manager: entering opens and activates it (firmware calls read its state),
    leaving closes every adapter and deactivates it. :meth:`open` raises :class:`SetupError` for
    what the user must fix (a bad ``--lcd``, ``--flash-image``, a missing folder).
    """

    def __init__(self, config: BoardConfig | None = None, **fields: Any):
        self.config = config if config is not None else BoardConfig(**fields)
        self.state: BoardState = BoardState()
        #: ``listener(text)`` for every notice (the IDE page copies them)
        self.notice_listeners: list[Callable[[str], None]] = []
        self._cleanup: list[Callable[[], None]] = []
        self._detach: list[Callable[[], None]] = []
        self._opened = False
        self._active = False
        self._notice_stream: TextIO | None = None
        self._closed = False
        self._close_lock = threading.Lock()

    # -- notices ---------------------------------------------------------------------------------
    def notice(self, message: str) -> None:
        """``[maixemu] message`` on the console's stderr (unless quiet), and to the listeners."""
        text = message.removeprefix("maixemu: ")
        if not self.config.quiet:
            try:  # maixemu's own stream, not the console a service may have replaced (the IDE page)
                print(f"[maixemu] {text}", file=self._notice_stream or self.config.stderr or sys.stderr, flush=True)
            except (OSError, ValueError):
                pass
        for listener in list(self.notice_listeners):
            listener(text)

    # -- building --------------------------------------------------------------------------------
    def open(self) -> Board:
        """Build the board: storage, flash contents, camera connector, display, KPU options."""
        if self._opened:
            return self
        self._opened = True
        cfg = self.config
        from ..firmware import board_profiles, lcd
        from ..firmware.kpu.state import KpuState
        from ..firmware.kpu.calls import KpuCallLog
        from ..firmware.sensor import CameraPort, SensorState

        board = self.state
        self._notice_stream = cfg.stderr or sys.stderr
        board.console = Console(cfg.stdout, cfg.stderr, cfg.stdin)
        board.notices.enabled = not cfg.quiet
        board.system.sys_argv = list(cfg.argv)
        board.storage = self._build_storage()
        board.camera = CameraPort(self._camera_factory())
        board.sensor = SensorState(cfg.windowing)
        self._check_kpu_log()
        try:
            board.kpu = KpuState(firmware=cfg.firmware, ai_memory=cfg.ai_memory,
                                 log=KpuCallLog(str(cfg.kpu_log) if cfg.kpu_log else None, keep=cfg.keep_kpu_calls))
        except ValueError as exc:
            raise SetupError(str(exc)) from None
        except OSError as exc:
            raise SetupError(f"--kpu-log {cfg.kpu_log}: {exc.strerror or exc}") from None
        if cfg.clock is not None:
            board.clock.use(*cfg.clock)
        try:
            board.pins.profile = board_profiles.profile_name(cfg.board or "default")
        except ValueError as exc:
            raise SetupError(f"--board {cfg.board}: {exc}") from None
        with state_mod.bind(board):
            lcd.boot()  # what the stock _boot.py leaves: the panel initialised (lcd.width() works)
        self._wire_uarts()
        board.audio = self._audio_device()
        board.display = self._open_display()
        from .keys import window_controls

        set_controls = getattr(board.display, "set_controls", None)  # a sink of the caller's may lack it
        if set_controls is not None:
            set_controls(window_controls(board))  # keyboard keys and the LED strip of the window
        board.events.idle.append(lcd.pump)  # a script sleeping in time.sleep() still reacts to ESC / the close button
        board.events.before_capture.append(lcd.flush)  # a recording gets the finished picture at the next frame
        return self

    def _check_kpu_log(self) -> None:
        """``--kpu-log FILE`` replaces only a KPU log of maixemu's own (or anything with ``--overwrite``)."""
        from ..host import outputs

        cfg = self.config
        if cfg.kpu_log is None:
            return
        try:
            outputs.check_file(Path(cfg.kpu_log), "--kpu-log", overwrite=cfg.overwrite, streams=True,
                               ours=lambda path: outputs.is_maixemu_json_lines(path, ("n", "call", "model")))
        except outputs.OutputRefused as exc:
            raise SetupError(str(exc)) from None

    def _wire_uarts(self) -> None:
        """``--uart-loop`` wires and scripted UART peers, on the board's UART lines."""
        from ..firmware.uart_bus import parse_loop, uart_id

        cfg = self.config
        if not cfg.uart_loop and not cfg.uart_input:
            return
        bus = self.state.uart
        try:
            for spec in cfg.uart_loop:
                bus.wire(*parse_loop(spec))
            for device, peer in cfg.uart_input.items():
                if not (callable(peer) or isinstance(peer, (bytes, bytearray, memoryview))):
                    raise ValueError(f"uart={{{device!r}: ...}}: give bytes or a callable(written) -> bytes")
                bus.attach(uart_id(device), peer)
        except ValueError as exc:
            raise SetupError(str(exc)) from None

    def _build_storage(self) -> storage_mod.Storage:
        """/sd and /flash: the project through copy-on-write layers, or the folders given."""
        cfg = self.config
        flash_map = {int(address): Path(path) for address, path in cfg.flash.items()}
        if cfg.flash_image is not None:
            for address, path in self._extract_flash_image(Path(cfg.flash_image)).items():
                flash_map.setdefault(address, path)
        if cfg.demo_model:
            flash_map.setdefault(DEMO_MODEL_ADDRESS, DEMO_MODEL)
        if cfg.storage is not None:
            cfg.storage.flash_map.update({a: p for a, p in flash_map.items() if a not in cfg.storage.flash_map})
            return cfg.storage
        for option, folder in (("--sd", cfg.sd_dir), ("--flash-dir", cfg.flash_dir)):
            if folder is not None and not Path(folder).is_dir():
                raise SetupError(f"{option} {folder}: no such folder")
        project = Path(cfg.project if cfg.project is not None else Path.cwd()).resolve()
        layer_home = cfg.layer_home
        if layer_home is None and (PACKAGE_DIR in project.parents or project == PACKAGE_DIR
                                   or not os.access(project, os.W_OK)):
            # maixemu's own samples (keep the package clean) or a read-only folder: a private layer
            layer_home = storage_mod.private_layer_home()
        return storage_mod.Storage.for_project(
            project, sd_dir=cfg.sd_dir, flash_dir=cfg.flash_dir, writable=cfg.writable, layer_home=layer_home,
            cwd="/sd", flash_map=flash_map, on_notice=self.notice,
        )

    def _extract_flash_image(self, package: Path) -> dict[int, Path]:
        """The files of a .kfpkg by flash address, extracted into a folder of their own that the board
        removes when it closes (and nothing else: the folder is bound here, not looked up later)."""
        from ..host.flash_image import FlashImageError, read_flash_image

        folder = Path(tempfile.mkdtemp(prefix="maixemu-flash-"))
        self._cleanup.append(functools.partial(shutil.rmtree, folder, ignore_errors=True))
        try:
            return read_flash_image(package, extract_to=folder)
        except FlashImageError as exc:
            raise SetupError(str(exc)) from None

    def _camera_factory(self) -> Callable[[], Any]:
        from ..host import camera

        spec = self.config.camera
        if callable(spec):
            return spec
        return lambda: camera.open_source(spec, on_notice=self.notice)

    def _audio_device(self) -> Any:
        """The board's audio path with the PC's sink and source; bad specs are set-up errors (checked
        now, not at the first sound)."""
        from ..firmware.audio_device import AudioDevice
        from ..host import audio as host_audio

        out, into = self.config.audio_out, self.config.audio_in
        overwrite = self.config.overwrite
        try:
            if not callable(out):
                host_audio.open_sink(out, on_notice=lambda m: None, overwrite=overwrite).close()
            if not callable(into):
                host_audio.open_source(into, on_notice=lambda m: None).close()
        except host_audio.AudioError as exc:
            raise SetupError(str(exc)) from None
        sink = out if callable(out) else (lambda: host_audio.open_sink(out, on_notice=self.notice, overwrite=overwrite))
        source = into if callable(into) else (lambda: host_audio.open_source(into, on_notice=self.notice))
        return AudioDevice(sink, source)

    def _open_display(self) -> Any:
        from ..host import display

        spec = self.config.lcd
        if spec is not None and not isinstance(spec, str):
            return spec
        try:
            return display.open_sink(spec, on_notice=self.notice, overwrite=self.config.overwrite)
        except display.DisplayError as exc:
            raise SetupError(str(exc)) from None

    # -- services --------------------------------------------------------------------------------
    def attach(self, service: Service) -> None:
        """Wire an optional service (the IDE link, the AI view) to this board; undone at :meth:`close`."""
        detach = service(self)
        if detach is not None:
            self._detach.append(detach)

    def on_close(self, step: Callable[[], None]) -> None:
        """Run ``step`` when the board closes (before its adapters close)."""
        self._detach.append(step)

    # -- life cycle ------------------------------------------------------------------------------
    def __enter__(self) -> Board:
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        self.activate()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def activate(self) -> None:
        if not self._active:
            state_mod.activate(self.state)
            self._active = True

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Switch the board off: services detached, the LCD's last picture shown, display, camera and
        KPU log closed, temporary flash folders removed. Safe to call twice; each step's failure is
        reported and the others still run."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        board = self.state
        board.run.end("the board was switched off")  # stray script threads end at their next firmware call
        # The LCD's pending picture first, while the services (AI view, IDE page) still listen: a
        # script that ends right after lcd.display() shows its last frame in every view.
        steps: list[Callable[[], None]] = [self._flush_lcd] if self._opened else []
        steps += list(reversed(self._detach))
        if self._opened:
            steps += [self._close_display, board.close_parts]
        steps += list(reversed(self._cleanup))
        for step in steps:
            try:
                step()
            except Exception as exc:  # a cleanup failure must not hide the script's own result
                self._cleanup_failed(exc)
        if self._active:
            state_mod.deactivate(board)
            self._active = False

    def _flush_lcd(self) -> None:
        from ..firmware import lcd

        if "panel" in vars(self.state):
            with state_mod.bind(self.state):
                lcd.flush()

    def _close_display(self) -> None:
        with self.state.display_lock:  # never while a script thread is inside show()
            self.state.display.close()

    def _cleanup_failed(self, exc: Exception) -> None:
        try:
            print(f"[maixemu] cleanup failed: {exc}", file=self.state.console.stderr)
        except (OSError, ValueError):
            print(f"[maixemu] cleanup failed: {exc}", file=sys.__stderr__)


__all__ = ["Board", "BoardConfig", "BoardState", "DEMO_MODEL", "DEMO_MODEL_ADDRESS", "Service"]
