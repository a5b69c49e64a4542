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
    argv: list[str] = field(default_factory=list)


class FrameBudget:
    """Counts frames and ends the run when ``limit`` frames were taken.

    Frames are snapshots; a script that only draws to the LCD (no camera) counts LCD updates instead,
    so ``--frames`` ends LCD-only animations too. When the limit is reached the *next* frame request
    raises :class:`RunEnded`; if the script swallows that (a bare ``except:``), the request after
    that ends the process outright after the outputs were finalised.
    """

    def __init__(self, limit: int | None, finalize: Callable[[], None]):
        self.limit = limit
        self.snapshots = 0
        self.lcd_frames = 0
        self.ended = False
        self._finalize = finalize

    def _check(self, count: int) -> None:
        if self.limit is None or count <= self.limit:
            return
        if self.ended:
            # The script caught RunEnded and carried on: finish for it.
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
    return traceback.StackSummary.from_list(frames or list(tb))


def format_script_error(exc: BaseException, script_files: set[str], debug: bool) -> str:
    """A traceback that points at the script's own lines; maixemu's frames only with ``--debug``."""
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
        lines.append("Traceback (most recent call last):\n")
        lines.extend(stack.format())
        lines.extend(traceback.format_exception_only(type(item), item))
    return "".join(lines)


class Session:
    """One run of one script: sets up storage, camera, LCD and budget, runs, and always cleans up."""

    def __init__(self, options: RunOptions, *, stdout=None, stderr=None):
        self.options = options
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        self._finalizers: list[Callable[[], None]] = []
        self._finalized = False
        self.budget = FrameBudget(options.frames, self.finalize)

    def notice(self, message: str) -> None:
        if not self.options.quiet:
            text = message.removeprefix("maixemu: ")
            print(f"[maixemu] {text}", file=self.stderr, flush=True)

    def finalize(self) -> None:
        if self._finalized:
            return
        self._finalized = True
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
            from .host.flash_image import read_flash_image

            for address, path in read_flash_image(opts.flash_image).items():
                flash_map.setdefault(address, path)
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
        from .firmware import lcd, sensor
        from .host import camera, display

        opts = self.options
        sink = display.open_sink(opts.lcd, on_notice=self.notice)
        self._finalizers.append(sink.close)
        lcd.configure(sink=sink, frame_hook=self.budget.on_lcd_frame)
        self._finalizers.append(lambda: lcd.configure(sink=None, frame_hook=None))

        def source_factory():
            source = camera.open_source(opts.camera, on_notice=self.notice)
            self._finalizers.append(source.close)
            return source

        sensor.configure(source_factory=source_factory, frame_hook=self.budget.on_snapshot)
        self._finalizers.append(lambda: sensor.configure(source_factory=None, frame_hook=None))
        try:
            from .firmware import KPU

            from .firmware import kpu_calls

            KPU.configure(ai_memory=opts.ai_memory, firmware=opts.firmware)
            self._finalizers.append(lambda: KPU.configure(ai_memory="device", firmware="full"))
            kpu_calls.configure(str(opts.kpu_log) if opts.kpu_log else None)
            self._finalizers.append(kpu_calls.configure)
        except ImportError as exc:  # the KPU module needs the kmodel package; say so, don't hide it
            self.notice(f"the KPU module is unavailable: {exc}")
        if opts.show_ai:  # --show-ai: a second view with the AI buffers the KPU read
            from .tools import show_ai

            self._finalizers.append(show_ai.attach(opts.show_ai, on_notice=self.notice))

    def _start_timeout(self) -> None:
        """``--timeout S``: end scripts that loop without taking frames (SIGALRM on the main thread)."""
        seconds = self.options.timeout
        if not seconds or not hasattr(signal, "SIGALRM"):
            return
        if threading.current_thread() is not threading.main_thread():
            self.notice("--timeout works only when maixemu runs on the main thread; ignored")
            return

        def on_alarm(signum, frame):
            raise RunEnded(f"--timeout of {seconds:g} s reached")

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, seconds)

        def restore():
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)

        self._finalizers.append(restore)

    def run(self) -> int:
        opts = self.options
        script = opts.script.resolve()
        if not script.is_file():
            print(f"maixemu: no such script: {opts.script}", file=self.stderr)
            return 2
        source = script.read_text(encoding="utf-8", errors="replace")
        try:
            with warnings.catch_warnings():  # MicroPython accepts escapes CPython warns about
                warnings.simplefilter("ignore", SyntaxWarning)
                warnings.simplefilter("ignore", DeprecationWarning)
                code = compile(fix_bytes_literals(source), str(script), "exec")
        except SyntaxError as exc:
            print("".join(traceback.format_exception_only(type(exc), exc)), file=self.stderr, end="")
            return 1
        store = None
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
            run_globals.update(
                __name__="__main__",
                __file__=str(script),
                __builtins__=_script_builtins(list(dict.fromkeys(search_dirs))),
            )
            sys.argv = [str(opts.script), *opts.argv]
            self._start_timeout()
            started = time.monotonic()
            exec(code, run_globals)
            self.notice(f"script finished after {time.monotonic() - started:.1f} s")
        except RunEnded as end:
            self.notice(f"{end.reason}; run ended")
            exit_code = end.exit_code
        except KeyboardInterrupt:
            self.notice("interrupted (Ctrl-C)")
            exit_code = 130
        except SystemExit as exc:
            code_value = exc.code
            exit_code = code_value if isinstance(code_value, int) else (0 if code_value is None else 1)
            if isinstance(code_value, str):
                print(code_value, file=self.stderr)
        except BaseException as exc:  # the script's own failure: show it like Python would, script frames only
            reset_types = _clean_end_types()
            if isinstance(exc, reset_types):
                self.notice(f"{type(exc).__name__}: {exc}; run ended")
                exit_code = 0
            else:
                print(format_script_error(exc, {str(script)}, opts.debug), file=self.stderr, end="")
                exit_code = 1
        finally:
            sys.argv = old_argv
            self.finalize()
        return exit_code


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
