"""The state of one powered-on K210: everything a run changes, in one object, read through :func:`current`.

A MaixPy script calls module-level functions (``sensor.snapshot()``, ``lcd.display(img)``,
``time.ticks_ms()``); on the board those functions read the chip's registers and the firmware's
globals. Here every firmware function reads the same things from the **active board**::

    board = current()            # the BoardState of the running script (or the default board)
    board.sensor.framesize       # what sensor.width() reports

A :class:`BoardState` is created for every run and thrown away at its end: **a new instance is a
power-on reset**. Nothing else keeps run state, so two runs in one process (pytest, the IDE's Run
again, soak) can never see each other's camera, panel, pins, models or ``sys.path``.

Parts are created on first use (a script that never touches the KPU never builds its state) by
the module that knows what they mean: ``sensor`` (``sensor.SensorState``), ``panel``
(``lcd.PanelState``), ``clock`` (``utime.ClockState``), ``kpu`` (``kpu.state.KpuState``). The
parts several modules share — pins, system, notices, events, the run's end — are defined here.

Host adapters (storage, camera, display, console) are plugged in by whoever builds the board
(``maixemu.session.Board``); the defaults need no host at all: a private storage layer over the
current folder, the synthetic camera pattern, a display that counts frames, the process's
streams. Threads: the board a script thread works for is bound to that thread
(:func:`bind`), so a thread left behind by an ended run keeps reading *its* ended board and never
the next run's (it gets :class:`RunEnded` at its next firmware call).
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # the parts' own modules import this one
    from ..host.display import BoardDisplay, DisplaySink
    from ..host.storage import Storage
    from .audio_device import AudioDevice
    from .image._fonts import FontState
    from .image._jpeg_encode import EncoderState
    from .kpu.state import KpuState
    from .lcd import PanelState
    from .video import VideoState
    from .sensor import CameraPort, SensorState
    from .soft_irq import SoftIrq
    from .uart_bus import UartBus
    from .utime import ClockState


class RunEnded(BaseException):
    """Raised inside the script to end the run; a BaseException so ``except Exception:`` can't swallow it.

    ``reason`` is printed in the closing line; ``exit_code`` is what ``maixemu run`` returns. Raised
    into a busy loop from another thread (:meth:`RunControl.interrupt_scripts`) it has neither: the
    run's :class:`RunControl` knows them (:attr:`from_control`).
    """

    def __init__(self, reason: str | None = None, exit_code: int = 0):
        super().__init__(*(() if reason is None else (reason,)))
        self.from_control = reason is None
        self.reason = reason or "the run was asked to end"
        self.exit_code = exit_code


# ------------------------------------------------------------------------------------ events
class BoardEvents:
    """The board's hook points: lists of listeners, called on the thread that caused the event.

    Listeners must be quick and may raise to end the run (the frame budget does). Empty lists make
    every event free.
    """

    def __init__(self) -> None:
        #: ``listener()`` after every ``sensor.snapshot()`` captured a frame (frame budget, scripted keys).
        self.snapshot: list[Callable[[], None]] = []
        #: ``listener()`` at the start of every ``snapshot()``, before the new frame overwrites the
        #: frame buffer: the camera's frame boundary (the session wires the display's to it).
        self.before_capture: list[Callable[[], None]] = []
        #: ``listener()`` after every change of the LCD panel (``init``/``clear``/``display``/...).
        self.lcd_push: list[Callable[[], None]] = []
        #: ``listener(rgb)`` with every picture the display's sink is given (copy what you keep).
        self.lcd_shown: list[Callable[[Any], None]] = []
        #: ``listener(image)``: the firmware's ``fb_update_jpeg_buffer`` (the IDE's frame-buffer copy).
        self.framebuffer: list[Callable[[Any], None]] = []
        #: ``JPEG_FB()->enabled``: the IDE's frame-buffer view is on (``USBDBG_FB_ENABLE``; the IDE
        #: page's "Disable preview" turns it off, and then no copy is made, as on the board).
        self.framebuffer_enabled = True
        #: ``listener(value)`` with every value ``clock.fps()`` returned to the script.
        self.clock_fps: list[Callable[[float], None]] = []
        #: ``listener(call, model)`` before the KPU runs ``model`` (a ``maixemu.kmodel`` model).
        self.kpu_call: list[Callable[[str, Any], None]] = []
        #: ``listener(chw_uint8, call)`` with the AI buffer the KPU is about to read (do not keep it).
        self.kpu_input: list[Callable[[Any, str], None]] = []
        #: ``listener(pin, level)`` on every write to a GPIO mapped to a physical pin (LEDs).
        self.gpio_output: list[Callable[[int, int], None]] = []
        #: ``listener(ns)`` when a script sleeps (``time.sleep*``), with the nanoseconds asked for.
        self.sleep: list[Callable[[int], None]] = []
        #: ``listener()`` while the script sleeps (at least every 20 ms): idle time (the session wires
        #: the display's to it: a recording takes the finished picture, a window processes its events).
        self.idle: list[Callable[[], None]] = []
        #: ``listener()`` at the device's soft-IRQ points on script threads (after firmware calls,
        #: while sleeping, at ``print``/``input``): pending IRQ callbacks run there.
        self.checkpoint: list[Callable[[], None]] = []

    @staticmethod
    def fire(listeners: list[Callable[..., None]], *args: Any) -> None:
        for listener in list(listeners):
            listener(*args)


# ------------------------------------------------------------------------------------ the run's end
class RunControl:
    """Whether the run is ending, and the firmware's end check (:meth:`check`).

    An end is requested once (frame budget spent, ``--timeout``, a signal, the window closed); from
    then on every firmware call on every script thread raises it again, so a thread in a camera
    loop ends at its next ``snapshot()`` and the main thread at its next ``time.sleep``. When a
    thread gets the end a second time it caught the first one (a bare ``except:``):
    :attr:`on_ignored` decides what happens (the command line finalises and leaves; in-process
    runs keep raising).

    Script threads register here (:meth:`script_thread`) so that the session can also interrupt
    them where no firmware call comes (a busy loop) and wait for them before the sinks close.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._woken = threading.Event()
        self._end: Callable[[], BaseException] | None = None
        self.reason: str | None = None
        self.exit_code = 0
        self._delivered: set[int] = set()
        #: ``on_ignored(reason, exit_code)``: a script thread got the end again (it swallowed it).
        self.on_ignored: Callable[[str, int], None] | None = None
        self._threads: dict[int, threading.Thread] = {}
        self._in_script: set[int] = set()
        #: host files of the script and its modules (their frames are the script's own)
        self.script_files: set[str] = set()
        #: how the device names a file of the script in a traceback (set by the session for a run)
        self.device_name: Callable[[str], str] | None = None
        self._tracing: dict[int, Any] = {}

    # -- the end -----------------------------------------------------------------------------
    @property
    def ending(self) -> bool:
        return self._end is not None

    def end(self, reason: str, exit_code: int = 0, *, exception: Callable[[], BaseException] | None = None) -> bool:
        """Request the end (the first request wins); True if this call requested it."""
        with self._lock:
            if self._end is not None:
                return False
            self.reason, self.exit_code = reason, exit_code
            self._end = exception or (lambda: RunEnded(reason, exit_code))
        self._woken.set()
        return True

    def end_exception(self) -> BaseException | None:
        """A fresh instance of the end's exception (None while the run goes on)."""
        factory = self._end
        return None if factory is None else factory()

    def check(self) -> None:
        """The end check of a firmware call: raise the requested end on this thread (again)."""
        factory = self._end
        if factory is None:
            return
        ident = threading.get_ident()
        if ident in self._delivered and self.on_ignored is not None and ident in self._in_script:
            self.on_ignored(self.reason or "the run ended", self.exit_code)
        self._delivered.add(ident)
        raise factory()

    def delivered(self, ident: int | None = None) -> None:
        """The end was raised in thread ``ident`` (default: the caller) by other means than :meth:`check`
        (a signal handler, an interrupt): the next check there means it was swallowed."""
        self._delivered.add(threading.get_ident() if ident is None else ident)

    def wait(self, seconds: float) -> bool:
        """Sleep up to ``seconds``, waking early when the end is requested; True if it was."""
        return self._woken.wait(seconds) if seconds > 0 else self.ending

    # -- script threads ----------------------------------------------------------------------
    @contextmanager
    def script_thread(self) -> Iterator[None]:
        """Mark the calling thread as running script code for as long as the block lasts."""
        ident = threading.get_ident()
        with self._lock:
            self._threads[ident] = threading.current_thread()
            self._in_script.add(ident)
        try:
            yield
        finally:
            self.leave_script(ident)

    def leave_script(self, ident: int | None = None) -> None:
        """The thread left script code: no interrupt may reach it any more (a pending one is withdrawn)."""
        from .threads import raise_in_thread

        ident = threading.get_ident() if ident is None else ident
        while True:  # an interrupt raised while we get here is absorbed, then withdrawn for good
            try:
                with self._lock:
                    self._in_script.discard(ident)
                raise_in_thread(ident, None)
                if ident in self._tracing and ident == threading.get_ident():
                    sys.settrace(self._tracing.pop(ident))
                return
            except BaseException:  # noqa: BLE001 - only the withdrawn interrupt can land here
                continue

    def interrupt_scripts(self, exc_type: type[BaseException] | None = None, *, stubborn: bool = False) -> int:
        """Raise the end (or ``exc_type``) in every thread still running script code; returns how many.

        ``stubborn``: for a script that swallowed its end already. The exception then also makes the
        thread raise the end again at every line of the script's own code it reaches, its
        ``except:`` handlers included (a trace function, removed when the thread leaves the script),
        so that no ``except:`` can hold the run.
        """
        from .threads import raise_in_thread, stubborn_end

        if exc_type is None:
            exception = self.end_exception()
            exc_type = type(exception) if exception is not None else RunEnded
        if stubborn:
            exc_type = stubborn_end(exc_type)
        count = 0
        with self._lock:
            for ident in list(self._in_script):
                raise_in_thread(ident, exc_type)
                self._delivered.add(ident)
                count += 1
        return count

    def trace_to_the_end(self) -> None:
        """Make the calling script thread raise the end at every line of script code (see
        :meth:`interrupt_scripts`); the thread's own trace function comes back when it leaves."""
        ident = threading.get_ident()
        if ident not in self._in_script:
            return
        files = self.script_files

        def tracer(frame: Any, event: str, arg: Any) -> Any:
            if frame.f_code.co_filename in files and event == "line" and self.ending:
                exception = self.end_exception()
                if exception is not None:
                    raise exception
            return tracer

        if ident not in self._tracing:
            self._tracing[ident] = sys.gettrace()
        sys.settrace(tracer)
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:  # frames already running trace only with their own f_trace set
            if frame.f_code.co_filename in files:
                frame.f_trace = tracer
                frame.f_trace_lines = True
            frame = frame.f_back

    def in_script(self) -> bool:
        """The calling thread is running script code of this run (soft-IRQ work may run on it)."""
        return threading.get_ident() in self._in_script

    def script_threads(self) -> list[threading.Thread]:
        """Threads that are running script code now (the main one included)."""
        with self._lock:
            return [self._threads[i] for i in self._in_script if i in self._threads]


