"""Interrupting script threads where no firmware call comes: the session's side of the run's end.

The firmware ends a run at its own soft-IRQ points (:meth:`RunControl.check` in every firmware call,
``time.sleep``, ``print``). A script in a pure-Python busy loop reaches none, so the session raises
the end *into* its threads (CPython's ``PyThreadState_SetAsyncExc``): :func:`interrupt_scripts`.
A script that swallowed its end already (a bare ``except:`` in a loop) gets a *stubborn* end
(:func:`stubborn_end`): landing, it makes its thread trace itself and raise the end again at
every line of the script's own code, its handlers included, until the thread leaves the script.

This is host-process machinery, not the board's: the firmware only says which threads run script
code (:meth:`RunControl.script_thread`) and calls the hooks of :attr:`RunControl.leaving` when one
leaves, where an interrupt not yet raised is withdrawn and the thread's own tracer comes back.
"""

from __future__ import annotations

import ctypes
import sys
import threading
from typing import Any

from ..firmware.state import RunControl, RunEnded, current


def raise_in_thread(ident: int, exc_type: type[BaseException] | None) -> None:
    """CPython's ``PyThreadState_SetAsyncExc``: raise ``exc_type`` in another thread at its next
    bytecode boundary (None withdraws one not yet raised). The only way into a Python busy loop.

    A withdrawal in the calling thread itself lands a marker instead (:func:`_withdraw_here`)."""
    if exc_type is None and ident == threading.get_ident():
        _withdraw_here()
        return
    target = ctypes.py_object(exc_type) if exc_type is not None else None
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident), target)


class _Withdrawn(BaseException):
    """The marker that replaces an interrupt withdrawn from the calling thread (caught at once)."""


def _land() -> None:
    """A call: the interpreter checks for an asynchronous exception on entering it."""


def _withdraw_here() -> None:
    """Withdraw an interrupt not yet raised in the calling thread, and the interpreter's signal of it.

    Why not ``PyThreadState_SetAsyncExc(id, NULL)`` here: CPython (3.11) then keeps the thread's
    "asynchronous exception pending" signal set for good — only a raised one clears it — so every
    later call of that thread handles a pending event, and under a tracer or profiler (pdb,
    coverage, cProfile) the thread spins for ever at its next call. Replacing the pending interrupt
    by a marker and catching the marker clears both.
    """
    ident, marker = ctypes.c_ulong(threading.get_ident()), ctypes.py_object(_Withdrawn)
    try:  # the marker may land as soon as the call returns (a profiler's hook runs there)
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, marker)
        for _ in range(3):
            _land()
    except _Withdrawn:
        pass


class _Interrupts:
    """What the interrupts of one run keep: the tracers they replaced, per thread."""

    def __init__(self, control: RunControl) -> None:
        self.control = control
        self.tracing: dict[int, Any] = {}
        control.leaving.append(self.left)

    def left(self, ident: int) -> None:
        """Thread ``ident`` left script code: a pending interrupt is withdrawn, its tracer restored."""
        raise_in_thread(ident, None)
        if ident in self.tracing and ident == threading.get_ident():
            sys.settrace(self.tracing.pop(ident))


_hooking = threading.Lock()


def _of(control: RunControl) -> _Interrupts:
    """The interrupt state of ``control``'s run (held by its :attr:`~RunControl.leaving` hook), hooked
    in at the first use: before any interrupt is raised, so a thread that leaves after one always
    withdraws it."""
    with _hooking:
        for hook in control.leaving:
            owner = getattr(hook, "__self__", None)
            if isinstance(owner, _Interrupts):
                return owner
        return _Interrupts(control)


def interrupt_scripts(control: RunControl, exc_type: type[BaseException] | None = None, *,
                      stubborn: bool = False) -> int:
    """Raise the end (or ``exc_type``) in every thread still running script code; returns how many.

    ``stubborn``: for a script that swallowed its end already. The exception then also makes the
    thread raise the end again at every line of the script's own code it reaches, its ``except:``
    handlers included (a trace function, removed when the thread leaves the script), so that no
    ``except:`` can hold the run.
    """
    _of(control)
    if exc_type is None:
        exception = control.end_exception()
        exc_type = type(exception) if exception is not None else RunEnded
    if stubborn:
        exc_type = stubborn_end(exc_type)
    chosen = exc_type
    return control.each_script_thread(lambda ident: raise_in_thread(ident, chosen))


def trace_to_the_end(control: RunControl) -> None:
    """Make the calling script thread raise the end at every line of script code (see
    :func:`interrupt_scripts`); the thread's own trace function comes back when it leaves."""
    if not control.in_script():
        return
    state = _of(control)
    files = control.script_files

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename in files and event == "line" and control.ending:
            exception = control.end_exception()
            if exception is not None:
                raise exception
        return tracer

    ident = threading.get_ident()
    if ident not in state.tracing:
        state.tracing[ident] = sys.gettrace()
    sys.settrace(tracer)
    frame: Any = sys._getframe(1)
    while frame is not None:  # frames already running trace only with their own f_trace set
        if frame.f_code.co_filename in files:
            frame.f_trace = tracer
            frame.f_trace_lines = True
        frame = frame.f_back


_stubborn: dict[type[BaseException], type[BaseException]] = {}


def stubborn_end(base: type[BaseException]) -> type[BaseException]:
    """``base`` (the run's end: ``RunEnded``, ``KeyboardInterrupt``) made so that, when it is raised in a
    script thread, the thread also traces itself to the end (:func:`trace_to_the_end`).

    An asynchronous exception is created in the thread it is raised in, when it lands: its
    ``__init__`` runs there, which is the one moment code of ours runs in a thread stuck in an
    ``except:`` loop.
    """
    found = _stubborn.get(base)
    if found is None:

        def __init__(self: BaseException, *args: Any) -> None:
            base.__init__(self, *args)
            try:
                trace_to_the_end(current().run)
            except Exception:  # noqa: BLE001 - the end itself must land whatever happens here
                pass

        found = type(base.__name__, (base,), {"__init__": __init__, "__module__": base.__module__,
                                              "__qualname__": base.__qualname__})
        _stubborn[base] = found
    return found


__all__ = ["interrupt_scripts", "raise_in_thread", "stubborn_end", "trace_to_the_end"]
