"""``maixemu run --ide``: the one place that wires a run into the IDE page.

The page's server (``maixemu.host.ide``) only knows an :class:`~maixemu.host.ide.IdeChannel`.
This module connects a run to it: :meth:`IdeLink.attach` is a service of the run's board
(:meth:`maixemu.session.Board.attach`) wired to the board's event hooks (``current().events``):

=============================  ==============================================================
``on_framebuffer(image)``      ``events.framebuffer`` — the firmware's ``fb_update_jpeg_buffer``
                               (start of ``snapshot()``, ``sensor.flush()``, ``copy_to_fb``;
                               never ``lcd.display``); only while the page's preview is on or
                               a recording runs (``events.framebuffer_enabled``, as the IDE's
                               Disable button switches the firmware's copy off)
``on_snapshot()``              ``events.snapshot``: the frame clock (PC frames/s, KPU per frame)
``on_lcd_frame(rgb)``          ``events.lcd_shown``: every picture the LCD sink shows (copied for
                               the page only while its preview is on)
``on_output_level(pin, lvl)``  ``events.gpio_output``: the board's LEDs
``on_clock_fps(value)``        ``events.clock_fps``: what ``clock.fps()`` returned
``on_kpu_call(call, model)``   ``events.kpu_call``: for the device-time estimate
``checkpoint()``               ``events.checkpoint`` and ``events.idle``: the soft-IRQ point, on
                               the script's thread only: delivers the page's Stop and the button
                               IRQs. The firmware passes it in its calls (snapshot, LCD, ticks,
                               the KPU), while the script sleeps and at its ``print``/``input``
``console`` streams            the board console: output copied to the page, input from the page
=============================  ==============================================================

and the run's own hooks: ``on_script_error`` (the script's exception, shown as the IDE shows it)
and ``on_notice`` (maixemu's notices, copied to the page).

and the page's requests: :meth:`IdeLink.stop`, :meth:`IdeLink.run_again`,
:meth:`IdeLink.button`, and ``analyze`` (``maixemu.session.ide_analysis``).

Device semantics kept: Stop raises ``Exception: IDE interrupt`` in the script, as the firmware's
``USBDBG_SCRIPT_STOP`` does (a script's ``except Exception:`` can catch it, as on the board; a
second Stop ends the run like a second Ctrl-C). GPIO interrupts run on the script's thread at its
next checkpoint, as MicroPython schedules them (``mp_sched_schedule``); a script that reaches no
checkpoint for :data:`IRQ_FALLBACK_S` seconds (a busy loop) gets them from a helper thread.
After a run the board waits for the next one, as in the IDE: the page can Run again as long as
it is open; with no page open (a page that stops answering the server's heartbeat counts as gone),
``maixemu`` ends as usual, and a run bounded by ``--timeout`` or ``--frames`` ends the process with
its budget, page or not.
"""

from __future__ import annotations

import math
import re
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO, cast

from ..firmware.notices import advice_line, report_advice
from ..firmware.state import RunEnded
from ..firmware.threads import raise_in_thread
from ..firmware.tracebacks import format_exception
from ..host.ide import IdeChannel
from ..host.ide.terminal import ChannelInput, ConsoleReader, TerminalTee
from . import ide_analysis
from .board import Board, Plugs
from .lifecycle import execute
from .spec import DEFAULT_IDE_PORT, RunSpec
from .summary import ModelTimes

#: Seconds a button event waits for the script's next checkpoint before a helper thread delivers it
#: (only when the script also passed no checkpoint for that long: a busy loop, not a busy machine).
IRQ_FALLBACK_S = 0.5
#: Seconds a Stop waits for a checkpoint before it is raised asynchronously (busy loops).
STOP_FALLBACK_S = 0.5
#: Seconds the last page may be gone (a reload) before an ended session stops waiting for Run.
PAGE_GONE_GRACE_S = 3.0
#: Names of ``board_info`` pins that are keys on the MaixPy boards (the rest of a profile's keys
#: come from the profile itself when it lists them).