# ------------------------------------------------------------------------------------ shared parts
@dataclass
class PinState:
    """The chip's pins: FPIOA mux, GPIO registers, the levels the PC drives, ``fm`` and ``board_info``."""

    #: physical pin -> FPIOA function number (``Maix.FPIOA``)
    mux: dict[int, int] = field(default_factory=dict)
    #: levels the PC drives onto physical pins (keys); a missing pin reads its pull
    input_levels: dict[int, int] = field(default_factory=dict)
    #: levels the script last wrote to physical pins (LEDs)
    output_levels: dict[int, int] = field(default_factory=dict)
    #: per GPIO id: drive mode, output latch, IRQ handler and edge
    gpio_mode: dict[int, int] = field(default_factory=dict)
    gpio_out: dict[int, int] = field(default_factory=dict)
    gpio_irq: dict[int, tuple[Callable[..., Any], int]] = field(default_factory=dict)
    #: ``fpioa_manager.fm`` of this board (its registrations), created at first use
    fm: Any = None
    #: ``board.board_info`` of this board (a class, as the firmware's), and the profile it answers for
    board_info: Any = None
    profile: str = "default"


@dataclass
class SystemState:
    """What the firmware keeps outside the peripherals: ``sys``, the heap settings, clocks, threads."""

    #: ``sys.path`` as MaixPy's ``_boot.py`` leaves it (with an SD card)
    sys_path: list[str] = field(default_factory=lambda: ["", ".", "/sd", "/flash"])
    sys_argv: list[str] = field(default_factory=list)
    #: ``sys.modules``: the script's own modules (MicroPython keeps built-in modules out of it)
    sys_modules: dict[str, Any] = field(default_factory=dict)
    gc_enabled: bool = True
    gc_threshold: int = -1
    opt_level: int = 0
    heap_locked: int = 0
    #: ``Maix.utils.gc_heap_size`` (takes effect after a reboot on the board)
    gc_heap_size: int = 0x80000
    #: ``Maix.freq``: the stored clock configuration and the clocks running now
    freq_config: dict[str, int] = field(default_factory=lambda: {"cpu": 400_000_000, "pll1": 400_000_000,
                                                                  "kpu_div": 1})
    cpu_hz: int = 400_000_000
    kpu_hz: int = 400_000_000
    #: ``_thread.stack_size``
    thread_stack_size: int = 0
    #: ``uos.mount(vfs, "/point")``: the script's own file systems by mount point
    vfs_mounts: dict[str, Any] = field(default_factory=dict)
    #: the modules as this board's scripts see them (``firmware.device_modules``): a fresh set per board
    module_views: dict[tuple[str, str], Any] = field(default_factory=dict)


