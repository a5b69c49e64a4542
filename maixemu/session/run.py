"""Run a MaixPy script unchanged on a board: :func:`run_script` (the one place a script is executed)
and :func:`run_options` (``maixemu run``: board, signals, budget and closing line from the options).

The script is executed with its own ``__builtins__`` whose ``__import__`` serves MaixPy module names
(``sensor``, ``image``, ``time`` with MicroPython extras, ``os`` with device paths, ``_thread`` ...)
from ``maixemu.firmware`` and whose ``open`` resolves ``/sd`` and ``/flash`` paths; ``print`` and
``input`` are the board console's. Nothing in the rest of the process sees those substitutions:
``sys.modules["time"]`` stays CPython's ``time``, the host ``sys.path``/``sys.argv`` stay as they are.

A run ends cleanly (exit 0) when the script returns, the frame budget (``--frames N``) is spent,
the window is closed, ESC is pressed or ``machine.reset()`` is called; Ctrl-C gives exit 130; an
exception from the script prints a traceback of the script's own frames and gives exit 1. Threads
the script started end with it: they get the run's end at their next firmware call, and the run
waits for them (:data:`THREAD_END_WAIT_S`) before the board's display and camera close.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..firmware import state as state_mod
from ..firmware.state import RunEnded
from .board import PACKAGE_DIR, Board, BoardConfig, Service
from .budget import FrameBudget
from .importer import ScriptImporter, compile_source, read_source
from .outcome import (Outcome, SetupError, clean_end_types, device_fault,
                      format_script_error, system_exit_code)
from .signals import RunGuard
from .summary import RunSummary, RunTally

#: Seconds the run waits for the script's threads to end after its main code returned.
THREAD_END_WAIT_S = 2.0
#: Then, for threads that make no firmware call (a busy loop), this long of interrupts.
THREAD_INTERRUPT_S = 2.0

#: ``error_hook(exc)``: a service's view of the script's exception; may return the exit code.
ErrorHook = Callable[[BaseException], "int | None"]


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
    #: ``--board NAME``: the board profile (``maixemu.firmware.board_profiles``)
    board: str | None = None
    #: ``--uart-loop TX:RX`` (repeatable): a UART's TX wired to a UART's RX
    uart_loop: list[str] = field(default_factory=list)
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
    #: ``--audio-out SINK`` / ``--audio-in SOURCE``: where I2S sound goes and what the microphone hears.
    audio_out: str | None = None
    audio_in: str | None = None
    #: ``--overwrite``: outputs may replace files maixemu did not write (``maixemu.host.outputs``)
    overwrite: bool = False
    argv: list[str] = field(default_factory=list)


def default_sample() -> Path:
    """The script ``maixemu run`` runs when given none: bundled with the package."""
    return PACKAGE_DIR / "data" / "default_sample.py"


# ---------------------------------------------------------------------------------- one script on one board
def _compile(script: Path, shown_as: Path | str, device_name: Callable[[str], str],
             debug: bool) -> tuple[Any, Outcome | None]:
    """The script's code object, or the outcome of a script that cannot run."""
    try:
        source = read_source(script.read_bytes())
    except OSError as exc:
        return None, Outcome(2, messages=[f"maixemu: cannot read script {shown_as}: {exc.strerror or exc}\n"])
    try:
        return compile_source(source, str(script)), None
    except SyntaxError as exc:  # as MicroPython reports it: File "/sd/main.py", line 2 / SyntaxError: invalid syntax
        text = ("".join(traceback.format_exception_only(type(exc), exc)) if debug
                else format_script_error(exc, {str(script)}, False, device_name))
        return None, Outcome(1, error=exc, messages=[text])
    except ValueError as exc:  # Python 3.11: "source code string cannot contain null bytes"
        return None, Outcome(1, error=exc, messages=[f"maixemu: {shown_as} is not a Python script: {exc}\n"])


