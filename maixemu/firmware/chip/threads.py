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

import itertools
import threading
import time
from typing import Any

from ..mp.notices import report_advice
from ..state import BoardState, RunEnded, bind, board_part
from ..mp.tracebacks import format_exception

_numbers = itertools.count(1)
THREAD_NAME = "maixemu-script-thread"


@board_part("threads", make=lambda board: BoardThreads(board))
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
    try:
        text = f"Unhandled exception in thread started by {target!r}\n{format_exception(exc)}"
        stream = board.console.stderr
        stream.write(text)
        stream.flush()
    except Exception:  # noqa: BLE001 - a closed console must not turn into a second error
        return
    report_advice(board, exc)  # maixemu's advice on its own line, after the device's report


__all__ = ["BoardThreads", "script_threads_alive"]