class Notices:
    """One-time notices of this run: which were shown, whether to print them, and where."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.enabled = True
        #: where notices go (None: the board console's stderr at the time)
        self.stream: TextIO | None = None


class Console:
    """The board's serial console: what ``print``, ``input`` and ``sys.stdout`` of the script use.

    A stream left as None is the process's own at the time of use (so ``contextlib.redirect_stdout``
    and pytest's capture see it).
    """

    def __init__(self, stdout: TextIO | None = None, stderr: TextIO | None = None, stdin: TextIO | None = None):
        self._stdout, self._stderr, self._stdin = stdout, stderr, stdin

    @property
    def stdout(self) -> TextIO:
        return self._stdout if self._stdout is not None else sys.stdout

    @stdout.setter
    def stdout(self, stream: TextIO | None) -> None:
        self._stdout = stream

    @property
    def stderr(self) -> TextIO:
        return self._stderr if self._stderr is not None else sys.stderr

    @stderr.setter
    def stderr(self, stream: TextIO | None) -> None:
        self._stderr = stream

    @property
    def stdin(self) -> TextIO:
        return self._stdin if self._stdin is not None else sys.stdin

    @stdin.setter
    def stdin(self, stream: TextIO | None) -> None:
        self._stdin = stream


# ------------------------------------------------------------------------------------ the board
class BoardState:
    """One powered-on K210 (see the module docstring). Every attribute is this board's own."""

    def __init__(self, *, storage: Storage | None = None, camera: CameraPort | None = None,
                 display: DisplaySink | None = None, console: Console | None = None) -> None:
        self._storage = storage
        self._display: BoardDisplay | None = None
        #: when the board was switched on (its clock counts from here)
        self.powered_on_ns = time.perf_counter_ns()
        if camera is not None:
            self.camera = camera
        if display is not None:
            self.display = display
        self.console = console or Console()
        self.events = BoardEvents()
        self.run = RunControl()
        self.pins = PinState()
        self.system = SystemState()
        self.notices = Notices()
        #: the main frame buffer (``sensor.snapshot()`` memory), created at the first frame
        self.framebuffer: Any = None
        #: the power chips (AXP192/AXP173) the board's profile wires to I2C, made at first use
        self.power: Any = None
        #: the motion sensors (MPU6886/SH200Q/MPU6050) on its I2C buses (``firmware.imu``), made at first use
        self.imu: Any = None

    # -- adapters (defaults need no host device) ----------------------------------------------
    @property
    def storage(self) -> Storage:
        if self._storage is None:
            from ..host import storage as storage_mod

            self._storage = storage_mod.Storage.for_project(".", layer_home=storage_mod.private_layer_home())
        return self._storage

    @storage.setter
    def storage(self, value: Storage) -> None:
        self._storage = value

    @cached_property
    def camera(self) -> CameraPort:
        from .sensor import CameraPort

        return CameraPort()

    @property
    def display(self) -> BoardDisplay:
        """Where the LCD shows its pictures: a sink behind the board's display, which decides what a
        frame of it is (``maixemu.host.display.BoardDisplay``; by default a sink that counts frames)."""
        if self._display is None:
            from ..host.display import BoardDisplay, NullSink

            self._display = BoardDisplay(NullSink())
        return self._display

    @display.setter
    def display(self, sink: DisplaySink) -> None:
        from ..host.display import board_display

        self._display = board_display(sink)

    # -- firmware parts, powered on at first use ---------------------------------------------
    @cached_property
    def sensor(self) -> SensorState:
        from .sensor import SensorState

        return SensorState()

    @cached_property
    def panel(self) -> PanelState:
        from .lcd import PanelState

        return PanelState()

    @cached_property
    def clock(self) -> ClockState:
        from .utime import ClockState

        return ClockState(self.powered_on_ns)

    @cached_property
    def kpu(self) -> KpuState:
        from .kpu.state import KpuState

        return KpuState()

    @cached_property
    def audio(self) -> AudioDevice:
        """The I2S/DMA audio path and its PC sink and source (none: dropped sound, silence)."""
        from .audio_device import AudioDevice

        return AudioDevice()

    @cached_property
    def video(self) -> VideoState:
        from .video import VideoState

        return VideoState()

    @cached_property
    def network(self) -> Any:
        """The NICs and sockets of ``network``/``usocket`` (the PC's network stands in for the module)."""
        from .network import NetworkState

        return NetworkState()

    @cached_property
    def touch(self) -> Any:
        """The finger on the touch panel (``touchscreen``): the LCD window's mouse or a test's touches."""
        from .touchscreen import TouchState

        return TouchState()

    @cached_property
    def irq(self) -> SoftIrq:
        """MicroPython's scheduler and the board's alarms (timers, watchdog): see :mod:`.soft_irq`."""
        from .soft_irq import SoftIrq

        scheduler = SoftIrq(lambda: self.clock.now_ns())
        scheduler.report = self._report_irq_error
        return scheduler

    def _report_irq_error(self, exc: BaseException) -> None:
        """A callback's exception, printed as the firmware prints it (the script goes on)."""
        from .tracebacks import format_exception

        try:
            self.console.stdout.write(format_exception(exc))
            self.console.stdout.flush()
        except (OSError, ValueError):
            return
        from .notices import report_advice

        report_advice(self, exc)  # maixemu's advice on its own line, after the device's report

    @cached_property
    def uart(self) -> UartBus:
        """The UART lines: receive buffers, what was sent, the PC's loops and scripted peers."""
        from .uart_bus import UartBus

        return UartBus()

    @cached_property
    def font(self) -> FontState:
        """``image.font_load``'s font (the built-in ASCII one at power-on)."""
        from .image._fonts import FontState

        return FontState()

    @cached_property
    def jpeg_encoder(self) -> EncoderState:
        """The JPEG encoder's table cache (``jpeg_init``'s statics, empty at power-on)."""
        from .image._jpeg_encode import EncoderState

        return EncoderState()

    @cached_property
    def threads(self) -> Any:
        from .threads import BoardThreads

        return BoardThreads(self)

    def close_parts(self) -> None:
        """Close what the powered-on parts hold open (camera source, sound devices, files, the KPU log)."""
        parts = vars(self)
        for name, close in (("camera", lambda: self.camera.close()), ("audio", lambda: self.audio.close()),
                            ("video", lambda: self.video.close()), ("kpu", lambda: self.kpu.log.close()),
                            ("network", lambda: self.network.close()), ("font", lambda: self.font.free())):
            if name in parts:
                close()

    def parts(self) -> dict[str, Any]:
        """The parts powered on so far (for tests and diagnostics)."""
        return {name: value for name, value in vars(self).items() if not name.startswith("_")}

    def checkpoint(self) -> None:
        """A firmware call's soft-IRQ point, the one place IRQ work is delivered: the run's end, due
        timers and watchdogs, scheduled callbacks (GPIO edges, timers), then the listeners (the IDE
        page's button events)."""
        self.run.check()
        irq = self.__dict__.get("irq")
        if irq is not None:
            irq.run_pending()
        if self.events.checkpoint:
            BoardEvents.fire(self.events.checkpoint)

    def __repr__(self) -> str:
        return f"<BoardState {id(self):#x} parts={sorted(self.parts())}>"