class IdeInterrupt(Exception):
    """``Exception("IDE interrupt")``: what the firmware raises in a script when the IDE's Stop is pressed.

    A plain ``Exception`` on the device (``except Exception:`` catches it); named so here too, so
    tracebacks read ``Exception: IDE interrupt`` as in the IDE's terminal.
    """

    def __init__(self, *args: Any):
        super().__init__(*(args or ("IDE interrupt",)))


IdeInterrupt.__name__ = IdeInterrupt.__qualname__ = "Exception"
IdeInterrupt.__module__ = "builtins"


class IdeStopped(RunEnded):
    """A second Stop: the script swallowed the IDE interrupt, so the run ends like a second Ctrl-C."""

    def __init__(self, reason: str = "stopped from the IDE page (Stop pressed twice)", exit_code: int = 130):
        super().__init__(reason, exit_code)


def board_controls() -> dict[str, Any]:
    """The board pane's buttons and LEDs: the active board profile's keys and LEDs
    (:func:`maixemu.firmware.board.profile_controls`, the same data the LCD window shows)."""
    from ..firmware import board

    data = board.profile_controls()
    return {"profile": board.current_profile(), "buttons": list(data["buttons"]), "leds": list(data["leds"])}


class IdeLink:
    """Everything between one ``maixemu run --ide`` process and its page, across its runs."""

    def __init__(self, channel: IdeChannel, script: Path, *, quiet: bool = False):
        self.channel = channel
        self.script = script
        self.quiet = quiet
        self._board: Board | None = None
        self.terminal_open = True
        self._console = ConsoleReader(channel)
        self._lock = threading.Lock()
        self._irq_lock = threading.Lock()
        self._in_irq = threading.local()
        self._wake = threading.Condition(self._lock)
        self._run_requested = threading.Event()
        self._script_thread: int | None = None
        self._script_files: set[str] = set()
        self._attached = False
        self._buttons: dict[str, dict[str, Any]] = {}
        self._led_pins: dict[int, list[str]] = {}
        self._leds: dict[str, int | None] = {}
        self._events: deque[tuple[float, dict[str, Any], bool]] = deque(maxlen=256)
        self._stop_requests = 0
        self._stop_pending: tuple[float, type[BaseException]] | None = None
        self._fps_script: float | None = None
        self._frame_times: deque[float] = deque(maxlen=61)
        self._snapshots = 0
        self._kpu_frame: dict[str, list[float]] = {}  # call -> [count, estimated ms] since the last frame
        self._kpu_last: dict[str, Any] = {"ms": None, "calls": []}
        self._estimates = ModelTimes()
        self._stats_at = 0.0
        self._checkpoint_at = 0.0
        self._watchdog: threading.Thread | None = None
        self.runs = 0
        self.last_error: dict[str, Any] | None = None
        #: The last run ended by the page's Stop (so maixemu waits for Run again, unlike after Ctrl-C).
        self.stopped_by_page = False
        #: Exit code when maixemu was told to quit while it waited for Run (SIGTERM: 143).
        self.quit_code: int | None = None
        channel.set_handlers(stop=self.stop, run=self.run_again, button=self.button, analyze=ide_analysis.analyze,
                             picture=ide_analysis.picture)

    # ------------------------------------------------------------------ one run
    def attach(self, board: Board) -> Callable[[], None]:
        """Wire a freshly set-up run's board to the page (a board service); returns the detach step."""
        self.runs += 1
        self._board = board
        self._script_thread = threading.get_ident()
        self._script_files = {str(Path(self.script).resolve())}
        self._stop_requests = 0
        self._stop_pending = None
        self._events.clear()
        self._frame_times.clear()
        self._snapshots = 0
        self._kpu_frame = {}
        self._kpu_last = {"ms": None, "calls": []}
        self._estimates.clear()
        self._fps_script = None
        self.last_error = None
        self.stopped_by_page = False
        self.terminal_open = True
        self._run_requested.clear()
        controls = board_controls()
        self._buttons = {entry["name"]: entry for entry in controls["buttons"]}
        self._led_pins = {}
        for entry in controls["leds"]:
            self._led_pins.setdefault(int(entry["pin"]), []).append(entry["name"])
        self._leds = {entry["name"]: None for entry in controls["leds"]}
        name = Path(self.script).name
        self.channel.clear_frames()
        self.channel.clear_input()
        self.channel.set_state("board", {**controls, "script": name, "run": self.runs})
        self.channel.set_state("leds", dict(self._leds))
        self.channel.set_state("status", {"state": "running", "run": self.runs, "script": name})
        self.channel.set_state("stats", {})
        if self.runs > 1:
            self.channel.write(f"\n[maixemu] run {self.runs} of {name}\n", "notice")

        events = board.state.events
        events.framebuffer_enabled = self.channel.frames_wanted()
        hooks: tuple[tuple[list[Any], Callable[..., None]], ...] = (
                 (events.framebuffer, self.on_framebuffer), (events.snapshot, self.on_snapshot),
                 (events.clock_fps, self.on_clock_fps),
                 (events.kpu_call, self.on_kpu_call), (events.gpio_output, self.on_output_level),
                 (events.lcd_shown, self.on_lcd_frame), (events.checkpoint, self.checkpoint),
                 (events.idle, self.checkpoint))
        for listeners, hook in hooks:
            listeners.append(hook)
        console = board.state.console
        saved = (console.stdout, console.stderr, console.stdin)
        is_open = lambda: self.terminal_open  # noqa: E731
        # (casts: io.TextIOBase streams are text files, but not of typing.TextIO's nominal class)
        console.stdout = cast(TextIO, TerminalTee(saved[0], self.channel, "out", on_io=self.checkpoint, is_open=is_open))
        console.stderr = cast(TextIO, TerminalTee(saved[1], self.channel, "err", on_io=self.checkpoint, is_open=is_open))
        console.stdin = cast(TextIO, ChannelInput(self.channel, self._console, on_io=self.checkpoint))
        with self._lock:
            self._attached = True
        self._watchdog = threading.Thread(target=self._watch, name="maixemu-ide-irq", daemon=True)
        self._watchdog.start()

        def detach() -> None:
            with self._lock:
                self._attached = False
                self._stop_pending = None
                self._wake.notify_all()
            raise_in_thread(self._script_thread or 0, None)  # an interrupt not yet raised is withdrawn
            console.stdout, console.stderr, console.stdin = saved
            for listeners, hook in hooks:
                if hook in listeners:
                    listeners.remove(hook)
            if self._watchdog is not None:
                self._watchdog.join(timeout=2)

        return detach

    def on_notice(self, text: str) -> None:
        """maixemu's notices are copied to the page's terminal (unless ``--quiet``)."""
        if not self.quiet:
            self.channel.write(f"[maixemu] {text}\n", "notice")

    def on_script_error(self, exc: BaseException) -> int | None:
        """The run's error hook: the page shows the device's traceback; an IDE interrupt is exit 130."""
        self.script_failed(exc)
        if isinstance(exc, IdeInterrupt):
            self.stopped_by_page = True
            if self._board is not None:
                self._board.notice("stopped from the IDE page (Exception: IDE interrupt)")
            return 130
        self.terminal_open = False  # the PC terminal gets Python's traceback, the page the device's
        return None

    def script_failed(self, exc: BaseException) -> None:
        """Show the script's exception on the page as the IDE's terminal does (MicroPython's format)."""
        text = format_exception(exc)
        self.channel.write(text, "err")
        advice = advice_line(exc, not self.quiet)
        if advice:  # maixemu's advice, on its own line after the device's traceback (grey)
            self.channel.write(advice, "notice")
        lines = text.strip().splitlines()
        where = [line for line in lines if line.lstrip().startswith("File ")]
        match = re.search(r'File "([^"]*)", line (\d+)', where[-1]) if where else None
        self.last_error = {"text": text, "summary": lines[-1] if lines else type(exc).__name__,
                           "file": match.group(1) if match else None, "line": int(match.group(2)) if match else None,
                           "interrupt": isinstance(exc, IdeInterrupt)}

    def run_ended(self, exit_code: int) -> None:
        self.terminal_open = True
        self.channel.set_state("status", {"state": "ended", "run": self.runs, "exit_code": exit_code,
                                          "script": self.script.name, "error": self.last_error})

    # ------------------------------------------------------------------ hook points
    def on_framebuffer(self, img: Any) -> None:
        """``fb_update_jpeg_buffer``: the IDE's copy of the frame buffer."""
        self.channel.publish_framebuffer(ide_analysis.FrameBufferCopy(img))  # kept, encoded only when looked at
        self.checkpoint()

    def on_snapshot(self) -> None:
        """A frame was captured: the frame clock (PC frames/s, the KPU time of the frame before)."""
        self._snapshots += 1
        self._frame_times.append(time.monotonic())
        self._finish_kpu_frame()
        self._publish_stats()

    def on_lcd_frame(self, rgb: Any) -> None:
        if self.channel.frames_wanted():
            self.channel.publish_lcd(rgb)
        self.checkpoint()

    def on_output_level(self, pin: int, level: int) -> None:
        names = self._led_pins.get(int(pin))
        if not names:
            return
        changed = False
        for name in names:
            if self._leds.get(name) != level:
                self._leds[name] = level
                changed = True
        if changed:
            self.channel.set_state("leds", dict(self._leds))

    def on_clock_fps(self, value: float) -> None:
        self._fps_script = float(value)

    def on_kpu_call(self, call: str, model: Any) -> None:
        entry = self._kpu_frame.setdefault(call, [0, 0.0])
        entry[0] += 1
        entry[1] += self._estimate_ms(model) or 0.0

    def checkpoint(self) -> None:
        """The soft-IRQ point: on the script's thread, run pending button IRQs and raise a pending Stop.

        Inside an IRQ handler it does nothing (MicroPython runs one scheduled callback at a time,
        and a Stop raised there would be reported as the handler's error, not end the script).
        """
        if threading.get_ident() != self._script_thread or not self._attached:
            return
        self._checkpoint_at = time.monotonic()
        if getattr(self._in_irq, "active", False):
            return
        if self._events:
            self._deliver_buttons(fallback=False)
        if self._stop_pending is not None:
            with self._lock:
                pending, self._stop_pending = self._stop_pending, None
            if pending is not None:
                if pending[1] is IdeStopped or issubclass(pending[1], IdeStopped):
                    self.stopped_by_page = True
                raise pending[1]()

    # ------------------------------------------------------------------ numbers
    def _estimate_ms(self, model: Any) -> float | None:
        return self._estimates.ms(model)

    def _finish_kpu_frame(self) -> None:
        calls, self._kpu_frame = self._kpu_frame, {}
        if not calls and self._kpu_last["ms"] is None:
            return
        total = sum(ms for _, ms in calls.values())
        self._kpu_last = {"ms": round(total, 2) if calls else 0.0,
                          "calls": [f"{name} x{count}" for name, (count, _) in calls.items()]}

    def _publish_stats(self) -> None:
        now = time.monotonic()
        if now - self._stats_at < 0.1:  # the page shows numbers a few times a second, not per frame
            return
        self._stats_at = now
        times = self._frame_times
        pc_fps = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and times[-1] > times[0] else None
        fps = self._fps_script
        self.channel.set_state("stats", {
            "script_fps": round(fps, 2) if fps is not None and math.isfinite(fps) else fps,
            "pc_fps": round(pc_fps, 2) if pc_fps else None,
            "kpu_ms": self._kpu_last["ms"], "kpu_calls": self._kpu_last["calls"],
            "kpu_fps": round(1000.0 / self._kpu_last["ms"], 1) if self._kpu_last["ms"] else None,
            "frames": len(times), "snapshots": self._snapshots,
        })

    # ------------------------------------------------------------------ page requests (server thread)
    def stop(self) -> None:
        """The page's Stop: ``Exception: IDE interrupt`` at the script's next checkpoint; twice: end the run."""
        with self._lock:
            if not self._attached:
                return
            self._stop_requests += 1
            kind: type[BaseException] = IdeInterrupt if self._stop_requests == 1 else IdeStopped
            self._stop_pending = (time.monotonic(), kind)
            self._wake.notify_all()
        self.channel.write("[maixemu] Stop pressed in the IDE page\n" if kind is IdeInterrupt else
                           "[maixemu] Stop pressed again: ending the run\n", "notice")

    def run_again(self) -> None:
        """The page's Run: start the script again (a running one is stopped first)."""
        self._run_requested.set()
        if self._attached:
            with self._lock:
                if self._stop_requests == 0:
                    self._stop_requests = 1
                    self._stop_pending = (time.monotonic(), IdeInterrupt)
                    self._wake.notify_all()

    def button(self, name: str, pressed: bool) -> None:
        """A button of the board pane went down/up (only the profile's own buttons are accepted)."""
        entry = self._buttons.get(name)
        if entry is None:
            raise ValueError(f"the board has no button {name!r}")
        with self._lock:
            self._events.append((time.monotonic(), entry, bool(pressed)))
            self._wake.notify_all()

    # ------------------------------------------------------------------ delivery
    def _deliver_buttons(self, *, fallback: bool) -> None:
        """Apply queued button events in order: the pin's level, then its GPIO IRQ handlers."""
        from ..firmware.Maix import gpio

        if not self._irq_lock.acquire(blocking=fallback):
            return  # the helper thread is delivering right now
        self._in_irq.active = True
        try:
            while True:
                with self._lock:
                    if not self._events:
                        return
                    _, entry, pressed = self._events.popleft()
                level = (0 if pressed else 1) if entry.get("active_low", True) else (1 if pressed else 0)
                try:
                    gpio.set_input(int(entry["pin"]), level, deliver=True)
                except Exception as exc:  # MicroPython prints an IRQ handler's exception and goes on
                    sys.stderr.write(format_exception(exc))
                    if self._board is not None:
                        report_advice(self._board.state, exc)
        finally:
            self._in_irq.active = False
            self._irq_lock.release()

    def _still_attached(self) -> bool:
        """``_attached`` read afresh (a method, so a type checker does not carry an earlier test over
        a wait that lets other threads change it)."""
        return self._attached

    def _watch(self) -> None:
        """Helper thread of one run: late button events and Stops that reached no checkpoint, and the
        page's preview toggle passed on to the board (the firmware's ``JPEG_FB()->enabled``)."""
        events = self._board.state.events if self._board is not None else None
        while True:
            with self._lock:
                if not self._attached:
                    return
                self._wake.wait(timeout=0.05)
                if not self._still_attached():  # (wait() let go of the lock: detach may have run)
                    return
                if events is not None:
                    events.framebuffer_enabled = self.channel.frames_wanted()
                now = time.monotonic()
                late_button = (bool(self._events) and now - self._events[0][0] >= IRQ_FALLBACK_S
                               and now - self._checkpoint_at >= IRQ_FALLBACK_S)
                stop = self._stop_pending
                late_stop = stop is not None and now - stop[0] >= STOP_FALLBACK_S and self._in_script_code()
                if late_stop:
                    self._stop_pending = None
            if late_button:
                self._deliver_buttons(fallback=True)
            if late_stop and stop is not None:
                raise_in_thread(self._script_thread or 0, stop[1])

    def _in_script_code(self) -> bool:
        """True when the script's thread is inside the script (not in the runner's own clean-up)."""
        frame = sys._current_frames().get(self._script_thread or 0)
        while frame is not None:
            if frame.f_code.co_filename in self._script_files:
                return True
            frame = frame.f_back
        return False

    # ------------------------------------------------------------------ between runs
    def wait_for_run_again(self, url: str, notice: Callable[[str], None], *, budget: str | None = None) -> bool:
        """After a run: True when the page asks for another one; False when no page is (or stays) open.

        ``budget`` names the run's ``--timeout``/``--frames`` budget: such a run (CI, a bounded try)
        ends the process with it, page or not; only a Run pressed while the run went on is honoured.
        """
        if self._run_requested.is_set():
            self._run_requested.clear()
            return True
        if self.channel.viewers == 0:
            return False
        if budget is not None:
            notice(f"the run had a budget ({budget}): maixemu ends with it, the IDE page too "
                   "(without a budget it waits for the page's Run)")
            return False
        notice(f"the script ended; the IDE page ({url}) can Run it again; close the page or press Ctrl-C to quit")
        gone_since: float | None = None
        restore = _quit_on_sigterm()
        try:
            while True:
                if self._run_requested.wait(timeout=0.1):
                    self._run_requested.clear()
                    return True
                if self.channel.viewers == 0:
                    gone_since = gone_since or time.monotonic()
                    if time.monotonic() - gone_since >= PAGE_GONE_GRACE_S:
                        return False
                else:
                    gone_since = None
        except KeyboardInterrupt:
            return False
        except _Terminated:
            self.quit_code = 143
            return False
        finally:
            restore()