def _run_builtins(board: Board, extra_folders: list[Path]) -> dict[str, Any]:
    """The builtins of one run: the device's ``__import__``, ``open``, ``print`` and ``input``."""
    from ..firmware import uos

    console = board.state.console
    from ..firmware.mp_builtins import MICROPYTHON_BUILTINS

    run_builtins = dict(vars(builtins))
    run_builtins.update(MICROPYTHON_BUILTINS)
    run_builtins["__import__"] = ScriptImporter(run_builtins, board.state, extra_folders)
    run_builtins["open"] = uos.open_device

    def device_print(*values: Any, sep: str | None = " ", end: str | None = "\n", file: Any = None,
                     flush: bool = False) -> None:
        builtins.print(*values, sep=sep, end=end, file=console.stdout if file is None else file, flush=flush)

    def device_input(prompt: Any = "") -> str:
        out = console.stdout
        if prompt:
            out.write(str(prompt))
            out.flush()
        line = console.stdin.readline()
        if not line:
            raise EOFError("EOF when reading a line")
        return line.rstrip("\n")

    def device_execfile(filename: str, globals: dict[str, Any] | None = None,  # noqa: A002 - the builtin's names
                        locals: dict[str, Any] | None = None) -> None:  # noqa: A002
        """MicroPython's ``execfile`` (MICROPY_PY_BUILTINS_EXECFILE, builtinevex.c): run a device
        file in the caller's globals, or in the dicts given, compiled as scripts are."""
        for given in (globals, locals):
            if given is not None and not isinstance(given, dict):
                raise TypeError()
        if globals is None:
            globals = sys._getframe(1).f_globals  # noqa: SLF001 - the caller's module, as mp_globals_get()
        with uos.open_device(filename, "rb") as source:
            code = compile_source(read_source(source.read()), str(filename))
        exec(code, globals, globals if locals is None else locals)

    run_builtins["print"] = device_print
    run_builtins["input"] = device_input
    run_builtins["execfile"] = device_execfile
    return run_builtins