# ------------------------------------------------------------------------------------ the accessor
_bound = threading.local()
_active: list[BoardState] = []
_default: BoardState | None = None
_default_lock = threading.Lock()


def current() -> BoardState:
    """The board the calling code runs on: the thread's own (script threads), else the active one,
    else the process's default board (firmware used directly from a Python shell)."""
    board = getattr(_bound, "board", None)
    if board is not None:
        return board
    if _active:
        return _active[-1]
    global _default
    with _default_lock:
        if _default is None:
            _default = BoardState()
        return _default


def activate(board: BoardState) -> None:
    """Make ``board`` the active one (boards nest: :func:`deactivate` returns to the previous)."""
    _active.append(board)


def deactivate(board: BoardState) -> None:
    if board in _active:
        _active.remove(board)


@contextmanager
def bind(board: BoardState) -> Iterator[BoardState]:
    """Tie the calling thread to ``board`` for the block (what script threads run under)."""
    previous = getattr(_bound, "board", None)
    _bound.board = board
    try:
        yield board
    finally:
        _bound.board = previous


def checkpoint() -> None:
    """``current().checkpoint()``: called by firmware functions a script calls in its loops."""
    current().checkpoint()


def _install_storage_provider() -> None:
    """``maixemu.host.storage.current()`` answers with the active board's storage (one source)."""
    from ..host import storage as storage_mod

    storage_mod.set_provider(lambda: current().storage)


_install_storage_provider()


__all__ = ["BoardEvents", "BoardState", "Console", "Notices", "PinState", "RunControl", "RunEnded", "SystemState",
           "activate", "bind", "checkpoint", "current", "deactivate"]
