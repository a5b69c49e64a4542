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
import importlib
import importlib.util
import os
import signal
import sys
import threading
import time
import traceback
import types
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from .host import storage as storage_mod
from .micropython_source import fix_bytes_literals

PACKAGE_DIR = Path(__file__).resolve().parent
#: maixemu's own demo model is "pre-flashed" here (near the end of the 16 MiB flash, an area MaixPy
#: builds leave free), so samples can ``kpu.load(0xF00000)`` with no option; --flash overrides it.
DEMO_MODEL_ADDRESS = 0xF00000
DEMO_MODEL = PACKAGE_DIR / "data" / "edge_filters.kmodel"

#: MicroPython "u" modules that are plain CPython modules under another name.
MICROPYTHON_ALIASES = {
    "uio": "io",
    "ubinascii": "binascii",
    "ucollections": "collections",
    "uerrno": "errno",
    "uhashlib": "hashlib",
    "uheapq": "heapq",
    "ure": "re",
    "urandom": "random",
    "uselect": "select",
    "usocket": "socket",
    "uzlib": "zlib",
    "uarray": "array",
    "umath": "math",
    "ucryptolib": "hashlib",
}


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


def _registry() -> dict[str, str]:
    from .firmware import registry

    return dict(registry.MAIXPY_MODULES)


class ScriptImporter:
    """The ``__import__`` a script sees: MaixPy names first, then the script's own modules, then CPython."""

    def __init__(self, run_builtins: dict[str, Any], search_dirs: list[Path]):
        self.mapping = _registry()
        self.builtins = run_builtins
        self.search_dirs = search_dirs
        self.local_modules: dict[str, types.ModuleType] = {}
        self._real_import = builtins.__import__

    def _local_module(self, name: str) -> types.ModuleType | None:
        if name in self.local_modules:
            return self.local_modules[name]
        for folder in self.search_dirs:
            candidate = folder / f"{name}.py"
            if candidate.is_file():
                module = types.ModuleType(name)
                module.__file__ = str(candidate)
                module.__dict__["__builtins__"] = self.builtins
                self.local_modules[name] = module
                text = fix_bytes_literals(candidate.read_text(encoding="utf-8", errors="replace"))
                code = compile(text, str(candidate), "exec")
                exec(code, module.__dict__)
                return module
        return None

    def __call__(self, name: str, globals=None, locals=None, fromlist=(), level: int = 0):
        if level == 0:
            top, _, rest = name.partition(".")
            target = self.mapping.get(top)
            if target is not None:
                module = importlib.import_module(target)
                if rest and not fromlist:
                    return module
                if rest:
                    return importlib.import_module(f"{target}.{rest}")
                return module
            if top in MICROPYTHON_ALIASES and not rest:
                return importlib.import_module(MICROPYTHON_ALIASES[top])
            if not rest and top not in sys.builtin_module_names:
                local = self._local_module(top)
                if local is not None:
                    return local
        return self._real_import(name, globals, locals, fromlist, level)


def _script_builtins(importer_dirs: list[Path]) -> dict[str, Any]:
    from .firmware import uos

    run_builtins = dict(vars(builtins))
    importer = ScriptImporter(run_builtins, importer_dirs)
    run_builtins["__import__"] = importer
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

    def _setup_storage(self) -> storage_mod.Storage:
        opts = self.options
        script_dir = opts.script.resolve().parent
        flash_map = dict(opts.flash)
        flash_map.setdefault(DEMO_MODEL_ADDRESS, DEMO_MODEL)
        if opts.flash_image is not None:
            import shutil
            import tempfile

            from .host.flash_image import FlashImageError, read_flash_image

            folder = Path(tempfile.mkdtemp(prefix="maixemu-flash-"))
            self._finalizers.append(lambda: shutil.rmtree(folder, ignore_errors=True))
            try:
                extracted = read_flash_image(opts.flash_image, extract_to=folder)
            except FlashImageError as exc:
                raise SetupError(str(exc)) from None
            for address, path in extracted.items():
                flash_map.setdefault(address, path)
        for option, folder in (("--sd", opts.sd_dir), ("--flash-dir", opts.flash_dir)):
            if folder is not None and not Path(folder).is_dir():
                raise SetupError(f"{option} {folder}: no such folder")
        store = storage_mod.Storage(
            sd_dir=opts.sd_dir or script_dir,
            flash_dir=opts.flash_dir or script_dir,
            cwd="/sd",
            flash_map=flash_map,
        )
        previous = storage_mod._current
        storage_mod.install(store)
        self._finalizers.append(lambda: storage_mod.install(previous))
        return store

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
        """``--timeout S`` (SIGALRM), SIGTERM and Ctrl-C end the run like the frame budget does.

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
        if hasattr(signal, "SIGTERM"):

            def on_term(signum, frame):
                if self._finalized:
                    return
                if not getattr(on_term, "fired", False):
                    on_term.fired = True
                    raise RunEnded("terminated (SIGTERM)", 143)
                self._stop_now("terminated (SIGTERM)", 143)

            previous_term = signal.signal(signal.SIGTERM, on_term)
            self._finalizers.insert(0, lambda: signal.signal(signal.SIGTERM, previous_term))

    def _compile(self, script: Path) -> Any:
        """The script's code object; prints the problem and returns an exit code when there is none."""
        try:
            source = script.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            print(f"maixemu: cannot read script {self.options.script}: {exc.strerror or exc}", file=self.stderr)
            return 2
        try:
            with warnings.catch_warnings():  # MicroPython accepts escapes CPython warns about
                warnings.simplefilter("ignore", SyntaxWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                return compile(fix_bytes_literals(source), str(script), "exec")
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
            store = self._setup_storage()
            self._setup_devices()
            search_dirs = [script.parent, store.sd_dir, store.flash_dir]
            # What the firmware's _boot.py leaves in main.py's globals (sys, os, fm, board_info, ...).
            run_globals: dict[str, Any] = registry.boot_globals()
            run_builtins = _script_builtins(list(dict.fromkeys(search_dirs)))
            run_globals.update(__name__="__main__", __file__=str(script), __builtins__=run_builtins)
            sys.argv = [str(opts.script), *opts.argv]
            self._install_signals()
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
        for module in getattr(importer, "local_modules", {}).values():
            if getattr(module, "__file__", None):
                self.script_files.add(str(Path(module.__file__).resolve()))
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
    return Session(options, **kwargs).run()
