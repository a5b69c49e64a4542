"""The threads a script starts (``_thread.start_new_thread``) belong to its board and end with its run.

On the board a ``_thread`` thread is a FreeRTOS task that runs Python code under the interpreter's
lock; on the PC it is a daemon ``threading.Thread`` that works for the board it was started on
(:func:`maixemu.firmware.state.bind`), so it never reads the next run's state. When the run ends,
every firmware call it makes raises the run's end (:class:`~maixemu.firmware.state.RunEnded`),
which ends it quietly; the session waits for the board's threads, bounded, before the display and
camera close (a thread drawing into a recording that is being finalised crashed the process).

A thread's uncaught exception is printed as ``py/modthread.c`` prints it::

    Unhandled exception in thread started by <function worker at 0x7f...>
    Traceback (most recent call last):
      File "/sd/main.py", line 4, in worker
    ValueError: bad value

``SystemExit`` (``_thread.exit()``, ``sys.exit()``) ends a thread silently.
"""

from __future__ import annotations

import ctypes
import itertools
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .state import BoardState

_numbers = itertools.count(1)
THREAD_NAME = "maixemu-script-thread"


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


_stubborn: dict[type[BaseException], type[BaseException]] = {}


def stubborn_end(base: type[BaseException]) -> type[BaseException]:
    """``base`` (the run's end: ``RunEnded``, ``KeyboardInterrupt``) made so that, when it is raised in a
    script thread, the thread also traces itself to the end (``RunControl.trace_to_the_end``).

    An asynchronous exception is created in the thread it is raised in, when it lands: its
    ``__init__`` runs there, which is the one moment code of ours runs in a thread stuck in an
    ``except:`` loop.
    """
    found = _stubborn.get(base)
    if found is None:

        def __init__(self: BaseException, *args: Any) -> None:
            base.__init__(self, *args)
            from .state import current

            try:
                current().run.trace_to_the_end()
            except Exception:  # noqa: BLE001 - the end itself must land whatever happens here
                pass

        found = type(base.__name__, (base,), {"__init__": __init__, "__module__": base.__module__,
                                              "__qualname__": base.__qualname__})
        _stubborn[base] = found
    return found


class BoardThreads:
    """The script threads of one board: started here, waited for by the session."""

    def __init__(self, board: BoardState):
        self._board = board
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def start(self, target: Any, args: tuple, kwargs: dict[str, Any]) -> threading.Thread:
        """Start ``target(*args, **kwargs)`` on a thread of this board (anything is started, as on the
        device; a non-callable fails inside the thread)."""
        board = self._board
        board.run.check()  # an ended run starts nothing any more

        def main() -> None:
            from .state import RunEnded, bind

            with bind(board), board.run.script_thread():
                try:
                    if not callable(target):
                        raise TypeError(f"'{type(target).__name__}' object isn't callable")
                    target(*args, **kwargs)
                except (SystemExit, RunEnded):
                    pass  # _thread.exit(), or the run ended: a thread ends silently then
                except BaseException as exc:  # noqa: BLE001 - printed like the firmware, never re-raised
                    _report(board, target, exc)

        thread = threading.Thread(target=main, name=f"{THREAD_NAME}-{next(_numbers)}", daemon=True)
        with self._lock:
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
        thread.start()
        return thread

    def alive(self) -> list[threading.Thread]:
        with self._lock:
            return [t for t in self._threads if t.is_alive()]

    def wait(self, seconds: float) -> list[threading.Thread]:
        """Join every thread, ``seconds`` in all; returns those still running."""
        deadline = time.monotonic() + seconds
        for thread in self.alive():
            thread.join(max(0.0, deadline - time.monotonic()))
        return self.alive()


def script_threads_alive() -> int:
    """How many script threads of any board are still running in this process."""
    return sum(1 for t in threading.enumerate() if t.name.startswith(THREAD_NAME) and t.is_alive())


def _report(board: BoardState, target: Any, exc: BaseException) -> None:
    from .tracebacks import format_exception

    try:
        text = f"Unhandled exception in thread started by {target!r}\n{format_exception(exc)}"
        stream = board.console.stderr
        stream.write(text)
        stream.flush()
    except Exception:  # noqa: BLE001 - a closed console must not turn into a second error
        return
    from .notices import report_advice

    report_advice(board, exc)  # maixemu's advice on its own line, after the device's report


__all__ = ["BoardThreads", "raise_in_thread", "script_threads_alive", "stubborn_end"]
