"""MaixPy ``gc`` (MicroPython's; this stub shadows CPython's ``gc``: use it only for MaixPy scripts)."""

from typing import overload

def collect() -> None:
    """Run a collection; returns None (scripts call it every frame)."""
def enable() -> None:
    """Enable automatic collection."""
def disable() -> None:
    """Disable automatic collection."""
def isenabled() -> bool:
    """Whether automatic collection is on."""
def mem_free() -> int:
    """Free bytes in the MicroPython heap (typically 300-500 KB on a board)."""
def mem_alloc() -> int:
    """Allocated bytes in the MicroPython heap."""
@overload
def threshold() -> int:
    """Get (no argument) or set the allocation threshold that triggers a collection."""
@overload
def threshold(amount: int, /) -> None: ...
