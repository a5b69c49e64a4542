"""MicroPython's ``_thread`` (MaixPy builds with threads): start functions on threads of the board.

Unlike CPython's: ``start_new_thread`` returns None and starts anything (a non-callable fails inside
the thread with ``Unhandled exception in thread started by ...``); ``acquire`` ignores a timeout.
"""

from typing import Any, Callable

class LockType:
    def acquire(self, waitflag: int = 1, timeout: float = -1, /) -> bool:
        """Take the lock (``waitflag=0``: only if free); True if taken."""
    def release(self) -> None:
        """Free the lock (``RuntimeError`` if it is not held)."""
    def locked(self) -> bool: ...
    def __enter__(self) -> bool: ...
    def __exit__(self, *exc: object) -> None: ...

def allocate_lock() -> LockType: ...
def get_ident() -> int: ...
def stack_size(size: int = 0, /) -> int:
    """The previous stack size setting (0: the default); without an argument it is reset."""
def start_new_thread(function: Callable[..., Any], args: tuple[Any, ...] | list[Any],
                     kwargs: dict[str, Any] = ..., /) -> None:
    """Run ``function(*args, **kwargs)`` on a new thread; it ends with the run."""
def exit() -> None:
    """End the calling thread (raises SystemExit)."""