@contextlib.contextmanager
def _no_firmware_warnings() -> Iterator[None]:
    """No Python warning of the emulation reaches what the script prints: the firmware's C code warns
    about nothing (a float32 overflow in numpy is the device's inf, silently). Warnings are kept for
    the script's own code, except numpy's floating-point RuntimeWarnings; those raised in maixemu's
    modules or numpy's are dropped for the run."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"(maixemu|numpy)(\.|$)")
        warnings.filterwarnings("ignore", category=RuntimeWarning)  # numpy floating-point errors, wherever raised
        yield


@contextlib.contextmanager
def _console_streams(board: Board):
    """The process's streams are the board console's while the script runs (firmware prints, too)."""
    console = board.state.console
    saved = (sys.stdout, sys.stderr, sys.stdin)
    sys.stdout, sys.stderr, sys.stdin = console.stdout, console.stderr, console.stdin
    try:
        yield
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved


def run_script(script: str | os.PathLike, board: Board, *, budget: FrameBudget | None = None,
               guard: RunGuard | None = None, debug: bool = False, shown_as: str | os.PathLike | None = None,
               error_hook: ErrorHook | None = None) -> Outcome:
    """Run ``script`` on ``board`` (opened and active) until it ends; the board stays open.

    ``budget`` counts its frames; ``guard`` is told when the script starts and returns (its signal
    rules raise only while it runs); ``error_hook`` sees the script's own exception first (the IDE).
    """
    path = Path(script).resolve()
    shown = shown_as if shown_as is not None else script
    if not path.is_file():
        return _report(board, Outcome(2, messages=[f"maixemu: no such script: {shown}\n"]))
    device_name = _device_names(board, path)
    board.state.run.device_name = device_name  # sys.print_exception and thread tracebacks name files so too
    code, failed = _compile(path, shown, device_name, debug)
    if failed is not None:
        return _report(board, failed)
    state = board.state
    if budget is None:
        budget = FrameBudget(None)  # no limit: it only counts, for the closing line
    budget.attach(state)
    tally = RunTally(state)
    from ..firmware import registry

    storage = state.storage
    mounted = {storage.sd_dir, storage.flash_dir}
    extra = [] if path.parent in mounted else [path.parent]  # the script's own folder, read-only
    run_builtins = _run_builtins(board, extra)
    script_files = {str(path)}
    state.run.script_files = run_builtins["__import__"].host_files  # its modules' files join as they load
    state.run.script_files.add(str(path))
    outcome: Outcome
    try:
        with state_mod.bind(state), _console_streams(board), state.run.script_thread(), _no_firmware_warnings():
            # What the board's boot scripts leave in the globals (sys, os, lcd, fm, board_info, ...),
            # imported as the script's own imports are.
            importer = run_builtins["__import__"]
            run_globals: dict[str, Any] = registry.boot_globals(lambda name: importer(name))
            run_globals.update(__name__="__main__", __file__=str(path), __builtins__=run_builtins)
            if guard is not None:
                guard.script_started()
            try:
                exec(code, run_globals)
            finally:
                if guard is not None:
                    guard.script_returned()
        outcome = _after_end_request(board, Outcome(0, reason="script finished"), "returned")
    except BaseException as exc:  # noqa: BLE001 - every way a script can end is an outcome
        if guard is not None:
            guard.script_returned()
        importer = run_builtins.get("__import__")
        script_files |= {os.path.realpath(f) for f in getattr(importer, "host_files", ())}
        outcome = _ended_by(exc, board, script_files, debug, error_hook, device_name)
    outcome.stray_threads = _end_threads(board)
    tally.detach()
    _report(board, outcome)
    frames = budget.snapshots or budget.lcd_frames
    if budget.limit is not None:
        frames = min(frames, budget.limit)  # the request past the budget ended the run, it got no frame
    outcome.summary = tally.summary(_ended_text(outcome), outcome.exit_code, frames, _writes_line(board))
    if outcome.reason != "device fault":
        board.notice(outcome.summary.line())
    return outcome


def _ended_text(outcome: Outcome) -> str:
    """How a run ended, for the closing line."""
    if outcome.reason:
        return outcome.reason
    error = outcome.error
    if error is None:
        return "script finished"
    if isinstance(error, SystemExit):
        return "the script exited"
    return f"the script failed with {type(error).__name__}"


def _writes_line(board: Board) -> str | None:
    try:
        return board.state.storage.closing_line()
    except Exception:  # noqa: BLE001 - the closing line must never hide the result
        return None


def _device_names(board: Board, script: Path) -> Callable[[str], str]:
    """How the device names the script's files in a traceback: their path in the board's mounts;
    a file of the script's own folder that is not mounted (``--sd`` elsewhere, the plugin's
    ``code=``) as if it were on the card the script runs from (``/sd/main.py``). Never a host path."""
    store = board.state.storage
    folder = os.path.realpath(script.parent)

    def name(filename: str) -> str:
        if not os.path.isabs(filename):
            return filename
        try:
            mapped = store.to_device(filename)
        except Exception:  # noqa: BLE001 - naming a frame must never fail the report
            mapped = None
        if mapped:
            return mapped
        real = os.path.realpath(filename)
        if real.startswith(folder + os.sep):
            return f"{store.cwd.rstrip('/')}/{Path(os.path.relpath(real, folder)).as_posix()}"
        return os.path.basename(filename)

    return name


def _ended_by(exc: BaseException, board: Board, script_files: set[str], debug: bool,
              error_hook: ErrorHook | None, device_name: Callable[[str], str] | None = None) -> Outcome:
    """The outcome of a script that raised ``exc`` (an end request, an exit, its own failure)."""
    if isinstance(exc, RunEnded):
        control = board.state.run
        reason, code = ((control.reason, control.exit_code) if exc.from_control and control.reason
                        else (exc.reason, exc.exit_code))
        return Outcome(code, reason=f"{reason}; run ended", error=exc)
    if isinstance(exc, KeyboardInterrupt):
        return Outcome(130, reason="interrupted (Ctrl-C)", error=exc)
    if isinstance(exc, SystemExit) and board.state.run.ending:
        value = exc.code
        return _after_end_request(board, Outcome(0, error=exc),
                                  f"called sys.exit({'' if value is None else repr(value)})")
    if isinstance(exc, SystemExit):
        code, text = system_exit_code(exc)
        if text is not None:
            return Outcome(code, error=exc, messages=[text + "\n"])
        value = exc.code
        return Outcome(code, error=exc,
                       reason=f"the script called sys.exit({'' if value is None else repr(value)}); exit code {code}")
    if isinstance(exc, clean_end_types()):  # machine.reset(), the LCD window closed
        return Outcome(0, reason=f"{exc}; run ended", error=exc)
    if error_hook is not None:
        code = error_hook(exc)
        if code is not None:
            return Outcome(code, error=exc)
    if not debug:
        fault = device_fault(exc, script_files, board.state.display)
        if fault is not None:  # one line says it all (the camera or LCD of the PC failed): no closing line
            return Outcome(fault[1], error=exc, messages=[fault[0] + "\n"], reason="device fault")
    messages = [format_script_error(exc, script_files, debug, device_name)]
    return Outcome(1, error=exc, messages=messages)


def _after_end_request(board: Board, outcome: Outcome, then: str) -> Outcome:
    """``outcome`` of a script that caught the run's end request (a bare ``except:`` around its loop)
    and then returned or called ``sys.exit()``: the request ended the run, so the closing line names
    it (the frame budget, ``--timeout``, a signal) and its exit code stands, not the script's."""
    control = board.state.run
    if not control.ending or not control.reason:
        return outcome
    outcome.exit_code = control.exit_code
    outcome.reason = f"{control.reason}; run ended (the script caught the end and {then})"
    return outcome


