"""The one lifecycle of a run: :func:`execute` guards it, opens the board, runs the script, closes
everything and says the closing line.

Every caller goes through it: ``maixemu run`` (:func:`run_command`), the IDE page (one
:func:`execute` per Run, :mod:`.ide`), the pytest plugin (``maixemu.testing.run``), ``soak`` and
eval's device path. Each adds what is its own without re-implementing the sequence::

    record = execute(spec, script, plugs=Plugs(stdout=out, display=sink),   # what the caller plugs in
                     services=[link.attach],                                # wired after set-up
                     listeners=[notices.append])                            # every notice

The sequence: the run's guard (signals, ``--timeout`` — it holds during set-up too: a stuck FIFO, a
webcam) → :meth:`Board.open` and activation → the storage notice → the frame budget and the
``--show-ai`` view → the caller's services → :func:`~maixemu.session.run.run_script` → the closing
line → :meth:`Board.close` → where the script's writes went (when the closing line did not say).
A set-up that fails is one line and exit 2; one that is ended (``--timeout``, a signal, Ctrl-C)
closes with the standard line (0 frames).

Who owns the process decides what a swallowed end does (``owns_process``, :mod:`.signals`): the
command line finalises the recordings and leaves the process; in-process callers (pytest) keep
raising the end, and get Ctrl-C back as ``record.interrupted``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..firmware import state as state_mod
from ..firmware.state import RunEnded
from .board import Board, BoardConfig, Plugs, Service
from .budget import FrameBudget
from .outcome import Outcome, SetupError
from .run import ErrorHook, run_script
from .signals import RunGuard
from .spec import RunSpec
from .summary import RunSummary

#: A Python function run as the script (eval's device path): it runs on the board under the same
#: guard; what it returns is ``record.value``, what it raises is raised again once the board is off.
ScriptFunction = Callable[[], Any]


@dataclass
class RunRecord:
    """What :func:`execute` did: the exit code, the script's outcome and the (closed) board."""

    exit_code: int
    board: Board
    budget: FrameBudget
    #: how the script ended; None when it never started (the set-up failed or was ended)
    outcome: Outcome | None = None
    #: Ctrl-C reached the run (in-process callers hand it back: pytest stops)
    interrupted: bool = False
    #: what a :data:`ScriptFunction` returned
    value: Any = None

    @property
    def summary(self) -> RunSummary | None:
        return self.outcome.summary if self.outcome is not None else None


def execute(spec: RunSpec, script: str | os.PathLike[str] | ScriptFunction, *, argv: Iterable[str] = (),
            plugs: Plugs | None = None, services: Iterable[Service] = (),
            listeners: Iterable[Callable[[str], None]] = (), error_hook: ErrorHook | None = None,
            owns_process: bool = False) -> RunRecord:
    """Run ``script`` once on a board built from ``spec`` (see the module docstring).

    ``argv`` follows the script in its ``sys.argv``; ``plugs`` are the caller's streams, adapters and
    test hooks; ``services`` are wired after the board's own set-up (``board.budget`` is attached
    by then); ``listeners`` get every notice; ``error_hook`` sees the script's exception first (the
    IDE page). ``owns_process``: the command line's signal rules (see :mod:`.signals`).
    """
    function = script if callable(script) else None
    path = None if callable(script) else Path(script)
    project = path.resolve().parent if path is not None else None
    board = Board(BoardConfig(spec, project=project, argv=[str(path), *argv] if path is not None else list(argv),
                              plugs=plugs or Plugs()))
    board.notice_listeners.extend(listeners)
    budget = board.budget = FrameBudget(spec.frames)
    record = RunRecord(exit_code=2, board=board, budget=budget)
    closing_said = False
    failure: BaseException | None = None

    def close_and_say_where() -> None:
        nonlocal closing_said
        board.close()
        if not closing_said:
            closing_said = True
            try:
                closing = board.state.storage.closing_line() if board.opened else None
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

    guard = RunGuard(board.state.run, timeout=spec.timeout, owns_process=owns_process,
                     stop_now=stop_now if owns_process else None, notice=board.notice)
    setup_started = time.monotonic()

    def ended_in_setup(ended: str, code: int) -> None:
        """The closing line of a run that ended before its script started (0 frames)."""
        board.notice(RunSummary(ended=ended, exit_code=code, frames=0, seconds=time.monotonic() - setup_started).line())
        record.exit_code = code

    with guard:
        try:
            try:
                _set_up(board, spec, services, stop_now if owns_process else None)
            except SetupError as exc:
                print(f"maixemu: {exc}", file=board.state.console.stderr)
            except RunEnded as end:
                ended_in_setup(f"{end.reason}; run ended", end.exit_code)
            except KeyboardInterrupt:
                record.interrupted = True
                ended_in_setup("interrupted (Ctrl-C)", 130)
            else:
                if function is not None:
                    record.value, failure = _run_function(function, board, guard)
                    record.exit_code = 0 if failure is None else 1
                else:
                    assert path is not None
                    record.outcome = run_script(path, board, budget=budget, guard=guard, debug=spec.debug,
                                                error_hook=error_hook)
                    record.exit_code = record.outcome.exit_code
                    _say_closing_line(board, record.outcome)
                    if record.outcome.summary is not None and record.outcome.summary.writes:
                        closing_said = True  # the closing line said where the writes went
        finally:
            guard.script_returned()
            close_and_say_where()
    if guard.interrupted or (record.outcome is not None and record.outcome.interrupted):
        record.interrupted = True
    if failure is not None:
        raise failure
    return record