class _Terminated(Exception):
    """SIGTERM while maixemu waits for the page's Run: end as a run would (recordings finished)."""


def _quit_on_sigterm() -> Callable[[], object]:
    """Make SIGTERM raise :class:`_Terminated` on the main thread; returns the undo step."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGTERM"):
        return lambda: None

    def on_term(signum: int, frame: Any) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, on_term)
    return lambda: signal.signal(signal.SIGTERM, previous)


def _numbered(spec: str | None, run: int) -> str | None:
    """``record:out.mp4`` → ``record:out-run2.mp4``: a second run never overwrites the first one's file."""
    if not spec or not spec.lower().startswith("record:"):
        return spec
    path = Path(spec[len("record:"):].strip())
    return f"record:{path.with_name(f'{path.stem}-run{run}{path.suffix}')}"


def rerun_spec(spec: RunSpec, run: int) -> RunSpec:
    """The options of run number ``run`` (>= 2): its recordings and logs go to files of their own."""
    kpu_log = spec.kpu_log
    if kpu_log is not None:
        kpu_log = kpu_log.with_name(f"{kpu_log.stem}-run{run}{kpu_log.suffix}")
    return replace(spec, lcd=_numbered(spec.lcd, run), show_ai=_numbered(spec.show_ai, run), kpu_log=kpu_log)