def _end_threads(board: Board) -> int:
    """End the script's threads with the run; returns how many would not end (left behind)."""
    state = board.state
    if "threads" not in vars(state) or not state.threads.alive():
        return 0
    state.run.end("the script ended")
    alive = state.threads.wait(THREAD_END_WAIT_S)
    deadline = time.monotonic() + THREAD_INTERRUPT_S
    while alive and time.monotonic() < deadline:  # threads that make no firmware call
        state.run.interrupt_scripts(stubborn=True)
        alive = state.threads.wait(0.05)
    if alive:
        board.notice(f"{len(alive)} thread(s) of the script did not end with it (no firmware call, every end "
                     "swallowed); they are left behind and can no longer reach the board")
    return len(alive)


def stray_script_threads() -> int:
    """Script threads of any run still alive in this process (left behind: see :func:`_end_threads`)."""
    from ..firmware.threads import script_threads_alive

    return script_threads_alive()


def _report(board: Board, outcome: Outcome) -> Outcome:
    stream = board.state.console.stderr
    for message in outcome.messages:
        try:
            stream.write(message)
            stream.flush()
        except (OSError, ValueError):
            pass
    return outcome


# ---------------------------------------------------------------------------------- maixemu run
def board_config(options: RunOptions, *, stdout: Any = None, stderr: Any = None) -> BoardConfig:
    """The board ``maixemu run`` builds from its options."""
    return BoardConfig(
        project=Path(options.script).resolve().parent, sd_dir=options.sd_dir, flash_dir=options.flash_dir,
        writable=options.writable, flash=dict(options.flash), flash_image=options.flash_image,
        camera=options.camera, lcd=options.lcd, ai_memory=options.ai_memory, firmware=options.firmware,
        kpu_log=options.kpu_log, argv=[str(options.script), *options.argv], stdout=stdout, stderr=stderr,
        quiet=options.quiet, audio_out=options.audio_out, audio_in=options.audio_in, board=options.board,
        uart_loop=list(options.uart_loop), overwrite=options.overwrite,
    )


def announce_storage(board: Board, *, how: str) -> None:
    """Say once which folders the script writes into for real, and that earlier runs left changes."""
    store = board.state.storage
    real = [(name, store.mount(name)) for name in ("sd", "flash") if not store.mount(name).copy_on_write]
    if real:
        where = " and ".join(f"/{name} is {mount.root}" for name, mount in real)
        board.notice(f"{where} ({how}): the script's writes and deletions change the files there")
    earlier = store.earlier_changes_line()
    if earlier:
        board.notice(earlier)


