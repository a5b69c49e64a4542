"""Run a MaixPy script unchanged: firmware modules under their MaixPy names, mapped storage, a frame budget.

The script is executed with its own ``__builtins__`` whose ``__import__`` serves MaixPy module names
(``sensor``, ``image``, ``time`` with MicroPython extras, ``os`` with device paths, ...) from
``maixemu.firmware`` and whose ``open`` resolves ``/sd`` and ``/flash`` paths. Nothing in the rest
of the process sees those substitutions: ``sys.modules["time"]`` stays CPython's ``time``.

A run ends cleanly (exit 0) when the frame budget (``--frames N``) is spent, the window is closed,
ESC is pressed or ``machine.reset()`` is called; Ctrl-C gives exit 130; an exception from the
script prints a traceback of the script's own frames and gives exit 1.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import os
import signal
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .host import storage as storage_mod
from .script_importer import MICROPYTHON_ALIASES, ScriptImporter, compile_source, read_source  # noqa: F401

PACKAGE_DIR = Path(__file__).resolve().parent
#: maixemu's own demo model is "pre-flashed" here (near the end of the 16 MiB flash, an area MaixPy
#: builds leave free), so samples can ``kpu.load(0xF00000)`` with no option; --flash overrides it.
DEMO_MODEL_ADDRESS = 0xF00000
DEMO_MODEL = PACKAGE_DIR / "data" / "edge_filters.kmodel"

class RunEnded(BaseException):
    """Raised inside the script to end the run; a BaseException so ``except Exception:`` can't swallow it.

    ``reason`` is printed in the closing line; ``exit_code`` is what ``maixemu run`` returns.
    """

    def __init__(self, reason: str, exit_code: int = 0):
        super().__init__(reason)
        self.reason = reason
        self.exit_code = exit_code


@dataclass
class RunOptions:
    """Everything ``maixemu run`` can be told; the defaults are what a user gets with no flags."""

    script: Path
    camera: str | None = None
    lcd: str | None = None
    sd_dir: Path | None = None
    flash_dir: Path | None = None
    #: write into the script's folder itself instead of its ``.maixemu`` copy-on-write layer
    writable: bool = False
    flash: dict[int, Path] = field(default_factory=dict)
    flash_image: Path | None = None
    frames: int | None = None
    timeout: float | None = None
    ai_memory: str = "device"
    firmware: str = "full"
    debug: bool = False
    quiet: bool = False
    kpu_log: Path | None = None
    show_ai: str | None = None
    #: ``--ide [PORT]``: serve the IDE page on this port (0: any free one); None: no page.
    ide: int | None = None
    #: ``--ide-host ADDR``: where the IDE page listens (default 127.0.0.1; others need the URL's token).
    ide_host: str | None = None
    audio_out: str | None = None
    audio_in: str | None = None
    argv: list[str] = field(default_factory=list)


class FrameBudget:
    """Counts frames and ends the run when ``limit`` frames were taken.

    Frames are snapshots; a script that only draws to the LCD (no camera) counts LCD updates instead,
    so ``--frames`` ends LCD-only animations too. When the limit is reached the *next* frame request
    raises :class:`RunEnded`; if the script swallows that (a bare ``except:``), the request after
    that ends the process outright after the outputs were finalised.
    """

    def __init__(self, limit: int | None, finalize: Callable[[], None],
                 notice: Callable[[str], None] | None = None):
        self.limit = limit
        self.snapshots = 0
        self.lcd_frames = 0
        self.ended = False
        self._finalize = finalize
        self._notice = notice or (lambda message: None)

    def _check(self, count: int) -> None:
        if self.limit is None or count <= self.limit:
            return
        if self.ended:
            # The script caught RunEnded and carried on: finish for it.
            self._notice(f"frame budget of {self.limit} frames reached and the script caught the end request; stopping it")
            self._finalize()
            os._exit(0)
        self.ended = True
        raise RunEnded(f"frame budget of {self.limit} frames reached")

    def on_snapshot(self) -> None:
        self.snapshots += 1
        self._check(self.snapshots)

    def on_lcd_frame(self) -> None:
        self.lcd_frames += 1
        if self.snapshots == 0:
            self._check(self.lcd_frames)


def _script_builtins(storage: storage_mod.Storage, extra_folders: list[Path]) -> dict[str, Any]:
    """The builtins of one run: the device's ``__import__`` and ``open``, everything else CPython's."""
    from .firmware import uos

    run_builtins = dict(vars(builtins))
    run_builtins["__import__"] = ScriptImporter(run_builtins, storage, extra_folders)
    run_builtins["open"] = uos.open_device
    return run_builtins


def _script_frames_only(tb: traceback.StackSummary, script_files: set[str]) -> traceback.StackSummary:
    frames = [f for f in tb if os.path.realpath(f.filename) in script_files or f.filename in script_files]
    return traceback.StackSummary.from_list(frames)


def format_script_error(exc: BaseException, script_files: set[str], debug: bool) -> str:
    """A traceback that points at the script's own lines; maixemu's frames only with ``--debug``.

    ``script_files`` are the script and the local modules it imported. An exception with no frame
    in them (raised before the script's first line ran) is shown as its last line only.
    """
    if debug:
        return "".join(traceback.format_exception(exc))
    lines: list[str] = []
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        current = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
    for index, item in enumerate(reversed(chain)):
        if index:
            lines.append("\nDuring handling of the above exception, another exception occurred:\n\n")
        stack = _script_frames_only(traceback.extract_tb(item.__traceback__), script_files)
        if stack:
            lines.append("Traceback (most recent call last):\n")
            lines.extend(stack.format())
        lines.extend(traceback.format_exception_only(type(item), item))
    return "".join(lines)


#: MaixPy firmware modules maixemu does not provide: a missing import of one of these gets a hint.
NOT_EMULATED_MODULES = frozenset(
    {"network", "nes", "lvgl", "touchscreen", "speech_recognizer", "gif", "fpioa", "modules"}
)


def _script_location(exc: BaseException, script_files: set[str]) -> str:
    """`` at main.py line 7`` for the innermost script frame of ``exc``, or "" when there is none."""
    frames = _script_frames_only(traceback.extract_tb(exc.__traceback__), script_files)
    if not frames:
        return ""
    last = frames[-1]
    return f" at {Path(last.filename).name} line {last.lineno}"


def _device_fault(exc: BaseException, script_files: set[str], sink: Any) -> tuple[str, int] | None:
    """(one line, exit code) when ``exc`` is a PC camera/LCD failure rather than the script's own bug.

    The firmware turns a camera failure into the device's error (``OSError("Reset Failed ...")``,
    ``RuntimeError("Sensor timeout! ...")``) raised *from* a ``CameraError``, so a script can still
    catch it; only when it reaches the runner uncaught is it shown as one line. Exit 2 when the
    chosen ``--camera``/``--lcd`` never worked (choose another), 1 when it failed mid-run.
    """
    from .host.camera import CameraError, CameraLost
    from .host.display import DisplayError

    where = _script_location(exc, script_files)
    context = exc.__context__
    if isinstance(context, CameraError) and exc.__suppress_context__:
        return f"maixemu: camera failed{where}: {context}", 1 if isinstance(context, CameraLost) else 2
    if isinstance(exc, DisplayError):
        never_shown = getattr(sink, "frames_shown", 0) == 0
        return f"maixemu: LCD output failed{where}: {exc}", 2 if never_shown else 1
    return None


class SetupError(Exception):
    """A run cannot start (bad --flash-image, --lcd ...): ``maixemu run`` prints it as one line, exit 2."""


class Session:
    """One run of one script: sets up storage, camera, LCD and budget, runs, and always cleans up."""

    #: Seconds a script gets to end after --timeout or SIGTERM asked it to, before it is stopped.
    END_GRACE_S = 2.0

    #: Signals whose default action ends the process (terminal closed, ``kill``, CPU limits...): each
    #: ends the run like SIGTERM, so recordings are finalised; exit code 128 + the signal's number.
    #: (SIGPIPE and SIGXFSZ are ignored by Python; SIGKILL cannot be caught: recordings are written
    #: so that a killed run loses at most its last frame.)
    FATAL_SIGNALS: tuple[str, ...] = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGXCPU",
                                      "SIGVTALRM", "SIGPROF", "SIGPWR", "SIGIO")

    def __init__(self, options: RunOptions, *, stdout=None, stderr=None):
        self.options = options
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self._finalizers: list[Callable[[], None]] = []
        self._finalized = False
        self.budget = FrameBudget(options.frames, self.finalize, self.notice)
        self.sink: Any = None
        self.script_files: set[str] = set()
        self._alarm_armed = False
        self.storage: storage_mod.Storage | None = None

    def notice(self, message: str) -> None:
        if not self.options.quiet:
            text = message.removeprefix("maixemu: ")
            print(f"[maixemu] {text}", file=self.stderr, flush=True)

    def finalize(self) -> None:
        """Run every cleanup step once (recordings are finalised here), shielded from Ctrl-C/SIGTERM."""
        if self._finalized:
            return
        self._finalized = True
        # Our signal handlers do nothing from here on, and they are restored last (see _install_signals).
        for step in reversed(self._finalizers):
            try:
                step()
            except Exception as exc:  # a cleanup failure must not hide the script's own result
                print(f"[maixemu] cleanup failed: {exc}", file=self.stderr)
        try:
            self.stdout.flush()
        except Exception:
            pass

    def _extract_flash_image(self, package: Path) -> dict[int, Path]:
        """The files of a .kfpkg by flash address, extracted into a folder of their own that the run
        removes at its end (and nothing else: the folder is bound here, not looked up later)."""
        import shutil
        import tempfile

        from .host.flash_image import FlashImageError, read_flash_image

        folder = Path(tempfile.mkdtemp(prefix="maixemu-flash-"))
        self._finalizers.append(functools.partial(shutil.rmtree, folder, ignore_errors=True))
        try:
            return read_flash_image(package, extract_to=folder)
        except FlashImageError as exc:
            raise SetupError(str(exc)) from None

    def _setup_storage(self) -> storage_mod.Storage:
        """/sd and /flash: the script's folder through copy-on-write layers, or the folders given."""
        opts = self.options
        script_dir = opts.script.resolve().parent
        flash_map = dict(opts.flash)
        if opts.flash_image is not None:
            for address, path in self._extract_flash_image(opts.flash_image).items():
                flash_map.setdefault(address, path)
        flash_map.setdefault(DEMO_MODEL_ADDRESS, DEMO_MODEL)
        for option, folder in (("--sd", opts.sd_dir), ("--flash-dir", opts.flash_dir)):
            if folder is not None and not Path(folder).is_dir():
                raise SetupError(f"{option} {folder}: no such folder")
        layer_home = None
        if PACKAGE_DIR in script_dir.parents or script_dir == PACKAGE_DIR or not os.access(script_dir, os.W_OK):
            # maixemu's own samples (keep the package clean) or a read-only folder: a private layer
            layer_home = storage_mod.private_layer_home()
        store = storage_mod.Storage.for_project(
            script_dir, sd_dir=opts.sd_dir, flash_dir=opts.flash_dir, writable=opts.writable,
            layer_home=layer_home, cwd="/sd", flash_map=flash_map, on_notice=self.notice,
        )
        self.storage = store
        self._announce_storage(store)
        previous = storage_mod._current
        storage_mod.install(store)
        self._finalizers.append(lambda: storage_mod.install(previous))
        return store

    def _announce_storage(self, store: storage_mod.Storage) -> None:
        """Say once which folders the script writes into for real, and that earlier runs left changes."""
        real = [(name, store.mount(name)) for name in ("sd", "flash") if not store.mount(name).copy_on_write]
        if real:
            where = " and ".join(f"/{name} is {mount.root}" for name, mount in real)
            how = "--writable" if self.options.writable else "--sd/--flash-dir"
            self.notice(f"{where} ({how}): the script's writes and deletions change the files there")
        earlier = store.earlier_changes_line()
        if earlier:
            self.notice(earlier)

    def _setup_devices(self) -> None:
        from .firmware import lcd, sensor, utime
        from .host import camera, display

        opts = self.options
        try:
            sink = display.open_sink(opts.lcd, on_notice=self.notice)
        except display.DisplayError as exc:
            raise SetupError(str(exc)) from None
        self.sink = sink
        sink.on_close_ignored = lambda: self._stop_now(sink.close_reason or "the LCD window was closed", 0)
        self._finalizers.append(sink.close)
        lcd.configure(sink=sink, frame_hook=self.budget.on_lcd_frame)
        self._finalizers.append(lambda: lcd.configure(sink=None, frame_hook=None))
        # A script sleeping in time.sleep() still reacts to ESC / the close button.
        utime.set_idle_hook(lcd.pump)
        self._finalizers.append(lambda: utime.set_idle_hook(None))

        def source_factory():
            source = camera.open_source(opts.camera, on_notice=self.notice)
            self._finalizers.append(source.close)
            return source

        # A new camera frame means the picture on the LCD is finished: recordings get it then.
        sensor.configure(source_factory=source_factory, frame_hook=self.budget.on_snapshot, before_capture=lcd.flush)
        self._finalizers.append(lambda: sensor.configure(source_factory=None, frame_hook=None, before_capture=None))
        try:
            from .firmware import KPU

            from .firmware import kpu_calls

            KPU.configure(ai_memory=opts.ai_memory, firmware=opts.firmware)
            self._finalizers.append(lambda: KPU.configure(ai_memory="device", firmware="full"))
            kpu_calls.configure(str(opts.kpu_log) if opts.kpu_log else None)
            self._finalizers.append(kpu_calls.configure)
        except ImportError as exc:  # the KPU module needs the kmodel package; say so, don't hide it
            self.notice(f"the KPU module is unavailable: {exc}")
        self._setup_audio()
        if opts.show_ai:  # --show-ai: a second view with the AI buffers the KPU read
            from .tools import show_ai

            self._finalizers.append(show_ai.attach(opts.show_ai, on_notice=self.notice))

    def _setup_audio(self) -> None:
        """``--audio-out`` / ``--audio-in``: where I2S sound goes and what the microphone hears."""
        from .firmware import audio_device
        from .host import audio as host_audio

        opts = self.options
        try:  # check the specs now: a bad one is a set-up error, not a failure at the first sound
            host_audio.open_sink(opts.audio_out, on_notice=lambda m: None).close()
            host_audio.open_source(opts.audio_in, on_notice=lambda m: None).close()
        except host_audio.AudioError as exc:
            raise SetupError(str(exc)) from None
        audio_device.configure(
            sink_factory=lambda: host_audio.open_sink(opts.audio_out, on_notice=self.notice),
            source_factory=lambda: host_audio.open_source(opts.audio_in, on_notice=self.notice),
        )
        self._finalizers.append(audio_device.configure)

    def _stop_now(self, why: str, exit_code: int) -> None:
        """The script caught an end request and kept running: finalise for it and leave the process."""
        self.notice(f"{why} and the script caught the end request; stopping it")
        self._disarm_alarm()
        self.finalize()
        try:
            self.stderr.flush()
        finally:
            os._exit(exit_code)

    def _disarm_alarm(self) -> None:
        if self._alarm_armed:
            signal.setitimer(signal.ITIMER_REAL, 0)
            self._alarm_armed = False

    def _install_signals(self) -> None:
        """``--timeout S`` (SIGALRM), SIGTERM, the other fatal signals and Ctrl-C end the run like the
        frame budget does.

        The first of each raises in the script (:class:`RunEnded`, or ``KeyboardInterrupt`` for
        Ctrl-C); if the script swallows it (a bare ``except:``), the process is stopped
        :data:`END_GRACE_S` seconds later (timeout) or at the second SIGTERM / Ctrl-C, after the
        recordings were finalised. Signals work only on the main thread.

        The handlers do nothing once cleanup has started, and they are put back last, so a Ctrl-C
        during cleanup cannot leave a half-written video.
        """
        if threading.current_thread() is not threading.main_thread():
            if self.options.timeout:
                self.notice("--timeout works only when maixemu runs on the main thread; ignored")
            return
        seconds = self.options.timeout
        if seconds and hasattr(signal, "SIGALRM"):
            reason = f"--timeout of {seconds:g} s reached"

            def on_alarm(signum, frame):
                if self._finalized:
                    return
                if not getattr(on_alarm, "fired", False):
                    on_alarm.fired = True
                    signal.setitimer(signal.ITIMER_REAL, self.END_GRACE_S)
                    raise RunEnded(reason)
                self._stop_now(reason, 0)

            previous_alarm = signal.signal(signal.SIGALRM, on_alarm)
            signal.setitimer(signal.ITIMER_REAL, seconds)
            self._alarm_armed = True

            def restore_alarm():
                self._disarm_alarm()
                signal.signal(signal.SIGALRM, previous_alarm)

            self._finalizers.insert(0, restore_alarm)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:

            def on_int(signum, frame):
                if self._finalized:
                    return
                if not getattr(on_int, "fired", False):
                    on_int.fired = True
                    raise KeyboardInterrupt
                self._stop_now("interrupted (Ctrl-C)", 130)  # a second Ctrl-C: the first was swallowed

            signal.signal(signal.SIGINT, on_int)
            self._finalizers.insert(0, lambda: signal.signal(signal.SIGINT, signal.default_int_handler))
        fatal = [name for name in self.FATAL_SIGNALS if hasattr(signal, name)]
        if not seconds and "SIGALRM" not in fatal and hasattr(signal, "SIGALRM"):
            fatal.append("SIGALRM")  # without --timeout a stray alarm would kill the run unfinalised
        fired: set[int] = set()

        def on_fatal(signum, frame):
            if self._finalized:
                return
            reason = f"terminated ({signal.Signals(signum).name})"
            if signum not in fired:
                fired.add(signum)
                raise RunEnded(reason, 128 + signum)
            self._stop_now(reason, 128 + signum)

        for name in fatal:
            number = getattr(signal, name)
            current = signal.getsignal(number)
            if name != "SIGTERM" and current is not signal.SIG_DFL:
                continue  # someone else handles it (or ignores it): leave it alone
            previous = signal.signal(number, on_fatal)
            self._finalizers.insert(0, functools.partial(signal.signal, number, previous))

    def _compile(self, script: Path) -> Any:
        """The script's code object; prints the problem and returns an exit code when there is none."""
        try:
            source = read_source(script.read_bytes())
        except OSError as exc:
            print(f"maixemu: cannot read script {self.options.script}: {exc.strerror or exc}", file=self.stderr)
            return 2
        try:
            return compile_source(source, str(script))
        except SyntaxError as exc:
            print("".join(traceback.format_exception_only(type(exc), exc)), file=self.stderr, end="")
            return 1
        except ValueError as exc:  # Python 3.11: "source code string cannot contain null bytes"
            print(f"maixemu: {self.options.script} is not a Python script: {exc}", file=self.stderr)
            return 1

    def run(self) -> int:
        opts = self.options
        script = opts.script.resolve()
        if not script.is_file():
            print(f"maixemu: no such script: {opts.script}", file=self.stderr)
            return 2
        code = self._compile(script)
        if isinstance(code, int):
            return code
        self.script_files = {str(script)}
        run_builtins: dict[str, Any] = {}
        old_argv = sys.argv
        exit_code = 0
        try:
            from .firmware import notices, registry

            registry.reset_state()
            notices.set_enabled(not opts.quiet)
            self._finalizers.append(lambda: notices.set_enabled(True))
            self._install_signals()  # --timeout and SIGTERM hold during set-up too (a stuck FIFO, a webcam)
            store = self._setup_storage()
            self._setup_devices()
            # What the firmware's _boot.py leaves in main.py's globals (sys, os, fm, board_info, ...).
            run_globals: dict[str, Any] = registry.boot_globals()
            mounted = {store.sd_dir, store.flash_dir}
            extra = [] if script.parent in mounted else [script.parent]  # the script's own folder, read-only
            run_builtins = _script_builtins(store, extra)
            run_globals.update(__name__="__main__", __file__=str(script), __builtins__=run_builtins)
            sys.argv = [str(opts.script), *opts.argv]
            started = time.monotonic()
            try:
                exec(code, run_globals)
            finally:
                self._disarm_alarm()  # a late alarm must not interrupt the reporting below
            self.notice(f"script finished after {time.monotonic() - started:.1f} s")
        except SetupError as exc:
            print(f"maixemu: {exc}", file=self.stderr)
            exit_code = 2
        except RunEnded as end:
            self.notice(f"{end.reason}; run ended")
            exit_code = end.exit_code
        except KeyboardInterrupt:
            self.notice("interrupted (Ctrl-C)")
            exit_code = 130
        except SystemExit as exc:
            exit_code = self._system_exit(exc)
        except BaseException as exc:  # the script's own failure: show it like Python would, script frames only
            exit_code = self._script_failed(exc, run_builtins)
        finally:
            sys.argv = old_argv
            self.finalize()
            closing = self.storage.closing_line() if self.storage is not None else None
            if closing:
                self.notice(closing)  # the run's last line: where the script's writes went
        return exit_code

    def _system_exit(self, exc: SystemExit) -> int:
        """``sys.exit(n)`` / ``sys.exit("message")`` as CPython reports them, plus one notice."""
        value = exc.code
        if value is None:
            code = 0
        elif isinstance(value, int):  # bool included, as in CPython
            code = int(value)
        else:
            print(value, file=self.stderr)  # CPython prints any other value and exits 1
            return 1
        self.notice(f"the script called sys.exit({'' if value is None else repr(value)}); exit code {code}")
        return code

    def _script_failed(self, exc: BaseException, run_builtins: dict[str, Any]) -> int:
        importer = run_builtins.get("__import__")
        for host_file in getattr(importer, "host_files", ()):
            self.script_files.add(os.path.realpath(host_file))
        if isinstance(exc, _clean_end_types()):  # machine.reset(), the LCD window closed
            from .firmware import notices, registry

            if not (isinstance(exc, registry.ScriptReset) and "machine.reset" in notices.seen()):
                self.notice(f"{exc}; run ended")  # (machine.reset() has said so itself)
            return 0
        if not self.options.debug:
            fault = _device_fault(exc, self.script_files, self.sink)
            if fault is not None:
                print(fault[0], file=self.stderr)
                return fault[1]
        print(format_script_error(exc, self.script_files, self.options.debug), file=self.stderr, end="")
        if isinstance(exc, ModuleNotFoundError) and (exc.name or "").partition(".")[0] in NOT_EMULATED_MODULES:
            self.notice(f"{exc.name!r} is a MaixPy firmware module that maixemu does not emulate")
        return 1


def _clean_end_types() -> tuple[type[BaseException], ...]:
    """Exceptions from firmware modules that end a run cleanly (``machine.reset()``, closed window)."""
    found: list[type[BaseException]] = []
    for module_name, attr in (
        ("maixemu.firmware.registry", "ScriptReset"),
        ("maixemu.host.display", "WindowClosed"),
    ):
        try:
            value = getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError):
            continue
        if isinstance(value, type) and issubclass(value, BaseException):
            found.append(value)
    return tuple(found)


def default_sample() -> Path:
    """The script ``maixemu run`` runs when given none: bundled with the package."""
    return PACKAGE_DIR / "data" / "default_sample.py"


def run_script(options: RunOptions, **kwargs) -> int:
    if options.ide is not None:  # the IDE page wires itself into the run (maixemu.session.ide)
        from .session.ide import run_with_ide

        return run_with_ide(options, **kwargs)
    return Session(options, **kwargs).run()
