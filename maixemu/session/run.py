"""Run a MaixPy script unchanged on an opened board: :func:`run_script`, the one place a script is
executed (the run's lifecycle around it — guard, board, closing line — is ``maixemu.session.lifecycle``).

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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..firmware import state as state_mod
from ..firmware.state import RunEnded
from .board import PACKAGE_DIR, Board
from .budget import FrameBudget
from .importer import ScriptImporter, compile_source, read_source
from .outcome import (Outcome, clean_end_types, device_fault,
                      format_script_error, system_exit_code)
from .signals import RunGuard
from .summary import RunTally

#: Seconds the run waits for the script's threads to end after its main code returned.
THREAD_END_WAIT_S = 2.0
#: Then, for threads that make no firmware call (a busy loop), this long of interrupts.
THREAD_INTERRUPT_S = 2.0

#: ``error_hook(exc)``: a service's view of the script's exception; may return the exit code.
ErrorHook = Callable[[BaseException], "int | None"]


def default_sample() -> Path:
    """The script ``maixemu run`` runs when given none: bundled with the package."""
    return PACKAGE_DIR / "data" / "default_sample.py"


# ---------------------------------------------------------------------------------- one script on one board
def _compile(script: Path, shown_as: str | os.PathLike, device_name: Callable[[str], str],
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
        from .script_hint import missing_script_message

        return _report(board, Outcome(2, messages=[f"maixemu: {missing_script_message(Path(script), str(shown))}\n"]))
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
        hooked = error_hook(exc)
        if hooked is not None:
            return Outcome(hooked, error=exc)
    if not debug:
        fault = device_fault(exc, script_files, board.state.display)
        if fault is not None:  # one line says it all (the camera or LCD of the PC failed): no closing line
            return Outcome(fault[1], error=exc, messages=[fault[0] + "\n"], reason="device fault")
    messages = [format_script_error(exc, script_files, debug, device_name, hints=board.state.notices.enabled)]
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


__all__ = ["ErrorHook", "THREAD_END_WAIT_S", "default_sample", "run_script", "stray_script_threads"]