def run_options(options: RunOptions, *, stdout: Any = None, stderr: Any = None, services: Iterable[Service] = (),
                error_hook: ErrorHook | None = None, notice_listeners: Iterable[Callable[[str], None]] = ()) -> int:
    """``maixemu run``: build the board from ``options``, run the script, close everything; exit code.

    ``services`` are attached after the board's own set-up (the IDE page); ``notice_listeners``
    get every notice.
    """
    board = Board(board_config(options, stdout=stdout, stderr=stderr))
    board.notice_listeners.extend(notice_listeners)
    closing_done = False

    def close_and_say_where() -> None:
        nonlocal closing_done
        board.close()
        if not closing_done:
            closing_done = True
            try:
                closing = board.state.storage.closing_line() if board._opened else None
            except Exception:  # noqa: BLE001 - the closing line must never hide the result
                closing = None
            if closing:
                board.notice(closing)  # the run's last line: where the script's writes went

    stopping = False

    def stop_now(why: str, exit_code: int) -> None:
        """The script caught an end request and kept running: finalise for it and leave the process.

        Once only: a second Ctrl-C arriving while this finalises (its signal handler runs on the same
        thread) must neither repeat the notice nor cut the recording short.
        """
        nonlocal stopping
        if stopping:
            return
        stopping = True
        board.notice(f"{why} and the script caught the end request; stopping it")
        try:
            close_and_say_where()
            for stream in (board.state.console.stdout, board.state.console.stderr):
                stream.flush()
        finally:
            os._exit(exit_code)

    guard = RunGuard(board.state.run, timeout=options.timeout, owns_process=True, stop_now=stop_now,
                     notice=board.notice)
    exit_code = 0
    setup_started = time.monotonic()

    def ended_in_setup(ended: str, code: int) -> int:
        """The closing line of a run that ended before its script started (0 frames)."""
        board.notice(RunSummary(ended=ended, exit_code=code, frames=0,
                                seconds=time.monotonic() - setup_started).line())
        return code

    with guard:  # --timeout and SIGTERM hold during set-up too (a stuck FIFO, a webcam)
        try:
            try:
                board.open()
                board.activate()
                announce_storage(board, how="--writable" if options.writable else "--sd/--flash-dir")
                board.state.display.on_close_ignored = lambda: stop_now(
                    board.state.display.close_reason or "the LCD window was closed", 0)
                if options.show_ai:  # --show-ai: a second view with the AI buffers the KPU read
                    from .show_ai import ai_view_service

                    board.attach(ai_view_service(options.show_ai))
                for service in services:
                    board.attach(service)
            except SetupError as exc:
                print(f"maixemu: {exc}", file=board.state.console.stderr)
                return 2
            except RunEnded as end:  # --timeout or a signal during set-up
                return ended_in_setup(f"{end.reason}; run ended", end.exit_code)
            except KeyboardInterrupt:
                return ended_in_setup("interrupted (Ctrl-C)", 130)
            outcome = run_script(options.script, board, budget=FrameBudget(options.frames), guard=guard,
                                 debug=options.debug, error_hook=error_hook)
            exit_code = outcome.exit_code
            if outcome.summary is not None and outcome.summary.writes:
                closing_done = True  # the summary line said where the writes went
        finally:
            guard.script_returned()
            close_and_say_where()
    return exit_code


def run_command(options: RunOptions, *, stdout: Any = None, stderr: Any = None) -> int:
    """``maixemu run`` as the command line runs it: with ``options.ide``, through the IDE page (which
    waits for the next Run after each run), else once; returns the exit code."""
    if options.ide is not None:
        from .ide import run_with_ide

        return run_with_ide(options, stdout=stdout, stderr=stderr)
    return run_options(options, stdout=stdout, stderr=stderr)


__all__ = ["RunOptions", "THREAD_END_WAIT_S", "stray_script_threads", "announce_storage", "board_config", "default_sample",
           "run_command", "run_options", "run_script"]
