"""The one place that builds a board: :class:`BoardConfig` → :class:`Board` (a powered-on K210 plus its
host adapters), activated for the firmware while in use, and every adapter closed at the end.

::

    with Board(BoardConfig(RunSpec(camera="synthetic", lcd="none"), project=script.parent)) as board:
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
from .budget import FrameBudget
from .outcome import SetupError
from .spec import RunSpec

PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: maixemu's own demo model is "pre-flashed" here (near the end of the 16 MiB flash, an area MaixPy
#: builds leave free), so samples can ``kpu.load(0xF00000)`` with no option; --flash overrides it.
DEMO_MODEL_ADDRESS = 0xF00000
DEMO_MODEL = PACKAGE_DIR / "data" / "edge_filters.kmodel"

#: A service: wires itself to a board (its event hooks) and returns the step that undoes it.
Service = Callable[["Board"], Callable[[], None] | None]


@dataclass
class Plugs:
    """What a caller plugs into a board besides the user's options: streams, ready-made host adapters
    and test hooks. Each one set replaces what the :class:`~maixemu.session.spec.RunSpec` would open."""

    #: the board console (None: the process's streams at the time of use)
    stdout: TextIO | None = None
    stderr: TextIO | None = None
    stdin: TextIO | None = None
    #: a frame-source factory instead of ``spec.camera`` (scripted frames)
    camera: Callable[[], Any] | None = None
    #: a display sink instead of ``spec.lcd`` (the plugin's memory sink)
    display: Any = None
    #: factories of an audio sink / source instead of ``spec.audio_out`` / ``spec.audio_in``
    audio_out: Callable[[], Any] | None = None
    audio_in: Callable[[], Any] | None = None
    #: the caller's own folders as /sd and /flash when the spec names none (a test's fresh folders):
    #: written for real, and no notice says so (they hold nothing of the user's)
    sd_dir: Path | None = None
    flash_dir: Path | None = None
    #: a ready-made storage (tests); replaces the folders of the spec and the fields above
    storage: storage_mod.Storage | None = None
    #: where copy-on-write layers live (None: ``project/.maixemu``, or a private folder)
    layer_home: Path | None = None
    #: map maixemu's demo model at :data:`DEMO_MODEL_ADDRESS` (unless something else is there)
    demo_model: bool = True
    #: keep every KPU call's record in memory (``board.state.kpu.log.calls``)
    keep_kpu_calls: bool = False
    #: scripted UART peers: ``{UART: bytes waiting at power-on | callable(written) -> answer bytes}``
    #: (keys as ``--uart-loop`` names them: ``1`` or ``"UART1"`` is ``UART.UART1``)
    uart_input: dict[Any, Any] = field(default_factory=dict)
    #: a virtual clock ``(now_ns, sleep_ns)`` instead of real time (tests of timing-driven scripts)
    clock: tuple[Callable[[], int], Callable[[int], None]] | None = None


@dataclass
class BoardConfig:
    """What one board is built from: the user's options, the script's folder and ``sys.argv``, and
    what the caller plugs in."""

    spec: RunSpec = field(default_factory=RunSpec)
    #: the script's folder: /sd and /flash show it through copy-on-write layers (None: the cwd)
    project: Path | None = None
    #: the script's ``sys.argv``
    argv: list[str] = field(default_factory=list)
    plugs: Plugs = field(default_factory=Plugs)


class Board:
    """A board built from a :class:`BoardConfig`: its :class:`~maixemu.firmware.state.BoardState`
    (``board.state``) and the host adapters it opened, all closed by :meth:`close`.

    Use it as a context manager: entering opens and activates it (firmware calls read its state),
    leaving closes every adapter and deactivates it. :meth:`open` raises :class:`SetupError` for
    what the user must fix (a bad ``--lcd``, ``--flash-image``, a missing folder).
    """

    def __init__(self, config: BoardConfig | None = None, **fields: Any):
        self.config = config if config is not None else BoardConfig(**fields)
        self.spec = self.config.spec
        self.plugs = self.config.plugs
        self.state: BoardState = BoardState()
        #: ``listener(text)`` for every notice (the IDE page copies them)
        self.notice_listeners: list[Callable[[str], None]] = []
        self._cleanup: list[Callable[[], None]] = []
        self._detach: list[Callable[[], None]] = []
        #: the run's frame budget (set by ``maixemu.session.lifecycle.execute`` before services attach)
        self.budget: FrameBudget | None = None
        self._opened = False
        self._active = False
        self._notice_stream: TextIO | None = None
        self._closed = False
        self._close_lock = threading.Lock()

    # -- notices ---------------------------------------------------------------------------------
    def notice(self, message: str) -> None:
        """``[maixemu] message`` on the console's stderr (unless quiet), and to the listeners."""
        text = message.removeprefix("maixemu: ")
        if not self.spec.quiet:
            try:  # maixemu's own stream, not the console a service may have replaced (the IDE page)
                print(f"[maixemu] {text}", file=self._notice_stream or self.plugs.stderr or sys.stderr, flush=True)
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
        spec, plugs = self.spec, self.plugs
        from ..firmware import board_profiles, lcd  # lcd: the stock boot's panel
        from ..firmware.kpu.state import KpuState
        from ..firmware.kpu.calls import KpuCallLog
        from ..firmware.sensor import CameraPort, SensorState

        board = self.state
        self._notice_stream = plugs.stderr or sys.stderr
        board.console = Console(plugs.stdout, plugs.stderr, plugs.stdin)
        board.notices.enabled = not spec.quiet
        board.system.sys_argv = list(self.config.argv)
        board.storage = self._build_storage()
        board.camera = CameraPort(self._camera_factory())
        board.sensor = SensorState(spec.sensor)
        self._check_kpu_log()
        try:
            board.kpu = KpuState(firmware=spec.firmware, ai_memory=spec.ai_memory,
                                 log=KpuCallLog(str(spec.kpu_log) if spec.kpu_log else None, keep=plugs.keep_kpu_calls))
        except ValueError as exc:
            raise SetupError(str(exc)) from None
        except OSError as exc:
            raise SetupError(f"--kpu-log {spec.kpu_log}: {exc.strerror or exc}") from None
        if plugs.clock is not None:
            board.clock.use(*plugs.clock)
        try:
            board.pins.profile = board_profiles.profile_name(spec.board or "default")
        except ValueError as exc:
            raise SetupError(f"--board {spec.board}: {exc}") from None
        with state_mod.bind(board):
            lcd.boot()  # what the stock _boot.py leaves: the panel initialised (lcd.width() works)
        self._wire_uarts()
        board.audio = self._audio_device()
        self._wire_display(self._open_display())
        return self

    def _wire_display(self, sink: Any) -> None:
        """The board's display around ``sink``, wired to the board: every picture the sink gets is an
        ``lcd_shown`` event; a camera frame boundary and the script's idle time (``time.sleep``) end
        the picture being composed, and idle time lets a window react to ESC and its close button.
        So the camera and the clock never call the LCD."""
        from ..host.display import BoardDisplay
        from .keys import window_controls

        board, events = self.state, self.state.events

        def shown(rgb: Any) -> None:
            if events.lcd_shown:
                events.fire(events.lcd_shown, rgb)

        display = BoardDisplay(sink, on_shown=shown)
        board.display = display
        set_controls = getattr(sink, "set_controls", None)  # a sink of the caller's may lack it
        if set_controls is not None:
            set_controls(window_controls(board))  # keyboard keys and the LED strip of the window
        events.idle.append(display.idle)
        events.before_capture.append(display.frame_boundary)

    def _check_kpu_log(self) -> None:
        """``--kpu-log FILE`` replaces only a KPU log of maixemu's own (or anything with ``--overwrite``)."""
        from ..host import outputs

        spec = self.spec
        if spec.kpu_log is None:
            return
        try:
            outputs.check_file(Path(spec.kpu_log), "--kpu-log", overwrite=spec.overwrite, streams=True,
                               ours=lambda path: outputs.is_maixemu_json_lines(path, ("n", "call", "model")))
        except outputs.OutputRefused as exc:
            raise SetupError(str(exc)) from None

    def _wire_uarts(self) -> None:
        """``--uart-loop`` wires and scripted UART peers, on the board's UART lines."""
        from ..firmware.uart_bus import parse_loop, uart_id

        loops, peers = self.spec.uart_loop, self.plugs.uart_input
        if not loops and not peers:
            return
        bus = self.state.uart
        try:
            for wire in loops:
                bus.wire(*parse_loop(wire))
            for device, peer in peers.items():
                if not (callable(peer) or isinstance(peer, (bytes, bytearray, memoryview))):
                    raise ValueError(f"uart={{{device!r}: ...}}: give bytes or a callable(written) -> bytes")
                bus.attach(uart_id(device), peer)
        except ValueError as exc:
            raise SetupError(str(exc)) from None

    def _build_storage(self) -> storage_mod.Storage:
        """/sd and /flash: the project through copy-on-write layers, or the folders given."""
        spec, plugs = self.spec, self.plugs
        flash_map = {int(address): Path(path) for address, path in spec.flash.items()}
        if spec.flash_image is not None:
            for address, path in self._extract_flash_image(Path(spec.flash_image)).items():
                flash_map.setdefault(address, path)
        if plugs.demo_model:
            flash_map.setdefault(DEMO_MODEL_ADDRESS, DEMO_MODEL)
        if plugs.storage is not None:
            plugs.storage.flash_map.update({a: p for a, p in flash_map.items() if a not in plugs.storage.flash_map})
            return plugs.storage
        for option, folder in (("--sd", spec.sd_dir), ("--flash-dir", spec.flash_dir)):
            if folder is not None and not Path(folder).is_dir():
                raise SetupError(f"{option} {folder}: no such folder")
        sd_dir = spec.sd_dir if spec.sd_dir is not None else plugs.sd_dir
        flash_dir = spec.flash_dir if spec.flash_dir is not None else plugs.flash_dir
        project = Path(self.config.project if self.config.project is not None else Path.cwd()).resolve()
        layer_home = plugs.layer_home
        if layer_home is None and (PACKAGE_DIR in project.parents or project == PACKAGE_DIR
                                   or not os.access(project, os.W_OK)):
            # maixemu's own samples (keep the package clean) or a read-only folder: a private layer
            layer_home = storage_mod.private_layer_home()
        return storage_mod.Storage.for_project(
            project, sd_dir=sd_dir, flash_dir=flash_dir, writable=spec.writable, layer_home=layer_home,
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

        if self.plugs.camera is not None:
            return self.plugs.camera
        source = self.spec.camera
        return lambda: camera.open_source(source, on_notice=self.notice)

    def _audio_device(self) -> Any:
        """The board's audio path with the PC's sink and source; bad specs are set-up errors (checked
        now, not at the first sound)."""
        from ..firmware.audio_device import AudioDevice
        from ..host import audio as host_audio

        out, into = self.spec.audio_out, self.spec.audio_in
        overwrite = self.spec.overwrite
        sink, source = self.plugs.audio_out, self.plugs.audio_in
        try:
            if sink is None:
                host_audio.open_sink(out, on_notice=lambda m: None, overwrite=overwrite).close()
            if source is None:
                host_audio.open_source(into, on_notice=lambda m: None).close()
        except host_audio.AudioError as exc:
            raise SetupError(str(exc)) from None
        return AudioDevice(sink or (lambda: host_audio.open_sink(out, on_notice=self.notice, overwrite=overwrite)),
                           source or (lambda: host_audio.open_source(into, on_notice=self.notice)))

    def _open_display(self) -> Any:
        from ..host import display

        if self.plugs.display is not None:
            return self.plugs.display
        try:
            return display.open_sink(self.spec.lcd, on_notice=self.notice, overwrite=self.spec.overwrite)
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

    @property
    def opened(self) -> bool:
        """:meth:`open` was called (the adapters exist, also when it failed half-way)."""
        return self._opened

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
        self.state.display.flush()

    def _close_display(self) -> None:
        self.state.display.close()  # never while a script thread is inside show()

    def _cleanup_failed(self, exc: Exception) -> None:
        try:
            print(f"[maixemu] cleanup failed: {exc}", file=self.state.console.stderr)
        except (OSError, ValueError):
            print(f"[maixemu] cleanup failed: {exc}", file=sys.__stderr__)


__all__ = ["Board", "BoardConfig", "BoardState", "DEMO_MODEL", "DEMO_MODEL_ADDRESS", "Plugs", "RunSpec", "Service"]
