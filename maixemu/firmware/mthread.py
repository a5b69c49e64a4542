"""MicroPython's ``_thread`` (``py/modthread.c``, MaixPy builds with ``MICROPY_PY_THREAD``).

Named ``mthread`` so it never shadows CPython's ``_thread``; the script importer serves it as
``_thread``. Where MicroPython differs from CPython, MicroPython wins:

* ``start_new_thread(function, args[, kwargs])`` returns None and starts a thread whatever
  ``function`` is — a non-callable fails *inside* the thread (``Unhandled exception in thread
  started by 5`` ... ``TypeError: 'int' object isn't callable``); ``args`` must be a tuple or list,
  ``kwargs`` a dict, with MicroPython's messages;
* a lock's ``acquire(waitflag=1, timeout=-1)`` ignores the timeout (the firmware's TODO),
  ``release()`` of an unlocked lock is a bare ``RuntimeError``;
* ``stack_size([size])`` returns the previous setting (0 = the default) and, without an argument,
  resets it; ``exit()`` raises ``SystemExit``.

The threads belong to the board (:mod:`maixemu.firmware.chip.threads`): they end with the run.
"""

from __future__ import annotations

import threading as _threading
from typing import Any

from .state import current as _current
from .chip.threads import BoardThreads as _BoardThreads


class LockType:
    """``_thread.LockType``: a lock a script thread can hold (printed ``<lock>`` like the firmware's type)."""

    __slots__ = ("_lock", "_locked")

    def __init__(self) -> None:
        self._lock = _threading.Lock()
        self._locked = False

    def acquire(self, waitflag: Any = 1, timeout: Any = -1) -> bool:
        wait = bool(_int(waitflag))
        got = self._lock.acquire(wait)
        if got:
            self._locked = True
        return got

    def release(self) -> None:
        if not self._locked:
            raise RuntimeError
        self._locked = False
        self._lock.release()

    def locked(self) -> bool:
        return self._locked

    def __enter__(self) -> bool:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"<lock object at {id(self):#x}>"


LockType.__name__ = LockType.__qualname__ = "lock"


def allocate_lock() -> LockType:
    return LockType()


def get_ident() -> int:
    return _threading.get_ident()


def stack_size(*args: Any) -> int:
    """The stack size new threads get (0: the firmware's default); ``stack_size()`` resets it."""
    if len(args) > 1:
        raise TypeError(f"function expected at most 1 arguments, got {len(args)}")
    system = _current().system
    previous = system.thread_stack_size
    system.thread_stack_size = _int(args[0]) if args else 0
    return previous


def start_new_thread(*args: Any) -> None:
    """``start_new_thread(function, args[, kwargs])``: run ``function(*args, **kwargs)`` on a new thread."""
    if not 2 <= len(args) <= 3:
        raise TypeError(f"function expected {'at least 2' if len(args) < 2 else 'at most 3'} arguments, got {len(args)}")
    function, positional = args[0], args[1]
    if not isinstance(positional, (tuple, list)):
        raise TypeError(f"object '{type(positional).__name__}' isn't a tuple or list")
    keywords: dict[str, Any] = {}
    if len(args) == 3:
        if type(args[2]) is not dict:
            raise TypeError("expecting a dict for keyword args")
        keywords = dict(args[2])
    _current().part(_BoardThreads).start(function, tuple(positional), keywords)
    return None


def exit() -> None:  # noqa: A001 - the firmware's name
    raise SystemExit


def _int(value: Any) -> int:
    from .mp.mp_args import int_arg

    return int_arg(value)


__all__ = ["LockType", "allocate_lock", "exit", "get_ident", "stack_size", "start_new_thread"]


def __dir__() -> list[str]:
    """The names of MicroPython's ``_thread`` (what ``dir(_thread)`` shows on the device)."""
    return ["__name__", *__all__]