def run_budget(spec: RunSpec) -> str | None:
    """The options that bound a run (``--timeout 20``, ``--frames 100``), as the user wrote them; None: unbounded."""
    given = [f"--timeout {spec.timeout:g}" if spec.timeout is not None else "",
             f"--frames {spec.frames}" if spec.frames is not None else ""]
    return " ".join(part for part in given if part) or None


def run_with_ide(spec: RunSpec, script: Path, *, argv: Iterable[str] = (), stdout: Any = None,
                 stderr: Any = None) -> int:
    """``maixemu run --ide``: serve the page, run the script (again, as often as the page asks)."""
    err = stderr or sys.stderr
    try:
        from ..host.ide.server import IdeServer, ServerError
    except ImportError as exc:
        print(f"maixemu: --ide needs its web server ({exc.name or exc}); install it with: pip install 'maixemu[ide]'",
              file=err)
        return 2
    channel = IdeChannel()
    host = spec.ide_host or "127.0.0.1"
    server = IdeServer(channel, host=host, port=spec.ide if spec.ide is not None else DEFAULT_IDE_PORT,
                       record_dir=Path.cwd(), on_notice=lambda text: channel.write(f"[maixemu] {text}\n", "notice"))
    try:
        url = server.start()
    except ServerError as exc:
        print(f"maixemu: {exc}", file=err)
        return 2
    print(f"[maixemu] IDE page: {url}", file=err, flush=True)
    if not server.loopback:
        print(f"[maixemu] the IDE page is reachable from other machines on {host}; it answers only requests "
              "carrying the token in that address: share it only with people who may control this run",
              file=err, flush=True)
    link = IdeLink(channel, script, quiet=spec.quiet)

    def notice(text: str) -> None:
        if not spec.quiet:
            print(f"[maixemu] {text}", file=err, flush=True)
        link.on_notice(text)

    exit_code = 0
    try:
        run = 1
        while True:
            exit_code = execute(spec if run == 1 else rerun_spec(spec, run), script, argv=argv,
                                plugs=Plugs(stdout=stdout, stderr=stderr), services=[link.attach],
                                listeners=[link.on_notice], error_hook=link.on_script_error,
                                owns_process=True).exit_code
            link.run_ended(exit_code)
            if exit_code in (130, 143) and not link.stopped_by_page:
                break  # Ctrl-C or SIGTERM in maixemu's own terminal: the user wants to quit
            if not link.wait_for_run_again(url, notice, budget=run_budget(spec)):
                exit_code = link.quit_code if link.quit_code is not None else exit_code
                break
            run += 1
    finally:
        server.close()
    return exit_code