def _set_up(board: Board, spec: RunSpec, services: Iterable[Service],
            stop_now: Callable[[str, int], None] | None) -> None:
    """Open and activate the board, say where the writes go, wire the budget and the services."""
    board.open()
    board.activate()
    announce_storage(board)
    if stop_now is not None:  # the script swallowed the closed window's end and drew again
        display = board.state.display
        display.on_close_ignored = lambda: stop_now(display.close_reason or "the LCD window was closed", 0)
    assert board.budget is not None
    board.budget.attach(board.state)
    from .kernel_notice import kernel_notice_service

    board.attach(kernel_notice_service)  # one notice when this run finds compiled kernels missing
    if spec.show_ai:  # --show-ai: a second view with the AI buffers the KPU read
        from .show_ai import ai_view_service

        board.attach(ai_view_service(spec.show_ai))
    for service in services:
        board.attach(service)


def _say_closing_line(board: Board, outcome: Outcome) -> None:
    """The run's closing line (none after a device fault: its one line said it all)."""
    if outcome.summary is not None and outcome.reason != "device fault":
        board.notice(outcome.summary.line())


def _run_function(function: ScriptFunction, board: Board, guard: RunGuard) -> tuple[Any, BaseException | None]:
    """Run ``function`` as the board's script: on its thread binding, with the guard's phases."""
    state = board.state
    try:
        with state_mod.bind(state), state.run.script_thread():
            guard.script_started()
            try:
                return function(), None
            finally:
                guard.script_returned()
    except BaseException as exc:  # noqa: BLE001 - raised again by execute once the board is off
        return None, exc


def announce_storage(board: Board) -> None:
    """Say once which of the user's folders the script writes into for real (``--sd``, ``--flash-dir``,
    ``--writable``; a caller's own folders hold nothing of the user's), and that earlier runs left
    changes in the copy-on-write layers."""
    spec, store = board.spec, board.state.storage
    chosen = {"sd": spec.sd_dir is not None or spec.writable, "flash": spec.flash_dir is not None or spec.writable}
    real = [(name, store.mount(name)) for name in ("sd", "flash")
            if chosen[name] and not store.mount(name).copy_on_write]
    if real:
        how = "--writable" if spec.writable else "--sd/--flash-dir"
        where = " and ".join(f"/{name} is {mount.root}" for name, mount in real)
        board.notice(f"{where} ({how}): the script's writes and deletions change the files there")
    earlier = store.earlier_changes_line()
    if earlier:
        board.notice(earlier)


def run_command(spec: RunSpec, script: str | os.PathLike[str], *, argv: Iterable[str] = (), stdout: Any = None,
                stderr: Any = None) -> int:
    """``maixemu run`` as the command line runs it: with ``spec.ide``, through the IDE page (which
    waits for the next Run after each run), else once; returns the exit code."""
    if spec.ide is not None:
        from .ide import run_with_ide

        return run_with_ide(spec, Path(script), argv=argv, stdout=stdout, stderr=stderr)
    return execute(spec, script, argv=argv, plugs=Plugs(stdout=stdout, stderr=stderr), owns_process=True).exit_code


__all__ = ["RunRecord", "ScriptFunction", "announce_storage", "execute", "run_command"]
